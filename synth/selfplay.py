"""Synthetic games for tests, benchmarks and the sample game: random but legal play of real
nouns, with cross-words, reused premiums, stars, passes and the occasional whole-rack move.

>>> from engine.ruleset import load_ruleset
>>> boards = random_game(load_ruleset("erudit"), turns=6, seed=1)
>>> len(boards)
6
"""

from __future__ import annotations

import random
from functools import lru_cache
from importlib import resources

from engine.board import CENTRE, Board, is_star
from engine.errors import MoveError
from engine.move import find_move
from engine.ruleset import SIZE, Ruleset
from engine.score import score_move
from engine.words import check_word

# Words tried per turn before the player passes.
TRIES = 400


@lru_cache(maxsize=2)
def nouns() -> tuple[str, ...]:
    """The bundled noun list (upper case)."""
    text = resources.files("synth").joinpath("nouns_ru.txt").read_text("utf-8")
    return tuple(w for w in text.split() if not w.startswith("#") and w.isalpha())


def random_game(ruleset: Ruleset, turns: int, seed: int, pass_rate: float = 0.06,
                star_rate: float = 0.03, words: tuple[str, ...] | None = None) -> list[Board]:
    """The boards after each of `turns` turns of a random legal game (a pass repeats a board)."""
    rng = random.Random(seed)
    pool = list(words or nouns())
    boards, board = [], Board()
    for _ in range(turns):
        if not board.is_empty() and rng.random() < pass_rate:
            boards.append(board.copy())
            continue
        after = _random_move(board, ruleset, rng, pool, star_rate)
        board = after or board
        boards.append(board.copy())
    return boards


def _random_move(board: Board, ruleset: Ruleset, rng: random.Random, pool, star_rate):
    for _ in range(TRIES):
        word = rng.choice(pool)
        if not all(ch in ruleset.alphabet for ch in word):
            continue
        for row, col, across in _spots(board, word, rng):
            after = _place(board, word, row, col, across, rng, star_rate)
            if after is not None and _acceptable(board, after, ruleset):
                return after
    return None


def _spots(board: Board, word: str, rng: random.Random):
    if board.is_empty():
        across = rng.random() < 0.5
        shift = rng.randrange(len(word))
        row, col = (CENTRE[0], CENTRE[1] - shift) if across else (CENTRE[0] - shift, CENTRE[1])
        return [(row, col, across)]
    spots = []
    for r, c, symbol in board.tiles():
        letter = symbol.upper()
        for i, ch in enumerate(word):
            if ch == letter:
                spots += [(r, c - i, True), (r - i, c, False)]
    rng.shuffle(spots)
    return spots[:12]


def _place(board, word, row, col, across, rng, star_rate) -> Board | None:
    dr, dc = (0, 1) if across else (1, 0)
    end_r, end_c = row + dr * (len(word) - 1), col + dc * (len(word) - 1)
    if min(row, col) < 0 or max(end_r, end_c) >= SIZE:
        return None
    if board.occupied(row - dr, col - dc) or board.occupied(end_r + dr, end_c + dc):
        return None
    after, new = board.copy(), 0
    for i, ch in enumerate(word):
        r, c = row + dr * i, col + dc * i
        old = board[r, c]
        if old == ".":
            after.set(r, c, ch.lower() if rng.random() < star_rate else ch)
            new += 1
        elif old.upper() != ch:
            return None
    return after if new else None


def _acceptable(before: Board, after: Board, ruleset: Ruleset) -> bool:
    try:
        move = find_move(before, after, ruleset)
    except MoveError:
        return False
    if len(move.placements) > ruleset.rack:
        return False
    words = [w.word for w in score_move(before, move, ruleset).words]
    return all(check_word(w.lower()).ok for w in words)


def star_free(board: Board) -> Board:
    """The board as a photo shows it: a star is a star, whatever letter it stands for."""
    plain = board.copy()
    for r, c, symbol in board.tiles():
        if is_star(symbol):
            plain.set(r, c, "*")
    return plain
