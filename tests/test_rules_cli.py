"""`erudit replay` on board texts and records, and `erudit rulesets`: the JSON shape,
the table, players and names, the target, --gcg, a user's own ruleset; bad input is one line
on stderr naming the file, a non-zero exit, never a traceback."""

import json
import os
import subprocess
import sys

import pytest
from conftest import BOARDS, REPO, board_with, write_ruleset

from companion_app.cli import main

GAME = [str(BOARDS / f"game_{n}.txt") for n in (1, 2, 3, 4)]
# game_1 ЛУК 8G: Л2 + У3 + К2 = 7 · game_2 ЛЕС down G8, Е on G9 ×2 letter: 2 + 1×2 + 2 = 6
# game_3 unchanged: a pass · game_4 САД 10G through the old С: С2 + А1 + Д2 = 5
MOVE_KEYS = {"turn", "player", "kind", "tiles", "words", "bonus", "score", "totals", "sure",
             "alternatives"}


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def replay_json(capsys, *argv) -> dict:
    code, out, err = run(capsys, "replay", *argv, "--json")
    assert (code, err) == (0, "")
    assert out.endswith("\n") and out.count("\n") == 1     # one JSON document, nothing else
    return json.loads(out)


def test_replay_json_shape(capsys, data_dir):
    game = replay_json(capsys, *GAME)
    assert set(game) == {"moves", "totals", "winner"}
    for move in game["moves"]:
        assert set(move) == MOVE_KEYS
        assert all(isinstance(move[k], int) for k in ("turn", "player", "bonus", "score"))
        assert move["kind"] in ("play", "pass") and move["sure"] is True
        assert move["alternatives"] == []
        assert all(set(t) == {"cell", "letter"} for t in move["tiles"])
        assert all(set(w) == {"word", "at", "score"} for w in move["words"])
    assert [m["turn"] for m in game["moves"]] == [1, 2, 3, 4]
    assert [m["player"] for m in game["moves"]] == [0, 1, 0, 1]
    assert [m["kind"] for m in game["moves"]] == ["play", "play", "pass", "play"]
    assert [m["score"] for m in game["moves"]] == [7, 6, 0, 5]
    assert [m["totals"] for m in game["moves"]] == [[7, 0], [7, 6], [7, 6], [7, 11]]
    assert game["totals"] == [7, 11] and game["winner"] is None
    first = game["moves"][0]
    assert first["tiles"] == [{"cell": "G8", "letter": "Л"}, {"cell": "H8", "letter": "У"},
                              {"cell": "I8", "letter": "К"}]
    assert first["words"] == [{"word": "ЛУК", "at": "8G", "score": 7}]
    assert game["moves"][1]["words"] == [{"word": "ЛЕС", "at": "G8", "score": 6}]


def test_replay_json_letters_are_not_escaped(capsys, data_dir):
    _, out, _ = run(capsys, "replay", GAME[0], "--json")
    assert '"word": "ЛУК"' in out and "\\u" not in out


def test_replay_table(capsys, data_dir):
    code, out, err = run(capsys, "replay", *GAME, "--names", "Аня,Борис")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "Аня" in lines[1] and "ЛУК 8G 7" in lines[1]
    assert "pass" in lines[3] and "САД 10G 5" in lines[4]
    assert "final: Аня 7, Борис 11" in out and "game over" not in out


def test_players(capsys, data_dir):
    game = replay_json(capsys, *GAME, "--players", "3")
    assert [m["player"] for m in game["moves"]] == [0, 1, 2, 0]
    assert game["totals"] == [7 + 5, 6, 0]         # turn 4 (САД) is player 0's again


def test_names_and_players_disagree(capsys, data_dir):
    code, _, err = run(capsys, "replay", *GAME, "--names", "A,B", "--players", "3")
    assert code != 0 and "--names gives 2 players but --players says 3" in err


@pytest.mark.parametrize("argv, message", [
    (["--players", "5"], "a game has 2–4 players, not 5"),
    (["--names", "Соло"], "a game has 2–4 players, not 1"),
    (["--target", "0"], "target score must be positive, not 0"),
    (["--players", "0"], "a game has 2–4 players, not 0"),
    (["--names", "Аня,,Борис"], "player 2 has no name"),
    (["--names", "Аня,Аня"], "two players have the same name"),
])
def test_bad_game_settings(capsys, data_dir, argv, message):
    code, out, err = run(capsys, "replay", GAME[0], *argv)
    assert code != 0 and out == "" and err == f"erudit: {message}\n"


def test_target_decides_and_later_inputs_are_an_error(capsys, data_dir):
    game = replay_json(capsys, *GAME[:2], "--target", "7")    # 7 : 6 after the round
    assert game["winner"] == 0
    code, out, err = run(capsys, "replay", *GAME, "--target", "7")
    assert code != 0 and out == ""
    assert err == f"erudit: {GAME[2]}: the game is over: Player 1 won; no more turns\n"


def test_gcg_out_replays_to_the_same_totals(capsys, data_dir, tmp_path):
    out = tmp_path / "game.gcg"
    first = replay_json(capsys, *GAME, "--gcg", out)
    again = replay_json(capsys, out)
    assert again["totals"] == first["totals"] == [7, 11]
    assert [m["score"] for m in again["moves"]] == [m["score"] for m in first["moves"]]


def test_replay_a_gcg_record(capsys, data_dir, tmp_path):
    record = tmp_path / "short.gcg"
    record.write_text("#player1 ann Ann\n#player2 bob Bob\n"
                      ">ann: ACT 8G CAT +10 10\n"         # (C3 + A1 + T1) × 2 = 10
                      ">bob: S 8G (CAT)S +6 6\n", "utf-8")   # C3 + A1 + T1 + S1 = 6
    game = replay_json(capsys, record, "--ruleset", "scrabble")
    assert game["totals"] == [10, 6]
    assert game["moves"][1]["words"] == [{"word": "CATS", "at": "8G", "score": 6}]


def test_rulesets_lists_the_bundled_ones(capsys, data_dir):
    code, out, _ = run(capsys, "rulesets", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["name"] for r in rows][0] == "erudit"
    by_name = {r["name"]: r for r in rows}
    assert (by_name["erudit"]["rack"], by_name["erudit"]["bonus"], by_name["erudit"]["tiles"]) == (
        7, 15, 131)
    assert by_name["scrabble"]["tiles"] == 100 and by_name["erudit-english"]["rack"] == 8
    german = by_name["scrabble-de"]
    assert (german["alphabet"], german["tiles"], german["stars"], german["rack"],
            german["bonus"], german["layout"], german["star_look"]) == (
        "ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÜ", 102, 2, 7, 50, "scrabble", "blank")
    code, out, _ = run(capsys, "rulesets")
    assert code == 0 and "scrabble-ru" in out and "all-rack bonus 50" in out


def test_own_ruleset_shows_up_and_is_used(capsys, data_dir, tmp_path):
    write_ruleset(data_dir / "rulesets", "mybox", rack=8, bonus=20)
    _, out, _ = run(capsys, "rulesets", "--json")
    assert "mybox" in [json.loads(line)["name"] for line in out.splitlines()]
    board = tmp_path / "korabl.txt"
    board.write_text(str(board_with(("H8", "КОРАБЛЬ", True))) + "\n", "utf-8")
    # КОРАБЛЬ H8–N8, Б on L8 ×2 letter: 2 + 1 + 2 + 1 + 3×2 + 2 + 5 = 19; 7 tiles: +15 on Эрудит,
    # nothing on a box whose rack holds 8
    assert replay_json(capsys, board)["totals"] == [34, 0]
    assert replay_json(capsys, board, "--ruleset", "mybox")["totals"] == [19, 0]
    assert replay_json(capsys, board, "--data", data_dir, "--ruleset", "mybox")["totals"] == [
        19, 0]


def _bad_inputs(tmp_path):
    broken = write_ruleset(tmp_path, "broken")
    data = json.loads(broken.read_text("utf-8"))
    del data["bonus"]
    broken.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    record = tmp_path / "x.gcg"
    record.write_text(">ann: - +0 0\n", "utf-8")
    game_2 = str(BOARDS / "game_2.txt")
    return {
        "ragged": ([str(BOARDS / "ragged.txt")], "ragged.txt: line 8 has 14 characters"),
        "letter": ([str(BOARDS / "latin_letter.txt")], "latin_letter.txt: cell H8: letter 'U'"),
        "ruleset": ([GAME[0], "--ruleset", "nope"], "unknown ruleset 'nope'"),
        "broken": ([GAME[0], "--ruleset", str(broken)], f"{broken}: missing field 'bonus'"),
        "gap": ([GAME[0], game_2, str(BOARDS / "gap.txt")],
                "gap.txt: turn 3: gap in the new word at G5, G6, G7"),
        "removed": ([GAME[0], game_2, str(BOARDS / "removed.txt")],
                    "removed.txt: turn 3: tile removed at I8"),
        "missing": ([str(tmp_path / "nowhere.txt")], "nowhere.txt: cannot read: no such file"),
        "mix": ([GAME[0], str(record)], "not a mix"),
    }


@pytest.mark.parametrize("case", ["ragged", "letter", "ruleset", "broken", "gap", "removed",
                                  "missing", "mix"])
def test_bad_input_is_one_line_never_a_traceback(case, tmp_path):
    argv, expected = _bad_inputs(tmp_path)[case]
    env = {**os.environ, "ERUDIT_DATA": str(tmp_path / "data"), "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "companion_app.cli", "replay", *argv],
                            capture_output=True, text=True, encoding="utf-8", env=env,
                            cwd=tmp_path, timeout=60)
    assert result.returncode != 0 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("erudit: ") and expected in result.stderr


def test_output_piped_to_a_reader_that_stops_is_no_error():
    """`erudit rulesets | head -0`: the pipe closes before the output is written."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "companion_app.cli", "rulesets"],
                              stdout=write, stderr=subprocess.PIPE, cwd=REPO, text=True,
                              timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 1 and done.stderr == ""


def test_serve_says_why_it_cannot_listen(capsys, tmp_path):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        assert main(["serve", "--host", "127.0.0.1", "--port", port,
                     "--data", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"erudit: port {port} is in use by another program: stop it or choose another with "
        "--port\n")
    assert main(["serve", "--host", "192.0.2.1", "--data", str(tmp_path)]) == 2  # TEST-NET-1
    assert "--host 192.0.2.1: not an address of this machine" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["serve", "--port", "99999"])
    assert "a port is a number from 0 to 65535, not '99999'" in capsys.readouterr().err


def test_a_data_folder_that_cannot_be_made_is_named(capsys, tmp_path):
    import socket

    (tmp_path / "stray").write_text("not a folder", encoding="utf-8")
    data = tmp_path / "stray" / "data"  # under a file: no folder can be made there
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = str(free.getsockname()[1])
    assert main(["serve", "--host", "127.0.0.1", "--port", port, "--data", str(data)]) == 2
    assert capsys.readouterr().err == (
        f"erudit: {data}: cannot make the data folder (not a directory)\n")


def test_a_file_where_the_data_folder_goes_is_named(capsys, tmp_path):
    stray = tmp_path / "data"
    stray.write_text("not a folder", encoding="utf-8")
    assert main(["replay", GAME[0], "--data", str(stray)]) == 2
    assert capsys.readouterr().err == f"erudit: {stray}: the data folder is a file, not a folder\n"
