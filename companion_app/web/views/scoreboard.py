"""The scoreboard for a TV or a club wall: the board, the scores and the last move, large,
read-only, by a link of its own (which cannot change the game: it is not the game's link)."""

from __future__ import annotations

import base64
import hashlib
import hmac

from flask import Blueprint, current_app, render_template, url_for

from .. import db, events, store
from ..game_page import data_dir, join_url
from ..state import game_state, grid
from ..store import NotFound

bp = Blueprint("scoreboard", __name__)


def view_token(token: str) -> str:
    """The scoreboard's link part for a game: derived from the game's token with the server's
    key, so it names the game but does not reveal its token."""
    digest = hmac.new(current_app.config["SECRET_KEY"].encode(), b"scoreboard:" + token.encode(),
                      hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:16]).decode().rstrip("=")


def view_url(token: str) -> str:
    return url_for("scoreboard.page", view=view_token(token))


def _game_token(view: str) -> str:
    if not store.TOKEN_SHAPE.match(view or ""):
        raise NotFound("no such game")
    for (token,) in db.get_db().execute("SELECT token FROM games ORDER BY id DESC"):
        if hmac.compare_digest(view_token(token), view):
            return token
    raise NotFound("no such game")


@bp.get("/tv/<view>")
def page(view: str):
    token = _game_token(view)
    record = store.find(db.get_db(), token)
    game = store.build_game(record, data_dir())
    state = game_state(record, game, join_url(token))
    last = state["moves"][-1] if state["moves"] else None
    cells = grid(state["board"], game, [t["cell"] for t in last["tiles"]] if last else [],
                 state["placed"])
    return render_template("scoreboard.html", s=state, cells=cells, last=last,
                           values=game.ruleset.values, base=url_for("scoreboard.page", view=view),
                           events=url_for("scoreboard.events_of", view=view))


@bp.get("/tv/<view>/events")
def events_of(view: str):
    return events.stream(_game_token(view))


@bp.get("/tv/<view>/live.jpg")
def live_board(view: str):
    """The board the game's camera last read, straightened, as the game page shows it (404
    until there is one)."""
    from .live import board

    return board(_game_token(view))
