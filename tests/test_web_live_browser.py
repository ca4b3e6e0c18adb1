"""Live play in a real browser: Chromium takes a film of a short game, rendered at test time,
as its camera; one phone of the game sends its camera's frames, a second phone sees each move
appear with its score without reloading, and so does a TV. A camera of the server's is chosen
on the page, and the game shows paused once it sends no more. A phone on plain http over the
network (no camera there for a page) is told how to get one.

Screenshots of the camera panel go to artifacts/screens/ (not part of the repository).
"""

from __future__ import annotations

import json
import re
import shutil
import time
import urllib.request
from itertools import pairwise
from pathlib import Path

import cv2
import numpy as np
import pytest
from test_web_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    SCREENS,
    serving,
    snap,
    start_game,
)
from test_web_helpers import EMPTY, TURN1, TURN2, TV
from test_web_table import contrast

# one pytest-xdist worker runs the whole module: the film made once, one Chromium playing it
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("live_browser")]

FILM_SIZE = (640, 360)  # the board is read at this size (the least the server takes): cheap
FILM_FPS = 5
POLL_S = 0.05
LAN_NAME = "table.lan"  # a name the browser takes for another machine: not a secure context


def film() -> list[np.ndarray]:
    """The frames of a fixed camera above the table: the empty board, then a hand lays КОТ
    (5 points), then СОК (6 points), and the board stays still for a while after each."""
    shots = [render(board) for board in ("\n".join([EMPTY] * 15), TURN1, TURN2)]
    frames: list[np.ndarray] = []
    frames += [shots[0][0]] * 3 * FILM_FPS
    for (before, corners), (after, _) in pairwise(shots):
        frames += [with_hand(before, corners, step / 3) for step in (1, 2, 3)]
        frames += [with_hand(after, corners, step / 3) for step in (3, 2, 1)]
        frames += [after] * 4 * FILM_FPS
    return frames


def write_y4m(path: Path, frames: list[np.ndarray]) -> None:
    """What Chromium's fake camera plays (looping): a header, then each frame as planar
    YUV 4:2:0."""
    width, height = FILM_SIZE
    with open(path, "wb") as out:
        out.write(f"YUV4MPEG2 W{width} H{height} F{FILM_FPS}:1 Ip A1:1 C420jpeg\n".encode())
        for frame in frames:
            out.write(b"FRAME\n" + cv2.cvtColor(frame, cv2.COLOR_BGR2YUV_I420).tobytes())


def write_avi(path: Path, frames: list[np.ndarray]) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FILM_FPS, FILM_SIZE)
    for frame in frames:
        writer.write(frame)
    writer.release()


def render(board: str) -> tuple[np.ndarray, np.ndarray]:
    from synth.render import render_photo

    shot = render_photo(board.split("\n"), seed=5, style="erudit-black", size=FILM_SIZE,
                        pose="frontal", scene=True)
    return shot.image, np.float32(shot.corners)


def with_hand(image: np.ndarray, corners: np.ndarray, reach: float) -> np.ndarray:
    """The frame with an arm come in from the bottom edge `reach` of the way to the board's
    centre (where both moves are laid)."""
    from synth.video import draw_arm

    frame = image.copy()
    centre = corners.mean(axis=0)
    base = np.float32([centre[0], FILM_SIZE[1] + 40])
    width = float(np.linalg.norm(corners[1] - corners[0])) / 15 * 1.4
    draw_arm(frame, base + (centre - base) * reach, base, width)
    return frame


@pytest.fixture(scope="module")
def films(tmp_path_factory) -> dict[str, Path]:
    """The film as Chromium's camera plays it (y4m) and as a server camera reads it (avi)."""
    folder = tmp_path_factory.mktemp("camera")
    frames = film()
    write_y4m(folder / "game.y4m", frames)
    write_avi(folder / "game.avi", frames)
    return {"y4m": folder / "game.y4m", "avi": folder / "game.avi"}


@pytest.fixture(scope="module")
def chromium(films):
    """Chromium with the film as its camera (allowed without asking), and `table.lan` a
    name for this machine."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            *CHROMIUM_ARGS, "--use-fake-ui-for-media-stream",
            "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-video-capture={films['y4m']}",
            f"--host-resolver-rules=MAP {LAN_NAME} 127.0.0.1"])
        yield browser
        browser.close()


@pytest.fixture
def live_server(tmp_path):
    """The app with the real readers, served by the production server."""
    from companion_app.web import create_app

    with serving(create_app(tmp_path / "data", {"PHOTO_WORKERS": 0})) as url:
        yield url


def stored(url: str, totals: list[int], timeout: float) -> float:
    """When (time.monotonic()) the game at `url` has `totals` on the server, asked every
    POLL_S."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        asked = urllib.request.Request(url, headers={"Accept": "application/json"})
        with urllib.request.urlopen(asked, timeout=5) as answer:
            if json.load(answer)["totals"] == totals:
                return time.monotonic()
        time.sleep(POLL_S)
    raise AssertionError(f"the server's totals never became {totals}")


def totals_are(page, totals: list[int], timeout: float) -> None:
    page.wait_for_function(
        "want => [...document.querySelectorAll('.scoreboard .total')]"
        ".map(td => Number(td.textContent)).join() === want.join()",
        arg=totals, timeout=timeout)


# The colours of each text of the panel shown, and of what it is drawn on (the nearest
# ancestor with a background of its own).
COLOURS = """panel => [...panel.querySelectorAll('h2, p, figcaption, button, b, span')]
  .filter(e => e.offsetParent !== null && e.textContent.trim())
  .map(e => {
    let back = e;
    while (back && getComputedStyle(back).backgroundColor === 'rgba(0, 0, 0, 0)') {
      back = back.parentElement;
    }
    return [e.textContent.trim().slice(0, 20), getComputedStyle(e).color,
            getComputedStyle(back || document.body).backgroundColor];
  })"""


def hex_colour(css: str) -> str:
    red, green, blue = (int(v) for v in re.findall(r"\d+", css)[:3])   # rgb(…) or rgba(…)
    return f"#{red:02x}{green:02x}{blue:02x}"


def assert_readable(page) -> None:
    shown = page.locator("#live").evaluate(COLOURS)
    assert len(shown) >= 3
    for text, ink, back in shown:
        assert contrast(hex_colour(ink), hex_colour(back)) >= 4.5, (text, ink, back)


def test_a_game_played_from_a_fake_camera(live_server, browser):
    started = time.monotonic()
    camera, watcher = browser(), browser()
    url = start_game(camera, live_server)
    watcher.goto(url)
    watcher.evaluate("window.stillTheSamePage = true")
    assert "не следит" in watcher.inner_text("#live .live-status")
    tv = browser(TV)
    tv.goto(live_server + camera.locator("a:has-text('Табло')").get_attribute("href"))
    assert tv.locator("#live").is_hidden()                     # no camera: nothing to say

    camera.click("#live .live-start")
    camera.wait_for_selector("#live[data-state='watching']")
    watcher.wait_for_selector("#live[data-state='watching']", timeout=5_000)
    assert "Камера за столом следит за доской" in watcher.inner_text("#live .live-status")
    assert camera.locator("#live .live-preview video").count() == 1
    assert_readable(camera)
    snap(camera, "15-camera-watching")

    totals_are(watcher, [5, 0], timeout=30_000)                # КОТ, taken by itself
    assert "КОТ 5" in watcher.inner_text("#history li >> nth=0")
    assert "Ход 1: Аня" in watcher.inner_text("#live .live-last")
    assert watcher.locator("#live .live-last button.undo").is_visible()
    watcher.wait_for_selector("#live .live-board:not([hidden]) img")
    assert_readable(watcher)
    snap(watcher, "16-camera-move-seen")
    tv.wait_for_selector("#live .live-board:not([hidden]) img")
    assert "следит за доской" in tv.inner_text("#live .live-status")
    tv.screenshot(path=str(SCREENS / "18-tv-camera.png"))
    at = stored(url, [5, 6], timeout=30)                       # СОК, and how soon it shows
    totals_are(watcher, [5, 6], timeout=3_000)
    seen_after = time.monotonic() - at      # a figure (bench_live measures it), not a check
    assert "СОК 6" in watcher.inner_text("#history li >> nth=0")
    assert watcher.evaluate("window.stillTheSamePage") is True  # seen without a reload
    totals_are(camera, [5, 6], timeout=3_000)
    assert camera.locator("#live .live-preview video").count() == 1   # kept through the moves

    watcher.click('#turn button[name="exchange"][value="0"]')  # a pass: one tap, no question
    watcher.wait_for_selector('#turn input[name="turn"][value="4"]', state="attached")
    assert "пас" in watcher.inner_text("#history li >> nth=0")

    watcher.click("#live .live-stop")                          # stopped from the other phone:
    camera.wait_for_selector("#live .live-preview video", state="detached", timeout=5_000)
    tv.wait_for_selector("#live", state="hidden", timeout=5_000)
    time.sleep(1.0)                                            # the camera sends no more
    assert watcher.get_attribute("#live", "data-state") == "off"
    assert camera.get_attribute("#live", "data-state") == "off"
    (SCREENS / "live-game-seconds.txt").write_text(
        f"game {time.monotonic() - started:.1f}\nmove seen after {seen_after:.3f}\n")


def test_a_phone_on_plain_http_is_told_how_to_get_the_camera(tmp_path, browser):
    """Over the network on http a page has no camera: the panel says in one line what to do
    (a page on the computer itself, http://127.0.0.1, has one)."""
    from companion_app.web import create_app

    app = create_app(tmp_path / "data", {"ALLOWED_HOSTS": {LAN_NAME}})
    with serving(app) as base:
        phone = browser()
        url = start_game(phone, base)
        assert phone.locator("#live .live-insecure").is_hidden()
        phone.goto(url.replace("127.0.0.1", LAN_NAME))
        note = phone.locator("#live .live-insecure")
        note.wait_for()
        assert "erudit serve --https" in note.inner_text()
        assert phone.locator("#live .live-start").is_hidden()
        phone.locator("#live").scroll_into_view_if_needed()
        phone.screenshot(path=str(SCREENS / "17-camera-needs-https.png"))
        phone.context.close()           # its open connections would hold the server up


def test_a_server_camera_watches_until_it_stops_sending(tmp_path, films, browser):
    """A camera given to the server (here the film as a file) is chosen on the page; the
    moves appear; once it sends no more the game shows paused, and since when."""
    from companion_app.web import create_app

    app = create_app(tmp_path / "data", {"PHOTO_WORKERS": 0, "CAMERAS": [str(films["avi"])],
                                         "LIVE_SILENT_S": 1.0})
    with serving(app) as base:
        phone = browser()
        start_game(phone, base)
        choice = phone.locator("#live .live-cameras button")
        assert choice.all_inner_texts() == ["🎥 Камера 1: следить за доской"]
        choice.click()
        totals_are(phone, [5, 6], timeout=30_000)
        phone.wait_for_selector("#live[data-state='paused'] .live-since:not([hidden])")
        assert "Пауза: " in phone.inner_text("#live .live-status")
        assert re.fullmatch(r"Последний кадр пришёл \d+ секунд[уы]? назад\.",
                            phone.inner_text("#live .live-since"))
        assert_readable(phone)
        snap(phone, "19-camera-paused")
        phone.click("#live .live-stop")
        phone.wait_for_selector("#live[data-state='off']")
        phone.context.close()
