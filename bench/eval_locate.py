"""Corner accuracy of locate_board on rendered photos (all styles and poses).

    python -m bench.eval_locate [--count 500] [--start 0] [--jobs 2] [--dim | --shadow | ...]

A photo passes when every found corner lies within 1% of the board diagonal of the true one
(compared as sets: ours start at the image's top-left, the renderer's at the board's; matched by
cyclic rotation). Prints one line per photo and the summary; slow (renders each photo).
With `--dim` each photo is first taken as a dim room gives it (half the light, noise, JPEG 75),
with `--shadow` with the player's shadow over part of it, with `--bowed` through a wide lens
that bows straight lines, with `--warm` under a warm lamp, with `--folded` of a folding board
whose halves do not lie in one plane, with `--seated` taken from a chair at the table
(`bench.eval_read.render_taken`; the true corners are where the grid's corners show).
"""

import argparse
import time
from functools import partial

import cv2
import numpy as np

from bench.eval_read import add_condition_options, pool_of, render_taken
from engine.errors import PhotoError
from synth.render import STYLES
from vision.locate import locate_board

PASS_SHARE = 0.01  # of the board diagonal
SHIFT_SHARE = 0.5 / (15 * 2 ** 0.5)  # half a cell: a grid this far off reads the wrong cells
ERUDIT_LETTERS = "АБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ*"
ENGLISH_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ*"


def random_board(rng, letters: str) -> list[str]:
    """A board with 0..~60 tiles in short runs (not words: the locator does not read them)."""
    rows = [["."] * 15 for _ in range(15)]
    for _ in range(int(rng.integers(0, 15))):
        row, col = rng.integers(0, 15, 2)
        across = rng.random() < 0.5
        for step in range(int(rng.integers(2, 8))):
            r, c = (row, col + step) if across else (row + step, col)
            if r < 15 and c < 15:
                rows[r][c] = letters[int(rng.integers(len(letters)))]
    return ["".join(row) for row in rows]


def corner_error(found: np.ndarray, truth: np.ndarray) -> float:
    """Largest corner distance over the board diagonal, best over the 4 cyclic rotations."""
    diagonal = float(np.linalg.norm(truth[0] - truth[2]))
    return min(float(np.linalg.norm(np.roll(found, k, axis=0) - truth, axis=1).max())
               for k in range(4)) / diagonal


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1,
                        help="photos rendered and searched side by side (the same corners; "
                             "each time then taken beside the others' load)")
    add_condition_options(parser)
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    errors, failures, times = [], {}, []
    seeds = range(args.start, args.start + args.count)
    located = partial(_located, condition=args.condition)
    with pool_of(args.jobs) as pool:
        for line, error, seconds, note in (pool.imap(located, seeds) if pool
                                           else map(located, seeds)):
            print(line, flush=True)
            errors.append(error)
            times.append(seconds)
            if note:
                failures[note] = failures.get(note, 0) + 1
    errors = np.array(errors)
    print(f"photos: {len(errors)}  within 1% of the diagonal: {np.mean(errors <= PASS_SHARE):.3f}  "
          f"median error: {np.median(errors):.4f}  reported board-less: {sum(failures.values())} "
          f"{failures}  median locate time: {np.median(times) * 1000:.0f} ms")
    shifted = int(np.sum(np.isfinite(errors) & (errors > SHIFT_SHARE)))
    print(f"  grids off by half a cell or more (a row or column shifted): {shifted}")
    for style in STYLES:
        picked = [e for i, e in enumerate(errors)
                  if STYLES[(args.start + i) % len(STYLES)] == style]
        if not picked:
            continue
        print(f"  {style:17} within 1%: {np.mean(np.array(picked) <= PASS_SHARE):.3f}")


def _located(seed: int, condition: str | None = None) -> tuple[str, float, float, str]:
    """Render seed's photo (taken in `condition`) and find its board: (report line, corner
    error, seconds, refusal)."""
    rng = np.random.default_rng(10_000 + seed)
    style = STYLES[seed % len(STYLES)]
    letters = ENGLISH_LETTERS if style.startswith("scrabble") else ERUDIT_LETTERS
    pose = "frontal" if seed % 5 == 4 else "any"
    image, truth = render_taken(random_board(rng, letters), seed, condition, style=style,
                                pose=pose)
    start = time.perf_counter()
    try:
        error, note = corner_error(locate_board(image).corners, truth), ""
    except PhotoError as exc:
        error, note = float("inf"), str(exc)
    seconds = time.perf_counter() - start
    flag = "" if error <= PASS_SHARE else "MISS"
    line = (f"{seed:5d} {style:17} {pose:8} {image.shape[1]}x{image.shape[0]} "
            f"err={error:.4f} {seconds * 1000:.0f}ms {note} {flag}")
    return line, error, seconds, note


if __name__ == "__main__":
    main()
