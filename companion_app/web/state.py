"""A game as plain data for the page and the JSON API alike (the page renders this same dict)."""

from __future__ import annotations

import json

from flask import url_for

from companion_app.photos import RECTIFIED_MARGIN
from engine import report
from engine.board import Board, cell_name, is_star, parse_cell
from engine.errors import EruditError, Message
from engine.game import Game, Turn
from engine.ruleset import SIZE

from .events import signature
from .i18n import translate_error
from .store import Pending, Record


def game_state(record: Record, game: Game, join_url: str) -> dict:
    """Everything a phone at the table needs: scoreboard, board, history, pending proposal."""
    token = record.token
    photos = {t.number: t.photo for t in record.turns}
    return {
        "token": token,
        "join_url": join_url,
        "ruleset": game.ruleset.name,
        "title": game.ruleset.title,
        "players": game.players,
        "target": game.target,
        "word_check": game.word_check,
        "profile": record.profile,
        "next_turn": record.next_turn,
        "to_move": None if game.finished else game.to_move,
        "totals": game.totals,
        "finished": game.finished,
        "ended": game.ended,
        "winner": game.winner,
        "board": game.board.rows(),
        "placed": {cell_name(r, c): n for (r, c), n in game.placed_turns().items()},
        "moves": [move_state(token, t, photos.get(t.number)) for t in game.turns],
        "unseen": sorted(game.unseen().items(), key=lambda kv: _order(game, kv[0])),
        "unseen_total": sum(game.unseen().values()),
        "pending": pending_state(token, record.pending, game),
        "alphabet": list(game.ruleset.alphabet),
        "signature": signature(record),
    }


def _order(game: Game, symbol: str) -> int:
    alphabet = game.ruleset.alphabet
    return alphabet.index(symbol) if symbol in alphabet else len(alphabet)


def move_state(token: str, turn: Turn, photo: str | None) -> dict:
    move = report.turn_dict(turn)
    move["exchange"] = turn.exchange
    move["verdicts"] = [{"word": v.word, "ok": v.ok, "reason": v.reason} for v in turn.verdicts]
    move["photo"] = _image_urls(token, str(turn.number), photo) if photo else None
    return move


def _image_urls(token: str, name: str, photo: str) -> dict:
    """The addresses of a photo's pictures, each naming the stored file's version (`v`)."""
    version = photo.rsplit(".", 1)[0]
    return {kind: url_for("review.image", token=token, name=name, kind=kind, v=version)
            for kind in ("photo", "board", "thumb")}


def pending_state(token: str, pending: Pending | None, game: Game) -> dict | None:
    """The proposal as it would score if confirmed now (corrections included), or its error."""
    if pending is None:
        return None
    turn, error = preview(game, Board.parse(pending.board))
    error = translate_error(error) if error is not None else None
    if turn is not None:
        new = [p["cell"] for p in report.turn_dict(turn)["tiles"]]
        move, words = report.turn_dict(turn), report.breakdown(turn)
        verdicts = [{"word": v.word, "ok": v.ok, "reason": v.reason} for v in turn.verdicts]
    else:
        new, move, words, verdicts = changed_cells(game.board, pending.board), None, [], []
    stars = [c for c in new if _is_unknown_star(pending.board, c)]
    return {
        "id": pending.pid, "turn": pending.number, "board": pending.board.split("\n"),
        "proposed": pending.proposed.split("\n"), "new": new, "sure": pending.sure,
        "alternatives": pending.alternatives,
        # the reader's note is about its reading: gone once the players put the move right
        "message": note(pending.message) if pending.board == pending.proposed else None,
        "corrected": pending.board != pending.proposed,
        "blocked": note(pending.blocked),
        "move": move, "breakdown": words, "verdicts": verdicts, "error": error,
        "photo": _image_urls(token, "pending-" + pending.pid, pending.photo),
        "stars": stars,
        "doubtful": doubtful_cells(game.board, pending, new, stars),
        "readings": [reading(game, index, alternative)
                     for index, alternative in enumerate(pending.alternatives)
                     if str(_with_tiles(game.board, alternative["tiles"])) != pending.board],
        "window": window(new),
        "marks": photo_marks(new),
    }


def doubtful_cells(before: Board, pending: Pending, new: list[str], stars: list[str]) -> list[str]:
    """The cells a player should look at: where another reading the photo allows differs from
    the proposed one (every new tile when the reader gave none), and stars of unknown letter.
    None once the player has put the move right by hand."""
    if pending.sure:
        return stars
    proposed = Board.parse(pending.proposed)
    cells = set()
    for alternative in pending.alternatives:
        board = _with_tiles(before, alternative["tiles"])
        cells |= {cell_name(r, c) for r, c, *_ in board.changes(proposed)}
    if not cells:
        cells = set(new)
    return sorted(cells | set(stars), key=parse_cell)


def reading(game: Game, index: int, alternative: dict) -> dict:
    """Another reading of the photo as the players judge it: its words and their scores."""
    turn, error = preview(game, _with_tiles(game.board, alternative["tiles"]))
    words = report.turn_dict(turn)["words"] if turn is not None else []
    return {"index": index, "words": words, "score": turn.score.total if turn else None,
            "cells": [t["cell"] for t in alternative["tiles"]], "legal": turn is not None}


def _with_tiles(before: Board, tiles: list[dict]) -> Board:
    board = before.copy()
    for tile in tiles:
        board.set(*parse_cell(tile["cell"]), tile["letter"])
    return board


def window(cells: list[str], margin: int = 1) -> dict | None:
    """The rows and columns around `cells` that the close-up correction view shows."""
    if not cells:
        return None
    places = [parse_cell(c) for c in cells]
    rows, cols = [r for r, _ in places], [c for _, c in places]
    return {"rows": [max(0, min(rows) - margin), min(SIZE - 1, max(rows) + margin)],
            "cols": [max(0, min(cols) - margin), min(SIZE - 1, max(cols) + margin)]}


def photo_marks(cells: list[str]) -> list[dict]:
    """Where the new tiles are on the rectified picture, in percent of its side."""
    side = SIZE + 2 * RECTIFIED_MARGIN
    marks = []
    for name in cells:
        row, col = parse_cell(name)
        marks.append({"cell": name, "left": round((RECTIFIED_MARGIN + col) / side * 100, 3),
                      "top": round((RECTIFIED_MARGIN + row) / side * 100, 3),
                      "size": round(100 / side, 3)})
    return marks


def kept_note(stored: str | None) -> Message | str | None:
    """A proposal's note as it was kept: a Message (by code and parameters) or a text."""
    if not stored:
        return None
    if stored.startswith("{"):
        return Message.from_json(json.loads(stored))
    return stored


def note(stored: str | None) -> str | None:
    """A proposal's note (kept by code and parameters, or as text) in the page's language."""
    kept = kept_note(stored)
    return None if kept is None else translate_error(kept)


def preview(game: Game, board: Board) -> tuple[Turn | None, EruditError | None]:
    """Score `board` as the next turn without keeping it."""
    try:
        turn = game.play(board)
    except EruditError as exc:
        return None, exc
    game.undo()
    return turn, None


def changed_cells(before: Board, after_text: str) -> list[str]:
    after = after_text.split("\n")
    rows = before.rows()
    return [cell_name(r, c) for r in range(SIZE) for c in range(SIZE)
            if rows[r][c] != after[r][c]]


def _is_unknown_star(board_text: str, cell: str) -> bool:
    board = Board.parse(board_text)
    return board[cell] == "*"


def grid(rows: list[str], game: Game, new: list[str], placed: dict[str, int]) -> list[list[dict]]:
    """The board as cells for the page: symbol, premium code, new in this turn, placed on turn."""
    layout = game.ruleset.layout
    codes = [[layout.premium(r, c) for c in range(SIZE)] for r in range(SIZE)]
    return _cells(rows, codes, new, placed)


def layout_grid(codes: list[str], marked: list[str]) -> list[list[dict]]:
    """A box's premium layout (its rows of codes) as empty cells, the `marked` cells outlined."""
    return _cells(["." * SIZE] * SIZE, codes, marked, {})


def _cells(rows, codes, new: list[str], placed: dict[str, int]) -> list[list[dict]]:
    marked = set(new)
    return [[{
        "cell": cell_name(r, c),
        "symbol": rows[r][c],
        "premium": _premium_class(codes[r][c], (r, c) == (7, 7)),
        "new": cell_name(r, c) in marked,
        "star": is_star(rows[r][c]),
        "turn": placed.get(cell_name(r, c)),
    } for c in range(SIZE)] for r in range(SIZE)]


def _premium_class(code: str, centre: bool) -> str:
    names = {"l": "l2", "L": "l3", "w": "w2", "W": "w3"}
    return names.get(code, "centre" if centre else "")
