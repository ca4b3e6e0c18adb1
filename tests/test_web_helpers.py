"""Shared pieces of the web app tests: an app over a temp folder, a scripted photo reader
standing in for the vision pipeline, and boards of a short game."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import cv2
import numpy as np
import pytest

from engine.board import COLUMNS, Board

EMPTY = "." * 15
PHONE = {"width": 390, "height": 844}    # a phone's screen (CSS px)
TV = {"width": 1920, "height": 1080}


def board_text(rows: dict[int, str]) -> str:
    """Board text with the given 1-based rows filled (each a 15-character line)."""
    lines = [EMPTY] * 15
    for number, line in rows.items():
        assert len(line) == 15
        lines[number - 1] = line
    return "\n".join(lines)


# Turn 1: КОТ across G8–I8 (К2 + О1 + Т2 = 5); turn 2: СОК down to G8 (С2 + О1×2 + К2 = 6);
# turn 3: ТОРТ down from I8 (Т2 + О1×2 + Р2 + Т2 = 8).
TURN1 = board_text({8: "......КОТ......"})
TURN2 = board_text({6: "......С........", 7: "......О........", 8: "......КОТ......"})
TURN3 = board_text({6: "......С........", 7: "......О........", 8: "......КОТ......",
                    9: "........О......", 10: "........Р......", 11: "........Т......"})


def jpeg_bytes(width: int = 64, height: int = 48) -> bytes:
    image = np.full((height, width, 3), 120, np.uint8)
    cv2.rectangle(image, (4, 4), (width - 5, height - 5), (20, 200, 40), 2)
    ok, buf = cv2.imencode(".jpg", image)
    assert ok
    return buf.tobytes()


@dataclass
class FakeProposal:
    """The shape of companion_app.photos.Proposal."""

    board: Board
    sure: bool = True
    alternatives: list = field(default_factory=list)
    rectified_jpeg: bytes = b""
    cells: list = field(default_factory=list)
    message: str | None = None


class ScriptedReader:
    """Stands in for the photo pipeline: each photo 'shows' the next board of a script (or
    gives the next FakeProposal as it is)."""

    def __init__(self):
        self.boards: list[str | Exception] = []
        self.calls: list[str] = []

    def __call__(self, game, image_path, profile=None, data=None):
        self.calls.append(image_path)
        item = self.boards.pop(0)
        if isinstance(item, Exception):
            raise item
        if isinstance(item, FakeProposal):   # a reading with its doubts, as scripted
            return item
        after = Board.parse(item)
        before = game.board.rows()
        cells = [f"{COLUMNS[c]}{r + 1}" for r in range(15) for c in range(15)
                 if before[r][c] != after.rows()[r][c]]
        return FakeProposal(after, sure=True, rectified_jpeg=jpeg_bytes(320, 320), cells=cells)


@pytest.fixture
def reader():
    return ScriptedReader()


@pytest.fixture
def app(tmp_path, reader):
    from companion_app.web import create_app

    return create_app(tmp_path / "data", {"TESTING": True, "PROPOSE_TURN": reader,
                                          "PHOTO_WORKERS": 0})


@pytest.fixture
def client(app):
    """A phone with the English interface (the default is Russian), so errors read as in code."""
    phone = app.test_client()
    phone.set_cookie("lang", "en")
    return phone


def csrf_of(client) -> str:
    """The session's CSRF token, as the page embeds it."""
    page = client.get("/").get_data(as_text=True)
    return re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)


def new_game(client, players=("Аня", "Борис"), target="", word_check="warn",
             ruleset="erudit") -> str:
    token = csrf_of(client)
    form = {"csrf": token, "ruleset": ruleset, "player": list(players), "target": target,
            "word_check": word_check}
    response = client.post("/games", data=form, headers={"Accept": "application/json"})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["token"]


def new_game_with(client, **fields) -> str:
    """A two-player game with other settings (a box's `profile`, a `ruleset`)."""
    form = {"csrf": csrf_of(client), "player": ["Аня", "Борис"], **fields}
    response = client.post("/games", data=form, headers={"Accept": "application/json"})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["token"]


def post(client, url: str, data: dict | None = None, **kwargs):
    """A POST as the page's script sends it: CSRF header, JSON answer."""
    headers = {"Accept": "application/json", "X-CSRF-Token": csrf_of(client)}
    headers.update(kwargs.pop("headers", {}))
    return client.post(url, data=data or {}, headers=headers, **kwargs)


def state(client, game: str) -> dict:
    response = client.get(f"/g/{game}", headers={"Accept": "application/json"})
    assert response.status_code == 200
    return response.get_json()


def upload(client, game: str, turn: int, data: bytes | None = None, name="board.jpg"):
    import io

    payload = {"turn": str(turn), "photo": (io.BytesIO(data or jpeg_bytes()), name)}
    return post(client, f"/g/{game}/photo", payload, content_type="multipart/form-data")


def play_photo(client, reader, game: str, board: str) -> dict:
    """Photo → pending → confirm; returns the state after."""
    turn = state(client, game)["next_turn"]
    reader.boards.append(board)
    response = upload(client, game, turn)
    assert response.status_code == 200, response.get_json()
    pending = response.get_json()["pending"]
    response = post(client, f"/g/{game}/confirm", {"turn": turn, "pending": pending["id"]})
    assert response.status_code == 200, response.get_json()
    return response.get_json()

