"""A game as plain data for the page and the JSON API alike (the page renders this same dict)."""

from __future__ import annotations

from flask import url_for

from companion_app.photos import RECTIFIED_MARGIN
from engine import report
from engine.board import Board, cell_name, is_star, parse_cell
from engine.errors import EruditError
from engine.game import Game, Turn
from engine.ruleset import SIZE

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
    if turn is not None:
        new = [p["cell"] for p in report.turn_dict(turn)["tiles"]]
        move, words = report.turn_dict(turn), report.breakdown(turn)
        verdicts = [{"word": v.word, "ok": v.ok, "reason": v.reason} for v in turn.verdicts]
    else:
        new, move, words, verdicts = changed_cells(game.board, pending.board), None, [], []
    return {
        "id": pending.pid, "turn": pending.number, "board": pending.board.split("\n"),
        "proposed": pending.proposed.split("\n"), "new": new, "sure": pending.sure,
        "alternatives": pending.alternatives, "message": pending.message,
        "blocked": pending.blocked,
        "move": move, "breakdown": words, "verdicts": verdicts, "error": error,
        "photo": _image_urls(token, "pending-" + pending.pid, pending.photo),
        "stars": [c for c in new if _is_unknown_star(pending.board, c)],
        "marks": photo_marks(new),
    }


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


def preview(game: Game, board: Board) -> tuple[Turn | None, str | None]:
    """Score `board` as the next turn without keeping it."""
    try:
        turn = game.play(board)
    except EruditError as exc:
        return None, str(exc)
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
