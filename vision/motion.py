"""The cheap look at every frame of a camera watching the board: is it still, is something
over it, has it changed? Measured on a small straightened copy of the board and the edge
around it, one colour per cell; the full read (vision.read) runs only when this says so.

    >>> view = board_view(frame, location.corners)      # (17, 17, 3): the grid and its edge
    >>> look = compare(view, previous, reference)
    >>> look.moving, look.covered, look.changed

A hand, an arm, a sleeve or a shadow reaches the board from outside it, so it changes the
cells of the edge; a move changes a few cells inside the grid and never the edge. A frame far
darker than a lit board, or a view unlike the board in most cells, has lost the board.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from engine.ruleset import SIZE
from vision.locate import grid_homography

VIEW_CELL = 16  # px per cell in the straightened copy: enough for a cell's mean colour
EDGE = 1  # cells of the board's edge watched around the grid: where a hand comes in
SIDE = SIZE + 2 * EDGE
CORE = slice(4, 12)  # the middle of each cell: its mean barely moves when the camera trembles
SOFTEN = 2.0  # px of blur in the straightened copy: a letter's strokes move little in it
MOVED = 20.0  # colour distance (0-255 BGR) of a cell between two frames: something moved
CHANGED = 30.0  # ... of a cell against the board taken: a tile came (or a hand is there)
MAX_NEW = 12  # grid cells changed beyond a rack and the shade a tile casts: something over it
GONE_SHARE = 0.6  # share of all cells changed at once: the board is not where it was
DARK = 25.0  # mean grey level of a frame below which the light is gone
GAIN_LIMITS = (0.6, 1.7)  # a camera's own exposure drift, evened out before comparing
DARK_SIDE = 64  # px: the frame's brightness is measured on every n-th pixel, this many a side


@dataclass
class Look:
    """What one frame shows against the frame before it and the board last taken."""

    moving: bool  # a cell changed since the frame before
    covered: bool  # something lies over the board's edge, or over too many cells at once
    changed: list[tuple[int, int]]  # grid cells (row, col) unlike the board last taken
    gone: bool  # most cells unlike the board last taken: the camera moved or lost the board


def board_view(frame: np.ndarray, corners) -> np.ndarray:
    """(SIDE, SIDE, 3) float32: the mean colour of each cell's middle, the grid with a ring
    of EDGE cells around it, corners in board order."""
    to_grid = np.array([[1 / VIEW_CELL, 0, -EDGE], [0, 1 / VIEW_CELL, -EDGE], [0, 0, 1]])
    to_frame = grid_homography(np.float32(corners)) @ to_grid
    side = SIDE * VIEW_CELL
    view = cv2.warpPerspective(frame, to_frame, (side, side),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_CONSTANT)
    view = cv2.GaussianBlur(view, (0, 0), SOFTEN)
    cells = view.reshape(SIDE, VIEW_CELL, SIDE, VIEW_CELL, 3)[:, CORE, :, CORE]
    return cells.mean(axis=(1, 3), dtype=np.float32)


def is_dark(frame: np.ndarray) -> bool:
    """Whether the light is gone: the whole frame far darker than any lit table."""
    step = max(1, max(frame.shape[:2]) // DARK_SIDE)
    return float(frame[::step, ::step].mean()) < DARK


def compare(view: np.ndarray, previous: np.ndarray | None, reference: np.ndarray) -> Look:
    """The view of this frame against the frame before (None: the first) and the board
    last taken, after evening out the camera's exposure against the latter."""
    view = evened(view, reference)
    moving = previous is not None and bool((distance(view, evened(previous, reference))
                                            > MOVED).any())
    apart = distance(view, reference) > CHANGED
    grid = apart[EDGE:-EDGE, EDGE:-EDGE]
    edge = apart.copy()
    edge[EDGE:-EDGE, EDGE:-EDGE] = False
    changed = [(int(r), int(c)) for r, c in np.argwhere(grid)]
    gone = apart.mean() > GONE_SHARE
    covered = gone or bool(edge.any()) or len(changed) > MAX_NEW
    return Look(moving, covered, changed, bool(gone))


def distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(SIDE, SIDE) colour distance of each cell."""
    return np.sqrt(((a - b) ** 2).sum(axis=-1))


def evened(view: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The view with its overall brightness brought to the reference's, per channel, within
    GAIN_LIMITS: a hand over part of the board moves the median little."""
    ours = np.median(view.reshape(-1, 3), axis=0)
    theirs = np.median(reference.reshape(-1, 3), axis=0)
    gain = np.clip(theirs / np.maximum(ours, 1.0), *GAIN_LIMITS)
    return view * gain
