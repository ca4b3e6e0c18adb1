"""Each square weighed against its own empty look: blank tiles on every kind of square are told
from empty squares, and real games of a box never trained on replay move for move."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.board import Board, is_star, parse_cell
from engine.game import Game
from engine.report import game_dict
from engine.ruleset import load_ruleset

pytest.importorskip("PIL", reason="the renderer needs the render extra (Pillow)")

from synth import render_photo  # noqa: E402
from vision.read import read_board  # noqa: E402
from vision.squares import SquareLooks  # noqa: E402

SCRABBLE = load_ruleset("scrabble")
# one blank on a square of each kind of the Scrabble layout, the centre among them, beside a
# few letter tiles
BLANKS = {"H8": "centre ×2 word", "A1": "×3 word", "B2": "×2 word", "A4": "×2 letter",
          "B6": "×3 letter", "E5": "plain"}


def board_rows(with_blanks: bool) -> list[str]:
    rows = [["."] * 15 for _ in range(15)]
    for cell, letter in (("F8", "C"), ("G8", "A"), ("I8", "T"), ("J8", "S")):
        row, col = parse_cell(cell)
        rows[row][col] = letter
    if with_blanks:
        for cell in BLANKS:
            row, col = parse_cell(cell)
            rows[row][col] = "*"
    return ["".join(row) for row in rows]


@pytest.mark.parametrize("style", ["scrabble-hasbro", "scrabble-vintage"])
def test_a_blank_tile_on_every_kind_of_square_is_told_from_the_empty_square(style):
    # a fixed camera: the box, the pose and the light are the same in both photos
    empty = render_photo(board_rows(False), seed=31, box_seed=5, style=style, pose="frontal")
    played = render_photo(board_rows(True), seed=31, box_seed=5, style=style, pose="frontal")
    before = read_board(empty.image, ruleset=SCRABBLE, turns=0)
    squares = SquareLooks()
    squares.learn(before.looks, np.array([[ch == "." for ch in row] for row in empty.board]))
    reading = read_board(played.image, ruleset=SCRABBLE, turns=0, squares=squares)
    for cell, kind in BLANKS.items():
        row, col = parse_cell(cell)
        assert is_star(reading.board[row][col]), f"the blank on the {kind} square {cell}"
    wrong = [f"{'ABCDEFGHIJKLMNO'[c]}{r + 1}" for r in range(15) for c in range(15)
             if played.board[r][c] == "." and reading.board[r][c] != "."]
    assert not wrong, f"empty squares read as tiles: {wrong}"


def test_squares_seen_empty_outvote_a_network_that_reads_them_as_tiles():
    squares = SquareLooks()
    looks = np.random.default_rng(1).uniform(40, 200, (15, 15, 5, 5, 4)).astype(np.float32)
    squares.learn(looks, np.ones((15, 15), bool))
    probs = np.zeros((15, 15, 3), np.float32)
    probs[..., 0] = 0.99  # the label order of a reading: empty, joker, a letter
    probs[..., 1] = 0.01
    probs[3, 4] = [0.15, 0.85, 0.0]  # a square the network takes for a blank
    probs[9, 9] = [0.95, 0.05, 0.0]  # a blank it takes for the square
    now = looks.copy()
    now[9, 9] = [200, 128, 150, 3]  # an ivory tile's face, nothing printed
    weighed = squares.weigh(probs, now)
    assert weighed[3, 4, 0] > 0.9
    assert weighed[9, 9, 0] < 0.1
    assert np.allclose(weighed.sum(axis=-1), 1)


def test_a_photo_too_unlike_the_squares_is_not_weighed():
    squares = SquareLooks()
    assert squares.weigh(np.full((15, 15, 2), 0.5), None).tolist() == \
        np.full((15, 15, 2), 0.5).tolist()


GAME = "game14"
TURNS = 10


def exact(move: dict, truth: dict) -> bool:
    placed = {t["cell"]: t["letter"] for t in truth.get("photo_tiles") or []}
    got = {t["cell"]: t["letter"] for t in move["tiles"]}
    return (set(placed) == set(got) and move["score"] == truth["score"]
            and all(got[c] == letter or (letter.islower() and is_star(got[c]))
                    for c, letter in placed.items()))


@pytest.mark.slow
def test_a_real_game_of_a_box_never_trained_on_replays_move_for_move(shared):
    from companion_app.photos import replay_photos

    folder = shared / "external" / "scrabscrap" / GAME
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
    game = Game(load_ruleset("scrabble-de"), 2)
    replay_photos(game, [str(folder / p) for p in truth["photos"][:TURNS]])
    moves = game_dict(game)["moves"]
    wrong = [m["turn"] for m, t in zip(moves, truth["moves"], strict=False) if not exact(m, t)]
    assert not wrong, f"turns read wrong: {wrong}"
    assert isinstance(game.board, Board)


def test_a_profile_from_the_boxs_empty_board_reads_no_empty_square_as_a_tile(shared, data_dir,
                                                                             capsys):
    from companion_app.cli import main

    folder = shared / "external" / "scrabscrap" / "game13"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
    assert main(["calibrate", "--empty", str(folder / "extra" / "empty.jpg"), "--name", "club",
                 "--ruleset", "scrabble"]) == 0
    capsys.readouterr()
    first = folder / truth["photos"][0]
    assert main(["read", str(first), "--profile", "club", "--ruleset", "scrabble", "--json"]) == 0
    board = json.loads(capsys.readouterr().out)["board"]
    placed = {parse_cell(t["cell"]) for t in truth["moves"][0]["photo_tiles"]}
    wrong = [(r, c) for r in range(15) for c in range(15)
             if (r, c) not in placed and board[r][c] != "."]
    assert not wrong, f"empty squares read as tiles: {wrong}"


def test_a_tile_like_a_letter_the_game_has_taken_is_read_as_that_letter():
    from vision.squares import TileLooks

    rng = np.random.default_rng(3)
    ours, theirs = rng.normal(size=16), rng.normal(size=16)
    looks = np.zeros((15, 15, 16), np.float32)
    looks[7, 7], looks[7, 8] = ours + 0.05 * rng.normal(size=16), ours
    looks[8, 7], looks[8, 8] = theirs, theirs + 0.05 * rng.normal(size=16)
    tiles = TileLooks()
    tiles.learn(looks, [(7, 7, "Q"), (7, 8, "Q"), (8, 7, "Z"), (8, 8, "Z")])
    glyphs = [".", "Q", "Z", "O"]
    # the network is torn between Q and O on a tile that looks like the game's Qs
    log_probs = np.log(np.array([[0.01, 0.44, 0.05, 0.50], [0.01, 0.44, 0.05, 0.50]]))
    cells = np.stack([ours + 0.05 * rng.normal(size=16), rng.normal(size=16)])
    adjusted = tiles.adjust(log_probs, cells, glyphs, 0)
    assert glyphs[int(adjusted[0].argmax())] == "Q"
    assert glyphs[int(adjusted[1].argmax())] == "O"  # unlike every taken tile: as read
    assert np.allclose(np.exp(adjusted).sum(axis=1), 1)


@pytest.mark.slow
def test_a_proposal_reads_a_new_blank_against_what_the_games_photos_showed(shared):
    from companion_app.photos import propose_turn

    folder = shared / "external" / "scrabscrap" / "game13"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
    ruleset = load_ruleset("scrabble-de")
    game = Game(ruleset, 2)
    board = Board()
    for move in truth["moves"][:15]:  # the turns before two blanks are laid, as taken
        board = board.copy()
        for tile in move.get("photo_tiles") or []:
            board.set(*parse_cell(tile["cell"]), tile["letter"])
        game.play(board) if move["kind"] == "play" else game.pass_turn()
    past = [str(folder / p) for p in truth["photos"][:15]]
    proposal = propose_turn(game, folder / truth["photos"][15], past=past, key="game13")
    placed = {cell for cell in proposal.cells}
    assert {"E9", "E10"} <= placed, f"the two blanks are part of the move: {sorted(placed)}"
    assert all(is_star(proposal.board[cell]) for cell in ("E9", "E10"))
