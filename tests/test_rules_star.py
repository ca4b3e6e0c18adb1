"""The star: stands for any letter and scores 0 (option: its letter's value); shown as
`*` until its letter is known; a player may swap a star on the board for the real letter and
must play the star in that same move (option: their next move); Scrabble blanks never swap."""

import pytest
from conftest import ERUDIT, board_with, play_all, score_of, write_ruleset

from engine import report
from engine.board import Board
from engine.errors import MoveError
from engine.game import Game
from engine.move import find_move
from engine.ruleset import load_ruleset


def words(score) -> list[tuple[str, str, int]]:
    return [(w.word, w.at, w.score) for w in score.words]


def test_star_scores_zero():
    # К2 + star 0 + Т2 = 4
    assert words(score_of(Board(), board_with(("G8", "К*Т", True)))) == [("К*Т", "8G", 4)]
    assert words(score_of(Board(), board_with(("G8", "КоТ", True)))) == [("КоТ", "8G", 4)]


def test_star_scores_its_letter_under_that_option(tmp_path):
    starry = load_ruleset(str(write_ruleset(tmp_path, "starry", star_scores_letter=True)))
    # the star as О scores О's 1: К2 + о1 + Т2 = 5; a star of unknown letter still scores 0
    assert score_of(Board(), board_with(("G8", "КоТ", True)), starry).total == 5
    assert score_of(Board(), board_with(("G8", "К*Т", True)), starry).total == 4


def test_star_shown_as_star_until_declared():
    game = Game(ERUDIT, 2)
    first = game.play(board_with(("G8", "К*Т", True)))
    assert report.turn_dict(first)["tiles"][1] == {"cell": "H8", "letter": "*"}
    # next turn's board shows the star as О and adds ОК under Т: ТОК down from I8,
    # О on I9 (×2 letter): Т2 + О1×2 + К2 = 6
    second = game.play(board_with(("H8", "о", True), ("I9", "ОК", False), start=game.board))
    assert [p.cell for p in second.move.declared] == ["H8"]
    assert words(second.score) == [("ТОК", "I8", 6)]
    assert game.board["H8"] == "о" and first.score.words[0].word == "К*Т"


def test_swap_star_for_its_letter_and_play_it_in_the_same_move():
    game = Game(ERUDIT, 2)
    play_all(game, ("G8", "КОТ", True), ("I9", "оК", False))    # ТоК down: the star on I9 (×2)
    assert game.turns[1].score.total == 4                        # Т2 + о0×2 + К2
    # player 0 puts О on I9 for the star and plays it as С on H9: СОМ across from H9
    after = board_with(("H9", "сОМ", True), start=game.board)
    swap = game.play(after)
    assert [p.cell for p in swap.move.swaps] == ["I9"]
    # сОМ: с0 + О1 (I9's ×2 letter was used on turn 2) + М2 = 3; Ос down from H8: О1 + с0 = 1
    assert words(swap.score) == [("сОМ", "9H", 3), ("Ос", "H8", 1)]
    assert report.turn_dict(swap)["tiles"] == [
        {"cell": "H9", "letter": "с"}, {"cell": "J9", "letter": "М"},
        {"cell": "I9", "letter": "О", "swapped": True}]


def test_swapped_star_not_played_in_the_same_move():
    before = board_with(("G8", "КоТ", True))
    swap_only = board_with(("H8", "О", True), start=before)
    with pytest.raises(MoveError, match=r"^turn 2: the star taken at H8 must be played in the "
                                        r"same move$"):
        find_move(before, swap_only, ERUDIT, turn=2)
    without_star = board_with(("I9", "ОК", False), start=swap_only)
    with pytest.raises(MoveError, match="star taken at H8"):
        find_move(before, without_star, ERUDIT, turn=2)


def test_a_star_can_only_become_the_letter_it_stands_for():
    before = board_with(("G8", "КоТ", True))
    with pytest.raises(MoveError, match=r"tile changed at H8 \(о → А\)"):
        find_move(before, board_with(("H8", "А", True), start=before), ERUDIT)


def test_next_move_option(tmp_path):
    later = load_ruleset(str(write_ruleset(tmp_path, "later", star_swap="next-move")))
    game = Game(later, 2, word_check="off")
    game.play(board_with(("G8", "КоТ", True)))                    # turn 1, player 0
    swap = game.play(board_with(("H8", "О", True), start=game.board))   # turn 2: swap only
    assert swap.kind == "play" and [p.cell for p in swap.move.swaps] == ["H8"]
    game.play(board_with(("I9", "ОК", False), start=game.board))  # turn 3, player 0
    no_star = board_with(("F8", "С", True), start=game.board)     # player 1 without the star
    with pytest.raises(MoveError, match=r"^turn 4: the star taken at H8 on turn 2 must be "
                                        r"played in this move$"):
        game.play(no_star)
    assert len(game.turns) == 3                                   # the bad input left no turn
    game.play(board_with(("F8", "с", True), start=game.board))    # with the star: fine
    assert len(game.turns) == 4


def test_scrabble_never_swaps_a_blank():
    scrabble = load_ruleset("scrabble")
    before = board_with(("G8", "CaT", True))
    after = board_with(("H8", "A", True), ("I9", "O", False), start=before)
    with pytest.raises(MoveError, match=r"the scrabble rules never swap a star for its letter "
                                        r"\(at H8\)"):
        find_move(before, after, scrabble)


def test_next_move_option_a_pass_does_not_escape_the_star(tmp_path):
    later = load_ruleset(str(write_ruleset(tmp_path, "later", star_swap="next-move")))
    game = Game(later, 2, word_check="off")
    game.play(board_with(("G8", "КоТ", True)))
    game.play(board_with(("H8", "О", True), start=game.board))     # player 1 takes the star
    game.pass_turn()
    with pytest.raises(MoveError, match="the star taken at H8 on turn 2 must be played"):
        game.pass_turn(exchange=True)
    with pytest.raises(MoveError, match="the star taken at H8 on turn 2 must be played"):
        game.play(game.board)                                       # an unchanged board alike
    assert len(game.turns) == 3
