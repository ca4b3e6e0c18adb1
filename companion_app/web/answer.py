"""One way out for every request: the page (HTML) or the same data as JSON, errors included.

A client asks for JSON with `Accept: application/json`; a browser gets HTML. Errors the user can
cause become one clear line with a fitting status code, never a traceback.
"""

from __future__ import annotations

import errno
import re
import sqlite3
from pathlib import Path

from flask import current_app, jsonify, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from engine.board import cut
from engine.errors import BoardTextError, EruditError, GameError, MoveError, PhotoError

from .game_page import render_page, state_json
from .guard import Forbidden
from .i18n import translate_error
from .reading import Busy
from .store import NotFound, Stale
from .uploads import DiskFull, PhotoTooLarge


class BadInput(EruditError):
    """A form field missing or malformed."""


class Conflict(EruditError):
    """The request would overwrite something the user did not ask to replace."""


class TooMany(EruditError):
    """More of something in a while than a table ever needs (new games in an hour)."""


STATUS = [(NotFound, 404), (Forbidden, 403), (Stale, 409), (PhotoTooLarge, 413),
          (DiskFull, 507), (Busy, 503), (TooMany, 429),
          (PhotoError, 422), (MoveError, 422), (BoardTextError, 400), (BadInput, 400),
          (Conflict, 409), (GameError, 409), (EruditError, 400)]


def wants_json() -> bool:
    best = request.accept_mimetypes.best_match(["text/html", "application/json"])
    return best == "application/json"


def status_of(exc: EruditError) -> int:
    return next(code for kind, code in STATUS if isinstance(exc, kind))


def done(token: str, anchor: str = ""):
    """After a change: every open page of the game is told; the new state as JSON, or back to
    the game page (POST → redirect → GET)."""
    from .events import publish

    publish(token)
    if wants_json():
        return state_json(token)
    return redirect(url_for("play.page", token=token) + anchor, code=303)


# A path on the server ("/home/…/rulesets/x.json"): the network sees only its last part.
_SERVER_PATH = re.compile(r"(?<![\w.])(?:/[^\s/:'\"]+)+/([^\s/:'\"]+)")


def without_paths(message: str) -> str:
    """`message` with the server's folders left out: the data folder's files named from it
    (`rulesets/home.json`), any other path by its file name."""
    folder = str(current_app.config["DATA_DIR"]).rstrip("/") + "/"
    for prefix in {folder, str(Path(folder).resolve()) + "/"}:
        message = message.replace(prefix, "")
    return _SERVER_PATH.sub(r"\1", message)


def _params_without_paths(value):
    if isinstance(value, str):
        return without_paths(value)
    if isinstance(value, dict):
        return {key: _params_without_paths(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_params_without_paths(item) for item in value]
    return value


def error_response(error: EruditError | str, status: int, as_json: bool = False):
    """The error as JSON (its text in the page's language, and its code and parameters when
    it has them), or on the game page it concerns, or on a plain error page; never a server
    path. `as_json`: JSON whatever the request accepts (a camera's frames)."""
    text = without_paths(translate_error(error))
    if as_json or wants_json():
        body = {"error": text, "status": status}
        message = error.message if isinstance(error, EruditError) else None
        if message is not None:
            body.update(_params_without_paths(message.to_json()))
        return jsonify(body), status
    token = (request.view_args or {}).get("token")
    if token and status != 404:
        try:
            return render_page(token, error=text), status
        except EruditError:
            pass
    return render_template("error.html", message=text, status=status), status


def handle_erudit(exc: EruditError):
    return error_response(exc, status_of(exc))


def handle_http(exc: HTTPException):
    if exc.code == 413:
        megabytes = current_app.config["MAX_CONTENT_LENGTH"] / (1024 * 1024)
        limit = f"{megabytes:.0f}" if megabytes >= 1 else f"{megabytes:.1f}"
        return error_response(EruditError(code="upload_too_large", mb=limit), 413)
    return error_response(exc.description or exc.name, exc.code or 500)


def handle_unexpected(exc: Exception):
    """A bug, not the user's doing: logged with its traceback, answered with one line; a
    full disk is not a bug, and says so."""
    if _disk_full(exc):
        current_app.logger.error("disk full on %s %s: %s", request.method, request.path, exc)
        return error_response(EruditError(code="disk_full"), 507)
    current_app.logger.exception("unexpected error on %s %s", request.method, request.path)
    return error_response(f"internal error: {exc.__class__.__name__}: {exc}", 500)


def _disk_full(exc: Exception) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
    return isinstance(exc, sqlite3.OperationalError) and "full" in str(exc)


def form_int(name: str) -> int:
    value = request.form.get(name, "").strip()
    if not re.fullmatch(r"-?[0-9]{1,9}", value):   # int() would take '٣' and 5000 digits too
        raise BadInput(code="whole_number", field=name, sent=cut(value))
    return int(value)
