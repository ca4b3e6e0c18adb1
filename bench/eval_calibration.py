"""Reading with and without a box profile: the real Эрудит box and a rendered unseen box.

    python -m bench.eval_calibration                     # every set below
    python -m bench.eval_calibration --sets check,novel  # what constants may be chosen on
    python -m bench.eval_calibration --sets novel --jobs 2  # two boxes at a time

Sets:
- check: a profile from the real box's c1 (empty) + f1 (alphabet) reads the other calibration
  photos (empty boards c2..e3, cropped/, alphabet layouts f3..f8, bad/f2), also turned.
- test: the same profile reads test positions A (a*, b*) and C (ML/test/*), also turned —
  MEASUREMENT ONLY, never look at these to choose constants.
- novel: a profile from rendered photos of the "novel-violet" box (held-out fonts, a style the
  general model never trained on) reads rendered test boards of that box (other seeds); the
  boards whose cells are 30+ px (the photos the README's "Taking the photos" asks for) are
  also counted alone.
- looks: profiles built (not read with) from rendered calibration photos of the four trained
  looks, an empty board and the alphabet laid out, taken as rendered, in dim light, in a
  shadow, under a warm lamp and from a chair (`--looks` boxes each, seeds 7 600 000+):
  how many are built with the ruleset's layout, and why the others are refused.
Real photos live in ../shared/external and are skipped when absent.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import tempfile
import time
from functools import partial
from pathlib import Path

import cv2
import numpy as np

from bench.eval_layout import CONDITIONS, render_look
from bench.eval_read import (
    ERUDIT,
    LARGE_CELL,
    TURNS,
    Tally,
    pool_of,
    read_label,
    set_names,
    tiles_on,
    turned,
)
from calibration.profile import build_profile
from engine.errors import PhotoError, ProfileError
from engine.ruleset import load_ruleset
from models.dataset import board_label, random_board
from synth.render import STYLES, font_paths, render_photo
from vision.locate import cell_size
from vision.photo import load_for_reading
from vision.read import read_board

IMAGES = ERUDIT / "images_real"
CALIBRATION_EMPTY, CALIBRATION_ALPHABET = IMAGES / "c1.jpg", IMAGES / "f1.jpg"
NOVEL = "novel-violet"
NOVEL_BOXES = (11, 12, 13, 14)  # seeds of rendered boxes (font and colours) of the novel style
NOVEL_CALIBRATION_SEEDS = (500, 501)  # empty board, alphabet layout
NOVEL_TEST_SEEDS = range(9_500_000, 9_500_000 + 1000)
LOOKS_SEEDS = 7_600_000  # boxes of the trained looks; photos 2 × seed (empty) and 2 × seed + 1


def real_rows(kind: str) -> list[dict]:
    """Label rows of the test positions (A, C) or of the calibration photos not used to build."""
    with (ERUDIT / "labels" / "labels.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    used = {"images_real/c1.jpg", "images_real/f1.jpg"}

    def is_test(image: str) -> bool:
        return image.startswith("ML/") or Path(image).name[0] in "ab" and "/bad/" not in image

    if kind == "test":
        return [row for row in rows if is_test(row["image"])]
    return [row for row in rows if not is_test(row["image"]) and row["image"] not in used]


def read(image, ruleset, profile, tally: Tally, tag: str):
    start = time.perf_counter()
    try:
        if profile is not None:
            ruleset = profile.apply_to(ruleset)
        reading = read_board(image, ruleset=ruleset, profile=profile)
    except PhotoError as exc:
        print(f"  {tag}: {exc}", flush=True)
        reading = None
    tally.seconds += time.perf_counter() - start
    return reading


def eval_real(kind: str, profile, ruleset, turns) -> list[Tally]:
    before, after = Tally(f"{kind} without profile"), Tally(f"{kind} with profile")
    for row in real_rows(kind):
        label = read_label(ERUDIT / row["board_label"])
        image, _ = load_for_reading(ERUDIT / row["image"])  # as `erudit read` opens it
        for turn in turns:
            tag = f"{row['image']}@{turn}"
            photo = turned(image, turn)
            before.add(label, read(photo, ruleset, None, before, tag + " before"), tag + " before")
            after.add(label, read(photo, ruleset, profile, after, tag), tag)
    return [before, after]


def novel_photo(board, seed: int, folder: Path, box: int) -> Path:
    """A calibration photo of a rendered box: taken with care, so no hand or cup in view."""
    shot = render_photo(board, seed=seed, style=NOVEL, fonts="heldout", box_seed=box,
                        clutter=False)
    path = folder / f"{seed}.png"
    cv2.imwrite(str(path), shot.image)
    return path


def alphabet_board(ruleset) -> list[str]:
    text = "".join(ruleset.alphabet) + "*"
    rows = [text[i:i + 15] for i in range(0, len(text), 15)]
    return [row.ljust(15, ".") for row in rows] + ["." * 15] * (15 - len(rows))


def novel_profile(box: int, folder: Path):
    """The profile of novel box `box`, built (and saved under `folder`) from its two
    calibration photos: the empty board and the alphabet laid out."""
    ruleset = load_ruleset("erudit")
    empty_seed, alphabet_seed = NOVEL_CALIBRATION_SEEDS
    return build_profile(novel_photo(["." * 15] * 15, empty_seed, folder, box),
                         novel_photo(alphabet_board(ruleset), alphabet_seed, folder, box),
                         f"novel{box}", ruleset, folder)


def eval_novel(count: int, folder: Path, box: int) -> list[Tally]:
    """`count` rendered test boards of one novel box, read without and with its profile."""
    ruleset = load_ruleset("erudit")
    profile = novel_profile(box, folder)
    font = Path(font_paths("heldout")[int(np.random.default_rng(box).integers(
        len(font_paths("heldout"))))]).stem
    before = Tally(f"{NOVEL} box {box} ({font}) zero-shot")
    after = Tally(f"{NOVEL} box {box} ({font}) with profile")
    playable = Tally(f"{after.name}, no more tiles than the box holds", echo=False)
    # a far board's cells shrink below the size "Taking the photos" (README) asks for
    guided = [Tally(f"{tally.name}, cells of {LARGE_CELL}+ px", echo=False)
              for tally in (before, after)]
    done = 0
    for seed in NOVEL_TEST_SEEDS:
        if done == count:
            break
        rng = np.random.default_rng(seed)
        board = random_board(rng, "".join(ruleset.alphabet))
        shot = render_photo(board, seed=seed, style=NOVEL, fonts="heldout", box_seed=box)
        label = board_label(board)
        tag = f"seed {seed}"
        try:
            read_board(shot.image, ruleset=ruleset)
        except PhotoError as exc:  # the board finder's failures are not the profile's
            print(f"  {tag}: {exc} (skipped)")
            continue
        large = cell_size(shot.corners) >= LARGE_CELL
        playing = tiles_on(board) <= ruleset.tile_count
        for tally, use, subsets in ((before, None, ((guided[0], large),)),
                                    (after, profile, ((guided[1], large), (playable, playing)))):
            started = tally.seconds
            reading = read(shot.image, ruleset, use, tally, tag)
            tally.add(label, reading, tag if use else tag + " zero-shot")
            for subset, member in subsets:
                if member:
                    subset.add(label, reading, tag, tally.seconds - started)
        done += 1
    return [before, after, playable, *guided]


def _novel_box(case: tuple, quiet: bool = True) -> tuple[str, list[Tally]]:
    """eval_novel of one box in a folder of its own (its calibration photos are named by
    seed), and what it printed (kept, when `quiet`, for the caller to print in box order)."""
    count, folder, box = case
    own = folder / f"box{box}"
    own.mkdir()
    out = io.StringIO()
    with contextlib.redirect_stdout(out) if quiet else contextlib.nullcontext():
        found = eval_novel(count, own, box)
    return out.getvalue(), found


def calibrated_look(case: tuple[int, str]) -> tuple[str, str]:
    """(condition, "built", "a wrong layout" or the refusal's reason) of one box of a trained
    look (printing its ruleset's layout) calibrated from rendered photos taken in `condition`."""
    seed, condition = case
    style = STYLES[(seed - LOOKS_SEEDS) % len(STYLES)]
    ruleset = load_ruleset("scrabble" if style.startswith("scrabble") else "erudit")
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, board in enumerate((["." * 15] * 15, alphabet_board(ruleset))):
            paths.append(Path(tmp) / f"{k}.png")
            cv2.imwrite(str(paths[-1]), render_look(board, 2 * seed + k, condition, style,
                                                    clutter=False))
        try:
            profile = build_profile(paths[0], paths[1], "look", ruleset, tmp)
        except ProfileError as exc:
            reason = str(exc).split(": ", 2)[-1]
            return condition, reason.split(";")[0].split(" (")[0]
    return condition, "a wrong layout" if profile.differences else "built"


def eval_looks(count: int, jobs: int) -> None:
    cases = [(LOOKS_SEEDS + i, condition) for condition in CONDITIONS for i in range(count)]
    outcomes: dict[str, dict[str, int]] = {}
    with pool_of(jobs) as pool:
        for condition, outcome in (pool.imap(calibrated_look, cases) if pool
                                   else map(calibrated_look, cases)):
            counts = outcomes.setdefault(condition, {})
            counts[outcome] = counts.get(outcome, 0) + 1
    for condition, counts in outcomes.items():
        built = counts.pop("built", 0)
        others = "; ".join(f"{why} ×{n}" for why, n in sorted(counts.items()))
        print(f"looks {condition}: {built} of {count} built with the ruleset's layout"
              + (f"; the others: {others}" if others else ""))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=set_names("check", "test", "novel", "looks"),
                        default="check,test,novel")
    parser.add_argument("--novel", type=int, default=24, help="rendered test boards to read")
    parser.add_argument("--looks", type=int, default=16,
                        help="boxes of the trained looks to calibrate in each condition")
    parser.add_argument("--no-turns", action="store_true", help="real photos only as taken")
    parser.add_argument("--jobs", type=int, default=1,
                        help="novel boxes read (or looks calibrated) side by side")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    sets = args.sets
    turns = (0,) if args.no_turns else TURNS
    tallies = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if ({"check", "test"} & set(sets)) and CALIBRATION_EMPTY.exists():
            ruleset = load_ruleset("erudit")
            profile = build_profile(CALIBRATION_EMPTY, CALIBRATION_ALPHABET, "real", ruleset,
                                    folder)
            print("\n".join(profile.summary()))
            for kind in ("check", "test"):
                if kind in sets:
                    tallies += eval_real(kind, profile, ruleset, turns)
        if "novel" in sets:
            cases = [(args.novel, folder, box) for box in NOVEL_BOXES]
            with pool_of(args.jobs) as pool:
                for printed, found in (pool.imap(_novel_box, cases) if pool else
                                       map(partial(_novel_box, quiet=False), cases)):
                    print(printed, end="", flush=True)
                    tallies += found
    if "looks" in sets:
        eval_looks(args.looks, args.jobs)
    print()
    for tally in tallies:
        print(tally.line())


if __name__ == "__main__":
    main()
