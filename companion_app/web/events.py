"""Server push: every open page of a game hears of each change within a moment, by
Server-Sent Events (`GET /g/<token>/events`, or a scoreboard's own link + `/events`).

A stream says `state` with the game's signature when it opens and whenever the game changes;
a page whose signature differs fetches itself anew. Each stream holds one server thread, so it
ends after STREAM_SECONDS (the browser reconnects by itself after `retry`), says a comment line
every HEARTBEAT_SECONDS (so a phone gone away is noticed), and ends at once when the server
stops (`close_streams`). At most EVENT_STREAMS (app config) stay open at once, fewer than the
server's threads: beyond that a stream says the state and ends, and the page asks again after
BUSY_RETRY_MS — slower news, but the photos and confirms always find a free thread.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path

from flask import Flask, Response, current_app

from . import db, store

STREAM_SECONDS = 55
HEARTBEAT_SECONDS = 15
RETRY_MS = 500
BUSY_RETRY_MS = 3000
EVENT_STREAMS = 24      # with waitress, its `threads` must be well above this


class Hub:
    """Change counters per game, and a condition the streams wait on."""

    def __init__(self):
        self._changed = threading.Condition()
        self._counts: dict[str, int] = {}
        self.closed = False
        self.open = 0               # streams open now

    def count(self, token: str) -> int:
        with self._changed:
            return self._counts.get(token, 0)

    def publish(self, token: str) -> None:
        with self._changed:
            self._counts[token] = self._counts.get(token, 0) + 1
            self._changed.notify_all()

    def wait(self, token: str, seen: int, timeout: float) -> int:
        """The game's change count once it differs from `seen`, or after `timeout` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self.closed or self._counts.get(token, 0) != seen,
                                   timeout)
            return self._counts.get(token, 0)

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

    def lines():
        if not events.enter(most):        # every thread spoken for: say the state, end
            yield f"retry: {BUSY_RETRY_MS}\n\n"
            yield _event(_signature_at(path, token))
            return
        try:
            yield f"retry: {RETRY_MS}\n\n"
            yield from _changes(path, token, events)
        finally:
            events.leave()

    return Response(lines(), mimetype="text/event-stream", headers={
        "Cache-Control": "no-store", "X-Accel-Buffering": "no"})


def _event(signature: str | None) -> str:
    return f"event: state\ndata: {json.dumps({'state': signature})}\n\n"


def _changes(path: Path, token: str, events: Hub):
    """The game's state now and after each change, until the stream's time is up."""
    seen, last = events.count(token), None
    ends = time.monotonic() + STREAM_SECONDS
    while not events.closed:
        now = _signature_at(path, token)
        if now != last:
            yield _event(now)
            last = now
        left = ends - time.monotonic()
        if left <= 0:
            return
        count = events.wait(token, seen, min(HEARTBEAT_SECONDS, left))
        if count == seen:
            yield ": still here\n\n"
        seen = count


def _signature_at(path: Path, token: str) -> str | None:
    """Read on a connection of its own: a stream outlives its request's."""
    conn = db.connect(path)
    try:
        return signature(store.find(conn, token))
    except store.NotFound:
        return None
    finally:
        conn.close()
