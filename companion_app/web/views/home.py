"""The home page: nothing but "new game" (other games are never listed), and starting one."""

from __future__ import annotations

import re

from flask import Blueprint, jsonify, redirect, render_template, request, url_for

from engine.errors import GameError
from engine.game import Game
from engine.ruleset import load_ruleset, ruleset_names
from engine.words import MODES

from .. import db, store
from ..answer import BadInput, wants_json
from .play import data_dir, join_url

bp = Blueprint("home", __name__)

DEFAULT_TARGET = 200
MAX_NAME = 40
PROFILE_NAME = re.compile(r"^[\w-]{1,40}$")


@bp.get("/")
def index():
    rulesets = [(name, load_ruleset(name, data_dir()).title) for name in ruleset_names(data_dir())]
    return render_template("home.html", rulesets=rulesets, modes=MODES, target=DEFAULT_TARGET)


@bp.post("/games")
def create():
    form = request.form
    names = [n.strip()[:MAX_NAME] for n in form.getlist("player") if n.strip()]
    target = _target(form.get("target", ""))
    word_check = form.get("word_check", "warn")
    profile = form.get("profile", "").strip() or None
    name = form.get("ruleset", "erudit")
    # Only installed names reach the loader: a name is never a path from the request.
    if name not in ruleset_names(data_dir()):
        raise BadInput(f"unknown ruleset {name!r}")
    if profile is not None and not PROFILE_NAME.match(profile):
        raise BadInput("a profile name is letters, digits, '-' and '_' only")
    ruleset = store.ruleset_for(name, profile, data_dir())
    Game(ruleset, names, target=target, word_check=word_check)  # checks the settings
    if len(set(names)) != len(names):
        raise GameError("two players have the same name")
    with db.write() as conn:
        token = store.create(conn, name, names, target, word_check, profile)
    if wants_json():
        return jsonify({"token": token, "url": join_url(token)}), 201
    return redirect(url_for("play.page", token=token), code=303)


def _target(text: str) -> int | None:
    text = text.strip()
    if not text or text == "0":
        return None
    if not text.isdigit():
        raise BadInput(f"the target score must be a whole number, not {text!r}")
    return int(text)
