"""The web app's box setup page (issue: calibrate your own box): two photos sent from a phone
make a profile, as `erudit calibrate` does; the home page then offers the box for a game, and
every bad photo or field is refused with one clear line."""

from __future__ import annotations

import io
import json
import re

import pytest
from test_calibration import ALPHABET, BOARD, EMPTY, photo
from test_web_helpers import csrf_of, post

from calibration.profile import load_profile, profile_folder

pytest_plugins = ["test_web_helpers"]   # the app and client fixtures

# one pytest-xdist worker runs the whole module, so its module fixtures are made once
pytestmark = pytest.mark.xdist_group("web_boxes")


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """PNG bytes of one novel box's calibration photos and of a game on it."""
    folder = tmp_path_factory.mktemp("photos")
    made = {"empty": photo(folder, "empty", EMPTY, 1),
            "alphabet": photo(folder, "abc", ALPHABET, 2),
            "game": photo(folder, "game", BOARD, 4)}
    return {name: path.read_bytes() for name, path in made.items()}


def calibrate(client, name="kitchen", headers=None, **photos):
    form = {"name": name, "ruleset": "erudit"}
    form.update({field: (io.BytesIO(data), f"{field}.png") for field, data in photos.items()
                 if isinstance(data, bytes)})
    form.update({field: value for field, value in photos.items() if isinstance(value, str)})
    return post(client, "/boxes", form, content_type="multipart/form-data",
                headers=headers or {})


def test_a_box_calibrated_from_the_phone_is_offered_for_a_game(client, photos, tmp_path):
    answer = calibrate(client, empty=photos["empty"], alphabet=photos["alphabet"])
    assert answer.status_code == 201, answer.get_json()
    box = answer.get_json()
    assert box["name"] == "kitchen" and box["ruleset"] == "erudit"
    assert box["differences"] == [] and box["layout"][0] == "W..l...W...l..W"
    assert box["letters"] == "АБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ*"
    assert set(box["colours"]) >= {".", "W", "w", "L", "l"}
    assert load_profile("kitchen", tmp_path / "data").letters   # saved where `read` finds it
    listed = client.get("/boxes", headers={"Accept": "application/json"}).get_json()
    assert [b["name"] for b in listed["boxes"]] == ["kitchen"]
    home = client.get("/").get_data(as_text=True)
    assert '<option value="kitchen">kitchen</option>' in home
    game = client.post("/games", headers={"Accept": "application/json"}, data={
        "csrf": csrf_of(client), "player": ["А", "Б"], "profile": "kitchen"})
    assert game.status_code == 201, game.get_json()
    page = client.get(f"/g/{game.get_json()['token']}").get_data(as_text=True)
    assert "Box kitchen</p>" in page                      # its layout is the rules'


def test_a_game_says_when_its_box_has_a_layout_of_its_own(client, photos, tmp_path):
    assert calibrate(client, empty=photos["empty"]).status_code == 201
    meta_file = profile_folder("kitchen", tmp_path / "data") / "profile.json"
    meta = json.loads(meta_file.read_text("utf-8"))
    meta["layout"][0] = "." + meta["layout"][0][1:]     # A1: a plain square in this box
    meta_file.write_text(json.dumps(meta, ensure_ascii=False), "utf-8")
    game = client.post("/games", headers={"Accept": "application/json"}, data={
        "csrf": csrf_of(client), "player": ["А", "Б"], "profile": "kitchen"}).get_json()
    page = client.get(f"/g/{game['token']}").get_data(as_text=True)
    assert "Box kitchen: its layout differs from the rules&#39; at 1 cells" in page
    a1 = re.search(r'class="cell ([^"]*)"\s+data-cell="A1"', page).group(1)
    o1 = re.search(r'class="cell ([^"]*)"\s+data-cell="O1"', page).group(1)
    assert a1.strip() == "" and o1.strip() == "w3"      # the box's A1 is plain, O1 is not


def test_the_setup_page_shows_each_box_and_its_layout(client, photos):
    page = client.get("/boxes").get_data(as_text=True)
    assert 'name="empty" type="file"' in page and 'name="alphabet" type="file"' in page
    answer = calibrate(client, "hall", headers={"Accept": "text/html"}, empty=photos["empty"])
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/boxes#box-hall")
    page = client.get("/boxes").get_data(as_text=True)
    assert 'id="box-hall"' in page and "its layout is the rules&#39; layout" in page
    assert "No alphabet photo: letters are read by the general model." in page
    assert page.count('class="cell w3') == 8           # the ×3 word squares of the layout
    russian = client.get("/boxes?lang=ru").get_data(as_text=True)
    assert "Калибровка набора" in russian and "раскладка совпадает с правилами" in russian


@pytest.mark.parametrize("fields, status, message", [
    ({"name": "a/b"}, 400, "profile name 'a/b': use letters"),
    ({"ruleset": "../x"}, 400, "unknown ruleset '../x'"),
    ({}, 400, r"no photo of the empty board \(field 'empty'\)"),
    ({"empty": b"not a photo"}, 422, r"empty photo empty.png: not a photo \(expected a JPEG"),
    ({"empty": "game"}, 400, r"empty photo empty.png: \d+ cells hold tiles"),
    ({"empty": "empty", "alphabet": "empty"}, 400,
     r"alphabet photo alphabet.png: no tiles, expected 33 \(32 letters and the star\)"),
])
def test_the_setup_page_refuses_bad_photos_and_fields(client, photos, fields, status, message,
                                                      tmp_path):
    fields = dict(fields)
    name = fields.pop("name", "box")
    answer = calibrate(client, name, **{k: photos.get(v, v) for k, v in fields.items()})
    assert answer.status_code == status
    assert re.match(message, answer.get_json()["error"]), answer.get_json()
    assert not profile_folder("box", tmp_path / "data").exists()
    assert not [p for p in (tmp_path / "data").iterdir() if p.name.startswith(".tmp")]


def test_a_calibrated_box_is_replaced_only_when_asked(client, photos):
    assert calibrate(client, empty=photos["empty"]).status_code == 201
    again = calibrate(client, empty=photos["empty"], alphabet=photos["alphabet"])
    assert again.status_code == 409
    assert "a box named 'kitchen' is already calibrated" in again.get_json()["error"]
    replaced = calibrate(client, empty=photos["empty"], alphabet=photos["alphabet"], replace="1")
    assert replaced.status_code == 201 and replaced.get_json()["letters"]
    page = client.post("/boxes", headers={"Accept": "text/html", "X-CSRF-Token": csrf_of(client)},
                       data={"name": "kitchen", "empty": (io.BytesIO(photos["empty"]), "e.png")},
                       content_type="multipart/form-data")
    assert page.status_code == 409 and 'name="empty" type="file"' in page.get_data(as_text=True)


def test_a_damaged_box_is_listed_as_damaged(client, photos, tmp_path):
    assert calibrate(client, empty=photos["empty"]).status_code == 201
    meta_file = profile_folder("kitchen", tmp_path / "data") / "profile.json"
    meta = json.loads(meta_file.read_text("utf-8"))
    meta_file.write_text(json.dumps({**meta, "layout": meta["layout"][:3]}), "utf-8")
    listed = client.get("/boxes", headers={"Accept": "application/json"}).get_json()["boxes"]
    assert listed == [{"name": "kitchen", "error": "damaged (layout is not 15 rows of 15); "
                                                   "calibrate it again"}]
    page = client.get("/boxes")
    assert page.status_code == 200 and "calibrate it again" in page.get_data(as_text=True)
    assert 'value="kitchen"' not in client.get("/").get_data(as_text=True)


def test_a_game_keeps_the_layout_its_box_had_when_it_started(client, reader, photos, tmp_path):
    from test_web_helpers import TURN1, new_game_with, play_photo, state

    assert calibrate(client, empty=photos["empty"]).status_code == 201
    game = new_game_with(client, profile="kitchen")
    assert play_photo(client, reader, game, TURN1)["totals"] == [5, 0]   # К2 + О1 + Т2
    meta_file = profile_folder("kitchen", tmp_path / "data") / "profile.json"
    meta = json.loads(meta_file.read_text("utf-8"))
    meta["layout"][7] = "......W" + meta["layout"][7][7:]   # the box calibrated again: G8 ×3 word
    meta_file.write_text(json.dumps(meta, ensure_ascii=False), "utf-8")
    assert state(client, game)["totals"] == [5, 0]
    later = new_game_with(client, profile="kitchen")
    assert play_photo(client, reader, later, TURN1)["totals"] == [15, 0]


def test_a_box_named_in_any_script_is_calibrated_and_played(client, reader, photos, tmp_path):
    from test_web_helpers import TURN1, new_game_with, play_photo

    answer = calibrate(client, "кухня", empty=photos["empty"])
    assert answer.status_code == 201 and answer.get_json()["name"] == "кухня"
    assert calibrate(client, "чайная", empty=photos["empty"]).status_code == 201
    decomposed = "чаи\u0306ная"                          # й typed as и and a breve: the same name
    assert calibrate(client, decomposed, empty=photos["empty"]).status_code == 409
    named = calibrate(client, "Кладовка_дачи", headers={"Accept": "text/html"},
                      empty=photos["empty"])
    assert named.status_code == 303
    assert 'value="кухня"' in client.get("/").get_data(as_text=True)
    game = new_game_with(client, profile="кухня")
    assert play_photo(client, reader, game, TURN1)["profile"] == "кухня"
    assert load_profile("кухня", tmp_path / "data").name == "кухня"


def test_a_box_name_in_any_script_works_from_the_command_line(photos, tmp_path, capsys):
    from companion_app.cli import main

    empty = tmp_path / "empty.png"
    empty.write_bytes(photos["empty"])
    data = str(tmp_path / "data")
    assert main(["--data", data, "calibrate", "--empty", str(empty), "--name", "кухня"]) == 0
    assert "profile кухня" in capsys.readouterr().out
    assert main(["--data", data, "calibrate", "--empty", str(empty), "--name", "чайная"]) == 0
    capsys.readouterr()
    # й typed as и and a combining breve is the same box
    assert main(["--data", data, "read", "--json", "--profile", "чаи\u0306ная", str(empty)]) == 0
    assert json.loads(capsys.readouterr().out)["board"][7] == "." * 15
    assert main(["--data", data, "read", "--json", "--profile", "столи\u0306", str(empty)]) == 2
    assert "'столй'" in capsys.readouterr().err
