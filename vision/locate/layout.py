"""How well a grid's cell colours fit a premium layout (Эрудит or English): the nearby grid,
moved by whole cells or scaled, that the layout explains best, and a colour polish of the
corners for grids whose lines are too faint to snap to."""

from functools import partial
from typing import NamedTuple

import cv2
import numpy as np

from engine.ruleset import SIZE, load_layout
from vision.locate.grid import cell_size, grid_view, level_for, percentiles, rectangle, rescale
from vision.locate.params import LocateParams

ERUDIT_LAYOUT = load_layout("erudit").printed()  # premium squares as the boxes print them
SCRABBLE_LAYOUT = load_layout("scrabble").printed()
PLAIN_CELLS = np.array([[a == b == "." for a, b in zip(*rows, strict=True)]
                        for rows in zip(ERUDIT_LAYOUT, SCRABBLE_LAYOUT, strict=True)])


def upper_median(values: np.ndarray):
    """Median along the first axis (the upper one of an even count: a single partition)."""
    middle = len(values) // 2
    return np.partition(values, middle, axis=0)[middle]


def distances(colours: np.ndarray, others) -> np.ndarray:
    diff = colours - others
    return np.sqrt(np.einsum("...c,...c->...", diff, diff))
LAYOUT_KINDS = [  # per layout: a mask of the cells of each kind of square
    [np.array([[ch == kind for ch in row] for row in layout])
     for kind in sorted(set("".join(layout)))]
    for layout in (ERUDIT_LAYOUT, SCRABBLE_LAYOUT)
]
LAYOUT_CELLS = [[np.flatnonzero(mask) for mask in kinds] for kinds in LAYOUT_KINDS]


class LayoutShift(NamedTuple):
    """The whole cells (dx, dy) a grid is best moved by for the layout, and that grid's misfit."""

    shift: tuple[int, int]
    misfit: float


def layout_shift(p: LocateParams, image, corners) -> LayoutShift:
    """The printed premium squares sit in the same cells on every board (both known layouts);
    a grid off by a row or column (a printed margin or a row of tiles taken for cells) puts
    them in the wrong cells. Return the (dx, dy) in cells of the nearby grid whose cell colours
    the layout explains best, and that grid's misfit (1 - share of colour variance explained)."""
    fits = shift_fits(p, image, corners)
    dy, dx = np.unravel_index(int(np.argmax(fits)), fits.shape)
    if fits[dy, dx] > fits[p.max_shift, p.max_shift] + p.shift_gain:
        return LayoutShift((int(dx) - p.max_shift, int(dy) - p.max_shift), 1 - float(fits[dy, dx]))
    return LayoutShift((0, 0), 1 - float(fits[p.max_shift, p.max_shift]))


def shift_fits(p: LocateParams, image, corners):
    """(dy, dx) layout fit of each grid up to max_shift cells off `corners`, better layout's."""
    view, _ = grid_view(image, corners, p.layout_cell, p.max_shift)
    colours = cell_colours(p, view, p.layout_cell, p.max_shift)
    return _layout_fits(p, colours, every_colour=True).max(axis=0)


# windows _layout_fits measures together: _best_scaled's 3 969 at once took 1.7× as long (each
# fresh array of ~10 MB cost its pages anew)
WINDOWS_AT_ONCE = 500


def layout_scaled(p: LocateParams, image, corners):
    """The grid, of the same perspective as `corners` but up to a quarter smaller or larger
    along each axis and shifted by up to max_shift cells, whose cell colours the premium layout
    explains best. The comb can miss the period of faint lines (a cream board seen steeply),
    while the vanishing points that set the perspective hold."""
    view, _ = grid_view(image, corners, p.scale_cell, p.scale_margin)
    view = cv2.blur(view, (p.scale_cell // 2 + 1,) * 2)  # ≈ the mean of a cell's middle half
    sizes = np.stack(np.meshgrid(p.scales, p.scales), axis=-1).reshape(-1, 2)
    size, shift = _best_scaled(p, view, sizes)
    for step in p.fine_scales:
        size, shift = _best_scaled(p, view, size * step ** np.stack(
            np.meshgrid([-1, 0, 1], [-1, 0, 1]), axis=-1).reshape(-1, 2))
    low = SIZE / 2 + (np.array(shift) - SIZE / 2) * size
    return rectangle(corners, low, low + SIZE * size)


def _best_scaled(p: LocateParams, view, sizes):
    """Of grids `sizes` (x, y) times the guessed one, read from the cell centres of the blurred
    view of layout_scaled: the size and (dx, dy) shift the premium layout fits best."""
    steps = np.arange(-p.max_shift, SIZE + p.max_shift) + 0.5 - SIZE / 2
    centre = (p.scale_margin + SIZE / 2) * p.scale_cell - 0.5
    xs, ys = (centre + np.outer(sizes[:, axis], steps) * p.scale_cell for axis in (0, 1))
    count = len(steps)  # each grid's cells are one count × count block of rows of the maps
    map_x = np.float32(np.repeat(xs[:, None, :], count, axis=1).reshape(-1, count))
    map_y = np.float32(np.repeat(ys[:, :, None], count, axis=2).reshape(-1, count))
    colours = _weighted_lab(p, np.float32(cv2.remap(view, map_x, map_y, cv2.INTER_LINEAR)))
    fits = _layout_fits(p, colours.reshape(len(sizes), count, count, 3)).max(axis=0)
    index, dy, dx = np.unravel_index(int(np.argmax(fits)), fits.shape)
    return sizes[index], (int(dx) - p.max_shift, int(dy) - p.max_shift)


def cell_colours(p: LocateParams, view, cell, margin, strips=False, inset=None):
    """Lab colour (lightness weighted) of the mean of the middle half of each cell (or of all
    but `inset` px at each side) of a top-down view with `cell` px per cell and `margin` cells
    around the grid; with `strips` also of a strip `strip` px inside each cell's edges. Box sums
    come from one integral image, and only the means are converted to Lab (a cell's middle is
    near uniform: the Lab of its mean is the mean of its Lab, and converting a few hundred
    colours costs nothing)."""
    gain = _exposure_gain(p, view)
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
    middles = _weighted_lab(p, middle / area)
    if not strips:
        return middles
    (outer, outer_area), (inner, inner_area) = box_means(p.strip[0]), box_means(p.strip[1])
    return middles, _weighted_lab(p, (outer - inner) / (outer_area - inner_area))


def _exposure_gain(p: LocateParams, view: np.ndarray) -> float:
    """How much brighter an under-exposed view's colours are measured (1 for any other view):
    in a dim photo every colour difference shrinks, while colours are judged by fixed Lab
    distances (clean_step, colour_cap)."""
    sample = view[::4, ::4]
    # the brightest channel as two maxima of planes: max(axis=2) over 3 values is 15× slower
    brightest = np.maximum(np.maximum(sample[..., 0], sample[..., 1]), sample[..., 2])
    bright = percentiles(brightest, [95])[0]
    return max(1.0, p.exposed / max(bright, 1.0))


def _weighted_lab(p: LocateParams, bgr: np.ndarray) -> np.ndarray:
    lab = cv2.cvtColor(np.float32(bgr / 255), cv2.COLOR_BGR2LAB)
    return lab * np.float32([p.lightness_weight, 1, 1])


def _layout_fits(p: LocateParams, colours, every_colour=False):
    """(layout, ..., dy, dx) share of the colour spread of every 15×15 window of `colours`
    (..., rows, columns, channel) that the layout's kinds explain (1 - within / total), each
    cell's distance capped so that a few tiles count like any other misfit. On a late-game
    board tiles cover most cells of some kinds and set their median colour, so the fit is also
    measured letting any cell show the tiles' colour (one colour per kind besides it, against
    one colour besides it): the better of the two counts (the second less tiles_penalty). With
    `every_colour` each window takes whichever of the two commonest colours fits it best."""
    flat = grid_windows(colours)
    common = common_colours(p, colours)
    if every_colour and flat.shape[-4:-2] != (1, 1):
        # a grid a cell off can mistake the commonest colour for the tiles': each window then
        # takes either, as its own grid would (else the window of the board is judged wrongly)
        return _in_parts(partial(_fits_either_way, p, shared=common), flat)
    # the tiles' colour is one of the guessed grid's two commonest (the other most often the
    # plain squares'): the one that lets the layout explain the middle window best. One call
    # fits the middle window all three ways (a colour infinitely far from every cell: the plain
    # fit), as on a single window the calls cost more than the arithmetic.
    middle = flat[..., (flat.shape[-4] - 1) // 2, (flat.shape[-3] - 1) // 2, :, :]
    apart = np.full(middle.shape[:-2] + middle.shape[-1:], np.inf, np.float32)
    shared = np.stack([apart] + [distances_to(middle, colour) for colour in common])
    middle_fits = kind_fits(p, np.broadcast_to(middle, shared.shape[:1] + middle.shape), shared)
    best = 1 + int(np.argmax([middle_fits[:, k].max() for k in range(1, len(shared))]))
    if flat.shape[-4:-2] == (1, 1):  # one window: that was all
        shape = middle_fits.shape[:1] + flat.shape[:-2]
        fits, tiled = (middle_fits[:, k].reshape(shape) for k in (0, best))
        return np.maximum(fits, tiled - p.tiles_penalty)
    return _in_parts(partial(_fits_either_way, p, shared=[common[best - 1]]), flat)


def _fits_either_way(p: LocateParams, flat, shared):
    """(layout, ...) fit of windows (..., channel, cell): plain, or letting any cell show one
    of the `shared` colours (less tiles_penalty), whichever is better."""
    tiled = np.max([kind_fits(p, flat, distances_to(flat, colour)) for colour in shared], axis=0)
    return np.maximum(kind_fits(p, flat), tiled - p.tiles_penalty)


def _in_parts(fit, flat):
    """fit(flat) (layout, ...) of many windows (..., channel, cell), computed on a few parts of
    the first axis at a time (WINDOWS_AT_ONCE windows): the same values, in arrays small
    enough for the cache and the allocator's heap."""
    step = max(1, WINDOWS_AT_ONCE // int(np.prod(flat.shape[1:-2])))
    if len(flat) <= step:
        return fit(flat)
    return np.concatenate([fit(flat[i:i + step]) for i in range(0, len(flat), step)], axis=1)


def grid_windows(colours):
    """(..., dy, dx, channel, cell): the colours of every 15×15 window of `colours`."""
    windows = np.lib.stride_tricks.sliding_window_view(colours, (SIZE, SIZE), axis=(-3, -2))
    return windows.reshape(*windows.shape[:-2], SIZE * SIZE)


def distances_to(values, colour):
    """(..., cell) distances of colours (..., channel, cell) from one colour."""
    return distances(np.moveaxis(values, -1, -2), colour)


def kind_fits(p: LocateParams, values, to_shared=None):
    """(layout, ...) share of the spread of colours (..., channel, cell) about their median
    that one median per kind of the layout explains (with `to_shared`, the distance of each
    colour from a shared one, as _grouped_spread measures spread)."""
    total = _grouped_spread(p, values, WHOLE_GRID, to_shared)[..., 0]
    return np.array([1 - _grouped_spread(p, values, kinds, to_shared).sum(axis=-1) / (total + 1e-6)
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


def _grouped_spread(p: LocateParams, values, grouping, to_shared=None):
    """(..., group) sums of each colour's distance (colours (..., channel, cell)) from the median
    (the upper one) of its group, capped at colour_cap. With `to_shared`, the distance of each
    colour from a shared one, the median is of the colours off it (further than clean_step)
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
        near = to_shared <= p.clean_step
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
    return np.add.reduceat(np.minimum(distance, p.colour_cap), starts, axis=-1)


def common_colours(p: LocateParams, colours, count=2) -> list[np.ndarray]:
    """Median colours of the `count` largest groups of cells within clean_step of one cell,
    taken in turn, among the middle 15×15 cells of `colours` (..., rows, columns, channel)."""
    rows, columns = colours.shape[-3:-1]
    top, left = (rows - SIZE) // 2, (columns - SIZE) // 2
    points = colours[..., top:top + SIZE, left:left + SIZE, :].reshape(-1, colours.shape[-1])
    if len(points) > p.mode_samples:
        points = points[np.linspace(0, len(points) - 1, p.mode_samples).astype(int)]
    near = distances(points[:, None], points[None]) <= p.clean_step
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


def polish_by_layout(p: LocateParams, levels, corners):
    """Move each corner in turn, in shrinking steps, to where the premium layout explains the
    cell colours best: for a grid whose lines are too faint or blurred to snap to (the layout
    fit drops as soon as cells slide onto their neighbours). A grid the layout fits barely
    better once moved stays where it was: the fit is flat there (a blurred board seen steeply)
    and the line fit knows better."""
    source, factor = level_for(levels, rescale(corners, 1.0, levels[-1].factor), p.layout_cell)
    points = rescale(corners, 1.0, factor)
    best = start = layout_misfit(p, source, points, p.polish_inset)
    first = points
    cell = cell_size(points)
    for step in p.polish_steps:
        for _ in range(p.polish_sweeps):
            moved = False
            for index in np.ndindex(4, 2):
                for sign in (-1, 1):
                    trial = points.copy()
                    trial[index] += sign * step * cell
                    misfit = layout_misfit(p, source, trial, p.polish_inset)
                    if misfit < best:
                        best, points, moved = misfit, trial, True
            if not moved:
                break
    return rescale(points if best < start - p.polish_gain else first, factor, 1.0)


def layout_misfit(p: LocateParams, image, corners, inset=None, tiles=True) -> float:
    """1 - share of the grid's cell colour spread the better-fitting premium layout explains
    (as layout_shift measures it, or over cells less `inset` px of layout_cell each side;
    without `tiles`, one colour per kind only)."""
    colours = _grid_colours(p, image, corners, inset)
    fits = _layout_fits(p, colours) if tiles else kind_fits(p, grid_windows(colours))
    return 1 - float(fits.max())


def layout_misfits(p: LocateParams, image, corners) -> tuple[float, float]:
    """layout_misfit with the tiles' colour and without it, from one view of the grid."""
    colours = _grid_colours(p, image, corners)
    return (1 - float(_layout_fits(p, colours).max()),
            1 - float(kind_fits(p, grid_windows(colours)).max()))


def _grid_colours(p: LocateParams, image, corners, inset=None):
    view, _ = grid_view(image, corners, p.layout_cell, 0)
    return cell_colours(p, view, p.layout_cell, 0, inset=inset)
