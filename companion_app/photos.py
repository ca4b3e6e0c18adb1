"""Photos after each turn → the game's moves: the vision reading combined with what the game
already knows (engine.infer). Used by `erudit replay`, `erudit demo` and the web app alike."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import cv2
import numpy as np

from engine.board import EMPTY, Board, cell_name, cell_names, is_star
from engine.errors import EruditError, GameError, Message, PhotoError
from engine.game import Game
from engine.infer import (
    best_shift,
    deduce_stars,
    either_order,
    infer_move,
    log_probs,
    temper,
    tile_fit,
    tiles_seen,
)
from vision.squares import CLEAR, SquareLooks, TileLooks

# Mean probability of the old tiles in a clear photo, and the least trust a photo keeps.
CLEAR_READING, MIN_TRUST = 0.9, 0.2
# Below this trust a photo's move is never called sure: its grid was found badly.
DOUBTFUL = 0.5
# Mean log-likelihood per old tile above which the reader's own upright is trusted.
CLEAR_TILE = float(np.log(0.7))
# Border kept around the grid in the rectified picture shown to players, in cells.
RECTIFIED_MARGIN = 0.3
# Evidence (in nats) by which later photos must outvote a tile's recorded letter to fix it.
REVISE_MARGIN = 6.0
# Later photos whose readings weigh on each turn's move in a replay.
LOOKAHEAD = 3
# A photo that shows fewer of the tiles already down where they were (of at least MIN_JUDGED)
# is of another board: a photo from another game, or one hidden by a hand or glare all over.
FOREIGN_SHARE, MIN_JUDGED = 0.2, 5
# A board too small or blurred for its letters still shows where its tiles lie, when it shows
# at least this share of the old tiles (of MIN_JUDGED) and no more new ones than a rack holds;
# its quarter turn must explain the old tiles by GLIMPSE_MARGIN nats better than any other.
GLIMPSE_SEEN, GLIMPSE_MARGIN = 0.9, 10.0
# A photo for the next turn that shows old tiles' cells plainly empty (each at least GONE_SURE,
# at least GONE_MIN of them and GONE_SHARE of the old tiles) is an older photo or another
# board: a hand or glare hides a tile, it does not show an empty square there.
GONE_SURE, GONE_MIN, GONE_SHARE = 0.9, 3, 0.3


@dataclass
class Proposal:
    """The most probable legal board after a turn, for a player to confirm or correct."""

    board: Board
    sure: bool
    alternatives: list[dict]
    cells: list[str]
    rectified_jpeg: bytes
    message: str | Message | None = None
    reading: object = field(default=None, repr=False)
    blocked: Message | None = None   # why this photo cannot be the next turn (not this board)


def box_profile(profile, data):
    """A box's profile: `profile` as it is, or loaded by its name from the data folder
    `data` (None: the user's)."""
    if profile is None or not isinstance(profile, str):
        return profile
    from calibration.profile import load_profile
    from companion_app.settings import data_dir

    return load_profile(profile, data_dir(data))


def read_aligned(game: Game, image: np.ndarray, profile=None, squares=None, letters=None,
                 location=None):
    """Read a photo and bring the reading into the game's frame. Photos may be taken from any
    side of the table and a grid may be found a few cells off: unless the reader's own upright
    already explains the old tiles well, the photo is read in all four turns, and the turn and
    shift whose reading agrees best with the tiles already down wins. `location`: where the
    grid is already known to lie (a camera that has not moved), else it is looked for."""
    from vision.read import read_board, read_grid

    if location is None:
        reading = read_board(image, ruleset=game.ruleset, profile=profile, squares=squares,
                             letters=letters)
    else:
        reading = read_grid(image, location, ruleset=game.ruleset, profile=profile,
                            squares=squares, letters=letters)
    if game.board.is_empty():
        return reading
    tiles = len(list(game.board.tiles()))
    fit, shift = best_shift(game.board, reading.probs, reading.labels)
    if fit < tiles * CLEAR_TILE:
        own = reading.orientation // 90
        for extra in (1, 2, 3):
            other = read_grid(image, reading.location, ruleset=game.ruleset, profile=profile,
                              turns=(own + extra) % 4, squares=squares, letters=letters)
            other_fit, other_shift = best_shift(game.board, other.probs, other.labels)
            if other_fit > fit:
                reading, fit, shift = other, other_fit, other_shift
    if shift == (0, 0):
        return reading
    return read_grid(image, _shifted(reading, *shift), ruleset=game.ruleset, profile=profile,
                     turns=0, squares=squares, letters=letters)


def _shifted(reading, dr: int, dc: int):
    """The location of a grid moved by (dr, dc) cells within the reading's upright frame."""
    from vision.locate import Location, grid_homography

    h = grid_homography(np.float32(reading.corners))
    square = np.float32([[dc, dr], [15 + dc, dr], [15 + dc, 15 + dr], [dc, 15 + dr]])
    corners = cv2.perspectiveTransform(square[None], h)[0].astype(np.float32)
    return Location(corners=corners, cell_px=reading.location.cell_px,
                    quality=reading.location.quality)


def propose_turn(game: Game, image_path, profile=None, data=None, past=None,
                 key: str | None = None) -> Proposal:
    """Read one photo and propose the move it shows (PhotoError for an unreadable photo).
    `past`: the photos of the game's turns so far (None where a turn has none): what they
    show of the box's squares and letters is learnt first, once per `key` (a game's id) and
    process, and the photo is read against it."""
    from vision.photo import load_for_reading

    image, _ = load_for_reading(image_path)
    profile = box_profile(profile, data)
    memory = remembered(game, past, profile, key) if past is not None else None
    return propose_image(game, image, profile, memory)


def propose_image(game: Game, image: np.ndarray, profile=None,
                  memory: Memory | None = None) -> Proposal:
    """propose_turn for a photo already decoded (benchmarks, tests, the web app's workers)."""
    from vision.classifier import check_readable

    check_readable(game.ruleset)
    memory = memory or Memory(profile, game.ruleset.layout)
    reading = read_aligned(game, image, profile, memory.squares, memory.letters)
    proposal = propose_reading(game, image, reading)
    proposal.blocked = not_this_board(game.board, reading) or tiles_gone(game.board, reading)
    if proposal.blocked:
        proposal.message = proposal.blocked
    return proposal


@dataclass
class _Position:
    """What read_aligned needs of a game: its board and rules."""

    board: Board
    ruleset: object


class Memory:
    """What a game's taken photos taught the reader of its box: each square's look while
    empty and each letter's look (vision.squares), and which photos it has learnt from."""

    def __init__(self, profile=None, layout=None):
        self.squares, self.letters = _squares_of(profile), TileLooks()
        self.kinds = None if layout is None else np.array([list(row) for row in layout.rows])
        self.learnt: list = []

    def learn(self, before: Board, reading, probs: np.ndarray, after: Board) -> None:
        """Learn from a photo (its `reading`, and `probs` as far as trusted) of the board
        `after`, taken over `before`."""
        self.squares.learn(_looks(reading), _still_empty(after, probs, reading.labels),
                           self.kinds)
        self.letters.learn(getattr(reading, "embeddings", None), _new_letters(before, after))


_MEMORIES: dict = {}  # key -> Memory, the games this process has proposed turns of lately
KEPT_MEMORIES = 16
# a memory made afresh learns from this many of the latest photos: the room's light drifts
LATEST_PHOTOS = 6


def remembered(game: Game, past: list, profile, key: str | None) -> Memory:
    """The memory of `game`'s photos `past` (one a turn, None for none), made or brought up to
    date: a memory whose photos are not the start of `past` (a turn undone) is made again."""
    memory = _MEMORIES.pop(key, None) if key is not None else None
    if memory is None or list(past[:len(memory.learnt)]) != memory.learnt:
        memory = Memory(profile, game.ruleset.layout)
        memory.learnt = [None] * max(0, len(past) - LATEST_PHOTOS)
    for index in range(len(memory.learnt), min(len(past), len(game.turns))):
        _learn_turn(memory, game, index, past[index], profile)
        memory.learnt.append(past[index])
    if key is not None:
        _MEMORIES[key] = memory
        while len(_MEMORIES) > KEPT_MEMORIES:
            _MEMORIES.pop(next(iter(_MEMORIES)))
    return memory


def _learn_turn(memory: Memory, game: Game, index: int, path, profile) -> None:
    """Learn from the photo of turn `index` (0-based); a photo that cannot be read teaches
    nothing."""
    from vision.photo import load_for_reading

    if path is None:
        return
    before = game.turns[index - 1].board if index else Board()
    after = game.turns[index].board
    try:
        image, _ = load_for_reading(path)
        reading = read_aligned(_Position(after, game.ruleset), image, profile, memory.squares,
                               memory.letters)
    except (EruditError, OSError):
        return
    memory.learn(before, reading, reading.probs, after)


def tiles_gone(before: Board, reading) -> Message | None:
    """Why a photo cannot show the board after the next turn, or None: it shows the cells of
    tiles already down plainly empty (an older photo of this game, or another board)."""
    tiles = list(before.tiles())
    if not tiles or isinstance(reading, Unreadable):
        return None
    empty = reading.probs[..., reading.labels.index(EMPTY)]
    gone = [(row, col) for row, col, _ in tiles if empty[row, col] >= GONE_SURE]
    if len(gone) < min(GONE_MIN, len(tiles)) or len(gone) < GONE_SHARE * len(tiles):
        return None
    return Message("tiles_gone", cells=cell_names(gone))


def propose_reading(game: Game, image, reading, probs=None, later: tuple = ()) -> Proposal:
    """The move a reading already aligned to the game's frame shows, its photo `image`
    shown straightened. `probs`: the reading's probabilities as far as they are trusted
    (default: as read)."""
    before = game.board
    probs = reading.probs if probs is None else probs
    result = infer_move(before, probs, reading.labels, game.ruleset, game.placed_turns(), later)
    board = deduce_stars(before, result.board, game.ruleset)
    cells = [cell_name(row, col) for row, col, _ in board.placed_over(before)]
    sure, message = result.sure, None
    foreign = (reading.reason if isinstance(reading, Unreadable | Glimpse)
               else not_this_board(before, reading))
    if foreign:  # no board, or another game's: its move came from the next photo
        sure, message = False, foreign
    elif trust(before, reading) < DOUBTFUL:
        sure, message = False, "the board is hard to read in this photo: check the move"
    elif result.shown:  # a tile the move leaves out: not among the highlighted cells
        message = Message("tile_shown", cells=cell_names(result.shown))
    elif not sure:
        message = "unsure reading: check the highlighted cells"
    return Proposal(board, sure, result.alternatives, cells,
                    rectified_jpeg(image, reading.corners), message, reading)


def rectified_jpeg(image: np.ndarray, corners) -> bytes:
    """The upright board seen from above, as a JPEG a page can show."""
    from vision.rectify import rectify

    if corners is None:
        return b""
    top = rectify(image, corners, cell_px=48, margin=RECTIFIED_MARGIN)
    ok, data = cv2.imencode(".jpg", top, [cv2.IMWRITE_JPEG_QUALITY, 85])
    return data.tobytes() if ok else b""


class Evidence:
    """What every photo so far has shown on each tile: later photos can outvote a letter
    misread when the tile was new, and the game is then re-scored from that turn."""

    def __init__(self):
        self._log = {}

    def add(self, game: Game, reading) -> None:
        logp = log_probs(reading.probs)
        for row, col, _ in game.board.tiles():
            self._log[row, col] = self._log.get((row, col), 0) + logp[row, col]

    def revise(self, game: Game, labels: list[str]) -> list[str]:
        """Fix tiles whose evidence clearly names another letter; returns the cells fixed."""
        fixed = []
        placed = game.placed_turns()
        for (row, col), total in self._log.items():
            symbol = game.board[row, col]
            if is_star(symbol) or symbol not in labels:
                continue
            best = int(np.argmax(total[2:])) + 2      # letters only: a tile is there
            margin = total[best] - total[labels.index(symbol)]
            if labels[best] != symbol and margin > REVISE_MARGIN and (row, col) in placed:
                try:
                    game.fix(placed[row, col], cell_name(row, col), labels[best])
                except EruditError:
                    continue
                fixed.append(cell_name(row, col))
        return fixed


def replay_photos(game: Game, paths: list[str], profile=None, data=None,
                  learn: bool = True) -> None:
    """Play every photo as the next turn of `game` (`erudit replay`). A file that cannot be
    opened as a photo is an error naming it; so is a photo without a board that the next
    photo cannot stand in for."""
    from vision.photo import load_for_reading

    _replay(game, list(paths), box_profile(profile, data), lambda path: load_for_reading(path)[0],
            learn)


def replay_images(game: Game, images: list[np.ndarray], profile=None,
                  learn: bool = True) -> None:
    """The same as replay_photos for photos already decoded (benchmarks, tests)."""
    _replay(game, list(images), profile, lambda image: image, learn)


def _replay(game: Game, sources: list, profile, load, learn: bool = True) -> None:
    """Play each photo as the next turn, looking a few photos ahead: later photos show this
    turn's tiles too, so a tile misread or imagined here is outvoted before the move is
    recorded, and a tile they keep showing as another letter is fixed afterwards. With
    `learn` each photo's empty squares teach the game what its box's squares look like empty,
    and later photos are weighed against them (vision.squares)."""
    from vision.classifier import check_readable

    check_readable(game.ruleset)
    evidence = Evidence()
    memory = Memory(profile, game.ruleset.layout)
    photos = _Photos(sources, load, profile, memory.squares, memory.letters if learn else None)
    stood_in = None  # the board before the last turn, when that turn was read from this photo
    for index, source in enumerate(sources):
        if game.finished:
            raise GameError(f"{source}: {game._over_message()}")
        window = [photos.reading(game, i)
                  for i in range(index, min(len(sources), index + 1 + LOOKAHEAD))]
        if isinstance(window[0], Unreadable | Glimpse):
            _read_from_next(window, len(game.turns) + 1)
        probs = [temper(r.probs, trust(game.board, r), r.labels) for r in window]
        proposal = propose_reading(game, photos.image(index), window[0], probs[0], tuple(probs[1:]))
        before = game.board.copy()
        # two moves one photo shows: when either could have come first, so could this one
        sure = proposal.sure and not (stood_in is not None and either_order(
            stood_in, before, proposal.board, game.ruleset))
        game.play(proposal.board, sure=sure, alternatives=proposal.alternatives)
        stood_in = before if isinstance(window[0], Unreadable) else None
        if learn:
            memory.learn(before, window[0], probs[0], game.board)
        evidence.add(game, window[0])
        evidence.revise(game, window[0].labels)
        photos.forget(index)


def _squares_of(profile) -> SquareLooks:
    """The squares' empty looks a replay starts from: the profile's, else none yet. The
    game adds each photo's empty squares as its turns are taken."""
    squares = getattr(profile, "squares", None)
    return squares.copy() if squares else SquareLooks()


def _new_letters(before: Board, after: Board) -> list[tuple[int, int, str]]:
    """The lettered tiles a turn placed, as (row, col, glyph): a blank shows no letter."""
    from vision.classifier import glyph_of

    return [(row, col, glyph_of(symbol)) for row, col, symbol in after.placed_over(before)
            if not is_star(symbol)]


def _looks(reading) -> np.ndarray | None:
    return getattr(reading, "looks", None)


def _still_empty(board: Board, probs: np.ndarray, labels: list[str]) -> np.ndarray:
    """(15, 15) cells empty on the board taken and read clearly empty in its photo: what
    their squares look like empty."""
    empty = np.array([[board[row, col] == EMPTY for col in range(15)] for row in range(15)])
    return empty & (probs[..., labels.index(EMPTY)] > CLEAR)


@dataclass
class Glimpse:
    """A photo whose board was found too small or blurred to read its letters: where its tiles
    lie, in the game's frame, as a reading with no say on which letter each tile is. It
    shows which of two moves the next photo shows came first; the letters come from that
    photo."""

    reason: str | Message
    labels: list[str]
    probs: np.ndarray
    corners: np.ndarray


def glimpse(game: Game, image: np.ndarray, error) -> Glimpse | None:
    """Where the tiles of a board too small or blurred to read (`error`, a
    vision.locate.IllegibleBoard) lie, turned and shifted onto the game's old tiles; None
    when the game has too few tiles to place it, or it does not show them clearly."""
    from vision.read import read_grid

    tiles = list(game.board.tiles())
    if error.location is None or len(tiles) < MIN_JUDGED:
        return None
    reading = read_grid(image, error.location, ruleset=game.ruleset, turns=0)
    labels = reading.labels
    fits = []
    for turns in range(4):
        turned = _presence(np.rot90(reading.probs[..., labels.index(EMPTY)], turns), labels)
        fits.append((*best_shift(game.board, turned, labels), turns, turned))
    fits.sort(key=lambda fitted: fitted[0])
    fit, shift, turns, turned = fits[-1]
    if fit < fits[-2][0] + GLIMPSE_MARGIN:
        return None
    probs = _moved(turned, shift, labels)
    tile = probs[..., labels.index(EMPTY)] < 0.5
    seen = sum(bool(tile[row, col]) for row, col, _ in tiles)
    if seen < GLIMPSE_SEEN * len(tiles) or tile.sum() - seen > game.ruleset.rack:
        return None
    return Glimpse(error.message or str(error), labels, probs,
                   np.roll(reading.corners, -turns, axis=0))


def _presence(empty: np.ndarray, labels: list[str]) -> np.ndarray:
    """(15, 15, K) probabilities of cells `empty` (15, 15) likely to be empty, every other
    symbol alike."""
    probs = np.repeat(((1 - empty) / (len(labels) - 1))[..., None], len(labels), axis=2)
    probs[..., labels.index(EMPTY)] = empty
    return probs


def _moved(probs: np.ndarray, shift, labels: list[str]) -> np.ndarray:
    """Presence probabilities of a grid found `shift` (rows, columns) off, put back: cells
    moved in from past its edge are as likely empty as not (best_shift's convention: an old
    tile at (r, c) shows at (r + dr, c + dc))."""
    dr, dc = shift
    moved = _presence(np.full(probs.shape[:2], 0.5), labels)
    rows, cols = slice(max(0, -dr), min(15, 15 - dr)), slice(max(0, -dc), min(15, 15 - dc))
    moved[rows, cols] = probs[max(0, dr):min(15, 15 + dr), max(0, dc):min(15, 15 + dc)]
    return moved


@dataclass
class Unreadable:
    """A photo of the board in which no board could be found: evidence of nothing, so its
    move is read from the next photo, which shows this turn's tiles and the next turn's."""

    reason: str | Message
    labels: list[str]
    corners = None

    @cached_property
    def probs(self) -> np.ndarray:
        return _presence(np.full((15, 15), 0.5), self.labels)


def _read_from_next(window: list, turn: int) -> None:
    """Go on past a photo whose board was not found, or whose letters could not be read,
    only when the next photo can stand in."""
    if len(window) < 2 or isinstance(window[1], Unreadable | Glimpse):
        raise PhotoError(window[0].reason)
    how = (": where its tiles lie is read from this photo, their letters from the next"
           if isinstance(window[0], Glimpse) else " is read from the next photo")
    print(f"erudit: {window[0].reason}; turn {turn}{how} (unsure)", file=sys.stderr)


class _Photos:
    """A replay's photos, read when first needed and kept aligned to the game's frame: a
    reading aligned against a smaller board is checked against the board as it grows, and
    read again in all four turns only if the old tiles no longer fit."""

    def __init__(self, sources: list, load, profile, squares=None, letters=None):
        self.sources, self.load, self.profile = sources, load, profile
        self.squares, self.letters = squares, letters
        self._images: dict[int, np.ndarray] = {}
        self._readings: dict[int, tuple[object, int]] = {}   # index → (reading, tiles then)

    def image(self, index: int) -> np.ndarray:
        if index not in self._images:
            source = self.sources[index]
            self._images[index] = _named(source, lambda: self.load(source))
        return self._images[index]

    def reading(self, game: Game, index: int):
        tiles = len(list(game.board.tiles()))
        cached = self._readings.get(index)
        if cached is not None:
            reading, then = cached
            if then == tiles or tile_fit(game.board, reading.probs, reading.labels) >= \
                    tiles * CLEAR_TILE:
                self._readings[index] = (reading, tiles)
                return reading
        image = self.image(index)          # a file that is not a photo stops the replay
        try:
            reading = _named(self.sources[index],
                             lambda: read_aligned(game, image, self.profile, self.squares,
                                                  self.letters))
        except PhotoError as exc:
            reading = _unread(game, image, exc)
        else:
            foreign = not_this_board(game.board, reading)
            if foreign:  # evidence of nothing: its turn is read from the next photo
                source = self.sources[index]
                named = f"{source}: " if isinstance(source, str | Path) else ""
                reading = Unreadable(f"{named}{foreign}", _labels(game))
        self._readings[index] = (reading, tiles)
        return reading

    def forget(self, index: int) -> None:
        """A photo whose turn is recorded is not read again."""
        self._images.pop(index, None)
        self._readings.pop(index, None)


def _unread(game: Game, image: np.ndarray, error: PhotoError):
    """What a photo whose board could not be read shows: where its tiles lie, when its grid
    was found too small or blurred for its letters (and its glimpse fits the game), else
    nothing."""
    from vision.locate import IllegibleBoard

    seen = glimpse(game, image, error) if isinstance(error, IllegibleBoard) else None
    return seen or Unreadable(error.message or str(error), _labels(game))


def _labels(game: Game) -> list[str]:
    from vision.classifier import labels_for

    return labels_for(game.ruleset.alphabet)


def not_this_board(before: Board, reading) -> Message | None:
    """Why a photo's reading cannot be of the game's board, or None: it shows almost none of
    the tiles already down where they were (judged from MIN_JUDGED tiles on)."""
    tiles = len(list(before.tiles()))
    if tiles < MIN_JUDGED:
        return None
    seen = tiles_seen(before, reading.probs, reading.labels)
    if seen >= FOREIGN_SHARE * tiles:
        return None
    return Message("foreign_board", seen=seen, tiles=tiles)


def trust(before: Board, reading) -> float:
    """How far a photo's reading (aligned to the game's frame) is trusted: the mean
    probability it gives the old tiles, against what a clear photo gives them."""
    tiles = len(list(before.tiles()))
    if not tiles:
        return 1.0
    if isinstance(reading, Glimpse):  # no say on letters: trusted as far as it shows the tiles
        empty = reading.probs[..., reading.labels.index(EMPTY)]
        shown = np.mean([1 - empty[row, col] for row, col, _ in before.tiles()])
        return float(np.clip(shown / CLEAR_READING, MIN_TRUST, 1.0))
    fit = tile_fit(before, reading.probs, reading.labels)
    return float(np.clip(np.exp(fit / tiles) / CLEAR_READING, MIN_TRUST, 1.0))


def _named(source, action):
    """Run a step on one photo; an error names the photo."""
    try:
        return action()
    except EruditError as exc:
        if isinstance(source, str | Path) and str(source) not in str(exc):
            named = type(exc)(f"{source}: {exc}")
            named.__dict__.update(vars(exc))  # what the error carries (a board's location)
            raise named from None
        raise
