"""Legal moves: the first word (2+ letters) covers H8; later moves put 1..rack tiles in one row or
column, with no gap except through tiles already there, touching them; nothing is removed or
changed; no more of a letter than the box holds."""

from dataclasses import replace

import pytest
from conftest import BOARDS, ERUDIT, board_with

from engine.board import Board
from engine.errors import MoveError
from engine.move import find_move
from engine.ruleset import load_ruleset

LUK = board_with(("G8", "ЛУК", True))          # ЛУК across G8–I8, through the centre


def cells(move) -> list[str]:
    return [p.cell for p in move.placements]


def test_first_word_across_through_the_centre():
    move = find_move(Board(), LUK, ERUDIT)
    assert cells(move) == ["G8", "H8", "I8"] and move.across


def test_first_word_down_through_the_centre():
    move = find_move(Board(), board_with(("H7", "ЛУК", False)), ERUDIT)
    assert cells(move) == ["H7", "H8", "H9"] and not move.across


def test_first_word_off_centre():
    with pytest.raises(MoveError, match=r"^turn 1: the first word .* must cover the centre H8: "
                                        r"tiles at A1, B1$"):
        find_move(Board(), board_with(("A1", "ОН", True)), ERUDIT, turn=1)


def test_first_word_of_one_letter():
    with pytest.raises(MoveError, match="first word"):
        find_move(Board(), board_with(("H8", "Я", True)), ERUDIT)


def test_not_one_line():
    after = board_with(("H7", "С", True), ("H9", "Н", True), ("J8", "И", True), start=LUK)
    with pytest.raises(MoveError, match=r"^turn 2: new tiles are not in one row or column: "
                                        r"H7, J8, H9$"):
        find_move(LUK, after, ERUDIT, turn=2)


def test_gap_filled_by_an_old_tile_is_allowed():
    after = board_with(("H7", "Г.БА", False), start=LUK)   # ГУБА down through the old У at H8
    assert cells(find_move(LUK, after, ERUDIT)) == ["H7", "H9", "H10"]


def test_gap_names_the_empty_cells():
    before = Board.read(BOARDS / "game_2.txt", ERUDIT)      # ЛУК, then ЛЕС down from G8
    after = Board.read(BOARDS / "gap.txt", ERUDIT)          # Т at G4 and G11: G5–G7 empty
    with pytest.raises(MoveError, match=r"^turn 3: gap in the new word at G5, G6, G7$"):
        find_move(before, after, ERUDIT, turn=3)


def test_new_tiles_must_touch_old_ones():
    after = board_with(("A1", "ОН", True), start=LUK)
    with pytest.raises(MoveError, match=r"do not touch the tiles already on the board: A1, B1"):
        find_move(LUK, after, ERUDIT)


def test_a_tile_removed():
    before = Board.read(BOARDS / "game_2.txt", ERUDIT)
    after = Board.read(BOARDS / "removed.txt", ERUDIT)      # the К of ЛУК gone from I8
    with pytest.raises(MoveError, match=r"^turn 3: tile removed at I8$"):
        find_move(before, after, ERUDIT, turn=3)


def test_a_tile_changed():
    after = board_with(("H8", "Ю", True), ("H9", "Я", True), start=LUK)
    with pytest.raises(MoveError, match=r"tile changed at H8 \(У → Ю\)"):
        find_move(LUK, after, ERUDIT)


def test_unchanged_board_is_a_pass():
    move = find_move(LUK, LUK.copy(), ERUDIT)
    assert move.is_pass and not move.placements


def test_more_of_a_letter_than_the_box_holds():
    before = board_with(("G8", "ФОН", True))               # the one Ф of the Эрудит box
    after = board_with(("G9", "Ф", True), start=before)    # a second Ф under it
    with pytest.raises(MoveError, match=r"2 × letter Ф on the board, but the erudit box has "
                                        r"only 1"):
        find_move(before, after, ERUDIT)


def test_letter_counts_are_per_ruleset():
    board = board_with(("G8", "ЖЖ", True))                 # two Ж: Эрудит has 2, Mattel has 1
    assert len(find_move(Board(), board, ERUDIT).placements) == 2
    with pytest.raises(MoveError, match="only 1"):
        find_move(Board(), board, load_ruleset("scrabble-ru"))


def test_stars_counted_against_the_box():
    three = board_with(("F8", "***", True))                # F8 G8 H8: the 3 Эрудит stars
    four = board_with(("I8", "*", True), start=three)
    assert len(find_move(Board(), three, ERUDIT).placements) == 3
    with pytest.raises(MoveError, match=r"4 × stars on the board, but the erudit box has only 3"):
        find_move(three, four, ERUDIT)


def test_single_tile_direction():
    below = board_with(("H9", "Т", True), start=LUK)       # under У: only a down word
    beside = board_with(("J8", "И", True), start=LUK)      # right of К: an across word
    assert not find_move(LUK, below, ERUDIT).across
    assert find_move(LUK, beside, ERUDIT).across


def test_no_more_tiles_than_the_rack_holds():
    eight = board_with(("A8", "САМОЛЕТЫ", True))           # 8 tiles A8–H8: an Эрудит rack holds 7
    with pytest.raises(MoveError, match=r"^turn 1: 8 new tiles, but a rack holds 7: A8, B8, "):
        find_move(Board(), eight, ERUDIT, turn=1)
    gift_rack = replace(ERUDIT, rack=8)                    # the gift edition's rack of 8
    assert len(find_move(Board(), eight, gift_rack).placements) == 8
