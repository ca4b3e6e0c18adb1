"""Time locate_board + rectify on 12 MP photos next to cv2.imread's decode of the same file.

    python -m bench.bench_locate [PHOTO...]

Without arguments: rendered 4000×3000 photos (written as JPEG to a temp folder) of an early
board in three styles and of a late-game board (LATE_TILES tiles) in each style, plus the 12 MP
real photos under ../shared when present. Goal: locate + rectify cost less than one decode.
"""

import argparse
import glob
import os
import tempfile
import time

import cv2
import numpy as np

from bench.machine import describe
from engine.errors import PhotoError
from vision.locate import locate_board
from vision.rectify import rectify

SHARED_12MP = "../shared/external/scrabble_assistant/ML/test/*.jpg"
REPEATS = 7
LATE_TILES = 110  # of 225 cells: half the photos players take show a board this full or more


def _rendered_photos(folder: str) -> list[str]:
    from synth.render import STYLES  # the renderer is only needed without arguments

    board = (["." * 15] * 6 + ["....ЭРУДИТ.....", ".......О.......", ".......К......."]
             + ["." * 15] * 6)
    paths = [write_render(folder, f"render_{style}", board, seed, style)
             for seed, style in enumerate(("erudit-black", "erudit-cream", "scrabble-hasbro"))]
    for seed, style in enumerate(STYLES, start=100):
        paths.append(write_render(folder, f"render_late_{style}", late_board(seed, style), seed,
                                  style))
    return paths


def late_board(seed: int, style: str) -> list[str]:
    """LATE_TILES tiles of the style's alphabet on cells drawn at random."""
    from vision.classifier import CYRILLIC, LATIN

    rng = np.random.default_rng(seed)
    letters = LATIN if style.startswith("scrabble") else CYRILLIC
    rows = [["."] * 15 for _ in range(15)]
    for cell in rng.choice(225, LATE_TILES, replace=False):
        rows[cell // 15][cell % 15] = letters[int(rng.integers(len(letters)))]
    return ["".join(row) for row in rows]


def write_render(folder: str, name: str, board: list[str], seed: int, style: str) -> str:
    from synth.render import render_photo

    shot = render_photo(board, seed=seed, style=style, size=(4000, 3000))
    path = os.path.join(folder, f"{name}.jpg")
    cv2.imwrite(path, shot.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return path


def _best_times(decode, work) -> tuple[float, float, object]:
    """Best of REPEATS runs of each, taken in turn so that both see the same load."""
    decode_best = work_best = np.inf
    result = None
    for _ in range(REPEATS):
        start = time.perf_counter()
        image = decode()
        decode_best = min(decode_best, time.perf_counter() - start)
        start = time.perf_counter()
        result = work(image)
        work_best = min(work_best, time.perf_counter() - start)
    return decode_best * 1000, work_best * 1000, result


def locate_and_rectify(image):
    return rectify(image, locate_board(image).corners)


def bench(paths: list[str]) -> None:
    print(describe())
    print(f"{'photo':40} {'size':>11} {'decode ms':>10} {'locate+rectify ms':>18} {'ratio':>6}")
    ratios = []
    for path in paths:
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        try:
            locate_and_rectify(image)  # once untimed: OpenCV builds its colour tables lazily
            decode_ms, work_ms, _ = _best_times(lambda p=path: cv2.imread(p, cv2.IMREAD_COLOR),
                                                locate_and_rectify)
        except PhotoError as exc:
            print(f"{os.path.basename(path)[:40]:40} {exc}")
            continue
        ratio = work_ms / decode_ms
        ratios.append(ratio)
        size = f"{image.shape[1]}x{image.shape[0]}"
        print(f"{os.path.basename(path)[:40]:40} {size:>11} {decode_ms:10.1f} {work_ms:18.1f} "
              f"{ratio:6.2f}")
    if ratios:
        print(f"median ratio (locate+rectify / decode): {np.median(ratios):.2f}  "
              f"worst: {max(ratios):.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("photos", nargs="*", metavar="PHOTO",
                        help="photos to time (default: rendered ones and ../shared's 12 MP)")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)  # one core, as on a shared machine; the decode gets the same
    if args.photos:
        bench(args.photos)
        return
    with tempfile.TemporaryDirectory() as folder:
        here = os.path.dirname(os.path.abspath(__file__))
        shared = sorted(glob.glob(os.path.join(here, "..", SHARED_12MP)))
        bench(_rendered_photos(folder) + shared)


if __name__ == "__main__":
    main()
