"""The board finder's tuning values, in one place. `LocateParams()` holds the values every
figure of the finder was measured with; a caller or a test may pass others:

    >>> locate_board(image, params=replace(LocateParams(), work_side=1400))

Lengths are in cells of the grid unless a field says px; shares and misfits run from 0 to 1
(a misfit is 1 - the share of the cells' colour spread the premium layout explains; a fit's
quality is the share of its line pieces that stand out from the cells beside them).
"""

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class LocateParams:
    """Tuning values of locate_board, grouped by the stage that reads them."""

    # --- the search and its checks
    # px; enough to resolve grid lines of a board filling a quarter of the frame
    work_side: int = 1000
    # px in the photo; smaller cells hold too few pixels to tell letters apart
    min_cell_px: int = 14
    # share a found side may be off by (a blurred board): not held against it
    side_error: float = 0.05
    # share of grid-line pieces that must stand out from the cells beside them
    min_quality: float = 0.3
    # ... unless the premium layout explains the cell colours this well (faint or blurred lines; a
    # texture or clutter leaves a misfit near 1)
    layout_found_misfit: float = 0.7
    # misfit of a grid whose cells show no trace of the layout: one with lines of middling quality
    # (below polish_below) and this misfit is sheared across the board (rendered boards fit at ≤
    # 0.8, real boards late in a game at ≤ 0.85)
    layout_missing: float = 0.95
    # px per cell in the shrunk copy enough to measure edge widths on it
    edge_view_cell: int = 16
    # cells; edges this soft (blur σ ≈ 0.25 cell) leave letters unreadable
    max_edge_width: float = 0.6
    # px at work_side; a photo whose sharpest edges are this soft is blurred
    blurred_photo_px: float = 12.0
    # cells a grid corner may lie outside the photo (rounding, cropped photos)
    cut_off_tolerance: float = 0.3
    # px per cell in the views the comb and the refinement work on
    view_cell: int = 24
    # px at view_cell; merges the two edges of a grid line into one ridge
    evidence_blur: float = 2.0
    # outline candidates tried, largest first
    max_candidates: int = 12
    # best combs that get the full refinement
    refined_candidates: int = 2
    # guesses refined side by side
    search_threads: int = 2
    # weight of the premium layout's misfit against the line quality
    misfit_weight: float = 0.5
    # cells; a refinement that moved the guess less kept the layout's alignment
    stayed: float = 0.5
    # line quality above which the lattice guess is not second-guessed ...
    sure_quality: float = 0.7
    # ... when the premium layout also explains the cell colours this well
    sure_misfit: float = 0.85
    # ... or above which a late-game fit is taken when no whole-cell move fits
    steady_quality: float = 0.35
    # layout fit a late-game grid must beat every grid a few cells off by
    sure_gap: float = 0.1
    # lines a frame or the board's edge can show beyond the grid, parallel to it
    frame_lines: int = 2
    # cells; two lattices refined this close converged on the lines
    agree: float = 0.05
    # a lattice by direction whose first view shows fewer of its line pieces than this has the
    # one by vanishing points looked at too, and refined first when that shows guess_margin more
    weak_guess: float = 0.6
    guess_margin: float = 0.1
    # line quality by which a sure fit of where lines cross outdoes a steady one
    clearer: float = 0.3
    # a family's comb this many times finer than the other's may be stripes ...
    square_ratio: float = 1.6
    # ... and is looked for again within this factor of the other's period
    squarer: float = 1.25
    # CLAHE clip limit of the second look at a photo where no board was found
    even_clip: float = 3.0
    # clean pieces that must stay clean past the tiles to skip refining again
    inverted_share: float = 0.5
    # (axis, share of the added length before the first line) of the grids twice as long one way
    # tried last, where the layout explains none of the best fit
    stretched: tuple = ((0, 0.5), (1, 0.5), (0, 0.0), (0, 1.0), (1, 0.0), (1, 1.0))

    # --- the grid's two families of lines, through their vanishing points
    # px; line segments are looked for on copies this size, the smallest first (4× cheaper, enough
    # for a board filling the photo), the last (cells ≥ ~5 px)
    lsd_sides: tuple = (320, 480, 640)
    # fewer segments on a smaller copy: the grid lines barely show there
    min_quick_segments: int = 250
    # OpenCV's refinement of the segments LSD finds
    lsd_refine: int = cv2.LSD_REFINE_STD
    # px where LSD looks; shorter segments have too uncertain a direction
    min_segment: float = 5.0
    # degrees a family's lines may turn across the photo (perspective)
    family_spread: float = 22.0
    # sine of the angle a segment may miss its vanishing point by
    vp_tolerance: float = 0.02
    # RANSAC draws per family
    vp_trials: int = 200
    # flattened px per photo px beyond which (or below 1/it) a lattice's comb is fitted in photo
    # px: seen from a chair the flattening shrinks cells below the smallest looked for
    depth_scaled: float = 1.25
    # times vp_tolerance: segments this near the first vanishing point are its own
    vp_spread: float = 3.0
    # bins of a family's position histogram
    comb_bins: int = 600
    # bins; a longer profile is searched at half resolution first
    coarse_profile: int = 300
    # a board whose cells are smaller than the photo's short side / this is not looked for
    max_cells_across: int = 90
    # grey levels between a pixel's two neighbours that make it an edge pixel ...
    edge_step: int = 8
    # ... share of the smallest copy's pixels under which its LSD is skipped
    plain_copy: float = 0.18
    # px of the shrunk photo per cell of the map of where segments cross
    grid_bin: int = 8
    # map cells; spreads each segment over a couple of board cells around it
    grid_blur: float = 3.0
    # direction bins of 15° in that map
    directions: int = 12
    # bins (45°) another direction must differ by to count as crossing
    crossing_bins: int = 3
    # share of the map's peak a place must reach to be looked at
    grid_share: float = 0.3
    # places looked at, the strongest first
    grid_regions: int = 3
    # share of a place inside a stronger one: the same place seen another way
    same_region: float = 0.5

    # --- comb of 16 lines inside a candidate
    # px of the square the candidate is warped to
    comb_side: int = 480
    # share of the side looked at beyond each candidate edge
    comb_pad: float = 0.08
    # the grid spans at least this share of its candidate outline
    min_grid_share: float = 0.35
    # a comb at 2× or 3× the period wins if it scores this share of the best
    coarser_share: float = 0.65

    # --- refinement against the grid lines
    # search half-widths (cells) of the refinement rounds
    refine_rounds: tuple = (0.45, 0.25, 0.15)
    # more rounds at the last width while the grid still moves ...
    extra_rounds: int = 2
    # ... by more than this many cells at a corner
    settled: float = 0.05
    # cells a round must move the grid for the next to find the clean pieces anew
    clean_again: float = 0.1
    # most line samples are right, so few draws find the consensus
    ransac_draws: int = 300
    # line quality of a guess and its first snap below which, with no trace of the layout either
    # (layout_missing), it is given up (2 000 rendered photos: the same corners found)
    hopeless: float = 0.1
    # a line piece must be this many times stronger than the cells beside it
    line_contrast: float = 2.0
    # grey levels per px; gradient below this is sensor noise
    noise_floor: float = 2.0
    # Lab units a cell may differ from its kind's usual colour and count as empty
    clean_step: float = 18.0
    # px inside a cell's edges (of view_cell) the strip runs between
    strip: tuple = (2, 3)
    # strip this much nearer the plain colour than the square's: printed inset
    inset_share: float = 0.55
    # clean line pieces needed to fit on them alone
    min_clean: int = 60

    # --- which of the nearby grids matches the premium layout
    # px per cell when comparing cell colours
    layout_cell: int = 12
    # cells the comb may be off (a printed margin or frame taken for a row of cells)
    max_shift: int = 3
    # layout fit a shifted grid must gain to replace the fitted one
    shift_gain: float = 0.05
    # shading moves lightness more than hue
    lightness_weight: float = 0.5
    # Lab units; a tile or a hand counts no more than this against a fit
    colour_cap: float = 40.0
    # levels the bright parts of a view (of its pixels' brightest channel) reach unless the photo
    # was under-exposed (a dim room, a webcam)
    exposed: int = 160
    # fit that letting cells show the tiles' colour (one more colour) must gain to count: else a
    # grid a few cells off gains by taking the plain squares' colour for it
    tiles_penalty: float = 0.05
    # sizes, against the guess, of the grids tried per axis
    scales: tuple = tuple(1.25 ** np.linspace(-1, 1, 9))
    # steps of the search around the best of those
    fine_scales: tuple = (1.25 ** 0.125, 1.25 ** 0.0625)
    # px per guessed cell of the view the scaled grids are read from
    scale_cell: int = 8
    # guessed cells around it: room for the largest grid shifted by max_shift
    scale_margin: int = 6
    # cells the commonest colours are looked for among (pairwise distances)
    mode_samples: int = 100
    # line quality below which the colour polish has the last word
    polish_below: float = 0.5
    # px; the polish compares whole cells: their means change at once when moved
    polish_inset: int = 0
    # cells a corner is moved by in the colour polish, coarse to fine
    polish_steps: tuple = (0.2, 0.1, 0.05)
    # sweeps over the corners per step
    polish_sweeps: int = 2
    # misfit the polish must take off for its grid to be kept
    polish_gain: float = 0.03
