"""The app at the table, through its HTTP interface: server push, the correction view's data,
corrections that ask first, the read-only scoreboard, and a board readable without colour."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

from test_web_helpers import (
    TURN1,
    TURN2,
    FakeProposal,
    board_text,
    jpeg_bytes,
    new_game,
    play_photo,
    post,
    state,
    upload,
)

from engine.board import Board
from engine.ruleset import load_ruleset

pytest_plugins = ["test_web_helpers"]   # the app, client and reader fixtures

CSS = Path(__file__).resolve().parent.parent / "companion_app" / "web" / "static" / "app.css"


# -- server push ------------------------------------------------------------------------
def events_of(client, game: str):
    response = client.get(f"/g/{game}/events", buffered=False)
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    return response, _states(response.response)


def _states(chunks):
    """The `state` of each event the stream sends, one at a time."""
    for chunk in chunks:
        text = chunk.decode() if isinstance(chunk, bytes) else chunk
        found = re.search(r'^data: \{"state": "(\w+)"\}$', text, re.M)
        if found:
            yield found.group(1)


def test_a_confirm_is_pushed_to_every_open_page_at_once(app, client, reader):
    game = new_game(client)
    response, states = events_of(app.test_client(), game)
    assert next(states) == state(client, game)["signature"]
    reader.boards.append(TURN1)
    pending = upload(client, game, 1).get_json()["pending"]
    assert next(states) == state(client, game)["signature"]       # the proposal, then …

    def confirm_soon():
        time.sleep(0.2)
        post(client, f"/g/{game}/confirm", {"turn": 1, "pending": pending["id"]})

    worker = threading.Thread(target=confirm_soon)
    started = time.monotonic()
    worker.start()
    after = next(states)                                           # … the confirm
    waited = time.monotonic() - started
    worker.join()
    assert after == state(client, game)["signature"]
    assert waited < 1.0
    response.close()


def test_streams_end_cleanly_when_the_server_stops(app, client):
    from companion_app.web.events import close_streams

    game = new_game(client)
    response, states = events_of(app.test_client(), game)
    next(states)
    threading.Timer(0.2, close_streams, [app]).start()
    started = time.monotonic()
    assert list(states) == []                                     # the stream simply ends
    assert time.monotonic() - started < 2
    response.close()


def test_streams_beyond_the_limit_say_the_state_and_end(app, client):
    """So that open pages never take every server thread from the photos and confirms."""
    app.config["EVENT_STREAMS"] = 1
    game = new_game(client)
    held, states = events_of(app.test_client(), game)
    next(states)
    started = time.monotonic()
    extra = app.test_client().get(f"/g/{game}/events")             # read to its end
    assert time.monotonic() - started < 1
    assert "retry: 3000" in extra.get_data(as_text=True)
    assert list(_states([extra.data])) == [state(client, game)["signature"]]
    held.close()                                                   # a place again
    _, states = events_of(app.test_client(), game)
    assert next(states) == state(client, game)["signature"]


def test_no_stream_for_a_game_that_does_not_exist(client):
    assert client.get("/g/" + "x" * 22 + "/events").status_code == 404


# -- correcting ---------------------------------------------------------------------------
def unsure(board: str, alternatives: list[dict]) -> FakeProposal:
    return FakeProposal(Board.parse(board), sure=False, alternatives=alternatives,
                        rectified_jpeg=jpeg_bytes(320, 320),
                        message="unsure reading: check the highlighted cells")


IK = board_text({8: ".......ИК......"})
IL = {"tiles": [{"cell": "H8", "letter": "И"}, {"cell": "I8", "letter": "Л"}], "score": 3,
      "p": 0.3}


def test_only_the_doubtful_cells_are_singled_out_and_readings_are_words(client, reader):
    game = new_game(client)
    reader.boards.append(unsure(IK, [IL]))
    pending = upload(client, game, 1).get_json()["pending"]
    assert pending["new"] == ["H8", "I8"] and pending["doubtful"] == ["I8"]
    assert pending["readings"] == [{"index": 0, "words": [{"word": "ИЛ", "at": "8H", "score": 3}],
                                    "score": 3, "cells": ["H8", "I8"], "legal": True}]
    assert pending["window"] == {"rows": [6, 8], "cols": [6, 9]}


def test_a_move_put_right_by_hand_is_no_longer_unsure(client, reader):
    game = new_game(client)
    reader.boards.append(unsure(IK, [IL]))
    pending = upload(client, game, 1).get_json()["pending"]
    assert not pending["sure"] and pending["message"]
    s = post(client, f"/g/{game}/cell", {"turn": 1, "cell": "I8", "symbol": "Л"}).get_json()
    assert s["pending"]["sure"] and s["pending"]["doubtful"] == [] and not s["pending"]["message"]
    assert s["pending"]["readings"] == []             # the reading shown is that one
    s = post(client, f"/g/{game}/confirm", {"turn": 1, "pending": pending["id"]}).get_json()
    assert s["moves"][0]["sure"] is True

    reader.boards.append(unsure(board_text({7: ".......Ж.......", 8: ".......ИЛ......"}), [
        {"tiles": [{"cell": "H7", "letter": "Ю"}], "score": 9, "p": 0.2}]))
    pending = upload(client, game, 2).get_json()["pending"]
    s = post(client, f"/g/{game}/alternative", {"turn": 2, "pending": pending["id"],
                                                "index": 0}).get_json()
    assert s["pending"]["sure"]                        # chosen by the players


def test_a_confirmed_unsure_turn_fixed_by_hand_becomes_sure(client, reader):
    game = new_game(client)
    reader.boards.append(unsure(TURN1, []))
    pending = upload(client, game, 1).get_json()["pending"]
    s = post(client, f"/g/{game}/confirm", {"turn": 1, "pending": pending["id"]}).get_json()
    assert s["moves"][0]["sure"] is False
    fix = {"turn": 2, "cell": "G8", "symbol": "Ф"}
    assert post(client, f"/g/{game}/cell", fix).status_code == 409      # asks first
    assert state(client, game)["moves"][0]["sure"] is False
    s = post(client, f"/g/{game}/cell", {**fix, "agree": "1"}).get_json()
    assert s["moves"][0]["sure"] is True and s["totals"] == [13, 0]


def test_without_script_the_page_asks_before_a_past_turn_changes(app, reader):
    phone = app.test_client()
    game = new_game(phone)
    play_photo(phone, reader, game, TURN1)
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', phone.get("/").get_data(
        as_text=True)).group(1)
    fix = {"csrf": csrf, "turn": "2", "cell": "G8", "symbol": "Ф"}
    page = phone.post(f"/g/{game}/cell", data=fix)
    html = page.get_data(as_text=True)
    assert page.status_code == 409 and "Исправить G8 в ходе 1? Изменится:" in html
    assert "КОТ (5 очков) → ФОТ (13 очков)" in html and 'name="agree" value="1"' in html
    assert phone.post(f"/g/{game}/cell", data={**fix, "agree": "1"}).status_code == 303
    assert state(phone, game)["totals"] == [13, 0]


def test_a_correction_that_changes_no_score_needs_no_question(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    play_photo(client, reader, game, TURN2)
    # a tile set to the letter it already has changes no score: nothing to ask
    response = post(client, f"/g/{game}/cell", {"turn": 3, "cell": "H8", "symbol": "О"})
    assert response.status_code == 200


# -- the page ----------------------------------------------------------------------------
def test_no_new_tiles_asks_whether_it_is_a_pass(app, reader):
    phone = app.test_client()
    game = new_game(phone)
    reader.boards.append(board_text({}))
    upload(phone, game, 1)
    page = phone.get(f"/g/{game}").get_data(as_text=True)
    assert "Новых фишек нет — пас?" in page and "0 очков" not in page


def test_words_are_placed_in_one_notation(app, reader):
    phone = app.test_client()
    game = new_game(phone)
    play_photo(phone, reader, game, TURN1)
    play_photo(phone, reader, game, TURN2)
    page = phone.get(f"/g/{game}/turn/2").get_data(as_text=True)
    assert "G6↓" in page and "6G" not in page
    page = phone.get(f"/g/{game}/turn/1").get_data(as_text=True)
    assert "G8→" in page and "8G" not in page


def test_the_game_page_says_things_in_words_and_points_in_plural(app, reader):
    phone = app.test_client()
    game = new_game(phone)
    reader.boards.append(TURN1)
    upload(phone, game, 1)
    page = phone.get(f"/g/{game}").get_data(as_text=True)
    assert re.search(r"<b>5</b>\s*очков", page)
    texts = re.search(r'<script type="application/json" id="texts">(.*?)</script>', page).group(1)
    assert "Нет связи с сервером" in texts                 # what the script says offline


# -- the scoreboard ------------------------------------------------------------------------
def test_the_scoreboard_has_its_own_read_only_link(app, client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    page = client.get(f"/g/{game}").get_data(as_text=True)
    link = re.search(r'href="(/tv/[^"]+)"', page).group(1)
    assert game not in link
    screen = app.test_client().get(link)                 # a TV: no cookie, no game link
    html = screen.get_data(as_text=True)
    assert screen.status_code == 200 and "КОТ" in html and ">5<" in html
    assert "<form" not in html and game not in html
    assert app.test_client().get(link + "/events", buffered=False).status_code == 200
    assert app.test_client().post(link).status_code in (403, 405)
    assert app.test_client().get("/tv/" + "A" * 22).status_code == 404


# -- premiums without colour ---------------------------------------------------------------
def _colours() -> dict:
    return dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", CSS.read_text()))


def contrast(a: str, b: str) -> float:
    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_premium_squares_read_without_colour(app, client):
    colours = _colours()
    for square, ink in (("l2", "l-ink"), ("l3", "l-ink"), ("w2", "w-ink"), ("w3", "w-ink")):
        assert contrast(colours[square], colours[ink]) >= 4.5, square    # the marks readable
    assert contrast(colours["w3"], colours["l2"]) >= 3                   # red and green differ
    game = new_game(client)
    page = app.test_client().get(f"/g/{game}").get_data(as_text=True)
    marks = re.findall(r'class="cell (l2|l3|w2|w3)"[^>]*>\s*<span class="mark">([^<]+)</span>',
                       page)
    assert {code: mark for code, mark in marks} == {"l2": "Б×2", "l3": "Б×3", "w2": "С×2",
                                                     "w3": "С×3"}
    layout = load_ruleset("erudit").layout
    premiums = sum(layout.premium(r, c) in "lLwW" for r in range(15) for c in range(15))
    assert len(marks) == premiums                        # each premium square carries its mark
    assert 'class="legend"' in page and "×3 слово" in page


def test_score_formulas_are_set_in_the_text_font():
    rule = re.search(r"\.formula \{([^}]*)\}", CSS.read_text()).group(1)
    assert "monospace" not in rule
