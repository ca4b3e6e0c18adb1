"""The web app against a careless or hostile network: games keep the rules they started with,
the disk cannot be filled, odd input gets one clear line, other sites are refused."""

from __future__ import annotations

import threading

import cv2
import numpy as np
import pytest
from conftest import write_ruleset
from test_web_helpers import (
    TURN1,
    TURN2,
    csrf_of,
    jpeg_bytes,
    new_game,
    new_game_with,
    play_photo,
    post,
    state,
    upload,
)

pytest_plugins = ["test_web_helpers"]   # the app, client and reader fixtures

# one pytest-xdist worker runs the whole module, so its module fixtures are made once
pytestmark = pytest.mark.xdist_group("web_safety")


# -- a game keeps its rules ---------------------------------------------------------------
def test_a_game_keeps_the_ruleset_it_started_with(client, reader, tmp_path):
    rulesets = tmp_path / "data" / "rulesets"
    write_ruleset(rulesets, "home", bonus=15)
    game = new_game_with(client, ruleset="home")
    assert play_photo(client, reader, game, TURN1)["totals"] == [5, 0]
    values = {"К": [6, 5]}                                  # the file edited: К worth 5
    write_ruleset(rulesets, "home", tiles={**_tiles(), **values})
    assert state(client, game)["totals"] == [5, 0]
    later = new_game_with(client, ruleset="home")
    assert play_photo(client, reader, later, TURN1)["totals"] == [8, 0]


def _tiles() -> dict:
    import json

    from conftest import REPO

    return json.loads((REPO / "engine" / "rulesets" / "erudit.json").read_text("utf-8"))["tiles"]


def test_a_game_stored_without_its_rules_gets_them_once(tmp_path, reader):
    import sqlite3

    from companion_app.web import create_app

    client = create_app(tmp_path / "data", {"PROPOSE_TURN": reader}).test_client()
    write_ruleset(tmp_path / "data" / "rulesets", "home")
    game = new_game_with(client, ruleset="home")
    with sqlite3.connect(tmp_path / "data" / "games.sqlite3") as conn:   # as an older version
        conn.execute("UPDATE games SET rules = NULL")
    client = create_app(tmp_path / "data", {"PROPOSE_TURN": reader}).test_client()
    write_ruleset(tmp_path / "data" / "rulesets", "home", bonus=99, rack=3)
    assert state(client, game)["players"] == ["Аня", "Борис"]
    with sqlite3.connect(tmp_path / "data" / "games.sqlite3") as conn:
        rules = conn.execute("SELECT rules FROM games").fetchone()[0]
    assert '"rack": 7' in rules and '"bonus": 15' in rules


# -- odd input: one clear line, never a 500 -----------------------------------------------
def test_odd_form_values_get_one_short_line(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    long_cell = "H" + "1" * 5000
    answer = post(client, f"/g/{game}/cell", {"turn": 2, "cell": long_cell, "symbol": "А"})
    assert answer.status_code == 400
    assert answer.get_json()["error"].startswith("bad cell name 'H1111111111111111111'…")
    assert len(answer.get_json()["error"]) < 120
    for cell in ("H²", "H٣", "Z8"):
        answer = post(client, f"/g/{game}/cell", {"turn": 2, "cell": cell, "symbol": "А"})
        assert answer.status_code == 400 and "bad cell name" in answer.get_json()["error"]
    for turn in ("²", "9" * 5000):
        answer = post(client, f"/g/{game}/pass", {"turn": turn})
        assert answer.status_code == 400 and "whole number" in answer.get_json()["error"]
    ask = {"Accept": "application/json", "X-CSRF-Token": csrf_of(client)}
    for target in ("²", "١٢٠", "9" * 5000):
        answer = client.post("/games", headers=ask, data={"player": ["А", "Б"], "target": target})
        assert answer.status_code == 400, target
        assert "whole number up to" in answer.get_json()["error"]
    assert state(client, game)["totals"] == [5, 0]


def test_a_player_name_with_a_line_break_is_refused(client, reader):
    ask = {"Accept": "application/json", "X-CSRF-Token": csrf_of(client)}
    for name in ("Аня\n#player3 x", "Аня\x00", "Б\tорис"):
        answer = client.post("/games", headers=ask, data={"player": [name, "Борис"]})
        assert answer.status_code == 409, name
        assert "control character" in answer.get_json()["error"]
    game = new_game(client, players=("Анна Мария", "Борис"))
    play_photo(client, reader, game, TURN1)
    record = client.get(f"/g/{game}/game.gcg").get_data(as_text=True)
    from engine.gcg import parse_record

    assert parse_record(record, "export").players[0] == ("Анна_Мария", "Анна Мария")


def test_errors_do_not_show_server_paths(client, tmp_path):
    rulesets = tmp_path / "data" / "rulesets"
    rulesets.mkdir(parents=True)
    (rulesets / "broken.json").write_text("{not json", "utf-8")
    ask = {"Accept": "application/json", "X-CSRF-Token": csrf_of(client)}
    answer = client.post("/games", headers=ask, data={"player": ["А", "Б"], "ruleset": "broken"})
    assert answer.status_code == 400
    error = answer.get_json()["error"]
    assert error.startswith("rulesets/broken.json: not valid JSON") and str(tmp_path) not in error


def test_a_broken_ruleset_file_hides_only_itself(client, tmp_path, capsys):
    from companion_app.cli import main

    rulesets = tmp_path / "data" / "rulesets"
    write_ruleset(rulesets, "home")
    (rulesets / "broken.json").write_text("{not json", "utf-8")
    page = client.get("/")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert 'value="home"' in text and 'value="broken"' not in text
    assert main(["--data", str(tmp_path / "data"), "rulesets", "--json"]) == 1
    out, err = capsys.readouterr()
    assert '"name": "home"' in out and '"name": "erudit"' in out
    assert err.strip().endswith("broken.json: not valid JSON (line 1: Expecting property name "
                                "enclosed in double quotes)")


# -- other sites ----------------------------------------------------------------------------
def test_only_the_servers_own_names_are_answered(client, reader, app):
    game = new_game(client)
    ask = {"Accept": "application/json"}
    for host in ("localhost", "localhost:8000", "192.168.1.20:8000", "[::1]:8000", "10.0.0.7"):
        assert client.get(f"/g/{game}", headers={**ask, "Host": host}).status_code == 200, host
    for host in ("evil.example", "evil.example:8000", "192.168.1.20.evil.example",
                 "localhost:port"):
        answer = client.get(f"/g/{game}", headers={**ask, "Host": host})
        assert answer.status_code == 403, host
        assert answer.get_json()["code"] == "host_refused"
    rebound = {"Host": "evil.example:8000", "Origin": "http://evil.example:8000"}
    answer = post(client, f"/g/{game}/pass", {"turn": 1}, headers=rebound)
    assert answer.status_code == 403
    answer = post(client, "/games", {"player": ["А", "Б"]}, headers=rebound)
    assert answer.status_code == 403
    assert state(client, game)["moves"] == []


def test_names_can_be_added_for_a_proxy(tmp_path, reader):
    from companion_app.web import create_app

    app = create_app(tmp_path / "data", {"PROPOSE_TURN": reader,
                                         "ALLOWED_HOSTS": {"Erudit.Home.Arpa"}})
    client = app.test_client()
    assert client.get("/", headers={"Host": "erudit.home.arpa"}).status_code == 200
    assert client.get("/", headers={"Host": "other.home.arpa"}).status_code == 403


# -- photos seen fresh ----------------------------------------------------------------------
def test_a_turn_played_again_after_an_undo_shows_its_new_photo(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    old = state(client, game)["moves"][0]["photo"]
    post(client, f"/g/{game}/undo", {"turn": 2})
    reader.boards.append(TURN1)
    assert upload(client, game, 1, data=jpeg_bytes(80, 60)).status_code == 200
    pending = state(client, game)["pending"]
    post(client, f"/g/{game}/confirm", {"turn": 1, "pending": pending["id"]})
    new = state(client, game)["moves"][0]["photo"]
    for kind in ("photo", "board", "thumb"):
        assert new[kind] != old[kind], kind
        assert client.get(old[kind]).status_code == 404          # the undone turn's picture
        answer = client.get(new[kind])
        assert answer.status_code == 200
        assert "private" in answer.headers["Cache-Control"]
        assert "public" not in answer.headers["Cache-Control"]
    unversioned = new["photo"].split("?")[0]
    answer = client.get(unversioned)
    assert answer.status_code == 200 and "no-cache" in answer.headers["Cache-Control"]
    width = cv2.imdecode(np.frombuffer(answer.data, np.uint8), cv2.IMREAD_COLOR).shape[1]
    assert width == 80                                           # the photo sent the second time


# -- the disk cannot be filled ----------------------------------------------------------------
def _photo_files(tmp_path) -> list:
    return sorted((tmp_path / "data" / "photos").glob("*/*"))


def test_the_photo_kept_is_what_was_decoded_not_what_was_sent(client, reader, tmp_path):
    game = new_game(client)
    sent = jpeg_bytes(640, 480) + bytes(3_000_000)       # a valid JPEG, then 3 MB of junk
    reader.boards.append(TURN1)
    assert upload(client, game, 1, data=sent).status_code == 200
    kept = [p for p in _photo_files(tmp_path) if not p.stem.endswith(("-board", "-thumb"))]
    assert len(kept) == 1 and kept[0].stat().st_size < 100_000
    image = cv2.imdecode(np.fromfile(kept[0], np.uint8), cv2.IMREAD_COLOR)
    assert image.shape[:2] == (480, 640)


def test_new_games_are_capped_per_hour(tmp_path, reader):
    from companion_app.web import create_app

    client = create_app(tmp_path / "data", {"PROPOSE_TURN": reader, "PHOTO_WORKERS": 0,
                                            "GAMES_PER_HOUR": 3}).test_client()
    client.set_cookie("lang", "en")
    games = [new_game(client) for _ in range(3)]
    ask = {"Accept": "application/json", "X-CSRF-Token": csrf_of(client)}
    answer = client.post("/games", headers=ask, data={"player": ["А", "Б"]})
    assert answer.status_code == 429 and "in the last hour" in answer.get_json()["error"]
    assert all(state(client, game)["moves"] == [] for game in games)


def test_a_game_keeps_a_bounded_number_of_photos(tmp_path, reader):
    from companion_app.web import create_app

    client = create_app(tmp_path / "data", {"PROPOSE_TURN": reader, "PHOTO_WORKERS": 0,
                                            "GAME_PHOTO_LIMIT": 2}).test_client()
    client.set_cookie("lang", "en")
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    reader.boards.append(TURN2)
    assert upload(client, game, 2).status_code == 200             # photo 2, waiting
    answer = upload(client, game, 2)
    assert answer.status_code == 507 and "the most one game keeps" in answer.get_json()["error"]
    assert len(_photo_files(tmp_path)) == 6


def test_a_full_disk_refuses_photos_and_games_but_games_can_be_read(tmp_path, reader):
    import shutil

    from companion_app.web import create_app

    config = {"PROPOSE_TURN": reader, "PHOTO_WORKERS": 0}
    client = create_app(tmp_path / "data", config).test_client()
    client.set_cookie("lang", "en")
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    free = shutil.disk_usage(tmp_path).free
    full = create_app(tmp_path / "data", {**config, "DISK_RESERVE": free * 2}).test_client()
    full.set_cookie("lang", "en")
    answer = upload(full, game, 2)
    assert answer.status_code == 507 and "disk is full" in answer.get_json()["error"]
    ask = {"Accept": "application/json", "X-CSRF-Token": csrf_of(full)}
    assert full.post("/games", headers=ask, data={"player": ["А", "Б"]}).status_code == 507
    s = state(full, game)
    assert s["totals"] == [5, 0]
    assert full.get(s["moves"][0]["photo"]["board"]).status_code == 200
    assert full.get(f"/g/{game}").status_code == 200
    assert full.get(f"/g/{game}/game.gcg").status_code == 200
    assert post(full, f"/g/{game}/pass", {"turn": 2}).status_code == 200   # no photo needed
    assert len(_photo_files(tmp_path)) == 3


def test_nothing_half_written_stays_after_a_restart(tmp_path, reader):
    from companion_app.web import create_app

    config = {"PROPOSE_TURN": reader, "PHOTO_WORKERS": 0}
    client = create_app(tmp_path / "data", config).test_client()
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    kept = _photo_files(tmp_path)
    folder = kept[0].parent
    (folder / ".tmp-0123456789abcdef.jpg").write_bytes(b"half a photo")  # killed mid-upload
    (folder / "pending-abcdef012345.jpg").write_bytes(b"a proposal never recorded")
    (tmp_path / "data" / ".tmp-box-x").mkdir()                          # a calibration's
    client = create_app(tmp_path / "data", config).test_client()
    assert _photo_files(tmp_path) == kept
    assert not list((tmp_path / "data").glob(".tmp*"))
    assert client.get(state(client, game)["moves"][0]["photo"]["photo"]).status_code == 200


def test_a_real_full_disk_is_one_clear_line_and_leaves_nothing(tmp_path, reader):
    """On a small RAM disk (needs the right to mount one: skipped elsewhere)."""
    import subprocess

    from companion_app.web import create_app

    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)],
                      capture_output=True).returncode:
        pytest.skip("cannot mount a small RAM disk here")
    try:
        config = {"PROPOSE_TURN": reader, "PHOTO_WORKERS": 0, "DISK_RESERVE": 0}
        client = create_app(disk / "data", config).test_client()
        client.set_cookie("lang", "en")
        game = new_game(client)
        play_photo(client, reader, game, TURN1)
        (disk / "filler").write_bytes(b"\0" * 1024)
        with open(disk / "filler", "ab") as filler:    # the disk filled by something else
            try:
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
            except OSError:
                pass
        reader.boards.append(TURN2)
        big = jpeg_bytes(2000, 1500)
        answer = upload(client, game, 2, data=big)
        assert answer.status_code == 507, answer.get_json()
        assert "disk is full" in answer.get_json()["error"]
        assert state(client, game)["totals"] == [5, 0] and state(client, game)["pending"] is None
        assert client.get(f"/g/{game}").status_code == 200
        assert not [p for p in (disk / "data" / "photos").glob("*/.tmp*")]
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)  # the app may hold it open


# -- a photo that is not this board ------------------------------------------------------------
def test_a_photo_with_no_new_tiles_cannot_be_confirmed(client, reader):
    game = new_game(client)
    play_photo(client, reader, game, TURN1)
    reader.boards.append(TURN1)                                   # the same board again
    pending = upload(client, game, 2).get_json()["pending"]
    answer = post(client, f"/g/{game}/confirm", {"turn": 2, "pending": pending["id"]})
    assert answer.status_code == 409 and "no new tiles" in answer.get_json()["error"]
    assert len(state(client, game)["moves"]) == 1


# -- the real photo pipeline, in its worker processes -------------------------------------------
@pytest.fixture(scope="module")
def synthetic_game():
    """JPEG bytes of the photos after turns 1–3 of a rendered game, and its boards."""
    from engine.ruleset import load_ruleset
    from synth.photos import game_photos

    photos = game_photos(load_ruleset("erudit"), seed=9101, turns=3, players=2,
                         style="erudit-black")
    return [cv2.imencode(".jpg", image)[1].tobytes() for image in photos.images], photos


@pytest.fixture
def pipeline(tmp_path):
    """A phone on an app whose photos are read by the real pipeline in worker processes."""
    from companion_app.web import create_app

    client = create_app(tmp_path / "data", {"PHOTO_WORKERS": 1}).test_client()
    client.set_cookie("lang", "en")
    return client


def _confirmed(client, game, turn, data) -> dict:
    answer = upload(client, game, turn, data=data)
    assert answer.status_code == 200, answer.get_json()
    pending = answer.get_json()["pending"]
    answer = post(client, f"/g/{game}/confirm", {"turn": turn, "pending": pending["id"]})
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


@pytest.mark.slow
def test_an_old_photo_or_one_with_no_board_cannot_become_a_turn(pipeline, synthetic_game):
    jpegs, photos = synthetic_game
    game = new_game(pipeline)
    _confirmed(pipeline, game, 1, jpegs[0])
    s = _confirmed(pipeline, game, 2, jpegs[1])
    assert [m["score"] for m in s["moves"]] == photos.scores[:2]
    answer = upload(pipeline, game, 3, data=jpegs[0])              # turn 1's photo again
    pending = answer.get_json()["pending"]
    assert pending["blocked"] and "board" in pending["blocked"]    # not this board, as it is
    answer = post(pipeline, f"/g/{game}/confirm", {"turn": 3, "pending": pending["id"]})
    assert answer.status_code == 409 and "take the photo again" in answer.get_json()["error"]
    from test_photo_limits import orange_table

    table = cv2.imencode(".jpg", orange_table(3))[1].tobytes()
    answer = upload(pipeline, game, 3, data=table, name="table.jpg")
    assert answer.status_code == 422
    assert answer.get_json()["error"] == "table.jpg: no board found"
    s = _confirmed(pipeline, game, 3, jpegs[2])
    assert [m["score"] for m in s["moves"]] == photos.scores


@pytest.mark.slow
def test_large_pictures_do_not_hold_up_a_phone_photo(pipeline, synthetic_game):
    jpegs, photos = synthetic_game
    table = new_game(pipeline)
    _confirmed(pipeline, table, 1, jpegs[0])                 # the photo lane is warm
    flat = np.full((7000, 7000, 3), 90, np.uint8)
    flat[::500] = 200                                        # stripes: no board, but a look
    big = cv2.imencode(".png", flat)[1].tobytes()
    del flat
    others = [new_game(pipeline) for _ in range(4)]
    answers: list[int] = []
    refused = threading.Event()

    def send(game):
        answer = upload(pipeline, game, 1, data=big, name="big.png")
        answers.append(answer.status_code)
        if answer.status_code == 503 and "busy" in answer.get_json()["error"]:
            refused.set()

    threads = [threading.Thread(target=send, args=(game,)) for game in others]
    for thread in threads:
        thread.start()
    assert refused.wait(60)                                  # the slow lane takes three
    s = _confirmed(pipeline, table, 2, jpegs[1])            # an honest photo meanwhile
    still_reading = sum(thread.is_alive() for thread in threads)
    assert [m["score"] for m in s["moves"]] == photos.scores[:2]
    assert still_reading >= 1
    for thread in threads:
        thread.join(120)
    assert sorted(answers) == [422, 422, 422, 503]           # each one clear line, no board
