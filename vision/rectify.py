"""Warp the playing grid to a top-down square with a fixed cell size.

    >>> top = rectify(image, locate_board(image).corners)
    >>> top.shape   # (15 + 2 * 0.5) * CELL_PX on each side
    (1024, 1024, 3)

Cell (r, c) (0-based, rows and columns counted from the first corner given, along the first
side) spans x in [(margin + c) * cell_px, (margin + c + 1) * cell_px) and likewise in y.
"""

import cv2
import numpy as np

from engine.ruleset import SIZE
from vision.locate import grid_homography

CELL_PX = 64  # px per cell in the rectified view; ~50 px crops are what cell classifiers expect
SHRINK_ABOVE = 1.4  # photo cells this many times larger than cell_px are shrunk first (no aliasing)
BGRA_AREA = 1.5  # a source up to this many times the view's area is warped as BGRA (faster)


def rectify(image: np.ndarray, corners, cell_px: int = CELL_PX, margin: float = 0.5) -> np.ndarray:
    """The grid seen from above: a square of (15 + 2*margin) * cell_px px, grid corners at
    margin * cell_px and (15 + margin) * cell_px, `corners` taken in the order given."""
    corners = np.asarray(corners, np.float64).reshape(4, 2)
    side = int(round((SIZE + 2 * margin) * cell_px))
    source, corners = _source_region(image, corners, cell_px, margin)
    view_to_grid = np.array([[1 / cell_px, 0, -margin], [0, 1 / cell_px, -margin], [0, 0, 1]])
    to_source = grid_homography(np.float32(corners)) @ view_to_grid
    flags, border = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, cv2.BORDER_REPLICATE
    if source.shape[0] * source.shape[1] > BGRA_AREA * side * side:
        return cv2.warpPerspective(source, to_source, (side, side), flags=flags, borderMode=border)
    # OpenCV warps 4-channel images about twice as fast as 3-channel ones: for a source not much
    # larger than the view the two conversions cost less than they save (same result)
    view = cv2.warpPerspective(cv2.cvtColor(source, cv2.COLOR_BGR2BGRA), to_source, (side, side),
                               flags=flags, borderMode=border)
    return cv2.cvtColor(view, cv2.COLOR_BGRA2BGR)


def _source_region(image, corners, cell_px, margin):
    """The part of the photo under the view, halved with area averaging until its cells are at
    most SHRINK_ABOVE × cell_px (a plain warp would alias letters; halving is several times
    faster than any other area resize), and the corners moved to match."""
    sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
    photo_cell = float(sides.max()) / SIZE
    halvings = 0
    while photo_cell / 2 ** halvings > SHRINK_ABOVE * cell_px:
        halvings += 1
    if halvings == 0:
        return image, corners
    factor = 2 ** halvings
    reach = corners.mean(axis=0) + (corners - corners.mean(axis=0)) * (1 + 2.5 * margin / SIZE)
    height, width = image.shape[:2]
    left, top = np.floor(reach.min(axis=0)).astype(int) - factor
    right, bottom = np.ceil(reach.max(axis=0)).astype(int) + factor
    left, top = max(left, 0), max(top, 0)
    right = left + (min(right, width) - left) // factor * factor
    bottom = top + (min(bottom, height) - top) // factor * factor
    if right - left < 2 * factor or bottom - top < 2 * factor:
        return image, corners
    region = image[top:bottom, left:right]
    for _ in range(halvings):
        region = cv2.resize(region, (region.shape[1] // 2, region.shape[0] // 2),
                            interpolation=cv2.INTER_AREA)
    # each output pixel averages a factor × factor block: its centre lies (factor - 1) / 2 in
    return region, (corners - [left, top] - (factor - 1) / 2) / factor
