"""The web app's pages: Russian by default, English on request, plain forms without script."""

from __future__ import annotations

import io
import re
from pathlib import Path

from test_web_helpers import (
    TURN1,
    TURN2,
    csrf_of,
    jpeg_bytes,
    new_game,
    play_photo,
)

TEMPLATES = Path(__file__).resolve().parent.parent / "companion_app" / "web" / "templates"

pytest_plugins = ["test_web_helpers"]   # the app, client and reader fixtures


def test_home_is_russian_by_default_and_lists_no_games(app):
    phone = app.test_client()
    page = phone.get("/").get_data(as_text=True)
    assert '<html lang="ru">' in page and "Новая игра" in page and "Начать игру" in page
    assert "/g/" not in page


def test_english_is_chosen_by_query_and_remembered(app):
    phone = app.test_client()
    page = phone.get("/?lang=en").get_data(as_text=True)
    assert '<html lang="en">' in page and "New game" in page
    assert "New game" in phone.get("/").get_data(as_text=True)        # from the cookie
    assert "Новая игра" in phone.get("/?lang=ru").get_data(as_text=True)
    assert "Новая игра" in phone.get("/?lang=xx").get_data(as_text=True)


def test_the_whole_game_works_with_plain_forms(app, reader):
    phone = app.test_client()
    token = csrf_of(phone)
    response = phone.post("/games", data={"csrf": token, "player": ["Аня", "Борис"],
                                          "ruleset": "erudit", "target": "150",
                                          "word_check": "warn"})
    assert response.status_code == 303
    game_url = response.headers["Location"]
    page = phone.get(game_url).get_data(as_text=True)
    assert 'capture="environment"' in page and 'accept="image/*"' in page
    assert page.count('class="cell') == 225
    assert "<svg" in page and game_url in page                      # QR code and join link
    assert "Игра до 150 очков" in page
    reader.boards.append(TURN1)
    response = phone.post(game_url + "/photo", content_type="multipart/form-data", data={
        "csrf": token, "turn": "1", "photo": (io.BytesIO(jpeg_bytes()), "p.jpg")})
    assert response.status_code == 303
    page = phone.get(game_url).get_data(as_text=True)
    assert "Ход 1: проверьте, что прочитано" in page and "Подтвердить" in page
    assert page.count(" tile new") == 6       # КОТ highlighted on the board and in the close-up
    pid = re.search(r'name="pending" value="([0-9a-f]+)"', page).group(1)
    response = phone.post(game_url + "/confirm", data={"csrf": token, "turn": "1",
                                                       "pending": pid})
    assert response.status_code == 303
    page = phone.get(game_url).get_data(as_text=True)
    assert "Ход 2: Борис" in page and "КОТ 5" in page


def test_a_stale_form_shows_the_reason_in_russian(client, reader, app):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    phone = app.test_client()
    token = csrf_of(phone)
    response = phone.post(f"/g/{game}/pass", data={"csrf": token, "turn": "1"})
    assert response.status_code == 409
    page = response.get_data(as_text=True)
    assert "Игра ушла вперёд (следующий ход 2, а не 1)" in page          # as a sentence
    response = phone.post(f"/g/{game}/pass", data={"csrf": token, "turn": "1"},
                          headers={"Accept": "application/json"})
    assert response.get_json()["error"].startswith("игра ушла вперёд")


def test_unknown_game_page_in_both_languages(app):
    phone = app.test_client()
    assert "Такой игры нет" in phone.get("/g/" + "x" * 22).get_data(as_text=True)
    response = phone.get("/g/" + "x" * 22 + "?lang=en")
    assert response.status_code == 404 and "No such game" in response.get_data(as_text=True)


def test_dispute_page_in_russian(client, reader, app):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    play_photo(client, reader, game, TURN2)
    phone = app.test_client()
    page = phone.get(f"/g/{game}/turn/2").get_data(as_text=True)
    assert "С2 + О1×2 + К2 = 6" in page and "×2 буква" in page and "уже на доске" in page
    assert "нарицательное существительное" in page


def test_history_shows_thumbnails_and_links_to_disputes(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    page = client.get(f"/g/{game}").get_data(as_text=True)
    assert f"/g/{game}/img/1-thumb.jpg" in page and f"/g/{game}/turn/1" in page
    assert "Unseen tiles" in page and "(128)" in page     # 128 letters + 3 stars, less КОТ


def test_word_check_page(client):
    game = new_game(client)
    page = client.get(f"/g/{game}/word?w=москва&lang=ru").get_data(as_text=True)
    assert "МОСКВА" in page and "нельзя" in page and "имя собственное" in page


def test_the_turn_card_tells_the_player_to_photograph_from_above(app):
    phone = app.test_client()
    game = new_game(phone)
    page = phone.get(f"/g/{game}").get_data(as_text=True)
    assert "Встаньте и держите телефон над доской" in page
    english = phone.get(f"/g/{game}?lang=en").get_data(as_text=True)
    assert "Stand and hold the phone above the board" in english
