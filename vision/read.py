"""Photo → board text: find the grid, cut the cells, classify them, turn the board upright.

    >>> reading = read_photo("turn3.jpg", ruleset="erudit")
    >>> reading.board[7], reading.orientation, reading.uncertain[:1]
    ('ПРОКРАСТИНАЦИЯ.', 0, [{'cell': 'C7', 'candidates': [['*', 0.81], ['Ж', 0.12]]}])
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import cv2
import numpy as np

from engine.board import COLUMNS
from engine.ruleset import SIZE, Layout, Ruleset, load_ruleset
from vision.cells import cut_cell, cut_cells, tile_view, turn_crops
from vision.classifier import (
    BLANK,
    EMPTY,
    STAR,
    TURNED,
    Model,
    check_readable,
    labels_for,
    load_model,
    load_profile_model,
    load_second,
    log_softmax,
    masked,
    second_thread,
    star_glyphs,
)
from vision.locate import Location, locate_board
from vision.photo import load_for_reading
from vision.squares import SquareLooks, TileLooks, cell_looks

SURE = 0.9  # a cell whose best symbol is less likely than this is reported as uncertain
CANDIDATES = 3  # at most this many symbols offered for an uncertain cell
MIN_CANDIDATE = 0.01  # symbols less likely than this are not worth offering
TILE = 0.5  # a cell is a tile when the empty class has less than this probability
TILE_SHARE = 0.2  # ... and read as one when its likeliest symbol holds this share of it
MAYBE_TILE = 0.98  # cells below this empty probability are re-read once the upright is known
ORIENTATION_TILES = 24  # the clearest tiles are enough to tell which way is up
FIRST_ORIENTATION_TILES = 8  # read first; the rest only when these leave the vote close
DECISIVE_VOTE = 10.0  # nats between the best turn and the next: odds of 20 000 to 1
EARLY_CELLS = 12  # cells of the most ink read first in every turn: the upright before the rest
WIDE = 100  # crops a batch needs to be read as two halves side by side
CLEAR_EMPTY = 0.9  # empty cells this sure are the board's own examples of its squares
# a doubtful tile that looks like the clear squares of its kind is called empty at this share,
# below SURE so that the player is asked: the colour check was right on 19 of its 24 calls
# (all 17 on the real photos; 2 of 7 on the tuning renders, whose tiles can match a square)
CALLED_EMPTY = 0.8
MIN_ALIKE = 4  # fewer clear examples of a kind of square tell nothing about it
DIFFUSE = 0.3  # a tile whose best letter is below this is not told apart from the rest
SOME_EMPTY = 0.2  # a tile this likely to be an empty square is in doubt too
NEIGHBOURS = 6  # a cell is compared with this many nearest clear squares of its kind
ALIKE_SPREAD = 3.0  # × the squares' own median colour distance from their neighbours
ALIKE_SLACK = 3.0  # Lab units allowed on top (noise, JPEG)
CENTRE = slice(14, 34)  # the central 20 px of a crop: inside the cell's 32 px square
UNLIKE = 2.0  # × its kind's colour limit: a square this unlike its own kind is covered ...
UNLIKE_COLOUR = 30.0  # ... and this many Lab units off: another colour, not a shadow's shade
NEARER_TILES = 0.75  # ... when its colour is this much nearer the tiles' face than its kind's
MIN_UNLIKE = 2  # clear squares a kind needs for that (few corners stay empty late in a game)
MIN_FACES = 2  # sure letter tiles that show a box's tile face (a first move has two or more)
FACE_SPREAD = 4.0  # × the tiles' own median distance from their face: not one of them
# a cell whose best symbol is below this is read again before it is reported, by both
# networks (tuning renders: 0.6 -> 0.9 took 173 -> 165 wrong cells, fewer questions) ...
DOUBTFUL = SURE
# the general model's runner-up this likely: it was torn between two symbols (vision.read._doubted)
TORN = 0.2
# an empty square whose star share is this is in doubt too (read again, then asked about): a
# blank tile shows nothing but its edges. Blanks read as empty squares were the tuning renders'
# commonest miss (28 of 222, true corners); the 8 read as sure empty squares in 200 of them all
# had 0.022+ of the star, against 57 of 29 739 empty squares. 400 tuning renders, true corners:
# 222 -> 217 wrong cells, 23 -> 14 of them not asked about, 1 502 -> 1 647 cells asked.
BLANK_DOUBT = 0.02
# a printed star read this surely shows the box's jokers print one (joker_look): tuning renders
# of Эрудит boxes under erudit-english, which takes both looks, read four empty squares as
# blank tiles before, two of them sure (400 renders, true corners: 217 -> 213 wrong, 14 -> 12
# not asked about, 1 647 -> 1 520 asked; 0.8 did the same, 0.99 almost nothing: label
# smoothing keeps the network under ~0.97)
STAR_SEEN = 0.9

# ... from crops moved 2 px (of 32 per cell) each way, diagonals too: with the diagonals
# (true corners) tuning renders 225 -> 214 wrong cells, unseen boxes 15-26
# zero-shot 281 -> 277 (30+ px boards 70 -> 60), fewer cells asked about in both
SHIFTS = ((2, 0), (-2, 0), (0, 2), (0, -2), (2, 2), (-2, -2), (2, -2), (-2, 2))
WHERE = np.column_stack(np.divmod(np.arange(SIZE * SIZE), SIZE)).astype(np.float32)


@dataclass
class Reading:
    """What a photo shows: the upright board text and how sure each cell is."""

    board: list[str]
    orientation: int  # 0/90/180/270: how far the upright board is turned clockwise in the photo
    corners: np.ndarray  # (4, 2) grid corners in the photo, board order TL, TR, BR, BL
    labels: list[str]  # the K symbols of `probs`: '.', '*', then the ruleset's letters
    probs: np.ndarray  # (15, 15, K), upright board order
    uncertain: list[dict]
    location: Location
    embeddings: np.ndarray = field(repr=False, default=None)  # (15, 15, D) for box calibration
    looks: np.ndarray = field(repr=False, default=None)  # (15, 15, …) vision.squares.cell_looks
    ms: float | None = None

    @property
    def quality(self) -> float:
        return self.location.quality


def read_photo(path, *, ruleset: str | Ruleset = "erudit", profile=None,
               squares: SquareLooks | None = None, letters: TileLooks | None = None) -> Reading:
    """Open and read one photo; `.ms` is the time from opening the file to the board."""
    # one-time loading is not part of a photo's time (the one-thread network reads doubtful
    # cells beside the second, and a calibrated read's cells beside it)
    load_model(), load_second(), load_model(threads=1)
    if profile is not None:
        load_profile_model()
    start = time.perf_counter()
    image, scale = load_for_reading(path)
    reading = read_board(image, ruleset=ruleset, profile=profile, squares=squares,
                         letters=letters)
    reading.corners = reading.corners * scale  # in the photo's own pixels
    reading.ms = (time.perf_counter() - start) * 1000
    return reading


def read_board(image: np.ndarray, *, ruleset: str | Ruleset = "erudit", profile=None,
               turns: int | None = None, squares: SquareLooks | None = None,
               letters: TileLooks | None = None) -> Reading:
    """Read every cell of the board in a BGR photo (PhotoError when no board can be read).

    `profile` is a calibrated box: any object with `adjust(log_probs, embeddings, glyphs)`
    returning corrected glyph log-probabilities, `judge` (the same arguments: each glyph's
    score for any crops) and `letters` (the glyphs it has references of; with them the box's
    own letters find the upright); None reads with the general model alone.
    `turns` forces the upright (quarter turns counter-clockwise) when the caller knows it
    better than the letters do, e.g. from the tiles already on the board.
    `squares` are the box's squares as they look empty (a profile's, or learnt along a
    game): each cell is weighed against its own. `letters` are a game's taken tiles: a tile
    that looks like one letter's is read with them.
    """
    return read_grid(image, locate_board(image), ruleset=ruleset, profile=profile, turns=turns,
                     squares=squares, letters=letters)


def read_grid(image: np.ndarray, location: Location, *, ruleset: str | Ruleset = "erudit",
              profile=None, turns: int | None = None,
              squares: SquareLooks | None = None, letters: TileLooks | None = None) -> Reading:
    """read_board on a grid already located (corners in image order, or any order: the
    reading is turned upright from the corners' first one)."""
    rules = load_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    view = tile_view(image, location.corners)
    crops = cut_cells(view).reshape(SIZE * SIZE, *_crop_shape())
    model = load_model() if profile is None else load_profile_model()
    check_readable(rules, model)
    stars = star_glyphs(rules)
    labels = labels_for(rules.alphabet)
    printed = premium_kinds(rules.layout)
    log_probs, embeddings, turns = _classify_upright(model, crops, rules.alphabet, stars, turns,
                                                     profile, printed.reshape(-1) == ".")
    stars = joker_look(model, log_probs, stars)
    matrix = model.label_matrix(labels, stars)
    # doubtful cells: this network on one thread beside the second on another, 10-12 ms a
    # photo less than the first on two threads and then the second (the same readings)
    _look_again(model if profile is not None else load_model(threads=1), view, log_probs,
                embeddings, turns, matrix)
    if letters:
        log_probs = letters.adjust(log_probs, embeddings, model.glyphs, model.glyphs.index(EMPTY))
    kinds = np.rot90(printed, -turns).reshape(-1)
    if BLANK not in stars:
        log_probs = unprinted(log_probs, crops, model.glyphs, kinds)
    general = None
    if profile is not None:
        general = masked(log_probs, matrix)
        log_probs = profile.adjust(log_probs, embeddings, model.glyphs)
    probs = masked(log_probs, matrix)
    # tiles only the box's references see: checked against the board's squares too
    disputed = None if general is None else (general[:, 0] > SOME_EMPTY) & (probs[:, 0] < TILE)
    alike = empties_alike(crops, probs, kinds, disputed) & ~jokers_like_tiles(crops, probs, kinds)
    alike |= jokers_unlike_tiles(crops, probs)
    covered = tiles_unlike(crops, probs, kinds)
    if squares:  # a square's own look says more than its kind's or the tiles' look
        known = np.rot90(squares.seen > 0, -turns).reshape(-1)
        alike &= ~known
        covered &= ~known
    # a called square's share is its label's (it is to be asked about); a covered one keeps
    # the glyph-level share it was tuned with, which letters outside the ruleset may add to
    for cells, empty_share, labelled in ((alike, CALLED_EMPTY, matrix), (covered, 1 - SURE, None)):
        if cells.any():
            log_probs[cells] = _called(log_probs[cells], empty_share, labelled)
            probs[cells] = masked(log_probs[cells], matrix)
    grid = np.rot90(probs.reshape(SIZE, SIZE, -1), turns, axes=(0, 1))
    looks = cell_looks(crops, turns)
    if squares:  # each square's own look while empty: the strongest word on "empty"
        grid = squares.weigh(grid, looks)
    board = ["".join(labels[i] for i in row) for row in decided(grid)]
    general_grid = None if general is None else np.rot90(
        general.reshape(SIZE, SIZE, -1), turns, axes=(0, 1))
    return Reading(
        board=board, orientation=90 * turns, corners=np.roll(location.corners, -turns, axis=0),
        labels=labels, probs=np.ascontiguousarray(grid),
        uncertain=uncertain_cells(grid, labels, general_grid),
        location=location,
        embeddings=np.ascontiguousarray(np.rot90(embeddings.reshape(SIZE, SIZE, -1), turns)),
        looks=looks,
    )


def joker_look(model: Model, log_probs: np.ndarray, stars: tuple[str, ...]) -> tuple[str, ...]:
    """The joker looks (`stars`, glyphs) a board's reading weighs: a box's jokers all look one
    way, so where a ruleset takes both (a printed star, a blank tile), a photo that shows a
    printed star read at STAR_SEEN or more holds no blank tile."""
    if set(stars) != {STAR, BLANK}:
        return stars
    seen = np.exp(log_probs[:, model.glyphs.index(STAR)]).max(initial=0.0)
    return (STAR,) if seen >= STAR_SEEN else stars


def _look_again(model: Model, view: np.ndarray, log_probs: np.ndarray, embeddings: np.ndarray,
                turns: int, matrix: np.ndarray) -> None:
    """Doubtful cells read again, in place: from crops shifted a little each way (SHIFTS), and
    by a second network trained another way from all nine framings. Their log-probabilities
    become the renormalised mean of the eighteen readings, their embeddings the mean of
    `model`'s nine (those a box profile compares). A misread of one crop's framing or of one
    network rarely survives the others; sure cells are left."""
    doubtful = np.flatnonzero(in_doubt(masked(log_probs, matrix)))
    if len(doubtful) == 0:
        return
    framings = ((0, 0), *SHIFTS)
    cuts = turn_crops(np.asarray([cut_cell(view, *divmod(int(cell), SIZE), dx=dx, dy=dy)
                                  for cell in doubtful for dx, dy in framings]), turns)
    cuts = cuts.reshape(len(doubtful), len(framings), *cuts.shape[1:])
    shifted = np.ascontiguousarray(cuts[:, 1:].reshape(-1, *cuts.shape[2:]))
    if model.partner is None:  # the second network reads all nine meanwhile, on its thread
        nine = second_thread().submit(load_second().run,
                                      np.ascontiguousarray(cuts.reshape(-1, *cuts.shape[2:])))
        more, more_embeddings = model.run(shifted)
        other, theirs = nine.result()[0], None
    else:  # a profile's model runs the second network on the shifted crops itself
        more, more_embeddings, theirs = model.run_both(shifted)
        other, _ = load_second().run(np.ascontiguousarray(cuts[:, 0]))
    other = other.reshape(len(doubtful), -1, other.shape[1]).sum(axis=1)
    if theirs is not None:
        other += theirs.reshape(len(doubtful), len(SHIFTS), -1).sum(axis=1)
    total = log_probs[doubtful] + more.reshape(len(doubtful), len(SHIFTS), -1).sum(axis=1) + other
    log_probs[doubtful] = log_softmax(total / (2 * len(framings)))
    looks = more_embeddings.reshape(len(doubtful), len(SHIFTS), -1).sum(axis=1)
    embeddings[doubtful] = (embeddings[doubtful] + looks) / len(framings)


def in_doubt(probs: np.ndarray, below: float = DOUBTFUL) -> np.ndarray:
    """Whether each cell of label probabilities (..., K), the empty square first and then the
    star, is read below `below`, or as an empty square with BLANK_DOUBT of the star."""
    empty = probs.argmax(axis=-1) == 0
    return (probs.max(axis=-1) < below) | (empty & (probs[..., 1] >= BLANK_DOUBT))


def premium_kinds(layout: Layout) -> np.ndarray:
    """(15, 15) premium code of every cell, the centre a kind of its own."""
    return np.array([list(row) for row in layout.rows])


def empties_alike(crops: np.ndarray, probs: np.ndarray, kinds: np.ndarray,
                  disputed: np.ndarray | None = None) -> np.ndarray:
    """Cells read as a doubtful tile (no letter stands out, or the empty square is a close
    second; or `disputed`, N booleans) whose centre looks like the board's own clear empty
    squares of their kind nearby (colour and texture): light and print that fool the general
    model on one square leave the same board's other squares to compare it with.
    `probs` (N, K) with the empty label first; `crops` and `kinds` (premium codes) in the
    same cell order, row by row."""
    empty, best = probs[:, 0], probs.max(axis=1)
    doubtful = (empty < TILE) & ((best < DIFFUSE) | (empty > SOME_EMPTY))
    doubtful = np.flatnonzero(doubtful if disputed is None else doubtful | disputed)
    alike = np.zeros(len(probs), bool)
    if len(doubtful) == 0:
        return alike
    looks = _centre_looks(crops)
    for kind in np.unique(kinds[doubtful]):
        clear = np.flatnonzero((kinds == kind) & (probs[:, 0] > CLEAR_EMPTY))
        if len(clear) < MIN_ALIKE:
            continue
        usual, colour_limit = _usual_spread(looks, clear)
        texture_limit = 1.5 * max(np.quantile(usual[:, 1], 0.95), 0) + ALIKE_SLACK
        cells = doubtful[kinds[doubtful] == kind]
        off = _off_neighbours(looks, clear, cells)
        alike[cells] = (off[:, 0] <= colour_limit) & (off[:, 1] <= texture_limit)
    return alike


def tiles_unlike(crops: np.ndarray, probs: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """Cells read as a doubtful empty square that look far unlike the board's clear squares
    of their kind and much nearer the face of its clear tiles: a tile with nothing printed
    (a blank) on a coloured square reads to the general model as that square. Arguments as
    for empties_alike."""
    empty = probs[:, 0]
    doubtful = np.flatnonzero((empty >= TILE) & (empty < CLEAR_EMPTY))
    tiles = np.flatnonzero((empty < 1 - CLEAR_EMPTY) & (probs.max(axis=1) > CLEAR_EMPTY))
    covered = np.zeros(len(probs), bool)
    if len(doubtful) == 0 or len(tiles) < MIN_ALIKE:
        return covered
    lab = _centre_lab(crops)
    looks, faces = _looks(lab), _faces(lab, np.union1d(tiles, doubtful))
    for kind in np.unique(kinds[doubtful]):
        clear = np.flatnonzero((kinds == kind) & (empty > CLEAR_EMPTY))
        if len(clear) < MIN_UNLIKE:
            continue
        _, colour_limit = _usual_spread(looks, clear)
        cells = doubtful[kinds[doubtful] == kind]
        off = _off_neighbours(looks, clear, cells)[:, 0]
        covered[cells] = ((off > np.maximum(UNLIKE * colour_limit, UNLIKE_COLOUR))
                          & (_off_faces(faces, tiles, cells) < NEARER_TILES * off))
    return covered


def jokers_unlike_tiles(crops: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Cells read as a joker (a blank or star tile) whose face is far from the face of every
    letter tile the photo shows surely: a box's jokers are its tiles, and a dark or coloured
    square that reads as a blank tile does not have their face. `probs` (N, K) with the
    empty label first and the joker second."""
    jokers, tiles = np.flatnonzero(probs.argmax(axis=1) == 1), _sure_letters(probs)
    unlike = np.zeros(len(probs), bool)
    if len(jokers) == 0 or len(tiles) < MIN_FACES:
        return unlike
    faces = _colours(crops, np.union1d(tiles, jokers))
    usual = np.median(faces[tiles], axis=0)
    spread = np.median(np.linalg.norm(faces[tiles] - usual, axis=1))
    off = np.linalg.norm(faces[jokers] - usual, axis=1)
    unlike[jokers] = off > max(FACE_SPREAD * spread, UNLIKE_COLOUR)
    return unlike


def jokers_like_tiles(crops: np.ndarray, probs: np.ndarray, kinds: np.ndarray,
                      jokers: np.ndarray | None = None) -> np.ndarray:
    """Cells read as a joker (or the cells `jokers`) whose colour is much nearer the photo's
    sure letter tiles' face than the clear squares of their kind: a star tile in a shadow,
    which the squares' colour check must not call empty. Arguments as for empties_alike."""
    jokers = np.flatnonzero(probs.argmax(axis=1) == 1) if jokers is None else jokers
    tiles = _sure_letters(probs)
    like = np.zeros(len(probs), bool)
    if len(jokers) == 0 or len(tiles) < MIN_FACES:
        return like
    # the faces compared: the tiles', the jokers' and the clear squares' of the jokers' kinds
    clear_squares = np.flatnonzero(np.isin(kinds, kinds[jokers]) & (probs[:, 0] > CLEAR_EMPTY))
    faces = _colours(crops, np.union1d(np.union1d(tiles, jokers), clear_squares))
    usual = np.median(faces[tiles], axis=0)
    for kind in np.unique(kinds[jokers]):
        clear = np.flatnonzero((kinds == kind) & (probs[:, 0] > CLEAR_EMPTY))
        if len(clear) < MIN_ALIKE:
            continue
        square = np.median(faces[clear], axis=0)
        cells = jokers[kinds[jokers] == kind]
        to_tiles = np.linalg.norm(faces[cells] - usual, axis=1)
        to_square = np.linalg.norm(faces[cells] - square, axis=1)
        like[cells] = to_tiles < NEARER_TILES * to_square
    return like


def _sure_letters(probs: np.ndarray) -> np.ndarray:
    """The cells surely read as a letter (label probabilities, the empty label and the joker
    first): the photo's own examples of its box's tile face."""
    return np.flatnonzero((probs.argmax(axis=1) >= 2) & (probs.max(axis=1) > CLEAR_EMPTY))


def _colours(crops: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """(N, 2) Lab a, b of the faces of `cells` (zero elsewhere): colour alone, as a shadow
    darkens a tile's face without changing its colour."""
    return _faces(_centre_lab(crops), cells)[:, 1:]


def unprinted(log_probs: np.ndarray, crops: np.ndarray, glyphs, kinds: np.ndarray) -> np.ndarray:
    """Glyph log-probabilities of a box whose jokers print a star, where a tile with nothing
    printed is none of its tiles: what looks like one is a star tile whose star did not show,
    where its colour is much nearer the photo's sure letter tiles' face than its kind's clear
    squares, or else a plain light square. The blank glyph's share goes to the star or to the
    empty square accordingly."""
    blank, star, empty = (glyphs.index(g) for g in (BLANK, STAR, EMPTY))
    cells = np.flatnonzero(np.exp(log_probs[:, blank]) > MIN_CANDIDATE)
    if len(cells) == 0:
        return log_probs
    probs = np.exp(log_probs)
    letter = np.array([g not in (EMPTY, STAR, BLANK, TURNED) for g in glyphs])
    # the label order jokers_like_tiles reads: empty, joker, then each letter
    labelled = np.column_stack([probs[:, empty], probs[:, star] + probs[:, blank],
                                probs[:, letter]])
    faced = jokers_like_tiles(crops, labelled, kinds, cells)[cells]
    out = log_probs.copy()
    into = np.where(faced, star, empty)
    out[cells, into] = np.logaddexp(out[cells, into], out[cells, blank])
    out[cells, blank] = np.log(1e-30)
    return out


def _usual_spread(looks: np.ndarray, clear: np.ndarray) -> tuple[np.ndarray, float]:
    """How a kind's clear squares differ from their own neighbours ((len(clear), 2), as
    _off_neighbours), and the colour distance beyond which a cell is unlike them."""
    usual = _off_neighbours(looks, clear, clear)
    return usual, ALIKE_SPREAD * float(np.median(usual[:, 0])) + ALIKE_SLACK


def _off_faces(faces: np.ndarray, tiles: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Colour distance of each cell's centre from the median face of its nearest clear tiles."""
    return np.linalg.norm(faces[cells] - _nearest_median(faces, tiles, cells), axis=1)


def _centre_looks(crops: np.ndarray) -> np.ndarray:
    """(N, 4): mean Lab colour and lightness spread (ink) of each cell's centre."""
    return _looks(_centre_lab(crops))


def _looks(lab: np.ndarray) -> np.ndarray:
    return np.column_stack([lab.mean(axis=1), lab[:, :, 0].std(axis=1)])


def _faces(lab: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """(N, 3): median Lab colour of the centres of `cells` (zero elsewhere): a tile's face,
    its ink left out. The median is the slow part: only the cells compared are taken."""
    faces = np.zeros((len(lab), 3), np.float32)
    faces[cells] = np.median(lab[cells], axis=1)
    return faces


def _centre_lab(crops: np.ndarray) -> np.ndarray:
    inner = np.ascontiguousarray(crops[:, CENTRE, CENTRE])
    lab = cv2.cvtColor(inner.reshape(-1, inner.shape[2], 3), cv2.COLOR_BGR2LAB)
    return lab.reshape(len(crops), -1, 3).astype(np.float32)


def _off_neighbours(looks: np.ndarray, refs: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """(len(cells), 2): colour distance and extra texture of each cell against the median of
    its NEIGHBOURS nearest references (itself left out): light changes across a board."""
    usual = _nearest_median(looks, refs, cells)
    return np.column_stack([np.linalg.norm(looks[cells, :3] - usual[:, :3], axis=1),
                            looks[cells, 3] - usual[:, 3]]).astype(np.float32)


def _nearest_median(values: np.ndarray, refs: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """(len(cells), D): per cell, the median of `values` (N, D) over the NEIGHBOURS cells of
    `refs` nearest it on the board (city-block; ties in board order), itself left out."""
    far = np.abs(WHERE[cells][:, None] - WHERE[refs][None]).sum(axis=2)
    far[cells[:, None] == refs[None]] = np.inf
    order = np.argsort(far, axis=1, kind="stable")[:, :NEIGHBOURS]
    picked = values[refs[order]].astype(np.float32)
    itself = np.isinf(np.take_along_axis(far, order, axis=1))  # only when refs are this few
    if not itself.any():
        return np.median(picked, axis=1)
    picked[itself] = np.nan
    return np.nanmedian(picked, axis=1)


def _called(log_probs: np.ndarray, empty_share: float,
            matrix: np.ndarray | None = None) -> np.ndarray:
    """Glyph log-probabilities with the empty cell moved to `empty_share`, the rest keeping
    their ratio; with a label `matrix` (as for `masked`, the empty label first) glyphs of no
    label, and the empty label's other glyphs, get none, so that the share is the empty
    label's too."""
    empty = load_model().glyphs.index(EMPTY)
    p = np.exp(log_probs)
    p[:, empty] = 0
    if matrix is not None:
        p[:, (matrix.sum(axis=1) == 0) | (matrix[:, 0] > 0)] = 0
    p *= (1 - empty_share) / np.maximum(p.sum(axis=1, keepdims=True), 1e-30)
    p[:, empty] = empty_share
    return np.log(np.maximum(p, 1e-30))


def _crop_shape() -> tuple[int, int, int]:
    size = load_model().size
    return size, size, 3


def _classify_upright(model: Model, crops: np.ndarray, alphabet, stars: tuple[str, ...],
                      turns: int | None = None, profile=None,
                      plain: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Glyph log-probabilities and embeddings (`model`'s) of every crop read upright, and the
    quarter turns (counter-clockwise) that make the board upright (found from the letters
    unless given). The cells of the most ink settle the upright first where they can, so that
    a photo taken from another side of the table has its cells read once, not twice; then,
    where they leave it open, the plain squares (`plain`, 225 booleans) of the most ink. With a
    box's own letters both votes must settle on one turn: on a far, blurred board (novel box
    11, seed 9 500 001) its few inkiest tiles looked decisively upright the wrong way to the
    box's references alone."""
    if turns is None:
        ink = _ink(crops)
        inky = np.argsort(-ink, kind="stable")[:EARLY_CELLS]
        seen, looks = model.run(crops[inky])
        turn, settled = find_turns(crops[inky], seen, alphabet, stars)
        if not settled and plain is not None:
            inky, seen, looks = _more_inky(model, crops, ink, plain, inky, seen, looks)
            turn, settled = find_turns(crops[inky], seen, alphabet, stars)
        if settled and profile is not None and profile.letters:
            own, settled = profile_turns(model, crops[inky], seen, looks, profile)
            settled = settled and own == turn
        turns = turn if settled else None
        if turns == 0:  # upright as it lies: the inky cells are read already
            return (*_read_rest(model, crops, inky, seen, looks), 0)
    if turns is not None:
        return (*_run_wide(model, turn_crops(crops, turns)), turns % 4)
    log_probs, embeddings = _run_wide(model, crops)
    empty = np.exp(log_probs[:, model.glyphs.index(EMPTY)])
    turns, _ = _upright(model, crops, log_probs, embeddings, alphabet, stars, profile)
    if turns:
        again = np.flatnonzero(empty < MAYBE_TILE)
        log_probs[again], embeddings[again] = model.run(turn_crops(crops[again], turns))
    return log_probs, embeddings, turns


def _more_inky(model: Model, crops: np.ndarray, ink: np.ndarray, plain: np.ndarray,
               inky: np.ndarray, seen: np.ndarray, looks: np.ndarray) -> tuple:
    """The `inky` cells and their reading (`seen`, `looks`) with the EARLY_CELLS plain squares of
    the most ink among the others added, read. The premium squares' print is ink too: a late
    Эрудит-black board's 12 inkiest cells were all printed squares when photographed from the
    other side, and the whole board was read twice (its cells' reading 30 ms as taken, 49 ms
    so). Both layouts look the same turned any way: the plain squares are known before the
    upright."""
    others = np.flatnonzero(plain & ~np.isin(np.arange(len(crops)), inky))
    more = others[np.argsort(-ink[others], kind="stable")][:EARLY_CELLS]
    more_seen, more_looks = model.run(crops[more])
    return (np.concatenate([inky, more]), np.concatenate([seen, more_seen]),
            np.concatenate([looks, more_looks]))


def _read_rest(model: Model, crops: np.ndarray, done: np.ndarray, log_probs: np.ndarray,
               embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every crop's reading, those of the cells `done` given."""
    rest = np.setdiff1d(np.arange(len(crops)), done)
    more, more_embeddings = _run_wide(model, crops[rest])
    every = np.empty((len(crops), more.shape[1]), more.dtype)
    every_embeddings = np.empty((len(crops), more_embeddings.shape[1]), more_embeddings.dtype)
    every[done], every_embeddings[done] = log_probs, embeddings
    every[rest], every_embeddings[rest] = more, more_embeddings
    return every, every_embeddings


def _run_wide(model: Model, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """model.run of a board's worth of crops; the general network's as two halves read side by
    side by its one-thread session (two one-thread runs of 213 crops: 31 ms, one two-thread
    run: 33 ms; the same readings)."""
    if model.partner is not None or len(crops) < WIDE:
        return model.run(crops)
    one = load_model(threads=1)
    half = len(crops) // 2
    other = second_thread().submit(one.run, crops[half:])
    first, first_embeddings = one.run(crops[:half])
    second, second_embeddings = other.result()
    return np.concatenate([first, second]), np.concatenate([first_embeddings, second_embeddings])


def _ink(crops: np.ndarray) -> np.ndarray:
    """Spread of lightness in each crop's centre: printed letters, digits, stars."""
    # the channels' mean added up as mean(axis=3) does (the same bits), 5x faster
    centre = crops[:, CENTRE, CENTRE].astype(np.float64)
    return ((centre[..., 0] + centre[..., 1] + centre[..., 2]) / 3).std(axis=(1, 2))


def _upright(model: Model, crops: np.ndarray, log_probs: np.ndarray, embeddings: np.ndarray,
             alphabet, stars: tuple[str, ...], profile) -> tuple[int, bool]:
    """(turns, settled) from the tiles among `crops`, read as they lie: by the box's own
    letters when a profile has them, else by the general model's."""
    if profile is not None and profile.letters:
        return profile_turns(model, crops, log_probs, embeddings, profile)
    return find_turns(crops, log_probs, alphabet, stars)


def find_turns(crops: np.ndarray, log_probs: np.ndarray, alphabet,
               stars: tuple[str, ...] = (STAR,)) -> tuple[int, bool]:
    """How many quarter turns counter-clockwise make the letters upright (0 without tiles),
    and whether the vote settled it (by DECISIVE_VOTE).

    The clearest tiles, already read as they lie (`log_probs`), are read again in the three
    other turns; the turn whose best letter-or-star readings are most likely overall wins.
    The '~' class (a letter seen turned) takes the probability away from the wrong turns.
    A few tiles usually settle it; more are read only while the vote is close.
    """
    model = load_model()
    tiles = _clearest_tiles(model, log_probs)[:ORIENTATION_TILES]
    letters = model.columns([STAR, *alphabet], stars)

    def votes(part):
        turned, _ = _read_turned(model, crops[part])
        every = np.concatenate([log_probs[part][None], turned])  # (4 turns, tiles, glyphs)
        return every[..., letters].max(axis=2).sum(axis=1)

    return _vote_turns(tiles, votes)


def profile_turns(model: Model, crops: np.ndarray, log_probs: np.ndarray,
                  embeddings: np.ndarray, profile) -> tuple[int, bool]:
    """find_turns for a calibrated box: tiles read in all four turns, each turn scored by how
    well the box's references and the general model together explain its tiles (an unseen
    font can look more upright turned to the general model alone), the clearest tiles first
    and the rest only while the vote is close. `model` gives the embeddings the profile's
    references are made of."""

    def votes(part):
        turned, turned_embeddings = _read_turned(model, crops[part])
        readings = [(log_probs[part], embeddings[part]),  # as they lie: already read
                    *zip(turned, turned_embeddings, strict=True)]
        return np.array([profile.judge(reading, looks, model.glyphs).max(axis=1).sum()
                         for reading, looks in readings])

    return _vote_turns(_clearest_tiles(model, log_probs), votes)


def _clearest_tiles(model: Model, log_probs: np.ndarray) -> np.ndarray:
    """Indices of the cells read as tiles, the surest first."""
    empty = np.exp(log_probs[:, model.glyphs.index(EMPTY)])
    tiles = np.flatnonzero(empty < TILE)
    return tiles[np.argsort(empty[tiles])]


def _vote_turns(tiles: np.ndarray, votes) -> tuple[int, bool]:
    """The turn (0-3) whose summed `votes(tiles)` is highest, counting the first
    FIRST_ORIENTATION_TILES and then the rest only when those leave it within DECISIVE_VOTE
    of another turn, and whether it won by that much; (0, False) without tiles."""
    total = np.zeros(4)
    for part in (tiles[:FIRST_ORIENTATION_TILES], tiles[FIRST_ORIENTATION_TILES:]):
        if len(part) == 0:
            break
        total += votes(part)
        second, best = np.sort(total)[-2:]
        if best - second >= DECISIVE_VOTE:
            return int(np.argmax(total)), True
    return int(np.argmax(total)), False


def _read_turned(model, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The crops read turned 1, 2 and 3 quarter turns counter-clockwise, in one call:
    (3, N, G) log-probabilities and (3, N, D) embeddings."""
    batch = np.concatenate([turn_crops(crops, k) for k in (1, 2, 3)])
    log_probs, embeddings = model.run(batch)
    return log_probs.reshape(3, len(crops), -1), embeddings.reshape(3, len(crops), -1)


def decided(probs: np.ndarray) -> np.ndarray:
    """The index of each cell's symbol in `probs` (..., K), the empty label first: the likeliest,
    but a tile where a tile is likelier than not (TILE) and one symbol holds TILE_SHARE of that:
    a tile whose letters split its probability is not read as the empty square that alone
    outweighs each of them. A printed square half taken for a tile of no letter in particular
    stays empty (the real box's centre star: 0.07-0.08 of the tile's share on one letter).
    Unseen boxes 15-26, zero-shot: 308 -> 291 wrong cells (18 put right, 1 wrong); tuning
    renders: 226 -> 225."""
    best = probs.argmax(axis=-1)
    tile = np.argmax(probs[..., 1:], axis=-1) + 1
    held = np.take_along_axis(probs, tile[..., None], axis=-1)[..., 0]
    share = held / np.maximum(1 - probs[..., 0], 1e-9)
    return np.where((probs[..., 0] < TILE) & (share >= TILE_SHARE), tile, best)


def uncertain_cells(grid: np.ndarray, labels: list[str],
                    general: np.ndarray | None = None) -> list[dict]:
    """Cells whose best symbol is below SURE, with up to CANDIDATES likely symbols each.
    With `general`, the general model's (15, 15, K) reading of a photo read with a box
    profile, also the cells where the box's references overrule it or settle its doubt
    between two symbols (TORN), offering its choices among the candidates."""
    out = []
    chosen = decided(grid)
    # where the decided symbol is not the likeliest, it is below half: in doubt either way
    doubt = in_doubt(grid, SURE)
    for r in range(SIZE):
        for c in range(SIZE):
            p, best = grid[r, c], int(chosen[r, c])
            wanted = {best} | (set() if general is None else _doubted(general[r, c]))
            if not doubt[r, c] and wanted == {best}:
                continue
            likely = [int(i) for i in np.argsort(-p) if p[i] >= MIN_CANDIDATE or i in wanted]
            picked = [i for i in likely if i in wanted] + [i for i in likely if i not in wanted]
            # the board's own reading first, then the others as likely as they are
            order = sorted(picked[:CANDIDATES], key=lambda i: (i != best, -p[i]))
            candidates = [[labels[i], round(float(p[i]), 3)] for i in order]
            out.append({"cell": f"{COLUMNS[c]}{r + 1}", "candidates": candidates})
    return out


def _doubted(p: np.ndarray) -> set[int]:
    """The general model's choice for one cell, and its runner-up when that is at least TORN.
    Where it is overruled or torn, the references' verdict is no proof: both read the same
    embeddings. Overruled cells asked: novel boxes 11-14, 90 -> 54 wrong cells not asked
    about. Torn cells asked too: unseen boxes 15-17 and 21-23 (126 boards a game can reach),
    35 -> 18 of 91 wrong cells not asked about, for 85 more right cells asked; none more on the
    real box's calibration photos (88 readings)."""
    first, second = np.argsort(-p)[:2]
    return {int(first), int(second)} if p[second] >= TORN else {int(first)}
