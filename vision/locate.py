"""Find the printed 15×15 playing grid in a photo.

    >>> where = locate_board(load_photo("turn3.jpg"))
    >>> where.corners.shape, round(where.cell_px)
    ((4, 2), 71)

The search runs on a copy shrunk to about WORK_SIDE pixels. A first guess comes from the line
segments (two families through their vanishing points, a comb of 16 equally spaced lines
fitted to each); when it is unsure, outline candidates (board edges, frames, the photo's own
border) and other pairs of segment directions are tried too. Each guess is moved by whole cells
onto the grid whose cell colours the premium layout (Эрудит or English, both symmetric)
explains best, so a printed margin or a row of tiles taken for a row of cells is caught, then
refined against the grid lines themselves (a homography through where each line really lies,
fitted on the line pieces between empty cells), so the corners hold even where tiles, hands or
a printed margin hide the outline.
"""

from dataclasses import dataclass

import cv2
import numpy as np

from engine.errors import PhotoError
from vision.render_styles import ERUDIT_LAYOUT, SCRABBLE_LAYOUT

CELLS = 15
LINES = CELLS + 1
WORK_SIDE = 1000  # px; enough to resolve grid lines of a board filling a quarter of the frame
MIN_CELL_PX = 14  # px in the photo; smaller cells hold too few pixels to tell letters apart
MIN_QUALITY = 0.3  # share of grid-line pieces that must stand out from the cells beside them
EDGE_VIEW_CELL = 16  # px per cell in the shrunk copy enough to measure edge widths on it
MAX_EDGE_WIDTH = 0.6  # cells; edges this soft (blur σ ≈ 0.25 cell) leave letters unreadable
BLURRED_PHOTO_PX = 12.0  # px at WORK_SIDE; a photo whose sharpest edges are this soft is blurred
CUT_OFF_TOLERANCE = 0.3  # cells a grid corner may lie outside the photo (rounding, cropped photos)
VIEW_CELL = 24  # px per cell in the views the comb and the refinement work on
EVIDENCE_BLUR = 2.0  # px at VIEW_CELL; merges the two edges of a grid line into one ridge
MAX_CANDIDATES = 12  # outline candidates tried, largest first
REFINED_CANDIDATES = 2  # best combs that get the full refinement
MISFIT_WEIGHT = 0.5  # weight of the premium layout's misfit against the line quality
SURE_QUALITY = 0.7  # line quality above which the lattice guess is not second-guessed ...
SURE_MISFIT = 0.85  # ... when the premium layout also explains the cell colours this well


@dataclass
class Location:
    """Where the playing grid lies: outer corners in image order (the corner nearest the image's
    top-left first, then clockwise), the mean cell size in pixels, and how well the grid fit."""

    corners: np.ndarray
    cell_px: float
    quality: float


def locate_board(image: np.ndarray) -> Location:
    """Find the 15×15 grid; raise PhotoError saying why when it cannot be read."""
    _check_image(image)
    small, scale = _shrink(image)
    best = _search(image, small, scale)
    if best is None or best[2] < MIN_QUALITY:
        if _soft_edges_px(small) > BLURRED_PHOTO_PX:  # nothing found, and nothing is sharp
            raise PhotoError("board too blurred")
        raise PhotoError("no board found")
    corners, _, quality, _ = best
    return _checked_location(image, small, scale, corners, quality)


def _soft_edges_px(small: np.ndarray) -> float:
    """Width in px of the shrunk photo's sharpest edges (contrast over steepest gradient)."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grad = np.hypot(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3),
                    cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)) / 8
    contrast = float(np.percentile(grey, 97) - np.percentile(grey, 3))
    return contrast / (float(np.percentile(grad, 99)) + 1e-6)


def _search(image, small, scale):
    """Best (corners, score, quality, misfit) from the line lattice, and from outlines when
    unsure."""
    best = None
    segments = _segments(small)
    for lattice in _lattices(segments, [(0, 1)]):
        best = _fitted(image, small, scale, lattice)
    if best is None or best[2] < SURE_QUALITY or best[3] > SURE_MISFIT:
        fits = [fit for fit in map(lambda quad: _comb_in_quad(small, quad),
                                   _outline_candidates(small)) if fit is not None]
        # rank the combs as the refined grids are ranked: line evidence less layout misfit
        fits.sort(key=lambda fit: MISFIT_WEIGHT * _layout_shift(small, fit[0])[1] - fit[1])
        guesses = [corners for corners, _ in fits[:REFINED_CANDIDATES]]
        others = _lattices(segments, [(0, 2), (1, 2)])
        if others:
            guesses.append(min(others, key=lambda corners: _layout_shift(small, corners)[1]))
        for corners in guesses:
            fitted = _fitted(image, small, scale, corners)
            if fitted is not None and (best is None or fitted[1] > best[1]):
                best = fitted
    return best


def _fitted(image, small, scale, corners_small):
    """Refine a first guess, move it onto the nearby grid the premium layout fits best; return
    (corners in photo pixels, score, line quality, layout misfit) or None. The score takes the
    misfit from the line quality so that a checkered cloth or a rack loses to the board."""
    # A first guess a row off would be bent by the refinement (one edge snaps to the frame):
    # move it onto the best-fitting grid first, then refine, then check again.
    shift, _ = _layout_shift(small, corners_small)
    if shift != (0, 0):
        corners_small = _shifted(corners_small, shift)
    refined = _refine_location(image, small, scale, corners_small)
    if refined is None:
        return None
    corners, quality = refined
    shift, misfit = _layout_shift(small, corners / scale)
    if shift != (0, 0):
        moved = _shifted(corners, shift)
        refined = _refine_location(image, small, scale, moved / scale)
        if refined is None:
            return None
        corners, quality = refined
    return corners, quality - MISFIT_WEIGHT * misfit, quality, misfit


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
    square = np.float32([[0, 0], [CELLS, 0], [CELLS, CELLS], [0, CELLS]])
    return cv2.getPerspectiveTransform(square, np.float32(corners))


def _check_image(image) -> None:
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3:
        raise PhotoError("not an image (expected a colour picture)")
    if image.dtype != np.uint8 or min(image.shape[:2]) < 32:
        raise PhotoError("not an image (too small or not 8-bit)")


def _shrink(image):
    """A copy at most WORK_SIDE px on its long side and the factor from it back to the photo."""
    side = max(image.shape[:2])
    if side <= WORK_SIDE:
        return image, 1.0
    small = shrink_to(image, WORK_SIDE / side)
    return small, side / max(small.shape[:2])


def shrink_to(image: np.ndarray, factor: float) -> np.ndarray:
    """Resize by `factor` < 1 with area averaging; a large factor first goes most of the way
    with a fast linear resize to twice the target (area averaging of a 12 MP photo costs as
    much as decoding it), so each output pixel still averages about 2×2 samples."""
    height, width = image.shape[:2]
    size = (max(1, round(width * factor)), max(1, round(height * factor)))
    if factor < 0.5:
        image = cv2.resize(image, (size[0] * 2, size[1] * 2), interpolation=cv2.INTER_LINEAR)
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

LSD_SIDE = 640  # px; line segments are looked for on a copy this size (cells stay ≥ ~12 px)
LSD_REFINE = cv2.LSD_REFINE_STD
MIN_SEGMENT = 8.0  # px; shorter LSD segments have too uncertain a direction
FAMILY_SPREAD = 22.0  # degrees a family's lines may turn across the photo (perspective)
VP_TOLERANCE = 0.02  # sine of the angle a segment may miss its vanishing point by
VP_TRIALS = 200  # RANSAC draws per family
COMB_BINS = 600  # bins of a family's position histogram
MAX_CELLS_ACROSS = 90  # a board whose cells are smaller than the photo's short side / this is not looked for


def _segments(small: np.ndarray):
    """Line segments of the shrunk photo as (ends, vectors, lengths, angles, centre, smallest
    cell) around the photo's centre, or None when there are too few."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    factor = min(1.0, LSD_SIDE / max(grey.shape))
    lsd_input = shrink_to(grey, factor) if factor < 1.0 else grey
    found = cv2.createLineSegmentDetector(LSD_REFINE, 1.0).detect(lsd_input)[0]
    if found is None or len(found) < 20:
        return None
    ends = found.reshape(-1, 2, 2).astype(np.float64) / factor
    centre = np.array([grey.shape[1], grey.shape[0]], np.float64) / 2
    ends = ends - centre
    vectors = ends[:, 1] - ends[:, 0]
    lengths = np.linalg.norm(vectors, axis=1)
    keep = lengths >= MIN_SEGMENT
    if keep.sum() < 20:
        return None
    angles = np.degrees(np.arctan2(vectors[keep, 1], vectors[keep, 0])) % 180
    smallest = min(grey.shape) / MAX_CELLS_ACROSS
    return ends[keep], vectors[keep], lengths[keep], angles, centre, smallest


def _lattices(segments, pairs) -> list[np.ndarray]:
    """Grid corners from line segments, one guess per pair of the strongest directions in
    `pairs` (indices into the up to three strongest, 0 the strongest): take the segments near
    both directions, find each family's vanishing point, undo the perspective so each family is
    parallel, then fit a 16-line comb to each family's positions. Stripes of a table or a cloth
    can outweigh one of the grid's directions, hence the other pairs."""
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
        corners = _comb_lattice(ends, lengths, families, points, centre, smallest)
        if corners is not None:
            found.append(corners)
    return found


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
    towards = trials[:, None, :2] - trials[:, None, 2:] * mids[None]  # (trial, segment, 2)
    sine = np.abs(units[None, :, 0] * towards[..., 1] - units[None, :, 1] * towards[..., 0])
    inliers = sine < VP_TOLERANCE * (np.linalg.norm(towards, axis=2) + 1e-12)
    best_mask = inliers[int(np.argmax(inliers @ lengths))]
    if best_mask.sum() < 6:
        return None
    weighted = lines[best_mask] * np.sqrt(lengths[best_mask])[:, None]
    _, basis = np.linalg.eigh(weighted.T @ weighted)
    point = basis[:, 0]
    return np.array([point[0] * scale, point[1] * scale, point[2]])


def _comb_lattice(ends, lengths, families, points, centre, smallest):
    """Send the horizon (the line through both vanishing points) to infinity, so each family
    becomes parallel and evenly spaced, and fit a comb to each family's line positions."""
    horizon = np.cross(points[0], points[1])
    if abs(horizon[2]) < 1e-12:
        return None
    horizon = horizon / horizon[2]
    affine = np.array([[1, 0, 0], [0, 1, 0], horizon], np.float64)
    mids = (ends[:, 0] + ends[:, 1]) / 2
    flat_mids = _apply(affine, mids)
    flat_ends = _apply(affine, ends.reshape(-1, 2)).reshape(-1, 2, 2)
    flat_lengths = np.linalg.norm(flat_ends[:, 1] - flat_ends[:, 0], axis=1)
    lines = []
    for members, point in zip(families, points, strict=True):
        direction = (affine @ point)[:2]
        direction = direction / (np.linalg.norm(direction) + 1e-12)
        normal = np.array([-direction[1], direction[0]])
        at = flat_mids[members] @ normal
        weight = flat_lengths[members]
        comb = _comb_of_positions(at, weight, smallest)
        if comb is None:
            return None
        start, period = comb
        lines.append((normal, start, start + CELLS * period))
    (n1, a0, a1), (n2, b0, b1) = lines
    flat_corners = np.array([_meet(n1, a, n2, b) for a, b in ((a0, b0), (a1, b0), (a1, b1), (a0, b1))])
    corners = _apply(np.linalg.inv(affine), flat_corners) + centre
    return order_corners(corners)


def _comb_of_positions(at, weight, smallest):
    """(first line, period) of the best 16-line comb through weighted 1D line positions."""
    low, high = np.percentile(at, 1) - 5, np.percentile(at, 99) + 5
    if high - low < 40 or high - low > 20000:
        return None
    width = max(1.0, (high - low) / COMB_BINS)  # bin width: keeps the comb search short
    count = int((high - low) / width) + 1
    hist = np.bincount(np.clip(((at - low) / width).astype(int), 0, count - 1), weights=weight,
                       minlength=count).astype(np.float32)
    hist = cv2.GaussianBlur(hist.reshape(1, -1), (0, 0), sigmaX=1.0).ravel()
    offset, period, _ = _best_comb(hist, count / CELLS * 1.15, max(3.0, smallest / width))
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
        comb = _best_comb(profile, span / (CELLS + 1) * 1.15, span * MIN_GRID_SHARE / CELLS)
        if comb is None:
            return None
        combs.append(comb)
    (x0, px, sx), (y0, py, sy) = combs
    x1, y1 = x0 + CELLS * px, y0 + CELLS * py
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
    """Best (offset, period, score) over `periods`, then refined around the winner."""
    best = (0.0, 0.0, -np.inf)
    for period in periods:
        step = max(1.0, period / 6)
        offset, score = _comb_scores(padded, pad, period, np.arange(-3 * period, n, step))
        if score > best[2]:
            best = (offset, period, score)
    offset, period, _ = best
    reach = max(1.0, period / 6)
    for fine in np.linspace(period * 0.97, period * 1.03, 13):  # around the coarse winner
        offsets = np.arange(offset - reach, offset + reach, 0.25)
        off, score = _comb_scores(padded, pad, fine, offsets)
        if score > best[2]:
            best = (off, fine, score)
    return best


def _comb_scores(padded, pad, period, offsets):
    """Best (offset, score) of a comb: lines count for, half-cell points against."""
    taps = np.concatenate([np.arange(LINES) * period, (np.arange(CELLS) + 0.5) * period])
    weights = np.concatenate([np.ones(LINES), -np.full(CELLS, LINES / CELLS)])
    at = offsets[:, None] + taps[None, :] + pad
    # a coarser or refined period can reach past the padding: read zeros there
    base = np.clip(np.floor(at).astype(np.intp), 0, len(padded) - 2)
    frac = at - base
    values = padded[base] * (1 - frac) + padded[base + 1] * frac
    scores = values @ weights
    best = int(np.argmax(scores))
    return float(offsets[best]), float(scores[best])


# --- refinement against the grid lines ----------------------------------------------------------

REFINE_ROUNDS = (0.45, 0.25, 0.15)  # search half-widths (cells) of the refinement rounds
RANSAC_DRAWS = 300  # most line samples are right, so few draws find the consensus
ON_LINE = 0.1  # cells; a line sample this close to the fitted line counts for the quality
LINE_CONTRAST = 2.0  # a line piece must be this many times stronger than the cells beside it
NOISE_FLOOR = 2.0  # grey levels per px; gradient below this is sensor noise


def _refine_location(image, small, scale, corners_small, rounds=REFINE_ROUNDS):
    """Snap the grid to its lines, first on the shrunk copy, then on the photo if cells are small
    there. Returns (corners in photo pixels, quality) or None."""
    corners = np.float32(corners_small)
    source, factor = small, 1.0
    if _cell_size(corners) < VIEW_CELL and scale > 1.0:
        source, factor = image, scale
    corners = corners * factor
    for reach in rounds:  # the clean pieces are found anew each round: the strips need a close fit
        fitted = _snap_to_lines(source, corners, reach, _clean_pieces(small, corners / factor))
        if fitted is None:
            return None
        corners, _ = fitted
    return corners * (scale / factor), _line_contrast(source, corners)


def _line_contrast(source, corners) -> float:
    """Share of the grid's line pieces (16 lines × 15 cells, both ways) that stand out from the
    middles of the cells beside them: the fit's quality, near 0 on a random texture."""
    cell, margin = VIEW_CELL, 1
    view, _ = _grid_view(source, corners, cell, margin)
    shares = []
    for grad in _line_evidence(view):
        grad = grad if len(shares) == 0 else grad.T
        band = slice(int(0.2 * cell), int(0.8 * cell))
        rows = grad[margin * cell:(margin + CELLS) * cell].reshape(CELLS, cell, -1)[:, band].mean(1)
        columns = rows.reshape(CELLS, CELLS + 2 * margin, cell)
        middles = columns[:, :, int(0.3 * cell):int(0.7 * cell)].mean(axis=2)  # (segment, cell)
        at = (margin + np.arange(LINES)) * cell
        near = np.stack([rows[:, a - 2:a + 3].max(axis=1) for a in at], axis=1)  # (segment, line)
        beside = (middles[:, margin - 1:margin + CELLS] + middles[:, margin:margin + CELLS + 1]) / 2
        shares.append(near > LINE_CONTRAST * beside + NOISE_FLOOR)
    return float(np.mean(shares))


def _cell_size(corners: np.ndarray) -> float:
    sides = [np.linalg.norm(corners[i] - corners[(i + 1) % 4]) for i in range(4)]
    return float(np.mean(sides)) / CELLS


def _grid_view(source: np.ndarray, corners: np.ndarray, cell: int, margin: int):
    """The grid warped top-down with `cell` px per cell and `margin` cells around, and the
    homography from view pixels to source pixels."""
    to_source = grid_homography(corners) @ np.array(
        [[1 / cell, 0, -margin], [0, 1 / cell, -margin], [0, 0, 1]], np.float64)
    side = (CELLS + 2 * margin) * cell
    view = cv2.warpPerspective(source, to_source, (side, side),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE)
    return view, to_source


def _snap_to_lines(source, corners, reach, clean=None):
    """One round: find each grid line's true position in every cell it borders, fit a homography
    through them (only the `clean` pieces when there are enough); returns (new corners, share of
    samples on their line) or None."""
    cell, margin = VIEW_CELL, 1
    view, to_source = _grid_view(source, corners, cell, margin)
    grad_x, grad_y = _line_evidence(view)
    half = int(round(reach * cell))
    offsets_x, strength_x = _line_offsets(grad_x, cell, margin, half)
    offsets_y, strength_y = _line_offsets(grad_y.T, cell, margin, half)
    lines, segments = np.meshgrid(np.arange(LINES), np.arange(CELLS) + 0.5, indexing="ij")
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
    if clean is not None and (strong & np.concatenate([part.ravel() for part in clean])).sum() >= MIN_CLEAN:
        used = strong & np.concatenate([part.ravel() for part in clean])
    homography, _ = cv2.findHomography(snapped[used], image_pts[used], cv2.RANSAC,
                                       max(1.0, 0.12 * _cell_size(corners)), maxIters=RANSAC_DRAWS)
    if homography is None:
        return None
    square = np.float32([[[0, 0], [CELLS, 0], [CELLS, CELLS], [0, CELLS]]])
    new_corners = cv2.perspectiveTransform(square, homography)[0]
    offsets = np.abs(np.concatenate([offsets_x.ravel(), offsets_y.ravel()])) / cell
    on_line = (offsets < ON_LINE) & strong
    return np.float32(new_corners), float(on_line.mean())


def _line_offsets(grad, cell, margin, half):
    """For each of the 16 vertical lines and 15 cells along it: the sub-pixel offset of the
    strongest evidence within ±half px of where the line should be, and its strength."""
    band = slice(int(0.2 * cell), int(0.8 * cell))
    rows = grad[margin * cell:(margin + CELLS) * cell].reshape(CELLS, cell, -1)[:, band].mean(1)
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
    strengths = windows.max(axis=2) - np.median(windows, axis=2)
    return offsets, strengths


CLEAN_STEP = 18.0  # Lab units a cell may differ from its kind's usual colour and count as empty
INSET_CELL = 16  # px per cell when looking for inset premium squares
INSET_SHARE = 0.55  # strip this much nearer the plain colour than the square's: printed inset
MIN_CLEAN = 60  # clean line pieces needed to fit on them alone
PLAIN_CELLS = np.array([[a == b == "." for a, b in zip(*rows, strict=True)]
                        for rows in zip(ERUDIT_LAYOUT, SCRABBLE_LAYOUT, strict=True)])


def _clean_pieces(small, corners_small):
    """Masks (line, piece) of the vertical and horizontal line pieces between two empty cells,
    and plain ones when the premium squares are printed inset: the sides of tiles and the edges
    of inset squares lie close to the lines and would pull the fit. (Leaving out the neighbours
    of tiles too leaves too few pieces; squares printed up to the lines mark them well.)"""
    colours, strips = _cell_colours(small, corners_small, 0, INSET_CELL, strips=True)
    kinds = LAYOUT_KINDS[int(np.argmax(_layout_fits(colours)[:, 0, 0]))]
    occupied = np.zeros((CELLS, CELLS), bool)
    for mask in kinds:
        members = colours[mask]
        occupied[mask] = np.linalg.norm(members - np.median(members, axis=0), axis=1) > CLEAN_STEP
    usable = ~occupied
    premium = ~PLAIN_CELLS & usable
    if premium.any() and (PLAIN_CELLS & usable).any():
        # inset squares: the strip just inside their cells shows the plain colour, not theirs
        plain = np.median(colours[PLAIN_CELLS & usable], axis=0)
        to_square = np.median(np.linalg.norm(strips[premium] - colours[premium], axis=1))
        to_plain = np.median(np.linalg.norm(strips[premium] - plain, axis=1))
        if to_square > INSET_SHARE * (to_square + to_plain):
            usable &= PLAIN_CELLS
    padded = np.pad(usable, 1, constant_values=True)  # beyond: the margin
    vertical = (padded[1:-1, :-1] & padded[1:-1, 1:]).T
    horizontal = padded[:-1, 1:-1] & padded[1:, 1:-1]
    return vertical, horizontal


# --- which of the nearby grids matches the premium layout ---------------------------------------

LAYOUT_CELL = 12  # px per cell when comparing cell colours
MAX_SHIFT = 3  # cells the comb may be off (a printed margin or frame taken for a row of cells)
SHIFT_GAIN = 0.05  # layout fit a shifted grid must gain to replace the fitted one
LIGHTNESS_WEIGHT = 0.5  # shading moves lightness more than hue
COLOUR_CAP = 40.0  # Lab units; a tile or a hand counts no more than this against a fit
LAYOUT_KINDS = [
    [np.array([[ch == kind for ch in row] for row in layout]) for kind in sorted(set("".join(layout)))]
    for layout in (ERUDIT_LAYOUT, SCRABBLE_LAYOUT)
]


def _layout_shift(image, corners):
    """The printed premium squares sit in the same cells on every board (both known layouts);
    a grid off by a row or column (a printed margin or a row of tiles taken for cells) puts
    them in the wrong cells. Return the (dx, dy) in cells of the nearby grid whose cell colours
    the layout explains best, and that grid's misfit (1 - share of colour variance explained)."""
    fits = _layout_fits(_cell_colours(image, corners, MAX_SHIFT)).max(axis=0)  # (dy, dx)
    dy, dx = np.unravel_index(int(np.argmax(fits)), fits.shape)
    if fits[dy, dx] > fits[MAX_SHIFT, MAX_SHIFT] + SHIFT_GAIN:
        return (int(dx) - MAX_SHIFT, int(dy) - MAX_SHIFT), 1 - float(fits[dy, dx])
    return (0, 0), 1 - float(fits[MAX_SHIFT, MAX_SHIFT])


def _cell_colours(image, corners, margin, cell=LAYOUT_CELL, strips=False):
    """Mean Lab colour of the middle of each cell of the grid and `margin` cells around it;
    with `strips` also of a strip one pixel inside each cell's edges."""
    view, _ = _grid_view(image, corners, cell, margin)
    lab = cv2.cvtColor(view.astype(np.float32) / 255, cv2.COLOR_BGR2LAB)
    lab *= np.float32([LIGHTNESS_WEIGHT, 1, 1])
    count = CELLS + 2 * margin
    cells = lab.reshape(count, cell, count, cell, 3)
    quarter = cell // 4
    middles = cells[:, quarter:-quarter, :, quarter:-quarter].mean(axis=(1, 3))
    if not strips:
        return middles
    ring = cells[:, 1:-1, :, 1:-1].sum(axis=(1, 3)) - cells[:, 2:-2, :, 2:-2].sum(axis=(1, 3))
    return middles, ring / ((cell - 2) ** 2 - (cell - 4) ** 2)


def _layout_fits(colours):
    """(layout, dy, dx) share of the colour spread of every 15×15 window of `colours` that the
    layout's kinds explain (1 - within / total), each cell's distance capped so that tiles count
    like any other misfit."""
    windows = np.lib.stride_tricks.sliding_window_view(colours, (CELLS, CELLS), axis=(0, 1))
    windows = np.moveaxis(windows, 2, -1)  # (dy, dx, row, column, channel)
    flat = windows.reshape(*windows.shape[:2], -1, 3)
    centre = np.median(flat, axis=2)
    total = np.minimum(np.linalg.norm(flat - centre[:, :, None], axis=3), COLOUR_CAP).sum(axis=2)
    fits = []
    for kinds in LAYOUT_KINDS:
        within = 0.0
        for mask in kinds:
            members = windows[:, :, mask]
            spread = np.linalg.norm(members - np.median(members, axis=2, keepdims=True), axis=3)
            within = within + np.minimum(spread, COLOUR_CAP).sum(axis=2)
        fits.append(1 - within / (total + 1e-6))
    return np.array(fits)


def _shifted(corners, shift):
    dx, dy = shift
    square = np.float32([[[dx, dy], [CELLS + dx, dy], [CELLS + dx, CELLS + dy], [dx, CELLS + dy]]])
    return cv2.perspectiveTransform(square, grid_homography(corners))[0]


# --- final checks -------------------------------------------------------------------------------


def _checked_location(image, small, scale, corners, quality) -> Location:
    height, width = image.shape[:2]
    corners = order_corners(corners)
    cell = _cell_size(corners)
    slack = CUT_OFF_TOLERANCE * cell
    outside = (corners[:, 0] < -slack) | (corners[:, 0] > width - 1 + slack) | \
        (corners[:, 1] < -slack) | (corners[:, 1] > height - 1 + slack)
    if outside.any():
        raise PhotoError("board cut off at the photo's edge")
    smallest = _smallest_cell(corners)
    if smallest < MIN_CELL_PX:
        raise PhotoError(f"board too small to read (cells of {smallest:.0f} px)")
    # the shrunk copy shows edge widths as well once its cells are large enough, and is faster
    source, factor = (small, 1 / scale) if cell / scale >= EDGE_VIEW_CELL else (image, 1.0)
    width_cells = _edge_width(source, corners * factor)
    if width_cells > MAX_EDGE_WIDTH:
        raise PhotoError("board too blurred")
    return Location(corners=np.float32(corners), cell_px=cell, quality=quality)


def _smallest_cell(corners: np.ndarray) -> float:
    sides = [np.linalg.norm(corners[i] - corners[(i + 1) % 4]) for i in range(4)]
    return float(min(sides)) / CELLS


def _edge_width(image, corners) -> float:
    """How wide (in cells) the board's sharpest edges are: its contrast over its steepest
    gradient. A sharp photo gives ~0.1 cell; blur of σ cells widens edges to about 2.5σ."""
    cell = int(max(8, min(16, _cell_size(corners))))  # 16 px per cell resolve 0.1-cell edges
    view, _ = _grid_view(image, corners, cell, 0)
    grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grad = np.hypot(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3),
                    cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)) / 8
    steepest = float(np.percentile(grad, 99))
    contrast = float(np.percentile(grey, 97) - np.percentile(grey, 3))
    return contrast / (steepest + 1e-6) / cell
