"""Cut a photographed board into 225 cell crops, each with some context around its square.

    >>> board = tile_view(image, corners)        # corners (4,2) TL,TR,BR,BL of the grid
    >>> crops = cut_cells(board)
    >>> crops.shape
    (15, 15, 48, 48, 3)

The same function cuts the training crops from rendered photos and the crops read at run
time, so the classifier never sees a crop made any other way.
"""

from __future__ import annotations

import cv2
import numpy as np

from engine.ruleset import SIZE
from vision.pose import tile_tops
from vision.rectify import rectify

CELL = 32  # px per cell in the rectified board: the classifier's scale
CROP = 48  # px per crop: 1.5 cells, so a tile leaning off its square stays in view
MARGIN = 0.5  # cells of border kept around the grid by rectify; a crop reaches 0.25 into it


def board_image(image: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The top-down board, CELL px per cell, cell (r, c) in the order the corners are given."""
    return rectify(image, np.asarray(corners, np.float32), cell_px=CELL, margin=MARGIN)


def tile_view(image: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """board_image through the plane of the tile tops (vision.pose): a tile seen from the side
    has its letter back over its own square. Cells are cut from this view, in training and
    reading alike."""
    return board_image(image, tile_tops(corners, image.shape))


def cut_cells(board: np.ndarray) -> np.ndarray:
    """All crops of a rectified board: (15, 15, CROP, CROP, 3), each centred on its cell."""
    start = round(MARGIN * CELL + CELL / 2 - CROP / 2)
    rows = []
    for r in range(SIZE):
        y = start + r * CELL
        band = board[y:y + CROP]
        rows.append([band[:, start + c * CELL:start + c * CELL + CROP] for c in range(SIZE)])
    return np.asarray(rows, dtype=np.uint8)


def cut_cell(board: np.ndarray, row: int, col: int, *, dx: float = 0.0, dy: float = 0.0,
             scale: float = 1.0) -> np.ndarray:
    """One crop, its centre moved by (dx, dy) px and its window widened by `scale`.

    With no shift and scale 1 it equals cut_cells(board)[row, col]; training uses the
    shifted and scaled windows to stand for imperfect corners.
    """
    cx = (MARGIN + col + 0.5) * CELL + dx
    cy = (MARGIN + row + 0.5) * CELL + dy
    half = CROP / 2 * scale
    left, top = cx - half, cy - half
    if scale == 1 and float(left).is_integer() and float(top).is_integer() and left >= 0 \
            and top >= 0 and left + CROP <= board.shape[1] and top + CROP <= board.shape[0]:
        # a whole-pixel window inside the board: the warp below would copy it pixel for pixel
        return board[int(top):int(top) + CROP, int(left):int(left) + CROP].copy()
    k = CROP / (2 * half)
    # Maps the window [cx-half, cx+half) onto [0, CROP), pixel centres aligned.
    shift_x = k * (half - cx) + (k - 1) * 0.5
    shift_y = k * (half - cy) + (k - 1) * 0.5
    matrix = np.float32([[k, 0, shift_x], [0, k, shift_y]])
    return cv2.warpAffine(board, matrix, (CROP, CROP), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)


# cv2.rotate's code for each number of quarter turns counter-clockwise (as np.rot90 turns)
_ROTATIONS = {1: cv2.ROTATE_90_COUNTERCLOCKWISE, 2: cv2.ROTATE_180, 3: cv2.ROTATE_90_CLOCKWISE}


def turn_crops(crops: np.ndarray, turns: int) -> np.ndarray:
    """(N, H, W, C) crops each turned `turns` quarter turns counter-clockwise: np.rot90's
    pixels, made contiguous (one cv2.rotate a crop is 6x faster than numpy's strided copy)."""
    turns %= 4
    if turns == 0:
        return np.ascontiguousarray(crops)
    out = np.empty((len(crops), crops.shape[2], crops.shape[1], crops.shape[3]), crops.dtype)
    for crop, into in zip(crops, out, strict=True):
        cv2.rotate(crop, _ROTATIONS[turns], dst=into)
    return out
