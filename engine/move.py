"""The move between two boards: which tiles were placed, and whether that is a legal move.

>>> from engine.ruleset import load_ruleset
>>> before = Board.parse("\\n".join(["." * 15] * 15))
>>> after = Board.parse("\\n".join(["." * 15] * 7 + ["......КОТ......"] + ["." * 15] * 7))
>>> [p.cell for p in find_move(before, after, load_ruleset("erudit")).placements]
['G8', 'H8', 'I8']
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from engine.board import CENTRE, EMPTY, STAR, Board, cell_name, cell_names, is_star
from engine.errors import MoveError
from engine.ruleset import Ruleset


@dataclass(frozen=True)
class Placement:
    """One tile put on a cell: its symbol as in board text (`К`, `*`, or `к` for a star as К)."""

    row: int
    col: int
    symbol: str

    @property
    def cell(self) -> str:
        return cell_name(self.row, self.col)


@dataclass(frozen=True)
class Move:
    """What one turn changed: new tiles in one line, stars swapped for their letters,
    and stars whose letter became known. No placements and no swaps is a pass."""

    placements: tuple[Placement, ...] = ()
    swaps: tuple[Placement, ...] = ()
    declared: tuple[Placement, ...] = field(default=(), compare=False)
    across: bool = True

    @property
    def is_pass(self) -> bool:
        return not self.placements and not self.swaps

    def stars_played(self) -> int:
        return sum(is_star(p.symbol) for p in self.placements)

    def apply(self, board: Board) -> Board:
        """The board after this move."""
        after = board.copy()
        for p in (*self.placements, *self.swaps, *self.declared):
            after.set(p.row, p.col, p.symbol)
        return after


def compare_cells(before: Board, after: Board, ruleset: Ruleset, turn: int | None = None):
    """Sort every differing cell into placed, swapped and declared; anything else is an error."""
    placed, swapped, declared, removed, changed = [], [], [], [], []
    for row, col, old, new in before.changes(after):
        kind = _change_kind(old, new)
        {"placed": placed, "swapped": swapped, "declared": declared, "removed": removed,
         "changed": changed, "same": []}[kind].append(Placement(row, col, new))
    if removed:
        raise MoveError(code="tile_removed", turn=turn,
                        cells=cell_names((p.row, p.col) for p in removed))
    if changed:
        detail = ", ".join(f"{p.cell} ({before[p.row, p.col]} → {p.symbol})" for p in changed)
        raise MoveError(code="tile_changed", turn=turn, changes=detail)
    if swapped and ruleset.star_swap == "never":
        raise MoveError(code="star_swap_never", turn=turn, ruleset=ruleset.name,
                        cells=cell_names((p.row, p.col) for p in swapped))
    return placed, swapped, declared


def _change_kind(old: str, new: str) -> str:
    if old == EMPTY:
        return "placed"
    if new == EMPTY:
        return "removed"
    if old == STAR and new.islower():
        return "declared"
    if old.islower() and new == STAR:
        return "same"
    if is_star(old) and new.isupper() and (old == STAR or old.upper() == new):
        return "swapped"
    return "changed"


def find_move(before: Board, after: Board, ruleset: Ruleset, turn: int | None = None) -> Move:
    """The legal move that turns `before` into `after`, or a MoveError naming the turn and cells."""
    placed, swapped, declared = compare_cells(before, after, ruleset, turn)
    if not placed:
        if swapped and ruleset.star_swap == "same-move":
            raise MoveError(code="star_same_move", turn=turn, cell=swapped[0].cell)
        return Move(swaps=tuple(swapped), declared=tuple(declared))
    across = _line(placed, after, turn)
    _check_shape(before, after, placed, across, turn)
    if len(placed) > ruleset.rack:
        raise MoveError(code="too_many_tiles", turn=turn, count=len(placed), rack=ruleset.rack,
                        cells=cell_names((p.row, p.col) for p in placed))
    _check_counts(after, ruleset, turn)
    if swapped and ruleset.star_swap == "same-move":
        stars = sum(is_star(p.symbol) for p in placed)
        if stars < len(swapped):
            raise MoveError(code="star_same_move", turn=turn, cell=swapped[0].cell)
    order = sorted(placed, key=lambda p: (p.row, p.col))
    return Move(tuple(order), tuple(swapped), tuple(declared), across)


def _line(placed: list[Placement], after: Board, turn: int | None) -> bool:
    rows = {p.row for p in placed}
    cols = {p.col for p in placed}
    if len(rows) > 1 and len(cols) > 1:
        raise MoveError(code="not_in_line", turn=turn,
                        cells=cell_names((p.row, p.col) for p in placed))
    if len(placed) > 1:
        return len(rows) == 1
    p = placed[0]
    return after.occupied(p.row, p.col - 1) or after.occupied(p.row, p.col + 1) or not (
        after.occupied(p.row - 1, p.col) or after.occupied(p.row + 1, p.col))


def _check_shape(before: Board, after: Board, placed, across: bool, turn: int | None) -> None:
    first = sorted(placed, key=lambda p: (p.row, p.col))
    lo, hi = first[0], first[-1]
    span = [(lo.row, c) for c in range(lo.col, hi.col + 1)] if across else [
        (r, lo.col) for r in range(lo.row, hi.row + 1)]
    gaps = [rc for rc in span if not after.occupied(*rc)]
    if gaps:
        raise MoveError(code="gap", turn=turn, cells=cell_names(gaps))
    if before.is_empty():
        if not after.occupied(*CENTRE) or len(placed) < 2:
            raise MoveError(code="first_word_centre", turn=turn,
                            cells=cell_names((p.row, p.col) for p in placed))
        return
    if not any(before.occupied(p.row + dr, p.col + dc)
               for p in placed for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0))):
        raise MoveError(code="not_touching", turn=turn,
                        cells=cell_names((p.row, p.col) for p in placed))


def _check_counts(board: Board, ruleset: Ruleset, turn: int | None) -> None:
    counts = Counter()
    for symbol, n in board.counts().items():
        counts["*" if is_star(symbol) else symbol] += n
    for letter, n in sorted(counts.items()):
        have = ruleset.stars if letter == "*" else ruleset.counts.get(letter, 0)
        if n > have:
            if letter == "*":
                raise MoveError(code="too_many_stars", turn=turn, count=n, ruleset=ruleset.name,
                                have=have)
            raise MoveError(code="too_many_letter", turn=turn, count=n, letter=letter,
                            ruleset=ruleset.name, have=have)
