"""The companion web app: phones at the table photograph the board after each turn, confirm
the reading, and keep the score together.

>>> app = create_app("/tmp/erudit-data")      # SQLite and photos in that folder
>>> serve("0.0.0.0", 8000, "/tmp/erudit-data")  # what `erudit serve` runs (under waitress)
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import socket
import ssl
import sys
import weakref
from pathlib import Path

from flask import Flask
from werkzeug.exceptions import HTTPException

from companion_app.settings import data_dir as default_data_dir
from engine.board import COLUMNS, cell_name, parse_position
from engine.errors import EruditError
from engine.files import folder_why
from engine.ruleset import PREMIUM_NAMES, PREMIUMS

from . import answer, db, events, guard, i18n, live, reading, store, tls_front, uploads
from .certificate import Certificate, certificate
from .views import boxes, home, play, review, scoreboard
from .views import live as live_views

MAX_UPLOAD = 25 * 1024 * 1024   # a 12–48 MP phone JPEG is 3–15 MB


def create_app(data_dir: str | Path | None = None, config: dict | None = None) -> Flask:
    """The app over one data folder (default: the user's, see companion_app.settings)."""
    folder = Path(data_dir) if data_dir else default_data_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EruditError(f"{folder}: cannot make the data folder ({folder_why(exc)})") from None
    app = Flask(__name__)
    app.config.from_mapping(
        DATA_DIR=str(folder),
        MAX_CONTENT_LENGTH=MAX_UPLOAD,
        SECRET_KEY=_secret_key(folder),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        PUBLIC_URL=None,          # base of the join link, when the server knows its LAN address
        PROPOSE_TURN=None,        # photo → proposal hook (tests); None: the workers (reading.py)
        ALLOWED_HOSTS=set(),      # names besides this machine's own and its IP addresses
        PHOTO_WORKERS=2,          # processes reading phone photos; 0: in the request's thread
        GAMES_PER_HOUR=60,        # new games taken in an hour (a club's evening starts a dozen)
        GAME_PHOTO_LIMIT=uploads.GAME_PHOTO_LIMIT,   # photos one game keeps
        PHOTO_DISK_LIMIT=uploads.PHOTO_DISK_LIMIT,   # bytes of all games' photos
        DISK_RESERVE=uploads.DISK_RESERVE,           # free bytes never used for photos or games
        CAMERAS=[],               # the server's cameras (`--camera`): device indexes or URLs
        LIVE_GAMES=live.LIVE_GAMES,                  # games watched by a camera at once
        FRAMES_PER_SECOND=live.FRAMES_PER_SECOND,    # a game's camera frames in a second
        LIVE_INLINE=False,        # True: a page's frames are looked at in its request (tests)
    )
    if config:
        app.config.update(config)
    extra = os.environ.get("ERUDIT_ALLOWED_HOSTS", "").replace(",", " ").split()
    names = {*app.config["ALLOWED_HOSTS"], *extra}
    app.config["ALLOWED_HOSTS"] = {n.lower() for n in names} | guard.own_names()
    app.json.ensure_ascii = False             # letters as letters in the JSON API
    db.init_db(folder / "games.sqlite3")
    _tidy(folder)
    keeper = db.keep_open(folder / "games.sqlite3")
    weakref.finalize(app, keeper.close)
    app.teardown_appcontext(db.close_db)
    i18n.init_app(app)
    events.init_app(app)
    live.init_app(app)
    app.before_request(guard.check_request)
    app.after_request(_security_headers)
    app.register_error_handler(EruditError, answer.handle_erudit)
    app.register_error_handler(HTTPException, answer.handle_http)
    app.register_error_handler(Exception, answer.handle_unexpected)
    app.jinja_env.globals.update(_=i18n.gettext, ngettext=i18n.ngettext, lang=i18n.lang,
                                 tr=i18n.translate_error, script_texts=i18n.script_texts,
                                 at=position_text, columns=COLUMNS,
                                 csrf_token=guard.csrf_token, formula=formula)
    app.jinja_env.filters["sentence"] = sentence
    for blueprint in (home.bp, play.bp, review.bp, boxes.bp, scoreboard.bp, live_views.bp):
        app.register_blueprint(blueprint)
    return app


def _tidy(folder: Path) -> None:
    """Once at start: older games get their rules kept, and what a crash or a full disk left
    half-written is deleted."""
    conn = db.connect(folder / "games.sqlite3")
    try:
        conn.execute("BEGIN IMMEDIATE")
        store.keep_rules(conn, folder)
        conn.execute("COMMIT")
        uploads.sweep(folder, store.kept_photos(conn))
    finally:
        conn.close()


def _secret_key(folder: Path) -> str:
    """A key kept in the data folder, so sessions (and their CSRF tokens) survive a restart."""
    path = folder / "secret.key"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(32))
    return path.read_text().strip()


def _security_headers(response):
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    return response


_CODES = {name: code for code, name in PREMIUM_NAMES.items()}


def formula(word: dict) -> str:
    """A word's score as a player checks it: `(К2 + О1×2 + Т2) × 2 = 14`."""
    parts = []
    for le in word["letters"]:
        factor = PREMIUMS[_CODES.get(le["premium"], ".")][0]
        symbol = "★" if le["letter"] == "*" else le["letter"].upper()
        parts.append(f"{symbol}{le['value']}" + (f"×{factor}" if factor > 1 else ""))
    total = " + ".join(parts)
    if word["word_multiplier"] > 1:
        total = f"({total}) × {word['word_multiplier']}"
    return f"{total} = {word['score']}"


def sentence(text: str) -> str:
    """A message shown on its own, as a sentence: its first letter a capital, unless its first
    word is a name of some kind (`board.jpg: …` stays)."""
    first = text.split(" ", 1)[0].rstrip(":,")
    return text[:1].upper() + text[1:] if first.isalpha() else text


def position_text(at: str) -> str:
    """A word's place as the page writes every place: its first cell and its direction
    (`G8→` across, `G6↓` down), not the record's `8G`/`G6`."""
    row, col, across = parse_position(at)
    return f"{cell_name(row, col)}{'→' if across else '↓'}"


def lan_address() -> str | None:
    """This machine's address on the local network (no packet is sent), or None."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))   # TEST-NET-1: routing decides the interface
            return probe.getsockname()[0]
    except OSError:
        return None


def check_address(host: str, port: int) -> None:
    """EruditError saying why the server cannot listen on host:port (werkzeug would print its
    own lines and exit)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror:
        raise EruditError(f"--host {host}: no such address") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will
        try:
            probe.bind(address)
        except PermissionError:
            raise EruditError(f"port {port} needs administrator rights: choose one above "
                              "1023 with --port") from None
        except OSError as exc:
            reasons = {errno.EADDRINUSE: f"port {port} is in use by another program: stop it "
                                         "or choose another with --port",
                       errno.EADDRNOTAVAIL: f"--host {host}: not an address of this machine"}
            raise EruditError(reasons.get(exc.errno, f"cannot listen on {host}:{port} "
                                                     f"({exc.strerror or exc})")) from None


# The server at the table: waitress reads requests without a thread (a slow or stalled
# connection holds no thread) and hands a thread only a request read whole.
# Requests answered at once: the pages' open event streams, and as many again for photos being
# read and every other request.
SERVER_THREADS = 2 * events.EVENT_STREAMS
READ_TIMEOUT_S = 30        # a connection that sends nothing for this long is closed
MAX_CONNECTIONS = 1000     # connections open at once (a table has a few phones)


def make_server(app: Flask, host: str, port: int, read_timeout: float = READ_TIMEOUT_S,
                tls: ssl.SSLContext | None = None):
    """`app` behind a production WSGI server (waitress) listening on host:port (0: any free
    port, see `.effective_port`); `.run()` serves until `.close()`. With `tls`, https: TLS
    ends in front (tls_front.py) and waitress listens behind it on 127.0.0.1."""
    import logging

    from waitress.server import create_server

    # "task queue depth" warnings: requests waiting for a thread while photos are read
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    server = create_server(app, host="127.0.0.1" if tls else host, port=0 if tls else port,
                           threads=SERVER_THREADS, channel_timeout=read_timeout,
                           cleanup_interval=max(1, min(30, int(read_timeout) // 2)),
                           connection_limit=MAX_CONNECTIONS, asyncore_use_poll=True,
                           max_request_body_size=MAX_UPLOAD + 1024 * 1024,
                           url_scheme="https" if tls else "http",
                           ident="erudit", clear_untrusted_proxy_headers=True)
    if tls is None:
        return server
    app.config["SESSION_COOKIE_SECURE"] = True   # a session made over https stays there
    front = tls_front.TlsFront(host, port, server.effective_port, tls, read_timeout,
                               MAX_CONNECTIONS)
    return tls_front.Behind(server, front)


def serve(host: str = "0.0.0.0", port: int = 8000, data_dir: str | Path | None = None,
          https: bool = False, cameras: list[str] | None = None) -> None:
    """Run the app for the phones at the table until interrupted; `https`: with a certificate
    made for this machine, as a phone's browser needs to let a page use its camera;
    `cameras`: sources the games may be watched by (device indexes like "0", or URLs)."""
    address = lan_address() if host in ("0.0.0.0", "::", "") else host
    check_address(host, port)
    app = create_app(data_dir, {"CAMERAS": list(cameras or [])})
    made = certificate(app.config["DATA_DIR"], address) if https else None
    server = make_server(app, host, port, tls=made.context() if made else None)
    where = f"{'https' if https else 'http'}://{address or host}:{server.effective_port}"
    app.config["PUBLIC_URL"] = where if address else None
    reading.LANES.start(app.config["PHOTO_WORKERS"])
    print(f"erudit: serving games from {app.config['DATA_DIR']}")
    if host.startswith("127.") or host == "localhost":
        print(f"erudit: open {where}/ (this computer only; --host 0.0.0.0 lets phones in)")
    else:
        print(f"erudit: open {where}/ on a phone on the same network (Ctrl+C stops)")
    if made:
        print(_certificate_note(made))
    sys.stdout.flush()
    before = signal.signal(signal.SIGINT, _ending_streams(app))
    try:
        server.run()
    finally:
        signal.signal(signal.SIGINT, before)
        events.close_streams(app)   # open pages' streams end, so their threads are free
        live.watchers(app).stop_all()
        server.close()
        reading.LANES.shutdown()


def _ending_streams(app: Flask):
    """Ctrl+C: the open pages' streams are told to end first, then the server stops as ever
    (waitress waits for its threads, and would wait 5 s for the streams' and say so)."""
    def interrupted(signum, frame):
        events.close_streams(app)
        raise KeyboardInterrupt
    return interrupted


def _certificate_note(made: Certificate) -> str:
    lines = ["erudit: https with a certificate made for this computer: a browser warns once "
             "that the connection is not private; accept it to go on",
             f"erudit: its SHA-256 fingerprint, to compare with the browser's: {made.fingerprint}"]
    if made.renewed:
        lines.append("erudit: the certificate was made anew for this address: a browser that "
                     "accepted the old one warns once more")
    return "\n".join(lines)
