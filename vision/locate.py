"""Find the printed 15×15 playing grid in a photo.

    >>> where = locate_board(load_photo("turn3.jpg"))
    >>> where.corners.shape, round(where.cell_px)
    ((4, 2), 71)

The search runs on a copy shrunk to about WORK_SIDE pixels: outline candidates (board edges,
frames, the photo's own border) each get a comb of 16 equally spaced lines fitted to the line
evidence inside them; the best comb is then refined against the grid lines themselves (a
homography fitted to where each line really lies), so the corners hold even where tiles, hands
or a printed margin hide the outline.
"""

from dataclasses import dataclass

import cv2
import numpy as np

from engine.errors import PhotoError

CELLS = 15
LINES = CELLS + 1
WORK_SIDE = 1000  # px; enough to resolve grid lines of a board filling a quarter of the frame
MIN_CELL_PX = 14  # px in the photo; smaller cells hold too few pixels to tell letters apart
MIN_QUALITY = 0.25  # share of grid-line samples that must sit on line evidence
MAX_EDGE_WIDTH = 0.35  # cell units; blurrier grid lines mean letters are unreadable
CUT_OFF_TOLERANCE = 0.3  # cells a grid corner may lie outside the photo (rounding, cropped photos)
VIEW_CELL = 24  # px per cell in the views the comb and the refinement work on
MAX_CANDIDATES = 12  # outline candidates tried, largest first
REFINED_CANDIDATES = 3  # best combs that get the full refinement
SURE_QUALITY = 0.45  # line quality minus asymmetry above which the lattice guess is not second-guessed


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
    best = None
    lattice = _lattice_candidate(small)
    if lattice is not None:
        best = _fitted(image, small, scale, lattice)
    if best is None or best[1] < SURE_QUALITY:
        fits = [fit for fit in map(lambda quad: _comb_in_quad(small, quad),
                                   _outline_candidates(small)) if fit is not None]
        fits.sort(key=lambda fit: -fit[1])
        for corners, _ in fits[:REFINED_CANDIDATES]:
            fitted = _fitted(image, small, scale, corners)
            if fitted is not None and (best is None or fitted[1] > best[1]):
                best = fitted
    if best is None or best[2] < MIN_QUALITY:
        raise PhotoError("no board found")
    corners, _, quality = best
    return _checked_location(image, corners, quality)


def _fitted(image, small, scale, corners_small):
    """Refine a first guess, move it onto the most symmetric nearby grid; return
    (corners in photo pixels, score, line quality) or None. The score adds symmetry to the line
    quality so that a checkered cloth or a rack loses to the board."""
    refined = _refine_location(image, small, scale, corners_small)
    if refined is None:
        return None
    corners, quality = refined
    shift, asymmetry = _symmetric_shift(image, corners)
    if shift != (0, 0):
        moved = _shifted(corners, shift)
        refined = _refine_location(image, small, scale, moved / scale, REFINE_ROUNDS[-2:])
        if refined is None:
            return None
        corners, quality = refined
    return corners, quality - asymmetry, quality


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
    scale = side / WORK_SIDE
    if scale >= 2.5:  # halve first: INTER_AREA is much faster on an integer factor
        step = int(scale // 2)
        image = cv2.resize(image, None, fx=1 / step, fy=1 / step, interpolation=cv2.INTER_AREA)
    height, width = image.shape[:2]
    factor = WORK_SIDE / max(height, width)
    size = (max(1, round(width * factor)), max(1, round(height * factor)))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return small, side / max(small.shape[:2])


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

MIN_SEGMENT = 8.0  # px; shorter LSD segments have too uncertain a direction
FAMILY_SPREAD = 22.0  # degrees a family's lines may turn across the photo (perspective)
VP_TOLERANCE = 0.02  # sine of the angle a segment may miss its vanishing point by
VP_TRIALS = 200  # RANSAC draws per family
COMB_BINS = 600  # bins of a family's position histogram


def _lattice_candidate(small: np.ndarray):
    """Grid corners from line segments: split them into the two directions the most segment
    length follows, find each family's vanishing point, undo the perspective so each family is
    parallel, then fit a 16-line comb to each family's positions. None if no clear lattice."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    found = cv2.createLineSegmentDetector().detect(grey)[0]
    if found is None or len(found) < 20:
        return None
    ends = found.reshape(-1, 2, 2).astype(np.float64)
    centre = np.array([grey.shape[1], grey.shape[0]], np.float64) / 2
    ends = ends - centre
    vectors = ends[:, 1] - ends[:, 0]
    lengths = np.linalg.norm(vectors, axis=1)
    keep = lengths >= MIN_SEGMENT
    ends, vectors, lengths = ends[keep], vectors[keep], lengths[keep]
    if len(lengths) < 20:
        return None
    angles = np.degrees(np.arctan2(vectors[:, 1], vectors[:, 0])) % 180
    families = _two_directions(angles, lengths)
    if families is None:
        return None
    rng = np.random.default_rng(0)
    points = []
    for members in families:
        point = _vanishing_point(ends[members], vectors[members], lengths[members], rng)
        if point is None:
            return None
        points.append(point)
    return _comb_lattice(ends, lengths, families, points, centre)


def _two_directions(angles, lengths):
    """Masks of the segments near the two strongest directions (at least 30° apart)."""
    hist = np.bincount(np.round(angles).astype(int) % 180, weights=lengths, minlength=180)
    smooth = np.convolve(np.r_[hist[-3:], hist, hist[:3]], np.ones(7), "valid")
    first = int(np.argmax(smooth))
    gap = np.abs((np.arange(180) - first + 90) % 180 - 90)
    second = int(np.argmax(np.where(gap >= 30, smooth, -1)))
    masks = []
    for peak in (first, second):
        off = np.abs((angles - peak + 90) % 180 - 90)
        masks.append(off <= FAMILY_SPREAD)
    if min(mask.sum() for mask in masks) < 8:
        return None
    return masks


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
    best, best_mask = -1.0, None
    for _ in range(VP_TRIALS):
        i, j = rng.choice(len(lines), 2, replace=False, p=chance)
        point = np.cross(lines[i], lines[j])
        norm = np.linalg.norm(point)
        if norm < 1e-12:
            continue
        mask = _points_at(point / norm, mids, units)
        support = lengths[mask].sum()
        if support > best:
            best, best_mask = support, mask
    if best_mask is None or best_mask.sum() < 6:
        return None
    weighted = lines[best_mask] * np.sqrt(lengths[best_mask])[:, None]
    _, _, vt = np.linalg.svd(weighted)
    point = vt[-1]
    return np.array([point[0] * scale, point[1] * scale, point[2]])


def _points_at(point, mids, units):
    towards = point[None, :2] - point[2] * mids
    norm = np.linalg.norm(towards, axis=1) + 1e-12
    sine = np.abs(units[:, 0] * towards[:, 1] - units[:, 1] * towards[:, 0]) / norm
    return sine < VP_TOLERANCE


def _comb_lattice(ends, lengths, families, points, centre):
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
        comb = _comb_of_positions(at, weight)
        if comb is None:
            return None
        start, period = comb
        lines.append((normal, start, start + CELLS * period))
    (n1, a0, a1), (n2, b0, b1) = lines
    flat_corners = np.array([_meet(n1, a, n2, b) for a, b in ((a0, b0), (a1, b0), (a1, b1), (a0, b1))])
    corners = _apply(np.linalg.inv(affine), flat_corners) + centre
    return order_corners(corners)


def _comb_of_positions(at, weight):
    """(first line, period) of the best 16-line comb through weighted 1D line positions."""
    low, high = np.percentile(at, 1) - 5, np.percentile(at, 99) + 5
    if high - low < 40 or high - low > 20000:
        return None
    width = max(1.0, (high - low) / COMB_BINS)  # bin width: keeps the comb search short
    count = int((high - low) / width) + 1
    hist = np.bincount(np.clip(((at - low) / width).astype(int), 0, count - 1), weights=weight,
                       minlength=count).astype(np.float32)
    hist = cv2.GaussianBlur(hist.reshape(1, -1), (0, 0), sigmaX=1.0).ravel()
    offset, period, _ = _best_comb(hist, count / CELLS, max(4.0, MIN_CELL_PX / 3) / width)
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
    grad_x = cv2.GaussianBlur(grad_x.astype(np.float32), (0, 0), sigmaX=1.2, sigmaY=0.1)
    grad_y = cv2.GaussianBlur(grad_y.astype(np.float32), (0, 0), sigmaX=0.1, sigmaY=1.2)
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
    best = (0.0, 0.0, -np.inf)
    for period in np.geomspace(min_period, max_period, 60):
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
    offset, period, score = best
    return offset, period, score / LINES


def _comb_scores(padded, pad, period, offsets):
    """Best (offset, score) of a comb: lines count for, half-cell points against."""
    taps = np.concatenate([np.arange(LINES) * period, (np.arange(CELLS) + 0.5) * period])
    weights = np.concatenate([np.ones(LINES), -np.full(CELLS, LINES / CELLS)])
    at = offsets[:, None] + taps[None, :] + pad
    base = np.floor(at).astype(np.intp)
    frac = at - base
    values = padded[base] * (1 - frac) + padded[base + 1] * frac
    scores = values @ weights
    best = int(np.argmax(scores))
    return float(offsets[best]), float(scores[best])


# --- refinement against the grid lines ----------------------------------------------------------

REFINE_ROUNDS = (0.45, 0.3, 0.2, 0.15)  # search half-widths (cells) of the refinement rounds
ON_LINE = 0.1  # cells; a line sample this close to the fitted line counts for the quality


def _refine_location(image, small, scale, corners_small, rounds=REFINE_ROUNDS):
    """Snap the grid to its lines, first on the shrunk copy, then on the photo if cells are small
    there. Returns (corners in photo pixels, quality) or None."""
    corners = np.float32(corners_small)
    source, factor = small, 1.0
    if _cell_size(corners) < VIEW_CELL and scale > 1.0:
        source, factor = image, scale
    corners = corners * factor
    quality = 0.0
    for reach in rounds:
        fitted = _snap_to_lines(source, corners, reach)
        if fitted is None:
            return None
        corners, quality = fitted
    return corners * (scale / factor), quality


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


def _snap_to_lines(source, corners, reach):
    """One round: find each grid line's true position in every cell it borders, fit a homography
    through them; returns (new corners, share of samples on their line) or None."""
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
    strong = strengths > 0.5 * np.median(strengths)
    if strong.sum() < 16:
        return None
    homography, _ = cv2.findHomography(snapped[strong], image_pts[strong], cv2.RANSAC,
                                       max(1.0, 0.12 * _cell_size(corners)))
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


# --- which of the nearby grids is the symmetric one ----------------------------------------------

SYMMETRY_CELL = 12  # px per cell when comparing cell colours
MAX_SHIFT = 2  # cells the comb may be off (a printed margin or frame taken for a row of cells)
SHIFT_GAIN = 0.8  # a shifted grid must be this much more symmetric to replace the fitted one
COLOUR_STEP = 14.0  # Lab distance between cells of different kinds; shading stays below it


def _symmetric_shift(image, corners):
    """Premium layouts look the same under the 8 symmetries of the square; a grid off by a row or
    column (a printed margin taken for cells) does not. Return the (dx, dy) in cells of the most
    symmetric grid near the fitted one."""
    cell, margin = SYMMETRY_CELL, MAX_SHIFT
    view, _ = _grid_view(image, corners, cell, margin)
    lab = cv2.cvtColor(view.astype(np.float32) / 255, cv2.COLOR_BGR2LAB)
    count = CELLS + 2 * margin
    quarter = cell // 4
    cells = lab.reshape(count, cell, count, cell, 3)[:, quarter:-quarter, :, quarter:-quarter]
    colours = cells.mean(axis=(1, 3))
    scores = {}
    for dy in range(-margin, margin + 1):
        for dx in range(-margin, margin + 1):
            window = colours[margin + dy:margin + dy + CELLS, margin + dx:margin + dx + CELLS]
            scores[(dx, dy)] = _asymmetry(window)
    best = min(scores, key=scores.get)
    if scores[best] < SHIFT_GAIN * scores[(0, 0)]:
        return best, scores[best]
    return (0, 0), scores[(0, 0)]


def _asymmetry(colours: np.ndarray) -> float:
    images = [np.rot90(colours, k) for k in (1, 2, 3)]
    images += [colours[::-1], colours[:, ::-1], colours.transpose(1, 0, 2),
               colours[::-1, ::-1].transpose(1, 0, 2)]
    total = 0.0
    for other in images:
        distance = np.linalg.norm(colours - other, axis=2)
        total += float((distance > COLOUR_STEP).mean())
    return total / len(images)


def _shifted(corners, shift):
    dx, dy = shift
    square = np.float32([[[dx, dy], [CELLS + dx, dy], [CELLS + dx, CELLS + dy], [dx, CELLS + dy]]])
    return cv2.perspectiveTransform(square, grid_homography(corners))[0]


# --- final checks -------------------------------------------------------------------------------


def _checked_location(image, corners, quality) -> Location:
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
    width_cells = _edge_width(image, corners)
    if width_cells > MAX_EDGE_WIDTH:
        raise PhotoError("board too blurred")
    return Location(corners=np.float32(corners), cell_px=cell, quality=quality)


def _smallest_cell(corners: np.ndarray) -> float:
    sides = [np.linalg.norm(corners[i] - corners[(i + 1) % 4]) for i in range(4)]
    return float(min(sides)) / CELLS


def _edge_width(image, corners) -> float:
    """How wide (in cells) the grid lines' edges look: the folded gradient profile's area over its
    peak. Sharp photos give a narrow peak; blur spreads it."""
    cell = 32
    view, _ = _grid_view(image, corners, cell, 0)
    grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grad = np.abs(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3))
    folded = grad.mean(axis=0)[: CELLS * cell].reshape(CELLS, cell).mean(axis=0)
    grad = np.abs(cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3))
    folded = folded + grad.mean(axis=1)[: CELLS * cell].reshape(CELLS, cell).mean(axis=0)
    folded = np.roll(folded, cell // 2)  # the lines fold to the middle
    floor = np.median(folded)
    peak = folded.max() - floor
    if peak <= 1e-6:
        return 1.0
    return float(np.clip(folded - floor, 0, None).sum() / peak / cell)
