"""Board text: 15 lines of 15 characters; row 1 on top, column A on the left; `.` empty, upper
case a tile, `*` a star, lower case a star standing for that letter; cells `H8`, positions
`8H` across and `H8` down."""

import pytest
from conftest import BOARDS, ERUDIT

from engine.board import Board, cell_name, is_star, parse_cell, parse_position, position
from engine.errors import BoardTextError
from engine.ruleset import load_ruleset

EMPTY = "." * 15


def text(rows: dict[int, str]) -> str:
    return "\n".join(rows.get(r, EMPTY) for r in range(1, 16))


def test_row_one_is_the_top_line_column_a_the_left_character():
    board = Board.parse(text({1: "Ф" + "." * 14, 15: "." * 14 + "Я"}))
    assert board["A1"] == "Ф" and board["O15"] == "Я"
    assert board[0, 0] == "Ф" and board[14, 14] == "Я"


def test_symbols_of_a_board_file():
    board = Board.read(BOARDS / "stars.txt", ERUDIT)   # row 7 `*` at H7; row 8 `КоТ` at G8
    assert board["H7"] == "*" and board["H8"] == "о" and board["G8"] == "К"
    assert board["A1"] == "."
    assert [is_star(board[c]) for c in ("H7", "H8", "G8")] == [True, True, False]


def test_text_round_trip():
    source = (BOARDS / "game_4.txt").read_text("utf-8")
    assert str(Board.parse(source)) + "\n" == source


def test_crlf_bom_and_a_trailing_blank_line_are_accepted():
    source = text({8: "......КОТ......"})
    board = Board.parse("\ufeff" + source.replace("\n", "\r\n") + "\r\n\r\n")
    assert board == Board.parse(source)


def test_ragged_line_names_file_and_line():
    path = BOARDS / "ragged.txt"                        # line 8 has 14 characters
    with pytest.raises(BoardTextError, match=rf"^{path}: line 8 has 14 characters, not 15$"):
        Board.read(path, ERUDIT)


def test_fourteen_lines():
    with pytest.raises(BoardTextError, match="expected 15 lines, got 14"):
        Board.parse("\n".join([EMPTY] * 14))


def test_letter_outside_the_alphabet_names_the_cell():
    path = BOARDS / "latin_letter.txt"                  # a Latin U at H8 among Cyrillic letters
    with pytest.raises(BoardTextError, match=r"cell H8: letter 'U' is not in the erudit alphabet"):
        Board.read(path, ERUDIT)
    assert Board.read(path)["H8"] == "U"                # without a ruleset any letter is a tile


def test_yo_is_a_letter_of_scrabble_ru_only():
    source = text({8: ".......Ё......."})
    assert Board.parse(source, load_ruleset("scrabble-ru"))["H8"] == "Ё"
    with pytest.raises(BoardTextError, match="cell H8"):
        Board.parse(source, ERUDIT)


def test_unknown_character():
    with pytest.raises(BoardTextError, match=r"cell C3: unknown character '\?'"):
        Board.parse(text({3: "..?............"}))


def test_missing_file():
    with pytest.raises(BoardTextError, match=r"nowhere\.txt: cannot read: no such file"):
        Board.read(BOARDS / "nowhere.txt")


def test_cell_names():
    assert cell_name(7, 7) == "H8" and cell_name(0, 14) == "O1"
    assert parse_cell("h8") == (7, 7) and parse_cell("A15") == (14, 0)
    for bad in ("P1", "A16", "A0", "8H", "H"):
        with pytest.raises(BoardTextError):
            parse_cell(bad)


def test_positions_across_and_down():
    assert position(7, 6, True) == "8G"      # a word starting at G8 going across
    assert position(7, 6, False) == "G8"     # … going down
    assert parse_position("8G") == (7, 6, True)
    assert parse_position("G8") == (7, 6, False)
    assert parse_position("15A") == (14, 0, True)
    with pytest.raises(BoardTextError):
        parse_position("16A")


def test_changes_and_counts_of_two_boards():
    before = Board()
    before.set(7, 7, "К")
    after = before.copy()
    after.set(7, 8, "О")
    after.set(9, 2, "*")
    assert list(before.changes(after)) == [(7, 8, ".", "О"), (9, 2, ".", "*")]
    assert list(after.changes(after.copy())) == []
    assert after.counts() == {"К": 1, "О": 1, "*": 1}
