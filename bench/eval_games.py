"""Real games photographed turn by turn: how single photos read, how the replay scores them, and
how a game's own photos teach the reader its box.

    python bench/eval_games.py ../shared/external/scrabscrap
    python bench/eval_games.py ../shared/external/scrabscrap --games game13 --profile

A game folder holds `photos/NN.jpg` (one photo after each turn, in turn order), `truth.json`
(`ruleset`, `totals`, and `moves`: per turn its `kind`, `score` and the placed tiles in the
photo's frame, `photo_tiles`; `moves` may be null where only the totals are known) and
optionally `extra/empty.jpg` (the empty board: a calibration photo).

For each game it prints:
- single photos: cells read right by `read` of each photo alone (the truth board after each
  turn is the placed tiles so far; a blank matches a blank, whatever it stands for);
- the replay: moves exact (cells, letters and score), wrong moves marked sure, final totals;
- along the game: cells read right at each stage (turns 1-5, 6-10, …) when each photo is
  weighed against the squares' looks the game has learnt so far, against none (`--no-learn`
  gives the replay without them).
With `--profile` each game is also replayed with a profile made from its `extra/empty.jpg`.
With `--stream S` each game is instead watched as a camera would see it (companion_app.stream):
every photo, at most 1280 px a side, held still for S seconds, ten frames a second. A pass
shows no change, so the moves taken are compared with the recorded plays in order.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from engine.board import Board, is_star, parse_cell  # noqa: E402
from engine.game import Game  # noqa: E402
from engine.ruleset import load_ruleset  # noqa: E402

STAGE = 5  # turns per row of the "along the game" table


def truth_boards(truth: dict) -> list[list[str]] | None:
    """The board text after each turn, from the placed tiles (a blank as '*')."""
    if truth.get("moves") is None:
        return None
    grid = [["."] * 15 for _ in range(15)]
    boards = []
    for move in truth["moves"]:
        for tile in move.get("photo_tiles") or []:
            row, col = parse_cell(tile["cell"])
            grid[row][col] = "*" if tile["letter"].islower() else tile["letter"]
        boards.append(["".join(row) for row in grid])
    return boards


def cells_right(read: list[str], true: list[str]) -> int:
    return sum(a == b or (is_star(a) and is_star(b))
               for row_a, row_b in zip(read, true, strict=True)
               for a, b in zip(row_a, row_b, strict=True))


def move_exact(turn: dict, move: dict) -> bool:
    """Cells, letters (a blank as any blank) and score as recorded; `turn` as the replay's
    JSON gives it."""
    placed = {tile["cell"]: tile["letter"] for tile in move.get("photo_tiles") or []}
    got = {tile["cell"]: tile["letter"] for tile in turn["tiles"]}
    if set(placed) != set(got) or turn["score"] != move["score"]:
        return False
    return all(got[c] == letter or (letter.islower() and is_star(got[c]))
               for c, letter in placed.items())


def replay(folder: Path, truth: dict, profile, learn: bool) -> Game:
    from companion_app.photos import replay_photos

    game = Game(load_ruleset(truth["ruleset"]), truth.get("players", 2))
    replay_photos(game, [str(folder / p) for p in truth["photos"]], profile=profile,
                  learn=learn)
    return game


def replay_report(game: Game, truth: dict) -> dict:
    from engine.report import game_dict

    moves, turns = truth.get("moves"), game_dict(game)["moves"]
    report = {"totals": game.totals, "true totals": truth["totals"],
              "totals right": game.totals == truth["totals"]}
    if moves is not None:
        exact = [move_exact(turn, move) for turn, move in zip(turns, moves, strict=False)]
        report["moves exact"] = f"{sum(exact)}/{len(moves)}"
        report["wrong and sure"] = sum(1 for turn, ok in zip(turns, exact, strict=False)
                                       if not ok and turn["sure"])
        report["wrong"] = [f"turn {turn['turn']}" for turn, ok in zip(turns, exact, strict=False)
                           if not ok]
    return report


def along_the_game(folder: Path, truth: dict, game: Game, profile) -> list[tuple[int, int]]:
    """Per photo (right with what the game has learnt of its box so far, right with nothing
    learnt): each photo read as the replay reads it, learning from the boards it took."""
    from companion_app.photos import Memory
    from vision.read import read_photo

    boards = truth_boards(truth)
    memory = Memory(profile, game.ruleset.layout)
    rows = []
    for index, name in enumerate(truth["photos"]):
        plain = read_photo(folder / name, ruleset=truth["ruleset"], profile=profile)
        reading = read_photo(folder / name, ruleset=truth["ruleset"], profile=profile,
                             squares=memory.squares, letters=memory.letters)
        rows.append((cells_right(reading.board, boards[index]),
                     cells_right(plain.board, boards[index])))
        if index < len(game.turns):
            before = game.turns[index - 1].board if index else Board()
            memory.learn(before, reading, reading.probs, game.turns[index].board)
    return rows


def watched(folder: Path, truth: dict, hold: float) -> dict:
    """The game's photos as the frames of a camera, each held `hold` seconds."""
    import cv2

    from companion_app.stream import CHECKS_PER_SECOND, TurnTaker
    from engine.report import game_dict
    from vision.photo import load_for_reading

    game = Game(load_ruleset(truth["ruleset"]), truth.get("players", 2))
    taker, t, notes = TurnTaker(game), 0.0, []
    for name in truth["photos"]:
        frame = load_for_reading(str(folder / name))[0]
        scale = 1280 / max(frame.shape[:2])
        if scale < 1:
            frame = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        for _ in range(round(hold * CHECKS_PER_SECOND)):
            notes += [e.kind for e in taker.feed(frame, t) if e.kind != "move"]
            t += 1 / CHECKS_PER_SECOND
    turns = game_dict(game)["moves"]
    report = {"moves taken": len(turns), "pauses": notes.count("paused")}
    if truth.get("moves") is not None:
        plays = [m for m in truth["moves"] if m.get("photo_tiles")]
        exact = [move_exact(turn, move) for turn, move in zip(turns, plays, strict=False)]
        report["moves exact"] = f"{sum(exact)}/{len(plays)}"
        report["wrong and sure"] = sum(1 for turn, ok in zip(turns, exact, strict=False)
                                       if not ok and turn["sure"])
    return report


def make_profile(folder: Path, ruleset: str, data: Path):
    from calibration.profile import build_profile

    return build_profile(folder / "extra" / "empty.jpg", None, folder.name, ruleset, data)


def evaluate(folder: Path, args) -> dict:
    truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
    result = {"game": folder.name}
    boards = truth_boards(truth)
    start = time.perf_counter()
    if args.stream:
        result["stream"] = watched(folder, truth, args.stream)
        result["seconds"] = round(time.perf_counter() - start, 1)
        return result
    modes = [("self-calibrated", None, True)]
    if not args.no_learn:
        modes.append(("no self-calibration", None, False))
    if args.profile:
        with tempfile.TemporaryDirectory() as data:
            modes.append(("profile", make_profile(folder, truth["ruleset"], Path(data)), True))
    for label, profile, learn in modes:
        game = replay(folder, truth, profile, learn)
        result[label] = replay_report(game, truth)
        if boards is not None and label != "no self-calibration":
            rows = along_the_game(folder, truth, game, profile)
            result[label]["along"] = rows
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


def stages(rows: list[tuple[int, int]]) -> list[str]:
    out = []
    for first in range(0, len(rows), STAGE):
        part = rows[first:first + STAGE]
        cells = 225 * len(part)
        learnt = sum(r[0] for r in part) / cells
        plain = sum(r[1] for r in part) / cells
        out.append(f"turns {first + 1}-{first + len(part)}: {100 * plain:.2f} % alone, "
                   f"{100 * learnt:.2f} % weighed against the learnt squares")
    return out


def show(result: dict) -> None:
    print(f"{result['game']} ({result['seconds']} s)")
    for label, report in result.items():
        if not isinstance(report, dict):
            continue
        line = ", ".join(f"{k} {v}" for k, v in report.items() if k not in ("along", "wrong"))
        print(f"  {label}: {line}")
        if report.get("wrong"):
            print(f"    wrong: {', '.join(report['wrong'])}")
        for stage in stages(report.get("along") or []):
            print(f"    {stage}")


def summary(results: list[dict]) -> None:
    for label in ("self-calibrated", "no self-calibration", "profile", "stream"):
        reports = [r[label] for r in results if label in r]
        if not reports:
            continue
        exact = [tuple(map(int, r["moves exact"].split("/"))) for r in reports
                 if "moves exact" in r]
        right = sum(e[0] for e in exact)
        total = sum(e[1] for e in exact)
        totals = [r["totals right"] for r in reports if "totals right" in r]
        sure = sum(r.get("wrong and sure", 0) for r in reports)
        rows = [row for r in reports for row in r.get("along") or []]
        line = (f"{label}: moves exact {right}/{total} ({100 * right / max(total, 1):.1f} %), "
                + (f"totals right {sum(totals)}/{len(totals)} games, " if totals else "")
                + f"wrong and sure {sure}")
        if rows:
            cells = 225 * len(rows)
            line += (f"; cells {100 * sum(r[1] for r in rows) / cells:.2f} % alone, "
                     f"{100 * sum(r[0] for r in rows) / cells:.2f} % weighed")
        print(line)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="a folder of game folders (or one game folder)")
    parser.add_argument("--games", nargs="*", help="only these game folders")
    parser.add_argument("--profile", action="store_true",
                        help="also replay with a profile made from each game's extra/empty.jpg")
    parser.add_argument("--stream", type=float, metavar="S",
                        help="watch each game as a camera would: every photo held S seconds")
    parser.add_argument("--no-learn", action="store_true",
                        help="skip the replay without self-calibration")
    args = parser.parse_args(argv)
    folders = ([args.root] if (args.root / "truth.json").exists()
               else sorted(p for p in args.root.iterdir() if (p / "truth.json").exists()))
    if args.games:
        folders = [f for f in folders if f.name in args.games]
    if not folders:
        print(f"eval_games: no game folders with truth.json under {args.root}", file=sys.stderr)
        return 2
    results = []
    for folder in folders:
        results.append(evaluate(folder, args))
        show(results[-1])
    summary(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
