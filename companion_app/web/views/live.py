"""A camera watching the game: a page's camera frames in, a server camera started or
stopped, the watcher's state and the board it last read (see ..live)."""

from __future__ import annotations

import time

from flask import Blueprint, Response, abort, current_app, jsonify, request

from engine.errors import EruditError, GameError

from .. import db, live, store
from ..answer import BadInput, Conflict, done, error_response, form_int, status_of
from ..guard import csrf_token
from ..i18n import translator

bp = Blueprint("live", __name__)
JSON_ONLY = ("live.frame", "live.status")   # what a page's script asks, never a page


@bp.errorhandler(EruditError)
def refused(exc: EruditError):
    """A frame refused: one line of JSON (a page sends a few a second, and wants no page)."""
    return error_response(exc, status_of(exc), as_json=request.endpoint in JSON_ONLY)


@bp.post("/g/<token>/frame")
def frame(token: str):
    """One JPEG frame of the page's camera (the request's body): the browser becomes the
    game's source, unless a server camera watches it."""
    record = store.find(db.get_db(), token)
    watchers = live.watchers(current_app)
    watcher = watchers.get(token)
    if watcher is not None and watcher.source == "camera":
        raise Conflict(code="camera_watching", number=watcher.camera + 1)
    if record.ended or (watcher is not None and watcher.taker.game.finished):
        raise GameError("the game is over; no more turns")
    if (request.content_length or 0) > live.FRAME_BYTES:
        raise live.too_large()
    watchers.count_frame(token, time.monotonic())
    image = live.decode_frame(request.get_data(cache=False))
    watcher = watchers.start(token, "browser")
    if not watcher.takes_from(csrf_token(), time.monotonic()):
        raise Conflict(code="another_page_camera")
    watcher.offer(image, _frame_time())
    return jsonify({"live": watchers.status(token, translator())})


def _frame_time() -> float:
    """When the frame was taken: now, or (tests only) the time the request names (`t`)."""
    sent = request.args.get("t")
    if sent is None or not current_app.testing:
        return time.monotonic()
    try:
        return float(sent)
    except ValueError:
        raise BadInput(code="whole_number", field="t", sent=sent) from None


@bp.post("/g/<token>/camera")
def camera(token: str):
    """`source`: the index of one of the server's cameras to watch the game with; `stop=1`:
    stop whatever watches it."""
    record = store.find(db.get_db(), token)
    watchers = live.watchers(current_app)
    if request.form.get("stop") in ("1", "on", "true"):
        watchers.stop(token)
        return done(token)
    index = form_int("source")
    if not 0 <= index < len(watchers.cameras):
        raise BadInput(code="no_such_camera", sent=index, count=len(watchers.cameras))
    if record.ended:
        raise GameError("the game is over; no more turns")
    watchers.start(token, "camera", index)
    return done(token)


@bp.get("/g/<token>/live")
def status(token: str):
    store.find(db.get_db(), token)
    return jsonify(live.watchers(current_app).status(token, translator()))


@bp.get("/g/<token>/live.jpg")
def board(token: str):
    """The board last read, straightened; 404 until there is one."""
    store.find(db.get_db(), token)
    watcher = live.watchers(current_app).get(token)
    picture = watcher.taker.straightened if watcher is not None else b""
    if not picture:
        abort(404)
    return Response(picture, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})
