"""A camera watching the table → the game's moves, taken by themselves: each frame gets the
cheap look (vision.motion); a move is taken when the board has been still, with nothing over
it, for `settle` seconds and the full read (companion_app.photos) shows a legal move against
the last board taken. Used by `erudit replay VIDEO` and by any page that feeds it frames.

    >>> taker = TurnTaker(game, settle=2.0)
    >>> for event in taker.feed(frame, t):          # a BGR frame and its time in seconds
    ...     print(event.kind, event.note)            # "move", "paused", "resumed", "note"

Tiles laid one by one with the hand coming and going in under `settle` seconds are one move:
the board is never still long enough in between. A camera that loses the board (out of
frame, the light gone, knocked aside) pauses the game with a note; it finds the board again
by itself, and no move is taken until it does.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from companion_app.photos import (
    DOUBTFUL,
    Evidence,
    Memory,
    Proposal,
    not_this_board,
    propose_reading,
    read_aligned,
    tiles_gone,
    trust,
)
from engine.board import EMPTY
from engine.errors import EruditError, Message, PhotoError
from engine.game import Game, Turn
from engine.infer import combine_letters, temper
from engine.ruleset import SIZE
from vision.motion import CHANGED, board_view, compare, distance, is_dark
from vision.read import TILE

SETTLE = 2.0  # s the board stays still, with nothing over it, before its move is taken
# a board quiet this share of `settle` while differing from the last board taken shows a move
# being laid: read then, its letters count for the move too (a letter hidden when it is taken)
GLANCE = 0.25
EARLIER = 3  # glances kept for the move being laid, the latest
SEARCH_EVERY = 1.0  # s between searches for a board out of sight (a search costs a read's time)
BROAD = 30  # grid cells changed at once, more than a hand covers: the camera may have moved
SAME_PLACE = 0.3  # cells a grid found again may lie off the one watched and still be it
# `settle`s a view unlike the board last taken stays still, the board found where it was,
# before it is taken as the scene now: the light or the camera's colours changed, or a thing
# lies on the board's margin. Read then, a hand still on the board shows no move (its tiles
# hidden), and watching goes on from what the camera sees.
RESTING = 3
CHECKS_PER_SECOND = 10.0  # frames of a video looked at each second; more show nothing new


@dataclass
class Event:
    """Something the watcher saw: a move taken (`turn`), a doubtful move for the players to
    confirm (`proposal`, with `ask`), the game paused or resumed, or a note for the players
    (a change on the board that is no legal move)."""

    kind: str  # "move" | "proposal" | "paused" | "resumed" | "note"
    frame: int
    t: float
    message: str | Message | None = None  # for the players (a Message a page can translate)
    turn: Turn | None = None
    proposal: Proposal | None = None  # a doubtful move, not played (see TurnTaker `ask`)

    @property
    def note(self) -> str:
        """The message in English ("" for none)."""
        return str(self.message) if self.message is not None else ""


class TurnTaker:
    """Frames in, moves out, for one game. `feed` each frame with its time; `paused` holds
    what to show while the camera has lost the board (a Message; None while it watches),
    `straightened` the board last read, seen from above (a JPEG), `reads` how many full
    reads showed the board so far.

    With `ask` (players at a table, not a video), a doubtful move, or one the game refuses,
    is not played: it comes back as a "proposal" event, and the taker `holding` takes no
    move until that is cleared (the players confirmed, corrected or discarded the
    proposal); earlier turns are then never revised from later frames either (what the
    players confirmed stands).

    With `paced` (frames timed as they arrive, not a file's), a search for a board out of
    sight waits twice as long as the last search took: a camera pointed away for a while
    leaves most of the CPU to the pages and the other games."""

    def __init__(self, game: Game, settle: float = SETTLE, profile=None, learn: bool = True,
                 ask: bool = False, paced: bool = False):
        from vision.classifier import check_readable

        check_readable(game.ruleset)
        self.game, self.settle, self.profile, self.learn = game, settle, profile, learn
        self.ask, self.paced = ask, paced
        self.search_gap = SEARCH_EVERY  # s from one search for the board to the next
        self.holding = False  # a proposal waits for the players: no move is read meanwhile
        self.reads = 0
        self.memory = Memory(profile, game.ruleset.layout)  # the box's looks, learnt as it goes
        self.evidence = Evidence()
        self.corners = None  # the grid's corners in the frame, board order once read
        self.location = None  # where the grid was last found or read (vision.Location)
        self.reference = None  # the board last taken (or confirmed), as the cheap look sees it
        self.previous = None  # the frame before, as the cheap look sees it
        self.last_read = None  # the view last read that showed no move: not read again
        self.recheck = True  # the view was taken without a read: read it when still
        self.earlier: list[np.ndarray] = []  # glances at the move being laid (probabilities)
        self.glanced = None  # the view last glanced at
        self.busy_at = -math.inf  # when something last moved on or over the board
        self.searched_at = -math.inf
        self.moved_at = -math.inf  # when something last moved
        self.paused: Message | None = None
        self.seen_board = False
        self.frames = 0
        self.straightened = b""  # the last board read, straightened, as a JPEG a page can show

    def feed(self, frame: np.ndarray, t: float) -> list[Event]:
        """Look at one frame (BGR) taken at `t` seconds; the events it brings."""
        index, self.frames = self.frames, self.frames + 1
        if is_dark(frame):
            return self._lost(index, t, "camera_dark")
        if self.corners is None:
            location = self._search(frame, t) if t - self.searched_at >= self.search_gap else None
            if location is None:
                return self._lost(index, t, "camera_lost")
            self._watch_at(location)
        view = board_view(frame, self.corners)
        if self.reference is None:
            self.reference, self.busy_at = view, t
        look = compare(view, self.previous, self.reference)
        self.previous = view
        if look.moving:
            self.moved_at = t
        unlike = self._unlike(frame, look, index, t)
        if unlike is not None:
            return unlike
        events = self._resumed(index, t)
        if look.moving or (look.covered and not self.recheck):
            self.busy_at = t
        quiet = t - self.busy_at
        if self.holding:
            return events
        if GLANCE * self.settle <= quiet < self.settle and look.changed and not self.recheck \
                and not _same(view, self.glanced):
            self._glance(frame, view)
        if quiet >= self.settle and (self.recheck or look.changed) \
                and not _same(view, self.last_read):
            events += self._read(frame, view, index, t)
        return events

    def _unlike(self, frame, look, index, t) -> list[Event] | None:
        """What a view unlike the board brings: the camera moved (the board is watched where
        it is found now), the board lost, a hand resting on it, or a scene changed for good
        (watched anew once still for RESTING `settle`s); None to go on looking."""
        broad = look.gone or len(look.changed) > BROAD
        still = t - self.moved_at
        if not broad and not (look.covered and still >= self.settle):
            return None
        due = t - self.searched_at >= (self.search_gap if broad else 2 * self.settle)
        searched = due and not look.moving
        if searched and self._found_again(frame, t, anew=still >= RESTING * self.settle):
            return self._resumed(index, t)
        if not look.gone:
            return None
        self.busy_at = t
        return self._lost(index, t, "camera_lost") if searched or self.paused else []

    def resync(self, retake: bool = True) -> None:
        """The game changed outside the watcher (a turn undone or corrected): the board is
        read once still. With `retake` it is compared anew, and a move it shows is taken
        again (a video replayed); without, the view last read is not read again: a move
        the players undid does not come back by itself until the board changes."""
        if retake:
            self.reference = self.previous = self.last_read = None
        self.glanced, self.recheck, self.earlier = None, True, []

    def finish(self, frame: np.ndarray | None, t: float) -> list[Event]:
        """The stream ended (a video's last frame `frame`): its board is taken as it is
        when nothing is over it, however short it was still."""
        if frame is None or self.corners is None or is_dark(frame):
            return []
        view = board_view(frame, self.corners)
        look = compare(view, None, self.reference)
        if look.covered and not self.recheck:
            return []
        if (self.recheck or look.changed) and not _same(view, self.last_read):
            return self._read(frame, view, self.frames - 1, t)
        return []

    def _found_again(self, frame, t, anew: bool) -> bool:
        """Whether the board is found elsewhere in the frame than where it was watched, or
        (`anew`) anywhere: then it is watched there, compared anew and read once still.
        False when it is not found, or found where it was and not `anew`."""
        location = self._search(frame, t)
        if location is None:
            return False
        if not anew and self.corners is not None \
                and _same_place(self.corners, location.corners):
            return False
        self._watch_at(location)
        return True

    def _search(self, frame, t):
        """The board's location in the frame, or None (at most once each `search_gap`)."""
        from vision.locate import locate_board

        self.searched_at, started = t, time.monotonic()
        try:
            return locate_board(frame)
        except PhotoError:
            return None
        finally:
            if self.paced:
                self.search_gap = max(SEARCH_EVERY, 2 * (time.monotonic() - started))

    def _watch_at(self, location) -> None:
        """Watch the board at `location` (first sight, or the camera moved): compared anew,
        and read once still."""
        self.corners, self.seen_board = np.float32(location.corners), True
        self.location = location
        self.reference = self.previous = None
        self.recheck, self.last_read = True, None

    def _lost(self, index, t, code) -> list[Event]:
        self.previous = None
        self.busy_at = t
        if self.paused is not None and self.paused.code == code:
            return []
        self.paused = Message(code)
        return [Event("paused", index, t, self.paused)]

    def _resumed(self, index, t) -> list[Event]:
        if self.paused is None:
            return []
        self.paused = None
        return [Event("resumed", index, t, Message("camera_back"))]

    def _read(self, frame, view, index, t) -> list[Event]:
        """The full read of a still frame that differs from the board last taken."""
        game = self.game
        self.last_read = view
        try:
            reading = self._reading(frame)
        except PhotoError as exc:
            return [Event("note", index, t, Message("board_unreadable", error=exc))]
        if not _fits(game, reading):
            return []  # a hand or a shadow the cheap look missed: the next still frame tells
        probs = temper(reading.probs, trust(game.board, reading), reading.labels)
        proposal = propose_reading(game, frame, reading,
                                   with_earlier(probs, self.earlier, reading.labels))
        self.straightened, self.reads = proposal.rectified_jpeg, self.reads + 1
        self._confirmed(frame, reading)
        if proposal.board == game.board:
            if self.recheck:
                self.recheck = False
                return []
            return [Event("note", index, t, Message("not_a_move"))]
        self.recheck, self.earlier, self.glanced = False, [], None
        if self.ask and not proposal.sure:
            return self._proposed(proposal, index, t)
        before = game.board
        try:
            turn = game.play(proposal.board, sure=proposal.sure,
                             alternatives=proposal.alternatives)
        except EruditError:
            if not self.ask:
                raise
            return self._proposed(proposal, index, t)  # the players see why, and decide
        if self.learn:
            self.memory.learn(before, reading, probs, game.board)
        if not self.ask:
            self.evidence.add(game, reading)
            self.evidence.revise(game, reading.labels)
        return [Event("move", index, t, proposal.message, turn)]

    def _proposed(self, proposal, index, t) -> list[Event]:
        self.holding = True
        proposal.reading = None  # arrays of no further use
        return [Event("proposal", index, t, proposal.message, proposal=proposal)]

    def _glance(self, frame, view) -> None:
        """Read a frame of a move being laid, for its letters (no move is taken from it)."""
        self.glanced = view
        try:
            reading = self._reading(frame)
        except PhotoError:
            return
        if _fits(self.game, reading):
            kept = temper(reading.probs, trust(self.game.board, reading), reading.labels)
            self.earlier = [*self.earlier, kept][-EARLIER:]

    def _reading(self, frame):
        """The frame read where its grid was last found (a third of the time of finding it
        again); found again when that reading does not fit the tiles already down."""
        letters = self.memory.letters if self.learn else None
        if self.location is not None:
            reading = read_aligned(self.game, frame, self.profile, self.memory.squares, letters,
                                   self.location)
            if _fits(self.game, reading):
                return reading
        return read_aligned(self.game, frame, self.profile, self.memory.squares, letters)

    def _confirmed(self, frame, reading) -> None:
        """The read board is the one the cheap look compares with from now on, in board
        order."""
        self.corners, self.location = np.float32(reading.corners), reading.location
        self.reference = self.previous = board_view(frame, self.corners)
        self.last_read = self.reference


def with_earlier(probs: np.ndarray, earlier: list[np.ndarray], labels: list[str]) -> np.ndarray:
    """A still frame's probabilities (15, 15, K) with the letters earlier frames of the same
    move showed counted too, on the cells where they showed a tile (the tile-or-empty odds
    stay the still frame's): a letter a hand hid, or glare, at the end was seen before."""
    empty = labels.index(EMPTY)
    shown = [np.where((seen[..., empty] < TILE)[..., None], seen, 1.0) for seen in earlier]
    return combine_letters([probs, *shown], labels)


def _fits(game: Game, reading) -> bool:
    """Whether a reading shows the game's board clearly enough to take a move from: the tiles
    already down where they were, none of them plainly gone, and the grid trusted."""
    return (not not_this_board(game.board, reading) and not tiles_gone(game.board, reading)
            and trust(game.board, reading) >= DOUBTFUL)


def _same(view: np.ndarray, other: np.ndarray | None) -> bool:
    return other is not None and not bool((distance(view, other) > CHANGED).any())


def _same_place(corners, found) -> bool:
    """Whether a grid found at `found` (image order) is the one watched at `corners` (any
    order of the same four), within SAME_PLACE of a cell."""
    found = np.float32(found)
    cell = float(np.linalg.norm(found[1] - found[0])) / SIZE
    off = min(float(np.abs(np.roll(np.float32(corners), turn, axis=0) - found).max())
              for turn in range(4))
    return off <= SAME_PLACE * cell


# -- video files -------------------------------------------------------------------------
@dataclass
class VideoMove:
    """Where in the video a move was read: its frame (0-based) and time (s)."""

    turn: int
    frame: int
    t: float


def replay_video(game: Game, path: str, settle: float = SETTLE, profile=None,
                 progress: Callable[[float, float, int], None] | None = None) -> list[VideoMove]:
    """Play every move the video at `path` shows into `game`; returns where each was read.
    `progress(t, length, moves)` is called about once a second of video. A file OpenCV
    cannot open, or one without a frame showing a board, is a PhotoError naming it."""
    capture = _opened(path)
    try:
        return _watch(game, capture, path, TurnTaker(game, settle, profile), progress)
    finally:
        capture.release()


def _opened(path: str):
    from pathlib import Path

    if not Path(path).is_file():
        raise PhotoError(f"{path}: no such file")
    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        raise PhotoError(f"{path}: not a video OpenCV can open")
    return capture


def _watch(game, capture, path, taker: TurnTaker, progress) -> list[VideoMove]:
    fps = capture.get(cv2.CAP_PROP_FPS)
    fps = fps if fps and math.isfinite(fps) and 0 < fps < 1000 else 25.0
    length = max(0.0, capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0.0) / fps
    every = max(1, round(fps / CHECKS_PER_SECOND))
    moves, index, last, shown = [], 0, None, -1
    while capture.grab():
        index += 1
        if (index - 1) % every:
            continue
        ok, frame = capture.retrieve()
        if not ok or frame is None:
            continue
        last, t = frame, (index - 1) / fps
        for event in taker.feed(frame, t):
            _note(moves, event, fps)
        if progress is not None and int(t) != shown:
            shown = int(t)
            progress(t, length, len(game.turns))
    if index == 0:
        raise PhotoError(f"{path}: not a video OpenCV can open (no frames)")
    for event in taker.finish(last, (index - 1) / fps):
        _note(moves, event, fps)
    if not taker.seen_board:
        raise PhotoError(f"{path}: no frame of the video shows a board")
    return moves


def _note(moves: list[VideoMove], event: Event, fps: float) -> None:
    """Where a move was read; what else the watcher saw (and a move's doubt) on stderr."""
    if event.kind == "move":
        moves.append(VideoMove(event.turn.number, round(event.t * fps), round(event.t, 3)))
    if event.note:
        turn = f"turn {event.turn.number}: " if event.turn is not None else ""
        print(f"erudit: {event.t:.1f} s: {turn}{event.note}", file=sys.stderr)
