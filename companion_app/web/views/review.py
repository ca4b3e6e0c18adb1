"""Looking back: a turn's score explained letter by letter, a word against the dictionary,
the game as a GCG record, and the photos of each turn."""

from __future__ import annotations

from flask import Blueprint, Response, abort, jsonify, render_template, request, send_from_directory

from engine import report
from engine.board import cell_name
from engine.gcg import write_record
from engine.ruleset import SIZE
from engine.words import check_word

from .. import uploads
from ..answer import BadInput, wants_json
from ..game_page import data_dir, load
from ..state import grid

bp = Blueprint("review", __name__)

PHOTO_CACHE_S = 7 * 24 * 3600  # a versioned photo address never shows another picture
MAX_WORD = SIZE  # no word on the board is longer


@bp.get("/g/<token>/turn/<int:number>")
def turn(token: str, number: int):
    record, game = load(token)
    if not 1 <= number <= len(game.turns):
        raise BadInput(f"no turn {number} (the game has {len(game.turns)} turns)")
    t = game.turns[number - 1]
    data = {"move": report.turn_dict(t), "breakdown": report.breakdown(t),
            "explanation": t.score.explanation, "player": game.players[t.player],
            "exchange": t.exchange,
            "verdicts": [{"word": v.word, "ok": v.ok, "reason": v.reason} for v in t.verdicts]}
    if wants_json():
        return jsonify(data)
    placed = {cell_name(r, c): n for (r, c), n in game.placed_turns().items()}
    cells = grid(t.board.rows(), game, [x["cell"] for x in data["move"]["tiles"]], placed)
    photo = record.turns[number - 1].photo
    return render_template("turn.html", token=token, d=data, cells=cells, number=number,
                           has_photo=bool(photo), rack=game.ruleset.rack,
                           last=len(game.turns))


@bp.get("/g/<token>/word")
def word(token: str):
    load(token)  # only players of a game may use its checker
    text = request.args.get("w", "").strip()
    if not text or len(text) > MAX_WORD:
        raise BadInput(f"give a word of 1–{MAX_WORD} letters")
    verdict = check_word(text)
    data = {"word": verdict.word, "ok": verdict.ok, "reason": verdict.reason}
    if wants_json():
        return jsonify(data)
    return render_template("word.html", token=token, v=data)


@bp.get("/g/<token>/game.gcg")
def gcg(token: str):
    _, game = load(token)
    return Response(write_record(game), mimetype="text/plain; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="erudit-{token[:8]}.gcg"'})


@bp.get("/g/<token>/img/<name>-<kind>.jpg")
def image(token: str, name: str, kind: str):
    """A turn's photo by turn number, or the pending proposal's by its id; names are looked up,
    never taken from the request."""
    record, _ = load(token)
    if kind not in ("photo", "board", "thumb"):
        abort(404)
    photo = _photo_of(record, name)
    version = request.args.get("v")
    if photo is None or version not in (None, photo.rsplit(".", 1)[0]):
        abort(404)  # a turn undone since: its photo is gone, whatever now has its number
    folder = uploads.photo_folder(data_dir(), record.id)
    response = send_from_directory(folder, uploads.names(photo)[kind])
    # a versioned address always shows the same picture; one without a version may change
    response.cache_control.private = True
    response.cache_control.public = False
    if version:
        response.cache_control.max_age = PHOTO_CACHE_S
    else:
        response.cache_control.no_cache = True
    if kind == "photo":
        response.mimetype = {"png": "image/png", "webp": "image/webp"}.get(
            photo.rsplit(".", 1)[1], "image/jpeg")
    return response


def _photo_of(record, name: str) -> str | None:
    if name.isdigit():
        number = int(name)
        if 1 <= number <= len(record.turns):
            return record.turns[number - 1].photo
        return None
    if record.pending and name == f"pending-{record.pending.pid}":
        return record.pending.photo
    return None
