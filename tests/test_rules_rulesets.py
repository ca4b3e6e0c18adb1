"""The bundled rulesets hold exactly the letters, counts, values, racks, bonuses
and layouts of the rule sheets; a user's own ruleset is one more json file; a broken ruleset
file is one clear line naming the file and the field, and hides no other ruleset."""

import json

import pytest
from conftest import write_ruleset

from engine.errors import RulesetError
from engine.ruleset import installed_rulesets, load_ruleset, ruleset_names

# The publishers' tile tables, copied as printed (count×points).
ERUDIT_TABLE = (
    "А10×1 Б3×3 В5×2 Г3×3 Д5×2 Е9×1 Ж2×5 З2×5 И8×1 Й4×2 К6×2 Л4×2 М5×2 Н8×1 О10×1 П6×2 "
    "Р6×2 С6×2 Т5×2 У3×3 Ф1×10 Х2×5 Ц1×10 Ч2×5 Ш1×10 Щ1×10 Ъ1×10 Ы2×5 Ь2×5 Э1×10 Ю1×10 Я3×3")
SCRABBLE_RU_TABLE = (
    "А8×1 Б2×3 В4×1 Г2×3 Д4×2 Е8×1 Ё1×3 Ж1×5 З2×5 И5×1 Й1×4 К4×2 Л4×2 М3×2 Н5×1 О10×1 "
    "П4×2 Р5×1 С5×1 Т5×1 У4×2 Ф1×10 Х1×5 Ц1×5 Ч1×5 Ш1×8 Щ1×10 Ъ1×10 Ы2×4 Ь2×3 Э1×8 Ю1×8 Я2×3")
# The standard English set (the well-known counts and points).
ENGLISH_TABLE = (
    "A9×1 B2×3 C2×3 D4×2 E12×1 F2×4 G3×2 H2×4 I9×1 J1×8 K1×5 L4×1 M2×3 N6×1 O8×1 P2×3 "
    "Q1×10 R6×1 S4×1 T6×1 U4×1 V2×4 W2×4 X1×8 Y2×4 Z1×10")
# The German edition, as the ScrabScrap material's README prints it (count×points).
GERMAN_TABLE = (
    "A5×1 B2×3 C2×4 D4×1 E15×1 F2×4 G3×2 H4×2 I6×1 J1×6 K2×4 L3×2 M4×3 N9×1 O3×2 P1×4 "
    "Q1×10 R6×1 S7×1 T6×1 U6×1 V1×6 W1×3 X1×8 Y1×10 Z1×3 Ä1×6 Ö1×8 Ü1×6")

ERUDIT_GRID = """\
W..l...W...l..W
.w...L...L...w.
..w...l.l...w..
l..w...l...w..l
....w.....w....
.L...........L.
..l...l.l...l..
W..l...*...l..W
..l...l.l...l..
.L...........L.
....w.....w....
l..w...l...w..l
..w...l.l...w..
.w...L...L...w.
W..l...W...l..W"""
SCRABBLE_GRID = """\
W..l...W...l..W
.w...L...L...w.
..w...l.l...w..
l..w...l...w..l
....w.....w....
.L...L...L...L.
..l...l.l...l..
W..l...w...l..W
..l...l.l...l..
.L...L...L...L.
....w.....w....
l..w...l...w..l
..w...l.l...w..
.w...L...L...w.
W..l...W...l..W"""


def table(text: str) -> dict[str, tuple[int, int]]:
    pairs = {}
    for item in text.split():
        count, points = item[1:].split("×")
        pairs[item[0]] = (int(count), int(points))
    return pairs


def tiles_of(rs) -> dict[str, tuple[int, int]]:
    return {letter: (rs.counts[letter], rs.values[letter]) for letter in rs.alphabet}


@pytest.mark.parametrize("name, letters, stars, rack, bonus, layout, alphabet", [
    ("erudit", ERUDIT_TABLE, 3, 7, 15, "erudit", "АБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ"),
    ("erudit-english", ENGLISH_TABLE, 2, 8, 15, "erudit", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    ("scrabble-ru", SCRABBLE_RU_TABLE, 2, 7, 50, "scrabble", "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ"),
    ("scrabble", ENGLISH_TABLE, 2, 7, 50, "scrabble", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    ("scrabble-de", GERMAN_TABLE, 2, 7, 50, "scrabble", "ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÜ"),
])
def test_bundled_ruleset_is_the_rule_sheet(name, letters, stars, rack, bonus, layout, alphabet):
    rs = load_ruleset(name)
    assert "".join(rs.alphabet) == alphabet
    assert tiles_of(rs) == table(letters)
    assert (rs.stars, rs.rack, rs.bonus, rs.layout.name) == (stars, rack, bonus, layout)


@pytest.mark.parametrize("name, letters, stars", [
    ("erudit", 128, 3),          # the table sums to 128, plus 3 stars (not the sheet's "131")
    ("erudit-english", 98, 2),   # English letters + 2 blanks (the sheet gives none)
    ("scrabble-ru", 102, 2),
    ("scrabble", 98, 2),
    ("scrabble-de", 100, 2),     # 102 tiles in the German box
])
def test_tile_totals(name, letters, stars):
    rs = load_ruleset(name)
    assert (sum(rs.counts.values()), rs.stars, rs.tile_count) == (letters, stars, letters + stars)


def test_erudit_has_no_yo_and_scrabble_ru_has_it():
    assert "Ё" not in load_ruleset("erudit").alphabet
    assert load_ruleset("scrabble-ru").counts["Ё"] == 1


@pytest.mark.parametrize("name, options", [
    ("erudit", ("same-move", False)),
    ("erudit-english", ("same-move", False)),
    ("scrabble-ru", ("never", False)),
    ("scrabble", ("never", False)),      # blanks are never swapped in English Scrabble
    ("scrabble-de", ("never", False)),
])
def test_star_options(name, options):
    rs = load_ruleset(name)
    assert (rs.star_swap, rs.star_scores_letter) == options


def test_scrabble_ends_with_rack_adjustments():
    assert load_ruleset("scrabble").end == load_ruleset("scrabble-de").end == "scrabble"
    assert load_ruleset("erudit").end == "agreement"


def test_german_scrabble_has_no_word_list_and_the_scrabble_layout():
    german = load_ruleset("scrabble-de")
    assert german.word_check == load_ruleset("scrabble").word_check == "none"
    assert german.layout.rows == load_ruleset("scrabble").layout.rows
    assert german.layout.premium(7, 7) == "w"     # H8: ×2 word


@pytest.mark.parametrize("name, look", [
    ("erudit", "star"),            # Эрудит's stars print an asterisk
    ("erudit-english", "either"),  # the gift edition's sheet does not say
    ("scrabble", "blank"), ("scrabble-ru", "blank"), ("scrabble-de", "blank"),
])
def test_how_each_box_shows_its_jokers(name, look):
    assert load_ruleset(name).star_look == look


def test_a_users_ruleset_may_say_how_its_jokers_look(tmp_path):
    plain = write_ruleset(tmp_path / "rulesets", "plain")
    data = json.loads(plain.read_text("utf-8"))
    del data["star_look"]                       # not said: either look
    plain.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    write_ruleset(tmp_path / "rulesets", "blanks", star_look="blank")
    assert load_ruleset("plain", tmp_path).star_look == "either"
    assert load_ruleset("blanks", tmp_path).star_look == "blank"


@pytest.mark.parametrize("layout, grid, centre", [
    ("erudit", ERUDIT_GRID, "."), ("scrabble", SCRABBLE_GRID, "w")], ids=["erudit", "scrabble"])
def test_layout_is_the_printed_grid(layout, grid, centre):
    premiums = load_ruleset(layout).layout.premium
    resolved = "\n".join("".join(premiums(r, c) for c in range(15)) for r in range(15))
    assert resolved == grid.replace("*", ".")    # the grid's `*` is Эрудит's plain centre
    assert premiums(7, 7) == centre              # H8: plain on Эрудит, ×2 word on Scrabble


@pytest.mark.parametrize("cell, erudit, scrabble", [
    ((0, 0), "W", "W"),      # A1 red ×3 word
    ((0, 7), "W", "W"),      # H1
    ((1, 1), "w", "w"),      # B2 blue/pink ×2 word
    ((1, 5), "L", "L"),      # F2 ×3 letter
    ((0, 3), "l", "l"),      # D1 ×2 letter
    ((5, 5), ".", "L"),      # F6: ×3 letter on Scrabble only
    ((9, 9), ".", "L"),      # J10: likewise
    ((7, 3), "l", "l"),      # D8
    ((10, 10), "w", "w"),    # K11
    ((14, 14), "W", "W"),    # O15
])
def test_premium_cells(cell, erudit, scrabble):
    assert load_ruleset("erudit").layout.premium(*cell) == erudit
    assert load_ruleset("scrabble").layout.premium(*cell) == scrabble


def test_bundled_names_erudit_first():
    names = ruleset_names()
    assert names[0] == "erudit"
    assert set(names) >= {"erudit", "erudit-english", "scrabble-ru", "scrabble", "scrabble-de"}


def test_own_ruleset_in_data_folder(tmp_path):
    write_ruleset(tmp_path / "rulesets", "mybox", rack=8, bonus=20)
    assert "mybox" in ruleset_names(tmp_path)
    rs = load_ruleset("mybox", tmp_path)
    assert (rs.name, rs.rack, rs.bonus) == ("mybox", 8, 20)


def test_ruleset_by_path(tmp_path):
    path = write_ruleset(tmp_path, "starry", star_scores_letter=True)
    assert load_ruleset(str(path)).star_scores_letter is True


def test_unknown_ruleset_lists_the_installed():
    with pytest.raises(RulesetError, match=r"unknown ruleset 'nope' \(installed: erudit"):
        load_ruleset("nope")


def _broken(tmp_path, change) -> str:
    data = json.loads(write_ruleset(tmp_path, "broken").read_text("utf-8"))
    change(data)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(RulesetError) as info:
        load_ruleset(str(path))
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def test_missing_field(tmp_path):
    assert "missing field 'rack'" in _broken(tmp_path, lambda d: d.pop("rack"))


def test_wrong_type(tmp_path):
    assert "field 'bonus' must be int" in _broken(tmp_path, lambda d: d.update(bonus="15"))
    assert "field 'rack' must be int" in _broken(tmp_path, lambda d: d.update(rack=True))


def test_tiles_not_matching_alphabet(tmp_path):
    message = _broken(tmp_path, lambda d: d["tiles"].pop("Ф"))
    assert "field 'tiles'" in message and "Ф" in message


def test_bad_tile_pair(tmp_path):
    assert "tiles['А']" in _broken(tmp_path, lambda d: d["tiles"].update({"А": [10]}))


def test_bad_option(tmp_path):
    assert "field 'star_swap'" in _broken(tmp_path, lambda d: d.update(star_swap="sometimes"))
    message = _broken(tmp_path, lambda d: d.update(star_look="shiny"))
    assert "field 'star_look' must be one of star, blank, either" in message
    assert "field 'star_look' must be str" in _broken(tmp_path, lambda d: d.update(star_look=1))


def test_bad_layout_names_the_ruleset_file_and_field(tmp_path):
    assert "field 'layout'" in _broken(tmp_path, lambda d: d.update(layout="hexagonal"))


def test_ragged_layout_file(tmp_path):
    layout = tmp_path / "short.txt"
    layout.write_text("\n".join(ERUDIT_GRID.splitlines()[:14]), encoding="utf-8")
    message = _broken(tmp_path, lambda d: d.update(layout=str(layout)))
    assert "field 'layout'" in message and "expected 15 rows, got 14" in message


def test_not_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{ not json", encoding="utf-8")
    with pytest.raises(RulesetError, match=r"bad\.json: not valid JSON \(line 1"):
        load_ruleset(str(path))


def test_a_broken_ruleset_in_the_data_folder_hides_no_other(tmp_path):
    folder = tmp_path / "rulesets"
    write_ruleset(folder, "mybox", rack=8)
    (folder / "torn.json").write_text('{"name": "torn",\n "rack": 7,,}', "utf-8")
    loaded, broken = installed_rulesets(tmp_path)
    assert list(loaded) == [name for name in ruleset_names(tmp_path) if name != "torn"]
    assert loaded["mybox"].rack == 8 and "torn" not in loaded
    [problem] = broken
    assert str(problem) == f"{folder / 'torn.json'}: not valid JSON (line 2: Expecting " \
                           "property name enclosed in double quotes)"
