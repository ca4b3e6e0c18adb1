"""Server push: every open page of a game hears of each change within a moment, by
Server-Sent Events (`GET /g/<token>/events`, or a scoreboard's own link + `/events`).

A stream says `state` with the game's signature when it opens and whenever the game changes;
a page whose signature differs fetches itself anew. While a camera watches the game (live.py)
it also says `live` with the watcher's state (LIVE, as `GET /g/<token>/live` gives it) when it
opens and whenever that changes: a pause, a note, a new read of the board.

Each stream holds one server thread, so it ends after STREAM_SECONDS (the browser reconnects
by itself after `retry`), says a comment line every HEARTBEAT_SECONDS (so a phone gone away
is noticed), and ends at once when the server stops (`close_streams`). At most EVENT_STREAMS
(app config) stay open at once, fewer than the server's threads: beyond that a stream says the
state and ends, and the page asks again after BUSY_RETRY_MS — slower news, but the photos and
confirms always find a free thread.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

from flask import Flask, Response, current_app

from . import db, i18n, store

STREAM_SECONDS = 55
HEARTBEAT_SECONDS = 15
RETRY_MS = 500
BUSY_RETRY_MS = 3000
EVENT_STREAMS = 24      # with waitress, its `threads` must be well above this


class Hub:
    """Change counters per game (its state, and its camera's), and a condition the streams
    wait on. `describe_live(token, translate)` gives a game's LIVE, or None when no camera
    watches it (set by live.py)."""

    def __init__(self):
        self._changed = threading.Condition()
        self._counts: dict[str, int] = {}
        self._lives: dict[str, int] = {}
        self.closed = False
        self.open = 0               # streams open now
        self.describe_live: Callable[[str, Callable], dict | None] = lambda token, say: None

    def count(self, token: str) -> int:
        with self._changed:
            return self._counts.get(token, 0)

    def counts(self, token: str) -> tuple[int, int]:
        """How often the game and its camera's state changed."""
        with self._changed:
            return self._counts.get(token, 0), self._lives.get(token, 0)

    def publish(self, token: str) -> None:
        with self._changed:
            self._counts[token] = self._counts.get(token, 0) + 1
            self._changed.notify_all()

    def publish_live(self, token: str) -> None:
        with self._changed:
            self._lives[token] = self._lives.get(token, 0) + 1
            self._changed.notify_all()

    def wait(self, token: str, seen: tuple[int, int], timeout: float) -> tuple[int, int]:
        """The game's change counts once they differ from `seen`, or after `timeout` s."""
        def now():
            return self._counts.get(token, 0), self._lives.get(token, 0)

        with self._changed:
            self._changed.wait_for(lambda: self.closed or now() != seen, timeout)
            return now()

    def enter(self, most: int) -> bool:
        """Count a stream in, if fewer than `most` are open."""
        with self._changed:
            if self.open >= most:
                return False
            self.open += 1
            return True

    def leave(self) -> None:
        with self._changed:
            self.open -= 1

    def close(self) -> None:
        with self._changed:
            self.closed = True
            self._changed.notify_all()


def init_app(app: Flask) -> None:
    app.extensions["erudit.events"] = Hub()


def hub() -> Hub:
    return current_app.extensions["erudit.events"]


def publish(token: str) -> None:
    hub().publish(token)


def close_streams(app: Flask) -> None:
    """End every open stream now (the server is stopping)."""
    app.extensions["erudit.events"].close()


def signature(record: store.Record) -> str:
    """A short digest of everything a page shows of the game: equal digests, equal pages."""
    pending = record.pending
    seen = [record.next_turn, record.ended,
            [(t.kind, t.board, t.sure) for t in record.turns],
            pending and [pending.pid, pending.board, pending.sure]]
    return hashlib.sha1(json.dumps(seen, ensure_ascii=False).encode()).hexdigest()[:16]


def stream(token: str) -> Response:
    """The event stream of the game under `token` (its existence checked by the caller)."""
    path, events = db.database_path(), hub()
    most = current_app.config.get("EVENT_STREAMS", EVENT_STREAMS)
    translate = i18n.translator()   # the page's language, for the camera's notes

    def lines():
        if not events.enter(most):        # every thread spoken for: say the state, end
            yield f"retry: {BUSY_RETRY_MS}\n\n"
            yield _event(_signature_at(path, token))
            return
        try:
            yield f"retry: {RETRY_MS}\n\n"
            yield from _changes(path, token, events, translate)
        finally:
            events.leave()

    return Response(lines(), mimetype="text/event-stream", headers={
        "Cache-Control": "no-store", "X-Accel-Buffering": "no"})


def _event(signature: str | None) -> str:
    return f"event: state\ndata: {json.dumps({'state': signature})}\n\n"


def _live_event(live: dict) -> str:
    return f"event: live\ndata: {json.dumps(live, ensure_ascii=False)}\n\n"


def _changes(path: Path, token: str, events: Hub, translate: Callable[[str], str]):
    """The game's state now and after each change, and its camera's while one watches,
    until the stream's time is up."""
    seen, last = events.counts(token), None
    ends = time.monotonic() + STREAM_SECONDS
    shown = _unwatched(events.describe_live(token, translate))  # said only once it changes
    while not events.closed:
        now = _signature_at(path, token)
        if now != last:
            yield _event(now)
            last = now
        live = events.describe_live(token, translate)
        if live is not None and _lasting(live) != shown:
            yield _live_event(live)
            shown = _lasting(live)
        left = ends - time.monotonic()
        if left <= 0:
            return
        counts = events.wait(token, seen, min(HEARTBEAT_SECONDS, left))
        if counts == seen:
            yield ": still here\n\n"
        seen = counts


def _lasting(live: dict) -> dict:
    """LIVE without what changes by itself with every frame (when the last one came)."""
    return {key: value for key, value in live.items() if key != "frames_at"}


def _unwatched(live: dict | None) -> dict | None:
    """What a stream takes as said when it opens: LIVE of a game no camera watches (so
    nothing is said of it), or None (so a watched game's LIVE is said at once)."""
    if live is None or live["state"] == "off":
        return live and _lasting(live)
    return None


def _signature_at(path: Path, token: str) -> str | None:
    """Read on a connection of its own: a stream outlives its request's."""
    conn = db.connect(path)
    try:
        return signature(store.find(conn, token))
    except store.NotFound:
        return None
    finally:
        conn.close()
