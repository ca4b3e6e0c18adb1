"""Cell crops and classifier embeddings of a calibration photo, with the variations a box shows
in play (a tile off-centre, another light), so a handful of photos gives robust references.

    >>> board = open_board("empty.jpg", "empty")
    >>> board.crops.shape, board.rectified.shape
    ((15, 15, 48, 48, 3), (1024, 1024, 3))
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from engine.errors import PhotoError, ProfileError
from engine.ruleset import SIZE
from vision.cells import cut_cell, cut_cells, tile_view, turn_crops
from vision.classifier import MODEL_NAME, SECOND_NAME, load_profile_model, model_dir, normalised
from vision.locate import locate_board
from vision.photo import load_photo
from vision.rectify import rectify

# px at 32 px per cell; the one-pixel steps too: a grid found 1 px off flipped a box's Щ/Ш
# verdicts (novel box 12)
SHIFTS = ((0, 0), (-2, 0), (2, 0), (0, -2), (0, 2), (-2, -2), (2, 2),
          (-1, 0), (1, 0), (0, -1), (0, 1))
SCALES = (1.0, 0.94, 1.06)
LIGHTS = 4  # coloured-light variants of every letter crop
LIGHT_SPREAD = 0.12  # std of a channel's gain: warm lamp / daylight / shade
NOISE = 2.0  # grey levels of the strongest sensor noise simulated
WOBBLE_DEGREES = 3.0  # std of the turn of a tile set askew
MAX_BLUR = 1.0  # px (at 32 px per cell) of the softest focus simulated
EMBED_BATCH = 512  # crops a network reads at once while calibrating
RNG_SEED = 7  # references are the same every time the same photos are calibrated


@dataclass
class PhotoBoard:
    """One located calibration photo: its top-down view and its 225 crops, photo order."""

    path: str
    board: np.ndarray  # rectified at the crops' scale (vision.cells.CELL px per cell)
    rectified: np.ndarray  # rectified at premium-reading scale (vision.rectify.CELL_PX)
    crops: np.ndarray  # (15, 15, CROP, CROP, 3)


def open_board(path, what: str) -> PhotoBoard:
    """Locate the board in a calibration photo; ProfileError naming the photo if it cannot."""
    try:
        image = load_photo(path)
        corners = locate_board(image).corners
    except PhotoError as exc:
        reason = exc.message or str(exc).removeprefix(f"{path}: ")
        raise ProfileError(code=f"{what}_photo_refused", name=path,
                           error=PhotoError(reason)) from None
    board = tile_view(image, corners)
    return PhotoBoard(path=str(path), board=board, rectified=rectify(image, corners),
                      crops=cut_cells(board))


def model_hash() -> str:
    """Short hash of the classifier files whose embeddings profiles hold (profiles store it)."""
    return _hash_of(tuple(str(model_dir() / f"{name}.onnx") for name in (MODEL_NAME, SECOND_NAME)))


@lru_cache(maxsize=2)
def _hash_of(paths: tuple[str, ...]) -> str:
    load_profile_model()  # the hash describes the networks this process has loaded
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as fh:
            digest.update(fh.read())
    return digest.hexdigest()[:16]


def embedding_width() -> int:
    """How many numbers one reference holds: both networks' embeddings side by side."""
    model = load_profile_model()
    return sum(int(each.session.get_outputs()[1].shape[1]) for each in (model, model.partner))


def embed(crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Glyph log-probabilities and L2-normalised embeddings of (N, H, W, 3) crops, run
    EMBED_BATCH at a time: the networks' activations for all of an alphabet's variants at
    once took most of a gigabyte."""
    model = load_profile_model()
    parts = [model.run(np.ascontiguousarray(crops[start:start + EMBED_BATCH]))
             for start in range(0, max(len(crops), 1), EMBED_BATCH)]
    log_probs, embeddings = (np.concatenate(part) for part in zip(*parts, strict=True))
    return log_probs, normalised(embeddings)


def turned(crops: np.ndarray, turns: int) -> np.ndarray:
    """(15, 15, H, W, 3) crops with the board and each crop turned `turns` quarter turns
    counter-clockwise, as vision.read turns a board upright."""
    return np.ascontiguousarray(np.rot90(np.rot90(crops, turns, axes=(0, 1)), turns, axes=(2, 3)))


def empty_references(crops: np.ndarray) -> np.ndarray:
    """Embeddings of every empty cell in all four turns (a cell is read before its board's
    upright is known), half of them under another light."""
    flat = crops.reshape(-1, *crops.shape[2:])
    rng = np.random.default_rng(RNG_SEED)
    batch = []
    for k in range(4):
        turned_crops = turn_crops(flat, k)
        batch.append(relit(turned_crops, rng) if k % 2 else turned_crops)
    return embed(np.concatenate(batch))[1]


def letter_references(board: np.ndarray, turns: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The variants of the first `count` upright cells in reading order (count, V, CROP, CROP, 3)
    and their embeddings (count × V, D), in that order."""
    cells = [divmod(i, SIZE) for i in range(count)]
    crops = letter_variants(board, cells, turns)
    return crops, embed(crops.reshape(-1, *crops.shape[2:]))[1]


def letter_variants(board: np.ndarray, cells, turns: int) -> np.ndarray:
    """Crops of the given upright cells (row, col), each shifted, scaled and relit:
    (len(cells), V, CROP, CROP, 3), turned upright. `board` is the photo-order top-down view."""
    rng = np.random.default_rng(RNG_SEED)
    out = []
    for row, col in cells:
        r, c = _photo_cell(row, col, turns)
        crops = [cut_cell(board, r, c, dx=dx, dy=dy, scale=s)
                 for dx, dy in SHIFTS for s in SCALES]
        crops = turn_crops(np.asarray(crops), turns)
        lit = np.concatenate([crops] + [relit(wobbled(crops, rng), rng)
                                         for _ in range(LIGHTS - 1)])
        out.append(lit)
    return np.asarray(out, np.uint8)


def _photo_cell(row: int, col: int, turns: int) -> tuple[int, int]:
    """Where upright cell (row, col) lies in the photo-order grid."""
    index = np.rot90(np.arange(SIZE * SIZE).reshape(SIZE, SIZE), turns)[row, col]
    return divmod(int(index), SIZE)


def wobbled(crops: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The crops turned a little (a tile set askew) and softened (focus, shake)."""
    size = crops.shape[1]
    out = np.empty_like(crops)
    for i, crop in enumerate(crops):
        matrix = cv2.getRotationMatrix2D(((size - 1) / 2, (size - 1) / 2),
                                         rng.normal(0, WOBBLE_DEGREES), 1.0)
        crop = cv2.warpAffine(crop, matrix, (size, size), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
        sigma = rng.uniform(0, MAX_BLUR)
        out[i] = cv2.GaussianBlur(crop, (0, 0), sigma) if sigma > 0.3 else crop
    return out


def relit(crops: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The crops under another light and camera: a gain per colour channel, brightness,
    contrast and sensor noise, drawn per crop."""
    n = len(crops)
    x = crops.astype(np.float32)
    gains = rng.normal(1.0, LIGHT_SPREAD, (n, 1, 1, 3)).clip(0.6, 1.4)
    brightness = rng.uniform(0.65, 1.25, (n, 1, 1, 1))
    contrast = rng.uniform(0.7, 1.15, (n, 1, 1, 1))
    mean = x.mean(axis=(1, 2, 3), keepdims=True)
    x = (mean + (x - mean) * contrast) * gains * brightness
    x += rng.normal(0, 1, x.shape) * rng.uniform(0, NOISE, (n, 1, 1, 1))
    return np.clip(x, 0, 255).astype(np.uint8)
