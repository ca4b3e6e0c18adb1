"""Games as stored: the players' inputs only (settings, each turn's board text), from which the
engine re-derives every score — so a correction anywhere re-scores the game.

>>> record = find(conn, token)
>>> game = build_game(record, data_dir)     # an engine Game, every turn re-scored
"""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from engine.board import Board
from engine.errors import EruditError, GameError, ProfileError
from engine.game import Game
from engine.ruleset import Ruleset, load_ruleset, ruleset_dict, ruleset_from_dict

TOKEN_BYTES = 16             # 128 random bits: a game's link cannot be guessed
TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


class NotFound(EruditError):
    """No game under this link (or a link that is not one of ours)."""


class Stale(GameError):
    """The request was made for a state of the game that has changed since (another phone)."""


@dataclass
class Pending:
    """A photo's proposed turn, waiting for the player to confirm it."""

    pid: str
    number: int
    board: str
    proposed: str
    sure: bool
    alternatives: list[dict]
    message: str | None
    photo: str
    blocked: str | None = None     # why it cannot be confirmed: the photo is not of this board


@dataclass
class TurnRow:
    number: int
    kind: str                      # play | pass | exchange
    board: str | None
    sure: bool
    alternatives: list[dict]
    photo: str | None


@dataclass
class Record:
    id: int
    token: str
    ruleset: str
    players: list[str]
    target: int | None
    word_check: str
    profile: str | None
    ended: bool
    rules: dict | None = None      # the ruleset and layout as the game started
    turns: list[TurnRow] = field(default_factory=list)
    pending: Pending | None = None

    @property
    def next_turn(self) -> int:
        return len(self.turns) + 1


def ruleset_for(name: str, profile: str | None, data_dir: Path) -> Ruleset:
    """The game's ruleset, with a calibrated box's layout when the game names a profile."""
    ruleset = load_ruleset(name, data_dir)
    if not profile:
        return ruleset
    try:
        from calibration.profile import load_profile
    except ImportError:
        raise ProfileError("calibration profiles are not available in this installation") from None
    return load_profile(profile, data_dir).apply_to(ruleset)


def create(conn: sqlite3.Connection, ruleset: Ruleset, name: str, players: list[str],
           target: int | None, word_check: str, profile: str | None) -> str:
    """A new game scored by `ruleset` (named `name`, with box `profile`'s layout applied) for
    good: the rules are stored with the game, not looked up again."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    conn.execute(
        "INSERT INTO games (token, ruleset, players, target, word_check, profile, rules) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (token, name, json.dumps(players, ensure_ascii=False), target, word_check, profile,
         _rules_json(ruleset)))
    return token


def _rules_json(ruleset: Ruleset) -> str:
    return json.dumps(ruleset_dict(ruleset), ensure_ascii=False)


def keep_rules(conn: sqlite3.Connection, data_dir: Path) -> None:
    """Give every game stored without its rules (made by an older version) the rules it is
    scored with now, so that from here on it keeps them; a game whose ruleset or box is gone
    is left to say so when opened."""
    rows = conn.execute("SELECT id, ruleset, profile FROM games WHERE rules IS NULL").fetchall()
    for row in rows:
        try:
            ruleset = ruleset_for(row["ruleset"], row["profile"], data_dir)
        except EruditError:
            continue
        conn.execute("UPDATE games SET rules = ? WHERE id = ?", (_rules_json(ruleset), row["id"]))


def find(conn: sqlite3.Connection, token: str) -> Record:
    """The game under `token`, with its turns and pending proposal; NotFound otherwise."""
    if not TOKEN_SHAPE.match(token or ""):
        raise NotFound("no such game")
    row = conn.execute("SELECT * FROM games WHERE token = ?", (token,)).fetchone()
    if row is None:
        raise NotFound("no such game")
    record = Record(row["id"], row["token"], row["ruleset"], json.loads(row["players"]),
                    row["target"], row["word_check"], row["profile"], bool(row["ended"]),
                    json.loads(row["rules"]) if row["rules"] else None)
    for t in conn.execute("SELECT * FROM turns WHERE game_id = ? ORDER BY number", (record.id,)):
        record.turns.append(TurnRow(t["number"], t["kind"], t["board"], bool(t["sure"]),
                                    json.loads(t["alternatives"]), t["photo"]))
    p = conn.execute("SELECT * FROM pending WHERE game_id = ?", (record.id,)).fetchone()
    if p is not None:
        record.pending = Pending(p["pid"], p["number"], p["board"], p["proposed"],
                                 bool(p["sure"]), json.loads(p["alternatives"]), p["message"],
                                 p["photo"], p["blocked"])
    return record


def build_game(record: Record, data_dir: Path) -> Game:
    """The engine's game replayed from the stored inputs, under the rules it started with."""
    if record.rules is not None:
        ruleset = ruleset_from_dict(record.rules, f"game {record.token[:8]}: its stored rules")
    else:
        ruleset = ruleset_for(record.ruleset, record.profile, data_dir)
    game = Game(ruleset, record.players, target=record.target, word_check=record.word_check)
    for turn in record.turns:
        if turn.kind == "play":
            board = Board.parse(turn.board, ruleset, source=f"turn {turn.number}")
            game.play(board, sure=turn.sure, alternatives=turn.alternatives)
        else:
            game.pass_turn(exchange=turn.kind == "exchange")
    if record.ended:
        game.end()
    return game


def expect_turn(record: Record, expected: int) -> None:
    """The precondition every change carries: the number the next turn will get."""
    if expected != record.next_turn:
        raise Stale(code="moved_on", next=record.next_turn, sent=expected)


def add_turn(conn: sqlite3.Connection, record: Record, kind: str, board: str | None = None,
             sure: bool = True, alternatives: list[dict] | None = None,
             photo: str | None = None) -> None:
    conn.execute(
        "INSERT INTO turns (game_id, number, kind, board, sure, alternatives, photo) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (record.id, record.next_turn, kind, board, int(sure),
         json.dumps(alternatives or [], ensure_ascii=False), photo))
    conn.execute("DELETE FROM pending WHERE game_id = ?", (record.id,))


def save_pending(conn: sqlite3.Connection, record: Record, pending: Pending) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO pending (game_id, pid, number, board, proposed, sure, "
        "alternatives, message, photo, blocked) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (record.id, pending.pid, pending.number, pending.board, pending.proposed,
         int(pending.sure), json.dumps(pending.alternatives, ensure_ascii=False),
         pending.message, pending.photo, pending.blocked))


def photo_count(conn: sqlite3.Connection, record: Record) -> int:
    """The photos the game keeps: its turns' and the one waiting to be confirmed."""
    return sum(1 for turn in record.turns if turn.photo) + (record.pending is not None)


def kept_photos(conn: sqlite3.Connection) -> dict[int, set[str]]:
    """Every game's photo names (game id → names), as the database knows them."""
    kept: dict[int, set[str]] = {}
    for row in conn.execute("SELECT game_id, photo FROM turns WHERE photo IS NOT NULL "
                            "UNION ALL SELECT game_id, photo FROM pending"):
        kept.setdefault(row[0], set()).add(row[1])
    return kept


def games_since(conn: sqlite3.Connection, minutes: int) -> int:
    """How many games were made in the last `minutes`."""
    return conn.execute("SELECT COUNT(*) FROM games WHERE created > datetime('now', ?)",
                        (f"-{int(minutes)} minutes",)).fetchone()[0]


def drop_pending(conn: sqlite3.Connection, record: Record) -> None:
    conn.execute("DELETE FROM pending WHERE game_id = ?", (record.id,))


def save_boards(conn: sqlite3.Connection, record: Record, game: Game) -> None:
    """Store every played turn's board as the engine now has it (after a correction)."""
    for turn in game.turns:
        if turn.kind == "play":
            conn.execute("UPDATE turns SET board = ? WHERE game_id = ? AND number = ?",
                         (str(turn.board), record.id, turn.number))


def set_sure(conn: sqlite3.Connection, record: Record, number: int) -> None:
    """Turn `number` has been put right by hand: no longer an unsure reading."""
    conn.execute("UPDATE turns SET sure = 1 WHERE game_id = ? AND number = ?",
                 (record.id, number))


def drop_last_turn(conn: sqlite3.Connection, record: Record) -> None:
    conn.execute("DELETE FROM turns WHERE game_id = ? AND number = ?",
                 (record.id, len(record.turns)))
    conn.execute("DELETE FROM pending WHERE game_id = ?", (record.id,))
    conn.execute("UPDATE games SET ended = 0 WHERE id = ?", (record.id,))


def set_ended(conn: sqlite3.Connection, record: Record) -> None:
    conn.execute("UPDATE games SET ended = 1 WHERE id = ?", (record.id,))
    conn.execute("DELETE FROM pending WHERE game_id = ?", (record.id,))
