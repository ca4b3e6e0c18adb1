"""Replay synthetic games from their photos and compare every move and total with the truth.

    python bench/eval_replay.py --games 12 --damage all
    python bench/eval_replay.py --games 12 --box 12     # one unseen box, read with its profile
    python bench/eval_replay.py --games 32 --damage all --jobs 2   # two games at a time
    python bench/eval_replay.py --games 16 --damage all --shadow   # the player's shadow on each

With `--box N` every game is photographed on novel box N (bench.eval_calibration's unseen
"novel-violet" style, font and colours drawn from N) and replayed with the profile made from
that box's two calibration photos (`--zero-shot`: with the general model alone). With `--dim`,
`--shadow`, `--bowed` or `--warm` every photo is taken so (`synth.photos.CONDITIONS`: a
dim room, the player's shadow over part of the photo, a wide lens, a warm lamp; new noise,
shadow, lens or lamp each turn); with `--folded` each game's board is a folding one that does
not lie flat (its far half turned 2-6° about the hinge in every photo); with `--seated` every
photo is taken from a chair at the table (50-62° off straight down).

Prints per-game results, the share of moves whose cells and score are exact, and the share of
games whose final totals are exact (issue 5's bars: 99% of moves, 95% of games), and how many
of the wrong moves the replay itself marked as unsure.

With `--live` each photo is instead proposed alone, on the true board before it, as the web
app proposes a turn that the player then confirms or corrects (no later photos to weigh):
prints how many proposals were right and sure, right but unsure (a confirmation asked for),
refused (a photo to take again), wrong but unsure, and wrong yet sure (a silent error), and
of the wrong ones how many offered the true move among their alternatives (one tap mends it).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.eval_read import add_condition_options, pool_of, rendered_so  # noqa: E402
from engine.board import is_star, parse_cell  # noqa: E402
from engine.errors import EruditError  # noqa: E402
from engine.game import Game  # noqa: E402
from engine.ruleset import load_ruleset  # noqa: E402
from synth.photos import CONDITIONS, DAMAGES, game_photos  # noqa: E402

STYLES = {"erudit": ("erudit-black", "erudit-cream")}
NOVEL = "novel-violet"


def same_tiles(a, b) -> bool:
    """Boards equal, a star matching a star whatever letter it was declared as."""
    for (r, c, x) in a.tiles():
        y = b[r, c]
        if x != y and not (is_star(x) and is_star(y)):
            return False
    return len(list(a.tiles())) == len(list(b.tiles()))


LEARN = [True]  # whether the replay learns its box from its own photos (--no-learn: not)


def replay(photos, profile=None) -> Game:
    from companion_app.photos import replay_images

    game = new_game(photos, profile)
    replay_images(game, photos.images, profile, learn=LEARN[0])
    return game


def new_game(photos, profile=None) -> Game:
    """A game of the photographed one's players, under its box's rules."""
    ruleset = photos.ruleset if profile is None else profile.apply_to(photos.ruleset)
    return Game(ruleset, photos.players, word_check="off")


def photographed(seed: int, damage: str, style: str, turns: int, players: int,
                 box: int | None = None, condition: str | None = None):
    """A synthetic game and a photo after each of its turns, taken as `condition` says."""
    photos = game_photos(load_ruleset("erudit"), seed=seed, turns=turns, players=players,
                         style=style, damage=damage, box_seed=box,
                         **rendered_so(condition, seed))
    if condition in CONDITIONS:
        photos.images[:] = [CONDITIONS[condition](image, seed * 1000 + number)
                            for number, image in enumerate(photos.images, 1)]
    return photos


def evaluate(seed: int, damage: str, style: str, turns: int, players: int,
             box: int | None = None, profile=None, condition: str | None = None):
    """(moves exact, moves, final totals exact, wrong moves the replay marked unsure)"""
    photos = photographed(seed, damage, style, turns, players, box, condition)
    try:
        game = replay(photos, profile)
    except EruditError as exc:  # a photo the pipeline could not read ends that game's replay
        print(f"  game {seed}: stopped: {exc}")
        return 0, len(photos.boards), False, 0
    right = [same_tiles(turn.board, board) and turn.score.total == score
             for turn, board, score in zip(game.turns, photos.boards, photos.scores, strict=True)]
    flagged = sum(1 for turn, ok in zip(game.turns, right, strict=True) if not ok and not turn.sure)
    return sum(right), len(photos.boards), game.totals == photos.totals, flagged


OUTCOMES = ("right", "right, unsure", "refused", "wrong, unsure", "wrong, sure")
OFFERED = "wrong, the true move offered"  # a subset of the wrong ones, not an outcome of its own


def evaluate_live(seed: int, damage: str, style: str, turns: int, players: int,
                  box: int | None = None, profile=None, condition: str | None = None):
    """Each photo's proposal alone, on the true board before it: {outcome: turns}, and under
    OFFERED the wrong proposals whose alternatives hold the true move."""
    from companion_app.photos import propose_image

    photos = photographed(seed, damage, style, turns, players, box, condition)
    game = new_game(photos, profile)
    outcomes = {outcome: [] for outcome in OUTCOMES}
    offered = []
    for number, (image, board) in enumerate(zip(photos.images, photos.boards, strict=True), 1):
        try:
            proposal = propose_image(game, image, profile)
        except EruditError:
            outcomes["refused"].append(number)
        else:
            right = "right" if same_tiles(proposal.board, board) else "wrong"
            sure = "sure" if proposal.sure else "unsure"
            outcomes["right" if (right, sure) == ("right", "sure") else f"{right}, {sure}"] \
                .append(number)
            if right == "wrong" and _offered(game.board, proposal.alternatives, board):
                offered.append(number)
        game.play(board)  # the player confirmed or corrected it
    return {**outcomes, OFFERED: offered}


def _offered(before, alternatives: list[dict], truth) -> bool:
    """Whether one of a proposal's alternatives, put on the board before it, is the truth."""
    for alternative in alternatives:
        board = before.copy()
        for tile in alternative["tiles"]:
            board.set(*parse_cell(tile["cell"]), tile["letter"])
        if same_tiles(board, truth):
            return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--seed", type=int, default=5000, help="first seed (held out of training)")
    parser.add_argument("--damage", default="none", choices=(*DAMAGES, "all"))
    parser.add_argument("--box", type=int, help="photograph every game on this novel box")
    parser.add_argument("--zero-shot", action="store_true", help="--box without its profile")
    parser.add_argument("--jobs", type=int, default=1, help="games replayed side by side")
    parser.add_argument("--live", action="store_true",
                        help="each photo proposed alone on the true board before it")
    parser.add_argument("--no-learn", action="store_true",
                        help="replay without learning the box from the game's own photos")
    add_condition_options(parser)
    options = parser.parse_args()
    LEARN[0] = not options.no_learn
    with tempfile.TemporaryDirectory() as folder:
        return run(options, Path(folder))


PROFILE = []  # the box profile games are replayed with (one a process)


def use_profile(box: int | None, zero_shot: bool, folder: Path) -> None:
    """Build the profile of novel box `box` from its calibration photos (none for the general
    model), in a folder of this process's own."""
    PROFILE.clear()
    if box is not None and not zero_shot:
        from bench.eval_calibration import novel_profile

        own = folder / f"process{os.getpid()}"
        own.mkdir()
        PROFILE.append(novel_profile(box, own))


def run(options, folder: Path) -> int:
    rng = random.Random(options.seed)
    cases = []
    for i in range(options.games):
        damage = DAMAGES[i % len(DAMAGES)] if options.damage == "all" else options.damage
        style = rng.choice(STYLES["erudit"])  # drawn even with --box: the same games either way
        style = NOVEL if options.box is not None else style
        turns, players = rng.randint(10, 30), rng.randint(2, 4)
        cases.append((options.seed + i, damage, style, turns, players, options.box,
                      options.condition))
    start = time.perf_counter()
    setup = (options.box, options.zero_shot, folder)
    with pool_of(options.jobs, use_profile, *setup) as pool:
        if pool is None:
            use_profile(*setup)
        if options.live:
            summary = _live_totals(pool.imap(_live_game, cases) if pool
                                   else map(_live_game, cases))
        else:
            summary = _replay_totals(pool.imap(_game, cases) if pool else map(_game, cases),
                                     options.games)
    print(f"{summary}; {time.perf_counter() - start:.0f} s")
    return 0


def _replay_totals(results, games: int) -> str:
    """Print each game's line; the moves and games exact, in one line."""
    moves = exact_moves = exact_games = flagged = 0
    for printed, (exact, total, totals_ok, unsure) in results:
        print(printed, flush=True)
        moves += total
        flagged += unsure
        exact_moves += exact
        exact_games += totals_ok
    return (f"moves exact: {exact_moves}/{moves} ({exact_moves / moves:.2%}); "
            f"games with exact totals: {exact_games}/{games} ({exact_games / games:.0%}); "
            f"wrong moves marked unsure: {flagged}/{moves - exact_moves}")


def _live_totals(results) -> str:
    """Print each game's line; how the proposals of all photos went, in one line."""
    totals = dict.fromkeys((*OUTCOMES, OFFERED), 0)
    for printed, outcomes in results:
        print(printed, flush=True)
        for outcome, turns in outcomes.items():
            totals[outcome] += len(turns)
    offered = totals.pop(OFFERED)
    photos = sum(totals.values())
    wrong = totals["wrong, unsure"] + totals["wrong, sure"]
    return f"proposals of {photos} photos: " + "; ".join(
        f"{outcome} {count} ({count / photos:.1%})" for outcome, count in totals.items()) \
        + f"; the true move among the alternatives of {offered} of the {wrong} wrong"


def _live_game(case: tuple) -> tuple[str, dict]:
    """One game's photos proposed one by one: its report line and {outcome: turns}."""
    seed, damage, style, turns, players, box, condition = case
    outcomes = evaluate_live(seed, damage, style, turns, players, box,
                             PROFILE[0] if PROFILE else None, condition)
    missed = "; ".join(f"{outcome} at turns {', '.join(map(str, numbers))}"
                       for outcome, numbers in outcomes.items() if outcome != "right" and numbers)
    return (f"{_named(case)} right {len(outcomes['right'])}/{turns}"
            f"{'; ' + missed if missed else ''}"), outcomes


def _game(case: tuple) -> tuple[str, tuple]:
    """One game replayed: its report line(s) and (moves exact, moves, totals exact, unsure)."""
    seed, damage, style, turns, players, box, condition = case
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = evaluate(seed, damage, style, turns, players, box,
                          PROFILE[0] if PROFILE else None, condition)
    exact, total, totals_ok, _ = result
    return (out.getvalue() + f"{_named(case)} moves exact {exact}/{total}  totals "
            f"{'exact' if totals_ok else 'WRONG'}"), result


def _named(case: tuple) -> str:
    """The start of a game's report line: its seed, look, players, turns and damage."""
    seed, damage, style, turns, players, _, _ = case
    return f"game {seed}: {style:<13} {players} players {turns:>2} turns damage={damage:<13}"


if __name__ == "__main__":
    sys.exit(main())
