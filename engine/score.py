"""Words formed by a move and their score — the one scoring function every caller uses.

Premiums count only under tiles placed in this move (first-use rule); letter premiums
apply first, then word premiums multiply the word; the whole rack earns the bonus.

>>> from engine.board import Board
>>> from engine.move import Move, Placement
>>> from engine.ruleset import load_ruleset
>>> move = Move((Placement(7, 6, "К"), Placement(7, 7, "О"), Placement(7, 8, "Т")))
>>> score_move(Board(), move, load_ruleset("erudit")).total
5
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.board import Board, cell_name, position
from engine.move import Move
from engine.ruleset import PREMIUM_NAMES, PREMIUMS, Ruleset


@dataclass(frozen=True)
class LetterScore:
    """One letter of a word: its value, the premium it earned, or the premium already used."""

    cell: str
    symbol: str
    value: int
    new: bool
    premium: str = "."          # premium applied (only under a new tile)
    used_premium: str = "."     # premium of this cell used by an earlier turn
    used_turn: int | None = None


@dataclass(frozen=True)
class WordScore:
    word: str
    at: str
    across: bool
    letters: tuple[LetterScore, ...]
    multiplier: int
    score: int

    def explain(self) -> str:
        """How this word's score was made, as a player would check it by hand."""
        parts = []
        for letter in self.letters:
            factor = PREMIUMS[letter.premium][0]
            term = f"{letter.symbol}{letter.value}" + (f"×{factor}" if factor > 1 else "")
            parts.append(term)
        total = " + ".join(parts)
        if self.multiplier > 1:
            total = f"({total}) × {self.multiplier}"
        notes = [f"{le.cell} {_premium_word(le.used_premium)} used on turn {le.used_turn}"
                 if le.used_turn else f"{le.cell} {_premium_word(le.used_premium)} used earlier"
                 for le in self.letters if le.used_premium != "."]
        tail = f"  [{'; '.join(notes)}]" if notes else ""
        return f"{self.word} {self.at}: {total} = {self.score}{tail}"


def _premium_word(code: str) -> str:
    return PREMIUM_NAMES.get(code, "plain")


@dataclass(frozen=True)
class Score:
    words: tuple[WordScore, ...] = ()
    bonus: int = 0
    total: int = 0
    explanation: list[str] = field(default_factory=list, compare=False)


def word_spans(board: Board, move: Move) -> list[tuple[int, int, bool, int]]:
    """(row, col, across, length) of the main word then the cross-words, in reading order."""
    if not move.placements:
        return []
    first = move.placements[0]
    main = _span(board, first.row, first.col, move.across)
    spans = [main] if main[3] >= 2 else []
    for p in move.placements:
        cross = _span(board, p.row, p.col, not move.across)
        if cross[3] >= 2:
            spans.append(cross)
    if not spans:  # a single tile with no neighbour cannot form a word
        return []
    return spans


def _span(board: Board, row: int, col: int, across: bool) -> tuple[int, int, bool, int]:
    dr, dc = (0, 1) if across else (1, 0)
    while board.occupied(row - dr, col - dc):
        row, col = row - dr, col - dc
    length = 0
    while board.occupied(row + dr * length, col + dc * length):
        length += 1
    return row, col, across, length


def score_move(before: Board, move: Move, ruleset: Ruleset,
               placed_turns: dict[tuple[int, int], int] | None = None) -> Score:
    """Score `move` played on `before` under `ruleset` (its layout decides the premiums).

    `placed_turns` maps occupied cells to the turn that first covered them, so the
    breakdown can say which turn used up a premium."""
    after = move.apply(before)
    new = {(p.row, p.col) for p in move.placements}
    words = tuple(
        _score_word(after, span, new, ruleset, placed_turns or {})
        for span in word_spans(after, move)
    )
    bonus = ruleset.bonus if len(move.placements) == ruleset.rack else 0
    total = sum(w.score for w in words) + bonus
    explanation = [w.explain() for w in words]
    if bonus:
        explanation.append(f"all {ruleset.rack} tiles of the rack: +{bonus}")
    return Score(words, bonus, total, explanation)


def _score_word(board: Board, span, new, ruleset: Ruleset, placed_turns) -> WordScore:
    row, col, across, length = span
    dr, dc = (0, 1) if across else (1, 0)
    letters, multiplier, points = [], 1, 0
    for i in range(length):
        r, c = row + dr * i, col + dc * i
        symbol = board[r, c]
        code = ruleset.layout.premium(r, c)
        value = ruleset.value(symbol)
        if (r, c) in new:
            letter_factor, word_factor = PREMIUMS[code]
            points += value * letter_factor
            multiplier *= word_factor
            letters.append(LetterScore(cell_name(r, c), symbol, value, True, premium=code))
        else:
            points += value
            letters.append(LetterScore(cell_name(r, c), symbol, value, False,
                                       used_premium=code, used_turn=placed_turns.get((r, c))))
    word = "".join(le.symbol for le in letters)
    return WordScore(word, position(row, col, across), across, tuple(letters), multiplier,
                     points * multiplier)

