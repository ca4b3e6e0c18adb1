"""The `erudit` command line: thin commands over engine/ and vision/."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from companion_app.settings import data_dir
from engine.board import COLUMNS
from engine.errors import EruditError
from engine.files import why
from engine.ruleset import Ruleset, installed_rulesets, load_ruleset

# videos OpenCV's VideoCapture opens (with the FFmpeg it ships with)
VIDEO_SUFFIXES = {".mp4", ".mov", ".avi", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg", ".wmv"}
PHOTO_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff", ".heic"}


class UsageError(EruditError):
    """A command line that cannot be carried out as given."""


def _print_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _ruleset(args) -> Ruleset:
    ruleset = load_ruleset(args.ruleset or "erudit", data_dir(getattr(args, "data", None)))
    box = _box(args)
    return box.apply_to(ruleset) if box is not None else ruleset


# -- rulesets ----------------------------------------------------------------------------
def cmd_rulesets(args) -> int:
    from vision.classifier import load_model, unknown_letters

    loaded, broken = installed_rulesets(data_dir(args.data))
    for problem in broken:  # one line each; the other rulesets are still listed
        print(f"erudit: {problem}", file=sys.stderr)
    glyphs = load_model().glyphs
    rows = []
    for rs in loaded.values():
        rows.append({"name": rs.name, "title": rs.title, "alphabet": "".join(rs.alphabet),
                     "rack": rs.rack, "bonus": rs.bonus, "tiles": rs.tile_count,
                     "stars": rs.stars, "star_look": rs.star_look, "layout": rs.layout.name,
                     "unreadable_letters": unknown_letters(rs.alphabet, glyphs)})
    for r in rows:
        if args.json:
            _print_json(r)
            continue
        print(f"{r['name']:<15} {r['title']}\n{'':<15} alphabet {r['alphabet']} · rack {r['rack']}"
              f" · all-rack bonus {r['bonus']} · {r['tiles']} tiles ({r['stars']} stars)"
              f" · layout {r['layout']}")
        if r["unreadable_letters"]:
            print(f"{'':<15} photos: not readable: {' '.join(r['unreadable_letters'])} "
                  "(no class for these letters in the tile reader)")
    return 1 if broken else 0


# -- read --------------------------------------------------------------------------------
def cmd_read(args) -> int:
    from vision.classifier import check_readable
    from vision.read import read_photo

    ruleset = _ruleset(args)
    check_readable(ruleset)  # once, not once per photo
    box = _box(args)
    failed = 0
    for path in args.photos:
        try:
            reading = read_photo(path, ruleset=ruleset, profile=box,
                                 squares=box.squares if box is not None else None)
        except EruditError as exc:
            failed += 1
            reason = str(exc).removeprefix(f"{path}: ")
            print(f"erudit: {path}: {reason}", file=sys.stderr)
            if args.json:
                _print_json({"image": path, "error": reason})
            continue
        _show_reading(path, reading, args.json)
    return 1 if failed else 0


def _show_reading(path: str, reading, as_json: bool) -> None:
    record = {
        "image": path, "board": reading.board, "orientation": reading.orientation,
        "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in reading.corners],
        "uncertain": reading.uncertain, "ms": round(reading.ms, 1),
    }
    if as_json:
        _print_json(record)
        return
    print(f"{path}  (turned {reading.orientation}°, {reading.ms:.0f} ms)")
    print("   " + COLUMNS)
    for number, row in enumerate(reading.board, 1):
        print(f"{number:>2} {row}")
    for cell in reading.uncertain:
        options = ", ".join(f"{s} {p:.0%}" for s, p in cell["candidates"])
        print(f"   unsure {cell['cell']}: {options}")


def _box(args):
    """The calibrated box named by --profile, or None for the general model."""
    if not getattr(args, "profile", None):
        return None
    from calibration.profile import load_profile

    return load_profile(args.profile, data_dir(args.data))


# -- demo --------------------------------------------------------------------------------
def cmd_demo(args) -> int:
    from engine import report
    from sample_images.game import replay_sample

    game, expected = replay_sample(data=args.data)
    print(report.scoreboard(game))
    got = [t.score.total for t in game.turns]
    if got == expected["scores"] and game.totals == expected["totals"]:
        print("every score matches the sample game's recorded scores")
        return 0
    print(f"MISMATCH: recorded scores {expected['scores']}, read {got}", file=sys.stderr)
    return 1


# -- serve -------------------------------------------------------------------------------
def cmd_serve(args) -> int:
    from companion_app.web import serve

    serve(args.host, args.port, data_dir(args.data), https=args.https, cameras=args.camera)
    return 0


# -- calibrate ---------------------------------------------------------------------------
def cmd_calibrate(args) -> int:
    from calibration.profile import build_profile, profile_folder

    data = data_dir(args.data)
    ruleset = load_ruleset(args.ruleset or "erudit", data)
    again = (profile_folder(args.name, data) / "profile.json").is_file()
    profile = build_profile(args.empty, args.alphabet, args.name, ruleset, data)
    for line in profile.summary():
        print(line)
    if again:
        print(f"erudit: the box {args.name} was calibrated before; these photos replace "
              "that calibration", file=sys.stderr)
    return 0


# -- replay ------------------------------------------------------------------------------
def cmd_replay(args) -> int:
    from engine import report
    from engine.game import Game

    names = [name.strip() for name in args.names.split(",")] if args.names else None
    players = names or (2 if args.players is None else args.players)
    if names and args.players is not None and len(names) != args.players:
        raise UsageError(f"--names gives {len(names)} players but --players says {args.players}")
    kinds = {_input_kind(p) for p in args.inputs}
    if len(kinds) > 1:
        raise UsageError("replay takes photos, board texts (.txt), one .gcg record or one video, "
                         "not a mix")
    kind = kinds.pop()
    where = None
    if kind == "video":
        game, where = _replay_video(args, players)
    elif kind == "gcg":
        game = _replay_gcg(args)
    else:
        ruleset = _ruleset(args)
        game = Game(ruleset, players, target=args.target, word_check=args.word_check)
        if kind == "txt":
            _replay_boards(game, args.inputs)
        else:
            from companion_app.photos import replay_photos

            replay_photos(game, args.inputs, profile=_box(args))
    if args.gcg:
        _write_gcg(game, args.gcg)
    if args.json:
        record = report.game_dict(game)
        for move, seen in zip(record["moves"], where or [], strict=False):
            move.update(frame=seen.frame, t=seen.t)
        _print_json(record)
    else:
        print(report.scoreboard(game))
    return 0


def _replay_video(args, players):
    """A video of the whole game: the moves it shows, and where in it each was read."""
    import time

    from companion_app.stream import replay_video
    from engine.game import Game

    if len(args.inputs) != 1:
        raise UsageError("replay takes one video at a time")
    if args.settle <= 0:
        raise UsageError(f"--settle is a time in seconds above 0, not {args.settle}")
    game = Game(_ruleset(args), players, target=args.target, word_check=args.word_check)
    start = time.perf_counter()
    progress = _Progress(args.inputs[0])
    where = replay_video(game, args.inputs[0], args.settle, profile=_box(args),
                         progress=progress.show)
    progress.done(time.perf_counter() - start, len(game.turns))
    return game, where


class _Progress:
    """How far a video's replay has come, on the terminal: a line updated in place on a
    terminal, else a line for each move taken and one at the end."""

    def __init__(self, path: str):
        self.path, self.live, self.moves, self.seen = path, sys.stderr.isatty(), 0, 0.0

    def show(self, t: float, length: float, moves: int) -> None:
        self.seen = max(self.seen, t)
        if self.live:
            whole = f" / {length:.0f}" if length else ""
            sys.stderr.write(f"\rerudit: {self.path}: {t:.0f}{whole} s, {_moves(moves)} ")
            sys.stderr.flush()
        elif moves > self.moves:
            print(f"erudit: {self.path}: {t:.0f} s, {_moves(moves)}", file=sys.stderr)
        self.moves = moves

    def done(self, took: float, moves: int) -> None:
        end = "\n" if self.live else ""
        speed = f", {self.seen / took:.1f}× real time" if took > 0 and self.seen else ""
        sys.stderr.write(f"{end}erudit: {self.path}: {_moves(moves)} in {took:.1f} s{speed}\n")


def _moves(count: int) -> str:
    return f"{count} move" if count == 1 else f"{count} moves"


def _input_kind(path: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix == ".gcg":
        return "gcg"
    if suffix == ".txt":
        return "txt"
    if suffix in PHOTO_SUFFIXES:
        return "photo"
    if suffix in VIDEO_SUFFIXES:
        return "video"
    raise UsageError(f"{path}: not a photo, a video, a board text (.txt) or a game record "
                     "(.gcg)")


def _replay_boards(game, paths: list[str]) -> None:
    from engine.board import Board
    from engine.errors import GameError

    for path in paths:
        board = Board.read(path, game.ruleset)
        if game.finished:
            raise GameError(f"{path}: {game._over_message()}")
        try:
            game.play(board)
        except EruditError as exc:
            raise type(exc)(f"{path}: {exc}") from None


def _replay_gcg(args):
    from engine.gcg import read_record, replay_record

    if len(args.inputs) != 1:
        raise UsageError("replay takes one .gcg record at a time")
    record = read_record(args.inputs[0])
    if args.ruleset is None and record.ruleset:
        args.ruleset = record.ruleset
    game, _ = replay_record(record, _ruleset(args), target=args.target, source=args.inputs[0])
    return game


def _write_gcg(game, out: str) -> None:
    from engine.gcg import write_record

    path = Path(out)
    tmp = path.with_name(path.name + ".part")
    try:
        tmp.write_text(write_record(game), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise UsageError(f"{out}: cannot write: {why(exc)}") from None


# -- parser ------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="erudit", description=__doc__)
    parser.add_argument("--data", help="user data folder (profiles, games); default $ERUDIT_DATA")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("rulesets", help="list the installed rulesets")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_rulesets)

    p = sub.add_parser("replay",
                       help="score a game from photos, a video, board texts or a GCG record")
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("--players", type=int, help="number of players (2–4), default 2")
    p.add_argument("--names", help="player names, comma-separated, in turn order")
    p.add_argument("--ruleset", help="ruleset name or .json file (default erudit)")
    p.add_argument("--profile", help="a calibrated box (see `erudit calibrate`)")
    p.add_argument("--target", type=int, help="target score that ends the game")
    p.add_argument("--word-check", default="warn", choices=("off", "warn", "strict"))
    p.add_argument("--gcg", metavar="OUT", help="also write the game as a GCG record")
    p.add_argument("--settle", type=float, default=2.0, metavar="S",
                   help="video: seconds the board stays still, nothing over it, before its "
                        "move is taken (default 2.0)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_replay)

    p = sub.add_parser("read", help="read the board in photos")
    p.add_argument("photos", nargs="+", metavar="PHOTO")
    p.add_argument("--ruleset", help="ruleset name or .json file (default erudit)")
    p.add_argument("--profile", help="a calibrated box (see `erudit calibrate`)")
    p.add_argument("--json", action="store_true", help="one JSON object per photo per line")
    p.set_defaults(run=cmd_read)

    p = sub.add_parser("demo", help="replay the bundled sample game from its photos")
    p.set_defaults(run=cmd_demo)

    p = sub.add_parser("serve", help="the companion web app for phones at the table")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default all)")
    p.add_argument("--port", type=_port, default=8000,
                   help="port to listen on (default 8000; 0: any free port)")
    p.add_argument("--https", action="store_true",
                   help="serve over https, with a certificate made for this computer on first "
                        "use, so a phone's browser lets the page use its camera")
    p.add_argument("--camera", action="append", default=[], metavar="SRC",
                   help="a camera the games may be watched by: a device index (0) or a URL "
                        "(an IP webcam's http://…/video, rtsp://…); repeatable")
    p.set_defaults(run=cmd_serve)

    p = sub.add_parser("calibrate", help="teach the companion one particular box")
    p.add_argument("--empty", required=True, metavar="PHOTO", help="a photo of the empty board")
    p.add_argument("--alphabet", metavar="PHOTO",
                   help="a photo of the tiles laid out in alphabet order, row by row")
    p.add_argument("--name", required=True, help="the profile's name")
    p.add_argument("--ruleset", help="ruleset name (default erudit)")
    p.set_defaults(run=cmd_calibrate)

    for command in sub.choices.values():
        _add_data_flag(command)
    return parser


def _add_data_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", dest="data", default=argparse.SUPPRESS,
                   help="user data folder (profiles, games); default $ERUDIT_DATA")


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 0 to 65535, not {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.run(args)
        sys.stdout.flush()  # a reader gone away shows here, not at exit
        return code
    except EruditError as exc:
        print(f"erudit: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("erudit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # whoever read the output stopped (`erudit read … | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing at exit
        return 1
    except Exception as exc:  # the edge: a user never sees a traceback
        print(f"erudit: internal error: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
