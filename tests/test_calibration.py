"""Per-box calibration (`erudit calibrate`, `--profile`): a profile is built from
rendered photos of a box the general model never trained on, saved under the data folder,
reads that box better, and every bad input is refused with one clear line."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from conftest import CountingNetwork

from bench.eval_read import render_taken
from calibration.box import KEPT, MIN_SETTLED, Profile
from calibration.build import confirmed_layout, fit_layout, layout_of
from calibration.profile import build_profile, load_profile, profile_folder
from companion_app.cli import main
from engine.errors import ProfileError
from engine.ruleset import load_ruleset
from models.dataset import board_label, random_board
from synth.photos import game_photos
from synth.render import STYLES, render_photo
from synth.styles import SCRABBLE_LAYOUT
from vision.read import read_board
from vision.rectify import rectify

# one pytest-xdist worker runs the whole module, so its module fixtures are made once
pytestmark = pytest.mark.xdist_group("calibration")

ERUDIT = load_ruleset("erudit")
NOVEL, BOX = "novel-violet", 13
EMPTY = ["." * 15] * 15
BOARD = [  # a game in progress: words across and down, a star
    "." * 15, "." * 15, "." * 15, "." * 15,
    "......Ж........",
    "......У........",
    "......К.Щ......",
    "...ПЛЯЖ.ЕЛКА...",
    "........Ч......",
    ".....ФАКТ......",
    "........ЮЭ*....",
    "." * 15, "." * 15, "." * 15, "." * 15,
]


def alphabet_board(letters: str) -> list[str]:
    rows = [letters[i:i + 15] for i in range(0, len(letters), 15)]
    return [row.ljust(15, ".") for row in rows] + ["." * 15] * (15 - len(rows))


ALPHABET = alphabet_board("".join(ERUDIT.alphabet) + "*")


def photo(folder, name, board, seed, style=NOVEL, box=BOX):
    shot = render_photo(board, seed=seed, style=style, fonts="heldout", box_seed=box,
                        clutter=False, pose="frontal", size=(1400, 1400))
    path = folder / f"{name}.png"
    cv2.imwrite(str(path), shot.image)
    return path


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    """One novel box: its calibration photos, a test photo and a profile in a data folder."""
    folder = tmp_path_factory.mktemp("box")
    data = folder / "data"
    paths = {"empty": photo(folder, "empty", EMPTY, 1),
             "alphabet": photo(folder, "abc", ALPHABET, 2),
             "game": photo(folder, "game", BOARD, 4)}
    profile = build_profile(paths["empty"], paths["alphabet"], "green", "erudit", data)
    return {"data": data, "profile": profile, "folder": folder, **paths}


def test_novel_style_is_not_trained_on():
    assert NOVEL not in STYLES


def test_profile_is_saved_with_layout_colours_and_references(box):
    folder = profile_folder("green", box["data"])
    meta = json.loads((folder / "profile.json").read_text("utf-8"))
    assert meta["name"] == "green" and meta["ruleset"] == "erudit"
    assert meta["layout"] == list(ERUDIT.layout.rows) and meta["differences"] == []
    assert {".", "W", "w", "L", "l"} <= set(meta["colours"])
    for colour in meta["colours"].values():
        assert len(colour["bgr"]) == 3 and len(colour["lab"]) == 3 and colour["cells"] > 0
    # the box's red ×3 word squares are redder than its grey plain squares
    red, plain = meta["colours"]["W"]["bgr"], meta["colours"]["."]["bgr"]
    assert red[2] - red[0] > plain[2] - plain[0] + 40
    with np.load(folder / "refs.npz") as refs:
        classes = set(refs["classes"])
    assert set(ERUDIT.alphabet) | {"*"} <= classes
    assert {".W", ".w", ".L", ".l", ".."} <= classes
    lines = box["profile"].summary()
    assert any("matches ruleset erudit" in line for line in lines)


KIND_COLOURS = {".": (20, 0, 0), "W": (45, 60, 40), "w": (50, 10, -50), "L": (80, 0, 70),
                "l": (55, -40, 20), "*": (95, 0, 0)}  # Lab, as cell_colours gives them


def lab_of(rows: list[str]) -> np.ndarray:
    return np.float32([[KIND_COLOURS[kind] for kind in row] for row in rows])


def test_layout_is_the_rulesets_where_the_colours_agree_whatever_the_scheme_read():
    rows = list(ERUDIT.layout.rows)
    misread = [row.replace("w", "l").replace("L", "W") for row in rows]  # a scheme gone astray
    lab = lab_of(rows)
    lab[0, 3] = lab[3, 0] = (99, 0, 0)  # glare on two of the eight mirror cells of a ×2 letter
    assert confirmed_layout(misread, lab, ERUDIT) == rows


def test_layout_takes_the_kind_the_colours_of_other_squares_show():
    printed = list(ERUDIT.layout.rows)
    for r, c in ((5, 5), (5, 9), (9, 5), (9, 9)):  # four more ×3 letter squares
        printed[r] = printed[r][:c] + "L" + printed[r][c + 1:]
    centre = list(printed[7])
    centre[7] = "w"  # a blue ×2 word centre, read so
    printed[7] = "".join(centre)
    lab = lab_of(printed)
    assert confirmed_layout(printed, lab, ERUDIT) == printed
    # a ×3 letter square in the shade, far from every kind's usual colour: read so, it is one
    lab[5, 5] = lab[5, 9] = lab[9, 5] = lab[9, 9] = (60, -5, 55)
    assert confirmed_layout(printed, lab, ERUDIT) == printed
    unread = [row.replace("L", ".") if r in (5, 9) else row for r, row in enumerate(printed)]
    assert confirmed_layout(unread, lab, ERUDIT)[5] == ERUDIT.layout.rows[5]
    lab[7, 7] = (50, 10, -33)  # the blue centre in the shade, read so: still a ×2 word square
    assert confirmed_layout(printed, lab, ERUDIT)[7] == printed[7]
    unread[7] = ERUDIT.layout.rows[7]
    assert confirmed_layout(unread, lab, ERUDIT)[7] == ERUDIT.layout.rows[7]


@pytest.mark.parametrize(("seed", "style", "ruleset", "taken", "differences"), [
    (7_200_004, "scrabble-vintage", "scrabble", "dim", []),
    (7_200_001, "scrabble-hasbro", "scrabble", "warm", []),
    (7_200_000, "erudit-cream", "erudit", "dim", ["F6", "J6", "F10", "J10", "H8"]),
])
def test_calibration_reads_the_layout_printed_on_the_box(seed, style, ruleset, taken,
                                                         differences):
    """Empty boards in a dim room or under a warm lamp, each of which the colour scheme alone
    read wrong (bench.eval_layout); the last box prints the Scrabble layout: four more ×3
    letter squares than its ruleset, and a ×2 word centre."""
    rules = load_ruleset(ruleset)
    layout = list(SCRABBLE_LAYOUT) if differences else None
    image, corners = render_taken(EMPTY, seed, taken, style=style, layout=layout, pose="any")
    rows, found = fit_layout(layout_of(rectify(image, corners), rules), rules)
    assert sorted(difference["cell"] for difference in found) == sorted(differences)
    if layout is None:
        assert rows == list(rules.layout.rows)


def wrong_cells(board, label=BOARD) -> int:
    return sum(a != b for x, y in zip(board, label, strict=True) for a, b in zip(x, y, strict=True))


def test_profile_reads_the_box_well(box):
    image = cv2.imread(str(box["game"]))
    profile = load_profile("green", box["data"])
    reading = read_board(image, ruleset=profile.apply_to(ERUDIT), profile=profile)
    assert wrong_cells(reading.board) == 0


def test_profile_tells_apart_letters_the_general_model_confuses(tmp_path):
    """Box 12 (a condensed serif on violet tiles): the serifs at Ш's foot look like Щ's tail,
    and a Ь like Ъ; with the box's own references none of them is taken for another, and the
    profile reads no worse than the general model (which, since its fine-tuning, confuses
    them on these boards no more either)."""
    for name, board, seed in (("empty", EMPTY, 500), ("abc", ALPHABET, 501)):
        shot = render_photo(board, seed=seed, style=NOVEL, fonts="heldout", box_seed=12,
                            clutter=False)
        cv2.imwrite(str(tmp_path / f"{name}.png"), shot.image)
    profile = build_profile(tmp_path / "empty.png", tmp_path / "abc.png", "serif", "erudit",
                            tmp_path)
    plain = calibrated = 0
    look_alikes = set("ЩШЪЬ")
    for seed in (9_500_002, 9_500_025):
        board = random_board(np.random.default_rng(seed), "".join(ERUDIT.alphabet))
        image = render_photo(board, seed=seed, style=NOVEL, fonts="heldout", box_seed=12).image
        label = board_label(board)
        plain += wrong_cells(read_board(image, ruleset=ERUDIT).board, label)
        read = read_board(image, ruleset=profile.apply_to(ERUDIT), profile=profile).board
        calibrated += wrong_cells(read, label)
        assert not [(a, b) for want, got in zip(label, read, strict=True)
                    for a, b in zip(want, got, strict=True)
                    if a != b and {a, b} <= look_alikes]
    assert calibrated <= plain


@pytest.mark.parametrize("quarters", [1, 2, 3])
def test_a_turned_photo_of_the_box_is_read_upright_by_its_profile(box, quarters, monkeypatch):
    # with a profile the upright is judged by the box's own letters (vision.read.profile_turns)
    import vision.read
    from vision.classifier import load_profile_model
    network = CountingNetwork(load_profile_model())
    monkeypatch.setattr(vision.read, "load_profile_model", lambda: network)
    image = np.ascontiguousarray(np.rot90(cv2.imread(str(box["game"])), quarters))
    profile = load_profile("green", box["data"])
    reading = read_board(image, ruleset=profile.apply_to(ERUDIT), profile=profile)
    assert reading.orientation == 90 * (4 - quarters) and wrong_cells(reading.board) <= 1
    assert network.read.count(15 * 15) == 1  # the inkiest tiles settled it: every cell read once


def test_the_boxs_own_letters_decide_the_upright_of_a_small_blurred_board(tmp_path):
    """A far, soft photo of a box whose font the model never saw: turned half round, its
    letters look more upright to the general model than the right way up."""
    empty, abc = (render_photo(board, seed=seed, style=NOVEL, fonts="heldout", box_seed=11,
                               clutter=False).image for board, seed in ((EMPTY, 500),
                                                                        (ALPHABET, 501)))
    cv2.imwrite(str(tmp_path / "empty.png"), empty)
    cv2.imwrite(str(tmp_path / "abc.png"), abc)
    profile = build_profile(tmp_path / "empty.png", tmp_path / "abc.png", "far", "erudit",
                            tmp_path)
    board = random_board(np.random.default_rng(9_500_001), "".join(ERUDIT.alphabet))
    shot = render_photo(board, seed=9_500_001, style=NOVEL, fonts="heldout", box_seed=11)
    reading = read_board(shot.image, ruleset=profile.apply_to(ERUDIT), profile=profile)
    corner = np.linalg.norm(shot.corners - reading.corners[0], axis=1)
    assert corner.argmin() == 0 and corner[0] < 10  # its top-left is the board's top-left
    # its tiles are unlike the box's references: their letters are the general model's
    general = read_board(shot.image, ruleset=profile.apply_to(ERUDIT),
                         turns=reading.orientation // 90)
    assert reading.board == general.board and np.allclose(reading.probs, general.probs, atol=1e-5)


def test_profile_without_alphabet_keeps_the_general_reading(box, tmp_path):
    profile = build_profile(box["empty"], None, "plain", "erudit", tmp_path)
    assert profile.letters == [] and "none (no alphabet photo)" in profile.summary()[-1]
    assert profile.layout == list(ERUDIT.layout.rows)
    image = cv2.imread(str(box["game"]))
    plain = read_board(image, ruleset=ERUDIT)
    with_box = read_board(image, ruleset=ERUDIT, profile=load_profile("plain", tmp_path))
    assert with_box.board == plain.board and np.allclose(with_box.probs, plain.probs)


GLYPHS = [".", "*", "А", "Б", "В", "Г"]


def toy_profile(spread=0.05) -> tuple[Profile, np.ndarray]:
    """A profile of an empty square and four letters whose references lie around orthogonal
    means in 8 dimensions; the means, in GLYPHS order from the empty square on ('*' left out)."""
    rng = np.random.default_rng(0)
    means = np.eye(8)[:5]
    classes = np.repeat(["..", "А", "Б", "В", "Г"], 40)
    refs = means[[".АБВГ".index(c[0]) for c in classes]] + rng.normal(0, spread, (200, 8))
    refs /= np.linalg.norm(refs, axis=1, keepdims=True)
    profile = Profile(name="toy", ruleset="erudit", model="", layout=EMPTY, colours={},
                      differences=[], refs=refs, ref_classes=classes, letters=list("АБВГ"))
    return profile, means


def test_a_photos_sure_tiles_show_how_it_moves_the_others():
    # a photo's light and focus move every tile's look alike: here Б's towards А
    profile, means = toy_profile()
    shown = np.repeat([1, 2, 3, 4], 4)
    cells = means[shown] + 0.6 * (means[1] - means[2])
    plain = np.zeros((len(cells), len(GLYPHS)), np.float32)  # the general model knows nothing
    before = profile.votes(cells / np.linalg.norm(cells, axis=1, keepdims=True), GLYPHS)
    assert (before.argmax(axis=1)[shown == 2] == GLYPHS.index("А")).all()
    after = profile.adjust(plain, cells, GLYPHS)
    assert (after.argmax(axis=1) == shown + 1).all()
    # an empty square the general model leans to keeps its reading however far the photo
    # moved the tiles (the shift is the tiles', and a square carried off lies out of reach)
    squares = np.vstack([cells, np.tile(means[0], (4, 1))])
    leaning = np.vstack([plain, np.log(np.full((4, len(GLYPHS)), 0.1, np.float32))])
    leaning[len(cells):, GLYPHS.index(".")] = np.log(0.5)
    after = profile.adjust(leaning, squares, GLYPHS)
    assert (after.argmax(axis=1)[len(cells):] == GLYPHS.index(".")).all()
    # too few sure tiles say nothing about the photo: the reading is left as it was
    few = cells[shown == 2][: MIN_SETTLED - 1]
    expected = profile.votes(few / np.linalg.norm(few, axis=1, keepdims=True), GLYPHS)
    assert np.allclose(profile.adjust(plain[: len(few)], few, GLYPHS), expected, atol=1e-4)


def test_references_do_not_overrule_a_sure_general_reading_on_thin_evidence():
    # a tile a little nearer А's references than Б's, which the general model reads as Б
    # at 1000 to 1 (7 nats): one alphabet photo is not evidence enough to turn that round
    profile, means = toy_profile()
    cell = 0.55 * means[1] + 0.45 * means[2]
    general = np.log(np.full((1, len(GLYPHS)), 1e-6, np.float32))
    general[0, GLYPHS.index("Б")], general[0, GLYPHS.index("А")] = np.log(0.999), np.log(0.001)
    assert profile.votes(cell[None] / np.linalg.norm(cell), GLYPHS).argmax() == GLYPHS.index("А")
    assert profile.adjust(general, cell[None], GLYPHS).argmax() == GLYPHS.index("Б")


def test_a_cell_unlike_every_reference_is_left_to_the_general_model():
    # a shadowed square or a hidden tile looks like none of the box's references: however
    # much nearer one of them it lies than the rest, they give it no verdict
    profile, means = toy_profile()
    stranger = np.eye(8)[7] + 0.3 * means[2]  # nearer Б, far from every class
    stranger = (stranger / np.linalg.norm(stranger))[None]
    votes = profile.votes(stranger, GLYPHS)[0, [GLYPHS.index(g) for g in ".АБВГ"]]
    assert np.ptp(votes) < 0.05
    general = np.log(np.full((1, len(GLYPHS)), 1e-4, np.float32))
    general[0, GLYPHS.index(".")], general[0, GLYPHS.index("Б")] = np.log(0.7), np.log(0.3)
    assert profile.adjust(general, stranger, GLYPHS).argmax() == GLYPHS.index(".")
    # a cell among Б's references is Б's, as before
    near = means[2] / np.linalg.norm(means[2])
    assert profile.votes(near[None], GLYPHS).argmax() == GLYPHS.index("Б")


def test_a_photo_whose_tiles_are_unlike_every_reference_is_read_by_the_general_model():
    # a far, blurred board: most of its tiles lie beyond every class's reach, and the photo's
    # tile shift would carry them into it; the references then give no verdict at all
    profile, means = toy_profile()
    shown = np.repeat([1, 2, 3, 4], 4)
    general = np.log(np.full((len(shown), len(GLYPHS)), 0.01, np.float32))
    general[:, GLYPHS.index(".")] = np.log(0.02)  # tiles, letters not told apart
    blurred = 0.5 * means[shown] + 0.9 * np.eye(8)[7]
    fitted = profile._discriminant()
    assert fitted.beyond_reach(blurred / np.linalg.norm(blurred, axis=1, keepdims=True)).all()
    assert np.array_equal(profile.adjust(general, blurred, GLYPHS), general)
    # the same tiles as the alphabet photo shows them are the references' to read
    read = profile.adjust(general, means[shown], GLYPHS).argmax(axis=1)
    assert (read == shown + GLYPHS.index("А") - 1).all()


def test_sure_tiles_move_their_letters_references():
    profile, means = toy_profile()
    fitted = profile._discriminant()
    cells = np.array([means[2] + 0.3, means[2] - 0.1])
    index = list(fitted.owners).index("Б")
    moved = fitted.moved(cells, np.array([index, index]))
    expected = (KEPT * fitted.means[index] + cells.sum(axis=0)) / (KEPT + 2)
    assert np.allclose(moved.means[index], expected, atol=1e-5)
    others = np.arange(len(fitted.means)) != index
    assert np.allclose(moved.means[others], fitted.means[others])
    assert np.allclose(moved.precision, fitted.precision)


def test_profile_layout_replaces_the_rulesets_once(box, capsys):
    profile = box["profile"]
    rows = list(profile.layout)
    rows[5] = rows[5][:5] + "L" + rows[5][6:]  # a box with ×3 letter on F6
    other = Profile(name="odd", ruleset="erudit", model=profile.model, layout=rows,
                    colours={}, differences=[], refs=profile.refs,
                    ref_classes=profile.ref_classes, letters=profile.letters)
    ruleset = other.apply_to(ERUDIT)
    assert ruleset.layout.premium(5, 5) == "L" and ERUDIT.layout.premium(5, 5) == "."
    other.apply_to(ERUDIT)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "F6" in err
    assert profile.apply_to(ERUDIT) is ERUDIT


def test_refuses_a_photo_without_a_board(box, tmp_path):
    blank = tmp_path / "wall.png"
    cv2.imwrite(str(blank), np.full((600, 800, 3), 128, np.uint8))
    with pytest.raises(ProfileError, match=r"^empty photo .*wall.png: no board"):
        build_profile(blank, None, "x", "erudit", tmp_path)


def test_refuses_an_empty_photo_with_tiles(box, tmp_path):
    board = list(EMPTY)
    board[7] = "....КОТ........"
    tiles = photo(tmp_path, "tiles", board, 4)
    with pytest.raises(ProfileError, match=r"empty photo .*: 3 cells hold tiles"):
        build_profile(tiles, None, "x", "erudit", tmp_path)


@pytest.mark.parametrize("style", ["scrabble-hasbro", "erudit-black"])
def test_refuses_an_empty_photo_with_a_blank_or_star_tile_left_on_it(style, tmp_path):
    board = list(EMPTY)
    board[3] = "..*............"
    shot = render_photo(board, seed=7_700_000, style=style, pose="any", clutter=False)
    path = tmp_path / "star.png"
    cv2.imwrite(str(path), shot.image)
    ruleset = "scrabble" if style.startswith("scrabble") else "erudit"
    # the tile left on it is named (on the Эрудит-black render the networks doubt one more)
    with pytest.raises(ProfileError,
                       match=r"empty photo .*: [12] cells hold tiles \([A-O]\d+(, [A-O]\d+)?\)"):
        build_profile(path, None, "x", ruleset, tmp_path)


def test_glare_on_an_empty_board_is_not_taken_for_tiles(tmp_path):
    """A lamp's glare washes out four squares: unlike their mirror squares, but far lighter
    and read as empty, so the photo is not refused as holding four tiles."""
    image, _ = render_taken(EMPTY, 15_200_000, None, style="scrabble-vintage", clutter=False,
                            pose="any")  # a seed of no training run
    path = tmp_path / "glare.png"
    cv2.imwrite(str(path), image)
    profile = build_profile(path, None, "glare", "scrabble", tmp_path)
    assert profile.layout == list(load_ruleset("scrabble").layout.rows)


def test_refuses_a_wrong_number_of_tiles(box, tmp_path):
    letters = "".join(ERUDIT.alphabet).replace("Ж", "").replace("Щ", "") + "*"
    short = photo(tmp_path, "short", alphabet_board(letters), 5)
    with pytest.raises(ProfileError, match=r"31 tiles, expected 33 \(32 letters and the star\)"):
        build_profile(box["empty"], short, "x", "erudit", tmp_path)


def test_refuses_an_alphabet_photo_with_nothing_laid_out(box, tmp_path):
    bare = photo(tmp_path, "bare", EMPTY, 6)  # the empty board again, another shot
    with pytest.raises(ProfileError, match=r"bare.png: no tiles, expected 33 \(32 letters"):
        build_profile(box["empty"], bare, "x", "erudit", tmp_path)


def test_refuses_a_tile_laid_beyond_the_alphabet(box, tmp_path):
    board = list(ALPHABET)
    board[10] = "......А........"
    extra = photo(tmp_path, "extra", board, 5)
    with pytest.raises(ProfileError, match=r"34 tiles, expected 33 \(32 letters and the star\)"):
        build_profile(box["empty"], extra, "x", "erudit", tmp_path)


def test_refuses_letters_out_of_order(tmp_path):
    # the order check trusts the general model only where it is sure: a box it reads well
    letters = list("".join(ERUDIT.alphabet))
    np.random.default_rng(0).shuffle(letters)
    empty = photo(tmp_path, "empty", EMPTY, 6, style="erudit-black", box=3)
    shuffled = photo(tmp_path, "shuffled", alphabet_board("".join(letters) + "*"), 7,
                     style="erudit-black", box=3)
    with pytest.raises(ProfileError, match=r"letters out of order at \d+ cells: A1 "):
        build_profile(empty, shuffled, "x", "erudit", tmp_path)


def test_refuses_unknown_corrupt_and_stale_profiles(box, tmp_path):
    with pytest.raises(ProfileError, match="unknown profile 'nope'"):
        load_profile("nope", tmp_path)
    with pytest.raises(ProfileError, match="profile name"):
        load_profile("../etc", tmp_path)
    source = profile_folder("green", box["data"])
    for name, damage in (("broken", "json"), ("stale", "model")):
        folder = profile_folder(name, tmp_path)
        folder.mkdir(parents=True)
        (folder / "refs.npz").write_bytes((source / "refs.npz").read_bytes())
        meta = json.loads((source / "profile.json").read_text("utf-8"))
        if damage == "json":
            (folder / "profile.json").write_text("{ not json", encoding="utf-8")
        else:
            meta["model"] = "0" * 16
            (folder / "profile.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ProfileError, match="profile 'broken' .* is corrupt"):
        load_profile("broken", tmp_path)
    with pytest.raises(ProfileError, match="^profile stale was made with another model and "
                                           "keeps no calibration photos; run erudit calibrate"):
        load_profile("stale", tmp_path)



def test_refuses_damaged_references_and_missing_fields(box, tmp_path):
    """Each kind of damage is named, not left to a traceback from numpy or zipfile."""
    source = profile_folder("green", box["data"])
    meta = json.loads((source / "profile.json").read_text("utf-8"))
    with np.load(source / "refs.npz") as data:
        refs, classes = data["refs"], data["classes"]
    cases = {
        "cut": ("refs.npz is damaged", lambda f: (f / "refs.npz").write_bytes(
            (source / "refs.npz").read_bytes()[:1000])),
        "narrow": (f"references of 10 numbers, the model's have {refs.shape[1]}",
                   lambda f: np.savez(f / "refs.npz", refs=refs[:, :10], classes=classes)),
        "unlabelled": ("refs.npz is damaged .*classes",
                       lambda f: np.savez(f / "refs.npz", refs=refs)),
        "unruled": ("profile.json lacks 'ruleset'",
                    lambda f: (f / "profile.json").write_text(json.dumps(
                        {k: v for k, v in meta.items() if k != "ruleset"}), "utf-8")),
    }
    for name, (reason, damage) in cases.items():
        folder = profile_folder(name, tmp_path)
        folder.mkdir(parents=True)
        for file in ("refs.npz", "profile.json"):
            (folder / file).write_bytes((source / file).read_bytes())
        damage(folder)
        with pytest.raises(ProfileError, match=f"profile '{name}' .* is corrupt \\({reason}"):
            load_profile(name, tmp_path)


def test_a_profile_outlives_a_model_update(box, tmp_path, capsys):
    """A profile keeps its calibration photos' top-down views, so a new model makes its own
    references from them the first time the profile is loaded: the player calibrates once."""
    source, folder = profile_folder("green", box["data"]), profile_folder("old", tmp_path)
    folder.mkdir(parents=True)
    for file in ("refs.npz", "empty.png", "alphabet.png"):
        (folder / file).write_bytes((source / file).read_bytes())
    meta = json.loads((source / "profile.json").read_text("utf-8"))
    (folder / "profile.json").write_text(json.dumps({**meta, "model": "0" * 16}), "utf-8")
    with np.load(folder / "refs.npz") as data:  # stand for another model's references
        np.savez(folder / "refs.npz", refs=-data["refs"], classes=data["classes"])
    capsys.readouterr()
    profile = load_profile("old", tmp_path)
    assert "profile old was made with another model" in capsys.readouterr().err
    assert profile.model == box["profile"].model
    assert np.allclose(profile.refs, box["profile"].refs, atol=2e-3)  # float16 on disk
    assert json.loads((folder / "profile.json").read_text("utf-8"))["model"] == profile.model
    assert not list(folder.glob(".*"))  # no half-written files left
    image = cv2.imread(str(box["game"]))
    again = read_board(image, ruleset=profile.apply_to(ERUDIT), profile=profile).board
    assert wrong_cells(again) <= 1


def test_cli_calibrate_then_read_with_the_profile(box, tmp_path, capsys):
    data = tmp_path / "data"
    code = main(["calibrate", "--empty", str(box["empty"]), "--alphabet", str(box["alphabet"]),
                 "--name", "kitchen", "--data", str(data)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert "profile kitchen" in out and "W..l...W...l..W" in out
    assert (data / "profiles" / "kitchen" / "profile.json").is_file()
    code = main(["read", str(box["game"]), "--profile", "kitchen", "--data", str(data), "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert wrong_cells(json.loads(out)["board"]) <= 1


def test_cli_calibrating_a_box_again_replaces_all_of_it(box, tmp_path, capsys):
    data = tmp_path / "data"
    main(["calibrate", "--empty", str(box["empty"]), "--alphabet", str(box["alphabet"]),
          "--name", "kitchen", "--data", str(data)])
    capsys.readouterr()
    code = main(["calibrate", "--empty", str(box["empty"]), "--name", "kitchen",
                 "--data", str(data)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ("erudit: the box kitchen was calibrated before; these photos "
                                 "replace that calibration\n")
    folder = data / "profiles" / "kitchen"
    assert sorted(p.name for p in folder.iterdir()) == ["empty.png", "profile.json", "refs.npz"]
    profile = load_profile("kitchen", data)
    assert profile.letters == [] and profile.alphabet_view is None


def test_cli_calibrate_names_a_data_folder_it_cannot_write(box, tmp_path, capsys):
    (tmp_path / "stray").write_text("not a folder", encoding="utf-8")
    data = tmp_path / "stray" / "data"
    code = main(["calibrate", "--empty", str(box["empty"]), "--name", "kitchen",
                 "--data", str(data)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == (f"erudit: {data / 'profiles' / 'kitchen'}: cannot save the profile "
                   "(not a directory)\n")


def test_cli_replays_a_game_on_the_box_with_its_profile(box, tmp_path, capsys):
    # every photo shows the one novel box (box_seed), as at a real table
    photos = game_photos(ERUDIT, seed=9301, turns=4, players=2, style=NOVEL, box_seed=BOX)
    paths = []
    for number, image in enumerate(photos.images, 1):
        paths.append(str(tmp_path / f"turn{number}.png"))
        cv2.imwrite(paths[-1], image)
    code = main(["replay", *paths, "--profile", "green", "--data", str(box["data"]), "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    game = json.loads(out)
    assert [m["score"] for m in game["moves"]] == photos.scores
    assert game["totals"] == photos.totals


def test_cli_refusal_is_one_line(box, tmp_path, capsys):
    code = main(["read", str(box["game"]), "--profile", "missing", "--data", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and "unknown profile 'missing'" in err
