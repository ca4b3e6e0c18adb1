"""Refinement: the grid snapped onto its own lines (a homography through where each line
really lies, fitted on the line pieces between empty cells), and how many of its line pieces
stand out (the fit's quality)."""

from dataclasses import dataclass

import cv2
import numpy as np

from engine.ruleset import SIZE
from vision.locate.grid import LINES, cell_size, grid_view, level_for, rescale, shifted
from vision.locate.lattice import line_evidence
from vision.locate.layout import (
    LAYOUT_KINDS,
    PLAIN_CELLS,
    cell_colours,
    common_colours,
    distances,
    distances_to,
    grid_windows,
    kind_fits,
    layout_misfit,
    layout_shift,
    upper_median,
)
from vision.locate.params import LocateParams


@dataclass
class Snapped:
    """A grid snapped onto its lines: its corners in photo pixels and its quality (the share of
    its line pieces that stand out)."""

    corners: np.ndarray
    quality: float


def refined_past_tiles(p: LocateParams, levels, snapped: Snapped) -> Snapped:
    """`snapped` refined once more where tiles cover most squares of some kinds: the
    line pieces the search took for clean ones are then those between tiles, whose sides pull
    the fit (tall tiles seen steeply). Kept only within stayed cells of the search's grid: its
    place is settled, this is a polish (the layout cannot tell grids a few cells off apart so
    late in a game)."""
    corners = snapped.corners
    corners_small = rescale(corners, 1.0, levels[-1].factor)
    source, factor = level_for(levels, corners_small, p.view_cell)
    view, _ = grid_view(source, rescale(corners, 1.0, factor), p.view_cell, 1)
    usable = _bare_squares(p, view)
    if not _more_textured(_cell_texture(p, view)[1:-1, 1:-1], usable, ~usable):
        return snapped  # the squares taken for bare are the smoother: they are bare
    usual, bare = (_flat(_pieces_between(squares))
                   for squares in (usable, _bare_squares(p, view, past_tiles=True)))
    if (usual & bare).sum() >= p.inverted_share * usual.sum():
        return snapped
    refined = refine_location(p, levels, corners_small, past_tiles=True)
    if refined is None or np.abs(refined.corners - corners).max() > p.stayed * cell_size(corners):
        return snapped
    return refined


@dataclass
class FirstView:
    """A guess moved onto the grid the premium layout fits best nearby, and its first view:
    the refinement's first round, taken once to judge the guess and then refined on."""

    corners_small: np.ndarray
    view: np.ndarray
    to_source: np.ndarray
    evidence: tuple
    quality: float  # share of its line pieces that stand out


def first_view(p: LocateParams, levels, corners_small) -> FirstView:
    """A guess (corners on the smallest copy) and the refinement's first view of it."""
    # A first guess a row off would be bent by the refinement (one edge snaps to the frame):
    # move it onto the best-fitting grid first, then refine, then check again.
    small, scale = levels[-1]
    shift, _ = layout_shift(p, small, corners_small)
    if shift != (0, 0):
        corners_small = shifted(corners_small, shift)
    source, factor = level_for(levels, corners_small, p.view_cell)
    view, to_source = grid_view(source, rescale(corners_small, scale, factor), p.view_cell, 1)
    evidence = line_evidence(p, view)
    return FirstView(corners_small, view, to_source, evidence, _line_contrast(p, evidence))


def refine_location(p: LocateParams, levels, corners_small, rounds=None, past_tiles=False,
                     first: FirstView | None = None):
    """Snap the grid to its lines on the smallest copy whose cells span view_cell px (or the
    photo). Returns the Snapped grid (corners in photo pixels) or None. One top-down view per
    round serves the line evidence and the cell colours (the clean pieces are found anew
    whenever the grid moved: the strips need a close fit); the quality is measured on the last
    round's view, whose grid the last, narrowest round moves by a few hundredths of a cell. A
    guess that shows neither lines nor the layout after its first snap is given up (_hopeless).
    `first`: the guess's first view (first_view), when already taken."""
    rounds = p.refine_rounds if rounds is None else rounds
    source, factor = level_for(levels, corners_small, p.view_cell)
    corners = rescale(corners_small, levels[-1].factor, factor)
    number, extra, step, clean, best = 0, 0, np.inf, None, 0.0
    while True:
        reach = rounds[number]
        if first is not None:
            view, to_source, evidence = first.view, first.to_source, first.evidence
            contrast, first = first.quality, None
        else:
            view, to_source = grid_view(source, corners, p.view_cell, 1)
            evidence, contrast = line_evidence(p, view), None
        snaps = number + extra  # each round so far snapped once
        if snaps < 2 and best < p.hopeless:  # a guess whose lines stand out is not measured again
            best = max(best, _line_contrast(p, evidence) if contrast is None else contrast)
            if snaps == 1 and _hopeless(p, levels, corners, factor, best):
                return None
        if step > p.clean_again:  # a grid that barely moved keeps its clean pieces
            clean = _clean_pieces(p, view, past_tiles)
        moved = _snap_to_lines(p, evidence, to_source, corners, reach, clean)
        if moved is None:
            return None
        step = float(np.abs(moved - corners).max()) / cell_size(corners)
        corners = moved
        last = number == len(rounds) - 1
        # a grid that moved far may still be off by more than the next, narrower reach; a line
        # further off than the reach pulls the fit only part of the way: repeat the round
        if step > (p.settled if last else reach / 2) and extra < p.extra_rounds:
            extra += 1
        elif last:
            return Snapped(rescale(corners, factor, 1.0), _line_contrast(p, evidence))
        else:
            number += 1


def _hopeless(p: LocateParams, levels, corners, factor, quality) -> bool:
    """Whether a guess (corners in the copy `factor` times smaller than the photo) whose lines
    stood out at most `quality` in its first two views is no board: a table's stripes or a
    texture. Its refinement would wander (extra rounds, ~30 ms of a 12 MP photo's read); a faint
    board whose cells show the layout is refined on (dim light)."""
    if quality >= p.hopeless:
        return False
    small, scale = levels[-1]
    return layout_misfit(p, small, rescale(corners, factor, scale)) > p.layout_missing


def _line_contrast(p: LocateParams, evidence) -> float:
    """Share of the grid's line pieces (16 lines × 15 cells, both ways) that stand out from the
    middles of the cells beside them in a view of view_cell px per cell with one cell of margin:
    the fit's quality, near 0 on a random texture."""
    return float(np.mean([_standing_out(p, grad, 1, np.arange(LINES))
                          for grad in (evidence[0], evidence[1].T)]))


def _standing_out(p: LocateParams, grad, margin, numbers, reach=0):
    """(segment, line) whether each piece of the vertical lines `numbers` (0 the grid's first)
    stands out from the middles of the cells beside it, in |d/dx| of a view of view_cell px per
    cell with `margin` cells around the grid; pieces from `reach` cells before the grid's first
    row to `reach` after its last."""
    cell = p.view_cell
    band = slice(int(0.2 * cell), int(0.8 * cell))
    count = SIZE + 2 * reach
    rows = grad[(margin - reach) * cell:(margin - reach + count) * cell]
    rows = rows.reshape(count, cell, -1)[:, band].mean(1)
    columns = rows.reshape(count, SIZE + 2 * margin, cell)
    middles = columns[:, :, int(0.3 * cell):int(0.7 * cell)].mean(axis=2)  # (segment, cell)
    at = (margin + numbers) * cell
    near = np.stack([rows[:, a - 2:a + 3].max(axis=1) for a in at], axis=1)  # (segment, line)
    beside = (middles[:, margin + numbers - 1] + middles[:, margin + numbers]) / 2
    return near > p.line_contrast * beside + p.noise_floor


def shifted_line_counts(p: LocateParams, levels, corners_small, reach):
    """(dy, dx) line pieces standing out of the grid moved by up to `reach` cells each way."""
    source, factor = level_for(levels, corners_small, p.view_cell)
    corners = rescale(corners_small, levels[-1].factor, factor)
    view, _ = grid_view(source, corners, p.view_cell, reach + 1)
    numbers = np.arange(-reach, LINES + reach)
    grad_x, grad_y = line_evidence(p, view)
    counts = []
    for grad in (grad_x, grad_y.T):
        pieces = _standing_out(p, grad, reach + 1, numbers, reach)  # (segment, line) from -reach
        windows = np.lib.stride_tricks.sliding_window_view(pieces, (SIZE, LINES))
        counts.append(windows.sum(axis=(-2, -1)))  # (segment shift, line shift)
    return counts[0] + counts[1].T


def _snap_to_lines(p: LocateParams, evidence, to_source, corners, reach, clean=None):
    """One round on the line evidence of a view (view_cell px per cell, one cell of margin, and
    `to_source` mapping it back): find each grid line's true position in every cell it borders,
    fit a homography through them (only the `clean` pieces when there are enough); returns the
    new corners or None."""
    cell, margin = p.view_cell, 1
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
    strong = strengths > p.noise_floor
    if strong.sum() < 16:
        return None
    used = strong
    if clean is not None and (strong & _flat(clean)).sum() >= p.min_clean:
        used = strong & _flat(clean)
    homography, _ = cv2.findHomography(snapped[used], image_pts[used], cv2.RANSAC,
                                       max(1.0, 0.12 * cell_size(corners)), maxIters=p.ransac_draws)
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


def _clean_pieces(p: LocateParams, view, past_tiles=False):
    """Masks (line, piece) of the vertical and horizontal line pieces between two empty cells,
    and plain ones when the premium squares are printed inset: the sides of tiles and the edges
    of inset squares lie close to the lines and would pull the fit. (Leaving out the neighbours
    of tiles too leaves too few pieces; squares printed up to the lines mark them well.)
    `view` shows the grid at view_cell px per cell with one cell of margin."""
    return _pieces_between(_bare_squares(p, view, past_tiles))


def _bare_squares(p: LocateParams, view, past_tiles=False):
    """(rows, columns) the squares _clean_pieces counts as empty. With `past_tiles` a kind's
    usual colour is that of its squares off the tiles' colour (_kinds_and_tiles): late in a
    game tiles cover most squares of some kinds, and their median is the tiles' colour."""
    colours, strips = (part[1:-1, 1:-1]
                       for part in cell_colours(p, view, p.view_cell, 1, strips=True))
    if past_tiles:
        kinds, tiles = _kinds_and_tiles(p, colours, _cell_texture(p, view)[1:-1, 1:-1])
    else:  # the fit without the tiles' colour tells the layouts apart well enough
        fits = kind_fits(p, grid_windows(colours))[:, 0, 0]
        kinds, tiles = LAYOUT_KINDS[int(np.argmax(fits))], None
    occupied = np.zeros((SIZE, SIZE), bool)
    for mask in kinds:
        members = colours[mask]
        bare = (np.ones(len(members), bool) if tiles is None
                else distances(members, tiles) > p.clean_step)
        usual = upper_median(members[bare]) if bare.any() else upper_median(members)
        occupied[mask] = ~bare | (distances(members, usual) > p.clean_step)
    usable = ~occupied
    premium = ~PLAIN_CELLS & usable
    if premium.any() and (PLAIN_CELLS & usable).any():
        # inset squares: the strip just inside their cells shows the plain colour, not theirs
        plain = upper_median(colours[PLAIN_CELLS & usable])
        to_square = upper_median(distances(strips[premium], colours[premium]))
        to_plain = upper_median(distances(strips[premium], plain))
        if to_square > p.inset_share * (to_square + to_plain):
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
    """The (vertical, horizontal) masks of line pieces as one array, as _snap_to_lines lists
    them."""
    return np.concatenate([part.ravel() for part in pieces])


def _more_textured(texture, squares, others) -> bool:
    """Whether the plain `squares` are more textured than the plain `others` (median grey-level
    spread): letters are printed on tiles, never on plain squares."""
    squares, others = squares & PLAIN_CELLS, others & PLAIN_CELLS
    return bool(squares.any() and others.any()
                and np.median(texture[squares]) > np.median(texture[others]))


def _kinds_and_tiles(p: LocateParams, colours, texture):
    """The better-fitting layout's kinds for a grid's cell colours (rows, columns, channel), and
    the tiles' colour (or None): one of the commonest colours that lets the layout explain the
    cells clearly better (as _layout_fits decides) and whose plain squares are the more textured."""
    flat = grid_windows(colours)
    fits = kind_fits(p, flat)[:, 0, 0]
    best, tiles = fits.max(), None
    for colour in common_colours(p, colours):
        tiled = kind_fits(p, flat, distances_to(flat, colour))[:, 0, 0]
        near = distances(colours, colour) <= p.clean_step
        if tiled.max() - p.tiles_penalty > best and _more_textured(texture, near, ~near):
            best, fits, tiles = tiled.max() - p.tiles_penalty, tiled, colour
    return LAYOUT_KINDS[int(np.argmax(fits))], tiles


def _cell_texture(p: LocateParams, view):
    """Grey-level spread of the middle half of each cell of a view of view_cell px per cell."""
    grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY).astype(np.float32)
    count = grey.shape[0] // p.view_cell
    cells = grey[:count * p.view_cell, :count * p.view_cell].reshape(count, p.view_cell, count,
                                                                      p.view_cell)
    middle = slice(p.view_cell // 4, p.view_cell - p.view_cell // 4)
    return cells[:, middle, :, middle].std(axis=(1, 3))
