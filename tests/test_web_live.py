"""A camera watching the game in the web app, through its HTTP interface: a page's camera
frames of a filmed game (rendered at test time, two moves) sent with their times,
moves taken exactly and stored, a doubtful one waiting for a confirm, an undo that stays
undone, a camera that goes dark or silent, frames refused with one clear line, and a camera
of the server's own (a video file standing in for its URL)."""

from __future__ import annotations

import time

import cv2
import numpy as np
import pytest
from test_web_helpers import csrf_of, jpeg_bytes, new_game, post, state

from companion_app.web import create_app, live
from engine.board import Board, cell_name, parse_cell
from engine.ruleset import load_ruleset
from synth.video import game_video

ERUDIT = load_ruleset("erudit")
STEP = 0.25         # s between the frames a page sends (4 a second)

# one pytest-xdist worker runs the whole module, so its module fixtures are made once
pytestmark = pytest.mark.xdist_group("live")


@pytest.fixture(scope="module")
def filmed(tmp_path_factory):
    """Two moves filmed at 960×720, and every other frame (4 a second) as a page sends it."""
    path = tmp_path_factory.mktemp("live") / "game.avi"
    video = game_video(str(path), ERUDIT, seed=5, turns=2, hover_every=0)
    still = {round((laid + 1.0) * video.fps) for laid in video.laid}
    capture = cv2.VideoCapture(video.path)
    video.sent, video.still, index = [], [], 0
    while capture.grab():
        if index % 2 == 0 or index in still:
            frame = capture.retrieve()[1]
            video.sent += [jpeg(frame)] if index % 2 == 0 else []
            video.still += [frame] if index in still else []
        index += 1
    capture.release()
    return video


def jpeg(frame: np.ndarray) -> bytes:
    ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 80])  # as a page
    assert ok
    return data.tobytes()


@pytest.fixture
def app(tmp_path):
    app = create_app(tmp_path / "data", {"TESTING": True, "LIVE_INLINE": True,
                                         "PHOTO_WORKERS": 0, "FRAMES_PER_SECOND": 1000})
    yield app
    live.watchers(app).stop_all()


@pytest.fixture
def client(app):
    phone = app.test_client()
    phone.set_cookie("lang", "en")
    return phone


class Camera:
    """A page's camera: sends frames to the game, each with its time."""

    def __init__(self, client, game: str):
        self.client, self.game, self.t = client, game, 0.0
        self.csrf = csrf_of(client)

    def send(self, data: bytes, content_type="image/jpeg"):
        response = self.client.post(                 # JSON, whatever the request accepts
            f"/g/{self.game}/frame?t={self.t}", data=data, content_type=content_type,
            headers={"X-CSRF-Token": self.csrf})
        self.t += STEP
        return response

    def film(self, frames: list[bytes]) -> dict:
        for data in frames:
            response = self.send(data)
            assert response.status_code == 200, response.get_json()
        return response.get_json()["live"]

    def hold(self, frame: np.ndarray, seconds: float) -> dict:
        return self.film([jpeg(frame)] * round(seconds / STEP))


def boards(client, game: str) -> list[str]:
    """The board after each stored move, as board text."""
    board, after = Board(), []
    for move in state(client, game)["moves"]:
        board = board.copy()
        for tile in move["tiles"]:
            board.set(*parse_cell(tile["cell"]), tile["letter"])
        after.append(str(board))
    return after


def test_moves_a_page_s_camera_sees_are_taken_exactly_and_stored(client, filmed):
    game = new_game(client, word_check="off")
    camera = Camera(client, game)
    events = client.get(f"/g/{game}/events", buffered=False).response
    assert "event: state" in next(events).decode() + next(events).decode()
    said = camera.film(filmed.sent[:4])
    assert said["source"] == "browser" and said["state"] == "watching"
    assert "event: live" in next(events).decode()              # every open page hears it
    said = camera.film(filmed.sent[4:])
    s = state(client, game)
    assert boards(client, game) == [str(b) for b in filmed.boards]
    assert [m["score"] for m in s["moves"]] == filmed.scores and s["totals"] == filmed.totals
    assert said["read"] >= 2 and said["note"] is None
    for move in s["moves"]:                                    # each frame kept as its photo
        thumb = client.get(move["photo"]["thumb"])
        assert thumb.status_code == 200 and thumb.data[:2] == b"\xff\xd8"
    board = client.get(f"/g/{game}/live.jpg")
    assert board.status_code == 200 and board.data[:2] == b"\xff\xd8"
    assert board.headers["Cache-Control"] == "no-store"
    now = client.get(f"/g/{game}/live").get_json()
    assert now["read"] == said["read"] and now["frames_at"] < 60


def test_an_undone_move_does_not_come_back_until_the_board_changes(client, filmed):
    game = new_game(client, word_check="off")
    camera = Camera(client, game)
    empty = cv2.imdecode(np.frombuffer(filmed.sent[0], np.uint8), cv2.IMREAD_COLOR)
    camera.hold(empty, 3.0)
    camera.hold(filmed.still[0], 3.0)
    assert boards(client, game) == [str(filmed.boards[0])]
    post(client, f"/g/{game}/undo", {"turn": 2})
    camera.hold(filmed.still[0], 4.0)                          # the same board: left undone
    assert state(client, game)["moves"] == []
    camera.hold(empty, 3.0)                                    # the tiles taken back …
    camera.hold(filmed.still[0], 3.0)                          # … and laid again
    assert boards(client, game) == [str(filmed.boards[0])]


def test_a_doubtful_move_waits_for_a_confirm(client, filmed):
    game = new_game(client, word_check="off")
    camera = Camera(client, game)
    empty = cv2.imdecode(np.frombuffer(filmed.sent[0], np.uint8), cv2.IMREAD_COLOR)
    camera.hold(empty, 3.0)
    blurred = cv2.GaussianBlur(filmed.still[0], (0, 0), 4.5)   # out of focus: letters unsure
    camera.hold(blurred, 3.0)
    s = state(client, game)
    pending = s["pending"]
    assert s["moves"] == [] and pending is not None and not pending["sure"]
    assert sorted(pending["new"]) == sorted(cell_name(r, c) for r, c, _ in
                                            filmed.boards[0].tiles())
    assert client.get(pending["photo"]["thumb"]).status_code == 200
    camera.hold(filmed.still[1], 3.0)                          # nothing taken while it waits
    assert state(client, game)["pending"]["id"] == pending["id"]
    confirmed = post(client, f"/g/{game}/confirm", {"turn": 1, "pending": pending["id"]})
    assert confirmed.status_code == 200
    assert [m["score"] for m in confirmed.get_json()["moves"]] == [pending["move"]["score"]]
    camera.hold(blurred, 3.0)                                  # the board as confirmed
    s = state(client, game)
    assert len(s["moves"]) == 1 and s["pending"] is None


def test_a_camera_that_goes_dark_or_silent_pauses_the_game_and_resumes(app, client, filmed):
    game = new_game(client, word_check="off")
    camera = Camera(client, game)
    empty = cv2.imdecode(np.frombuffer(filmed.sent[0], np.uint8), cv2.IMREAD_COLOR)
    assert camera.hold(empty, 0.5)["state"] == "watching"
    said = camera.hold((empty * 0.03).astype(np.uint8), 1.0)
    assert said["state"] == "paused"
    assert said["note"] == "the camera sees no light: the game waits"
    said = camera.hold(empty, 0.5)
    assert said["state"] == "watching" and said["note"] == "the camera sees the board again"
    watcher = live.watchers(app).get(game)
    watcher.tick(watcher.arrived + 6)                          # 6 s without a frame
    said = client.get(f"/g/{game}/live").get_json()
    assert said["state"] == "paused"
    assert said["note"] == "the camera stopped sending: the game waits"
    russian = app.test_client().get(f"/g/{game}/live?lang=ru").get_json()
    assert russian["note"] == "камера перестала присылать кадры: игра ждёт"
    assert camera.hold(empty, 0.25)["state"] == "watching"
    watcher.tick(watcher.arrived + 61)                         # a minute: the watcher ends
    assert client.get(f"/g/{game}/live").get_json()["state"] == "off"
    assert state(client, game)["moves"] == []                  # nothing invented


def test_bad_frames_are_refused_with_one_clear_line(app, client, filmed):
    game = new_game(client, word_check="off")
    camera = Camera(client, game)
    good = filmed.sent[0]
    ok, png = cv2.imencode(".png", np.zeros((480, 640, 3), np.uint8))
    refusals = [(camera.send(b""), 400, "not a camera frame"),
                (camera.send(png.tobytes(), "image/png"), 400, "not a camera frame"),
                (camera.send(good[:-2000]), 400, "not a camera frame"),
                (camera.send(jpeg_bytes(320, 240)), 400, "320×240 is too small"),
                (camera.send(b"\xff\xd8" + bytes(3 * 1024 * 1024)), 413, "at most 2 MB")]
    for response, status, text in refusals:
        body = response.get_json()
        assert response.status_code == status and text in body["error"]
        assert "\n" not in body["error"]
    app.config["FRAMES_PER_SECOND"] = 2                        # counted before it is decoded
    hasty = Camera(client, new_game(client, word_check="off"))
    assert [hasty.send(b"").status_code for _ in range(3)] == [400, 400, 429]
    app.config["FRAMES_PER_SECOND"] = 1000
    other = Camera(client, new_game(client, word_check="off"))
    assert other.send(good).status_code == 200                # `other` is watched
    second = app.test_client()                                # another phone's camera
    second.set_cookie("lang", "en")
    refused = Camera(second, other.game).send(good)
    assert refused.status_code == 409 and refused.get_json()["error"] == \
        "another page's camera watches this game: stop it there first"
    app.config["LIVE_GAMES"] = 1
    busy = Camera(client, game).send(good)
    assert busy.status_code == 503 and "stop one first" in busy.get_json()["error"]
    post(client, f"/g/{other.game}/end", {"turn": 1})
    over = other.send(good)
    assert over.status_code == 409 and over.get_json()["error"] == \
        "the game is over; no more turns"


def test_a_server_camera_plays_the_game(tmp_path, filmed):
    app = create_app(tmp_path / "data", {"TESTING": True, "CAMERAS": [filmed.path]})
    client = app.test_client()
    client.set_cookie("lang", "en")
    game = new_game(client, word_check="off")
    try:
        assert post(client, f"/g/{game}/camera", {"source": "1"}).status_code == 400
        assert post(client, f"/g/{game}/camera", {"source": "0"}).status_code == 200
        said = client.get(f"/g/{game}/live").get_json()
        assert said["source"] == "camera" and said["camera"] == 0
        assert said["cameras"] == ["Camera 1"]
        refused = Camera(client, game).send(filmed.sent[0])
        assert refused.status_code == 409 and "camera 1" in refused.get_json()["error"]
        ends = time.monotonic() + 60
        while len(state(client, game)["moves"]) < 2 and time.monotonic() < ends:
            time.sleep(0.2)
        assert boards(client, game) == [str(b) for b in filmed.boards]
        post(client, f"/g/{game}/camera", {"stop": "1"})
        assert client.get(f"/g/{game}/live").get_json()["state"] == "off"
    finally:
        live.watchers(app).stop_all()


def test_a_server_camera_that_does_not_answer_pauses_the_game(tmp_path):
    app = create_app(tmp_path / "data", {"TESTING": True,
                                         "CAMERAS": [str(tmp_path / "unplugged.avi")]})
    client = app.test_client()
    client.set_cookie("lang", "en")
    game = new_game(client, word_check="off")
    try:
        post(client, f"/g/{game}/camera", {"source": "0"})
        ends = time.monotonic() + 10
        while client.get(f"/g/{game}/live").get_json()["state"] != "paused" \
                and time.monotonic() < ends:
            time.sleep(0.05)
        said = client.get(f"/g/{game}/live").get_json()
        assert said["state"] == "paused" and said["note"] == \
            "camera 1 does not answer: the game waits while the server tries it again"
    finally:
        live.watchers(app).stop_all()
    assert client.get(f"/g/{game}/live").get_json()["state"] == "off"


def test_only_the_latest_frame_waits_to_be_looked_at():
    slot = live.Slot()
    for t in range(3):                       # a read took long: three frames came meanwhile
        slot.put(np.full((2, 2, 3), t, np.uint8), float(t))
    frame, t = slot.take(timeout=0)
    assert t == 2.0 and frame[0, 0, 0] == 2
    assert slot.take(timeout=0) is None
