"""The search that ties the stages: which guesses are made in which order, how fits are
weighed against each other, and when one is sure enough to stop; the final checks."""

from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import islice

import cv2
import numpy as np

from engine.errors import Message, PhotoError
from engine.ruleset import SIZE
from vision.locate.grid import (
    LINES,
    cell_size,
    check_image,
    evened_out,
    grid_view,
    level_for,
    order_corners,
    percentiles,
    pyramid,
    rectangle,
    rescale,
    shifted,
    smallest_cell,
)
from vision.locate.lattice import comb_in_quad, direction_lattices, vanishing_lattice
from vision.locate.layout import (
    layout_misfit,
    layout_misfits,
    layout_scaled,
    layout_shift,
    polish_by_layout,
    shift_fits,
)
from vision.locate.params import LocateParams
from vision.locate.refine import (
    FirstView,
    Snapped,
    first_view,
    refine_location,
    refined_past_tiles,
    shifted_line_counts,
)
from vision.locate.segments import (
    Segments,
    closer_regions,
    grid_regions,
    line_segments,
    outline_candidates,
)

DEFAULT = LocateParams()


@dataclass
class Fit:
    """A refined guess: its corners in photo pixels, its score (the line quality less the
    weighted misfit, so that a checkered cloth or a rack loses to the board), the share of its
    line pieces that stand out, how badly the premium layout explains its cells, and how badly
    without the tiles' colour (what _sure asks; None until measured)."""

    corners: np.ndarray
    score: float
    quality: float
    misfit: float
    plain_misfit: float | None = None

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

    def __init__(self, message: str | Message, location: Location | None = None):
        super().__init__(message)
        self.location = location


def locate_board(image: np.ndarray, params: LocateParams = DEFAULT) -> Location:
    """Find the 15×15 grid; raise PhotoError saying why when it cannot be read
    (IllegibleBoard when the grid was found but its cells are too small or blurred).
    `params`: the tuning values (LocateParams), the default's unless given."""
    p = params
    check_image(image)
    levels = pyramid(p, image)
    small = levels[-1].image
    best = _search(p, levels)
    if not _plausible(p, best) or _unconfirmed(p, levels, best):
        evened = pyramid(p, evened_out(p, image))
        again = _search(p, evened)
        if _rank(p, evened, again) > _rank(p, levels, best):
            levels, best = evened, again
    if not _plausible(p, best):
        blurred = p.blurred_photo_px * max(small.shape[:2]) / p.work_side
        if _soft_edges_px(small) > blurred:  # nothing found, and nothing is sharp
            raise PhotoError("board too blurred")
        raise PhotoError("no board found")
    fit = _moved_onto_layout(p, levels, best)
    snapped = refined_past_tiles(p, levels, Snapped(fit.corners, fit.quality))
    corners, quality = snapped.corners, snapped.quality
    if quality < p.polish_below:  # lines too faint to snap to: the premium squares place the grid
        corners = polish_by_layout(p, levels, corners)
    return _checked_location(p, levels, corners, quality)


def _moved_onto_layout(p: LocateParams, levels, best):
    """The search's fit, or the fit of its grid moved by whole cells to where the premium layout
    fits it best, when that scores higher: a lattice a row or two off can be refined onto the
    lines a row off, and pass for sure there (the layout fits it well enough). Checked only on
    a fit the layout explains less well than layout_found_misfit: the check costs a few ms."""
    if best.misfit <= p.layout_found_misfit:
        return best
    small, scale = levels[-1]
    corners_small = rescale(best.corners, 1.0, scale)
    shift, _ = layout_shift(p, small, corners_small)
    if shift == (0, 0):
        return best
    moved = _fitted(p, levels, shifted(corners_small, shift))
    better = moved is not None and _plausible(p, moved) and moved.score > best.score
    return moved if better else best


# Share of a shrunk photo's pixels whose gradient stands for its sharpest edges: a picture of
# plain surfaces (a table with a cloth on it) has edges on well under 1% of its pixels, and a
# lower percentile lands on a flat part, which looks like a blurred edge.
SHARPEST_EDGES = 99.8


def _soft_edges_px(small: np.ndarray) -> float:
    """Width in px of the shrunk photo's sharpest edges (contrast over steepest gradient)."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grad = np.hypot(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3),
                    cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)) / 8
    contrast = float(np.percentile(grey, 97) - np.percentile(grey, 3))
    return contrast / (float(np.percentile(grad, SHARPEST_EDGES)) + 1e-6)


def _search(p: LocateParams, levels):
    """The best Fit from the line lattices (of all segments, then of
    where they cross), found first on small copies (enough for a board that fills much of the
    photo, and cheap), then on a larger one, and from outlines when still unsure. Where they
    cross is looked at once every size was, or at once for a size whose lattice by direction
    fits nothing plausible (before the lattice by vanishing points, which the stripes mislead
    as much) or shows under hopeless of its line pieces at first sight (before refining it): a
    striped cloth's directions outweighed the board's there, and the larger sizes see the same
    stripes at several times the cost. A fit that
    is only steady (_steady) is checked against where the lines cross before it is taken: from
    a chair a grid cells off an empty board can pass for steady.
    Guesses are refined side by side (numpy and OpenCV let go of the GIL), and weighed in
    turn. Last, where the layout explains none of the best fit, that grid twice as long one
    way (_stretched)."""
    with ThreadPoolExecutor(p.search_threads) as pool:
        return _search_with(p, levels, pool)


@dataclass
class _Progress:
    """What the search has found so far: the best fit, the last size's, the looks taken, and
    the segments of the last size looked at."""

    best: Fit | None = None
    current: Fit | None = None
    seen: list[_Look] = field(default_factory=list)
    segments: Segments | None = None


def _search_with(p: LocateParams, levels, pool) -> Fit | None:
    found = _Progress()
    for side in p.lsd_sides:
        if _sure_at_size(p, levels, found, side):
            return found.best
    fit = _after_every_size(p, levels, found)
    if fit is not None:
        return fit
    return _last_guesses(p, levels, pool, found)


def _sure_at_size(p: LocateParams, levels, found: _Progress, side: int) -> bool:
    """Look at the lattices of the segments found on a copy `side` px long; whether a sure or
    settled fit (`found.best`) ends the search."""
    segments = found.segments = line_segments(p, levels[-1].image, side,
                                              skim=side == p.lsd_sides[0])
    if side != p.lsd_sides[-1] and (segments is None
                                    or len(segments.ends) < p.min_quick_segments):
        return False  # too few segments for a grid whose lines show at this size: look closer
    squared = []
    look = _Look(segments, direction_lattices(p, segments, [(0, 1)], squared), squared=squared)
    first = [first_view(p, levels, corners) for corners in look.lattices]
    squared_fit = _squared_ahead(p, levels, look, first)
    if _sure(p, levels, squared_fit):
        found.best = squared_fit
        return True
    found.best = _better(p, levels, found.best, squared_fit)
    # seen from a chair a family may turn too far for one direction: where its lines meet
    # holds it. Refined first where it shows its lines clearly better.
    previous, (vanishing, ahead) = found.current, _vanishing_ahead(p, levels, segments, first)
    # a cloth's stripes: where lines cross first
    if first and first[0].quality < p.hopeless and _crossed(p, levels, found, look):
        return True
    if _sure(p, levels, ahead):
        found.current = ahead
        look.lattices = look.lattices + vanishing
    else:
        found.current = _best_fit(p, levels, look.lattices, first=first)
    # stripes' directions, not the board's
    if (not _plausible(p, found.current) and look.regions is None
            and _crossed(p, levels, found, look)):
        return True
    if not _sure(p, levels, found.current):
        vanishing = vanishing_lattice(p, segments) if vanishing is None else vanishing
        found.current = (_best_fit(p, levels, vanishing, found.current) if ahead is None
                         else _better(p, levels, found.current, ahead))
        look.lattices = look.lattices + vanishing
    found.best = _better(p, levels, found.best, found.current)
    found.seen.append(look)
    return (_sure(p, levels, found.best)
            or _settled(p, levels, found.best, previous, found.current))


def _crossed(p: LocateParams, levels, found: _Progress, look: _Look) -> bool:
    """Look where `look`'s segments cross; whether that gives a sure fit (`found.best`)."""
    found.best = _crossing_fit(p, levels, look, found.best)
    return _sure(p, levels, found.best)


def _after_every_size(p: LocateParams, levels, found: _Progress) -> Fit | None:
    """Once every size was looked at: a steady fit, or a sure fit of where the other sizes'
    lines cross, or None. Only then where they cross: a grid fitted to a crowd of tiles there
    can pass for sure, where a larger size's lattice would have found the board. A steady fit
    gives way only to a sure one there that shows `clearer` more of its line pieces."""
    steady = found.best if _steady(p, levels, found.best) else None
    for look in found.seen:
        if look.regions is None:
            fit = _crossing_fit(p, levels, look, found.best if steady is None else None)
            found.best = fit if steady is None else found.best
            if _sure(p, levels, fit) and (steady is None
                                          or fit.quality >= steady.quality + p.clearer):
                return fit
    return steady  # when there is one, no need of the last stage's guesses


def _last_guesses(p: LocateParams, levels, pool, found: _Progress) -> Fit | None:
    """The best fit of the last stage's guesses (outlines, other pairs of directions, the
    places where segments cross on the larger copies, a grid stretched), or of the search."""
    small = levels[-1].image
    guesses = [partial(_fitted, p, levels, corners)
               for corners in _outline_guesses(p, small, found.segments)]
    best = _first_sure(p, levels, pool, found.best, guesses)
    if _sure(p, levels, best):
        return best
    # stripes can outweigh a small board's lines even there: pair its next two directions too
    rescaled = [partial(_fitted_rescaled, p, levels, corners)
                for subset in found.seen[-1].regions + closer_regions(p, small)  # the last size's
                for corners in direction_lattices(p, subset, [(0, 1), (1, 2)])]
    best = _first_sure(p, levels, pool, best, rescaled)
    if best is None or _sure(p, levels, best) or best.misfit <= p.sure_misfit:
        return best
    # nothing the layout explains: the comb may have taken half the period one way. Only a
    # sure fit of those guesses is taken (a grid off the board can outscore an unsure one).
    corners = rescale(best.corners, 1.0, levels[-1].factor)
    stretched = _first_sure(p, levels, pool, None, [
        partial(_fitted_rescaled, p, levels, _stretched(corners, axis, before))
        for axis, before in p.stretched])
    return stretched if _sure(p, levels, stretched) else best


def _outline_guesses(p: LocateParams, small, segments) -> list[np.ndarray]:
    """Grids (corners on the smallest copy) of the best combs inside outlines, ranked as the
    refined grids are (line evidence less layout misfit), and of the best-fitting other pair
    of segment directions."""
    fits = [fit for fit in map(lambda quad: comb_in_quad(p, small, quad),
                               outline_candidates(p, small)) if fit is not None]
    fits.sort(key=lambda fit: p.misfit_weight * layout_shift(p, small, fit.corners).misfit
              - fit.score)
    guesses = [fit.corners for fit in fits[:p.refined_candidates]]
    others = direction_lattices(p, segments, [(0, 2), (1, 2)])
    if others:
        guesses.append(min(others, key=lambda corners: layout_shift(p, small, corners).misfit))
    return guesses


def _stretched(corners, axis, before):
    """The grid twice as long along `axis` (0 across, 1 down), `before` of the added length
    before its first line. Seen steeply from a chair, one family of lines can crowd so that the
    comb takes half its period (tuning game 6 008's 14th photo: a grid over the middle half of
    the board); the lines' directions are right, so the board is that grid stretched along one
    axis (beyond layout_scaled's quarter, which then sets the length and place)."""
    low = np.zeros(2)
    low[axis] = -SIZE * before
    high = low + SIZE
    high[axis] += SIZE
    return rectangle(corners, low, high)


def _best_fit(p: LocateParams, levels, lattices, best=None, first=None):
    """`best` or the best fit of `lattices` (one or two: refined one after the other; `first`,
    their first_view when already taken)."""
    for k, corners in enumerate(lattices):
        view = None if first is None else first[k]
        best = _better(p, levels, best, _fitted(p, levels, corners, view))
    return best


def _squared_ahead(p: LocateParams, levels, look, first):
    """The fit of `look`'s squared lattice (_squared_lattice), or None, looked at only where the
    lattice by direction's first view is weak (as _vanishing_ahead) and taken when the squared
    one's shows guess_margin more of its line pieces: a table's stripes took one family's
    comb in the bench's striped-table render turned half round, whose finder then looked at a
    larger size. Its period can be a little off, so its fit is refined again."""
    if not _weak(p, first) or not look.squared:
        return None
    squared = look.squared[0]()
    fit = None if squared is None else _fitted_if_clearer(p, levels, squared, first[0])
    return fit if fit is None else _better(p, levels, fit, _fitted(p,
        levels, rescale(fit.corners, 1.0, levels[-1].factor)))


def _weak(p: LocateParams, first) -> bool:
    """Whether the lattice by direction's first view (`first`, one or none) shows fewer than
    weak_guess of its line pieces, but at least min_quality (fainter: a cloth's stripes,
    looked at where lines cross first)."""
    return bool(first) and p.min_quality <= first[0].quality < p.weak_guess


def _fitted_if_clearer(p: LocateParams, levels, corners, first: FirstView):
    """The fit of a guess whose first view shows guess_margin more of its line pieces than
    `first`, another guess's; else None."""
    view = first_view(p, levels, corners)
    if view.quality < first.quality + p.guess_margin:
        return None
    return _fitted(p, levels, corners, view)


def _vanishing_ahead(p: LocateParams, levels, segments, first):
    """(the lattice by vanishing points in a list, its fit) when the lattice by direction's
    first view (`first`, one or none) shows fewer than weak_guess of its line pieces (but at
    least min_quality) and the vanishing one's shows guess_margin more; else (that lattice or
    None, None). From a chair the lattice by direction was refined for nothing, before a sure
    one by vanishing points, in one photo of six (`eval_locate --seated`)."""
    if not _weak(p, first):
        return None, None
    vanishing = vanishing_lattice(p, segments)
    if not vanishing:
        return vanishing, None
    return vanishing, _fitted_if_clearer(p, levels, vanishing[0], first[0])


def _first_sure(p: LocateParams, levels, pool, best, tasks):
    """`best` or a better fit of those `tasks` (each returns a fit) make, weighed in order,
    run side by side: the first sure fit ends it, the tasks not yet begun are not run
    (the last stage's guesses cost up to ~750 ms each, and an early one is often sure)."""
    waiting = iter(tasks)
    running = deque(pool.submit(task) for task in islice(waiting, p.search_threads))
    while running and not _sure(p, levels, best):
        best = _better(p, levels, best, running.popleft().result())
        running.extend(pool.submit(task) for task in islice(waiting, 1))
    for left in running:
        left.cancel()
    return best


def _fitted_rescaled(p: LocateParams, levels, corners):
    """_fitted of a lattice put onto the scale the premium layout fits best."""
    return _fitted(p, levels, _rescaled_if_off(p, levels, corners))


@dataclass
class _Look:
    """One segment size's line segments, the lattices of their strongest directions, and the
    places where they cross (once looked at)."""

    segments: Segments | None
    lattices: list
    regions: list | None = None
    squared: list = field(default_factory=list)  # its squared lattice, made on demand


def _crossing_fit(p: LocateParams, levels, look: _Look, best):
    """`best` or a better fit of the lattices where one size's segments cross (the look's
    regions are filled in), stopping at a sure fit."""
    look.regions = grid_regions(p, look.segments, levels[-1].image.shape)
    for lattice in _crossing_lattices(p, look.regions, look.lattices):
        best = _better(p, levels, best, _fitted(p, levels, lattice))
        if _sure(p, levels, best):
            break
    return best


def _rescaled_if_off(p: LocateParams, levels, corners):
    """A lattice as it is, or, when the premium layout misfits it, the grid of the scale and
    shift it fits best, polished: a comb whose period is off leaves the premium squares in the
    wrong cells."""
    small, scale = levels[-1]
    if layout_shift(p, small, corners).misfit <= p.sure_misfit:
        return corners
    corners = polish_by_layout(p, levels, rescale(layout_scaled(p, small, corners), scale, 1.0))
    return rescale(corners, 1.0, scale)


def _crossing_lattices(p: LocateParams, regions, lattices):
    """The lattice of the strongest of grid_regions, unless it is one of `lattices`: over the
    whole photo the stripes of a cloth running near one of the board's directions outweigh
    it and take its segments into their family."""
    for corners in direction_lattices(p, regions[0], [(0, 1)]) if regions else []:
        if all(np.abs(corners - other).max() > p.stayed * cell_size(other) for other in lattices):
            yield corners


def _plausible(p: LocateParams, fitted) -> bool:
    """Whether a fit may be the board: its lines stand out, or the premium layout explains its
    cell colours; a grid sheared across a board or a texture does neither well."""
    if fitted is None:
        return False
    quality, misfit = fitted.quality, fitted.misfit
    return not ((quality < p.min_quality and misfit > p.layout_found_misfit)
                or (quality < p.polish_below and misfit > p.layout_missing))


def _sure(p: LocateParams, levels, fitted) -> bool:
    """Whether a fit is the board beyond doubt: its lines stand out and the layout fits its
    cells even without the tiles' colour (a grid several cells off, onto a margin, can fit well
    enough with it) or, where tiles hide too many squares for that (late in a game), no grid
    moved by whole cells can be the board."""
    if fitted is None or fitted.quality < p.sure_quality or fitted.misfit > p.sure_misfit:
        return False
    small, scale = levels[-1]
    corners = rescale(fitted.corners, 1.0, scale)
    if fitted.plain_misfit is None:
        fitted.plain_misfit = layout_misfit(p, small, corners, tiles=False)
    return fitted.plain_misfit <= p.sure_misfit or _alone(p, levels, corners, fitted.quality)


def _settled(p: LocateParams, levels, best, previous, current) -> bool:
    """Whether the lattices of two line-segment sizes were refined onto one grid (within agree
    cells at each corner) whose lines stand out at least half the time, and no grid moved by
    whole cells can be the board: where tiles hide too many line pieces for a sure fit, the
    refinement still converged on the lines, and the layout places the grid."""
    if previous is None or current is None or best.misfit > p.sure_misfit:
        return False
    if best is not previous and best is not current:  # an earlier size's fit scored higher
        return False
    if min(previous.quality, current.quality) < p.polish_below:
        return False
    ends = [order_corners(fitted.corners) for fitted in (previous, current)]
    if np.linalg.norm(ends[0] - ends[1], axis=1).max() > p.agree * cell_size(ends[1]):
        return False
    small, scale = levels[-1]
    return _alone(p, levels, rescale(best.corners, 1.0, scale),
                  min(previous.quality, current.quality))


def _steady(p: LocateParams, levels, fitted) -> bool:
    """Whether the best fit of every segment size's lattices, neither sure nor settled, is the
    board all the same: at least steady_quality of its line pieces stand out, the layout
    explains its cells as well as a sure fit's, and no grid moved by whole cells can be the
    board. Late in a game tiles hide too many line pieces for a sure fit; the last stage's
    guesses then found no better grid, at several times the time.
    Taken only once every size was looked at: a smaller size's bent grid can
    pass the test, and the closer look mends it."""
    if fitted is None or fitted.quality < p.steady_quality or fitted.misfit > p.sure_misfit:
        return False
    if _cut_off(p, levels, fitted.corners):  # bent past the photo's edge: the last stage mends it
        return False
    small, scale = levels[-1]
    return _alone(p, levels, rescale(fitted.corners, 1.0, scale), fitted.quality)


def _alone(p: LocateParams, levels, corners_small, quality) -> bool:
    """Whether no grid moved by whole cells can be the board: the layout (tiles' colour allowed)
    fits every grid up to max_shift cells off clearly worse, and every grid further off that
    could still show `quality` of its line pieces has fewer of them standing out."""
    fits = shift_fits(p, levels[-1].image, corners_small)
    if fits[p.max_shift, p.max_shift] < np.delete(fits.ravel(), fits.size // 2).max() + p.sure_gap:
        return False
    reach = _reach(p, quality)
    if reach <= p.max_shift:
        return True
    counts = shifted_line_counts(p, levels, corners_small, reach)
    steps = np.abs(np.arange(-reach, reach + 1))
    far = np.maximum(steps[:, None], steps[None, :]) > p.max_shift
    return bool(counts[reach, reach] > counts[far].max())


def _reach(p: LocateParams, quality) -> int:
    """Cells a grid can be off the board's and still show `quality` of its line pieces: k cells
    off keeps (LINES - k) * SIZE + LINES * (SIZE - k) on the board; a frame or the board's
    edge beyond the grid can add frame_lines lines."""
    pieces = 2 * LINES * SIZE
    return int((pieces + p.frame_lines * SIZE - quality * pieces) / (LINES + SIZE))


def _better(p: LocateParams, levels, best, fitted):
    """The higher-scoring fit, a plausible one before any other, and one the photo holds
    before one past its edge that the premium layout does not confirm (misfit above
    layout_found_misfit): past the edge no line shows, and under a shadow over half a late
    board a grid five cells off, past the edge, fitted the layout a little better than the
    board's own. A board really cut off still fits its layout well, and is refused."""
    if fitted is None:
        return best
    if best is None or _rank(p, levels, fitted) > _rank(p, levels, best):
        return fitted
    return best


def _rank(p: LocateParams, levels, fitted):
    """What _better compares: plausible, not past the edge unconfirmed, then the score."""
    if fitted is None:
        return False, False, -np.inf
    return _plausible(p, fitted), not _unconfirmed(p, levels, fitted), fitted.score


def _unconfirmed(p: LocateParams, levels, fitted) -> bool:
    """Whether a fit reaches past the photo's edge without the premium layout vouching for it."""
    return (fitted is not None and fitted.misfit > p.layout_found_misfit
            and _cut_off(p, levels, fitted.corners))


def _fitted(p: LocateParams, levels, corners_small, first: FirstView | None = None):
    """Refine a first guess, move it onto the nearby grid the premium layout fits best; return
    the Fit or None.
    `first`: the guess's first_view, when already taken."""
    small, scale = levels[-1]
    first = first_view(p, levels, corners_small) if first is None else first
    corners_small = first.corners_small
    refined = refine_location(p, levels, corners_small, first=first)
    if refined is None:
        return None
    corners, quality = refined.corners, refined.quality
    found = rescale(corners, 1.0, scale)
    if np.abs(found - corners_small).max() < p.stayed * cell_size(found):
        # the layout was checked on the guess, whose cells it kept
        misfit, plain = layout_misfits(p, small, found)
        return Fit(corners, quality - p.misfit_weight * misfit, quality, misfit, plain)
    shift, misfit = layout_shift(p, small, found)
    if shift != (0, 0):
        moved = shifted(corners, shift)
        refined = refine_location(p, levels, rescale(moved, 1.0, scale))
        if refined is None:
            return None
        corners, quality = refined.corners, refined.quality
    return Fit(corners, quality - p.misfit_weight * misfit, quality, misfit)


# --- final checks -------------------------------------------------------------------------------


def _cut_off(p: LocateParams, levels, corners) -> bool:
    """Whether a grid (corners in photo pixels) reaches past the photo's edge by more than
    cut_off_tolerance cells."""
    height, width = levels[0].image.shape[:2]
    slack = p.cut_off_tolerance * cell_size(corners)
    outside = (corners[:, 0] < -slack) | (corners[:, 0] > width - 1 + slack) | \
        (corners[:, 1] < -slack) | (corners[:, 1] > height - 1 + slack)
    return bool(outside.any())


def _checked_location(p: LocateParams, levels, corners, quality) -> Location:
    corners = order_corners(corners)
    cell = cell_size(corners)
    if _cut_off(p, levels, corners):
        raise PhotoError("board cut off at the photo's edge")
    location = Location(corners=np.float32(corners), cell_px=cell, quality=quality)
    smallest = smallest_cell(corners)
    if smallest < p.min_cell_px * (1 - p.side_error):
        raise IllegibleBoard(Message("board_too_small", px=f"{smallest:.0f}"), location)
    # a shrunk copy shows edge widths as well once its cells are large enough, and is faster
    source, factor = level_for(levels, rescale(corners, 1.0, levels[-1].factor), p.edge_view_cell)
    width_cells = _edge_width(source, rescale(corners, 1.0, factor))
    if width_cells > p.max_edge_width:
        raise IllegibleBoard("board too blurred", location)
    return location


def _edge_width(image, corners) -> float:
    """How wide (in cells) the board's sharpest edges are: its contrast over its steepest
    gradient. A sharp photo gives ~0.1 cell; blur of σ cells widens edges to about 2.5σ."""
    cell = int(max(8, min(16, cell_size(corners))))  # 16 px per cell resolve 0.1-cell edges
    view, _ = grid_view(image, corners, cell, 0)
    grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grad = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3),
                         cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)) / 8
    steepest = percentiles(grad, [99])[0]
    dark, light = percentiles(grey, [3, 97])
    return (light - dark) / (steepest + 1e-6) / cell
