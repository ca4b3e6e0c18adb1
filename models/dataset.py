"""Training crops for the tile classifier, made from rendered photos only.

    >>> crops, labels = shot_samples(1_100_000)       # one rendered photo's crops
    >>> crops.shape[1:], GLYPHS[labels[0]]
    ((48, 48, 3), 'Ж')

Each photo is rendered from a random board, its grid corners taken from the renderer's ground
truth moved by a few % of a cell or from locate_board's own answer, rectified and cut by
vision.cells — the run-time cutter, here through the board's own plane (`board_image`; at run
time it rectifies through the tile tops) — with extra per-crop shift and scale.
Seeds fully determine the data; evaluation uses EVAL_SEEDS and held-out fonts.
"""

from __future__ import annotations

import multiprocessing
import time

import cv2
import numpy as np
from PIL import ImageFont

from engine.errors import PhotoError
from engine.ruleset import SIZE
from synth.render import ANY_STYLES, REAL_BOX_STYLES, STYLES, font_paths, render_photo
from synth.styles import ENGLISH_STYLES
from vision.cells import CELL, board_image, cut_cell
from vision.classifier import CYRILLIC, GLYPHS, LATIN, UMLAUTS, glyph_of
from vision.locate import cell_size, locate_board

TRAIN_SEEDS = range(1_000_000, 9_000_000)
EVAL_SEEDS = range(9_000_000, 9_100_000)
CORNER_JITTER = 0.05  # cells: sd of the error added to each true grid corner
SHIFT = 0.09  # cells: sd of the extra per-crop shift
MAX_SHIFT = 0.22  # cells
SCALE = 0.07  # sd of the log of the extra per-crop scale
# share of plain empty squares kept (many and alike, yet most cells of a game)
PLAIN_EMPTY_KEEP = 0.5
STAR_SHARE = 0.08  # share of tiles that are stars (or blanks): rare in games, easy to miss
MAX_CROPS = 2 * SIZE * SIZE  # crops cut from one photo at most: two cuts of every cell
PRINTED_PREMIUMS = 0.5  # share of photos whose premium squares get a big printed factor digit
# Photos of real boxes' looks (--real-boxes): ~1 MP, compressed hard, most from straight above
REAL_LONG_SIDE = (1100, 1400)  # px
REAL_QUALITY = (70, 85)  # JPEG
OVERHEAD = 0.7  # share of them taken by a camera fixed above the board
GERMAN_SHARE = 0.5  # of the Latin boards, when real boxes' looks are asked for: umlauts too
# umlauts three times as likely as another letter: a German board has few of them
GERMAN = LATIN + UMLAUTS * 3


def training_seeds(seed: int, shots: int) -> tuple[range, range]:
    """The render seeds of a training run's photos and of its validation photos."""
    first = TRAIN_SEEDS.start + seed * 100_000
    return range(first, first + shots), range(first + shots, first + shots + max(shots // 20, 4))


def random_board(rng: np.random.Generator, alphabet: str) -> list[str]:
    """Tiles scattered at random (runs, clusters and lone tiles), letters drawn uniformly."""
    fill = rng.uniform(0.1, 0.6)
    cells = rng.random((SIZE, SIZE)) < fill
    letters = rng.choice(list(alphabet), size=(SIZE, SIZE))
    star = rng.random((SIZE, SIZE)) < STAR_SHARE
    rows = []
    for r in range(SIZE):
        row = []
        for c in range(SIZE):
            if not cells[r, c]:
                row.append(".")
            elif star[r, c]:
                row.append("*" if rng.random() < 0.7 else letters[r, c].lower())
            else:
                row.append(letters[r, c])
        rows.append("".join(row))
    return rows


def board_label(board: list[str]) -> list[str]:
    """What a reading of a random_board should report: a star standing for a letter (lower
    case) is read as the star it shows."""
    return ["".join("*" if ch.islower() else ch for ch in row) for row in board]


def _alphabet(style: str, rng: np.random.Generator, german: bool = False) -> str:
    """Boards of Эрудит styles mostly in Cyrillic; Scrabble styles mostly in Latin; with
    `german`, some Latin boards with German umlauts."""
    cyrillic_share = 0.8 if style.startswith("erudit") else 0.3
    if rng.random() < cyrillic_share:
        return CYRILLIC if rng.random() < 0.5 else CYRILLIC.replace("Ё", "")
    # drawn only when asked, so a recipe without German boards renders what it always did
    if german and rng.random() < GERMAN_SHARE:
        return GERMAN
    return LATIN


def pick_style(rng: np.random.Generator, any_box: float = 0.0) -> str:
    """One of the four trained looks, or with chance `any_box` a box of random colours."""
    if any_box > 0 and rng.random() < any_box:
        return ANY_STYLES[int(rng.integers(len(ANY_STYLES)))]
    return STYLES[int(rng.integers(len(STYLES)))]


def shot_samples(seed: int, fonts: str = "train", jitter: bool = True, variety: bool = False,
                 any_box: float = 0.0, real_boxes: float = 0.0):
    """Crops (n, 48, 48, 3) uint8 and glyph labels (n,) from one rendered photo; `variety`
    renders the box's letters bolder, thinner, condensed or slanted (render_photo's GlyphStyle);
    `any_box` is the share of photos showing a box of random colours (pick_style);
    `real_boxes` the share of photos of real boxes' looks (synth.styles.REAL_BOX_STYLES,
    real_photo), and with it some Latin boards also have German umlauts."""
    rng = np.random.default_rng(seed)
    # drawn only when asked: a recipe without them renders what it always did
    real = real_boxes > 0 and rng.random() < real_boxes
    style = REAL_BOX_STYLES[int(rng.integers(len(REAL_BOX_STYLES)))] if real else \
        pick_style(rng, any_box)
    board = random_board(rng, _alphabet(style, rng, german=real_boxes > 0))
    photo = real_photo(rng) if real else {"pose": "any"}
    shot = render_photo(board, seed=seed, style=style, fonts=fonts, variety=variety, **photo)
    cell = cell_size(shot.corners)
    variants = [shot.corners + rng.normal(0, CORNER_JITTER * cell, (4, 2)).astype(np.float32)]
    if jitter:
        if rng.random() < 0.5:
            variants.append(_located(shot, cell))
        else:
            moved = rng.normal(0, CORNER_JITTER * cell, (4, 2)).astype(np.float32)
            variants.append(shot.corners + moved)
    else:
        variants = [shot.corners]
    blank = style in ENGLISH_STYLES  # Scrabble boxes have blank tiles, not printed stars
    # a real box's look prints its own labels
    printed = rng.random() < PRINTED_PREMIUMS and fonts != "heldout" and not real
    crops, labels = [], []
    for corners in variants:
        top = board_image(shot.image, corners)
        if printed:
            print_premium_digits(top, board, shot.layout, rng)
        for r in range(SIZE):
            for c in range(SIZE):
                symbol = board[r][c]
                if symbol == "." and shot.layout[r][c] == "." and rng.random() > PLAIN_EMPTY_KEEP:
                    continue
                crops.append(_cut(top, r, c, rng, jitter))
                labels.append(GLYPHS.index(glyph_of(symbol, blank)))
    return np.asarray(crops, np.uint8), np.asarray(labels, np.uint8)


def real_photo(rng: np.random.Generator) -> dict:
    """render_photo's keywords for a photo as a club's camera takes it: ~1 MP, compressed
    hard, most often from straight above."""
    long_side = int(rng.integers(REAL_LONG_SIDE[0], REAL_LONG_SIDE[1] + 1))
    short = int(long_side * rng.uniform(0.66, 0.8))
    size = (long_side, short) if rng.random() < 0.7 else (short, long_side)
    pose = "frontal" if rng.random() < OVERHEAD else "any"
    return {"pose": pose, "size": size, "quality": REAL_QUALITY}


def print_premium_digits(top: np.ndarray, board, layout, rng: np.random.Generator) -> None:
    """Print a big factor digit ('3', '×2' …) in a darker shade on empty premium squares.

    Real Эрудит boxes print their factor large on the square; seen turned, such a digit looks
    like a letter (a '3' upside down reads as 'С'), so the classifier must see them as empty.
    """
    font_file = font_paths("train")[int(rng.integers(len(font_paths("train"))))]
    size = int(CELL * rng.uniform(0.45, 0.75))
    font = ImageFont.truetype(font_file, size)
    prefix = str(rng.choice(["", "×", "x", "⊗"]))
    shade = rng.uniform(0.4, 0.75)
    at = rng.uniform(-0.12, 0.18, 2) * CELL
    for r in range(SIZE):
        for c in range(SIZE):
            code = layout[r][c]
            if board[r][c] != "." or code not in "WwLl":
                continue
            text = prefix + ("3" if code in "WL" else "2")
            mask = np.asarray(font.getmask(text), np.uint8).reshape(font.getmask(text).size[::-1])
            _stamp_ink(top, mask, r, c, at, shade)


def _stamp_ink(top: np.ndarray, mask: np.ndarray, r: int, c: int, at, shade: float) -> None:
    """Darken the square under `mask`, centred on cell (r, c) moved by `at` px."""
    h, w = mask.shape
    if h == 0 or w == 0:
        return
    cx = (0.5 + c + 0.5) * CELL + at[0]
    cy = (0.5 + r + 0.5) * CELL + at[1]
    x0, y0 = int(round(cx - w / 2)), int(round(cy - h / 2))
    x1, y1 = min(x0 + w, top.shape[1]), min(y0 + h, top.shape[0])
    x0c, y0c = max(x0, 0), max(y0, 0)
    if x1 <= x0c or y1 <= y0c:
        return
    alpha = mask[y0c - y0:y1 - y0, x0c - x0:x1 - x0, None].astype(np.float32) / 255
    region = top[y0c:y1, x0c:x1].astype(np.float32)
    top[y0c:y1, x0c:x1] = (region * (1 - alpha * (1 - shade))).astype(np.uint8)


def _cut(top: np.ndarray, r: int, c: int, rng: np.random.Generator, jitter: bool) -> np.ndarray:
    if not jitter or rng.random() < 0.2:
        return cut_cell(top, r, c)
    dx, dy = np.clip(rng.normal(0, SHIFT * CELL, 2), -MAX_SHIFT * CELL, MAX_SHIFT * CELL)
    scale = float(np.exp(np.clip(rng.normal(0, SCALE), -0.18, 0.2)))
    return cut_cell(top, r, c, dx=float(dx), dy=float(dy), scale=scale)


def _located(shot, cell: float) -> np.ndarray:
    """locate_board's corners put in board order; the true ones if it missed by > half a cell."""
    try:
        found = locate_board(shot.image).corners
    except PhotoError:
        return shot.corners
    best = min((np.roll(found, -k, axis=0) for k in range(4)),
               key=lambda q: float(np.abs(q - shot.corners).max()))
    if np.abs(best - shot.corners).max() > 0.5 * cell:
        return shot.corners
    return best.astype(np.float32)


def _work(args):
    cv2.setNumThreads(1)
    return shot_samples(*args)


def generate(seeds, *, fonts: str = "train", workers: int = 1, jitter: bool = True,
             variety: bool = False, any_box: float = 0.0, real_boxes: float = 0.0):
    """All crops and labels of the given render seeds, in seed order; prints progress."""
    seeds = list(seeds)
    jobs = [(s, fonts, jitter, variety, any_box, real_boxes) for s in seeds]
    crops, labels = [], []
    # One worker renders in this process: forking a process whose onnxruntime or torch threads
    # hold a lock can hang the child (seen under pytest).
    if workers <= 1:
        _collect(map(_work, jobs), len(jobs), crops, labels)
    else:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            _collect(pool.imap(_work, jobs, chunksize=2), len(jobs), crops, labels)
    return np.concatenate(crops), np.concatenate(labels)


def _collect(results, total: int, crops: list, labels: list) -> None:
    """Append each photo's crops and labels as they come, printing progress."""
    start = time.time()
    for i, (c, y) in enumerate(results, 1):
        crops.append(c)
        labels.append(y)
        if i % 50 == 0 or i == total:
            print(f"rendered {i}/{total} photos, {sum(map(len, labels))} crops, "
                  f"{time.time() - start:.0f}s", flush=True)
