"""The web app against a careless or hostile network: games keep the rules they started with,
the disk cannot be filled, odd input gets one clear line, other sites are refused."""

from __future__ import annotations

from conftest import write_ruleset
from test_web_helpers import TURN1, new_game_with, play_photo, state

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
