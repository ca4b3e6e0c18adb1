"""The games database: one SQLite file in the data folder, its schema, and its connections.

Every request opens its own connection (closed at teardown). Writes go through `write()`,
which takes SQLite's write lock up front (BEGIN IMMEDIATE), so two phones changing the same
game are served one after the other; WAL plus a commit before answering means a confirmed turn
survives the server being killed at any moment.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flask import current_app, g

BUSY_TIMEOUT_S = 15  # how long a writer waits for another phone's write to finish

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id          INTEGER PRIMARY KEY,
    token       TEXT NOT NULL UNIQUE,
    created     TEXT NOT NULL DEFAULT (datetime('now')),
    ruleset     TEXT NOT NULL,
    players     TEXT NOT NULL,            -- JSON list of names in turn order
    target      INTEGER,
    word_check  TEXT NOT NULL,
    profile     TEXT,
    ended       INTEGER NOT NULL DEFAULT 0,
    rules       TEXT                      -- JSON: the ruleset and layout the game started with
);
CREATE TABLE IF NOT EXISTS turns (
    game_id      INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    number       INTEGER NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('play', 'pass', 'exchange')),
    board        TEXT,                    -- board text after the turn; NULL for pass/exchange
    sure         INTEGER NOT NULL DEFAULT 1,
    alternatives TEXT NOT NULL DEFAULT '[]',
    photo        TEXT,                    -- file name under photos/<game id>/, made by the server
    created      TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (game_id, number)
);
CREATE TABLE IF NOT EXISTS pending (
    game_id      INTEGER PRIMARY KEY REFERENCES games(id) ON DELETE CASCADE,
    pid          TEXT NOT NULL,           -- changes with every new photo: a confirm names it
    number       INTEGER NOT NULL,        -- the turn this proposal is for
    board        TEXT NOT NULL,
    proposed     TEXT NOT NULL,           -- the board as read, before any correction
    sure         INTEGER NOT NULL,
    alternatives TEXT NOT NULL,
    message      TEXT,
    photo        TEXT NOT NULL,
    created      TEXT NOT NULL DEFAULT (datetime('now')),
    blocked      TEXT                     -- why it cannot be confirmed (not this game's board)
);
"""


def keep_open(path: Path) -> sqlite3.Connection:
    """A connection the app holds for its lifetime. SQLite deletes a database's WAL and
    shared-memory files when its last connection closes, and every request's connection
    would make them anew: on a full disk that fails, and even reading a game would. Held
    open, they stay, so games can be read whatever the disk."""
    conn = connect(path)
    conn.execute("SELECT COUNT(*) FROM games").fetchone()   # opens the WAL and its index
    return conn


def database_path() -> Path:
    return Path(current_app.config["DATA_DIR"]) / "games.sqlite3"


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode: transactions are opened explicitly by `write()`."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = FULL")  # a commit is on disk before the answer goes out
    return conn


def init_db(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(SCHEMA)
        for table, column in (("games", "rules"), ("pending", "blocked")):
            columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            if column not in columns:  # a database made by an older version
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} TEXT")
    finally:
        conn.close()


def get_db() -> sqlite3.Connection:
    if "db" not in g:
        g.db = connect(database_path())
    return g.db


def close_db(_exc: BaseException | None = None) -> None:
    conn = g.pop("db", None)
    if conn is not None:
        conn.close()


@contextmanager
def write() -> Iterator[sqlite3.Connection]:
    """One write transaction holding the database's write lock; rolled back on any error."""
    conn = get_db()
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
