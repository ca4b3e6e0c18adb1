"""Time locate_board + rectify on 12 MP photos next to cv2.imread's decode of the same file.

    python -m bench.bench_locate [PHOTO...]

Without arguments: rendered 4000×3000 photos (written as JPEG to a temp folder) plus the 12 MP
real photos under ../shared when present. Goal: locate + rectify cost less than one decode.
"""

import glob
import os
import sys
import tempfile
import time

import cv2
import numpy as np

from engine.errors import PhotoError
from vision.locate import locate_board
from vision.rectify import rectify

SHARED_12MP = "../shared/external/scrabble_assistant/ML/test/*.jpg"
REPEATS = 3


def _rendered_photos(folder: str) -> list[str]:
    from vision.render import render_photo  # the renderer is only needed without arguments

    board = ["." * 15] * 6 + ["....ЭРУДИТ.....", ".......О.......", ".......К......."] + ["." * 15] * 6
    paths = []
    for seed, style in enumerate(("erudit-black", "erudit-cream", "scrabble-hasbro")):
        shot = render_photo(board, seed=seed, style=style, size=(4000, 3000))
        path = os.path.join(folder, f"render_{style}.jpg")
        cv2.imwrite(path, shot.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        paths.append(path)
    return paths


def _best_time(action) -> tuple[float, object]:
    best, result = np.inf, None
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - start)
    return best * 1000, result


def bench(paths: list[str]) -> None:
    print(f"{'photo':40} {'size':>11} {'decode ms':>10} {'locate+rectify ms':>18} {'ratio':>6}")
    ratios = []
    for path in paths:
        decode_ms, image = _best_time(lambda p=path: cv2.imread(p, cv2.IMREAD_COLOR))

        def locate_and_rectify(img=image):
            return rectify(img, locate_board(img).corners)

        try:
            work_ms, _ = _best_time(locate_and_rectify)
        except PhotoError as exc:
            print(f"{os.path.basename(path)[:40]:40} {exc}")
            continue
        ratio = work_ms / decode_ms
        ratios.append(ratio)
        size = f"{image.shape[1]}x{image.shape[0]}"
        print(f"{os.path.basename(path)[:40]:40} {size:>11} {decode_ms:10.1f} {work_ms:18.1f} {ratio:6.2f}")
    if ratios:
        print(f"median ratio (locate+rectify / decode): {np.median(ratios):.2f}")


def main(argv=None) -> None:
    cv2.setNumThreads(1)  # one core, as on a shared machine; the decode gets the same
    args = sys.argv[1:] if argv is None else argv
    if args:
        bench(args)
        return
    with tempfile.TemporaryDirectory() as folder:
        here = os.path.dirname(os.path.abspath(__file__))
        shared = sorted(glob.glob(os.path.join(here, "..", SHARED_12MP)))
        bench(_rendered_photos(folder) + shared)


if __name__ == "__main__":
    main()
