"""The home page: "new game" (other games are never listed, boxes are set up on /boxes), and
starting one."""

from __future__ import annotations

import re

from flask import Blueprint, current_app, jsonify, redirect, render_template, request, url_for

from engine.board import cut, shown
from engine.game import Game
from engine.ruleset import installed_rulesets, ruleset_names
from engine.words import MODES

from .. import db, store, uploads
from ..answer import BadInput, TooMany, wants_json
from ..game_page import data_dir, join_url

bp = Blueprint("home", __name__)

DEFAULT_TARGET = 200
MAX_NAME = 40
MAX_TARGET = 10_000  # far above any game's score; the database keeps 64-bit numbers


@bp.get("/")
def index():
    from calibration.profile import saved_profiles

    boxes = [box["name"] for box in saved_profiles(data_dir()) if "error" not in box]
    return render_template("home.html", rulesets=ruleset_choices(), modes=MODES,
                           target=DEFAULT_TARGET, boxes=boxes)


@bp.post("/games")
def create():
    form = request.form
    names = [n.strip()[:MAX_NAME] for n in form.getlist("player") if n.strip()]
    target = _target(form.get("target", ""))
    word_check = form.get("word_check", "warn")
    name = installed_ruleset(form.get("ruleset", "erudit"))
    profile = None
    if form.get("profile", "").strip():
        from calibration.build import box_name, check_name

        profile = box_name(form["profile"])
        check_name(profile)
    ruleset = store.ruleset_for(name, profile, data_dir())
    Game(ruleset, names, target=target, word_check=word_check)  # checks the settings
    uploads.check_free(data_dir(), current_app.config)
    with db.write() as conn:
        limit = current_app.config["GAMES_PER_HOUR"]
        if store.games_since(conn, 60) >= limit:
            raise TooMany(code="games_per_hour", limit=limit)
        token = store.create(conn, ruleset, name, names, target, word_check, profile)
    if wants_json():
        return jsonify({"token": token, "url": join_url(token)}), 201
    return redirect(url_for("play.page", token=token), code=303)


def ruleset_choices() -> list[tuple[str, str]]:
    """(name, title) of each installed ruleset that loads, for a form's select; a broken
    one is left out and said in one line in the server's log."""
    loaded, broken = installed_rulesets(data_dir())
    for problem in broken:
        current_app.logger.warning("erudit: %s", problem)
    return [(name, ruleset.title) for name, ruleset in loaded.items()]


def installed_ruleset(name: str) -> str:
    """`name` when it is an installed ruleset: a name from a request is never a path."""
    if name not in ruleset_names(data_dir()):
        raise BadInput(f"unknown ruleset {shown(name)}")
    return name


def _target(text: str) -> int | None:
    text = text.strip()
    if not text or text == "0":
        return None
    if not re.fullmatch(r"[0-9]{1,6}", text) or int(text) > MAX_TARGET:
        raise BadInput(code="target_score", limit=MAX_TARGET, sent=cut(text))
    return int(text)
