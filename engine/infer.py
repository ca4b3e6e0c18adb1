"""The most probable legal move from a probabilistic reading of the board.

A reading is a (15, 15, K) array of probabilities over K symbols (`.` empty, `*` star,
letters). What the game already knows narrows it down: old tiles stay (a hand or glare over
them changes nothing), the new tiles lie in one line touching old ones, the box has only so
many of each letter, and new words are very likely common nouns. Engine code only: it takes
plain numpy arrays and never imports the vision stage.
"""

from __future__ import annotations

import functools
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
# Placements (sets of cells) whose letters are worked out in full, and how many of the
# likeliest are first weighed together with the next move they leave: the many runs of a long
# next move that this photo half shows can outrank this turn's move (0.1 ms each).
PLACEMENTS, PAIRED = 6, 48
# A pass is not sure while the photos show a tile placed this turn at these log-odds (a
# photo's say is capped near 7): a grid found rows off shows the first move's tiles where no
# first move can lie, and "pass" was the only legal reading, so a sure one.
PLAINLY_PLACED = math.log(100.0)
# A move is not sure while one of its new letters has under this share of its cell's tile in
# the photos: the dictionary outvoted what they show, and a word of a letter they barely gave
# can be the wrong word (read Т at 0.74, proposed Л at 0.05, the truth Г); where the dictionary
# rightly outvoted a misread letter, the letter it chose still had 0.18 or more.
OUTVOTED = 0.1
# A move is not sure while the photos show a tile placed this turn at these log-odds on the
# cell just past either end of its line: the dictionary chose the shorter word over a letter
# the photo could not make out (АРАП proposed, a tile at 0.89 above it: the truth ШАРАП). Right
# sure moves from a chair showed such a cell at 0.50 at most (log-odds 0).
SHOWN_PAST_END = math.log(3.0)
# One photo's say on whether a cell holds a tile is capped (log 0.001 ≈ −6.9 nats), so that
# a few photos agreeing outvote one confident misreading (a glare spot, a loose tile).
PRESENCE_FLOOR = 1e-3


@dataclass
class Candidate:
    board: Board
    log_p: float
    move: Move | None = None
    score: int = 0
    p: float = 0.0


@dataclass
class Inference:
    """The chosen board after the turn, how sure we are, and the other readings; `shown`, the
    cells it leaves empty where the photos plainly show a tile placed this turn (then unsure)."""

    board: Board
    sure: bool
    p: float
    alternatives: list[dict] = field(default_factory=list)
    shown: list[tuple[int, int]] = field(default_factory=list)


def log_probs(probs: np.ndarray) -> np.ndarray:
    return np.log(np.clip(probs, FLOOR, 1.0))


def tile_fit(before: Board, probs: np.ndarray, labels: list[str],
             shift: tuple[int, int] = (0, 0)) -> float:
    """Log-likelihood that a reading shows the old tiles, the board moved by `shift` (rows,
    columns) within the reading; a tile moved off the grid costs OFF_GRID."""
    return _fit(log_probs(probs), _old_tiles(before, labels), shift)


def tiles_seen(before: Board, probs: np.ndarray, labels: list[str]) -> int:
    """How many old tiles a reading shows where they are, each as its likeliest symbol."""
    best = np.asarray(probs).argmax(axis=2)
    return sum(int(best[r, c] == k) for r, c, k in _old_tiles(before, labels))


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


def tile_weights(before: Board, readings: list[np.ndarray], labels: list[str]):
    """Per empty cell, how much likelier it is that its tile was placed this turn (`now`) and
    next turn (`then`, None without a later photo) than later or never. `readings` are this
    turn's photo and the photos after it: a tile placed in turn k shows from photo k on.
    Old cells get −inf (they cannot be new)."""
    empty = labels.index(EMPTY)
    gone = np.stack([np.clip(r[..., empty], PRESENCE_FLOOR, 1 - PRESENCE_FLOOR)
                     for r in readings])
    zero = np.zeros((1, SIZE, SIZE))
    # hypothesis k (placed in the k-th photo's turn; k = len: never): empty before k, a tile from k
    empty_before = np.concatenate([zero, np.cumsum(np.log(gone), axis=0)])
    tile_from = np.concatenate([np.cumsum(np.log1p(-gone)[::-1], axis=0)[::-1], zero])
    hypotheses = empty_before + tile_from
    rest = np.logaddexp.reduce(hypotheses[2:], axis=0) if len(readings) > 1 else hypotheses[1]
    now = hypotheses[0] - rest
    then = hypotheses[1] - rest if len(readings) > 1 else None
    for row, col, _ in before.tiles():
        now[row, col] = -np.inf
        if then is not None:
            then[row, col] = -np.inf
    return now, then


def _runs(occupied: np.ndarray, weights: np.ndarray):
    """Every legal set of new cells as a run along a row or column: all cells of the run
    covered, its ends not next to an old tile (the word would go on), touching an old tile
    (on an empty board: covering the centre with 2+ tiles). Returns the summed weight of each
    run's new cells, indexed [across?, line, start, end], and which runs are legal; a single
    new cell counts once, as across."""
    new_w = np.where(occupied, 0.0, weights)
    near = np.zeros_like(occupied)
    near[1:] |= occupied[:-1]
    near[:-1] |= occupied[1:]
    near[:, 1:] |= occupied[:, :-1]
    near[:, :-1] |= occupied[:, 1:]
    touching = near & ~occupied
    first = not occupied.any()
    centre = np.zeros_like(occupied)
    centre[CENTRE] = True
    sums, legal = np.zeros((2, SIZE, SIZE, SIZE)), np.zeros((2, SIZE, SIZE, SIZE), bool)
    for k in (0, 1):
        across = k == 0
        lines = (occupied, new_w, touching, centre) if across else \
            (occupied.T, new_w.T, touching.T, centre.T)
        sums[k], legal[k] = _line_runs(*lines, first=first, single=across)
    return sums, legal


def _line_runs(occupied, weights, touching, centre, *, first: bool, single: bool):
    """_runs for the rows of the given grids: arrays [line, start, end]."""
    def span(values):   # value summed over cells start..end of each line
        prefix = np.concatenate([np.zeros((SIZE, 1)), np.cumsum(values, axis=1)], axis=1)
        return prefix[:, None, 1:] - prefix[:, :-1, None]
    sums = span(weights)
    new = span(~occupied)
    idx = np.arange(SIZE)
    ordered = idx[:, None] <= idx[None, :]
    free_before = np.concatenate([np.ones((SIZE, 1), bool), ~occupied[:, :-1]], axis=1)
    free_after = np.concatenate([~occupied[:, 1:], np.ones((SIZE, 1), bool)], axis=1)
    legal = ordered[None] & free_before[:, :, None] & free_after[:, None, :]
    legal &= (new >= 1) if single else (new >= 2)
    if first:
        legal &= (span(centre) > 0) & (new >= 2)
    else:
        legal &= span(touching) > 0
    return sums, legal


def _cells(k: int, line: int, start: int, end: int, occupied: np.ndarray) -> tuple:
    cells = [(line, c) if k == 0 else (c, line) for c in range(start, end + 1)]
    return tuple(rc for rc in cells if not occupied[rc])


def best_placements(before: Board, now: np.ndarray, then: np.ndarray | None = None,
                    limit: int = PLACEMENTS):
    """The most likely sets of new cells, with their log-likelihood relative to a pass.
    With `then`, each set is judged together with the best next move it leaves: when this
    turn's photo is poor, the next photo shows two moves' tiles, and only one split of them
    into two legal moves explains it."""
    occupied = _occupied(before)
    sums, legal = _runs(occupied, now)
    keys = np.argwhere(legal)
    order = np.argsort(-sums[legal], kind="stable")[:PAIRED if then is not None else limit]
    ranked = [((), 0.0)] + [(_cells(*keys[i], occupied), float(sums[tuple(keys[i])]))
                            for i in order]
    ranked.sort(key=lambda kv: -kv[1])
    if then is None:
        return ranked[:limit]
    base = _best_run(occupied, then)
    paired = [(new, log_p + _best_run(_with(occupied, new), then) - base)
              for new, log_p in ranked[:PAIRED] if new]
    return sorted([((), 0.0), *paired], key=lambda kv: -kv[1])[:limit]


def _best_run(occupied: np.ndarray, weights: np.ndarray) -> float:
    """The best summed weight of a legal set of new cells, or 0 for a pass."""
    sums, legal = _runs(occupied, weights)
    return max(0.0, float(sums[legal].max())) if legal.any() else 0.0


def _occupied(board: Board) -> np.ndarray:
    occupied = np.zeros((SIZE, SIZE), bool)
    for row, col, _ in board.tiles():
        occupied[row, col] = True
    return occupied


def _with(occupied: np.ndarray, cells) -> np.ndarray:
    out = occupied.copy()
    for rc in cells:
        out[rc] = True
    return out


def infer_move(before: Board, probs: np.ndarray, labels: list[str], ruleset: Ruleset,
               placed_turns: dict | None = None, later: tuple = ()) -> Inference:
    """The most probable legal board after this turn, given the board before and a reading
    already turned to the game's upright. `later`, readings of the next photos in the same
    frame, are evidence too: tiles never leave the board, so a tile placed now shows there,
    and a tile that later photos do not show was never placed."""
    now, then = tile_weights(before, [probs, *later], labels)
    probs = combine_letters([probs, *later], labels)
    candidates: list[Candidate] = []
    for new, log_cells in best_placements(before, now, then):
        if not new:
            candidates.append(Candidate(before.copy(), log_cells))
            continue
        candidates += _letterings(before, new, log_cells, probs, labels, ruleset,
                                  placed_turns)
    legal = _legal(before, candidates, ruleset, placed_turns)
    if not legal:
        return Inference(before.copy(), False, 0.0)
    result = _summarise(legal, before)
    result.shown = _passed_over(before, result.board, now) or _cut_short(before, result.board, now)
    result.sure = result.sure and not (result.shown
                                       or _outvoted(before, result.board, probs, labels))
    return result


def _passed_over(before: Board, after: Board, now: np.ndarray) -> list[tuple[int, int]]:
    """The cells where the photos plainly show a tile placed this turn, when `after` is a pass."""
    if after != before:
        return []
    return [(int(row), int(col)) for row, col in np.argwhere(now > PLAINLY_PLACED)]


def _cut_short(before: Board, after: Board, now: np.ndarray) -> list[tuple[int, int]]:
    """The cells just past either end of the move's line (its new tiles and the tiles they
    join) where the photos show a tile placed this turn (above SHOWN_PAST_END)."""
    new = [(row, col) for row, col, _ in after.placed_over(before)]
    rows, cols = {row for row, _ in new}, {col for _, col in new}
    steps = ([(0, 1)] if len(rows) == 1 else []) + ([(1, 0)] if len(cols) == 1 else [])
    shown = []
    for dr, dc in steps:  # none when nothing is new
        for sign, (row, col) in ((-1, min(new)), (1, max(new))):
            while after.occupied(row, col):
                row, col = row + sign * dr, col + sign * dc
            if after.in_bounds(row, col) and now[row, col] > SHOWN_PAST_END:
                shown.append((row, col))
    return shown


def _outvoted(before: Board, after: Board, probs: np.ndarray, labels: list[str]) -> bool:
    """Whether a new tile's symbol has under OUTVOTED of its cell's tile probability."""
    empty = labels.index(EMPTY)
    for row, col, symbol in after.placed_over(before):
        cell = probs[row, col]
        given = cell[labels.index(STAR if is_star(symbol) else symbol)]
        if given < OUTVOTED * (1.0 - cell[empty]):
            return True
    return False


def temper(probs: np.ndarray, trust: float, labels: list[str]) -> np.ndarray:
    """A reading's probabilities flattened by how far it is trusted (1 = as read): a photo
    whose grid explains the old tiles badly should not outvote the others. Tile-or-empty and
    which letter are flattened separately: flattening over all symbols at once would make
    an empty cell look like a tile, as most symbols are letters."""
    if trust >= 1.0:
        return probs
    empty = labels.index(EMPTY)
    clipped = np.clip(probs, FLOOR, 1.0 - FLOOR)
    gone = clipped[..., empty] ** trust
    gone = gone / (gone + (1.0 - clipped[..., empty]) ** trust)
    letters = clipped ** trust
    letters[..., empty] = 0.0
    letters *= ((1.0 - gone) / letters.sum(-1))[..., None]
    letters[..., empty] = gone
    return letters


def combine_letters(readings: list[np.ndarray], labels: list[str]) -> np.ndarray:
    """Letter evidence of several photos of the same tiles (the empty class kept from the
    first): each photo's letter distribution, given a tile, multiplied together."""
    empty = labels.index(EMPTY)
    first = readings[0]
    if len(readings) == 1:
        return first
    tiles = np.ones_like(first)
    for reading in readings:
        letters = np.clip(reading, FLOOR, 1.0)
        letters[..., empty] = 0.0
        tiles *= letters / letters.sum(-1, keepdims=True)
    tiles *= (1.0 - first[..., empty:empty + 1]) / np.maximum(tiles.sum(-1, keepdims=True), FLOOR)
    tiles[..., empty] = first[..., empty]
    return tiles


def _letterings(before, new, log_cells, probs, labels, ruleset, placed_turns) -> list[Candidate]:
    """The legal letter assignments among the likeliest few per new cell, combined, with the
    dictionary prior on the words they make."""
    empty = labels.index(EMPTY)
    options = []
    for rc in new:
        tile_p = probs[rc].copy()
        tile_p[empty] = 0.0
        order = np.argsort(-tile_p)[:LETTERS_PER_CELL]
        norm = max(tile_p.sum(), FLOOR)
        options.append([(labels[i], math.log(max(tile_p[i] / norm, FLOOR))) for i in order])
    out = []
    for combo in _likeliest(options):
        board = before.copy()
        for (row, col), (symbol, _) in zip(new, combo, strict=True):
            board.set(row, col, symbol)
        scored = _scored(before, board, ruleset, placed_turns)
        if scored is None:
            continue
        move, score = scored
        log_p = log_cells + sum(lp for _, lp in combo) + _word_prior(score, ruleset)
        out.append(Candidate(board, log_p, move, score.total))
    return out


def _likeliest(options: list[list[tuple[str, float]]]) -> list[tuple]:
    """The COMBOS likeliest picks of one option per cell, likeliest first (ties in the order
    of itertools.product). Summed in numpy, cell by cell left to right: the same sums as
    Python's, without a key call for each of up to 3**7 combinations."""
    total = np.zeros(())
    for cell in options:
        total = total[..., None] + np.array([lp for _, lp in cell])
    best = np.argsort(-total.reshape(-1), kind="stable")[:COMBOS]
    picks = np.unravel_index(best, total.shape)
    return [tuple(options[cell][pick[k]] for cell, pick in enumerate(picks))
            for k in range(len(best))]


def _scored(before: Board, after: Board, ruleset: Ruleset, placed_turns):
    """(move, score) of the legal move from `before` to `after`, or None."""
    try:
        move = find_move(before, after, ruleset)
    except MoveError:
        return None
    return move, score_move(before, move, ruleset, placed_turns)


def _word_prior(score, ruleset: Ruleset) -> float:
    if ruleset.word_check != "ru":
        return 0.0
    # A penalty on non-words, not a bonus on words: a bonus would make any move likelier
    # than a pass, and turn a faint speck next to a tile into a two-letter word.
    return -sum(WORD_PRIOR for w in score.words
                if not _is_word(w.word.lower(), ruleset.alphabet))


@functools.lru_cache(maxsize=65536)
def _is_word(word: str, alphabet: tuple[str, ...]) -> bool:
    """A word with one unknown star is a word if some letter makes it one; with more stars
    it is given the benefit of the doubt."""
    stars = word.count(STAR)
    if stars > 1:
        return True
    if stars == 1:
        return any(_is_word(word.replace(STAR, ch.lower()), alphabet) for ch in alphabet)
    return check_word(word).ok


def _legal(before, candidates, ruleset, placed_turns) -> list[Candidate]:
    """The candidates that are legal moves, scored (letterings come scored already)."""
    legal = []
    for cand in candidates:
        if cand.move is None:
            scored = _scored(before, cand.board, ruleset, placed_turns)
            if scored is None:
                continue
            cand.move, cand.score = scored[0], scored[1].total
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


def either_order(before: Board, middle: Board, after: Board, ruleset: Ruleset) -> bool:
    """Whether two moves seen only together (`before` → `middle` → `after`, the first photo
    showing no board) could as well have been played the other way round: which player
    scored which move is then a guess."""
    second = after.placed_over(middle)
    if not middle.placed_over(before) or not second:
        return False
    swapped = before.copy()
    for row, col, symbol in second:
        swapped.set(row, col, symbol)
    try:
        find_move(before, swapped, ruleset)
        find_move(swapped, after, ruleset)
    except MoveError:
        return False
    return True
