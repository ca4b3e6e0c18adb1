"""The grid's geometry shared by every stage: the copies of the photo the search works on,
corners in image order, the homography of a grid, a grid moved along its own lines, and the
top-down view of a grid."""


from typing import NamedTuple

import cv2
import numpy as np

from engine.errors import PhotoError
from engine.ruleset import SIZE
from vision.locate.params import LocateParams
from vision.photo import Reduced

LINES = SIZE + 1


class Level(NamedTuple):
    """One copy of the photo the search works on, `factor` times smaller than the photo."""

    image: np.ndarray
    factor: float


def evened_out(p: LocateParams, image):
    """The photo with its lightness evened out locally (CLAHE on Lab's L): a board in a
    shadow or a dim corner shows its lines as a lit one does."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    lab[..., 0] = cv2.createCLAHE(clipLimit=p.even_clip, tileGridSize=(8, 8)).apply(lab[..., 0])
    return cv2.cvtColor(lab, cv2.COLOR_LAB2BGR).view(type(image))


def rescale(points, source_factor: float, target_factor: float):
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


def check_image(image) -> None:
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3:
        raise PhotoError("not an image (expected a colour picture)")
    if image.dtype != np.uint8:
        raise PhotoError("not an image (not 8-bit)")
    if min(image.shape[:2]) < 32:
        raise PhotoError("photo too small to hold a board")


def pyramid(p: LocateParams, image):
    """[(copy, factor it is smaller than the photo)], from the photo itself down to a copy
    work_side px on its long side (unless the photo is smaller). A large photo is halved exactly
    while at least twice that (fast: OpenCV's 2×2 area resize costs a tenth of a general one),
    then resized linearly: its pixels already average 2×2 photo pixels, so the last step, by
    at most half, aliases little. So is a photo decoded reduced (a Reduced); any other is
    area-averaged (several times slower)."""
    levels = [Level(image, 1.0)]
    while max(levels[-1][0].shape[:2]) >= 2 * p.work_side:
        levels.append(Level(halve(levels[-1].image), levels[-1].factor * 2))
    last, factor = levels[-1]
    if max(last.shape[:2]) > p.work_side:
        size = (round(last.shape[1] * p.work_side / max(last.shape[:2])),
                round(last.shape[0] * p.work_side / max(last.shape[:2])))
        averaged = factor > 1 or isinstance(image, Reduced)
        small = cv2.resize(last, size, interpolation=cv2.INTER_LINEAR if averaged
                           else cv2.INTER_AREA)
        levels.append(Level(small, factor * last.shape[1] / size[0]))
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


def apply(matrix, points):
    points = np.asarray(points, np.float64).reshape(-1, 2)
    mapped = np.c_[points, np.ones(len(points))] @ matrix.T
    return mapped[:, :2] / mapped[:, 2:3]


def meet(n1, a, n2, b):
    return np.linalg.solve(np.array([n1, n2]), np.array([a, b]))


def level_for(levels, corners_small, cell_px):
    """The smallest (copy, factor) of `levels` whose cells span at least `cell_px`."""
    cell_photo = cell_size(corners_small) * levels[-1].factor
    for level, factor in reversed(levels):
        if cell_photo / factor >= cell_px:
            return level, factor
    return levels[0]


def cell_size(corners: np.ndarray) -> float:
    """Mean side of the grid's cells, in the corners' pixels."""
    sides = [np.linalg.norm(corners[i] - corners[(i + 1) % 4]) for i in range(4)]
    return float(np.mean(sides)) / SIZE


def grid_view(source: np.ndarray, corners: np.ndarray, cell: int, margin: int):
    """The grid warped top-down with `cell` px per cell and `margin` cells around, and the
    homography from view pixels to source pixels."""
    to_source = grid_homography(corners) @ np.array(
        [[1 / cell, 0, -margin], [0, 1 / cell, -margin], [0, 0, 1]], np.float64)
    side = (SIZE + 2 * margin) * cell
    view = cv2.warpPerspective(source, to_source, (side, side),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE)
    return view, to_source


def shifted(corners, shift):
    return rectangle(corners, np.array(shift), np.array(shift) + SIZE)


def rectangle(corners, low, high):
    """Corners (in `corners`' pixels) of the rectangle from `low` to `high` (x, y) in cells of
    the grid `corners`: the grid moved, scaled or stretched along its own lines."""
    square = np.float32([[[low[0], low[1]], [high[0], low[1]], [high[0], high[1]],
                          [low[0], high[1]]]])
    return cv2.perspectiveTransform(square, grid_homography(corners))[0]


def smallest_cell(corners: np.ndarray) -> float:
    sides = [np.linalg.norm(corners[i] - corners[(i + 1) % 4]) for i in range(4)]
    return float(min(sides)) / SIZE


def percentiles(values: np.ndarray, shares) -> list[float]:
    """Nearest-rank percentiles: one partition, cheaper than np.percentile's interpolation."""
    flat = values.ravel()
    ranks = [min(len(flat) - 1, int(share / 100 * len(flat))) for share in shares]
    ordered = np.partition(flat, ranks)
    return [float(ordered[rank]) for rank in ranks]
