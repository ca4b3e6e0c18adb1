"""The web app's JSON API: a game played turn by turn, corrections, and every refusal."""

from __future__ import annotations

import io
import re
import struct
import threading

import cv2
import numpy as np
from test_web_helpers import (
    TURN1,
    TURN2,
    TURN3,
    board_text,
    csrf_of,
    jpeg_bytes,
    new_game,
    play_photo,
    post,
    state,
    upload,
)

from companion_app.web import create_app
from companion_app.web import db as webdb
from engine.errors import PhotoError

pytest_plugins = ["test_web_helpers"]   # the app, client and reader fixtures


# -- a game ------------------------------------------------------------------------------
def test_three_photo_turns_score_and_rotate_players(client, reader):
    game = new_game(client, players=("Аня", "Борис", "Вера"))
    s = play_photo(client, reader, game, TURN1)
    assert [m["score"] for m in s["moves"]] == [5]
    assert s["to_move"] == 1
    s = play_photo(client, reader, game, TURN2)
    s = play_photo(client, reader, game, TURN3)
    assert [m["score"] for m in s["moves"]] == [5, 6, 8]
    assert s["totals"] == [5, 6, 8]
    assert s["to_move"] == 0 and s["next_turn"] == 4
    assert s["moves"][1]["words"] == [{"word": "СОК", "at": "G6", "score": 6}]


def test_pending_proposal_shows_score_before_confirming(client, reader):
    game = new_game(client)
    reader.boards.append(TURN1)
    pending = upload(client, game, 1).get_json()["pending"]
    assert pending["move"]["score"] == 5
    assert sorted(pending["new"]) == ["G8", "H8", "I8"]
    assert pending["breakdown"][0]["word"] == "КОТ"
    assert state(client, game)["moves"] == []          # nothing scored until confirmed


def test_photo_files_are_named_by_the_server(client, reader, app, tmp_path):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    folder = tmp_path / "data" / "photos" / "1"
    move = state(client, game)["moves"][0]
    stem = move["photo"]["photo"].split("v=")[1]
    assert re.fullmatch(r"1-[0-9a-f]{12}", stem)
    assert sorted(p.name for p in folder.iterdir()) == [f"{stem}-board.jpg", f"{stem}-thumb.jpg",
                                                        f"{stem}.jpg"]
    for kind in ("photo", "board", "thumb"):
        response = client.get(move["photo"][kind])
        assert response.status_code == 200 and response.data[:2] == b"\xff\xd8"
    assert client.get(f"/g/{game}/img/..%2Fsecret-photo.jpg").status_code == 404
    assert client.get(f"/g/{game}/img/7-photo.jpg").status_code == 404


def test_pass_and_exchange_take_a_turn_without_a_photo(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    s = post(client, f"/g/{game}/pass", {"turn": 2, "exchange": "0"}).get_json()
    s = post(client, f"/g/{game}/pass", {"turn": 3, "exchange": "1"}).get_json()
    assert [(m["kind"], m["exchange"], m["score"]) for m in s["moves"][1:]] == [
        ("pass", False, 0), ("pass", True, 0)]
    assert s["to_move"] == 1


def test_undo_takes_back_the_last_turn_and_its_photo(client, reader, tmp_path):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    play_photo(client, reader, game, TURN2)
    s = post(client, f"/g/{game}/undo", {"turn": 3}).get_json()
    assert [m["score"] for m in s["moves"]] == [5] and s["next_turn"] == 2
    assert len(list((tmp_path / "data" / "photos" / "1").iterdir())) == 3   # turn 1's only
    s = play_photo(client, reader, game, TURN2)
    assert s["totals"] == [5, 6]


def test_undo_with_no_turns_is_refused(client):
    game = new_game(client)
    response = post(client, f"/g/{game}/undo", {"turn": 1})
    assert response.status_code == 409
    assert "nothing to undo" in response.get_json()["error"]


def test_fix_a_confirmed_tile_rescores_every_later_turn(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    play_photo(client, reader, game, TURN2)
    # К (2 points) read where the box has Ф (10): turn 1 and turn 2 both use that tile.
    # The player is told first what will change, and nothing changes until they agree.
    fix = {"turn": 3, "cell": "G8", "symbol": "Ф"}
    asked = post(client, f"/g/{game}/cell", fix)
    assert asked.status_code == 409
    assert asked.get_json()["changes"] == [
        "Turn 1 (Аня): КОТ (5 points) → ФОТ (13 points)",
        "Turn 2 (Борис): СОК (6 points) → СОФ (14 points)",
        "Score: Аня 5 → 13, Борис 6 → 14"]
    assert state(client, game)["totals"] == [5, 6]
    s = post(client, f"/g/{game}/cell", {**fix, "agree": "1"}).get_json()
    assert [m["score"] for m in s["moves"]] == [13, 14]
    assert s["board"][7] == "......ФОТ......"
    assert s["totals"] == [13, 14]


def test_a_star_on_the_board_gets_its_letter(client, reader):
    game = new_game(client)
    reader.boards.append(board_text({8: "......К*Т......"}))
    pending = upload(client, game, 1).get_json()["pending"]
    assert pending["stars"] == ["H8"]
    s = post(client, f"/g/{game}/cell", {"turn": 1, "cell": "H8", "symbol": "о"}).get_json()
    assert s["pending"]["board"][7] == "......КоТ......"
    assert s["pending"]["stars"] == [] and s["pending"]["move"]["score"] == 4  # star scores 0
    s = post(client, f"/g/{game}/confirm", {"turn": 1, "pending": s["pending"]["id"]}).get_json()
    assert s["moves"][0]["words"][0]["word"] == "КоТ"


def test_correcting_the_pending_board_changes_the_proposal(client, reader):
    game = new_game(client)
    reader.boards.append(TURN1)
    pid = upload(client, game, 1).get_json()["pending"]["id"]
    s = post(client, f"/g/{game}/cell", {"turn": 1, "cell": "J8", "symbol": "Ы"}).get_json()
    assert s["pending"]["id"] == pid and s["pending"]["move"]["score"] == 10   # КОТЫ
    s = post(client, f"/g/{game}/cell", {"turn": 1, "cell": "H8", "symbol": "."}).get_json()
    assert s["pending"]["error"] and s["pending"]["move"] is None
    response = post(client, f"/g/{game}/confirm", {"turn": 1, "pending": pid})
    assert response.status_code == 422 and not state(client, game)["moves"]


def test_removing_a_confirmed_tile_is_refused(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    response = post(client, f"/g/{game}/cell", {"turn": 2, "cell": "H8", "symbol": "."})
    assert response.status_code == 409 and "undo" in response.get_json()["error"]


def test_discard_drops_the_proposal_and_its_files(client, reader, tmp_path):
    game = new_game(client)
    reader.boards.append(TURN1)
    upload(client, game, 1)
    s = post(client, f"/g/{game}/discard").get_json()
    assert s["pending"] is None
    assert list((tmp_path / "data" / "photos").glob("*/*")) == []


def test_a_new_photo_replaces_the_pending_one(client, reader):
    game = new_game(client)
    reader.boards += [TURN1, board_text({8: ".....ТОК......."})]
    first = upload(client, game, 1).get_json()["pending"]["id"]
    second = upload(client, game, 1).get_json()["pending"]["id"]
    response = post(client, f"/g/{game}/confirm", {"turn": 1, "pending": first})
    assert response.status_code == 409
    s = post(client, f"/g/{game}/confirm", {"turn": 1, "pending": second}).get_json()
    assert s["moves"][0]["words"][0]["word"] == "ТОК"


def test_strict_word_check_refuses_a_non_word(client, reader):
    game = new_game(client, word_check="strict")
    reader.boards.append(board_text({8: "......КТО......"}))
    pending = upload(client, game, 1).get_json()["pending"]
    assert "not allowed" in pending["error"]
    response = post(client, f"/g/{game}/confirm", {"turn": 1, "pending": pending["id"]})
    assert response.status_code == 422 and state(client, game)["moves"] == []


def test_target_reached_ends_the_round_and_names_the_winner(client, reader):
    game = new_game(client, target="5")
    s = play_photo(client, reader, game, TURN1)
    assert not s["finished"] and s["to_move"] == 1      # Борис still has his turn
    s = post(client, f"/g/{game}/pass", {"turn": 2}).get_json()
    assert s["finished"] and s["winner"] == 0 and s["to_move"] is None
    reader.boards.append(TURN2)
    response = upload(client, game, 3)
    assert response.status_code == 409 and "over" in response.get_json()["error"]


def test_end_game_by_agreement(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    s = post(client, f"/g/{game}/end", {"turn": 2}).get_json()
    assert s["finished"] and s["winner"] == 0


def test_dispute_view_explains_the_score(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    play_photo(client, reader, game, TURN2)
    data = client.get(f"/g/{game}/turn/2", headers={"Accept": "application/json"}).get_json()
    word = data["breakdown"][0]
    assert word["word"] == "СОК" and word["score"] == 6
    assert [le["premium"] for le in word["letters"]] == [None, "×2 letter", None]
    page = client.get(f"/g/{game}/turn/2?lang=en").get_data(as_text=True)
    assert "С2 + О1×2 + К2 = 6" in page and "already on the board" in page
    assert client.get(f"/g/{game}/turn/9").status_code == 400


def test_word_check(client):
    game = new_game(client)
    ask = {"Accept": "application/json"}
    assert client.get(f"/g/{game}/word?w=пихта", headers=ask).get_json()["ok"] is True
    verdict = client.get(f"/g/{game}/word?w=кота", headers=ask).get_json()
    assert verdict["ok"] is False and verdict["reason"] == "not in the nominative singular"
    assert client.get(f"/g/{game}/word?w=", headers=ask).status_code == 400


def test_gcg_export(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    post(client, f"/g/{game}/pass", {"turn": 2})
    response = client.get(f"/g/{game}/game.gcg")
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    lines = response.get_data(as_text=True).splitlines()
    assert "#player1 Аня Аня" in lines and "#ruleset erudit" in lines
    assert ">Аня: КОТ 8G КОТ +5 5" in lines and ">Борис: - +0 0" in lines


def test_games_survive_a_restart(tmp_path, reader):
    first = create_app(tmp_path / "data", {"PROPOSE_TURN": reader}).test_client()
    game = new_game(first)
    play_photo(first, reader, game, TURN1)
    play_photo(first, reader, game, TURN2)
    reader.boards.append(TURN3)
    upload(first, game, 3)                          # a pending photo, not yet confirmed
    second = create_app(tmp_path / "data", {"PROPOSE_TURN": reader}).test_client()
    s = state(second, game)
    assert [m["score"] for m in s["moves"]] == [5, 6] and s["totals"] == [5, 6]
    assert s["pending"]["move"]["score"] == 8
    assert second.get(s["moves"][0]["photo"]["board"]).status_code == 200


def test_several_games_at_once_stay_apart(client, reader):
    one, two = new_game(client), new_game(client, players=("Ира", "Олег", "Пётр"))
    play_photo(client, reader, one, TURN1)
    assert state(client, two)["moves"] == [] and state(client, one)["totals"] == [5, 0]
    assert one not in client.get("/").get_data(as_text=True)


# -- refusals ----------------------------------------------------------------------------
def test_new_game_settings_are_checked(client):
    token = csrf_of(client)
    ask = {"Accept": "application/json"}
    bad = [({"player": ["Аня"]}, "2–4 players"),
           ({"player": ["А", "Б"], "ruleset": "../../etc/passwd"}, "unknown ruleset"),
           ({"player": ["А", "Б"], "target": "много"}, "whole number"),
           ({"player": ["А", "Б"], "target": "9" * 30}, "whole number up to 10000"),
           ({"player": ["А", "Б"], "profile": "nobox"}, "unknown profile 'nobox'"),
           ({"player": ["А", "Б"], "word_check": "maybe"}, "word check"),
           ({"player": ["А", "А"]}, "same name"),
           ({"player": ["А", "Б"], "profile": "../x"}, "profile name")]
    for form, reason in bad:
        response = client.post("/games", data={"csrf": token, **form}, headers=ask)
        assert response.status_code in (400, 409), form
        assert reason in response.get_json()["error"], (form, response.get_json())


def test_missing_or_wrong_csrf_token_is_refused(client, reader):
    game = new_game(client)
    ask = {"Accept": "application/json"}
    assert client.post(f"/g/{game}/pass", data={"turn": 1}, headers=ask).status_code == 403
    response = client.post(f"/g/{game}/pass", data={"turn": 1, "csrf": "forged"}, headers=ask)
    assert response.status_code == 403
    assert client.post("/games", data={"player": ["А", "Б"]}, headers=ask).status_code == 403
    other = create_app(client.application.config["DATA_DIR"]).test_client()
    stolen = csrf_of(other)                     # a token of another session
    response = client.post(f"/g/{game}/pass", data={"turn": 1, "csrf": stolen}, headers=ask)
    assert response.status_code == 403
    assert state(client, game)["moves"] == []


def test_a_request_from_another_site_is_refused(client):
    game = new_game(client)
    response = post(client, f"/g/{game}/pass", {"turn": 1},
                    headers={"Origin": "http://evil.example"})
    assert response.status_code == 403 and "another site" in response.get_json()["error"]
    response = post(client, f"/g/{game}/pass", {"turn": 1}, headers={"Origin": "http://localhost"})
    assert response.status_code == 200


def test_a_wrong_game_token_is_not_found(client):
    game = new_game(client)
    wrong = game[:-2] + ("AA" if not game.endswith("AA") else "BB")
    assert client.get(f"/g/{wrong}").status_code == 404
    assert post(client, f"/g/{wrong}/pass", {"turn": 1}).status_code == 404
    assert client.get(f"/g/{wrong}/game.gcg").status_code == 404
    assert client.get("/g/short").status_code == 404


def test_a_stale_turn_number_is_a_conflict(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    response = post(client, f"/g/{game}/pass", {"turn": 1})
    assert response.status_code == 409 and "next turn is 2" in response.get_json()["error"]
    reader.boards.append(TURN2)
    assert upload(client, game, 1).status_code == 409
    assert post(client, f"/g/{game}/undo", {"turn": 5}).status_code == 409
    assert post(client, f"/g/{game}/pass", {"turn": "two"}).status_code == 400


def test_an_upload_over_the_size_limit_is_refused(tmp_path, reader):
    from companion_app.web import MAX_UPLOAD

    assert MAX_UPLOAD == 25 * 1024 * 1024
    small = create_app(tmp_path / "d", {"PROPOSE_TURN": reader, "MAX_CONTENT_LENGTH": 100_000})
    client = small.test_client()
    client.set_cookie("lang", "en")
    game = new_game(client)
    response = upload(client, game, 1, data=b"\xff\xd8" + bytes(150_000))
    assert response.status_code == 413 and "larger than" in response.get_json()["error"]
    assert reader.calls == []


def test_a_file_that_is_not_an_image_is_refused(client, reader, tmp_path):
    game = new_game(client)
    for data in (b"%PDF-1.4 hello", b"\x89PNG\r\n\x1a\n" + bytes(40)):
        response = upload(client, game, 1, data=data)
        assert response.status_code == 422 and "not a photo" in response.get_json()["error"]
    response = upload(client, game, 1, data=jpeg_bytes()[:300])   # a header, then nothing
    assert response.status_code == 422
    assert response.get_json()["error"] == "board.jpg: not an image"
    heic = b"\0\0\0\x18ftypheic\0\0\0\0mif1heic" + bytes(500)
    response = upload(client, game, 1, data=heic)
    assert response.status_code == 422
    assert response.get_json()["error"].startswith("a HEIC photo cannot be opened here")
    assert reader.calls == []
    assert not list((tmp_path / "data" / "photos").glob("*/*"))


def test_a_photo_cut_short_in_sending_is_refused(client, reader, tmp_path):
    game = new_game(client)
    whole = jpeg_bytes(640, 480)
    response = upload(client, game, 1, data=whole[:len(whole) * 9 // 10])
    assert response.status_code == 422 and "incomplete" in response.get_json()["error"]
    assert reader.calls == []
    assert play_photo(client, reader, game, TURN1)["moves"][0]["score"] == 5  # sent whole


def test_a_damaged_photo_is_refused(client, reader):
    game = new_game(client)
    broken = bytearray(jpeg_bytes(640, 480))
    broken[len(broken) // 2:len(broken) // 2 + 2] = b"\xff\xd0"  # a stray restart marker
    response = upload(client, game, 1, data=bytes(broken))
    assert response.status_code == 422 and "damaged" in response.get_json()["error"]
    assert reader.calls == []


def _png_claiming(width: int, height: int) -> bytes:
    ok, buf = cv2.imencode(".png", np.zeros((8, 8, 3), np.uint8))
    data = bytearray(buf.tobytes())
    data[16:24] = struct.pack(">II", width, height)   # IHDR size, CRC left stale
    return bytes(data)


def _jpeg_claiming(width: int, height: int) -> bytes:
    data = bytearray(jpeg_bytes())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def test_a_decompression_bomb_is_refused_from_its_header(client, reader):
    game = new_game(client)
    for data in (_png_claiming(30_000, 30_000), _jpeg_claiming(65_000, 65_000)):
        response = upload(client, game, 1, data=data)
        assert response.status_code == 413, response.get_json()
        assert "megapixels" in response.get_json()["error"]
    assert reader.calls == []


def test_header_sizes_of_real_images():
    from companion_app.web.uploads import image_size

    image = np.zeros((37, 53, 3), np.uint8)
    for ext, params in ((".jpg", []), (".png", []), (".webp", [cv2.IMWRITE_WEBP_QUALITY, 80]),
                        (".webp", [cv2.IMWRITE_WEBP_QUALITY, 101])):
        ok, buf = cv2.imencode(ext, image, params)
        assert ok
        assert image_size(buf.tobytes())[1:] == (53, 37), ext


def test_a_photo_without_a_board_is_a_clear_error(client, reader, tmp_path):
    game = new_game(client)
    reader.boards.append(PhotoError("board.jpg: no board found"))
    response = upload(client, game, 1)
    assert response.status_code == 422
    assert response.get_json()["error"] == "board.jpg: no board found"
    assert state(client, game)["pending"] is None
    assert list((tmp_path / "data" / "photos").glob("*/*")) == []


def test_a_photo_error_shows_on_the_game_page(client, reader):
    game = new_game(client)
    reader.boards.append(PhotoError("board.jpg: board too small"))
    payload = {"turn": "1", "csrf": csrf_of(client),
               "photo": (io.BytesIO(jpeg_bytes()), "board.jpg")}
    response = client.post(f"/g/{game}/photo", data=payload, content_type="multipart/form-data")
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "board.jpg: board too small" in page and 'id="board"' in page


def test_two_phones_confirming_the_same_turn_score_it_once(app, reader):
    phones = [app.test_client(), app.test_client()]
    game = new_game(phones[0])
    reader.boards.append(TURN1)
    pid = upload(phones[0], game, 1).get_json()["pending"]["id"]
    tokens = [csrf_of(p) for p in phones]
    start, codes = threading.Barrier(2), []

    def confirm(phone, token):
        start.wait()
        response = phone.post(f"/g/{game}/confirm", data={"turn": 1, "pending": pid},
                              headers={"Accept": "application/json", "X-CSRF-Token": token})
        codes.append(response.status_code)

    threads = [threading.Thread(target=confirm, args=pair) for pair in zip(phones, tokens,
                                                                           strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200, 409]
    s = state(phones[1], game)
    assert len(s["moves"]) == 1 and s["totals"] == [5, 0]


def test_two_phones_passing_at_once_make_one_turn(app):
    phones = [app.test_client() for _ in range(4)]
    game = new_game(phones[0])
    tokens = [csrf_of(p) for p in phones]
    start, codes = threading.Barrier(len(phones)), []

    def pass_turn(phone, token):
        start.wait()
        codes.append(phone.post(f"/g/{game}/pass", data={"turn": 1}, headers={
            "Accept": "application/json", "X-CSRF-Token": token}).status_code)

    threads = [threading.Thread(target=pass_turn, args=pair)
               for pair in zip(phones, tokens, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200, 409, 409, 409]
    assert len(state(phones[0], game)["moves"]) == 1


def test_another_reading_can_be_taken(client, reader):
    game = new_game(client)
    reader.boards.append(TURN1)
    pid = upload(client, game, 1).get_json()["pending"]["id"]
    # The scripted reader offers no alternatives; store one as the pipeline would.
    with client.application.app_context():
        conn = webdb.connect(webdb.database_path())
        conn.execute("UPDATE pending SET alternatives = ?", (
            '[{"tiles": [{"cell": "G8", "letter": "Ф"}, {"cell": "H8", "letter": "О"}, '
            '{"cell": "I8", "letter": "Т"}], "score": 13, "p": 0.2}]',))
        conn.close()
    s = post(client, f"/g/{game}/alternative", {"turn": 1, "pending": pid, "index": 0}).get_json()
    assert s["pending"]["board"][7] == "......ФОТ......" and s["pending"]["move"]["score"] == 13
    response = post(client, f"/g/{game}/alternative", {"turn": 1, "pending": pid, "index": 3})
    assert response.status_code == 400


def test_a_bug_in_the_photo_step_is_one_line_not_a_traceback(client, reader):
    game = new_game(client)
    reader.boards.append(ZeroDivisionError("division by zero"))
    response = upload(client, game, 1)
    assert response.status_code == 500
    assert response.get_json()["error"] == "internal error: ZeroDivisionError: division by zero"
    assert state(client, game)["pending"] is None
