"""How often calibration reads an empty board's premium layout wrong (rendered boards).

    python -m bench.eval_layout [--count 80] [--jobs 2] [--conditions as-taken,dim,...]

Each photo is an empty board of one of the four trained looks, rendered from tuning seeds
(7 200 000+) and taken as rendered or in a condition (`bench.eval_read.render_taken`: a dim
room, the player's shadow, a warm lamp, a chair at the table). Half the boxes print the
ruleset's layout; the other half print the other family's (an Эрудит box with the Scrabble
layout's four more ×3-letter squares and ×2-word centre, a Scrabble box with the Эрудит layout),
as a box that differs from its ruleset would. Calibration (`calibration.build.layout_of`) reads
the layout from the grid the board finder finds; a board counts as wrong when any cell would
score otherwise than printed. "scheme alone" is `vision.premium.read_premiums`,
the colour scheme's fixed prototypes, for comparison: they name a square's kind by fixed
colours, where calibration compares it with the box's own squares.
"""

from __future__ import annotations

import argparse

import cv2

from bench.eval_read import pool_of, render_taken
from calibration.build import fit_layout, layout_of
from engine.errors import PhotoError
from engine.ruleset import SIZE, load_ruleset
from synth.render import STYLES
from synth.styles import ERUDIT_LAYOUT, SCRABBLE_LAYOUT
from vision.locate import locate_board
from vision.premium import read_premiums
from vision.rectify import rectify

FIRST_SEED = 7_200_000
CONDITIONS = ("as-taken", "dim", "shadow", "warm", "seated")


def render_look(board: list[str], seed: int, condition: str, style: str, **render_args):
    """The photo of `board` rendered in `style` and taken in `condition` (CONDITIONS)."""
    taken = None if condition == "as-taken" else condition
    pose = {} if taken == "seated" else {"pose": "any"}
    return render_taken(board, seed, taken, style=style, **pose, **render_args)[0]


def _case(case: tuple[int, str]) -> tuple[str, bool, tuple[bool, bool] | None]:
    """(condition, whether the box differs from its ruleset, (scheme alone wrong, calibration
    wrong) or None when no board was found) of one photo (seed, condition)."""
    seed, condition = case
    index = seed - FIRST_SEED
    style = STYLES[index % len(STYLES)]
    english = style.startswith("scrabble")
    differs = index // len(STYLES) % 2 == 1
    printed = list(ERUDIT_LAYOUT if english == differs else SCRABBLE_LAYOUT)
    image = render_look(["." * SIZE] * SIZE, seed, condition, style, layout=printed)
    ruleset = load_ruleset("scrabble" if english else "erudit")
    try:
        top = rectify(image, locate_board(image).corners)
    except PhotoError:
        return condition, differs, None
    want = _premiums(fit_layout(printed, ruleset)[0], ruleset)
    wrong = [_premiums(fit_layout(read, ruleset)[0], ruleset) != want
             for read in (read_premiums(top), layout_of(top, ruleset))]
    return condition, differs, (wrong[0], wrong[1])


def _premiums(rows: list[str], ruleset) -> list[str]:
    """What each cell scores: the centre's `*` is the ruleset's start square (plain in Эрудит,
    ×2 word in Scrabble)."""
    return [row.replace("*", ruleset.layout.centre) for row in rows]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=80, help="photos per condition")
    parser.add_argument("--jobs", type=int, default=1, help="photos rendered and read side by side")
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    cases = [(FIRST_SEED + i, condition) for condition in args.conditions.split(",")
             for i in range(args.count)]
    rows: dict[tuple[str, bool], list[int]] = {}
    with pool_of(args.jobs) as pool:
        for condition, differs, wrong in (pool.imap(_case, cases) if pool else map(_case, cases)):
            tally = rows.setdefault((condition, differs), [0, 0, 0, 0])
            tally[0] += 1
            if wrong is None:
                tally[1] += 1
                continue
            tally[2] += wrong[0]
            tally[3] += wrong[1]
    print(f"{'condition':10} {'box':22} {'photos':>6} {'no board':>8} "
          f"{'wrong: scheme alone':>19} {'calibration':>11}")
    for (condition, differs), (photos, lost, before, now) in rows.items():
        box = "differs from ruleset" if differs else "prints the ruleset's"
        print(f"{condition:10} {box:22} {photos:6d} {lost:8d} {before:19d} {now:11d}")
    total = [sum(values) for values in zip(*rows.values(), strict=True)]
    print(f"{'all':10} {'':22} {total[0]:6d} {total[1]:8d} {total[2]:19d} {total[3]:11d}")


if __name__ == "__main__":
    main()
