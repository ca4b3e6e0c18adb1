"""Live play: a camera watches a game's table and its moves are taken by themselves
(companion_app.stream.TurnTaker), in a thread of the server.

A watched game has one watcher. Its frames come from a page of the game (the browser's camera
sends them: POST /g/<token>/frame) or from a camera given to the server (`erudit serve
--camera SRC`, read by a thread of its own). Only the latest frame waits to be looked at: a
watcher busy reading the board drops the frames that came meanwhile, never queues them. A sure
move is stored as the next turn at once (its frame kept as the turn's photo), a doubtful one
as the game's proposal, which waits for the players (no move is taken meanwhile); every open
page hears of it (events.py), and of the watcher's own state, LIVE: paused, a note, a new read.

    >>> watchers = live.watchers(app)                   # made by create_app
    >>> watcher = watchers.start(token, "browser")      # or watchers.start(token, "camera", 0)
    >>> watcher.offer(frame, t)                         # BGR frame, its time in seconds
    >>> watchers.status(token, translate)               # LIVE, as the pages get it
    >>> watchers.stop(token); watchers.stop_all()       # a player stops it; the server stops

With app config LIVE_INLINE (tests) a page's frames are looked at in the request's own thread
(`watcher.look`), and time passes only when told (`watcher.tick(now)`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
from flask import Flask

from companion_app.stream import SETTLE, Event, TurnTaker
from engine.errors import EruditError, Message

from . import db, store, uploads
from .events import Hub

LIVE_GAMES = 4           # games watched at once: each read takes a core for a moment
SILENT_S = 5.0           # no frame for this long: the game shows paused
IDLE_S = 60.0            # no frame for this long: the watcher stops
FRAME_BYTES = 2 * 1024 * 1024   # a 1280×720 JPEG at quality 0.8 is 100–300 KB
FRAME_PIXELS = 4_000_000        # 2560×1440 and below
FRAME_SIDE = 640         # px of a frame's longer side at least: smaller ones never show a
                         # board clearly, and looking for one in them takes seconds
FRAMES_PER_SECOND = 8    # a page sends about 4
RECONNECT_S = 2.0        # between attempts to open a server camera that is lost, at first
RECONNECT_MAX_S = 30.0   # ... and at most
STOP_WAIT_S = 2.0        # how long stopping waits for a watcher's threads
STORED_QUALITY = 90      # JPEG quality of a turn's photo, as for uploaded photos
WATCHER_NICE = 10        # the watchers' threads yield the CPU to the pages' requests

log = logging.getLogger(__name__)


class Slot:
    """The latest frame, waiting to be looked at: a new one replaces it (`wait`: waits until
    it was taken instead, for a video file that must be seen whole)."""

    def __init__(self):
        self._ready = threading.Condition()
        self._item: tuple | None = None
        self.closed = False

    def put(self, frame: np.ndarray | None, t: float, wait: bool = False) -> None:
        with self._ready:
            if wait:
                self._ready.wait_for(lambda: self._item is None or self.closed)
            self._item = (frame, t)
            self._ready.notify_all()

    def take(self, timeout: float) -> tuple | None:
        """(frame, t) once there is one, None after `timeout` s or once closed; a frame of
        None says the camera was lost."""
        with self._ready:
            self._ready.wait_for(lambda: self._item is not None or self.closed, timeout)
            item, self._item = self._item, None
            self._ready.notify_all()
            return item

    def close(self) -> None:
        with self._ready:
            self.closed = True
            self._ready.notify_all()


class Watcher:
    """One game's camera: frames in (`offer` or `look`), its moves stored, its state kept
    for the pages (`status`)."""

    def __init__(self, app: Flask, hub: Hub, token: str, source: str,
                 camera: int | None = None, on_end: Callable | None = None):
        self.app, self.hub, self.token = app, hub, token
        self.source, self.camera = source, camera
        self.on_end = on_end or (lambda watcher: None)
        self.state, self.note = "starting", None   # note: a Message, or a str
        self.arrived: float | None = None          # time.monotonic() of the last frame
        self.sender: str | None = None             # whose page sends the frames
        self.slot = Slot()
        self.stopped = threading.Event()
        self._looking = threading.Lock()           # one look at a time
        self._sending = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._seen = -1                            # the game's change count last synced
        self._silent_since: float | None = None
        self._started = time.monotonic()
        self.taker = self._taker()

    # -- the game -------------------------------------------------------------------------
    def _taker(self) -> TurnTaker:
        from companion_app.photos import box_profile

        with self.app.app_context():
            record = store.find(db.get_db(), self.token)
            game = store.build_game(record, self._data_dir())
            box = box_profile(record.profile, str(self._data_dir()))
        taker = TurnTaker(game, SETTLE, box, ask=True, paced=True)
        taker.holding = record.pending is not None or game.finished
        self._seen = self.hub.count(self.token)
        return taker

    def _data_dir(self) -> Path:
        return Path(self.app.config["DATA_DIR"])

    def _sync(self, force: bool = False, retake: bool = False) -> None:
        """Follow a change made to the game elsewhere (a confirm, an undo, a correction, a
        pass, the end): the game rebuilt from its record, the board compared anew."""
        count = self.hub.count(self.token)
        if count == self._seen and not force:
            return
        self._seen = count
        with self.app.app_context():
            record = store.find(db.get_db(), self.token)
            if _record_key(record) != _game_key(self.taker.game):
                self.taker.game = store.build_game(record, self._data_dir())
                self.taker.resync(retake=retake)
        self.taker.holding = record.pending is not None or self.taker.game.finished

    # -- frames ---------------------------------------------------------------------------
    def takes_from(self, sender: str, now: float) -> bool:
        """Whether frames from `sender` (a page's session) are this watcher's: those of the
        page that sends them, or of another once that one has been silent SILENT_S."""
        with self._sending:     # not _looking: a read may hold that for a second
            silent = self.arrived is None or now - self.arrived >= SILENT_S
            if self.sender not in (None, sender) and not silent:
                return False
            self.sender = sender
            return True

    def offer(self, frame: np.ndarray | None, t: float, wait: bool = False) -> None:
        """A frame (None: the camera was lost) for the watcher's thread; with LIVE_INLINE
        and no thread, looked at now."""
        if self._threads:
            self.slot.put(frame, t, wait)
        else:
            self.look(frame, t)

    def look(self, frame: np.ndarray | None, t: float, now: float | None = None) -> None:
        """Look at one frame taken at `t` s (the taker's clock) arriving at `now`
        (time.monotonic(), the silence's clock): a move stored, the state told."""
        with self._looking:
            if self.stopped.is_set():
                return
            before = self._said()
            if frame is None:
                self._pause(Message("camera_offline", number=(self.camera or 0) + 1))
            else:
                self.arrived, self._silent_since = now or time.monotonic(), None
                self._sync()
                for event in self._feed(frame, t):
                    self._handle(event, frame)
                self._settle_state()
            self._tell(before)

    def _settle_state(self) -> None:
        """The state after a frame: paused while the taker is, watching otherwise (back
        from a silence, said so)."""
        if self.taker.paused is not None:
            if self.state != "paused" or _code(self.note) in SILENCES:
                self._pause(self.taker.paused)
        elif self.state != "watching":
            if _code(self.note) in SILENCES:
                self.note = Message("camera_back")
            self.state = "watching"

    def tick(self, now: float) -> None:
        """What time brings without frames (`now`: time.monotonic()): paused after
        SILENT_S, the end after IDLE_S."""
        since = self.arrived if self.arrived is not None else self._started
        if now - since >= IDLE_S:
            self.stop()
            return
        if now - since >= SILENT_S and self._silent_since is None:
            with self._looking:
                before = self._said()
                self._silent_since = now
                if self.state != "paused" or _code(self.note) not in SILENCES:
                    self._pause(Message("camera_silent"))
                self._tell(before)

    def _feed(self, frame, t) -> list[Event]:
        try:
            return self.taker.feed(frame, t)
        except EruditError as exc:  # the game refused what was read: said, nothing stored
            return [Event("note", 0, t, exc.message or str(exc))]

    def _pause(self, note) -> None:
        self.state, self.note = "paused", note

    def _handle(self, event: Event, frame: np.ndarray) -> None:
        if event.kind in ("move", "proposal"):
            self.note = event.message
            try:
                if event.kind == "move":
                    self._keep_turn(event.turn, frame)
                else:
                    self._keep_proposal(event.proposal, frame)
            except (EruditError, OSError, sqlite3.Error) as exc:  # a full disk, say
                log.error("camera watcher of game %s: the move is not stored: %s",
                          self.token[:6], exc)
                self.note = (exc.message or str(exc)) if isinstance(exc, EruditError) \
                    else Message("disk_full")
                self._sync(force=True, retake=True)   # read again once the board is still
        elif event.kind == "paused":
            self._pause(event.message)
        else:           # resumed, note
            self.note = event.message
            if event.kind == "resumed":
                self.state = "watching"

    # -- what is stored -------------------------------------------------------------------
    def _keep_turn(self, turn, frame) -> None:
        """The move stored as the next turn, its frame as its photo."""
        name = f"{turn.number}-{secrets.token_hex(6)}.jpg"

        def write(conn, record, kept: bool) -> None:
            store.add_turn(conn, record, "play", str(turn.board), turn.sure, turn.alternatives,
                           name if kept else None)

        self._keep(turn.number, name, frame, write)

    def _keep_proposal(self, proposal, frame) -> None:
        """The doubtful move stored as the game's proposal, as a photo's is."""
        from .views.play import stored_message

        pid, board = secrets.token_hex(6), str(proposal.board)
        number = len(self.taker.game.turns) + 1
        pending = store.Pending(pid, number, board, board, bool(proposal.sure),
                                list(proposal.alternatives), stored_message(proposal.message),
                                f"pending-{pid}.jpg", stored_message(proposal.blocked))
        self._keep(number, pending.photo, frame,
                   lambda conn, record, kept: store.save_pending(conn, record, pending))

    def _keep(self, number: int, name: str, frame, write) -> None:
        """A move read as turn `number` stored by `write(conn, record, pictures kept)`, its
        pictures under `name`; when the game moved on meanwhile (a photo's proposal, a pass),
        the board is looked at anew instead."""
        with self.app.app_context():
            record = store.find(db.get_db(), self.token)
            kept = self._pictures(record, name, frame)
            try:
                with db.write() as conn:
                    fresh = store.find(conn, self.token)
                    if fresh.next_turn != number or fresh.pending or fresh.ended:
                        raise store.Stale("the game moved on while the move was read")
                    write(conn, fresh, bool(kept))
                self._place(record, kept)
            except store.Stale:
                self._sync(force=True, retake=True)
                return
            finally:
                _unlink(kept)
        self.hub.publish(self.token)

    def _pictures(self, record, name: str, frame) -> dict[str, Path]:
        """The frame, the straightened board and its thumbnail written under temporary
        names (placed once the database has the move); none when the game's or the disk's
        room for photos is used up: the move counts more than its picture."""
        folder = uploads.game_folder(self._data_dir(), record.id)
        try:
            uploads.check_room(self._data_dir(), store.photo_count(db.get_db(), record),
                               self.app.config)
        except uploads.DiskFull:
            return {}
        ok, photo = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, STORED_QUALITY])
        board = self.taker.straightened
        if not ok or not board:
            return {}
        files = uploads.names(name)
        kept = {}
        try:
            for kind, data in (("photo", photo.tobytes()), ("board", board),
                               ("thumb", uploads.thumbnail(board))):
                kept[files[kind]] = uploads.write_temp(folder, data, "jpg")
        except BaseException:
            _unlink(kept)
            raise
        return kept

    def _place(self, record, kept: dict[str, Path]) -> None:
        folder = uploads.game_folder(self._data_dir(), record.id)
        for name, temp in kept.items():
            temp.replace(folder / name)

    # -- the state the pages show ---------------------------------------------------------
    def _said(self) -> tuple:
        return self.state, _code(self.note), str(self.note), self.taker.reads

    def _tell(self, before: tuple) -> None:
        if self._said() != before:
            self.hub.publish_live(self.token)

    def status(self, translate: Callable[[str], str], cameras: list[str]) -> dict:
        """LIVE: the watcher's state as the pages show it, its note in their language."""
        note = self.note
        if isinstance(note, Message):
            note = note.render(translate)
        elif note is not None:
            note = translate(str(note))
        return {"source": self.source, "camera": self.camera, "state": self.state,
                "note": note or None, "read": self.taker.reads, "cameras": cameras,
                "frames_at": None if self.arrived is None
                else round(max(0.0, time.monotonic() - self.arrived), 1)}

    # -- its threads ----------------------------------------------------------------------
    def begin(self, threaded: bool, camera_source: str | None = None) -> None:
        """Start looking: in a thread of its own (`threaded`), fed by a server camera's
        thread when `camera_source` is given."""
        self._started = time.monotonic()
        if camera_source is not None:
            self._spawn(self._read_camera, camera_source)
        if threaded or camera_source is not None:
            self._spawn(self._run)

    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True,
                                  name=f"erudit-live-{self.token[:6]}")
        self._threads.append(thread)
        thread.start()

    def _run(self) -> None:
        _yield_cpu()
        while not self.stopped.is_set():
            item = self.slot.take(timeout=0.5)
            try:
                if item is not None:
                    self.look(*item)
                else:
                    self.tick(time.monotonic())
            except Exception:  # a bug: logged, and the watcher goes on with the next frame
                log.exception("camera watcher of game %s", self.token[:6])

    def _read_camera(self, source: str) -> None:
        """Frames of a server camera into the slot; opened again when lost. A video file
        is read whole, at the watcher's pace, its frames timed by the video."""
        _yield_cpu()
        video, pause = Path(source).is_file(), RECONNECT_S
        while not self.stopped.is_set():
            capture = cv2.VideoCapture(int(source) if source.isdigit() else source)
            try:
                if capture.isOpened() and self._read_frames(capture, video):
                    pause = RECONNECT_S
            finally:
                capture.release()
            if video or self.stopped.is_set():
                return
            self.slot.put(None, time.monotonic())
            self.stopped.wait(pause)
            pause = min(2 * pause, RECONNECT_MAX_S)   # a camera unplugged: tried less often

    def _read_frames(self, capture, video: bool) -> bool:
        """Frames until the camera stops giving them; whether it gave any."""
        fps = capture.get(cv2.CAP_PROP_FPS) if video else 0.0
        fps = fps if fps and 0 < fps < 1000 else 25.0
        index = 0
        while not self.stopped.is_set():
            ok, frame = capture.read()
            if not ok or frame is None:
                break
            self.slot.put(frame, index / fps if video else time.monotonic(), wait=video)
            index += 1
        return index > 0

    def stop(self) -> None:
        """Stop looking; the threads end (a camera blocked in a read ends with its read)."""
        if self.stopped.is_set():
            return
        self.stopped.set()
        self.slot.close()
        current = threading.current_thread()
        for thread in self._threads:
            if thread is not current:
                thread.join(STOP_WAIT_S)
        self.on_end(self)

    @property
    def alive(self) -> bool:
        return not self.stopped.is_set()


SILENCES = ("camera_silent", "camera_offline")


def _yield_cpu() -> None:
    """This thread (and the threads it starts later: the tile reader's) gives way to the
    threads answering the pages: a read of the board takes a core for a moment, a page a few
    milliseconds. Not Linux, or not allowed: the same priority."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WATCHER_NICE)


def _code(note) -> str | None:
    return note.code if isinstance(note, Message) else None


def _unlink(kept: dict[str, Path]) -> None:
    for temp in kept.values():
        temp.unlink(missing_ok=True)


def _game_key(game) -> tuple:
    """What a watcher's game is built from: each turn's kind and board, and its end."""
    turns = [("exchange" if t.exchange else "pass") if t.kind == "pass" else str(t.board)
             for t in game.turns]
    return turns, game.ended


def _record_key(record: store.Record) -> tuple:
    return [t.kind if t.kind != "play" else t.board for t in record.turns], record.ended


class Watchers:
    """Every watcher of the server's games; at most LIVE_GAMES at once."""

    def __init__(self, app: Flask, hub: Hub):
        self.app, self.hub = app, hub
        self._lock = threading.Lock()
        self._games: dict[str, Watcher] = {}
        self._frames: dict[str, deque] = {}
        hub.describe_live = self.status

    @property
    def cameras(self) -> list[str]:
        return list(self.app.config.get("CAMERAS") or [])

    def get(self, token: str) -> Watcher | None:
        with self._lock:
            return self._games.get(token)

    def start(self, token: str, source: str, camera: int | None = None) -> Watcher:
        """The game's watcher from `source` ("browser", or "camera" and its index): the one
        watching already, or a new one in place of another source's; Busy when LIVE_GAMES
        games are watched already."""
        from .reading import Busy

        with self._lock:   # two frames at once make one watcher
            current = self._games.get(token)
            if current is not None and (current.source, current.camera) == (source, camera):
                return current
            most = self.app.config["LIVE_GAMES"]
            if current is None and len(self._games) >= most:
                raise Busy(code="live_games_busy", limit=most)
            watcher = Watcher(self.app, self.hub, token, source, camera, on_end=self._ended)
            self._games[token] = watcher
        if current is not None:
            current.stop()
        threaded = not self.app.config.get("LIVE_INLINE")
        watcher.begin(threaded, self.cameras[camera] if source == "camera" else None)
        self.hub.publish_live(token)
        return watcher

    def _ended(self, watcher: Watcher) -> None:
        with self._lock:
            if self._games.get(watcher.token) is watcher:
                del self._games[watcher.token]
                self._frames.pop(watcher.token, None)
        self.hub.publish_live(watcher.token)

    def stop(self, token: str) -> None:
        watcher = self.get(token)
        if watcher is not None:
            watcher.stop()

    def stop_all(self) -> None:
        with self._lock:
            every = list(self._games.values())
        for watcher in every:
            watcher.stop()

    def count_frame(self, token: str, now: float) -> None:
        """TooMany when the game's frames in the last second exceed FRAMES_PER_SECOND."""
        from .answer import TooMany

        most = self.app.config["FRAMES_PER_SECOND"]
        with self._lock:
            times = self._frames.setdefault(token, deque())
            while times and now - times[0] >= 1.0:
                times.popleft()
            if len(times) >= most:
                raise TooMany(code="frames_too_many", limit=most)
            times.append(now)

    def status(self, token: str, translate: Callable[[str], str]) -> dict:
        """LIVE of the game under `token` (state "off" when no camera watches it)."""
        names = [translate("Camera {n}").format(n=n) for n in range(1, len(self.cameras) + 1)]
        watcher = self.get(token)
        if watcher is not None:
            return watcher.status(translate, names)
        return {"source": None, "camera": None, "state": "off", "note": None, "read": 0,
                "cameras": names, "frames_at": None}


def init_app(app: Flask) -> None:
    app.extensions["erudit.live"] = Watchers(app, app.extensions["erudit.events"])


def watchers(app: Flask) -> Watchers:
    return app.extensions["erudit.live"]


def decode_frame(data: bytes) -> np.ndarray:
    """A page's camera frame: a JPEG checked by its header (size, sent whole) before it is
    decoded; one clear error otherwise."""
    from engine.errors import PhotoError

    from .answer import BadInput

    if len(data) > FRAME_BYTES:
        raise too_large()
    try:
        ext = uploads.check_header(data)
    except uploads.PhotoTooLarge:
        raise too_large() from None
    except PhotoError:
        raise BadInput(code="frame_not_jpeg") from None
    if ext != "jpg":
        raise BadInput(code="frame_not_jpeg")
    _, width, height = uploads.image_size(data)
    if width * height > FRAME_PIXELS:
        raise too_large()
    if max(width, height) < FRAME_SIDE:
        raise BadInput(code="frame_too_small", width=width, height=height, side=FRAME_SIDE)
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise BadInput(code="frame_damaged")
    return image


def too_large() -> EruditError:
    return uploads.PhotoTooLarge(code="frame_too_large", mb=FRAME_BYTES // (1024 * 1024),
                                 mp=FRAME_PIXELS // 1_000_000)
