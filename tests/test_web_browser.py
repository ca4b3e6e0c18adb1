"""A short game played end to end in a real browser (Chromium on a phone-sized screen) against
the real server and the real photo pipeline, with rendered photos of each turn.

Screenshots of the main screens go to artifacts/screens/ (not part of the repository).
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import cv2
import pytest
from test_web_helpers import TURN1, TURN2, TURN3

SCREENS = Path(__file__).resolve().parent.parent / "artifacts" / "screens"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PHONE = {"width": 390, "height": 844}

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path):
    """The app served by a real HTTP server in a thread on 127.0.0.1."""
    from werkzeug.serving import make_server

    from companion_app.web import create_app

    httpd = make_server("127.0.0.1", 0, create_app(tmp_path / "data"), threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    thread.join(timeout=10)


@pytest.fixture
def phone():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True,
                                      has_touch=True, accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(30_000)
        yield page
        context.close()
        browser.close()


@pytest.fixture
def photos(tmp_path):
    """Rendered phone photos of the board after turns 1–3 (JPEG files)."""
    try:
        import companion_app.photos  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"the photo pipeline companion_app.photos cannot be imported: {exc}")
    from synth.render import render_photo

    paths = []
    for number, board in enumerate((TURN1, TURN2, TURN3), 1):
        shot = render_photo(board.split("\n"), seed=700 + number, style="erudit-black",
                            pose="frontal")
        path = tmp_path / f"turn{number}.jpg"
        assert cv2.imwrite(str(path), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        paths.append(path)
    return paths


def snap(page, name: str) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / f"{name}.png"), full_page=True)


def photo_turn(page, path: Path) -> None:
    """Take the photo (the camera input sends itself) and wait for the proposal."""
    page.set_input_files('input[name="photo"]', str(path))
    page.wait_for_selector("#pending")


def confirm(page, next_turn: int) -> None:
    page.click("#pending button.primary")
    page.wait_for_selector(f'#turn input[name="turn"][value="{next_turn}"]', state="attached")


def totals(page) -> list[str]:
    return page.locator(".scoreboard .total").all_inner_texts()


def test_a_short_game_in_the_browser(server, phone, photos, tmp_path):
    page = phone
    page.goto(server + "/?lang=ru")
    snap(page, "01-home")
    page.fill('input[name="player"] >> nth=0', "Аня")
    page.fill('input[name="player"] >> nth=1', "Борис")
    page.fill('input[name="target"]', "100")
    page.click("button.primary")
    page.wait_for_selector("#turn")
    assert "/g/" in page.url
    snap(page, "02-game-start")

    photo_turn(page, photos[0])
    assert "Ход 1" in page.inner_text("#pending h2")
    assert page.locator(".board.tap .cell.new").count() == 3
    snap(page, "03-proposal")
    confirm(page, 2)
    photo_turn(page, photos[1])
    confirm(page, 3)
    assert totals(page) == ["5", "6"]

    # Turn 3 read as ТОРТ; the player taps I11 and makes it ТОРФ.
    photo_turn(page, photos[2])
    assert page.inner_text(".turn-score b") == "8"
    page.click('.board.tap .cell[data-cell="I11"]')
    page.wait_for_selector("#picker[open]")
    snap(page, "04-letter-picker")
    page.click('#picker .letters button[value="Ф"]')
    page.wait_for_function("document.querySelector('.turn-score b')?.textContent === '16'")
    confirm(page, 4)
    assert totals(page) == ["21", "6"]

    page.click('button[name="exchange"][value="0"]')             # Борис passes…
    page.wait_for_selector('#turn input[name="turn"][value="5"]', state="attached")
    assert "пас" in page.inner_text("#history li >> nth=0")
    page.once("dialog", lambda d: d.accept())
    page.click("#history form button:has-text('Отменить ход 4')")   # …and takes it back
    page.wait_for_selector('#turn input[name="turn"][value="4"]', state="attached")
    assert "Ход 4: Борис" in page.inner_text("#turn h2")
    assert totals(page) == ["21", "6"]
    snap(page, "05-scoreboard")

    page.click("#history li >> nth=0 >> a:has-text('3.')")
    page.wait_for_selector(".dispute")
    assert "Т2 + О1×2 + Р2 + Ф10 = 16" in page.inner_text(".dispute")
    snap(page, "06-dispute")
    page.fill('#check input[name="w"]', "торф")
    page.click("#check button")
    assert "можно" in page.inner_text(".verdict")

    page.go_back()
    page.go_back()
    page.wait_for_selector("#history")
    with page.expect_download() as download:
        page.click("a:has-text('Скачать GCG')")
    record = Path(download.value.path()).read_text("utf-8")
    assert ">Аня: ОРФ I8 .ОРФ +16 21" in record.splitlines()

    page.click("a[hreflang=en]")
    page.wait_for_selector("#turn")
    assert "Turn 4: Борис" in page.inner_text("#turn h2")
    snap(page, "07-game-english")
    page.locator("#join").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENS / "08-join.png"))


def test_a_box_calibrated_in_the_browser(server, phone, tmp_path):
    """The setup page from a phone: a wrong photo is refused on the page, the right two make
    the box, and the new-game form then offers it."""
    from test_calibration import ALPHABET, BOARD, EMPTY, photo

    page = phone
    page.goto(server + "/?lang=ru")
    page.click("a:has-text('Откалибровать набор')")
    page.wait_for_selector('input[name="empty"]')
    page.fill('input[name="name"]', "kitchen")
    page.set_input_files('input[name="empty"]', str(photo(tmp_path, "game", BOARD, 4)))
    page.click("button.primary")
    page.wait_for_selector("#flash:not([hidden])")
    assert "фото пустой доски game.png: на " in page.inner_text("#flash")
    page.set_input_files('input[name="empty"]', str(photo(tmp_path, "empty", EMPTY, 1)))
    page.set_input_files('input[name="alphabet"]', str(photo(tmp_path, "abc", ALPHABET, 2)))
    page.click("button.primary")
    page.wait_for_selector("#box-kitchen")
    assert "раскладка совпадает с правилами" in page.inner_text("#box-kitchen")
    snap(page, "09-box-setup")
    page.goto(server + "/")
    assert page.locator('select[name="profile"] option[value="kitchen"]').count() == 1
