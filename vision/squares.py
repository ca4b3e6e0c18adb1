"""What each square of one box looks like while it is empty, and how a photo's cells compare.

The general network judges "tile or empty" from what squares look like on boxes it was
trained on. A box of its own can print a square it never saw (a dark blue one that reads as a
blank tile, a light one that hides an ivory blank). A square's own look while it was empty is
the strongest evidence there is: the calibration photo shows every square empty, and the
first photos of a game show most of them.

    >>> squares = SquareLooks()
    >>> squares.learn(reading.looks, empty_cells)      # after a turn is taken
    >>> probs = squares.weigh(later.probs, later.looks)   # a later photo, judged against them
"""

from __future__ import annotations

import cv2
import numpy as np

from engine.ruleset import SIZE
from vision.cells import CROP

PATCH = 5  # a square's look: the centre of its own square, shrunk to PATCH × PATCH Lab pixels
_INNER = slice(CROP // 2 - 10, CROP // 2 + 10)  # 20 px: clear of a neighbour's shadow
# cells read as empty this surely are clear: those whose squares have a look tell how the
# photo's light differs from the references' and how far an empty square's look wanders (its
# noise); those empty on the board a game took show their square's look
CLEAR = 0.9
MIN_CLEAR = 20  # fewer such cells tell nothing about a photo's light: its cells are not weighed
NOISE_FLOOR = 2.0  # Lab units: JPEG and sensor noise of a still camera is never below this
# A cell up to SAME noise units from its square's empty look looks as it did empty, and LIKE
# still leans that way; from OTHER on it is something else, a tile for sure from FAR. Between
# LIKE and OTHER lie empty squares beside new tiles (their shadow, a leaning tile's edge):
# the look says nothing there.
SAME, LIKE, OTHER, FAR = 3.0, 5.0, 10.0, 14.0
# Lightness counts for less than colour and ink: a new tile's shadow darkens the squares
# beside it, a letter is ink
WEIGHTS = np.float32([0.25, 1.0, 1.0, 1.0])
CAP = 6.0  # nats: the most a square's own look moves a cell's odds of being empty
BLEND = 0.5  # a new empty look's weight against the one kept: light drifts during a game
# a square is learnt only when it looks like the other empty squares of its kind: within
# KIND_SPREAD × their median distance from their median look, or KIND_FLOOR Lab units (light
# falls off across a board); a kind of fewer than MIN_KIND empty squares is taken as it is
KIND_SPREAD, KIND_FLOOR, MIN_KIND = 4.0, 12.0, 3


def cell_looks(crops: np.ndarray, turns: int = 0) -> np.ndarray:
    """(15, 15, PATCH, PATCH, 4) float32 looks of a board's 225 crops (photo order, as cut),
    in the upright frame `turns` quarter turns counter-clockwise from the photo's: the Lab
    colour of each patch pixel, and the centre's ink (its lightness's spread: a letter or a
    printed star, which a patch of colours averages away) in every pixel of the fourth."""
    inner = crops.reshape(SIZE, SIZE, CROP, CROP, 3)[:, :, _INNER, _INNER]
    size = inner.shape[2]
    # one picture of the 225 centres side by side, shrunk in one call (whole blocks per look)
    mosaic = np.ascontiguousarray(inner.transpose(0, 2, 1, 3, 4)).reshape(SIZE * size,
                                                                          SIZE * size, 3)
    light = cv2.cvtColor(mosaic, cv2.COLOR_BGR2GRAY).reshape(SIZE, size, SIZE, size)
    ink = light.astype(np.float32).std(axis=(1, 3))
    small = cv2.resize(mosaic, (SIZE * PATCH, SIZE * PATCH), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    lab = lab.reshape(SIZE, PATCH, SIZE, PATCH, 3).transpose(0, 2, 1, 3, 4)
    grid = np.empty((SIZE, SIZE, PATCH, PATCH, 4), np.float32)
    grid[..., :3] = lab
    grid[..., 3] = ink[:, :, None, None]
    return np.ascontiguousarray(np.rot90(np.rot90(grid, turns, axes=(0, 1)), turns, axes=(2, 3)))


class SquareLooks:
    """Each square's look while empty, learnt from photos of the box (cells known empty)."""

    def __init__(self):
        self.looks = np.zeros((SIZE, SIZE, PATCH, PATCH, 4), np.float32)
        self.seen = np.zeros((SIZE, SIZE), np.int32)

    @classmethod
    def of_empty_board(cls, board: np.ndarray) -> SquareLooks:
        """The looks of a rectified empty board (a calibration photo's view)."""
        from vision.cells import cut_cells

        squares = cls()
        squares.learn(cell_looks(cut_cells(board)), np.ones((SIZE, SIZE), bool))
        return squares

    def __bool__(self) -> bool:
        return bool(self.seen.any())

    def copy(self) -> SquareLooks:
        other = SquareLooks()
        other.looks, other.seen = self.looks.copy(), self.seen.copy()
        return other

    def learn(self, looks: np.ndarray | None, empty: np.ndarray,
              kinds: np.ndarray | None = None) -> None:
        """Take the looks of the cells `empty` (15, 15 booleans) as their squares' own. With
        `kinds` (15, 15 layout codes) a cell that looks unlike the other squares of its kind
        is left out: a tile nobody saw (a blank taken for its square) must not become the
        look of an empty square."""
        if looks is None:
            return
        if kinds is not None:
            empty = empty & like_their_kind(looks, empty, kinds)
        new = empty & (self.seen == 0)
        again = empty & (self.seen > 0)
        self.looks[new] = looks[new]
        self.looks[again] = (1 - BLEND) * self.looks[again] + BLEND * looks[again]
        self.seen[empty] += 1

    def distances(self, looks: np.ndarray, empty_p: np.ndarray) -> np.ndarray | None:
        """(15, 15) how far each cell is from its square's empty look, in units of the
        photo's own noise (NaN where the square was never seen empty); None when the photo
        has too few clearly empty squares to judge its light by."""
        known = self.seen > 0
        clear = known & (empty_p > CLEAR)
        if clear.sum() < MIN_CLEAR:
            return None
        diff = looks - self.looks
        far = np.sqrt(((diff - _light(diff, clear)) ** 2 * WEIGHTS).sum(axis=-1).mean(axis=(2, 3)))
        noise = max(float(np.median(far[clear])), NOISE_FLOOR)
        far = far / noise
        far[~known] = np.nan
        return far

    def evidence(self, looks: np.ndarray, empty_p: np.ndarray) -> np.ndarray:
        """(15, 15) log-odds for "empty" that each cell's look adds: +CAP where it looks as its
        square did empty, -CAP where it looks like something else, 0 where unknown."""
        far = None if looks is None else self.distances(looks, empty_p)
        if far is None:
            return np.zeros((SIZE, SIZE), np.float32)
        alike = np.clip((LIKE - far) / (LIKE - SAME), 0, 1)
        unlike = np.clip((far - OTHER) / (FAR - OTHER), 0, 1)
        return np.nan_to_num(CAP * (alike - unlike), nan=0.0).astype(np.float32)

    def weigh(self, probs: np.ndarray, looks: np.ndarray | None) -> np.ndarray:
        """(15, 15, K) label probabilities, the empty label first, with each cell's odds of
        being empty moved by its square's own look; the other labels keep their ratios."""
        if not self or looks is None:
            return probs
        empty = probs[..., 0]
        gain = np.exp(self.evidence(looks, empty))
        scale = 1 / (empty * gain + (1 - empty))
        weighed = probs * scale[..., None]
        weighed[..., 0] = empty * gain * scale
        return weighed


def like_their_kind(looks: np.ndarray, cells: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """(15, 15) which of `cells` look like the median of their kind's `cells`: within
    KIND_SPREAD × the kind's own median distance from it (and KIND_FLOOR Lab units)."""
    alike = np.ones(cells.shape, bool)
    for kind in np.unique(kinds):
        members = cells & (kinds == kind)
        if members.sum() < MIN_KIND:
            continue
        usual = np.median(looks[members], axis=0)
        far = np.sqrt(((looks[members] - usual) ** 2 * WEIGHTS).sum(axis=-1).mean(axis=(1, 2)))
        alike[members] = far <= max(KIND_SPREAD * float(np.median(far)), KIND_FLOOR)
    return alike


def _light(diff: np.ndarray, clear: np.ndarray) -> np.ndarray:
    """(15, 15, 1, 1, C) how the photo's light moved each square's look: a plane over the
    board fitted to the clear squares' mean change (a window's light falls off across it)."""
    rows, cols = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    design = np.column_stack([np.ones(SIZE * SIZE), rows.ravel(), cols.ravel()])
    change = diff.mean(axis=(2, 3)).reshape(SIZE * SIZE, -1)
    fit, *_ = np.linalg.lstsq(design[clear.ravel()], change[clear.ravel()], rcond=None)
    return (design @ fit).reshape(SIZE, SIZE, 1, 1, -1).astype(np.float32)


# A game's own tiles: each taken move's new tiles, whose letters the players have let stand,
# are references of how this box prints each letter. A later cell read as a tile whose look
# (the network's embedding) is as near one letter's references as they are to each other, and
# clearly nearer than to any other letter's, has that letter's odds raised by BONUS nats.
# Letters the game has not shown yet are left as the network reads them.
MIN_REFS = 2  # references a letter needs before it has a say
MAX_REFS = 24  # the latest references kept per letter: enough for its spread
SPREAD_QUANTILE = 0.2  # a cell within this quantile of the references' own nearness is alike,
SLACK = 0.02  # ... less this (cosine): a few references of one photo understate their spread
GAP = 0.05  # cosine: nearer the best letter than the next by this much
BONUS = 3.0  # nats
TILE = 0.5  # cells the network reads as empty this likely are left alone


class TileLooks:
    """What a game's taken tiles of each letter look like to the network (its embeddings)."""

    def __init__(self):
        self.refs: dict[str, list[np.ndarray]] = {}

    def __bool__(self) -> bool:
        return any(len(r) >= MIN_REFS for r in self.refs.values())

    def learn(self, embeddings: np.ndarray | None, tiles) -> None:
        """Take `tiles` ((row, col, glyph) in the upright frame) of a photo's `embeddings`
        (15, 15, D) as references of their glyphs."""
        if embeddings is None:
            return
        for row, col, glyph in tiles:
            vector = embeddings[row, col].astype(np.float32)
            vector /= max(float(np.linalg.norm(vector)), 1e-12)
            kept = self.refs.setdefault(glyph, [])
            kept.append(vector)
            del kept[:-MAX_REFS]

    def adjust(self, log_probs: np.ndarray, embeddings: np.ndarray, glyphs,
               empty: int) -> np.ndarray:
        """(N, G) glyph log-probabilities with each tile cell's likeliest look-alike letter
        raised, renormalised; `empty` is the empty glyph's column."""
        known = [g for g, refs in self.refs.items() if len(refs) >= MIN_REFS and g in glyphs
                 and refs[0].shape[0] == embeddings.shape[1]]
        if not known:
            return log_probs
        means, nearness = [], []
        for glyph in known:
            refs = np.asarray(self.refs[glyph])
            mean = refs.mean(axis=0)
            mean /= max(float(np.linalg.norm(mean)), 1e-12)
            means.append(mean)
            nearness.append(float(np.quantile(refs @ mean, SPREAD_QUANTILE)) - SLACK)
        vectors = embeddings / np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-12)
        similar = vectors @ np.asarray(means).T
        order = np.argsort(-similar, axis=1)
        best = order[:, 0]
        first = similar[np.arange(len(similar)), best]
        second = (similar[np.arange(len(similar)), order[:, 1]] if len(known) > 1
                  else np.full(len(similar), -1.0))
        alike = ((first >= np.asarray(nearness)[best]) & (first - second >= GAP)
                 & (np.exp(log_probs[:, empty]) < TILE))
        adjusted = log_probs.copy()
        columns = np.array([list(glyphs).index(g) for g in known])
        cells = np.flatnonzero(alike)
        adjusted[cells, columns[best[cells]]] += BONUS
        top = adjusted.max(axis=1, keepdims=True)
        return adjusted - top - np.log(np.exp(adjusted - top).sum(axis=1, keepdims=True))
