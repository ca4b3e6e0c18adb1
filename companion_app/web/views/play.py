"""Playing a game: the game page, a photo → proposed turn, confirm / correct / discard it,
pass or exchange, undo, end. Every change names the turn it expects (`turn`), so a second phone
acting on a stale page gets 409 instead of scoring a turn twice."""

from __future__ import annotations

import json
import secrets
from contextlib import contextmanager
from pathlib import Path

from flask import Blueprint, current_app, jsonify, request

from engine.board import Board, cell_name, parse_cell, shown
from engine.errors import GameError, Message

from .. import db, events, reading, store, uploads
from ..answer import BadInput, done, form_int, wants_json
from ..game_page import data_dir, load, render_page, state_json
from ..i18n import gettext, ngettext
from ..state import kept_note

bp = Blueprint("play", __name__)


@bp.get("/g/<token>/events")
def events_of(token: str):
    store.find(db.get_db(), token)
    return events.stream(token)


@bp.get("/g/<token>")
def page(token: str):
    if wants_json():
        return state_json(token)
    return render_page(token)


@bp.post("/g/<token>/photo")
def photo(token: str):
    """A photo of the board after the next turn → its proposed move, waiting for a confirm.
    The photo is decoded and read in a worker (reading.py); what is kept is the photo as
    decoded, re-encoded, never the bytes as sent."""
    record, game = load(token)
    expected = form_int("turn")
    store.expect_turn(record, expected)
    if game.finished:
        raise GameError("the game is over; no more turns")
    upload = request.files.get("photo")
    if upload is None:
        raise BadInput("no photo in the request (field 'photo')")
    data = upload.read()
    uploads.check_header(data)
    config = current_app.config
    uploads.check_room(data_dir(), store.photo_count(db.get_db(), record), config)
    hook = config.get("PROPOSE_TURN")   # a scripted reader (tests) reads the photo as kept
    sent = shown_name(upload.filename)
    kept = uploads.photo_folder(data_dir(), record.id)
    past = [str(kept / turn.photo) if turn.photo else None for turn in record.turns]
    result = reading.run_photo(config, (str(data_dir()), record.id), data, sent, game,
                               record.profile, str(data_dir()), propose=hook is None, past=past)
    del data
    folder = uploads.game_folder(data_dir(), record.id)
    temps = [uploads.write_temp(folder, result.photo_jpeg, "jpg")]
    try:
        proposal = result.proposal or hook(game, str(temps[0]), profile=record.profile,
                                           data=str(data_dir()))
        temps.append(uploads.write_temp(folder, proposal.rectified_jpeg, "jpg"))
        temps.append(uploads.write_temp(folder, uploads.thumbnail(proposal.rectified_jpeg), "jpg"))
        pid = secrets.token_hex(6)
        name = f"pending-{pid}.jpg"
        board = str(proposal.board)
        pending = store.Pending(pid, expected, board, board, bool(proposal.sure),
                                list(proposal.alternatives), stored_message(proposal.message),
                                name, stored_message(getattr(proposal, "blocked", None)))
        with db.write() as conn:
            fresh = store.find(conn, token)
            store.expect_turn(fresh, expected)
            store.save_pending(conn, fresh, pending)
        files = uploads.names(name)
        for temp, kind in zip(temps, ("photo", "board", "thumb"), strict=True):
            temp.replace(folder / files[kind])
        if fresh.pending:
            uploads.remove_all(folder, fresh.pending.photo)
    finally:
        for temp in temps:
            temp.unlink(missing_ok=True)
    return done(token, "#pending")


def shown_name(filename: str | None) -> str:
    """The name a photo was sent under, as errors name it (no folders, not too long)."""
    name = Path(filename or "photo").name or "photo"
    return name if len(name) <= 60 else name[:57] + "…"


def stored_message(message: Message | str | None) -> str | None:
    """A proposal's note as kept with it: by code and parameters (JSON), or its text."""
    if isinstance(message, Message):
        return json.dumps(message.to_json(), ensure_ascii=False)
    return message


@bp.post("/g/<token>/confirm")
def confirm(token: str):
    expected = form_int("turn")
    with _at_expected_turn(token) as (conn, record):
        pending = _pending(record)
        if pending.blocked:
            raise GameError(code="photo_blocked", reason=kept_note(pending.blocked))
        game = store.build_game(record, data_dir())
        board = Board.parse(pending.board, game.ruleset)
        if board == game.board:
            raise GameError(code="no_new_tiles")
        turn = game.play(board, sure=pending.sure, alternatives=pending.alternatives)
        # a name of its own (not the turn's number alone): a turn undone and played again
        # gets a new photo under a new address, which no phone has cached
        ext = pending.photo.rsplit(".", 1)[1]
        name = f"{expected}-{pending.pid}.{ext}"
        store.add_turn(conn, record, turn.kind, str(turn.board) if turn.kind == "play" else None,
                       pending.sure, pending.alternatives, name)
    uploads.rename_all(uploads.game_folder(data_dir(), record.id), pending.photo, name)
    return done(token)


@bp.post("/g/<token>/alternative")
def alternative(token: str):
    """Take one of the other readings the photo allowed instead of the proposed one."""
    index = form_int("index")
    with _at_expected_turn(token) as (conn, record):
        pending = _pending(record)
        if not 0 <= index < len(pending.alternatives):
            raise BadInput(f"no reading {index} (the photo has {len(pending.alternatives)})")
        board = store.build_game(record, data_dir()).board.copy()
        for tile in pending.alternatives[index]["tiles"]:
            board.set(*parse_cell(tile["cell"]), tile["letter"])
        pending.board = str(board)
        pending.sure = True             # the players chose it
        store.save_pending(conn, record, pending)
    return done(token, "#pending")


@bp.post("/g/<token>/discard")
def discard(token: str):
    with db.write() as conn:
        record = store.find(conn, token)
        store.drop_pending(conn, record)
    if record.pending:
        uploads.remove_all(uploads.game_folder(data_dir(), record.id), record.pending.photo)
    return done(token)


@bp.post("/g/<token>/cell")
def cell(token: str):
    """Correct one cell: the pending board, or a confirmed tile through the engine's fix, which
    re-scores every later turn and so is only done once the player has agreed (`agree=1`) to
    the changes the answer lists; `symbol` lower case declares a star's letter. A move put
    right by hand is no longer unsure."""
    expected = form_int("turn")
    name, symbol = request.form.get("cell", ""), request.form.get("symbol", "").strip()
    row, col = parse_cell(name)
    with db.write() as conn:
        record = store.find(conn, token)
        store.expect_turn(record, expected)
        game = store.build_game(record, data_dir())
        symbol = _checked_symbol(symbol, game.ruleset.alphabet)
        placed = game.placed_turns().get((row, col))
        if placed is not None:
            before = _scores(game)
            _fix_confirmed(conn, record, game, placed, (row, col), symbol)
            changes = _changes(before, _scores(game), game)
            if changes and request.form.get("agree") != "1":
                raise AskFirst(placed, cell_name(row, col), changes)   # rolls the fix back
            store.set_sure(conn, record, placed)
        elif record.pending is not None:
            _edit_pending(conn, record, (row, col), symbol)
        else:
            raise GameError(code="no_tile_no_photo", cell=name.upper())
    return done(token, "#board")


class AskFirst(Exception):
    """A correction of a confirmed turn that changes scores, not yet agreed to."""

    def __init__(self, number: int, cell: str, changes: list[str]):
        super().__init__(cell)
        self.number, self.cell, self.changes = number, cell, changes


@bp.errorhandler(AskFirst)
def ask_first(asked: AskFirst):
    """409 with the question: what the correction will change; the same request with agree=1
    makes it."""
    question = gettext("Correct {cell} of turn {n}? This changes:", cell=asked.cell,
                       n=asked.number)
    if wants_json():
        return jsonify({"ask": question, "changes": asked.changes, "status": 409}), 409
    token = request.view_args["token"]
    fields = {name: request.form.get(name, "") for name in ("turn", "cell", "symbol")}
    return render_page(token, ask={"question": question, "changes": asked.changes,
                                   "fields": fields}), 409


def _scores(game) -> dict:
    """What a correction can change: each turn's words and score, and the totals."""
    return {"turns": [(t.number, t.player, [(w.word, w.score) for w in t.score.words],
                       t.score.total) for t in game.turns], "totals": list(game.totals)}


def _changes(before: dict, after: dict, game) -> list[str]:
    """The changes a correction makes, as lines for the player to agree to."""
    lines = []
    for old, new in zip(before["turns"], after["turns"], strict=True):
        if old != new:
            number, player, words, score = new
            lines.append(gettext("Turn {n} ({name}): {before} → {after}", n=number,
                                 name=game.players[player],
                                 before=_words_line(old[2], old[3]),
                                 after=_words_line(words, score)))
    if before["totals"] != after["totals"]:
        lines.append(gettext("Score: {scores}", scores=", ".join(
            f"{name} {old} → {new}" for name, old, new in
            zip(game.players, before["totals"], after["totals"], strict=True) if old != new)))
    return lines


def _words_line(words: list[tuple[str, int]], score: int) -> str:
    text = ", ".join(word.upper() for word, _ in words)
    return f"{text} ({ngettext('{n} point', '{n} points', score)})"


def _checked_symbol(symbol: str, alphabet) -> str:
    if symbol in (".", "*") or (len(symbol) == 1 and symbol.upper() in alphabet):
        return symbol
    raise BadInput(f"{shown(symbol)} is not a letter of this box "
                   "(nor '*' for a star, '.' for empty)")


def _fix_confirmed(conn, record, game, number: int, rc: tuple[int, int], symbol: str) -> None:
    if symbol == ".":
        raise GameError(code="placed_by_turn", number=number)
    old = game.board[rc]
    game.fix(number, cell_name(*rc), symbol)
    store.save_boards(conn, record, game)
    if record.pending is not None:
        board = Board.parse(record.pending.board)
        if board[rc] == old:
            board.set(*rc, symbol)
            record.pending.board = str(board)
            store.save_pending(conn, record, record.pending)


def _edit_pending(conn, record, rc: tuple[int, int], symbol: str) -> None:
    board = Board.parse(record.pending.board)
    board.set(*rc, symbol)
    record.pending.board = str(board)
    record.pending.sure = True          # a person has looked at it and put it right
    store.save_pending(conn, record, record.pending)


@bp.post("/g/<token>/pass")
def pass_turn(token: str):
    exchange = request.form.get("exchange") in ("1", "on", "true")
    with _at_expected_turn(token) as (conn, record):
        game = store.build_game(record, data_dir())
        game.pass_turn(exchange=exchange)
        store.add_turn(conn, record, "exchange" if exchange else "pass")
    _drop_pending_files(record)
    return done(token)


@contextmanager
def _at_expected_turn(token: str):
    """A write to the game that goes ahead only if it is still at the turn the phone saw."""
    expected = form_int("turn")
    with db.write() as conn:
        record = store.find(conn, token)
        store.expect_turn(record, expected)
        yield conn, record


def _pending(record):
    """The proposal the phone is looking at (the form names it), or Stale."""
    pending = record.pending
    if pending is None or pending.pid != request.form.get("pending", ""):
        raise store.Stale("this photo's proposal was replaced or discarded; reload the page")
    return pending


@bp.post("/g/<token>/undo")
def undo(token: str):
    """Take back the last turn; `turn` is the number of the turn being taken back + 1."""
    with _at_expected_turn(token) as (conn, record):
        if not record.turns:
            raise GameError("nothing to undo: no turn has been played")
        store.drop_last_turn(conn, record)
    folder = uploads.game_folder(data_dir(), record.id)
    uploads.remove_all(folder, record.turns[-1].photo)
    _drop_pending_files(record)
    return done(token)


@bp.post("/g/<token>/end")
def end(token: str):
    with _at_expected_turn(token) as (conn, record):
        store.set_ended(conn, record)
    _drop_pending_files(record)
    return done(token)


def _drop_pending_files(record) -> None:
    if record.pending:
        uploads.remove_all(uploads.game_folder(data_dir(), record.id), record.pending.photo)
