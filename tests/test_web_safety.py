"""The web app against a careless or hostile network: games keep the rules they started with,
the disk cannot be filled, odd input gets one clear line, other sites are refused."""

from __future__ import annotations

import cv2
import numpy as np
from conftest import write_ruleset
from test_web_helpers import (
    TURN1,
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
        assert "refused" in answer.get_json()["error"]
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
