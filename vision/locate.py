"""Find the printed 15×15 playing grid in a photo.

    >>> where = locate_board(load_photo("turn3.jpg"))
    >>> where.corners.shape, round(where.cell_px)
    ((4, 2), 71)

The search runs on a copy shrunk to about WORK_SIDE pixels (a large photo is halved exactly
first: cheap). A first guess comes from the line segments (two families through their vanishing
points, taken by direction and, as seen from a chair a family's lines turn too far for one
direction, by the two points most segments aim at; a comb of 16 equally spaced lines fitted to
each; then those of the place where most of them cross), looked for on a small copy first and on
larger ones only while unsure; when still unsure, outline candidates (board edges, frames, the
photo's own border), other pairs of segment directions, and the segments of each place where
many of them cross (a small board on striped wood or cloth; on the whole working copy too, where
a small board's lines show better) are tried too; the premium layout sizes a guess from those
whose comb missed the period. Each guess is moved by whole cells onto the grid whose cell
colours the premium layout (Эрудит or English, both symmetric) explains best (any cell may show
the tiles' colour: late in a game tiles hide most squares of some kinds), so a printed margin or
a row of tiles taken for a row of cells is caught, then refined against the grid lines
themselves (a homography through where each line really lies, fitted on the line pieces between
empty cells) on the smallest copy whose cells are large enough, so the corners hold even where
tiles, hands or a printed margin hide the outline. Where the lines are too faint or blurred to
snap to, the premium squares place the grid. Where no board is found (or only one past the
photo's edge that the layout does not confirm), the search looks again at the photo with its
lightness evened out locally: a dark board in the player's shadow or a dim room shows its lines
then.
"""

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import islice

import cv2
import numpy as np

from engine.errors import PhotoError
from engine.ruleset import SIZE, load_layout
from vision.photo import Reduced

ERUDIT_LAYOUT = load_layout("erudit").printed()  # premium squares as the boxes print them
SCRABBLE_LAYOUT = load_layout("scrabble").printed()
LINES = SIZE + 1
WORK_SIDE = 1000  # px; enough to resolve grid lines of a board filling a quarter of the frame
MIN_CELL_PX = 14  # px in the photo; smaller cells hold too few pixels to tell letters apart
SIDE_ERROR = 0.05  # share a found side may be off by (a blurred board): not held against it
MIN_QUALITY = 0.3  # share of grid-line pieces that must stand out from the cells beside them
LAYOUT_FOUND_MISFIT = 0.7  # ... unless the premium layout explains the cell colours this well
# (faint or blurred lines; a texture or clutter leaves a misfit near 1)
LAYOUT_MISSING = 0.95  # misfit of a grid whose cells show no trace of the layout: one with
# lines of middling quality (below POLISH_BELOW) and this misfit is sheared across the board
# (rendered boards fit at ≤ 0.8, real boards late in a game at ≤ 0.85)
EDGE_VIEW_CELL = 16  # px per cell in the shrunk copy enough to measure edge widths on it
MAX_EDGE_WIDTH = 0.6  # cells; edges this soft (blur σ ≈ 0.25 cell) leave letters unreadable
BLURRED_PHOTO_PX = 12.0  # px at WORK_SIDE; a photo whose sharpest edges are this soft is blurred
CUT_OFF_TOLERANCE = 0.3  # cells a grid corner may lie outside the photo (rounding, cropped photos)
VIEW_CELL = 24  # px per cell in the views the comb and the refinement work on
EVIDENCE_BLUR = 2.0  # px at VIEW_CELL; merges the two edges of a grid line into one ridge
MAX_CANDIDATES = 12  # outline candidates tried, largest first
REFINED_CANDIDATES = 2  # best combs that get the full refinement
SEARCH_THREADS = 2  # guesses refined side by side
MISFIT_WEIGHT = 0.5  # weight of the premium layout's misfit against the line quality
STAYED = 0.5  # cells; a refinement that moved the guess less kept the layout's alignment
SURE_QUALITY = 0.7  # line quality above which the lattice guess is not second-guessed ...
SURE_MISFIT = 0.85  # ... when the premium layout also explains the cell colours this well
STEADY_QUALITY = 0.35  # ... or above which a late-game fit is taken when no whole-cell move fits
SURE_GAP = 0.1  # layout fit a late-game grid must beat every grid a few cells off by
FRAME_LINES = 2  # lines a frame or the board's edge can show beyond the grid, parallel to it
AGREE = 0.05  # cells; two lattices refined this close converged on the lines
# a lattice by direction whose first view shows fewer of its line pieces than this has the
# one by vanishing points looked at too, and refined first when that shows GUESS_MARGIN more
WEAK_GUESS = 0.6
GUESS_MARGIN = 0.1
CLEARER = 0.3  # line quality by which a sure fit of where lines cross outdoes a steady one
SQUARE_RATIO = 1.6  # a family's comb this many times finer than the other's may be stripes ...
SQUARER = 1.25  # ... and is looked for again within this factor of the other's period
EVEN_CLIP = 3.0  # CLAHE clip limit of the second look at a photo where no board was found
INVERTED_SHARE = 0.5  # clean pieces that must stay clean past the tiles to skip refining again


@dataclass
class Location:
    """Where the playing grid lies: outer corners in image order (the corner nearest the image's
    top-left first, then clockwise), the mean cell size in pixels, and how well the grid fit."""

    corners: np.ndarray
    cell_px: float
    quality: float


class IllegibleBoard(PhotoError):
    """A board found whose letters cannot be read (too small or too blurred): where its tiles
    lie may still show, and `location` says where its grid is (None once the error is only
    a message)."""

    def __init__(self, message: str, location: Location | None = None):
        super().__init__(message)
        self.location = location


def locate_board(image: np.ndarray) -> Location:
    """Find the 15×15 grid; raise PhotoError saying why when it cannot be read
    (IllegibleBoard when the grid was found but its cells are too small or blurred)."""
    _check_image(image)
    levels = _pyramid(image)
    small = levels[-1][0]
    best = _search(levels)
    if not _plausible(best) or _unconfirmed(levels, best):
        evened = _pyramid(_evened(image))
        again = _search(evened)
        if _rank(evened, again) > _rank(levels, best):
            levels, best = evened, again
    if not _plausible(best):
        blurred = BLURRED_PHOTO_PX * max(small.shape[:2]) / WORK_SIDE
        if _soft_edges_px(small) > blurred:  # nothing found, and nothing is sharp
            raise PhotoError("board too blurred")
        raise PhotoError("no board found")
    corners, _, quality, _ = _moved_onto_layout(levels, best)
    corners, quality = _refined_past_tiles(levels, corners, quality)
    if quality < POLISH_BELOW:  # lines too faint to snap to: the premium squares place the grid
        corners = _polish_by_layout(levels, corners)
    return _checked_location(levels, corners, quality)


def _moved_onto_layout(levels, best):
    """The search's fit, or the fit of its grid moved by whole cells to where the premium layout
    fits it best, when that scores higher: a lattice a row or two off can be refined onto the
    lines a row off, and pass for sure there (the layout fits it well enough). Checked only on
    a fit the layout explains less well than LAYOUT_FOUND_MISFIT: the check costs a few ms."""
    if best[3] <= LAYOUT_FOUND_MISFIT:
        return best
    small, scale = levels[-1]
    corners_small = _rescale(best[0], 1.0, scale)
    shift, _ = _layout_shift(small, corners_small)
    if shift == (0, 0):
        return best
    moved = _fitted(levels, _shifted(corners_small, shift))
    return moved if moved is not None and _plausible(moved) and moved[1] > best[1] else best


def _refined_past_tiles(levels, corners, quality):
    """(corners, quality) refined once more where tiles cover most squares of some kinds: the
    line pieces the search took for clean ones are then those between tiles, whose sides pull
    the fit (tall tiles seen steeply). Kept only within STAYED cells of the search's grid: its
    place is settled, this is a polish (the layout cannot tell grids a few cells off apart so
    late in a game)."""
    corners_small = _rescale(corners, 1.0, levels[-1][1])
    source, factor = _level_for(levels, corners_small, VIEW_CELL)
    view, _ = _grid_view(source, _rescale(corners, 1.0, factor), VIEW_CELL, 1)
    usable = _bare_squares(view)
    if not _more_textured(_cell_texture(view)[1:-1, 1:-1], usable, ~usable):
        return corners, quality  # the squares taken for bare are the smoother: they are bare
    usual, bare = (_flat(_pieces_between(squares))
                   for squares in (usable, _bare_squares(view, past_tiles=True)))
    if (usual & bare).sum() >= INVERTED_SHARE * usual.sum():
        return corners, quality
    refined = _refine_location(levels, corners_small, past_tiles=True)
    if refined is None or np.abs(refined[0] - corners).max() > STAYED * cell_size(corners):
        return corners, quality
    return refined


def _soft_edges_px(small: np.ndarray) -> float:
    """Width in px of the shrunk photo's sharpest edges (contrast over steepest gradient)."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grad = np.hypot(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3),
                    cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)) / 8
    contrast = float(np.percentile(grey, 97) - np.percentile(grey, 3))
    return contrast / (float(np.percentile(grad, 99)) + 1e-6)


def _search(levels):
    """Best (corners, score, quality, misfit) from the line lattices (of all segments, then of
    where they cross), found first on small copies (enough for a board that fills much of the
    photo, and cheap), then on a larger one, and from outlines when still unsure. Where they
    cross is looked at once every size was, or at once for a size whose lattice by direction
    fits nothing plausible (before the lattice by vanishing points, which the stripes mislead
    as much) or shows under HOPELESS of its line pieces at first sight (before refining it): a
    striped cloth's directions outweighed the board's there, and the larger sizes see the same
    stripes at several times the cost (docs/model-history.md, sessions 33, 51, 58). A fit that
    is only steady (_steady) is checked against where the lines cross before it is taken: from
    a chair a grid cells off an empty board can pass for steady (session 59).
    Guesses are refined side by side (numpy and OpenCV let go of the GIL), and weighed in
    turn. Last, where the layout explains none of the best fit, that grid twice as long one
    way (_stretched)."""
    with ThreadPoolExecutor(SEARCH_THREADS) as pool:
        return _search_with(levels, pool)


def _search_with(levels, pool):
    small, scale = levels[-1]
    best = segments = None
    seen: list[_Look] = []
    current = None
    for side in LSD_SIDES:
        segments = _segments(small, side, skim=side == LSD_SIDES[0])
        if side != LSD_SIDES[-1] and (segments is None or len(segments[0]) < MIN_QUICK_SEGMENTS):
            continue  # too few segments for a grid whose lines show at this size: look closer
        squared = []
        look = _Look(segments, _lattices(segments, [(0, 1)], squared), squared=squared)
        first = [_first_view(levels, corners) for corners in look.lattices]
        squared_fit = _squared_ahead(levels, look, first)
        if _sure(levels, squared_fit):
            return squared_fit
        best = _better(levels, best, squared_fit)
        # seen from a chair a family may turn too far for one direction: where its lines meet
        # holds it. Refined first where it shows its lines clearly better.
        previous, (vanishing, ahead) = current, _vanishing_ahead(levels, segments, first)
        if first and first[0].quality < HOPELESS:  # a cloth's stripes: where lines cross first
            best = _crossing_fit(levels, look, best)
            if _sure(levels, best):
                return best
        if _sure(levels, ahead):
            current = ahead
            look.lattices = look.lattices + vanishing
        else:
            current = _best_fit(levels, look.lattices, first=first)
        if not _plausible(current) and look.regions is None:  # stripes' directions, not the board's
            best = _crossing_fit(levels, look, best)
            if _sure(levels, best):
                return best
        if not _sure(levels, current):
            vanishing = _vanishing_lattice(segments) if vanishing is None else vanishing
            current = (_best_fit(levels, vanishing, current) if ahead is None
                       else _better(levels, current, ahead))
            look.lattices = look.lattices + vanishing
        best = _better(levels, best, current)
        if _sure(levels, best) or _settled(levels, best, previous, current):
            return best
        seen.append(look)
    steady = best if _steady(levels, best) else None
    # only then where the other sizes' lines cross: a grid fitted to a crowd of tiles there
    # can pass for sure, where a larger size's lattice would have found the board. A steady
    # fit gives way only to a sure one there that shows CLEARER more of its line pieces.
    for look in seen:
        if look.regions is None:
            fit = _crossing_fit(levels, look, best if steady is None else None)
            best = fit if steady is None else best
            if _sure(levels, fit) and (steady is None or fit[2] >= steady[2] + CLEARER):
                return fit
    if steady is not None:  # every size looked: no need of the last stage's guesses
        return steady
    fits = [fit for fit in map(lambda quad: _comb_in_quad(small, quad),
                               _outline_candidates(small)) if fit is not None]
    # rank the combs as the refined grids are ranked: line evidence less layout misfit
    fits.sort(key=lambda fit: MISFIT_WEIGHT * _layout_shift(small, fit[0])[1] - fit[1])
    guesses = [corners for corners, _ in fits[:REFINED_CANDIDATES]]
    others = _lattices(segments, [(0, 2), (1, 2)])
    if others:
        guesses.append(min(others, key=lambda corners: _layout_shift(small, corners)[1]))
    best = _first_sure(levels, pool, best, [partial(_fitted, levels, corners)
                                            for corners in guesses])
    if _sure(levels, best):
        return best
    # stripes can outweigh a small board's lines even there: pair its next two directions too
    rescaled = [partial(_fitted_rescaled, levels, corners)
                for subset in seen[-1].regions + _closer_regions(small)  # the last size's places
                for corners in _lattices(subset, [(0, 1), (1, 2)])]
    best = _first_sure(levels, pool, best, rescaled)
    if best is None or _sure(levels, best) or best[3] <= SURE_MISFIT:
        return best
    # nothing the layout explains: the comb may have taken half the period one way. Only a
    # sure fit of those guesses is taken (a grid off the board can outscore an unsure one).
    corners = _rescale(best[0], 1.0, scale)
    stretched = _first_sure(levels, pool, None, [partial(_fitted_rescaled, levels,
                                                         _stretched(corners, axis, before))
                                                 for axis, before in STRETCHED])
    return stretched if _sure(levels, stretched) else best


STRETCHED = ((0, 0.5), (1, 0.5), (0, 0.0), (0, 1.0), (1, 0.0), (1, 1.0))  # (axis, share before)


def _stretched(corners, axis, before):
    """The grid twice as long along `axis` (0 across, 1 down), `before` of the added length
    before its first line. Seen steeply from a chair, one family of lines can crowd so that the
    comb takes half its period (tuning game 6 008's 14th photo: a grid over the middle half of
    the board); the lines' directions are right, so the board is that grid stretched along one
    axis (beyond _layout_scaled's quarter, which then sets the length and place)."""
    low = np.zeros(2)
    low[axis] = -SIZE * before
    high = low + SIZE
    high[axis] += SIZE
    return _rectangle(corners, low, high)


def _best_fit(levels, lattices, best=None, first=None):
    """`best` or the best fit of `lattices` (one or two: refined one after the other; `first`,
    their _first_view when already taken)."""
    for k, corners in enumerate(lattices):
        best = _better(levels, best, _fitted(levels, corners, None if first is None else first[k]))
    return best


def _squared_ahead(levels, look, first):
    """The fit of `look`'s squared lattice (_squared_lattice), or None, looked at only where the
    lattice by direction's first view is weak (as _vanishing_ahead) and taken when the squared
    one's shows GUESS_MARGIN more of its line pieces: a table's stripes took one family's
    comb in the bench's striped-table render turned half round, whose finder then looked at a
    larger size (session 59). Its period can be a little off, so its fit is refined again."""
    if not _weak(first) or not look.squared:
        return None
    squared = look.squared[0]()
    fit = None if squared is None else _fitted_if_clearer(levels, squared, first[0])
    return fit if fit is None else _better(levels, fit, _fitted(
        levels, _rescale(fit[0], 1.0, levels[-1][1])))


def _weak(first) -> bool:
    """Whether the lattice by direction's first view (`first`, one or none) shows fewer than
    WEAK_GUESS of its line pieces, but at least MIN_QUALITY (fainter: a cloth's stripes,
    looked at where lines cross first)."""
    return bool(first) and MIN_QUALITY <= first[0].quality < WEAK_GUESS


def _fitted_if_clearer(levels, corners, first: "_FirstView"):
    """The fit of a guess whose first view shows GUESS_MARGIN more of its line pieces than
    `first`, another guess's; else None."""
    view = _first_view(levels, corners)
    if view.quality < first.quality + GUESS_MARGIN:
        return None
    return _fitted(levels, corners, view)


def _vanishing_ahead(levels, segments, first):
    """(the lattice by vanishing points in a list, its fit) when the lattice by direction's
    first view (`first`, one or none) shows fewer than WEAK_GUESS of its line pieces (but at
    least MIN_QUALITY) and the vanishing one's shows GUESS_MARGIN more; else (that lattice or
    None, None). From a chair the lattice by direction was refined for nothing, before a sure
    one by vanishing points, in one photo of six (`eval_locate --seated`, session 57)."""
    if not _weak(first):
        return None, None
    vanishing = _vanishing_lattice(segments)
    if not vanishing:
        return vanishing, None
    return vanishing, _fitted_if_clearer(levels, vanishing[0], first[0])


def _first_sure(levels, pool, best, tasks):
    """`best` or a better fit of those `tasks` (each returns a fit) make, weighed in order,
    run side by side: the first sure fit ends it, the tasks not yet begun are not run
    (the last stage's guesses cost up to ~750 ms each, and an early one is often sure)."""
    waiting = iter(tasks)
    running = deque(pool.submit(task) for task in islice(waiting, SEARCH_THREADS))
    while running and not _sure(levels, best):
        best = _better(levels, best, running.popleft().result())
        running.extend(pool.submit(task) for task in islice(waiting, 1))
    for left in running:
        left.cancel()
    return best


def _fitted_rescaled(levels, corners):
    """_fitted of a lattice put onto the scale the premium layout fits best."""
    return _fitted(levels, _rescaled_if_off(levels, corners))


@dataclass
class _Look:
    """One segment size's line segments, the lattices of their strongest directions, and the
    places where they cross (once looked at)."""

    segments: tuple
    lattices: list
    regions: list | None = None
    squared: list = field(default_factory=list)  # its squared lattice, made on demand


def _crossing_fit(levels, look: _Look, best):
    """`best` or a better fit of the lattices where one size's segments cross (the look's
    regions are filled in), stopping at a sure fit."""
    look.regions = _grid_regions(look.segments, levels[-1][0].shape)
    for lattice in _crossing_lattices(look.regions, look.lattices):
        best = _better(levels, best, _fitted(levels, lattice))
        if _sure(levels, best):
            break
    return best


def _rescaled_if_off(levels, corners):
    """A lattice as it is, or, when the premium layout misfits it, the grid of the scale and
    shift it fits best, polished: a comb whose period is off leaves the premium squares in the
    wrong cells."""
    small, scale = levels[-1]
    if _layout_shift(small, corners)[1] <= SURE_MISFIT:
        return corners
    corners = _polish_by_layout(levels, _rescale(_layout_scaled(small, corners), scale, 1.0))
    return _rescale(corners, 1.0, scale)


def _crossing_lattices(regions, lattices):
    """The lattice of the strongest of _grid_regions, unless it is one of `lattices`: over the
    whole photo the stripes of a cloth running near one of the board's directions outweigh
    it and take its segments into their family."""
    for corners in _lattices(regions[0], [(0, 1)]) if regions else []:
        if all(np.abs(corners - other).max() > STAYED * cell_size(other) for other in lattices):
            yield corners


def _closer_regions(small):
    """_grid_regions of the segments of the whole working copy, when larger than the last LSD
    side: a small board's lines (cells of ~6 px there) may be lost in the grain around it."""
    if max(small.shape[:2]) <= LSD_SIDES[-1]:
        return []
    return _grid_regions(_segments(small, max(small.shape[:2])), small.shape)


def _plausible(fitted) -> bool:
    """Whether a fit may be the board: its lines stand out, or the premium layout explains its
    cell colours; a grid sheared across a board or a texture does neither well."""
    if fitted is None:
        return False
    _, _, quality, misfit = fitted
    return not ((quality < MIN_QUALITY and misfit > LAYOUT_FOUND_MISFIT)
                or (quality < POLISH_BELOW and misfit > LAYOUT_MISSING))


def _sure(levels, fitted) -> bool:
    """Whether a fit is the board beyond doubt: its lines stand out and the layout fits its
    cells even without the tiles' colour (a grid several cells off, onto a margin, can fit well
    enough with it) or, where tiles hide too many squares for that (late in a game), no grid
    moved by whole cells can be the board."""
    if fitted is None or fitted[2] < SURE_QUALITY or fitted[3] > SURE_MISFIT:
        return False
    small, scale = levels[-1]
    corners = _rescale(fitted[0], 1.0, scale)
    return (_misfit(small, corners, tiles=False) <= SURE_MISFIT
            or _alone(levels, corners, fitted[2]))


def _settled(levels, best, previous, current) -> bool:
    """Whether the lattices of two line-segment sizes were refined onto one grid (within AGREE
    cells at each corner) whose lines stand out at least half the time, and no grid moved by
    whole cells can be the board: where tiles hide too many line pieces for a sure fit, the
    refinement still converged on the lines, and the layout places the grid."""
    if previous is None or current is None or best[3] > SURE_MISFIT:
        return False
    if best is not previous and best is not current:  # an earlier size's fit scored higher
        return False
    if min(previous[2], current[2]) < POLISH_BELOW:
        return False
    ends = [order_corners(fitted[0]) for fitted in (previous, current)]
    if np.linalg.norm(ends[0] - ends[1], axis=1).max() > AGREE * cell_size(ends[1]):
        return False
    small, scale = levels[-1]
    return _alone(levels, _rescale(best[0], 1.0, scale), min(previous[2], current[2]))


def _steady(levels, fitted) -> bool:
    """Whether the best fit of every segment size's lattices, neither sure nor settled, is the
    board all the same: at least STEADY_QUALITY of its line pieces stand out, the layout
    explains its cells as well as a sure fit's, and no grid moved by whole cells can be the
    board. Late in a game tiles hide too many line pieces for a sure fit; the last stage's
    guesses then found no better grid, at several times the time (docs/model-history.md,
    session 26). Taken only once every size was looked at: a smaller size's bent grid can
    pass the test, and the closer look mends it."""
    if fitted is None or fitted[2] < STEADY_QUALITY or fitted[3] > SURE_MISFIT:
        return False
    if _cut_off(levels, fitted[0]):  # bent past the photo's edge: the last stage mends it
        return False
    small, scale = levels[-1]
    return _alone(levels, _rescale(fitted[0], 1.0, scale), fitted[2])


def _alone(levels, corners_small, quality) -> bool:
    """Whether no grid moved by whole cells can be the board: the layout (tiles' colour allowed)
    fits every grid up to MAX_SHIFT cells off clearly worse, and every grid further off that
    could still show `quality` of its line pieces has fewer of them standing out."""
    fits = _shift_fits(levels[-1][0], corners_small)
    if fits[MAX_SHIFT, MAX_SHIFT] < np.delete(fits.ravel(), fits.size // 2).max() + SURE_GAP:
        return False
    reach = _reach(quality)
    if reach <= MAX_SHIFT:
        return True
    counts = _shifted_line_counts(levels, corners_small, reach)
    steps = np.abs(np.arange(-reach, reach + 1))
    far = np.maximum(steps[:, None], steps[None, :]) > MAX_SHIFT
    return bool(counts[reach, reach] > counts[far].max())


def _reach(quality) -> int:
    """Cells a grid can be off the board's and still show `quality` of its line pieces: k cells
    off keeps (LINES - k) * SIZE + LINES * (SIZE - k) on the board; a frame or the board's
    edge beyond the grid can add FRAME_LINES lines."""
    pieces = 2 * LINES * SIZE
    return int((pieces + FRAME_LINES * SIZE - quality * pieces) / (LINES + SIZE))


def _better(levels, best, fitted):
    """The higher-scoring fit, a plausible one before any other, and one the photo holds
    before one past its edge that the premium layout does not confirm (misfit above
    LAYOUT_FOUND_MISFIT): past the edge no line shows, and under a shadow over half a late
    board a grid five cells off, past the edge, fitted the layout a little better than the
    board's own. A board really cut off still fits its layout well, and is refused."""
    if fitted is None:
        return best
    if best is None or _rank(levels, fitted) > _rank(levels, best):
        return fitted
    return best


def _rank(levels, fitted):
    """What _better compares: plausible, not past the edge unconfirmed, then the score."""
    if fitted is None:
        return False, False, -np.inf
    return _plausible(fitted), not _unconfirmed(levels, fitted), fitted[1]


def _unconfirmed(levels, fitted) -> bool:
    """Whether a fit reaches past the photo's edge without the premium layout vouching for it."""
    return fitted is not None and fitted[3] > LAYOUT_FOUND_MISFIT and _cut_off(levels, fitted[0])


def _evened(image):
    """The photo with its lightness evened out locally (CLAHE on Lab's L): a board in a
    shadow or a dim corner shows its lines as a lit one does."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    lab[..., 0] = cv2.createCLAHE(clipLimit=EVEN_CLIP, tileGridSize=(8, 8)).apply(lab[..., 0])
    return cv2.cvtColor(lab, cv2.COLOR_LAB2BGR).view(type(image))


@dataclass
class _FirstView:
    """A guess moved onto the grid the premium layout fits best nearby, and its first view:
    the refinement's first round, taken once to judge the guess and then refined on."""

    corners_small: np.ndarray
    view: np.ndarray
    to_source: np.ndarray
    evidence: tuple
    quality: float  # share of its line pieces that stand out


def _first_view(levels, corners_small) -> _FirstView:
    """A guess (corners on the smallest copy) and the refinement's first view of it."""
    # A first guess a row off would be bent by the refinement (one edge snaps to the frame):
    # move it onto the best-fitting grid first, then refine, then check again.
    small, scale = levels[-1]
    shift, _ = _layout_shift(small, corners_small)
    if shift != (0, 0):
        corners_small = _shifted(corners_small, shift)
    source, factor = _level_for(levels, corners_small, VIEW_CELL)
    view, to_source = _grid_view(source, _rescale(corners_small, scale, factor), VIEW_CELL, 1)
    evidence = _line_evidence(view)
    return _FirstView(corners_small, view, to_source, evidence, _line_contrast(evidence))


def _fitted(levels, corners_small, first: _FirstView | None = None):
    """Refine a first guess, move it onto the nearby grid the premium layout fits best; return
    (corners in photo pixels, score, line quality, layout misfit) or None. The score takes the
    misfit from the line quality so that a checkered cloth or a rack loses to the board.
    `first`: the guess's _first_view, when already taken."""
    small, scale = levels[-1]
    first = _first_view(levels, corners_small) if first is None else first
    corners_small = first.corners_small
    refined = _refine_location(levels, corners_small, first=first)
    if refined is None:
        return None
    corners, quality = refined
    found = _rescale(corners, 1.0, scale)
    if np.abs(found - corners_small).max() < STAYED * cell_size(found):
        misfit = _misfit(small, found)  # the layout was checked on the guess, whose cells it kept
        return corners, quality - MISFIT_WEIGHT * misfit, quality, misfit
    shift, misfit = _layout_shift(small, found)
    if shift != (0, 0):
        moved = _shifted(corners, shift)
        refined = _refine_location(levels, _rescale(moved, 1.0, scale))
        if refined is None:
            return None
        corners, quality = refined
    return corners, quality - MISFIT_WEIGHT * misfit, quality, misfit


def _rescale(points, source_factor: float, target_factor: float):
    """Points from a copy `source_factor` times smaller than the photo to one `target_factor`
    times smaller (pixel centres: a copy's pixel i covers the photo's [i, i + 1) × factor)."""
    if source_factor == target_factor:
        return np.float32(points)
    return np.float32((np.asarray(points) + 0.5) * (source_factor / target_factor) - 0.5)


def order_corners(quad: np.ndarray) -> np.ndarray:
    """Put 4 corners in image order: nearest the image's top-left first, then clockwise."""
    quad = np.asarray(quad, np.float32).reshape(4, 2)
    centre = quad.mean(axis=0)
    angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    quad = quad[np.argsort(angles)]  # y points down, so rising angle runs clockwise on screen
    start = int(np.argmin(quad.sum(axis=1)))
    return np.roll(quad, -start, axis=0)


def grid_homography(corners: np.ndarray) -> np.ndarray:
    """Homography from grid coordinates (cells; (0,0) first corner, (15,15) third) to pixels."""
    square = np.float32([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]])
    return cv2.getPerspectiveTransform(square, np.float32(corners))


def _check_image(image) -> None:
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3:
        raise PhotoError("not an image (expected a colour picture)")
    if image.dtype != np.uint8:
        raise PhotoError("not an image (not 8-bit)")
    if min(image.shape[:2]) < 32:
        raise PhotoError("photo too small to hold a board")


def _pyramid(image):
    """[(copy, factor it is smaller than the photo)], from the photo itself down to a copy
    WORK_SIDE px on its long side (unless the photo is smaller). A large photo is halved exactly
    while at least twice that (fast: OpenCV's 2×2 area resize costs a tenth of a general one),
    then resized linearly: its pixels already average 2×2 photo pixels, so the last step, by
    at most half, aliases little. So is a photo decoded reduced (a Reduced); any other is
    area-averaged (several times slower)."""
    levels = [(image, 1.0)]
    while max(levels[-1][0].shape[:2]) >= 2 * WORK_SIDE:
        levels.append((halve(levels[-1][0]), levels[-1][1] * 2))
    last, factor = levels[-1]
    if max(last.shape[:2]) > WORK_SIDE:
        size = (round(last.shape[1] * WORK_SIDE / max(last.shape[:2])),
                round(last.shape[0] * WORK_SIDE / max(last.shape[:2])))
        averaged = factor > 1 or isinstance(image, Reduced)
        small = cv2.resize(last, size, interpolation=cv2.INTER_LINEAR if averaged
                           else cv2.INTER_AREA)
        levels.append((small, factor * last.shape[1] / size[0]))
    return levels


def halve(image: np.ndarray) -> np.ndarray:
    """Half the size, each pixel the mean of a 2×2 block: OpenCV's exact-halving area resize
    costs a tenth of a general area resize (an odd last row or column is dropped)."""
    height, width = image.shape[:2]
    return cv2.resize(image[:height // 2 * 2, :width // 2 * 2], (width // 2, height // 2),
                      interpolation=cv2.INTER_AREA)


def shrink_to(image: np.ndarray, factor: float) -> np.ndarray:
    """Resize by `factor` < 1 with area averaging; a large factor first goes most of the way
    by exact halvings, so each output pixel still averages at least 2×2 samples."""
    while factor <= 0.5:
        image, factor = halve(image), factor * 2
    if factor >= 1.0:
        return image
    height, width = image.shape[:2]
    size = (max(1, round(width * factor)), max(1, round(height * factor)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


# --- outline candidates -------------------------------------------------------------------------


def _outline_candidates(small: np.ndarray) -> list[np.ndarray]:
    """Quadrilaterals that may hold the grid: outlines of large blobs, and the photo itself."""
    height, width = small.shape[:2]
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    grey = cv2.GaussianBlur(grey, (5, 5), 0)
    masks = []
    edges = cv2.Canny(grey, 20, 60)
    masks.append(cv2.dilate(edges, np.ones((5, 5), np.uint8)))
    _, bright = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    masks.extend([bright, 255 - bright])
    saturation = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2HSV)[:, :, 1], (5, 5), 0)
    _, colourful = cv2.threshold(saturation, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    masks.extend([colourful, 255 - colourful])
    min_area = 0.01 * height * width
    found = []
    close = np.ones((7, 7), np.uint8)
    for mask in masks:
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, close)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for contour in contours:
            area = cv2.contourArea(contour)
            if area < min_area:
                continue
            quad = _quad_of(contour)
            if quad is not None:
                found.append((cv2.contourArea(quad), quad))
    frame = np.float32([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]])
    found.sort(key=lambda item: -item[0])
    quads = [frame] + [quad for _, quad in found]
    return _distinct(quads)[:MAX_CANDIDATES]


def _quad_of(contour: np.ndarray):
    """The 4-corner polygon that best follows a blob's convex hull, or None."""
    hull = cv2.convexHull(contour)
    perimeter = cv2.arcLength(hull, True)
    for share in (0.01, 0.02, 0.03, 0.05, 0.08):
        poly = cv2.approxPolyDP(hull, share * perimeter, True)
        if len(poly) == 4:
            return order_corners(poly)
        if len(poly) < 4:
            break
    box = cv2.boxPoints(cv2.minAreaRect(hull))
    return order_corners(box)


def _distinct(quads: list[np.ndarray]) -> list[np.ndarray]:
    kept = []
    for quad in quads:
        size = np.linalg.norm(quad[0] - quad[2])
        if all(np.abs(quad - other).max() > 0.02 * size for other in kept):
            kept.append(quad)
    return kept


# --- the grid's two families of lines, through their vanishing points ---------------------------

LSD_SIDES = (320, 480, 640)  # px; line segments are looked for on copies this size, the
# smallest first (4× cheaper, enough for a board filling the photo), the last (cells ≥ ~5 px)
MIN_QUICK_SEGMENTS = 250  # fewer segments on a smaller copy: the grid lines barely show there
LSD_REFINE = cv2.LSD_REFINE_STD
MIN_SEGMENT = 5.0  # px where LSD looks; shorter segments have too uncertain a direction
FAMILY_SPREAD = 22.0  # degrees a family's lines may turn across the photo (perspective)
VP_TOLERANCE = 0.02  # sine of the angle a segment may miss its vanishing point by
VP_TRIALS = 200  # RANSAC draws per family
DEPTH_SCALED = 1.25  # flattened px per photo px beyond which (or below 1/it) a lattice's comb
# is fitted in photo px: seen from a chair the flattening shrinks cells below the smallest looked for
VP_SPREAD = 3.0  # times VP_TOLERANCE: segments this near the first vanishing point are its own
COMB_BINS = 600  # bins of a family's position histogram
COARSE_PROFILE = 300  # bins; a longer profile is searched at half resolution first
MAX_CELLS_ACROSS = 90  # a board whose cells are smaller than the photo's short side / this is not looked for
EDGE_STEP = 8  # grey levels between a pixel's two neighbours that make it an edge pixel ...
PLAIN_COPY = 0.18  # ... share of the smallest copy's pixels under which its LSD is skipped


def _segments(small: np.ndarray, side: int, skim: bool = False):
    """Line segments of the shrunk photo, looked for on a copy `side` px long, as (ends,
    vectors, lengths, angles, centre, smallest cell) around the photo's centre, or None when
    there are too few (with `skim`, at once where the copy is too plain to hold enough)."""
    factor = min(1.0, side / max(small.shape[:2]))
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    grey = shrink_to(grey, factor) if factor < 1.0 else grey
    if skim and _edge_share(grey) < PLAIN_COPY:
        return None
    found = cv2.createLineSegmentDetector(LSD_REFINE, 1.0).detect(grey)[0]
    if found is None or len(found) < 20:
        return None
    ends = found.reshape(-1, 2, 2).astype(np.float64) / factor
    centre = np.array([small.shape[1], small.shape[0]], np.float64) / 2
    ends = ends - centre
    vectors = ends[:, 1] - ends[:, 0]
    lengths = np.linalg.norm(vectors, axis=1)
    keep = lengths * factor >= MIN_SEGMENT
    if keep.sum() < 20:
        return None
    angles = np.degrees(np.arctan2(vectors[keep, 1], vectors[keep, 0])) % 180
    smallest = min(small.shape[:2]) / MAX_CELLS_ACROSS
    return ends[keep], vectors[keep], lengths[keep], angles, centre, smallest


def _edge_share(grey: np.ndarray) -> float:
    """Share of pixels whose neighbours differ by more than EDGE_STEP. LSD costs nearly the
    same per pixel however few segments it finds (4 ms at 320 px for 40 segments), and a copy
    this plain finds too few: of 600 `eval_locate` renders (as rendered, dim, in a shadow,
    from a chair) at 320 px none under 0.21 found MIN_QUICK_SEGMENTS, and 211 of the 447 that
    found fewer were under PLAIN_COPY (docs/model-history.md, session 61)."""
    dx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=1)
    dy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=1)
    return float(np.count_nonzero(dx * dx + dy * dy > EDGE_STEP ** 2)) / grey.size


def _lattices(segments, pairs, squared: list | None = None) -> list[np.ndarray]:
    """Grid corners from line segments, one guess per pair of the strongest directions in
    `pairs` (indices into the up to three strongest, 0 the strongest): take the segments near
    both directions, find each family's vanishing point, undo the perspective so each family is
    parallel, then fit a 16-line comb to each family's positions. Stripes of a table or a cloth
    can outweigh one of the grid's directions, hence the other pairs. `squared`, a list, gets
    each lattice's squared one to make on demand, where it has one (_comb_lattice)."""
    if segments is None:
        return []
    ends, vectors, lengths, angles, centre, smallest = segments
    peaks = _direction_peaks(angles, lengths)
    found = []
    for first, second in pairs:
        if second >= len(peaks):
            continue
        families = [np.abs((angles - peaks[k] + 90) % 180 - 90) <= FAMILY_SPREAD for k in (first, second)]
        if min(mask.sum() for mask in families) < 8:
            continue
        rng = np.random.default_rng(0)
        points = [_vanishing_point(ends[m], vectors[m], lengths[m], rng) for m in families]
        if any(point is None for point in points):
            continue
        corners = _comb_lattice(ends, lengths, families, points, centre, smallest, squared)
        if corners is not None:
            found.append(corners)
    return found


def _vanishing_lattice(segments) -> list[np.ndarray]:
    """Grid corners (in a list, empty when none) from the two vanishing points most segment
    length points at, the second found among the segments the first leaves: seen from a chair
    a family's lines turn by more than FAMILY_SPREAD across the board, and its directions'
    peaks split it."""
    if segments is None:
        return []
    ends, vectors, lengths, _, centre, smallest = segments
    mids, units = (ends[:, 0] + ends[:, 1]) / 2, vectors / lengths[:, None]
    rng = np.random.default_rng(0)
    left = np.ones(len(ends), bool)
    families, points = [], []
    for _ in range(2):
        if left.sum() < 8:
            return []
        point = _vanishing_point(ends[left], vectors[left], lengths[left], rng)
        if point is None:
            return []
        tolerances = [VP_TOLERANCE, VP_SPREAD * VP_TOLERANCE]
        members, near = _aiming_at(point[None], mids, units, tolerances)
        members &= left
        left &= ~near
        families.append(members)
        points.append(point)
    corners = _comb_lattice(ends, lengths, families, points, centre, smallest)
    return [] if corners is None else [corners]


def _aiming_at(points, mids, units, tolerance):
    """(point, segment) whether the line of each segment (its middle and unit direction) passes
    within `tolerance` (sine of the angle) of each homogeneous point; several tolerances for
    one point give a row each. The cross product of each unit direction with the way from its
    middle to a point, and that way's squared length, are both products of a few terms of the
    segment and a few of the point: two matrix products, not ten passes over (point, segment)."""
    ux, uy, mx, my = units[:, 0], units[:, 1], mids[:, 0], mids[:, 1]
    px, py, pz = points[:, 0], points[:, 1], points[:, 2]
    cross = points @ np.stack([-uy, ux, uy * mx - ux * my])
    length = np.stack([px * px + py * py, -2 * pz * px, -2 * pz * py, pz * pz], axis=1) @ \
        np.stack([np.ones_like(mx), mx, my, mx * mx + my * my])
    length += 1e-24
    if np.ndim(tolerance) == 0:
        length *= tolerance ** 2  # in place: these arrays are the cost
        return np.square(cross, out=cross) < length
    return cross ** 2 < np.reshape(tolerance, (-1, 1)) ** 2 * length


def _direction_peaks(angles, lengths, count=3) -> list[int]:
    """Up to `count` directions (degrees) most segment length follows, each at least 30° from
    the stronger ones."""
    hist = np.bincount(np.round(angles).astype(int) % 180, weights=lengths, minlength=180)
    smooth = np.convolve(np.r_[hist[-3:], hist, hist[:3]], np.ones(7), "valid")
    peaks = []
    for _ in range(count):
        allowed = np.ones(180, bool)
        for peak in peaks:
            allowed &= np.abs((np.arange(180) - peak + 90) % 180 - 90) >= 30
        if not (allowed & (smooth > 0)).any():
            break
        peaks.append(int(np.argmax(np.where(allowed, smooth, -1))))
    return peaks


def _vanishing_point(ends, vectors, lengths, rng):
    """Homogeneous vanishing point most segment length points at (RANSAC, then least squares)."""
    scale = 1000.0
    p1 = np.c_[ends[:, 0] / scale, np.ones(len(ends))]
    p2 = np.c_[ends[:, 1] / scale, np.ones(len(ends))]
    lines = np.cross(p1, p2)
    lines /= np.linalg.norm(lines[:, :2], axis=1, keepdims=True)
    mids = (ends[:, 0] + ends[:, 1]) / 2 / scale
    units = vectors / lengths[:, None]
    chance = lengths / lengths.sum()
    first = rng.choice(len(lines), VP_TRIALS, p=chance)
    second = rng.choice(len(lines), VP_TRIALS, p=chance)
    trials = np.cross(lines[first], lines[second])
    norms = np.linalg.norm(trials, axis=1)
    trials = trials[norms > 1e-12] / norms[norms > 1e-12, None]
    if len(trials) == 0:
        return None
    inliers = _aiming_at(trials, mids, units, VP_TOLERANCE)
    best_mask = inliers[int(np.argmax(inliers @ lengths))]
    if best_mask.sum() < 6:
        return None
    weighted = lines[best_mask] * np.sqrt(lengths[best_mask])[:, None]
    _, basis = np.linalg.eigh(weighted.T @ weighted)
    point = basis[:, 0]
    return np.array([point[0] * scale, point[1] * scale, point[2]])


GRID_BIN = 8  # px of the shrunk photo per cell of the map of where segments cross
GRID_BLUR = 3.0  # map cells; spreads each segment over a couple of board cells around it
DIRECTIONS = 12  # direction bins of 15° in that map
CROSSING_BINS = 3  # bins (45°) another direction must differ by to count as crossing
GRID_SHARE = 0.3  # share of the map's peak a place must reach to be looked at
GRID_REGIONS = 3  # places looked at, the strongest first
SAME_REGION = 0.5  # share of a place inside a stronger one: the same place seen another way


def _grid_regions(segments, shape) -> list[tuple]:
    """The segments of each of the few places where many segments of one direction are crossed
    by many of another, the strongest first. Stripes of a cloth or of wood run one way: over a
    whole photo they can outweigh the lines of a small board and hide its directions. Planks
    crossed by grain cross too, but at other directions than a turned board, so each direction
    is mapped apart."""
    if segments is None:
        return []
    ends, _, _, _, centre, _ = segments
    crossing = _crossing_maps(segments, shape)
    found = []
    for direction in crossing:
        mask = (direction > GRID_SHARE * crossing.max()).astype(np.uint8)
        count, labels = cv2.connectedComponents(mask)
        weights = np.bincount(labels.ravel(), weights=direction.ravel(), minlength=count)
        found.extend((weights[label], labels == label) for label in range(1, count))
    found.sort(key=lambda item: -item[0])
    mids = ((ends[:, 0] + ends[:, 1]) / 2 + centre) / GRID_BIN
    rows = np.clip(mids[:, 1].astype(int), 0, crossing.shape[1] - 1)
    columns = np.clip(mids[:, 0].astype(int), 0, crossing.shape[2] - 1)
    kept, subsets = [], []
    for _, region in found:
        if any((region & other).sum() > SAME_REGION * region.sum() for other in kept):
            continue
        kept.append(region)
        inside = cv2.dilate(region.astype(np.uint8), np.ones((5, 5), np.uint8))[rows, columns] > 0
        if inside.sum() >= 20:
            subsets.append(_segments_where(segments, inside))
        if len(kept) == GRID_REGIONS:
            break
    return subsets


def _segments_where(segments, keep):
    ends, vectors, lengths, angles, centre, smallest = segments
    return ends[keep], vectors[keep], lengths[keep], angles[keep], centre, smallest


def _crossing_maps(segments, shape) -> np.ndarray:
    """(direction, y, x) per GRID_BIN cell of the shrunk photo: the segment length nearby in
    that direction, capped by that in the strongest direction crossing it by at least 45°."""
    ends, vectors, lengths, angles, centre, _ = segments
    height, width = shape[0] // GRID_BIN + 1, shape[1] // GRID_BIN + 1
    # sample each segment every half bin, so that a long line counts all along its length
    counts = np.ceil(lengths / (GRID_BIN / 2)).astype(int) + 1
    owner = np.repeat(np.arange(len(lengths)), counts)
    along = (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + 0.5) / \
        counts[owner]
    points = (ends[owner, 0] + vectors[owner] * along[:, None] + centre) / GRID_BIN
    bins = np.round(angles / (180 / DIRECTIONS)).astype(int) % DIRECTIONS
    density = np.zeros((DIRECTIONS, height, width), np.float32)
    np.add.at(density, (bins[owner], np.clip(points[:, 1].astype(int), 0, height - 1),
                        np.clip(points[:, 0].astype(int), 0, width - 1)), (lengths / counts)[owner])
    density = np.stack([cv2.GaussianBlur(part, (0, 0), GRID_BLUR) for part in density])
    density = (np.roll(density, 1, 0) + 2 * density + np.roll(density, -1, 0)) / 4  # perspective
    crossing = np.empty_like(density)
    for direction in range(DIRECTIONS):
        others = [(direction + k) % DIRECTIONS for k in range(CROSSING_BINS, DIRECTIONS - CROSSING_BINS + 1)]
        crossing[direction] = np.minimum(density[direction], density[others].max(axis=0))
    return crossing


def _comb_lattice(ends, lengths, families, points, centre, smallest, squared=None):
    """Send the horizon (the line through both vanishing points) to infinity, so each family
    becomes parallel and evenly spaced, and fit a comb to each family's line positions.
    Where one family's period is SQUARE_RATIO or more below the other's, `squared` (a list, or
    None) gets the squared lattice to make on demand (_squared_lattice): a table's stripes
    beside the board can give one family their finer comb (session 59)."""
    horizon = np.cross(points[0], points[1])
    if abs(horizon[2]) < 1e-12:
        return None
    horizon = horizon / horizon[2]
    affine = np.array([[1, 0, 0], [0, 1, 0], horizon], np.float64)
    mids = (ends[:, 0] + ends[:, 1]) / 2
    side = np.c_[mids, np.ones(len(mids))] @ horizon
    both = families[0] | families[1]  # the board lies on the side most of their length does
    near = side > 0 if lengths[both] @ np.sign(side[both]) >= 0 else side < 0
    families = [members & near for members in families]
    if min(members.sum() for members in families) < 8:
        return None
    flat_mids = _apply(affine, mids)
    flat_ends = _apply(affine, ends.reshape(-1, 2)).reshape(-1, 2, 2)
    flat_lengths = np.linalg.norm(flat_ends[:, 1] - flat_ends[:, 0], axis=1)
    positions, lines = [], []
    for members, point in zip(families, points, strict=True):
        direction = (affine @ point)[:2]
        direction = direction / (np.linalg.norm(direction) + 1e-12)
        normal = np.array([-direction[1], direction[0]])
        at = flat_mids[members] @ normal
        scale = _across_scale(affine, ends[members], normal, at)
        comb = _comb_of_positions(at / scale, flat_lengths[members], smallest)
        if comb is None:
            return None
        start, period = np.array(comb) * scale
        positions.append((at / scale, flat_lengths[members], scale))
        lines.append((normal, start, start + SIZE * period))
    periods = [(end - start) / SIZE for _, start, end in lines]
    if squared is not None and max(periods) >= SQUARE_RATIO * min(periods):
        fine = int(np.argmin(periods))
        squared.append(partial(_squared_lattice, lines, fine, positions[fine], affine, centre))
    return _lattice_corners(lines, affine, centre)


def _lattice_corners(lines, affine, centre):
    (n1, a0, a1), (n2, b0, b1) = lines
    flat_corners = np.array([_meet(n1, a, n2, b) for a, b in ((a0, b0), (a1, b0), (a1, b1), (a0, b1))])
    corners = _apply(np.linalg.inv(affine), flat_corners) + centre
    return order_corners(corners)


def _squared_lattice(lines, fine, positions, affine, centre):
    """The lattice of `lines` with family `fine`'s comb fitted again to its `positions` within
    SQUARER of the other family's period (None when none fits there)."""
    at, weight, scale = positions
    other = lines[1 - fine]
    near = (other[2] - other[1]) / SIZE / scale
    comb = _comb_of_positions(at, weight, near / SQUARER, near * SQUARER)
    if comb is None:
        return None
    start, period = np.array(comb) * scale
    lines = list(lines)
    lines[fine] = (lines[fine][0], start, start + SIZE * period)
    return _lattice_corners(lines, affine, centre)


def _across_scale(affine, ends, normal, at) -> float:
    """Flattened px per photo px across a family's lines, near its segments: seen from a chair
    the flattening shrinks the board's cells to a third or less, below the smallest cell
    looked for (1 where it changes them by less than DEPTH_SCALED: nothing needs it)."""
    mids = (ends[:, 0] + ends[:, 1]) / 2
    vectors = ends[:, 1] - ends[:, 0]
    across = np.c_[-vectors[:, 1], vectors[:, 0]] / np.linalg.norm(vectors, axis=1)[:, None]
    scale = float(np.median(np.abs(_apply(affine, mids + across) @ normal - at)))
    if not 0 < scale < np.inf:  # segments on the horizon: no scale to keep
        return 1.0
    return scale if abs(np.log(scale)) > np.log(DEPTH_SCALED) else 1.0


def _comb_of_positions(at, weight, smallest, largest=None):
    """(first line, period) of the best 16-line comb through weighted 1D line positions, its
    period at least `smallest` (and at most `largest`, when given)."""
    low, high = np.percentile(at, 1) - 5, np.percentile(at, 99) + 5
    if high - low < 40 or high - low > 20000:
        return None
    width = max(1.0, (high - low) / COMB_BINS)  # bin width: keeps the comb search short
    count = int((high - low) / width) + 1
    hist = np.bincount(np.clip(((at - low) / width).astype(int), 0, count - 1), weights=weight,
                       minlength=count).astype(np.float32)
    hist = cv2.GaussianBlur(hist.reshape(1, -1), (0, 0), sigmaX=1.0).ravel()
    longest, shortest = count / SIZE * 1.15, max(3.0, smallest / width)
    if largest is not None:
        longest = min(longest, largest / width)
        if longest <= shortest:
            return None
    offset, period, _ = _best_comb(hist, longest, shortest)
    return low + offset * width, period * width


def _apply(matrix, points):
    points = np.asarray(points, np.float64).reshape(-1, 2)
    mapped = np.c_[points, np.ones(len(points))] @ matrix.T
    return mapped[:, :2] / mapped[:, 2:3]


def _meet(n1, a, n2, b):
    return np.linalg.solve(np.array([n1, n2]), np.array([a, b]))


# --- comb of 16 lines inside a candidate --------------------------------------------------------

COMB_SIDE = 480  # px of the square the candidate is warped to
COMB_PAD = 0.08  # share of the side looked at beyond each candidate edge
MIN_GRID_SHARE = 0.35  # the grid spans at least this share of its candidate outline
COARSER_SHARE = 0.65  # a comb at 2× or 3× the period wins if it scores this share of the best


def _comb_in_quad(small: np.ndarray, quad: np.ndarray):
    """Fit 16 equally spaced lines per axis inside `quad`; return (grid corners, score) or None."""
    side, pad = COMB_SIDE, COMB_PAD * COMB_SIDE
    inner = np.float32([[pad, pad], [side - pad, pad], [side - pad, side - pad], [pad, side - pad]])
    warp = cv2.getPerspectiveTransform(np.float32(quad), inner)
    view = cv2.warpPerspective(small, warp, (side, side), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)
    grad_x, grad_y = _line_evidence(view)
    span = side - 2 * pad
    combs = []
    for grad, axis in ((grad_x, 0), (grad_y, 1)):
        profile = grad[int(pad):int(side - pad)].mean(axis=0) if axis == 0 else \
            grad[:, int(pad):int(side - pad)].mean(axis=1)
        comb = _best_comb(profile, span / (SIZE + 1) * 1.15, span * MIN_GRID_SHARE / SIZE)
        if comb is None:
            return None
        combs.append(comb)
    (x0, px, sx), (y0, py, sy) = combs
    x1, y1 = x0 + SIZE * px, y0 + SIZE * py
    corners_view = np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    corners = cv2.perspectiveTransform(corners_view[None], np.linalg.inv(warp))[0]
    return corners, min(sx, sy)


def _line_evidence(view: np.ndarray):
    """|d/dx| and |d/dy| of the view (strongest colour channel), smoothed across the line so the
    two edges of a thin line merge into one ridge."""
    channels = cv2.split(view)
    grad_x = grad_y = None
    for channel in channels:
        gx = cv2.convertScaleAbs(cv2.Sobel(channel, cv2.CV_16S, 1, 0, ksize=3), alpha=0.25)
        gy = cv2.convertScaleAbs(cv2.Sobel(channel, cv2.CV_16S, 0, 1, ksize=3), alpha=0.25)
        grad_x = gx if grad_x is None else cv2.max(grad_x, gx)
        grad_y = gy if grad_y is None else cv2.max(grad_y, gy)
    grad_x = cv2.GaussianBlur(grad_x.astype(np.float32), (0, 0), sigmaX=EVIDENCE_BLUR, sigmaY=0.1)
    grad_y = cv2.GaussianBlur(grad_y.astype(np.float32), (0, 0), sigmaX=0.1, sigmaY=EVIDENCE_BLUR)
    return grad_x, grad_y


def _best_comb(profile: np.ndarray, max_period: float, min_period: float):
    """Offset, period and score of the 16-line comb that best fits the peaks of `profile`.

    Each line's evidence is its peak above the mean of the two neighbouring half-cell points,
    capped so that one very strong edge (a frame, the table's edge) cannot outweigh many grid
    lines. Lines may fall outside the profile (a cut-off board is found, then rejected)."""
    n = len(profile)
    base = cv2.blur(profile.reshape(1, -1).astype(np.float32), (max(3, n // 8), 1),
                    borderType=cv2.BORDER_REFLECT).ravel()
    signal = np.clip(profile - base, 0, None)
    cap = np.percentile(signal, 90) + 1e-6
    signal = np.minimum(signal, cap) / cap
    pad = int(np.ceil(4 * max_period)) + 2
    padded = np.concatenate([np.zeros(pad), signal, np.zeros(LINES * int(max_period) + pad)])
    padded = padded.astype(np.float32)
    best = _search_combs(padded, pad, n, np.geomspace(min_period, max_period, 60))
    for multiple in (3, 2):
        # a comb at a half or third of the true period can fit as well as the true one (the
        # midpoints of cells carry letters and tile edges); prefer the coarser when nearly as good
        if best[1] * multiple <= max_period * 1.05:
            coarser = _search_combs(padded, pad, n, best[1] * multiple * np.linspace(0.97, 1.03, 7))
            if coarser[2] >= COARSER_SHARE * best[2]:
                best = coarser
                break
    offset, period, score = best
    return offset, period, score / LINES


def _search_combs(padded, pad, n, periods):
    """Best (offset, period, score) over `periods` (all offsets of all periods scored at once),
    then refined around the winner. A long profile is first searched at half resolution."""
    if n > COARSE_PROFILE and periods.min() >= 6:
        half = padded[:len(padded) // 2 * 2].reshape(-1, 2).mean(axis=1)
        offset, period, _ = _search_combs(half, pad / 2, n // 2, periods / 2)
        offset, period = 2 * offset + 0.5, 2 * period  # a half-resolution bin spans two
        return _refine_comb(padded, pad, offset, period, (-np.inf, offset, period))
    steps = np.maximum(1.0, periods / 6)
    # up to 3 lines may hang past either end (a cut-off board is found, then rejected)
    counts = np.maximum(1, np.ceil((n - 9 * periods) / steps)).astype(np.intp)
    firsts = np.cumsum(counts) - counts
    index = np.arange(int(counts.sum())) - np.repeat(firsts, counts)
    all_periods = np.repeat(periods, counts)
    offsets = np.repeat(-3 * periods, counts) + index * np.repeat(steps, counts)
    scores = _comb_scores_nearest(padded, pad, all_periods, offsets)
    best = int(np.argmax(scores))
    coarse = (float(scores[best]), float(offsets[best]), float(all_periods[best]))
    return _refine_comb(padded, pad, coarse[1], coarse[2], coarse)


def _refine_comb(padded, pad, offset, period, coarse):
    """(offset, period, score) of the best comb near `offset` and `period`, or of `coarse`
    (score, offset, period) when none nearby scores higher."""
    reach = max(1.0, period / 6)
    fine = np.linspace(period * 0.97, period * 1.03, 13)
    near = np.arange(offset - reach, offset + reach, 0.25)
    fine_periods, fine_offsets = (grid.ravel() for grid in np.meshgrid(fine, near, indexing="ij"))
    scores = _comb_scores(padded, pad, fine_periods, fine_offsets)
    best = int(np.argmax(scores))
    if scores[best] > coarse[0]:
        return float(fine_offsets[best]), float(fine_periods[best]), float(scores[best])
    return coarse[1], coarse[2], coarse[0]


COMB_TAPS = np.concatenate([np.arange(LINES), np.arange(SIZE) + 0.5]).astype(np.float32)
COMB_WEIGHTS = np.concatenate([np.ones(LINES), -np.full(SIZE, LINES / SIZE)]).astype(np.float32)


UPSAMPLE = 4  # the many coarse combs read the profile at the nearest quarter bin: no blending


def _comb_scores_nearest(padded, pad, periods, offsets):
    """_comb_scores, close enough to rank coarse combs and several times faster."""
    fine = np.interp(np.arange(len(padded) * UPSAMPLE) / UPSAMPLE, np.arange(len(padded)),
                     padded).astype(np.float32)
    at = np.float32((offsets + pad) * UPSAMPLE + 0.5)[:, None] + \
        np.float32(periods * UPSAMPLE)[:, None] * COMB_TAPS[None, :]
    index = at.astype(np.int32)
    np.clip(index, 0, len(fine) - 1, out=index)
    return np.take(fine, index) @ COMB_WEIGHTS


def _comb_scores(padded, pad, periods, offsets):
    """Score of each (period, offset) comb: lines count for, half-cell points against."""
    at = (np.float32(offsets + pad)[:, None] + np.float32(periods)[:, None] * COMB_TAPS[None, :])
    # a coarser or refined period can reach past the padding: read zeros there
    base = np.clip(at.astype(np.intp), 0, len(padded) - 2)
    frac = at - base
    values = padded[base]
    values += (padded[base + 1] - values) * frac
    return values @ COMB_WEIGHTS


# --- refinement against the grid lines ----------------------------------------------------------

REFINE_ROUNDS = (0.45, 0.25, 0.15)  # search half-widths (cells) of the refinement rounds
EXTRA_ROUNDS = 2  # more rounds at the last width while the grid still moves ...
SETTLED = 0.05  # ... by more than this many cells at a corner
CLEAN_AGAIN = 0.1  # cells a round must move the grid for the next to find the clean pieces anew
RANSAC_DRAWS = 300  # most line samples are right, so few draws find the consensus
HOPELESS = 0.1  # line quality of a guess and its first snap below which, with no trace of the
# layout either (LAYOUT_MISSING), it is given up (2 000 rendered photos: the same corners found)
LINE_CONTRAST = 2.0  # a line piece must be this many times stronger than the cells beside it
NOISE_FLOOR = 2.0  # grey levels per px; gradient below this is sensor noise


def _refine_location(levels, corners_small, rounds=REFINE_ROUNDS, past_tiles=False,
                     first: _FirstView | None = None):
    """Snap the grid to its lines on the smallest copy whose cells span VIEW_CELL px (or the
    photo). Returns (corners in photo pixels, quality) or None. One top-down view per round serves
    the line evidence and the cell colours (the clean pieces are found anew whenever the grid
    moved: the strips need a close fit); the quality is measured on the last round's view, whose
    grid the last, narrowest round moves by a few hundredths of a cell. A guess that shows
    neither lines nor the layout after its first snap is given up (_hopeless). `first`: the
    guess's first view (_first_view), when already taken."""
    source, factor = _level_for(levels, corners_small, VIEW_CELL)
    corners = _rescale(corners_small, levels[-1][1], factor)
    number, extra, step, clean, best = 0, 0, np.inf, None, 0.0
    while True:
        reach = rounds[number]
        if first is not None:
            view, to_source, evidence = first.view, first.to_source, first.evidence
            contrast, first = first.quality, None
        else:
            view, to_source = _grid_view(source, corners, VIEW_CELL, 1)
            evidence, contrast = _line_evidence(view), None
        snaps = number + extra  # each round so far snapped once
        if snaps < 2 and best < HOPELESS:  # a guess whose lines stand out is not measured again
            best = max(best, _line_contrast(evidence) if contrast is None else contrast)
            if snaps == 1 and _hopeless(levels, corners, factor, best):
                return None
        if step > CLEAN_AGAIN:  # a grid that barely moved keeps its clean pieces
            clean = _clean_pieces(view, past_tiles)
        moved = _snap_to_lines(evidence, to_source, corners, reach, clean)
        if moved is None:
            return None
        step = float(np.abs(moved - corners).max()) / cell_size(corners)
        corners = moved
        last = number == len(rounds) - 1
        # a grid that moved far may still be off by more than the next, narrower reach; a line
        # further off than the reach pulls the fit only part of the way: repeat the round
        if step > (SETTLED if last else reach / 2) and extra < EXTRA_ROUNDS:
            extra += 1
        elif last:
            return _rescale(corners, factor, 1.0), _line_contrast(evidence)
        else:
            number += 1


def _hopeless(levels, corners, factor, quality) -> bool:
    """Whether a guess (corners in the copy `factor` times smaller than the photo) whose lines
    stood out at most `quality` in its first two views is no board: a table's stripes or a
    texture. Its refinement would wander (extra rounds, ~30 ms of a 12 MP photo's read); a faint
    board whose cells show the layout is refined on (dim light)."""
    if quality >= HOPELESS:
        return False
    small, scale = levels[-1]
    return _misfit(small, _rescale(corners, factor, scale)) > LAYOUT_MISSING


def _level_for(levels, corners_small, cell_px):
    """The smallest (copy, factor) of `levels` whose cells span at least `cell_px`."""
    cell_photo = cell_size(corners_small) * levels[-1][1]
    for level, factor in reversed(levels):
        if cell_photo / factor >= cell_px:
            return level, factor
    return levels[0]


def _line_contrast(evidence) -> float:
    """Share of the grid's line pieces (16 lines × 15 cells, both ways) that stand out from the
    middles of the cells beside them in a view of VIEW_CELL px per cell with one cell of margin:
    the fit's quality, near 0 on a random texture."""
    return float(np.mean([_standing_out(grad, 1, np.arange(LINES))
                          for grad in (evidence[0], evidence[1].T)]))


def _standing_out(grad, margin, numbers, reach=0):
    """(segment, line) whether each piece of the vertical lines `numbers` (0 the grid's first)
    stands out from the middles of the cells beside it, in |d/dx| of a view of VIEW_CELL px per
    cell with `margin` cells around the grid; pieces from `reach` cells before the grid's first
    row to `reach` after its last."""
    cell = VIEW_CELL
    band = slice(int(0.2 * cell), int(0.8 * cell))
    count = SIZE + 2 * reach
    rows = grad[(margin - reach) * cell:(margin - reach + count) * cell]
    rows = rows.reshape(count, cell, -1)[:, band].mean(1)
    columns = rows.reshape(count, SIZE + 2 * margin, cell)
    middles = columns[:, :, int(0.3 * cell):int(0.7 * cell)].mean(axis=2)  # (segment, cell)
    at = (margin + numbers) * cell
    near = np.stack([rows[:, a - 2:a + 3].max(axis=1) for a in at], axis=1)  # (segment, line)
    beside = (middles[:, margin + numbers - 1] + middles[:, margin + numbers]) / 2
    return near > LINE_CONTRAST * beside + NOISE_FLOOR


def _shifted_line_counts(levels, corners_small, reach):
    """(dy, dx) line pieces standing out of the grid moved by up to `reach` cells each way."""
    source, factor = _level_for(levels, corners_small, VIEW_CELL)
    corners = _rescale(corners_small, levels[-1][1], factor)
    view, _ = _grid_view(source, corners, VIEW_CELL, reach + 1)
    numbers = np.arange(-reach, LINES + reach)
    grad_x, grad_y = _line_evidence(view)
    counts = []
    for grad in (grad_x, grad_y.T):
        pieces = _standing_out(grad, reach + 1, numbers, reach)  # (segment, line) from -reach
        windows = np.lib.stride_tricks.sliding_window_view(pieces, (SIZE, LINES))
        counts.append(windows.sum(axis=(-2, -1)))  # (segment shift, line shift)
    return counts[0] + counts[1].T


def cell_size(corners: np.ndarray) -> float:
    """Mean side of the grid's cells, in the corners' pixels."""
    sides = [np.linalg.norm(corners[i] - corners[(i + 1) % 4]) for i in range(4)]
    return float(np.mean(sides)) / SIZE


def _grid_view(source: np.ndarray, corners: np.ndarray, cell: int, margin: int):
    """The grid warped top-down with `cell` px per cell and `margin` cells around, and the
    homography from view pixels to source pixels."""
    to_source = grid_homography(corners) @ np.array(
        [[1 / cell, 0, -margin], [0, 1 / cell, -margin], [0, 0, 1]], np.float64)
    side = (SIZE + 2 * margin) * cell
    view = cv2.warpPerspective(source, to_source, (side, side),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE)
    return view, to_source


def _snap_to_lines(evidence, to_source, corners, reach, clean=None):
    """One round on the line evidence of a view (VIEW_CELL px per cell, one cell of margin, and
    `to_source` mapping it back): find each grid line's true position in every cell it borders,
    fit a homography through them (only the `clean` pieces when there are enough); returns the
    new corners or None."""
    cell, margin = VIEW_CELL, 1
    grad_x, grad_y = evidence
    half = int(round(reach * cell))
    offsets_x, strength_x = _line_offsets(grad_x, cell, margin, half)
    offsets_y, strength_y = _line_offsets(grad_y.T, cell, margin, half)
    lines, segments = np.meshgrid(np.arange(LINES), np.arange(SIZE) + 0.5, indexing="ij")
    lines, segments = lines.ravel(), segments.ravel()
    # Samples on vertical lines know only their x, on horizontal lines only their y: snap that
    # coordinate to the line's number, keep the other where the sample was taken.
    found = np.concatenate([np.stack([lines + offsets_x.ravel() / cell, segments], 1),
                            np.stack([segments, lines + offsets_y.ravel() / cell], 1)])
    snapped = np.concatenate([np.stack([lines, segments], 1), np.stack([segments, lines], 1)])
    strengths = np.concatenate([strength_x.ravel(), strength_y.ravel()])
    view_pts = (found + margin) * cell
    image_pts = cv2.perspectiveTransform(view_pts[None].astype(np.float64), to_source)[0]
    strong = strengths > NOISE_FLOOR
    if strong.sum() < 16:
        return None
    used = strong
    if clean is not None and (strong & _flat(clean)).sum() >= MIN_CLEAN:
        used = strong & _flat(clean)
    homography, _ = cv2.findHomography(snapped[used], image_pts[used], cv2.RANSAC,
                                       max(1.0, 0.12 * cell_size(corners)), maxIters=RANSAC_DRAWS)
    if homography is None:
        return None
    square = np.float32([[[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]]])
    return np.float32(cv2.perspectiveTransform(square, homography)[0])


def _line_offsets(grad, cell, margin, half):
    """For each of the 16 vertical lines and 15 cells along it: the sub-pixel offset of the
    strongest evidence within ±half px of where the line should be, and its strength."""
    band = slice(int(0.2 * cell), int(0.8 * cell))
    rows = grad[margin * cell:(margin + SIZE) * cell].reshape(SIZE, cell, -1)[:, band].mean(1)
    starts = (margin + np.arange(LINES)) * cell - half
    columns = starts[:, None] + np.arange(2 * half + 1)
    windows = rows[:, columns].transpose(1, 0, 2)  # (line, segment, offset)
    best = windows.argmax(axis=2)
    inner = np.clip(best, 1, 2 * half - 1)
    take = np.take_along_axis
    left = take(windows, (inner - 1)[..., None], 2)[..., 0]
    mid = take(windows, inner[..., None], 2)[..., 0]
    right = take(windows, (inner + 1)[..., None], 2)[..., 0]
    curve = left - 2 * mid + right
    safe = np.where(curve < 0, curve, -1.0)
    sub = np.where((curve < 0) & (best == inner), 0.5 * (left - right) / safe, 0.0)
    offsets = best + sub - half
    middle = windows.shape[2] // 2  # the upper median: one partition instead of two
    strengths = windows.max(axis=2) - np.partition(windows, middle, axis=2)[..., middle]
    return offsets, strengths


CLEAN_STEP = 18.0  # Lab units a cell may differ from its kind's usual colour and count as empty
STRIP = (2, 3)  # px inside a cell's edges (of VIEW_CELL) the strip runs between
INSET_SHARE = 0.55  # strip this much nearer the plain colour than the square's: printed inset
MIN_CLEAN = 60  # clean line pieces needed to fit on them alone
PLAIN_CELLS = np.array([[a == b == "." for a, b in zip(*rows, strict=True)]
                        for rows in zip(ERUDIT_LAYOUT, SCRABBLE_LAYOUT, strict=True)])


def _clean_pieces(view, past_tiles=False):
    """Masks (line, piece) of the vertical and horizontal line pieces between two empty cells,
    and plain ones when the premium squares are printed inset: the sides of tiles and the edges
    of inset squares lie close to the lines and would pull the fit. (Leaving out the neighbours
    of tiles too leaves too few pieces; squares printed up to the lines mark them well.)
    `view` shows the grid at VIEW_CELL px per cell with one cell of margin."""
    return _pieces_between(_bare_squares(view, past_tiles))


def _bare_squares(view, past_tiles=False):
    """(rows, columns) the squares _clean_pieces counts as empty. With `past_tiles` a kind's
    usual colour is that of its squares off the tiles' colour (_kinds_and_tiles): late in a
    game tiles cover most squares of some kinds, and their median is the tiles' colour."""
    colours, strips = (part[1:-1, 1:-1] for part in _cell_colours(view, VIEW_CELL, 1, strips=True))
    if past_tiles:
        kinds, tiles = _kinds_and_tiles(colours, _cell_texture(view)[1:-1, 1:-1])
    else:  # the fit without the tiles' colour tells the layouts apart well enough
        kinds, tiles = LAYOUT_KINDS[int(np.argmax(_kind_fits(_windows(colours))[:, 0, 0]))], None
    occupied = np.zeros((SIZE, SIZE), bool)
    for mask in kinds:
        members = colours[mask]
        bare = np.ones(len(members), bool) if tiles is None else _distances(members, tiles) > CLEAN_STEP
        usual = _upper_median(members[bare]) if bare.any() else _upper_median(members)
        occupied[mask] = ~bare | (_distances(members, usual) > CLEAN_STEP)
    usable = ~occupied
    premium = ~PLAIN_CELLS & usable
    if premium.any() and (PLAIN_CELLS & usable).any():
        # inset squares: the strip just inside their cells shows the plain colour, not theirs
        plain = _upper_median(colours[PLAIN_CELLS & usable])
        to_square = _upper_median(_distances(strips[premium], colours[premium]))
        to_plain = _upper_median(_distances(strips[premium], plain))
        if to_square > INSET_SHARE * (to_square + to_plain):
            usable &= PLAIN_CELLS
    return usable


def _pieces_between(usable):
    """Masks (line, piece) of the vertical and horizontal line pieces between two `usable`
    squares (beyond the grid: the margin, usable)."""
    padded = np.pad(usable, 1, constant_values=True)
    vertical = (padded[1:-1, :-1] & padded[1:-1, 1:]).T
    horizontal = padded[:-1, 1:-1] & padded[1:, 1:-1]
    return vertical, horizontal


def _flat(pieces):
    """The (vertical, horizontal) masks of line pieces as one array, as _snap_to_lines lists them."""
    return np.concatenate([part.ravel() for part in pieces])


def _more_textured(texture, squares, others) -> bool:
    """Whether the plain `squares` are more textured than the plain `others` (median grey-level
    spread): letters are printed on tiles, never on plain squares."""
    squares, others = squares & PLAIN_CELLS, others & PLAIN_CELLS
    return bool(squares.any() and others.any()
                and np.median(texture[squares]) > np.median(texture[others]))


def _kinds_and_tiles(colours, texture):
    """The better-fitting layout's kinds for a grid's cell colours (rows, columns, channel), and
    the tiles' colour (or None): one of the commonest colours that lets the layout explain the
    cells clearly better (as _layout_fits decides) and whose plain squares are the more textured."""
    flat = _windows(colours)
    fits = _kind_fits(flat)[:, 0, 0]
    best, tiles = fits.max(), None
    for colour in _common_colours(colours):
        tiled = _kind_fits(flat, _distances_to(flat, colour))[:, 0, 0]
        near = _distances(colours, colour) <= CLEAN_STEP
        if tiled.max() - TILES_PENALTY > best and _more_textured(texture, near, ~near):
            best, fits, tiles = tiled.max() - TILES_PENALTY, tiled, colour
    return LAYOUT_KINDS[int(np.argmax(fits))], tiles


def _cell_texture(view):
    """Grey-level spread of the middle half of each cell of a view of VIEW_CELL px per cell."""
    grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY).astype(np.float32)
    count = grey.shape[0] // VIEW_CELL
    cells = grey[:count * VIEW_CELL, :count * VIEW_CELL].reshape(count, VIEW_CELL, count, VIEW_CELL)
    middle = slice(VIEW_CELL // 4, VIEW_CELL - VIEW_CELL // 4)
    return cells[:, middle, :, middle].std(axis=(1, 3))


def _upper_median(values: np.ndarray):
    """Median along the first axis (the upper one of an even count: a single partition)."""
    middle = len(values) // 2
    return np.partition(values, middle, axis=0)[middle]


def _distances(colours: np.ndarray, others) -> np.ndarray:
    diff = colours - others
    return np.sqrt(np.einsum("...c,...c->...", diff, diff))


# --- which of the nearby grids matches the premium layout ---------------------------------------

LAYOUT_CELL = 12  # px per cell when comparing cell colours
MAX_SHIFT = 3  # cells the comb may be off (a printed margin or frame taken for a row of cells)
SHIFT_GAIN = 0.05  # layout fit a shifted grid must gain to replace the fitted one
LIGHTNESS_WEIGHT = 0.5  # shading moves lightness more than hue
COLOUR_CAP = 40.0  # Lab units; a tile or a hand counts no more than this against a fit
EXPOSED = 160  # levels the bright parts of a view (of its pixels' brightest channel) reach
# unless the photo was under-exposed (a dim room, a webcam)
TILES_PENALTY = 0.05  # fit that letting cells show the tiles' colour (one more colour) must
# gain to count: else a grid a few cells off gains by taking the plain squares' colour for it
LAYOUT_KINDS = [
    [np.array([[ch == kind for ch in row] for row in layout]) for kind in sorted(set("".join(layout)))]
    for layout in (ERUDIT_LAYOUT, SCRABBLE_LAYOUT)
]
LAYOUT_CELLS = [[np.flatnonzero(mask) for mask in kinds] for kinds in LAYOUT_KINDS]


def _layout_shift(image, corners):
    """The printed premium squares sit in the same cells on every board (both known layouts);
    a grid off by a row or column (a printed margin or a row of tiles taken for cells) puts
    them in the wrong cells. Return the (dx, dy) in cells of the nearby grid whose cell colours
    the layout explains best, and that grid's misfit (1 - share of colour variance explained)."""
    fits = _shift_fits(image, corners)
    dy, dx = np.unravel_index(int(np.argmax(fits)), fits.shape)
    if fits[dy, dx] > fits[MAX_SHIFT, MAX_SHIFT] + SHIFT_GAIN:
        return (int(dx) - MAX_SHIFT, int(dy) - MAX_SHIFT), 1 - float(fits[dy, dx])
    return (0, 0), 1 - float(fits[MAX_SHIFT, MAX_SHIFT])


def _shift_fits(image, corners):
    """(dy, dx) layout fit of each grid up to MAX_SHIFT cells off `corners`, better layout's."""
    view, _ = _grid_view(image, corners, LAYOUT_CELL, MAX_SHIFT)
    return _layout_fits(_cell_colours(view, LAYOUT_CELL, MAX_SHIFT), every_colour=True).max(axis=0)


WINDOWS_AT_ONCE = 500  # windows _layout_fits measures together: _best_scaled's 3 969 at once took
# 1.7× as long (each fresh array of ~10 MB cost its pages anew)
SCALES = 1.25 ** np.linspace(-1, 1, 9)  # sizes, against the guess, of the grids tried per axis
FINE_SCALES = (1.25 ** 0.125, 1.25 ** 0.0625)  # steps of the search around the best of those
SCALE_CELL = 8  # px per guessed cell of the view the scaled grids are read from
SCALE_MARGIN = 6  # guessed cells around it: room for the largest grid shifted by MAX_SHIFT


def _layout_scaled(image, corners):
    """The grid, of the same perspective as `corners` but up to a quarter smaller or larger
    along each axis and shifted by up to MAX_SHIFT cells, whose cell colours the premium layout
    explains best. The comb can miss the period of faint lines (a cream board seen steeply),
    while the vanishing points that set the perspective hold."""
    view, _ = _grid_view(image, corners, SCALE_CELL, SCALE_MARGIN)
    view = cv2.blur(view, (SCALE_CELL // 2 + 1,) * 2)  # ≈ the mean of a cell's middle half
    sizes = np.stack(np.meshgrid(SCALES, SCALES), axis=-1).reshape(-1, 2)
    size, shift = _best_scaled(view, sizes)
    for step in FINE_SCALES:
        size, shift = _best_scaled(view, size * step ** np.stack(
            np.meshgrid([-1, 0, 1], [-1, 0, 1]), axis=-1).reshape(-1, 2))
    low = SIZE / 2 + (np.array(shift) - SIZE / 2) * size
    return _rectangle(corners, low, low + SIZE * size)


def _best_scaled(view, sizes):
    """Of grids `sizes` (x, y) times the guessed one, read from the cell centres of the blurred
    view of _layout_scaled: the size and (dx, dy) shift the premium layout fits best."""
    steps = np.arange(-MAX_SHIFT, SIZE + MAX_SHIFT) + 0.5 - SIZE / 2
    centre = (SCALE_MARGIN + SIZE / 2) * SCALE_CELL - 0.5
    xs, ys = (centre + np.outer(sizes[:, axis], steps) * SCALE_CELL for axis in (0, 1))
    count = len(steps)  # each grid's cells are one count × count block of rows of the maps
    map_x = np.float32(np.repeat(xs[:, None, :], count, axis=1).reshape(-1, count))
    map_y = np.float32(np.repeat(ys[:, :, None], count, axis=2).reshape(-1, count))
    colours = _weighted_lab(np.float32(cv2.remap(view, map_x, map_y, cv2.INTER_LINEAR)))
    fits = _layout_fits(colours.reshape(len(sizes), count, count, 3)).max(axis=0)
    index, dy, dx = np.unravel_index(int(np.argmax(fits)), fits.shape)
    return sizes[index], (int(dx) - MAX_SHIFT, int(dy) - MAX_SHIFT)


def _cell_colours(view, cell, margin, strips=False, inset=None):
    """Lab colour (lightness weighted) of the mean of the middle half of each cell (or of all
    but `inset` px at each side) of a top-down view with `cell` px per cell and `margin` cells
    around the grid; with `strips` also of a strip STRIP px inside each cell's edges. Box sums come from one integral image, and only
    the means are converted to Lab (a cell's middle is near uniform: the Lab of its mean is the
    mean of its Lab, and converting a few hundred colours costs nothing)."""
    gain = _exposure_gain(view)
    if gain > 1.0:
        view = cv2.convertScaleAbs(view, alpha=gain)
    sums = cv2.integral(view, sdepth=cv2.CV_32S)  # ≤ 1024² px of 255: no overflow
    starts = np.arange(SIZE + 2 * margin) * cell

    def box_means(inset):
        low, high = starts + inset, starts + cell - inset
        total = (sums[np.ix_(high, high)] - sums[np.ix_(low, high)] - sums[np.ix_(high, low)]
                 + sums[np.ix_(low, low)])
        return total, (cell - 2 * inset) ** 2

    middle, area = box_means(cell // 4 if inset is None else inset)
    middles = _weighted_lab(middle / area)
    if not strips:
        return middles
    (outer, outer_area), (inner, inner_area) = box_means(STRIP[0]), box_means(STRIP[1])
    return middles, _weighted_lab((outer - inner) / (outer_area - inner_area))


def _exposure_gain(view: np.ndarray) -> float:
    """How much brighter an under-exposed view's colours are measured (1 for any other view):
    in a dim photo every colour difference shrinks, while colours are judged by fixed Lab
    distances (CLEAN_STEP, COLOUR_CAP)."""
    bright = _percentiles(view[::4, ::4].max(axis=2), [95])[0]
    return max(1.0, EXPOSED / max(bright, 1.0))


def _weighted_lab(bgr: np.ndarray) -> np.ndarray:
    lab = cv2.cvtColor(np.float32(bgr / 255), cv2.COLOR_BGR2LAB)
    return lab * np.float32([LIGHTNESS_WEIGHT, 1, 1])


def _layout_fits(colours, every_colour=False):
    """(layout, ..., dy, dx) share of the colour spread of every 15×15 window of `colours`
    (..., rows, columns, channel) that the layout's kinds explain (1 - within / total), each
    cell's distance capped so that a few tiles count like any other misfit. On a late-game
    board tiles cover most cells of some kinds and set their median colour, so the fit is also
    measured letting any cell show the tiles' colour (one colour per kind besides it, against
    one colour besides it): the better of the two counts (the second less TILES_PENALTY). With
    `every_colour` each window takes whichever of the two commonest colours fits it best."""
    flat = _windows(colours)
    common = _common_colours(colours)
    if every_colour and flat.shape[-4:-2] != (1, 1):
        # a grid a cell off can mistake the commonest colour for the tiles': each window then
        # takes either, as its own grid would (else the window of the board is judged wrongly)
        return _in_parts(partial(_fits_either_way, shared=common), flat)
    # the tiles' colour is one of the guessed grid's two commonest (the other most often the
    # plain squares'): the one that lets the layout explain the middle window best. One call
    # fits the middle window all three ways (a colour infinitely far from every cell: the plain
    # fit), as on a single window the calls cost more than the arithmetic.
    middle = flat[..., (flat.shape[-4] - 1) // 2, (flat.shape[-3] - 1) // 2, :, :]
    apart = np.full(middle.shape[:-2] + middle.shape[-1:], np.inf, np.float32)
    shared = np.stack([apart] + [_distances_to(middle, colour) for colour in common])
    middle_fits = _kind_fits(np.broadcast_to(middle, shared.shape[:1] + middle.shape), shared)
    best = 1 + int(np.argmax([middle_fits[:, k].max() for k in range(1, len(shared))]))
    if flat.shape[-4:-2] == (1, 1):  # one window: that was all
        shape = middle_fits.shape[:1] + flat.shape[:-2]
        fits, tiled = (middle_fits[:, k].reshape(shape) for k in (0, best))
        return np.maximum(fits, tiled - TILES_PENALTY)
    return _in_parts(partial(_fits_either_way, shared=[common[best - 1]]), flat)


def _fits_either_way(flat, shared):
    """(layout, ...) fit of windows (..., channel, cell): plain, or letting any cell show one
    of the `shared` colours (less TILES_PENALTY), whichever is better."""
    tiled = np.max([_kind_fits(flat, _distances_to(flat, colour)) for colour in shared], axis=0)
    return np.maximum(_kind_fits(flat), tiled - TILES_PENALTY)


def _in_parts(fit, flat):
    """fit(flat) (layout, ...) of many windows (..., channel, cell), computed on a few parts of
    the first axis at a time (WINDOWS_AT_ONCE windows): the same values, in arrays small
    enough for the cache and the allocator's heap."""
    step = max(1, WINDOWS_AT_ONCE // int(np.prod(flat.shape[1:-2])))
    if len(flat) <= step:
        return fit(flat)
    return np.concatenate([fit(flat[i:i + step]) for i in range(0, len(flat), step)], axis=1)


def _windows(colours):
    """(..., dy, dx, channel, cell): the colours of every 15×15 window of `colours`."""
    windows = np.lib.stride_tricks.sliding_window_view(colours, (SIZE, SIZE), axis=(-3, -2))
    return windows.reshape(*windows.shape[:-2], SIZE * SIZE)


def _distances_to(values, colour):
    """(..., cell) distances of colours (..., channel, cell) from one colour."""
    return _distances(np.moveaxis(values, -1, -2), colour)


def _kind_fits(values, to_shared=None):
    """(layout, ...) share of the spread of colours (..., channel, cell) about their median
    that one median per kind of the layout explains (with `to_shared`, the distance of each
    colour from a shared one, as _grouped_spread measures spread)."""
    total = _grouped_spread(values, WHOLE_GRID, to_shared)[..., 0]
    return np.array([1 - _grouped_spread(values, kinds, to_shared).sum(axis=-1) / (total + 1e-6)
                     for kinds in LAYOUT_GROUPS])


KEY_STEP = np.float32(1e5)  # Lab units between the sort keys of two groups of cells
FAR_OFF = np.float32(1e4)  # Lab units: stands for ± infinity in a median
FAR_KEYS = np.array([0, -FAR_OFF, FAR_OFF], np.float32)  # key shift: kept, far below, far above


def _grouping(groups):
    """(order or None, sizes, starts, key offsets, group of each place) that put the cells of
    each group in turn."""
    sizes = np.array([len(cells) for cells in groups])
    offsets = np.repeat(np.arange(len(groups), dtype=np.float32) * KEY_STEP, sizes)
    owners = np.repeat(np.arange(len(groups)), sizes)
    order = np.concatenate(groups)
    if np.array_equal(order, np.arange(len(order))):
        order = None  # the cells as they come: no copy
    return order, sizes, np.cumsum(sizes) - sizes, offsets, owners


LAYOUT_GROUPS = [_grouping(cells) for cells in LAYOUT_CELLS]
WHOLE_GRID = _grouping([np.arange(SIZE * SIZE)])


def _grouped_spread(values, grouping, to_shared=None):
    """(..., group) sums of each colour's distance (colours (..., channel, cell)) from the median
    (the upper one) of its group, capped at COLOUR_CAP. With `to_shared`, the distance of each
    colour from a shared one, the median is of the colours off it (further than CLEAN_STEP)
    and each distance is from the nearer of the two. One sort serves all groups: their sort
    keys lie KEY_STEP apart. (np.take and one shift per cell, not fancy indexing and np.where
    over the channels: several times faster on the many windows of _best_scaled.)"""
    order, sizes, starts, offsets, owners = grouping
    if order is not None:
        values = np.take(values, order, axis=-1)
    shift = offsets
    if to_shared is not None:
        if order is not None:
            to_shared = np.take(to_shared, order, axis=-1)
        near = to_shared <= CLEAN_STEP
        # near colours go alternately far above and far below: the median is that of the others
        counts = np.cumsum(near, axis=-1, dtype=np.int16)
        before = np.take(counts[..., starts] - near[..., starts], owners, axis=-1)
        shift = (offsets + FAR_KEYS[near * (1 + ((counts - before) & 1))])[..., None, :]
    keys = values + shift
    keys.sort(axis=-1)
    middles = starts + sizes // 2
    diff = values - np.take(keys[..., middles] - offsets[middles], owners, axis=-1)
    distance = np.sqrt(np.einsum("...cn,...cn->...n", diff, diff))
    if to_shared is not None:
        distance = np.minimum(distance, to_shared)
    return np.add.reduceat(np.minimum(distance, COLOUR_CAP), starts, axis=-1)


MODE_SAMPLES = 100  # cells the commonest colours are looked for among (pairwise distances)


def _common_colours(colours, count=2) -> list[np.ndarray]:
    """Median colours of the `count` largest groups of cells within CLEAN_STEP of one cell,
    taken in turn, among the middle 15×15 cells of `colours` (..., rows, columns, channel)."""
    rows, columns = colours.shape[-3:-1]
    top, left = (rows - SIZE) // 2, (columns - SIZE) // 2
    points = colours[..., top:top + SIZE, left:left + SIZE, :].reshape(-1, colours.shape[-1])
    if len(points) > MODE_SAMPLES:
        points = points[np.linspace(0, len(points) - 1, MODE_SAMPLES).astype(int)]
    near = _distances(points[:, None], points[None]) <= CLEAN_STEP
    free = np.ones(len(points), bool)
    found = []
    for _ in range(count):
        support = (near & free).sum(axis=1) * free
        if support.max() == 0:
            break
        members = near[int(np.argmax(support))] & free
        found.append(np.median(points[members], axis=0))
        free &= ~members
    return found


POLISH_BELOW = 0.5  # line quality below which the colour polish has the last word
POLISH_INSET = 0  # px; the polish compares whole cells: their means change at once when moved
POLISH_STEPS = (0.2, 0.1, 0.05)  # cells a corner is moved by in the colour polish, coarse to fine
POLISH_SWEEPS = 2  # sweeps over the corners per step
POLISH_GAIN = 0.03  # misfit the polish must take off for its grid to be kept


def _polish_by_layout(levels, corners):
    """Move each corner in turn, in shrinking steps, to where the premium layout explains the
    cell colours best: for a grid whose lines are too faint or blurred to snap to (the layout
    fit drops as soon as cells slide onto their neighbours). A grid the layout fits barely
    better once moved stays where it was: the fit is flat there (a blurred board seen steeply)
    and the line fit knows better."""
    source, factor = _level_for(levels, _rescale(corners, 1.0, levels[-1][1]), LAYOUT_CELL)
    points = _rescale(corners, 1.0, factor)
    best = start = _misfit(source, points, POLISH_INSET)
    first = points
    cell = cell_size(points)
    for step in POLISH_STEPS:
        for _ in range(POLISH_SWEEPS):
            moved = False
            for index in np.ndindex(4, 2):
                for sign in (-1, 1):
                    trial = points.copy()
                    trial[index] += sign * step * cell
                    misfit = _misfit(source, trial, POLISH_INSET)
                    if misfit < best:
                        best, points, moved = misfit, trial, True
            if not moved:
                break
    return _rescale(points if best < start - POLISH_GAIN else first, factor, 1.0)


def _misfit(image, corners, inset=None, tiles=True) -> float:
    """1 - share of the grid's cell colour spread the better-fitting premium layout explains
    (as _layout_shift measures it, or over cells less `inset` px of LAYOUT_CELL each side;
    without `tiles`, one colour per kind only)."""
    view, _ = _grid_view(image, corners, LAYOUT_CELL, 0)
    colours = _cell_colours(view, LAYOUT_CELL, 0, inset=inset)
    return 1 - float((_layout_fits(colours) if tiles else _kind_fits(_windows(colours))).max())


def _shifted(corners, shift):
    return _rectangle(corners, np.array(shift), np.array(shift) + SIZE)


def _rectangle(corners, low, high):
    """Corners (in `corners`' pixels) of the rectangle from `low` to `high` (x, y) in cells of
    the grid `corners`: the grid moved, scaled or stretched along its own lines."""
    square = np.float32([[[low[0], low[1]], [high[0], low[1]], [high[0], high[1]], [low[0], high[1]]]])
    return cv2.perspectiveTransform(square, grid_homography(corners))[0]


# --- final checks -------------------------------------------------------------------------------


def _cut_off(levels, corners) -> bool:
    """Whether a grid (corners in photo pixels) reaches past the photo's edge by more than
    CUT_OFF_TOLERANCE cells."""
    height, width = levels[0][0].shape[:2]
    slack = CUT_OFF_TOLERANCE * cell_size(corners)
    outside = (corners[:, 0] < -slack) | (corners[:, 0] > width - 1 + slack) | \
        (corners[:, 1] < -slack) | (corners[:, 1] > height - 1 + slack)
    return bool(outside.any())


def _checked_location(levels, corners, quality) -> Location:
    corners = order_corners(corners)
    cell = cell_size(corners)
    if _cut_off(levels, corners):
        raise PhotoError("board cut off at the photo's edge")
    location = Location(corners=np.float32(corners), cell_px=cell, quality=quality)
    smallest = _smallest_cell(corners)
    if smallest < MIN_CELL_PX * (1 - SIDE_ERROR):
        raise IllegibleBoard(f"board too small to read (cells of {smallest:.0f} px)", location)
    # a shrunk copy shows edge widths as well once its cells are large enough, and is faster
    source, factor = _level_for(levels, _rescale(corners, 1.0, levels[-1][1]), EDGE_VIEW_CELL)
    width_cells = _edge_width(source, _rescale(corners, 1.0, factor))
    if width_cells > MAX_EDGE_WIDTH:
        raise IllegibleBoard("board too blurred", location)
    return location


def _smallest_cell(corners: np.ndarray) -> float:
    sides = [np.linalg.norm(corners[i] - corners[(i + 1) % 4]) for i in range(4)]
    return float(min(sides)) / SIZE


def _edge_width(image, corners) -> float:
    """How wide (in cells) the board's sharpest edges are: its contrast over its steepest
    gradient. A sharp photo gives ~0.1 cell; blur of σ cells widens edges to about 2.5σ."""
    cell = int(max(8, min(16, cell_size(corners))))  # 16 px per cell resolve 0.1-cell edges
    view, _ = _grid_view(image, corners, cell, 0)
    grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grad = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3),
                         cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)) / 8
    steepest = _percentiles(grad, [99])[0]
    dark, light = _percentiles(grey, [3, 97])
    return (light - dark) / (steepest + 1e-6) / cell


def _percentiles(values: np.ndarray, shares) -> list[float]:
    """Nearest-rank percentiles: one partition, cheaper than np.percentile's interpolation."""
    flat = values.ravel()
    ranks = [min(len(flat) - 1, int(share / 100 * len(flat))) for share in shares]
    ordered = np.partition(flat, ranks)
    return [float(ordered[rank]) for rank in ranks]
