"""The board and its text notation, cell names (`H8`) and GCG positions (`8H`, `H8`).

>>> board = Board.parse("\\n".join(["." * 15] * 7 + ["......КОТ......"] + ["." * 15] * 7))
>>> board["H8"], cell_name(7, 6)
('О', 'G8')
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from engine.errors import BoardTextError
from engine.files import read_text
from engine.ruleset import SIZE, Ruleset

EMPTY = "."
STAR = "*"
COLUMNS = "ABCDEFGHIJKLMNO"
CENTRE = (7, 7)


def cell_name(row: int, col: int) -> str:
    """`H8` for row 7, column 7 (0-based)."""
    return f"{COLUMNS[col]}{row + 1}"


def cell_names(cells) -> str:
    """Cells (each starting row, col) named for a message: `H8, H9`."""
    return ", ".join(cell_name(row, col) for row, col, *_ in cells)


_CELL = re.compile(r"[A-Z][0-9]{1,2}\Z")   # ASCII digits only: int() takes '²' or '٣' too
SHOWN_CHARS = 20  # of a bad value quoted in an error: enough to recognise it


def shown(text: str) -> str:
    """`text` quoted for an error line, cut short when long (a line, not a page of digits)."""
    text = str(text)
    return repr(text) if len(text) <= SHOWN_CHARS else repr(text[:SHOWN_CHARS]) + "…"


def cut(text: str) -> str:
    """`text` as an error's parameter: cut short when long, as `shown` does, but unquoted
    (the message's own text quotes it)."""
    text = str(text)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


def parse_cell(name: str) -> tuple[int, int]:
    """(row, col) of a cell name such as `H8`."""
    name = name.strip().upper()
    if not _CELL.match(name) or name[0] not in COLUMNS:
        raise BoardTextError(f"bad cell name {shown(name)} (expected a column A–O and a row 1–15)")
    row = int(name[1:]) - 1
    if not 0 <= row < SIZE:
        raise BoardTextError(f"bad cell name {name!r} (row must be 1–15)")
    return row, COLUMNS.index(name[0])


def position(row: int, col: int, across: bool) -> str:
    """GCG position of a word starting at (row, col): `8H` across, `H8` down."""
    return f"{row + 1}{COLUMNS[col]}" if across else f"{COLUMNS[col]}{row + 1}"


def parse_position(text: str) -> tuple[int, int, bool]:
    """(row, col, across) of a GCG position such as `8H` (across) or `H8` (down)."""
    text = text.strip().upper()
    if text[:1].isdigit():
        digits = text.rstrip(COLUMNS)
        row, col = int(digits) - 1, text[len(digits):]
        across = True
    else:
        col, digits = text[:1], text[1:]
        row, across = (int(digits) - 1 if digits.isdigit() else -1), False
    if len(col) != 1 or col not in COLUMNS or not 0 <= row < SIZE:
        raise BoardTextError(f"bad position {text!r} (expected like 8H across or H8 down)")
    return row, COLUMNS.index(col), across


def is_star(symbol: str) -> bool:
    """A star tile: `*` (letter unknown) or a lower-case letter (the letter it stands for)."""
    return symbol == STAR or symbol.islower()


class Board:
    """A 15×15 board of symbols: `.` empty, `А` a letter tile, `*` a star, `а` a star as `А`."""

    __slots__ = ("_cells",)

    def __init__(self, cells: list[list[str]] | None = None):
        if cells is None:
            cells = [[EMPTY] * SIZE for _ in range(SIZE)]
        self._cells = [list(row) for row in cells]

    @classmethod
    def parse(cls, text: str, ruleset: Ruleset | None = None, source: str = "board") -> Board:
        """Read board text; with a ruleset, letters outside its alphabet are an error."""
        lines = [line.rstrip("\r") for line in text.strip("\ufeff\n").split("\n")]
        while lines and not lines[-1].strip():
            lines.pop()
        if len(lines) != SIZE:
            raise BoardTextError(f"{source}: expected 15 lines, got {len(lines)}")
        for number, line in enumerate(lines, 1):
            if len(line) != SIZE:
                raise BoardTextError(f"{source}: line {number} has {len(line)} characters, not 15")
            for col, symbol in enumerate(line):
                _check_symbol(symbol, ruleset, f"{source}: cell {cell_name(number - 1, col)}")
        return cls([list(line) for line in lines])

    @classmethod
    def read(cls, path: str | Path, ruleset: Ruleset | None = None) -> Board:
        return cls.parse(read_text(path, BoardTextError), ruleset, source=str(path))

    def __getitem__(self, key: str | tuple[int, int]) -> str:
        row, col = parse_cell(key) if isinstance(key, str) else key
        return self._cells[row][col]

    def set(self, row: int, col: int, symbol: str) -> None:
        self._cells[row][col] = symbol

    def copy(self) -> Board:
        return Board(self._cells)

    def rows(self) -> list[str]:
        return ["".join(row) for row in self._cells]

    def changes(self, other: Board) -> Iterator[tuple[int, int, str, str]]:
        """Every cell that differs in `other` as (row, col, symbol here, symbol there), row by
        row. Whole rows are compared first: most rows of two boards of one game are alike."""
        for row, (mine, theirs) in enumerate(zip(self._cells, other._cells, strict=True)):
            if mine != theirs:
                for col, (old, new) in enumerate(zip(mine, theirs, strict=True)):
                    if old != new:
                        yield row, col, old, new

    def placed_over(self, before: Board) -> list[tuple[int, int, str]]:
        """The tiles of this board on cells empty in `before` (a move's new tiles) as (row,
        col, symbol), row by row."""
        return [(row, col, new) for row, col, old, new in before.changes(self) if old == EMPTY]

    def counts(self) -> Counter:
        """How many of each symbol lie on the board (empty cells not counted)."""
        counts = Counter("".join("".join(row) for row in self._cells))
        del counts[EMPTY]
        return counts

    def tiles(self) -> Iterator[tuple[int, int, str]]:
        """Every occupied cell as (row, col, symbol), row by row."""
        for row in range(SIZE):
            for col in range(SIZE):
                if self._cells[row][col] != EMPTY:
                    yield row, col, self._cells[row][col]

    def is_empty(self) -> bool:
        return all(row.count(EMPTY) == SIZE for row in self._cells)

    def in_bounds(self, row: int, col: int) -> bool:
        return 0 <= row < SIZE and 0 <= col < SIZE

    def occupied(self, row: int, col: int) -> bool:
        return self.in_bounds(row, col) and self._cells[row][col] != EMPTY

    def __str__(self) -> str:
        return "\n".join(self.rows())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Board) and self._cells == other._cells

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"Board({len(list(self.tiles()))} tiles)"


def _check_symbol(symbol: str, ruleset: Ruleset | None, where: str) -> None:
    if symbol in (EMPTY, STAR):
        return
    if not symbol.isalpha():
        raise BoardTextError(f"{where}: unknown character {symbol!r}")
    if ruleset is not None and symbol.upper() not in ruleset.alphabet:
        raise BoardTextError(f"{where}: letter {symbol!r} is not in the {ruleset.name} alphabet")
