"""The most probable legal move from a probabilistic reading of the board.

A reading is a (15, 15, K) array of probabilities over K symbols (`.` empty, `*` star,
letters). What the game already knows narrows it down: old tiles stay (a hand or glare over
them changes nothing), the new tiles lie in one line touching old ones, the box has only so
many of each letter, and new words are very likely common nouns. Engine code only: it takes
plain numpy arrays and never imports the vision stage.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from engine.board import CENTRE, EMPTY, STAR, Board, cell_name, is_star
from engine.errors import MoveError
from engine.move import Move, find_move
from engine.ruleset import SIZE, Ruleset
from engine.score import score_move
from engine.words import check_word

# Log-likelihood charged for an old tile that a shifted grid puts outside the photo's grid.
OFF_GRID = math.log(0.02)
# Probabilities are clipped so that one overconfident cell cannot veto a whole move.
FLOOR = 1e-6
# A move whose posterior is below this is reported as unsure, with its alternatives.
SURE = 0.9
# Alternatives worth showing a player: at least this posterior, at most this many.
SHOW_P, SHOW_MAX = 0.01, 3
# How much likelier a dictionary word is than a non-word (log prior per word).
WORD_PRIOR = math.log(30.0)
# Letter readings kept per new cell, and letter combinations tried per placement.
LETTERS_PER_CELL, COMBOS = 3, 64
# Placements (sets of cells) whose letters are worked out in full.
PLACEMENTS = 6


@dataclass
class Candidate:
    board: Board
    log_p: float
    move: Move | None = None
    score: int = 0
    p: float = 0.0


@dataclass
class Inference:
    """The chosen board after the turn, how sure we are, and the other readings."""

    board: Board
    sure: bool
    p: float
    alternatives: list[dict] = field(default_factory=list)


def log_probs(probs: np.ndarray) -> np.ndarray:
    return np.log(np.clip(probs, FLOOR, 1.0))


def tile_fit(before: Board, probs: np.ndarray, labels: list[str],
             shift: tuple[int, int] = (0, 0)) -> float:
    """Log-likelihood that a reading shows the old tiles, the board moved by `shift` (rows,
    columns) within the reading; a tile moved off the grid costs OFF_GRID."""
    return _fit(log_probs(probs), _old_tiles(before, labels), shift)


def best_shift(before: Board, probs: np.ndarray, labels: list[str], reach: int = 4):
    """The (fit, shift) under which a reading shows the old tiles best: a photo's grid may
    have been found a few cells off."""
    logp, tiles = log_probs(probs), _old_tiles(before, labels)
    shifts = [(dr, dc) for dr in range(-reach, reach + 1) for dc in range(-reach, reach + 1)]
    return max((_fit(logp, tiles, shift), shift) for shift in shifts)


def _old_tiles(before: Board, labels: list[str]) -> list[tuple[int, int, int]]:
    index = {s: i for i, s in enumerate(labels)}
    return [(r, c, index.get(STAR if is_star(s) else s, 0)) for r, c, s in before.tiles()]


def _fit(logp: np.ndarray, tiles, shift) -> float:
    dr, dc = shift
    total = 0.0
    for r, c, i in tiles:
        rr, cc = r + dr, c + dc
        total += logp[rr, cc, i] if 0 <= rr < SIZE and 0 <= cc < SIZE else OFF_GRID
    return total


def tile_weights(before: Board, probs: np.ndarray, labels: list[str]) -> np.ndarray:
    """Per empty cell: log P(some tile) − log P(empty); old cells get −inf (cannot be new)."""
    empty = probs[..., labels.index(EMPTY)]
    weights = log_probs(1.0 - empty) - log_probs(empty)
    for row, col, _ in before.tiles():
        weights[row, col] = -np.inf
    return weights


def _segments(before: Board):
    """Every legal set of new cells: a run along a row or column, all cells of the run covered,
    touching an old tile (or, on an empty board, covering the centre with 2+ tiles)."""
    first = before.is_empty()
    for across in (True, False):
        for line in range(SIZE):
            for start in range(SIZE):
                for end in range(start, SIZE):
                    cells = [(line, c) if across else (c, line) for c in range(start, end + 1)]
                    new = [rc for rc in cells if not before.occupied(*rc)]
                    if not new or (len(new) == 1 and not across):
                        continue
                    if _runs_on(before, cells, across):
                        continue
                    if first and (CENTRE not in cells or len(new) < 2):
                        continue
                    if not first and not _touches(before, new):
                        continue
                    yield tuple(new)


def _runs_on(before: Board, cells, across: bool) -> bool:
    """A run must not stop next to an old tile (the word would go on through it), except that
    the caller enumerates the longer run too; skipping these keeps each placement once."""
    (r0, c0), (r1, c1) = cells[0], cells[-1]
    dr, dc = (0, 1) if across else (1, 0)
    return before.occupied(r0 - dr, c0 - dc) or before.occupied(r1 + dr, c1 + dc)


def _touches(before: Board, new) -> bool:
    return any(before.occupied(r + dr, c + dc) for r, c in new
               for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)))


def best_placements(before: Board, weights: np.ndarray, limit: int = PLACEMENTS):
    """The most likely sets of new cells, with their log-likelihood relative to a pass."""
    scored = {(): 0.0}
    for new in _segments(before):
        scored[new] = float(sum(weights[rc] for rc in new))
    ranked = sorted(scored.items(), key=lambda kv: -kv[1])
    return ranked[:limit]


def infer_move(before: Board, probs: np.ndarray, labels: list[str], ruleset: Ruleset,
               placed_turns: dict | None = None, later: np.ndarray | None = None) -> Inference:
    """The most probable legal board after this turn, given the board before and a reading
    already turned to the game's upright. `later`, a reading of the next photo in the same
    frame, is evidence too: tiles never leave the board, so a tile placed now shows there."""
    weights = tile_weights(before, probs, labels)
    if later is not None:
        weights = weights + log_probs(1.0 - later[..., labels.index(EMPTY)])
        probs = _combine(probs, later, labels)
    candidates: list[Candidate] = []
    for new, log_cells in best_placements(before, weights):
        if not new:
            candidates.append(Candidate(before.copy(), log_cells))
            continue
        candidates += _letterings(before, new, log_cells, probs, labels, ruleset)
    legal = _legal(before, candidates, ruleset, placed_turns)
    if not legal:
        return Inference(before.copy(), False, 0.0)
    return _summarise(legal, before)


def temper(probs: np.ndarray, trust: float) -> np.ndarray:
    """A reading's probabilities flattened by how far it is trusted (1 = as read): a photo
    whose grid explains the old tiles badly should not outvote the others."""
    if trust >= 1.0:
        return probs
    flat = np.clip(probs, FLOOR, 1.0) ** trust
    return flat / flat.sum(axis=-1, keepdims=True)


def _combine(probs: np.ndarray, later: np.ndarray, labels: list[str]) -> np.ndarray:
    """Letter evidence of two photos of the same tiles (the empty class kept from the first)."""
    empty = labels.index(EMPTY)
    tiles = np.clip(probs, FLOOR, 1.0) * np.clip(later, FLOOR, 1.0)
    tiles[..., empty] = 0.0
    tiles *= (1.0 - probs[..., empty:empty + 1]) / np.maximum(tiles.sum(-1, keepdims=True), FLOOR)
    tiles[..., empty] = probs[..., empty]
    return tiles


def _letterings(before, new, log_cells, probs, labels, ruleset) -> list[Candidate]:
    """Letter assignments for a set of new cells: the likeliest few per cell, combined,
    with the dictionary prior on the words they make."""
    empty = labels.index(EMPTY)
    options = []
    for rc in new:
        tile_p = probs[rc].copy()
        tile_p[empty] = 0.0
        order = np.argsort(-tile_p)[:LETTERS_PER_CELL]
        norm = max(tile_p.sum(), FLOOR)
        options.append([(labels[i], math.log(max(tile_p[i] / norm, FLOOR))) for i in order])
    combos = sorted(itertools.product(*options), key=lambda combo: -sum(lp for _, lp in combo))
    out = []
    for combo in combos[:COMBOS]:
        board = before.copy()
        for (row, col), (symbol, _) in zip(new, combo, strict=True):
            board.set(row, col, symbol)
        log_p = log_cells + sum(lp for _, lp in combo) + _word_prior(before, board, ruleset)
        out.append(Candidate(board, log_p))
    return out


def _word_prior(before: Board, after: Board, ruleset: Ruleset) -> float:
    if ruleset.word_check != "ru":
        return 0.0
    try:
        move = find_move(before, after, ruleset)
    except MoveError:
        return 0.0
    words = [w.word for w in score_move(before, move, ruleset).words]
    return sum(WORD_PRIOR for w in words if "*" not in w and check_word(w.lower()).ok)


def _legal(before, candidates, ruleset, placed_turns) -> list[Candidate]:
    legal = []
    for cand in candidates:
        try:
            cand.move = find_move(before, cand.board, ruleset)
        except MoveError:
            continue
        cand.score = score_move(before, cand.move, ruleset, placed_turns).total
        legal.append(cand)
    return legal


def _summarise(legal: list[Candidate], before: Board) -> Inference:
    top = max(c.log_p for c in legal)
    mass = sum(math.exp(c.log_p - top) for c in legal)
    for c in legal:
        c.p = math.exp(c.log_p - top) / mass
    legal.sort(key=lambda c: -c.p)
    best = legal[0]
    others = [c for c in legal[1:] if c.p >= SHOW_P][:SHOW_MAX]
    alternatives = [{"tiles": [{"cell": p.cell, "letter": p.symbol} for p in c.move.placements],
                     "score": c.score, "p": round(c.p, 4)} for c in others]
    return Inference(best.board, best.p >= SURE, best.p, alternatives)


def deduce_stars(before: Board, after: Board, ruleset: Ruleset) -> Board:
    """Give each new star its letter when exactly one letter makes every word it is in a
    valid word; otherwise it stays `*`."""
    if ruleset.word_check != "ru":
        return after
    result = after.copy()
    for row, col, symbol in after.tiles():
        if symbol != STAR or before[row, col] != EMPTY:
            continue
        fits = [ch for ch in ruleset.alphabet if _all_words_ok(before, result, row, col, ch,
                                                               ruleset)]
        if len(fits) == 1:
            result.set(row, col, fits[0].lower())
    return result


def _all_words_ok(before, board, row, col, letter, ruleset) -> bool:
    trial = board.copy()
    trial.set(row, col, letter.lower())
    try:
        move = find_move(before, trial, ruleset)
    except MoveError:
        return False
    words = [w.word for w in score_move(before, move, ruleset).words
             if cell_name(row, col) in {le.cell for le in w.letters}]
    return bool(words) and all("*" not in w and check_word(w.lower()).ok for w in words)
