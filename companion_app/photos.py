"""Photos after each turn → the game's moves: the vision reading combined with what the game
already knows (engine.infer). Used by `erudit replay`, `erudit demo` and the web app alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from engine.board import Board, cell_name, is_star
from engine.errors import EruditError, GameError
from engine.game import Game
from engine.infer import best_shift, deduce_stars, infer_move, log_probs, temper

# Mean probability of the old tiles in a clear photo, and the least trust a photo keeps.
CLEAR_READING, MIN_TRUST = 0.9, 0.2
# Mean log-likelihood per old tile above which the reader's own upright is trusted.
CLEAR_TILE = float(np.log(0.7))
# Border kept around the grid in the rectified picture shown to players, in cells.
RECTIFIED_MARGIN = 0.3
# Evidence (in nats) by which later photos must outvote a tile's recorded letter to fix it.
REVISE_MARGIN = 6.0


@dataclass
class Proposal:
    """The most probable legal board after a turn, for a player to confirm or correct."""

    board: Board
    sure: bool
    alternatives: list[dict]
    cells: list[str]
    rectified_jpeg: bytes
    message: str | None = None
    reading: object = field(default=None, repr=False)


def _profile(profile, data):
    if profile is None or not isinstance(profile, str):
        return profile
    from calibration.profile import load_profile
    from companion_app.settings import data_dir

    return load_profile(profile, data_dir(data))


def read_aligned(game: Game, image: np.ndarray, profile=None):
    """Read a photo and bring the reading into the game's frame. Photos may be taken from any
    side of the table and a grid may be found a few cells off: unless the reader's own upright
    already explains the old tiles well, the photo is read in all four turns, and the turn and
    shift whose reading agrees best with the tiles already down wins."""
    from vision.read import read_board, read_grid

    reading = read_board(image, ruleset=game.ruleset, profile=profile)
    if game.board.is_empty():
        return reading
    tiles = len(list(game.board.tiles()))
    fit, shift = best_shift(game.board, reading.probs, reading.labels)
    if fit < tiles * CLEAR_TILE:
        own = reading.orientation // 90
        for extra in (1, 2, 3):
            other = read_grid(image, reading.location, ruleset=game.ruleset, profile=profile,
                              turns=(own + extra) % 4)
            other_fit, other_shift = best_shift(game.board, other.probs, other.labels)
            if other_fit > fit:
                reading, fit, shift = other, other_fit, other_shift
    if shift == (0, 0):
        return reading
    return read_grid(image, _shifted(reading, *shift), ruleset=game.ruleset, profile=profile,
                     turns=0)


def _shifted(reading, dr: int, dc: int):
    """The location of a grid moved by (dr, dc) cells within the reading's upright frame."""
    from vision.locate import Location, grid_homography

    h = grid_homography(np.float32(reading.corners))
    square = np.float32([[dc, dr], [15 + dc, dr], [15 + dc, 15 + dr], [dc, 15 + dr]])
    corners = cv2.perspectiveTransform(square[None], h)[0].astype(np.float32)
    return Location(corners=corners, cell_px=reading.location.cell_px,
                    quality=reading.location.quality)


def propose_turn(game: Game, image_path, profile=None, data=None) -> Proposal:
    """Read one photo and propose the move it shows (PhotoError for an unreadable photo)."""
    from vision.photo import load_for_reading

    image, _ = load_for_reading(image_path)
    reading = read_aligned(game, image, _profile(profile, data))
    return _proposal(game, image, reading)


def _proposal(game: Game, image, reading, later: np.ndarray | None = None) -> Proposal:
    before = game.board
    result = infer_move(before, reading.probs, reading.labels, game.ruleset, game.placed_turns(),
                        later)
    board = deduce_stars(before, result.board, game.ruleset)
    cells = [cell_name(r, c) for r, c, _ in board.tiles() if before[r, c] == "."]
    message = None if result.sure else "unsure reading: check the highlighted cells"
    return Proposal(board, result.sure, result.alternatives, cells,
                    rectified_jpeg(image, reading.corners), message, reading)


def rectified_jpeg(image: np.ndarray, corners) -> bytes:
    """The upright board seen from above, as a JPEG a page can show."""
    from vision.rectify import rectify

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


def replay_photos(game: Game, paths: list[str], profile=None, data=None) -> None:
    """Play every photo as the next turn of `game` (SPEC §4 replay); a photo that cannot be
    read is an error naming it."""
    from vision.photo import load_for_reading

    _replay(game, list(paths), _profile(profile, data), lambda path: load_for_reading(path)[0])


def replay_images(game: Game, images: list[np.ndarray], profile=None) -> None:
    """The same as replay_photos for photos already decoded (benchmarks, tests)."""
    _replay(game, list(images), profile, lambda image: image)


def _replay(game: Game, sources: list, profile, load) -> None:
    """Play each photo as the next turn, looking one photo ahead: the next photo shows this
    turn's tiles too, so a photo misread here is outvoted before the move is recorded."""
    evidence = Evidence()
    decoded: dict[int, np.ndarray] = {}

    def image_at(index: int) -> np.ndarray:
        """Each photo is decoded once, though it is read both ahead and in its own turn."""
        if index not in decoded:
            decoded.pop(index - 2, None)
            decoded[index] = load(sources[index])
        return decoded[index]

    for index, source in enumerate(sources):
        if game.finished:
            raise GameError(f"{source}: {game._over_message()}")
        reading, image = _read_labelled(game, source, lambda i=index: image_at(i), profile)
        reading.probs = temper(reading.probs, trust(game.board, reading))
        later = None
        if index + 1 < len(sources):
            ahead = _read_labelled(game, sources[index + 1], lambda i=index + 1: image_at(i),
                                   profile)[0]
            later = temper(ahead.probs, trust(game.board, ahead))
        proposal = _proposal(game, image, reading, later)
        game.play(proposal.board, sure=proposal.sure, alternatives=proposal.alternatives)
        evidence.add(game, reading)
        evidence.revise(game, reading.labels)


def trust(before: Board, reading) -> float:
    """How far a photo's reading is trusted: the mean probability it gives the old tiles,
    against what a clear photo gives them."""
    tiles = len(list(before.tiles()))
    if not tiles:
        return 1.0
    fit, _ = best_shift(before, reading.probs, reading.labels)
    return float(np.clip(np.exp(fit / tiles) / CLEAR_READING, MIN_TRUST, 1.0))


def _read_labelled(game: Game, source, decode, profile):
    """Read one photo in the game's frame; an error names the photo."""
    try:
        image = decode()
        return read_aligned(game, image, profile), image
    except EruditError as exc:
        if isinstance(source, str | Path) and str(source) not in str(exc):
            raise type(exc)(f"{source}: {exc}") from None
        raise
