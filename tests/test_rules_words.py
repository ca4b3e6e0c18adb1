"""Allowed words by convention: common nouns in the nominative singular (pluralia tantum
allowed), checked with pymorphy3; the check is off, a warning (the default: never blocks a
score) or strict."""

import pytest
from conftest import ERUDIT, board_with

from engine.errors import MoveError
from engine.game import Game
from engine.ruleset import load_ruleset
from engine.words import check_word, check_words

MOSKVA = board_with(("D8", "МОСКВА", True))   # a proper name: Москва


@pytest.mark.parametrize("word", ["пихта", "ШАР", "уж", "ЕЖ", "ёж"])
def test_common_noun_nominative_singular(word):
    assert check_word(word).ok


@pytest.mark.parametrize("word", ["ножницы", "сани"])
def test_pluralia_tantum_allowed(word):
    assert check_word(word).ok


@pytest.mark.parametrize("word, reason", [
    ("москва", "a proper name or abbreviation"),
    ("иван", "a proper name or abbreviation"),
    ("кота", "not in the nominative singular"),      # genitive of кот
    ("столы", "not in the nominative singular"),     # plural of стол
    ("бежать", "not a noun"),
    ("абвгд", "not in the dictionary"),
])
def test_rejected_words(word, reason):
    verdict = check_word(word)
    assert (verdict.ok, verdict.reason) == (False, reason)


def test_a_star_known_as_a_letter_is_read_as_that_letter():
    assert check_word("КоТ").ok


def test_words_with_an_unknown_star_are_not_judged():
    assert [v.word for v in check_words(["К*Т", "КОТ"], "ru")] == ["КОТ"]


def test_no_dictionary_for_a_ruleset_without_one():
    assert check_words(["QXZ"], load_ruleset("scrabble").word_check) == []


def test_warn_is_the_default_and_never_blocks_the_score():
    game = Game(ERUDIT, 2)
    turn = game.play(MOSKVA)
    # D8 ×2 letter under М: М2×2 + О1 + С2 + К2 + В2 + А1 = 12
    assert turn.score.total == 12
    assert [(v.word, v.ok) for v in turn.verdicts] == [("МОСКВА", False)]


def test_strict_refuses_the_move():
    game = Game(ERUDIT, 2, word_check="strict")
    with pytest.raises(MoveError, match=r"^turn 1: word not allowed: МОСКВА: a proper name"):
        game.play(MOSKVA)
    assert game.turns == [] and game.board.is_empty()
    assert game.play(board_with(("G8", "ЛУК", True))).score.total == 7


def test_off_checks_nothing():
    assert Game(ERUDIT, 2, word_check="off").play(MOSKVA).verdicts == []
