"""A short game played end to end in a real browser (Chromium on a phone-sized screen) against
the real server and the real photo pipeline, with rendered photos of each turn; and the table's
own matters with a scripted reader: pages kept in step by server push, the correction close-up,
Russian plurals, questions before a turn changes, photo upload, this device's games and the TV
scoreboard.

Screenshots of the main screens go to artifacts/screens/ (not part of the repository).
"""

from __future__ import annotations

import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np
import pytest
from test_web_helpers import (
    PHONE,
    TURN1,
    TURN2,
    TURN3,
    TV,
    FakeProposal,
    ScriptedReader,
    board_text,
    jpeg_bytes,
)

from engine.board import Board

SCREENS = Path(__file__).resolve().parent.parent / "artifacts" / "screens"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

# one pytest-xdist worker runs the whole module: one Chromium, one set of photo workers
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]


@contextmanager
def serving(app):
    """`app` served as `erudit serve` serves it (waitress) in a thread on 127.0.0.1; its base
    URL. On leaving, the open event streams end first, as when the server stops."""
    from companion_app.web import make_server
    from companion_app.web.events import close_streams

    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}"
    finally:
        close_streams(app)
        server.close()
        thread.join(timeout=10)


@pytest.fixture
def server(tmp_path):
    """The app served by the production server in a thread on 127.0.0.1."""
    from companion_app.web import create_app

    with serving(create_app(tmp_path / "data")) as url:
        yield url


@pytest.fixture(scope="module")
def chromium():
    """One Chromium for the module's tests; each test's pages get contexts of their own (their
    own cookies and storage), closed after it."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def phone(chromium):
    context = chromium.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True,
                                   has_touch=True, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


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
    send_photo(page, path)


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

    page.once("dialog", lambda d: d.accept())                      # "Борис пасует: …?"
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
    assert "Фото пустой доски game.png: на доске лежат фишки" in page.inner_text("#flash")
    page.set_input_files('input[name="empty"]', str(photo(tmp_path, "empty", EMPTY, 1)))
    page.set_input_files('input[name="alphabet"]', str(photo(tmp_path, "abc", ALPHABET, 2)))
    page.click("button.primary")
    page.wait_for_selector("#box-kitchen", timeout=120_000)  # two photos read by both networks
    assert "раскладка совпадает с правилами" in page.inner_text("#box-kitchen")
    snap(page, "09-box-setup")
    page.goto(server + "/")
    assert page.locator('select[name="profile"] option[value="kitchen"]').count() == 1


# -- the table's own matters, with a scripted reader (fast) ----------------------------------
@pytest.fixture
def table(tmp_path):
    """(base URL, scripted reader) of the app served by the production server."""
    from companion_app.web import create_app

    reader = ScriptedReader()
    with serving(create_app(tmp_path / "data", {"PROPOSE_TURN": reader})) as url:
        yield url, reader


def start_game(page, base: str, players=("Аня", "Борис")) -> str:
    page.goto(base + "/?lang=ru")
    for i, name in enumerate(players):
        page.fill(f'input[name="player"] >> nth={i}', name)
    page.fill('input[name="target"]', "")
    page.click("button.primary")
    page.wait_for_selector("#turn")
    page.wait_for_load_state()  # the page's script has run: this device remembers the game
    return page.url


def send_photo(page, path: Path) -> None:
    page.set_input_files('input[name="photo"]', str(path))
    # a process's first photo also starts the photo workers, which load the networks
    page.wait_for_selector("#pending", timeout=60_000)


def tiny_photo(tmp_path) -> Path:
    path = tmp_path / "photo.jpg"
    path.write_bytes(jpeg_bytes(640, 480))
    return path


def test_another_page_sees_a_confirm_without_reload(table, browser, tmp_path):
    base, reader = table
    anya, boris = browser(), browser()
    url = start_game(anya, base)
    boris.goto(url)
    boris.evaluate("window.stillTheSamePage = true")
    reader.boards.append(TURN1)
    send_photo(anya, tiny_photo(tmp_path))
    boris.wait_for_selector("#pending", timeout=3000)          # the proposal shows there too
    started = time.monotonic()
    anya.click("#pending button.primary")
    boris.wait_for_function(
        "document.querySelector('.scoreboard .total').textContent === '5'", timeout=3000)
    seen_after = time.monotonic() - started   # a figure (bench_load measures it), not a check
    assert boris.evaluate("window.stillTheSamePage") is True     # not reloaded
    assert "Ход 2: Борис" in boris.inner_text("#turn h2")
    (SCREENS.mkdir(parents=True, exist_ok=True))
    (SCREENS / "sync-seconds.txt").write_text(f"{seen_after:.3f}\n")


def unsure_turn(board: str, alternatives: list[dict]) -> FakeProposal:
    return FakeProposal(Board.parse(board), sure=False, alternatives=alternatives,
                        rectified_jpeg=jpeg_bytes(320, 320),
                        message="unsure reading: check the highlighted cells")


def test_the_correction_view_on_a_phone(table, browser, tmp_path):
    """Read as ИК with ИЛ allowed: a close-up of 44+ px cells marks only the doubtful cell,
    the other reading shows as its word and points, a correction keeps the page where it was,
    and the move put right is no longer unsure."""
    base, reader = table
    page = browser()
    start_game(page, base)
    reader.boards.append(unsure_turn(board_text({8: ".......ИК......"}), [
        {"tiles": [{"cell": "H8", "letter": "И"}, {"cell": "I8", "letter": "Л"}],
         "score": 3, "p": 0.3}]))
    send_photo(page, tiny_photo(tmp_path))
    assert page.inner_text(".turn-score .points") == "3 очка"
    assert "Распознавание не уверено" in page.inner_text("#pending")
    cells = page.locator(".zoom .cell")
    assert cells.count() == 3 * 4                                         # G–J × 7–9
    box = cells.first.bounding_box()
    assert box["width"] >= 44 and box["height"] >= 44
    value = page.locator('.zoom .cell[data-cell="H8"] sub').bounding_box()
    assert value["height"] >= 12
    doubtful = page.locator(".zoom .cell.doubtful")
    assert doubtful.evaluate_all("cells => cells.map(c => c.dataset.cell)") == ["I8"]
    assert page.locator(".board.tap .cell.doubtful").count() == 0
    reading = page.inner_text(".readings li")
    assert reading == "ИЛ — 3 очка"                              # not cells and odds
    snap(page, "10-correction-view")

    page.locator(".zoom").scroll_into_view_if_needed()
    at = page.evaluate("window.scrollY")
    page.click('.zoom .cell[data-cell="I8"]')
    page.wait_for_selector("#picker[open]")
    page.click('#picker .letters button[value="Л"]')
    page.wait_for_selector('.zoom .cell[data-cell="I8"][data-symbol="Л"]')
    assert abs(page.evaluate("window.scrollY") - at) < 40               # stayed in place
    assert page.locator(".zoom .cell.doubtful").count() == 0             # put right by hand
    assert "не уверено" not in page.inner_text("#pending")
    assert page.locator(".readings").count() == 0                      # it is the one shown
    snap(page, "11-corrected")
    page.click("#pending button.primary")
    page.wait_for_selector('#turn input[name="turn"][value="2"]', state="attached")
    assert page.inner_text("#history li >> nth=0 >> .words").strip() == "ИЛ 3"   # no "?"


def test_a_past_turn_changes_only_when_the_player_agrees(table, browser, tmp_path):
    base, reader = table
    page = browser()
    start_game(page, base)
    reader.boards.append(TURN1)
    send_photo(page, tiny_photo(tmp_path))
    page.click("#pending button.primary")
    page.wait_for_selector('#turn input[name="turn"][value="2"]', state="attached")
    questions = []

    def answer(dialog, agree):
        questions.append(dialog.message)
        dialog.accept() if agree else dialog.dismiss()

    page.once("dialog", lambda d: answer(d, False))
    page.click('.board.tap .cell[data-cell="G8"]')
    page.click('#picker .letters button[value="Ф"]')
    page.wait_for_function("!document.getElementById('picker').open")
    assert "Исправить G8 в ходе 1? Изменится:" in questions[0]
    assert "КОТ (5 очков) → ФОТ (13 очков)" in questions[0]
    assert "Счёт: Аня 5 → 13" in questions[0]
    assert page.locator(".scoreboard .total").all_inner_texts() == ["5", "0"]   # unchanged
    page.once("dialog", lambda d: answer(d, True))
    page.click('.board.tap .cell[data-cell="G8"]')
    page.click('#picker .letters button[value="Ф"]')
    page.wait_for_function("document.querySelector('.scoreboard .total').textContent === '13'")

    page.once("dialog", lambda d: answer(d, False))                    # a pass asks too
    page.click('button[name="exchange"][value="0"]')
    assert questions[-1] == "Борис пасует: очков нет, следующим ходит Аня. Записать пас?"
    assert "Ход 2: Борис" in page.inner_text("#turn h2")
    page.once("dialog", lambda d: answer(d, False))                    # and an exchange
    page.click('button[name="exchange"][value="1"]')
    assert "меняет фишки" in questions[-1]
    assert page.locator("#history li").count() == 1


def test_a_big_photo_is_shrunk_sent_with_progress_and_can_be_cancelled(table, browser,
                                                                       tmp_path):
    base, reader = table
    page = browser()
    start_game(page, base)
    big = tmp_path / "big.jpg"                      # 12 MP of noise: a camera-sized file
    noise = np.random.default_rng(7).integers(0, 255, (3000, 4000, 3), dtype=np.uint8)
    assert cv2.imwrite(str(big), noise, [cv2.IMWRITE_JPEG_QUALITY, 95])
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 20,
             "downloadThroughput": 1_000_000, "uploadThroughput": 125_000})   # 1 Mbit/s
    page.set_input_files('input[name="photo"]', str(big))
    page.wait_for_function("document.querySelector('.upload progress').value > 0")
    assert "Отправляю фото:" in page.inner_text(".upload-text")
    snap(page, "12-upload-progress")
    page.click(".upload .cancel")
    page.wait_for_selector(".upload", state="hidden")
    assert page.locator("#pending").count() == 0 and reader.calls == []
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 0,
             "downloadThroughput": -1, "uploadThroughput": -1})
    reader.boards.append(TURN1)
    send_photo(page, big)
    original = page.locator("#pending figcaption a").get_attribute("href")
    sent = page.request.get(base + original).body()
    size = cv2.imdecode(np.frombuffer(sent, np.uint8), cv2.IMREAD_COLOR).shape
    assert max(size[:2]) == 2560 and len(sent) < big.stat().st_size / 2


def test_this_devices_games_are_listed_at_home(table, browser):
    base, _ = table
    page = browser()
    first = start_game(page, base, ("Аня", "Борис"))
    second = start_game(page, base, ("Вера", "Глеб"))
    page.goto(base + "/")
    links = page.locator("#my-games a").evaluate_all("links => links.map(a => a.href)")
    assert links == [second, first]
    assert "Вера · Глеб" in page.inner_text("#my-games")
    snap(page, "13-my-games")
    page.click("#my-games li >> nth=0 >> button.forget")
    assert page.locator("#my-games a").count() == 1
    other = browser()                               # another device knows none
    other.goto(base + "/")
    assert other.locator("#my-games").is_hidden()


def test_the_tv_scoreboard_follows_the_game(table, browser, tmp_path):
    base, reader = table
    phone = browser()
    start_game(phone, base)
    tv_link = phone.locator("a:has-text('Табло')").get_attribute("href")
    tv = browser(TV)
    tv.goto(base + tv_link)
    assert tv.locator("form").count() == 0 and tv.locator("input").count() == 0
    board = tv.locator(".board").bounding_box()
    assert board["height"] > 0.8 * TV["height"]
    reader.boards.append(TURN1)
    send_photo(phone, tiny_photo(tmp_path))
    phone.click("#pending button.primary")
    tv.wait_for_function("document.querySelector('.scoreboard .total').textContent === '5'",
                         timeout=3000)
    assert "КОТ" in tv.inner_text(".last")
    tv.screenshot(path=str(SCREENS / "14-tv-scoreboard.png"))
    assert tv.request.post(base + tv_link + "/confirm").status in (403, 404, 405)
