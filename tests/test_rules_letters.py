"""Every letter a box has: a user's ruleset with letters the tile reader's network has no class
for is refused wherever photos are read (read, replay of photos, calibrate, the web app's photo
turns) in one line naming those letters, while its records and board texts still replay; the
listing marks it. A broken ruleset file in the data folder is one line on stderr and hides no
other ruleset."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest
from conftest import REPO, write_ruleset
from test_web_helpers import csrf_of, new_game, post

from companion_app.cli import main
from companion_app.web import create_app
from engine.errors import RulesetError
from engine.ruleset import load_ruleset
from vision.classifier import check_readable, load_model, unknown_letters

PHOTOS = [str(REPO / "sample_images" / f"turn0{n}.jpg") for n in (1, 2)]
# Latin A B E with Greek letters no network of the project reads (Γ is not Cyrillic Г)
GREEK = "ABEΓΔΨΩ"
REFUSAL = ("erudit: ruleset greek: the tile reader knows no letter Γ, Δ, Ψ, Ω; its games can "
           "be replayed from board texts or a GCG record, not read from photos\n")
# ΓAΔ across G8–I8 over the ×2 word centre: (Γ3 + A1 + Δ1) × 2 = 10
FIRST_WORD = "\n".join("......ΓAΔ......" if row == 7 else "." * 15 for row in range(15)) + "\n"


@pytest.fixture
def greek(data_dir):
    """A user's ruleset for a box with Greek letters, dropped into the data folder."""
    tiles = {letter: [10, 3 if letter == "Γ" else 1] for letter in GREEK}
    write_ruleset(data_dir / "rulesets", "greek", base="scrabble", alphabet=GREEK, tiles=tiles)
    return data_dir


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [
    ["read", *PHOTOS, "--json"],
    ["replay", *PHOTOS, "--json"],
    ["calibrate", "--empty", PHOTOS[0], "--name", "greekbox"],
], ids=["read", "replay", "calibrate"])
def test_reading_photos_with_letters_the_reader_lacks_is_one_line(capsys, greek, argv):
    code, out, err = run(capsys, *argv, "--ruleset", "greek")
    assert (code, out, err) == (2, "", REFUSAL)
    assert not (greek / "profiles").exists() or not any((greek / "profiles").iterdir())


def test_its_board_texts_and_records_need_no_reader(capsys, greek, tmp_path):
    board = tmp_path / "turn1.txt"
    board.write_text(FIRST_WORD, "utf-8")
    record = tmp_path / "game.gcg"
    record.write_text(">ann: ΓAΔ 8G ΓAΔ +10 10\n>bob: EΨΩ - 0 0\n", "utf-8")
    for inputs in ([board], [record]):
        code, out, err = run(capsys, "replay", *inputs, "--ruleset", "greek", "--json")
        assert (code, err) == (0, "")
        assert json.loads(out)["totals"] == [10, 0]


def test_the_listing_marks_what_photos_cannot_show(capsys, greek):
    code, out, err = run(capsys, "rulesets", "--json")
    rows = {row["name"]: row for row in map(json.loads, out.splitlines())}
    assert (code, err) == (0, "")
    assert rows["greek"]["unreadable_letters"] == ["Γ", "Δ", "Ψ", "Ω"]
    # until the network has them
    assert set(rows["scrabble-de"]["unreadable_letters"]) <= set("ÄÖÜ")
    assert all(not rows[name]["unreadable_letters"]
               for name in ("erudit", "erudit-english", "scrabble", "scrabble-ru"))
    _, out, _ = run(capsys, "rulesets")
    assert "photos: not readable: Γ Δ Ψ Ω" in out


def test_the_refusal_follows_the_networks_glyphs():
    """Derived from the loaded network: German is read once the network has Ä Ö Ü."""
    german, model = load_ruleset("scrabble-de"), load_model()
    with_umlauts = replace(model, glyphs=model.glyphs + tuple(
        letter for letter in "ÄÖÜ" if letter not in model.glyphs))
    without = replace(model, glyphs=tuple(g for g in model.glyphs if g not in "ÄÖÜ"))
    check_readable(german, with_umlauts)
    assert unknown_letters(german.alphabet, with_umlauts.glyphs) == []
    with pytest.raises(RulesetError) as refused:
        check_readable(german, without)
    assert str(refused.value).startswith(
        "ruleset scrabble-de: the tile reader knows no letter Ä, Ö, Ü; ")


def test_the_web_apps_photo_turn_refuses_it_in_one_line(tmp_path):
    data = tmp_path / "data"
    tiles = {letter: [10, 1] for letter in GREEK}
    write_ruleset(data / "rulesets", "greek", base="scrabble", alphabet=GREEK, tiles=tiles)
    phone = create_app(data, {"TESTING": True}).test_client()   # the real photo pipeline
    phone.set_cookie("lang", "en")
    game = new_game(phone, ruleset="greek")
    jpeg = (REPO / "sample_images" / "turn01.jpg").read_bytes()

    def send_photo():
        photo = {"turn": "1", "photo": (io.BytesIO(jpeg), "turn01.jpg")}
        return post(phone, f"/g/{game}/photo", photo, content_type="multipart/form-data")

    answer = send_photo()
    assert answer.status_code == 400
    assert answer.get_json()["error"] + "\n" == REFUSAL.removeprefix("erudit: ")
    phone.set_cookie("lang", "ru")
    answer = send_photo()
    assert answer.get_json()["error"].startswith(
        "правила greek: распознаватель фишек не знает букв Γ, Δ, Ψ, Ω; ")
    assert csrf_of(phone)   # the app still answers


def test_a_broken_ruleset_file_is_one_line_and_the_rest_are_listed(tmp_path):
    data = tmp_path / "data"
    write_ruleset(data / "rulesets", "mybox", rack=8)
    torn = data / "rulesets" / "torn.json"
    torn.write_text('{"name": "torn",\n "rack": 7,,}', "utf-8")
    env = {**os.environ, "ERUDIT_DATA": str(data), "PYTHONPATH": str(REPO)}
    listing = subprocess.run([sys.executable, "-m", "companion_app.cli", "rulesets", "--json"],
                             capture_output=True, text=True, encoding="utf-8", env=env,
                             timeout=120)
    assert listing.returncode == 1
    assert listing.stderr == (f"erudit: {torn}: not valid JSON (line 2: Expecting property "
                              "name enclosed in double quotes)\n")
    names = [json.loads(line)["name"] for line in listing.stdout.splitlines()]
    assert "mybox" in names and "scrabble-de" in names and "torn" not in names
    board = tmp_path / "turn1.txt"
    board.write_text(FIRST_WORD.replace("ΓAΔ", "ДОМ"), "utf-8")
    replay = subprocess.run([sys.executable, "-m", "companion_app.cli", "replay", str(board)],
                            capture_output=True, text=True, encoding="utf-8", env=env,
                            timeout=120)
    assert (replay.returncode, replay.stderr) == (0, "")


def test_the_web_apps_home_page_lists_the_same_rulesets(tmp_path):
    data = tmp_path / "data"
    write_ruleset(data / "rulesets", "mybox", rack=8)
    (data / "rulesets" / "torn.json").write_text("[1, 2", "utf-8")
    page = create_app(data, {"TESTING": True}).test_client().get("/")
    text = page.get_data(as_text=True)
    assert page.status_code == 200
    assert 'value="mybox"' in text and 'value="scrabble-de"' in text and "torn" not in text
