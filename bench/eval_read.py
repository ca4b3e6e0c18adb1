"""Accuracy of read_board: real Эрудит photos, jheidel's Scrabble photos, held-out renders.

    python -m bench.eval_read                       # all three sets, real photos also turned
    python -m bench.eval_read --sets synthetic --synthetic 60
    python -m bench.eval_read --model /tmp/m/tiles.onnx   # a candidate instead of the bundled one
    python -m bench.eval_read --second /tmp/m/tiles-second.onnx   # another second opinion
    python -m bench.eval_read --sets synthetic --fonts train --synthetic 200   # tuning renders
    python -m bench.eval_read --sets synthetic --synthetic 60 --size 4000x3000  # as 12 MP photos
    python -m bench.eval_read --sets real,jheidel --no-turns --longest 1024  # webcam-size photos
    python -m bench.eval_read --sets real,jheidel --no-turns --tilt 30       # the phone askew
    python -m bench.eval_read --sets real,jheidel --no-turns --dim           # in a dim room
    python -m bench.eval_read --sets real,jheidel --no-turns --shadow        # a shadow over it

Real photos live in ../shared/external (measurement only; sets that are absent are skipped).
Per-cell accuracy counts the 225 cells of each upright reading against the hand label.
Reader thresholds are chosen on the training fonts' renders (seeds TUNING_SEEDS, never trained
on); the held-out fonts' renders only measure.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np

import calibration.build
import vision.classifier
import vision.read
from engine.errors import PhotoError
from engine.ruleset import load_ruleset
from models.dataset import EVAL_SEEDS, board_label, random_board
from synth.photos import CONDITIONS, bowed_points, shrunk, tilted
from synth.render import STYLES, render_photo
from vision.classifier import CYRILLIC, LATIN, load_model
from vision.locate import Location, cell_size
from vision.photo import load_for_reading
from vision.read import COLUMNS, Reading, read_board, read_grid

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "external"
ERUDIT = EXTERNAL / "scrabble_assistant"
JHEIDEL = EXTERNAL / "jheidel_scrabble-opencv"
TURNS = (0, 90, 180, 270)
TUNING_SEEDS = range(7_000_000, 7_100_000)  # cut by no training run with --seed below 60
LARGE_CELL = 30  # px: a 12 MP photo (4 000 px wide) of a board spanning a ninth of its width


class Tally:
    """Per-cell and whole-board counts of one set."""

    def __init__(self, name: str, echo: bool = True):
        self.name, self.cells, self.right, self.boards, self.exact = name, 0, 0, 0, 0
        self.echo = echo  # print each board's wrong cells
        self.failed, self.seconds, self.silent, self.asked = 0, 0.0, 0, 0

    def add(self, label: list[str], reading: Reading | None, tag: str,
            seconds: float = 0.0) -> None:
        """Count one reading (None: the photo was refused); `seconds`, its time, for a tally
        of a subset (the set's own tally is timed as it reads)."""
        self.boards += 1
        self.cells += 225
        self.seconds += seconds
        if reading is None:
            self.failed += 1
            return
        cells = wrong_cells(label, reading)
        asked = {cell["cell"] for cell in reading.uncertain}
        # a "!" marks a silent miss: one the player would not be asked about
        wrong = [f"{cell}:{truth}→{read}{'' if cell in asked else '!'}"
                 for cell, (truth, read) in cells.items()]
        self.silent += len(cells.keys() - asked)
        self.asked += len(reading.uncertain)
        self.right += 225 - len(wrong)
        self.exact += not wrong
        if wrong and self.echo:
            print(f"  {tag}: {len(wrong)} wrong: {' '.join(wrong[:12])}", flush=True)

    def line(self) -> str:
        # "silent": wrong cells not reported as uncertain, the misses a player is not asked
        # about; "asked": all cells reported uncertain, right or wrong
        return (f"{self.name}: per-cell {self.right / max(self.cells, 1):.4%} "
                f"({self.cells - self.right} wrong of {self.cells}, {self.silent} silent, "
                f"{self.asked} asked), "
                f"exact {self.exact}/{self.boards}, no board {self.failed}, "
                f"{self.seconds / max(self.boards, 1) * 1000:.0f} ms/photo")


def wrong_cells(label: list[str], reading: Reading | None) -> dict[str, tuple[str, str]]:
    """{cell name: (truth, read)} of the cells a reading got wrong (every cell when the photo
    was refused)."""
    board = reading.board if reading is not None else ["?" * 15] * 15
    return {f"{COLUMNS[c]}{r + 1}": (label[r][c], board[r][c])
            for r in range(15) for c in range(15) if label[r][c] != board[r][c]}


def read_label(path: Path) -> list[str]:
    rows = path.read_text(encoding="utf-8").split()
    return [row.replace("?", "*") for row in rows]


def _read(image, ruleset: str, tally: Tally, tag: str, where: Location | None = None):
    return _noted(tally, tag, _timed_read(image, ruleset, where))


def _noted(tally: Tally, tag: str, read: tuple):
    """The reading of a _timed_read, its time added to `tally`, a refusal's reason printed."""
    reading, seconds, error = read
    if error:
        print(f"  {tag}: {error}", flush=True)
    tally.seconds += seconds
    return reading


def _timed_read(image, ruleset: str, where: Location | None = None):
    """(reading or None, seconds, the refusal's reason or None)."""
    start = time.perf_counter()
    try:
        if where is None:
            reading, error = read_board(image, ruleset=ruleset), None
        else:
            reading, error = read_grid(image, where, ruleset=ruleset), None
    except PhotoError as exc:
        reading, error = None, str(exc)
    return reading, time.perf_counter() - start, error


def eval_photos(name: str, root: Path, ruleset: str, turns, skip_alphabet: bool,
                longest: int | None = None, degrees: float = 0.0,
                condition: str | None = None) -> Tally | None:
    """The labelled real photos under `root`, opened as `erudit read` opens them (12 MP and
    larger reduced), each turned by `turns`; with `longest`, first
    shrunk to that many px on their longer side and saved again as a JPEG of quality 80, as a
    webcam or a messenger would deliver them; with `degrees`, first tilted by that angle (a
    phone held askew, a board turned on the table); with `condition` (a name in
    `synth.photos.CONDITIONS`), last taken so: half the light, noise, JPEG 75; the player's
    shadow over part of the photo; a wide lens's barrel distortion; a warm lamp."""
    table = root / "labels" / "labels.csv"
    if not table.exists():
        print(f"{name}: {table} absent, skipped")
        return None
    tally = Tally(name)
    with table.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for number, row in enumerate(rows):
        if skip_alphabet and Path(row["image"]).name.startswith("f"):
            continue
        label = read_label(root / row["board_label"])
        if degrees or longest is not None:
            image = cv2.imread(str(root / row["image"]), cv2.IMREAD_COLOR)
            if degrees:
                image = tilted(image, degrees)
            if longest is not None:
                image = shrunk(image, longest)
        else:  # as `erudit read` opens it: a 12 MP photo at half size
            image, _ = load_for_reading(root / row["image"])
        if condition:
            image = CONDITIONS[condition](image, number).view(type(image))
        for turn in turns:
            tag = f"{row['image']}@{turn}"
            tally.add(label, _read(turned(image, turn), ruleset, tally, tag), tag)
    return tally


def turned(image: np.ndarray, turn: int) -> np.ndarray:
    """The photo turned `turn` degrees clockwise (a Reduced decode stays one)."""
    if not turn:
        return image
    return np.ascontiguousarray(np.rot90(image, -turn // 90)).view(type(image))


def eval_synthetic(count: int, fonts: str = "heldout", size: tuple[int, int] | None = None,
                   jobs: int = 1, condition: str | None = None) -> list[Tally]:
    """Held-out fonts and seeds (or, with fonts "train", the tuning renders); boards of every
    style in their own alphabets. Each render is read twice: with the renderer's own grid
    corners (so only the cell reading is measured), then with the corners the board finder
    finds. Per corner source, the second tally counts the renders whose cells are at least
    LARGE_CELL px: the renders are 1.3-2 MP, where a far board's cells shrink to 20 px, unless
    `size` (width, height) asks for photos of that size (the seeds then show other photos).
    The third counts the boards a game can reach: random_board fills up to 60 % of the cells,
    more tiles than a box of the render's ruleset holds (Scrabble 100, Эрудит 131). The fourth
    counts the boards both of those hold: a game's board in a photo taken as README's "Taking
    the photos" asks.
    With `condition` each render is taken so (`render_taken`).
    `jobs` renders and reads that many photos at once (the same readings; each photo's time
    is then taken while the others run)."""
    name = "synthetic held-out" if fonts == "heldout" else "synthetic tuning (training fonts)"
    name += (f", {size[0]}x{size[1]}" if size else "") + _taken_so(condition)
    modes = [_tallies(f"{name}, true corners"), _tallies(name)]
    cases = [(i, fonts, size, condition) for i in range(count)]
    found = []
    with pool_of(jobs) as pool:
        for case in (pool.imap(_synthetic_case, cases) if pool else map(_synthetic_case, cases)):
            _count(modes[0], case, case["truth"])  # printed as they come ...
            found.append(case)
    for case in found:  # ... the found corners' misses after them, as two runs would print
        _count(modes[1], case, case["found"])
    _by_font(found)
    return modes[0] + modes[1]


FONTS_SHOWN = 6  # fonts listed by their misses after a synthetic set


def _by_font(cases: list[dict]) -> None:
    """Print the fonts that hold the most wrong cells (true corners / corners found), with
    the share of each font's cells read right with the corners found: unseen fonts are not
    alike (one hairline font, on 8 % of the held-out renders, holds half their misses)."""
    boards, wrong = Counter(), {mode: Counter() for mode in ("truth", "found")}
    for case in cases:
        boards[case["font"]] += 1
        for mode in wrong:
            wrong[mode][case["font"]] += len(wrong_cells(case["label"], case[mode][0]))
    print(f"fonts holding the most wrong cells (true corners / corners found), of {len(boards)}:")
    for font in sorted(boards, key=lambda name: -wrong["found"][name])[:FONTS_SHOWN]:
        cells = 225 * boards[font]
        print(f"  {font}: {wrong['truth'][font]} / {wrong['found'][font]} wrong on "
              f"{boards[font]} board{'s' * (boards[font] > 1)} "
              f"({1 - wrong['found'][font] / cells:.2%} found)")


def _tallies(name: str) -> list[Tally]:
    return [Tally(name), Tally(f"{name}, cells of {LARGE_CELL}+ px", echo=False),
            Tally(f"{name}, no more tiles than the box holds", echo=False),
            Tally(f"{name}, both (a game's board as README's \"Taking the photos\" asks)",
                  echo=False)]


def _count(tallies: list[Tally], case: dict, read: tuple) -> None:
    tally, large, playable, both = tallies
    reading = _noted(tally, case["tag"], read)
    tally.add(case["label"], reading, case["tag"])
    for subset, member in ((large, case["large"]), (playable, case["playable"]),
                           (both, case["large"] and case["playable"])):
        if member:
            subset.add(case["label"], reading, case["tag"], read[1])


def _synthetic_case(case: tuple) -> dict:
    """Render one seed's photo and read it with the true corners and with those found."""
    i, fonts, size, condition = case
    seed = (EVAL_SEEDS if fonts == "heldout" else TUNING_SEEDS).start + i
    style, ruleset, board = synthetic_board(seed, i)
    shot, image, corners = shot_taken(board, seed, condition, style=style, fonts=fonts, size=size)
    return {"tag": f"seed {seed} {style} {ruleset}", "label": board_label(board),
            "font": Path(shot.font).name,
            "large": cell_size(corners) >= LARGE_CELL,
            "playable": tiles_on(board) <= load_ruleset(ruleset).tile_count,
            "truth": _timed_read(image, ruleset, Location(corners, 0.0, 1.0)),
            "found": _timed_read(image, ruleset)}


@contextmanager
def pool_of(jobs: int, setup=None, *args):
    """A pool of `jobs` fresh processes (None for one job), each reading on one thread with
    the classifiers this process was told to use, then running `setup(*args)`. Fresh, not
    forked: an onnxruntime session does not survive a fork."""
    if jobs <= 1:
        yield None
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(jobs, initializer=_worker, initargs=(MODELS, setup, args)) as pool:
        yield pool


def _worker(models: dict, setup=None, args: tuple = ()) -> None:
    """One thread a process: `jobs` processes share the cores."""
    cv2.setNumThreads(1)
    bundled = vision.classifier.load_model

    def one_thread(path=None, threads=None):
        return bundled(path, threads or 1)

    for module in (vision.classifier, vision.read, calibration.build):
        module.load_model = one_thread
    for second, path in models.items():
        use_model(path, second, threads=1, quiet=True)
    if setup is not None:
        setup(*args)


def tiles_on(board: list[str]) -> int:
    return sum(ch != "." for row in board for ch in row)


def synthetic_board(seed: int, number: int) -> tuple[str, str, list[str]]:
    """(style, ruleset, board) of a set's render `number`, whose seed is `seed`."""
    rng = np.random.default_rng(seed)
    style = STYLES[number % len(STYLES)]
    alphabet, ruleset = _synthetic_rules(style, rng)
    return style, ruleset, random_board(rng, alphabet)


def _synthetic_rules(style: str, rng) -> tuple[str, str]:
    if style.startswith("erudit"):
        if rng.random() < 0.8:
            return CYRILLIC.replace("Ё", ""), "erudit"
        return LATIN, "erudit-english"
    return (LATIN, "scrabble") if rng.random() < 0.7 else (CYRILLIC, "scrabble-ru")


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {text!r} is not WIDTHxHEIGHT") from None
    return width, height


def set_names(*known: str):
    """An argparse type: comma-separated names of the sets a script measures."""
    def names(text: str) -> list[str]:
        chosen = text.split(",")
        unknown = [name for name in chosen if name not in known]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unknown set {unknown[0]!r} (choose from {', '.join(known)})")
        return chosen
    return names


MODELS: dict[bool, Path] = {}  # the classifiers given on the command line (second: path)


def use_model(path: Path, second: bool = False, threads: int | None = None,
              quiet: bool = False) -> None:
    """Make read_board use the classifier at `path` (read.py looks load_model and load_second
    up by name), as its first network or as its second opinion."""
    model = load_model(str(path), threads)
    MODELS[second] = path
    if second:
        vision.read.load_second = lambda: model
    else:
        vision.read.load_model = lambda path=None, threads=None: model
    if not quiet:
        print(f"{'second' if second else 'model'} {path}: {model.meta.get('command', '?')}",
              flush=True)


def add_condition_options(parser) -> None:
    """--dim, --shadow, --bowed, --warm and --folded: the photos taken so (`render_taken`)."""
    taken = parser.add_mutually_exclusive_group()
    for flag, help_text in (
            ("dim", "photos taken in dim light (half the light, noise, JPEG 75)"),
            ("shadow", "photos with the player's shadow over part of them"),
            ("bowed", "photos through a wide lens that bows straight lines (barrel distortion)"),
            ("warm", "photos under a warm lamp the camera did not balance (blue 55-75 %%)"),
            ("folded", "renders of a folding board that does not lie flat (its far half turned "
                       "2-6° about the hinge; renders only)"),
            ("seated", "renders taken from a chair at the table: 50-62° off straight down "
                       "(renders only)")):
        taken.add_argument(f"--{flag}", dest="condition", action="store_const", const=flag,
                           help=help_text)


def render_taken(board, seed: int, condition: str | None, **render_args):
    """(photo, the grid's true corners) of `board` rendered with `seed` and taken in
    `condition`: a light or lens of `synth.photos.CONDITIONS`, or one of RENDERED_ONLY
    (`rendered_so`)."""
    _, image, corners = shot_taken(board, seed, condition, **render_args)
    return image, corners


def shot_taken(board, seed: int, condition: str | None, **render_args):
    """(the render's Shot, the photo as taken, the grid's true corners): render_taken, with
    what the renderer drew it with (its font)."""
    shot = render_photo(board, seed=seed, **{**render_args, **rendered_so(condition, seed)})
    if condition not in CONDITIONS:  # as rendered, folded or from a chair
        return shot, shot.image, shot.corners
    corners = shot.corners
    if condition == "bowed":  # the lens moves the corners too
        corners = bowed_points(corners, shot.image.shape, seed)
    return shot, CONDITIONS[condition](shot.image, seed), corners


RENDERED_ONLY = ("folded", "seated")  # conditions a render is made in, not a photo put through


def rendered_so(condition: str | None, seed: int) -> dict:
    """The `render_photo` arguments of a condition made at render time: the board's far half
    turned `folding(seed)` degrees about its hinge, or the camera held from a chair."""
    if condition == "folded":
        return {"fold": folding(seed)}
    if condition == "seated":
        return {"pose": "seated"}
    return {}


def folding(seed: int) -> float:
    """Degrees the far half of render `seed`'s board is turned (--folded): 2-6, up or down."""
    rng = np.random.default_rng([seed, 0xF01D])
    return float(rng.uniform(2, 6) * rng.choice([-1, 1]))


def _taken_so(condition: str | None) -> str:
    return {None: "", "dim": ", in dim light", "shadow": ", in a shadow",
            "bowed": ", through a bowing lens", "folded": ", the board folded",
            "warm": ", under a warm lamp", "seated": ", taken from a chair"}[condition]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=set_names("real", "jheidel", "synthetic"),
                        default="real,jheidel,synthetic")
    parser.add_argument("--synthetic", type=int, default=40, help="held-out renders to read")
    parser.add_argument("--fonts", choices=("heldout", "train"), default="heldout",
                        help="renders to read: held-out fonts, or the training fonts' tuning seeds")
    parser.add_argument("--no-turns", action="store_true", help="real photos only as taken")
    parser.add_argument("--model", type=Path, help="an .onnx (with its .json) to measure instead")
    parser.add_argument("--second", type=Path, help="an .onnx to use as the second opinion")
    parser.add_argument("--size", type=_size, help="renders of WxH px (default: 1.3-2 MP)")
    parser.add_argument("--longest", type=int,
                        help="real photos shrunk to this many px on their longer side (JPEG 80)")
    parser.add_argument("--tilt", type=float, default=0.0,
                        help="real photos turned this many degrees first (any angle)")
    add_condition_options(parser)
    parser.add_argument("--jobs", type=int, default=1,
                        help="renders read side by side (the same readings; ms/photo then "
                             "counts the others' load)")
    args = parser.parse_args(argv)
    if args.condition in RENDERED_ONLY and set(args.sets) != {"synthetic"}:
        parser.error(f"--{args.condition} is a way of rendering: only with --sets synthetic")
    cv2.setNumThreads(1)
    if args.model is not None:
        use_model(args.model)
    if args.second is not None:
        use_model(args.second, second=True)
    sets = args.sets
    tallies = []
    variant = (f", {args.longest} px" if args.longest else "") + (
        f", tilted {args.tilt:g}°" if args.tilt else "") + _taken_so(args.condition)
    if "real" in sets:
        tallies.append(eval_photos(f"real Эрудит (31 photos){variant}", ERUDIT, "erudit", (0,),
                                   True, args.longest, args.tilt, args.condition))
        if not args.no_turns:
            tallies.append(eval_photos(f"real Эрудит turned 90/180/270{variant}", ERUDIT,
                                       "erudit", TURNS[1:], True, args.longest, args.tilt,
                                       args.condition))
    if "jheidel" in sets:
        tallies.append(eval_photos(f"jheidel Scrabble (15 photos){variant}", JHEIDEL, "scrabble",
                                   (0,), False, args.longest, args.tilt, args.condition))
    if "synthetic" in sets:
        tallies += eval_synthetic(args.synthetic, fonts=args.fonts, size=args.size,
                                  condition=args.condition, jobs=args.jobs)
    print()
    for tally in tallies:
        if tally is not None:
            print(tally.line())


if __name__ == "__main__":
    main()
