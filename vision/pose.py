"""Where the tops of the tiles lie: the plane a tile's letter is printed on, seen by the camera.

    >>> tops = tile_tops(location.corners, image.shape)      # the grid raised by TILE_HEIGHT
    >>> view = board_image(image, tops)                # letters over their squares

A tile stands above its square. Photographed from the side, its top (and the letter on it) is
seen past the square, away from the camera: from a chair, by up to half a cell. Rectifying
through the plane of the tile tops instead of the board's own puts each letter back over its
square; an empty square is then seen moved a little towards the camera, which changes it less
(it is one colour). The camera is recovered from the grid's four corners alone: a pinhole whose
axis meets the photo's centre, its focal length the one that makes the grid square.
"""

from __future__ import annotations

import cv2
import numpy as np

from engine.ruleset import SIZE
from vision.locate import grid_homography

# cells: a tile's thickness; boxes range 0.1-0.35, and half right is most of the gain
TILE_HEIGHT = 0.2
FOCAL_RANGE = (0.3, 4.0)  # focal length over the photo's longer side: ultra-wide lens to 3x zoom
USUAL_FOCAL = 0.75  # a phone's main camera, where the grid alone cannot tell (seen straight down)
_UNIT = np.float64([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]])


def tile_tops(corners, shape, height: float = TILE_HEIGHT) -> np.ndarray:
    """The corners (4, 2) float32 of the plane `height` cells above the grid whose corners (in
    a photo of `shape`) are given, in the same order."""
    corners = np.asarray(corners, np.float64).reshape(4, 2)
    quad = np.float32(corners)
    if cv2.contourArea(quad) < 1 or not cv2.isContourConvex(quad):
        return quad  # no plane seen by a camera gives these: its own plane is all there is
    centre = (np.float64(shape[1::-1]) - 1) / 2
    grid = grid_homography(corners - centre).astype(np.float64)
    focal = _focal(grid, max(shape[:2]))
    raised = grid + height * np.outer(_rise(grid, focal), [0, 0, 1])
    ends = np.c_[_UNIT, np.ones(4)] @ raised.T
    return (ends[:, :2] / ends[:, 2:] + centre).astype(np.float32)


def _focal(grid: np.ndarray, longer: int) -> float:
    """The focal length (px) that makes the grid's two sides equal and square (Zhang's
    constraints with a known centre), within FOCAL_RANGE of the photo's longer side."""
    (a, b, _), (c, d, _), (e, g, _) = grid
    # each constraint reads p / f² + q = 0: solved together by least squares for 1 / f²
    p = np.float64([a * b + c * d, a * a + c * c - b * b - d * d])
    q = np.float64([e * g, e * e - g * g])
    inverse_square = -float(p @ q) / max(float(p @ p), 1e-12)
    low, high = (bound * longer for bound in FOCAL_RANGE)
    if inverse_square <= 1 / high ** 2:  # too flat to tell: the usual phone
        return USUAL_FOCAL * longer
    return float(np.clip(inverse_square ** -0.5, low, high))


def _rise(grid: np.ndarray, focal: float) -> np.ndarray:
    """The homogeneous image step of one cell straight up off the board, towards the camera."""
    across, down, middle = (np.diag([1 / focal, 1 / focal, 1.0]) @ grid).T
    board = middle + SIZE / 2 * (across + down)  # the board's centre, the camera at 0
    normal = np.cross(across, down)
    normal *= np.sqrt(np.linalg.norm(across) * np.linalg.norm(down)) / np.linalg.norm(normal)
    # up points back to the camera. The homography's sign is free, but negating it negates
    # `board` and not `normal`, and the step returned must then be negated too: one rule serves
    if normal @ board > 0:
        normal = -normal
    return np.diag([focal, focal, 1.0]) @ normal
