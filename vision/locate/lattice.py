"""Lattices: 16 equally spaced lines per family fitted to the segments once the perspective
is undone (through the families' vanishing points), or fitted inside an outline; the comb
search they share."""

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import cv2
import numpy as np

from engine.ruleset import SIZE
from vision.locate.grid import LINES, apply, meet, order_corners
from vision.locate.params import LocateParams
from vision.locate.segments import aiming_at, direction_peaks, vanishing_point


class Comb(NamedTuple):
    """16 equally spaced lines along a profile: the first's position, the period (bins) and
    how well they fit its peaks."""

    offset: float
    period: float
    score: float


class Lines(NamedTuple):
    """One family of a lattice's 16 parallel lines (perspective undone): their normal, and
    where along it the first and the last lie."""

    normal: np.ndarray
    first: float
    last: float


@dataclass(frozen=True)
class OutlineComb:
    """The grid a comb found inside an outline, and how well its lines fit."""

    corners: np.ndarray
    score: float

def direction_lattices(p: LocateParams, segments, pairs,
                       squared: list | None = None) -> list[np.ndarray]:
    """Grid corners from line segments, one guess per pair of the strongest directions in
    `pairs` (indices into the up to three strongest, 0 the strongest): take the segments near
    both directions, find each family's vanishing point, undo the perspective so each family is
    parallel, then fit a 16-line comb to each family's positions. Stripes of a table or a cloth
    can outweigh one of the grid's directions, hence the other pairs. `squared`, a list, gets
    each lattice's squared one to make on demand, where it has one (_comb_lattice)."""
    if segments is None:
        return []
    ends, vectors, lengths, angles = (segments.ends, segments.vectors, segments.lengths,
                                      segments.angles)
    centre, smallest = segments.centre, segments.smallest
    peaks = direction_peaks(angles, lengths)
    found = []
    for first, second in pairs:
        if second >= len(peaks):
            continue
        families = [np.abs((angles - peaks[k] + 90) % 180 - 90) <= p.family_spread
                    for k in (first, second)]
        if min(mask.sum() for mask in families) < 8:
            continue
        rng = np.random.default_rng(0)
        points = [vanishing_point(p, ends[m], vectors[m], lengths[m], rng) for m in families]
        if any(point is None for point in points):
            continue
        corners = _comb_lattice(p, ends, lengths, families, points, centre, smallest, squared)
        if corners is not None:
            found.append(corners)
    return found


def vanishing_lattice(p: LocateParams, segments) -> list[np.ndarray]:
    """Grid corners (in a list, empty when none) from the two vanishing points most segment
    length points at, the second found among the segments the first leaves: seen from a chair
    a family's lines turn by more than family_spread across the board, and its directions'
    peaks split it."""
    if segments is None:
        return []
    ends, vectors, lengths = segments.ends, segments.vectors, segments.lengths
    centre, smallest = segments.centre, segments.smallest
    mids, units = (ends[:, 0] + ends[:, 1]) / 2, vectors / lengths[:, None]
    rng = np.random.default_rng(0)
    left = np.ones(len(ends), bool)
    families, points = [], []
    for _ in range(2):
        if left.sum() < 8:
            return []
        point = vanishing_point(p, ends[left], vectors[left], lengths[left], rng)
        if point is None:
            return []
        tolerances = [p.vp_tolerance, p.vp_spread * p.vp_tolerance]
        members, near = aiming_at(point[None], mids, units, tolerances)
        members &= left
        left &= ~near
        families.append(members)
        points.append(point)
    corners = _comb_lattice(p, ends, lengths, families, points, centre, smallest)
    return [] if corners is None else [corners]


def _comb_lattice(p: LocateParams, ends, lengths, families, points, centre, smallest, squared=None):
    """Send the horizon (the line through both vanishing points) to infinity, so each family
    becomes parallel and evenly spaced, and fit a comb to each family's line positions.
    Where one family's period is square_ratio or more below the other's, `squared` (a list, or
    None) gets the squared lattice to make on demand (_squared_lattice): a table's stripes
    beside the board can give one family their finer comb."""
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
    flat_mids = apply(affine, mids)
    flat_ends = apply(affine, ends.reshape(-1, 2)).reshape(-1, 2, 2)
    flat_lengths = np.linalg.norm(flat_ends[:, 1] - flat_ends[:, 0], axis=1)
    positions, lines = [], []
    for members, point in zip(families, points, strict=True):
        direction = (affine @ point)[:2]
        direction = direction / (np.linalg.norm(direction) + 1e-12)
        normal = np.array([-direction[1], direction[0]])
        at = flat_mids[members] @ normal
        scale = _across_scale(p, affine, ends[members], normal, at)
        comb = _comb_of_positions(p, at / scale, flat_lengths[members], smallest)
        if comb is None:
            return None
        start, period = np.array(comb) * scale
        positions.append((at / scale, flat_lengths[members], scale))
        lines.append(Lines(normal, start, start + SIZE * period))
    periods = [(family.last - family.first) / SIZE for family in lines]
    if squared is not None and max(periods) >= p.square_ratio * min(periods):
        fine = int(np.argmin(periods))
        squared.append(partial(_squared_lattice, p, lines, fine, positions[fine], affine, centre))
    return _lattice_corners(lines, affine, centre)


def _lattice_corners(lines, affine, centre):
    (n1, a0, a1), (n2, b0, b1) = lines
    flat_corners = np.array([meet(n1, a, n2, b)
                             for a, b in ((a0, b0), (a1, b0), (a1, b1), (a0, b1))])
    corners = apply(np.linalg.inv(affine), flat_corners) + centre
    return order_corners(corners)


def _squared_lattice(p: LocateParams, lines, fine, positions, affine, centre):
    """The lattice of `lines` with family `fine`'s comb fitted again to its `positions` within
    squarer of the other family's period (None when none fits there)."""
    at, weight, scale = positions
    other = lines[1 - fine]
    near = (other.last - other.first) / SIZE / scale
    comb = _comb_of_positions(p, at, weight, near / p.squarer, near * p.squarer)
    if comb is None:
        return None
    start, period = np.array(comb) * scale
    lines = list(lines)
    lines[fine] = lines[fine]._replace(first=start, last=start + SIZE * period)
    return _lattice_corners(lines, affine, centre)


def _across_scale(p: LocateParams, affine, ends, normal, at) -> float:
    """Flattened px per photo px across a family's lines, near its segments: seen from a chair
    the flattening shrinks the board's cells to a third or less, below the smallest cell
    looked for (1 where it changes them by less than depth_scaled: nothing needs it)."""
    mids = (ends[:, 0] + ends[:, 1]) / 2
    vectors = ends[:, 1] - ends[:, 0]
    across = np.c_[-vectors[:, 1], vectors[:, 0]] / np.linalg.norm(vectors, axis=1)[:, None]
    scale = float(np.median(np.abs(apply(affine, mids + across) @ normal - at)))
    if not 0 < scale < np.inf:  # segments on the horizon: no scale to keep
        return 1.0
    return scale if abs(np.log(scale)) > np.log(p.depth_scaled) else 1.0


def _comb_of_positions(p: LocateParams, at, weight, smallest, largest=None):
    """(first line, period) of the best 16-line comb through weighted 1D line positions, its
    period at least `smallest` (and at most `largest`, when given)."""
    low, high = np.percentile(at, 1) - 5, np.percentile(at, 99) + 5
    if high - low < 40 or high - low > 20000:
        return None
    width = max(1.0, (high - low) / p.comb_bins)  # bin width: keeps the comb search short
    count = int((high - low) / width) + 1
    hist = np.bincount(np.clip(((at - low) / width).astype(int), 0, count - 1), weights=weight,
                       minlength=count).astype(np.float32)
    hist = cv2.GaussianBlur(hist.reshape(1, -1), (0, 0), sigmaX=1.0).ravel()
    longest, shortest = count / SIZE * 1.15, max(3.0, smallest / width)
    if largest is not None:
        longest = min(longest, largest / width)
        if longest <= shortest:
            return None
    offset, period, _ = _best_comb(p, hist, longest, shortest)
    return low + offset * width, period * width


def comb_in_quad(p: LocateParams, small: np.ndarray, quad: np.ndarray):
    """Fit 16 equally spaced lines per axis inside `quad` (an OutlineComb), or None."""
    side, pad = p.comb_side, p.comb_pad * p.comb_side
    inner = np.float32([[pad, pad], [side - pad, pad], [side - pad, side - pad], [pad, side - pad]])
    warp = cv2.getPerspectiveTransform(np.float32(quad), inner)
    view = cv2.warpPerspective(small, warp, (side, side), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)
    grad_x, grad_y = line_evidence(p, view)
    span = side - 2 * pad
    combs = []
    for grad, axis in ((grad_x, 0), (grad_y, 1)):
        profile = grad[int(pad):int(side - pad)].mean(axis=0) if axis == 0 else \
            grad[:, int(pad):int(side - pad)].mean(axis=1)
        comb = _best_comb(p, profile, span / (SIZE + 1) * 1.15, span * p.min_grid_share / SIZE)
        if comb is None:
            return None
        combs.append(comb)
    (x0, px, sx), (y0, py, sy) = combs
    x1, y1 = x0 + SIZE * px, y0 + SIZE * py
    corners_view = np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    corners = cv2.perspectiveTransform(corners_view[None], np.linalg.inv(warp))[0]
    return OutlineComb(corners, min(sx, sy))


def line_evidence(p: LocateParams, view: np.ndarray):
    """|d/dx| and |d/dy| of the view (strongest colour channel), smoothed across the line so the
    two edges of a thin line merge into one ridge."""
    channels = cv2.split(view)
    grad_x = grad_y = None
    for channel in channels:
        gx = cv2.convertScaleAbs(cv2.Sobel(channel, cv2.CV_16S, 1, 0, ksize=3), alpha=0.25)
        gy = cv2.convertScaleAbs(cv2.Sobel(channel, cv2.CV_16S, 0, 1, ksize=3), alpha=0.25)
        grad_x = gx if grad_x is None else cv2.max(grad_x, gx)
        grad_y = gy if grad_y is None else cv2.max(grad_y, gy)
    grad_x = cv2.GaussianBlur(grad_x.astype(np.float32), (0, 0), sigmaX=p.evidence_blur, sigmaY=0.1)
    grad_y = cv2.GaussianBlur(grad_y.astype(np.float32), (0, 0), sigmaX=0.1, sigmaY=p.evidence_blur)
    return grad_x, grad_y


def _best_comb(p: LocateParams, profile: np.ndarray, max_period: float, min_period: float):
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
    best = _search_combs(p, padded, pad, n, np.geomspace(min_period, max_period, 60))
    for multiple in (3, 2):
        # a comb at a half or third of the true period can fit as well as the true one (the
        # midpoints of cells carry letters and tile edges); prefer the coarser when nearly as good
        if best.period * multiple <= max_period * 1.05:
            periods = best.period * multiple * np.linspace(0.97, 1.03, 7)
            coarser = _search_combs(p, padded, pad, n, periods)
            if coarser.score >= p.coarser_share * best.score:
                best = coarser
                break
    return best._replace(score=best.score / LINES)


def _search_combs(p: LocateParams, padded, pad, n, periods):
    """Best (offset, period, score) over `periods` (all offsets of all periods scored at once),
    then refined around the winner. A long profile is first searched at half resolution."""
    if n > p.coarse_profile and periods.min() >= 6:
        half = padded[:len(padded) // 2 * 2].reshape(-1, 2).mean(axis=1)
        offset, period, _ = _search_combs(p, half, pad / 2, n // 2, periods / 2)
        offset, period = 2 * offset + 0.5, 2 * period  # a half-resolution bin spans two
        return _refine_comb(padded, pad, Comb(offset, period, -np.inf))
    steps = np.maximum(1.0, periods / 6)
    # up to 3 lines may hang past either end (a cut-off board is found, then rejected)
    counts = np.maximum(1, np.ceil((n - 9 * periods) / steps)).astype(np.intp)
    firsts = np.cumsum(counts) - counts
    index = np.arange(int(counts.sum())) - np.repeat(firsts, counts)
    all_periods = np.repeat(periods, counts)
    offsets = np.repeat(-3 * periods, counts) + index * np.repeat(steps, counts)
    scores = _comb_scores_nearest(padded, pad, all_periods, offsets)
    best = int(np.argmax(scores))
    coarse = Comb(float(offsets[best]), float(all_periods[best]), float(scores[best]))
    return _refine_comb(padded, pad, coarse)


def _refine_comb(padded, pad, coarse: "Comb") -> "Comb":
    """The best comb near `coarse`, or `coarse` when none nearby scores higher."""
    offset, period = coarse.offset, coarse.period
    reach = max(1.0, period / 6)
    fine = np.linspace(period * 0.97, period * 1.03, 13)
    near = np.arange(offset - reach, offset + reach, 0.25)
    fine_periods, fine_offsets = (grid.ravel() for grid in np.meshgrid(fine, near, indexing="ij"))
    scores = _comb_scores(padded, pad, fine_periods, fine_offsets)
    best = int(np.argmax(scores))
    if scores[best] > coarse.score:
        return Comb(float(fine_offsets[best]), float(fine_periods[best]), float(scores[best]))
    return coarse


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
