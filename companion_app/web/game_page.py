"""The game page and the game's state as JSON: what a request about a game answers with,
the views and the error pages alike."""

from __future__ import annotations

from pathlib import Path

import segno
from flask import current_app, jsonify, render_template, request, url_for

from engine.errors import RulesetError
from engine.ruleset import load_ruleset

from . import db, store
from .guard import csrf_token
from .state import game_state, grid


def data_dir() -> Path:
    return Path(current_app.config["DATA_DIR"])


def join_url(token: str) -> str:
    base = current_app.config.get("PUBLIC_URL") or request.host_url
    return base.rstrip("/") + url_for("play.page", token=token)


def load(token: str):
    record = store.find(db.get_db(), token)
    return record, store.build_game(record, data_dir())


def state_json(token: str):
    record, game = load(token)
    state = game_state(record, game, join_url(token))
    state["csrf"] = csrf_token()
    return jsonify(state)


def render_page(token: str, error: str | None = None, ask: dict | None = None) -> str:
    """The game page; `ask`: a correction waiting for the player's agreement (its form)."""
    record, game = load(token)
    state = game_state(record, game, join_url(token))
    pending = state["pending"]
    if pending:
        cells = grid(pending["board"], game, pending["new"], state["placed"])
    else:
        last = state["moves"][-1]["tiles"] if state["moves"] else []
        cells = grid(state["board"], game, [t["cell"] for t in last], state["placed"])
    qr = segno.make(state["join_url"], error="m").svg_inline(border=2, omitsize=True)
    from .views.scoreboard import view_url

    return render_template("game.html", s=state, cells=cells, error=error, qr=qr,
                           values=game.ruleset.values, box_cells=_box_cells(record, game),
                           tv_url=view_url(token), ask=ask)


def _box_cells(record, game) -> int:
    """How many squares of the game's box differ from its ruleset's layout (0 without a box)."""
    if not record.profile:
        return 0
    try:
        rules = load_ruleset(record.ruleset, data_dir()).layout.rows
    except RulesetError:  # the ruleset's file is gone or broken: the game keeps its own copy
        return 0
    return sum(mine != theirs for row, other in zip(game.ruleset.layout.rows, rules, strict=True)
               for mine, theirs in zip(row, other, strict=True))
