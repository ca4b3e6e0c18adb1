"""Line segments of the photo (LSD), the directions and vanishing points most of them follow,
the places where segments of two directions cross, and outlines of large blobs: the raw
material of the first guesses."""

from dataclasses import dataclass

import cv2
import numpy as np

from vision.locate.grid import order_corners, shrink_to
from vision.locate.params import LocateParams


def closer_regions(p: LocateParams, small):
    """grid_regions of the segments of the whole working copy, when larger than the last LSD
    side: a small board's lines (cells of ~6 px there) may be lost in the grain around it."""
    if max(small.shape[:2]) <= p.lsd_sides[-1]:
        return []
    return grid_regions(p, line_segments(p, small, max(small.shape[:2])), small.shape)


# --- outline candidates -------------------------------------------------------------------------


def outline_candidates(p: LocateParams, small: np.ndarray) -> list[np.ndarray]:
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
    return _distinct(quads)[:p.max_candidates]


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


@dataclass(frozen=True)
class Segments:
    """Line segments of the shrunk photo, around its centre: both ends, the vector from the
    first to the second, their lengths and directions (degrees, 0-180), and the smallest cell
    a board in the photo is looked for with (px)."""

    ends: np.ndarray      # (n, 2, 2)
    vectors: np.ndarray   # (n, 2)
    lengths: np.ndarray   # (n,)
    angles: np.ndarray    # (n,)
    centre: np.ndarray    # the shrunk photo's centre: add it for the photo's pixels
    smallest: float

    def where(self, keep: np.ndarray) -> "Segments":
        """The segments `keep` marks."""
        return Segments(self.ends[keep], self.vectors[keep], self.lengths[keep],
                        self.angles[keep], self.centre, self.smallest)


def line_segments(p: LocateParams, small: np.ndarray, side: int, skim: bool = False):
    """Line segments of the shrunk photo, looked for on a copy `side` px long (Segments), or
    None when there are too few (with `skim`, at once where the copy is too plain to hold
    enough)."""
    factor = min(1.0, side / max(small.shape[:2]))
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    grey = shrink_to(grey, factor) if factor < 1.0 else grey
    if skim and _edge_share(p, grey) < p.plain_copy:
        return None
    found = cv2.createLineSegmentDetector(p.lsd_refine, 1.0).detect(grey)[0]
    if found is None or len(found) < 20:
        return None
    ends = found.reshape(-1, 2, 2).astype(np.float64) / factor
    centre = np.array([small.shape[1], small.shape[0]], np.float64) / 2
    ends = ends - centre
    vectors = ends[:, 1] - ends[:, 0]
    lengths = np.linalg.norm(vectors, axis=1)
    keep = lengths * factor >= p.min_segment
    if keep.sum() < 20:
        return None
    angles = np.degrees(np.arctan2(vectors[keep, 1], vectors[keep, 0])) % 180
    smallest = min(small.shape[:2]) / p.max_cells_across
    return Segments(ends[keep], vectors[keep], lengths[keep], angles, centre, smallest)


def _edge_share(p: LocateParams, grey: np.ndarray) -> float:
    """Share of pixels whose neighbours differ by more than edge_step. LSD costs nearly the
    same per pixel however few segments it finds (4 ms at 320 px for 40 segments), and a copy
    this plain finds too few: of 600 `eval_locate` renders (as rendered, dim, in a shadow,
    from a chair) at 320 px none under 0.21 found min_quick_segments, and 211 of the 447 that
    found fewer were under plain_copy."""
    dx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=1)
    dy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=1)
    return float(np.count_nonzero(dx * dx + dy * dy > p.edge_step ** 2)) / grey.size


def aiming_at(points, mids, units, tolerance):
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


def direction_peaks(angles, lengths, count=3) -> list[int]:
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


def vanishing_point(p: LocateParams, ends, vectors, lengths, rng):
    """Homogeneous vanishing point most segment length points at (RANSAC, then least squares)."""
    scale = 1000.0
    p1 = np.c_[ends[:, 0] / scale, np.ones(len(ends))]
    p2 = np.c_[ends[:, 1] / scale, np.ones(len(ends))]
    lines = np.cross(p1, p2)
    lines /= np.linalg.norm(lines[:, :2], axis=1, keepdims=True)
    mids = (ends[:, 0] + ends[:, 1]) / 2 / scale
    units = vectors / lengths[:, None]
    chance = lengths / lengths.sum()
    first = rng.choice(len(lines), p.vp_trials, p=chance)
    second = rng.choice(len(lines), p.vp_trials, p=chance)
    trials = np.cross(lines[first], lines[second])
    norms = np.linalg.norm(trials, axis=1)
    trials = trials[norms > 1e-12] / norms[norms > 1e-12, None]
    if len(trials) == 0:
        return None
    inliers = aiming_at(trials, mids, units, p.vp_tolerance)
    best_mask = inliers[int(np.argmax(inliers @ lengths))]
    if best_mask.sum() < 6:
        return None
    weighted = lines[best_mask] * np.sqrt(lengths[best_mask])[:, None]
    _, basis = np.linalg.eigh(weighted.T @ weighted)
    point = basis[:, 0]
    return np.array([point[0] * scale, point[1] * scale, point[2]])


def grid_regions(p: LocateParams, segments, shape) -> list[Segments]:
    """The segments of each of the few places where many segments of one direction are crossed
    by many of another, the strongest first. Stripes of a cloth or of wood run one way: over a
    whole photo they can outweigh the lines of a small board and hide its directions. Planks
    crossed by grain cross too, but at other directions than a turned board, so each direction
    is mapped apart."""
    if segments is None:
        return []
    ends, centre = segments.ends, segments.centre
    crossing = _crossing_maps(p, segments, shape)
    found = []
    for direction in crossing:
        mask = (direction > p.grid_share * crossing.max()).astype(np.uint8)
        count, labels = cv2.connectedComponents(mask)
        weights = np.bincount(labels.ravel(), weights=direction.ravel(), minlength=count)
        found.extend((weights[label], labels == label) for label in range(1, count))
    found.sort(key=lambda item: -item[0])
    mids = ((ends[:, 0] + ends[:, 1]) / 2 + centre) / p.grid_bin
    rows = np.clip(mids[:, 1].astype(int), 0, crossing.shape[1] - 1)
    columns = np.clip(mids[:, 0].astype(int), 0, crossing.shape[2] - 1)
    kept, subsets = [], []
    for _, region in found:
        if any((region & other).sum() > p.same_region * region.sum() for other in kept):
            continue
        kept.append(region)
        inside = cv2.dilate(region.astype(np.uint8), np.ones((5, 5), np.uint8))[rows, columns] > 0
        if inside.sum() >= 20:
            subsets.append(segments.where(inside))
        if len(kept) == p.grid_regions:
            break
    return subsets


def _crossing_maps(p: LocateParams, segments, shape) -> np.ndarray:
    """(direction, y, x) per grid_bin cell of the shrunk photo: the segment length nearby in
    that direction, capped by that in the strongest direction crossing it by at least 45°."""
    ends, vectors, lengths = segments.ends, segments.vectors, segments.lengths
    angles, centre = segments.angles, segments.centre
    height, width = shape[0] // p.grid_bin + 1, shape[1] // p.grid_bin + 1
    # sample each segment every half bin, so that a long line counts all along its length
    counts = np.ceil(lengths / (p.grid_bin / 2)).astype(int) + 1
    owner = np.repeat(np.arange(len(lengths)), counts)
    along = (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + 0.5) / \
        counts[owner]
    points = (ends[owner, 0] + vectors[owner] * along[:, None] + centre) / p.grid_bin
    bins = np.round(angles / (180 / p.directions)).astype(int) % p.directions
    density = np.zeros((p.directions, height, width), np.float32)
    np.add.at(density, (bins[owner], np.clip(points[:, 1].astype(int), 0, height - 1),
                        np.clip(points[:, 0].astype(int), 0, width - 1)), (lengths / counts)[owner])
    density = np.stack([cv2.GaussianBlur(part, (0, 0), p.grid_blur) for part in density])
    density = (np.roll(density, 1, 0) + 2 * density + np.roll(density, -1, 0)) / 4  # perspective
    crossing = np.empty_like(density)
    for direction in range(p.directions):
        others = [(direction + k) % p.directions
                  for k in range(p.crossing_bins, p.directions - p.crossing_bins + 1)]
        crossing[direction] = np.minimum(density[direction], density[others].max(axis=0))
    return crossing
