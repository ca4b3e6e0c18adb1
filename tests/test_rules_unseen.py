"""The tiles a player has not seen yet (bag and racks): the box's counts minus the board."""

from conftest import ERUDIT, board_with, play_all

from engine.game import Game
from engine.ruleset import load_ruleset


def test_unseen_tiles_from_the_box_counts():
    game = Game(ERUDIT, 2)
    play_all(game, ("G8", "ЛУК", True), ("I9", "*", False))   # ЛУК, then a star under К
    unseen = game.unseen()
    # the box: Л4 У3 К6, 3 stars, 131 tiles in all; 4 are on the board
    assert (unseen["Л"], unseen["У"], unseen["К"], unseen["*"]) == (3, 2, 5, 2)
    assert unseen["Ф"] == 1 and sum(unseen.values()) == 131 - 4


def test_a_star_known_as_a_letter_is_still_a_star():
    game = Game(ERUDIT, 2)
    game.play(board_with(("G8", "КоТ", True)))
    unseen = game.unseen()
    assert (unseen["О"], unseen["*"], unseen["К"]) == (10, 2, 5)


def test_letters_used_up_are_left_out():
    game = Game(ERUDIT, 2, word_check="off")
    game.play(board_with(("G8", "ФЕН", True)))   # the only Ф of the box
    assert "Ф" not in game.unseen()


def test_unseen_follows_the_ruleset():
    game = Game(load_ruleset("scrabble-ru"), 2)
    game.play(board_with(("G8", "ЁЖ", True)))          # Mattel: one Ё, one Ж, 102 + 2 tiles
    unseen = game.unseen()
    assert "Ё" not in unseen and "Ж" not in unseen and sum(unseen.values()) == 104 - 2


def test_empty_board_unseen_is_the_whole_box():
    assert sum(Game(ERUDIT, 2).unseen().values()) == 131
