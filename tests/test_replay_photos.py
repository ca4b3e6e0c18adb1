"""Photos after each turn → the right moves and scores, even with a hand, a misread or a photo
taken from the other side of the table (synthetic games rendered at test time)."""

import json
from dataclasses import replace
from functools import cache

import cv2
import numpy as np
import pytest

from companion_app.cli import main
from companion_app.photos import replay_images
from engine.board import is_star
from engine.errors import PhotoError
from engine.game import Game
from engine.ruleset import load_ruleset
from synth.photos import game_photos

ERUDIT = load_ruleset("erudit")

# one pytest-xdist worker runs the whole module, so each game is rendered once
pytestmark = pytest.mark.xdist_group("replay_photos")


@cache
def _rendered(seed: int, turns: int):
    return game_photos(ERUDIT, seed=seed, turns=turns, players=2, style="erudit-black")


def photographed(seed: int, turns: int):
    """The photos of turns 1..`turns` of two players' game `seed` on an Эрудит-black box:
    rendered once for the module's tests, each getting its own list of them to put other
    photos in."""
    photos = _rendered(seed, turns)
    return replace(photos, images=[image.copy() for image in photos.images])


def same_tiles(a, b) -> bool:
    cells_a = {(r, c): s for r, c, s in a.tiles()}
    cells_b = {(r, c): s for r, c, s in b.tiles()}
    return cells_a.keys() == cells_b.keys() and all(
        x == cells_b[rc] or (is_star(x) and is_star(cells_b[rc])) for rc, x in cells_a.items())


def replayed(photos) -> Game:
    game = Game(photos.ruleset, photos.players, word_check="off")
    replay_images(game, photos.images)
    return game


@pytest.mark.parametrize("seed, style, players, damage", [
    (9101, "erudit-black", 2, "none"),
    (9106, "erudit-cream", 3, "none"),
    (9103, "erudit-black", 2, "opposite-side"),
    (9104, "erudit-black", 4, "hand"),
    (9105, "erudit-cream", 2, "misread"),
])
def test_synthetic_game_replays_exactly(seed, style, players, damage):
    photos = game_photos(ERUDIT, seed=seed, turns=7, players=players, style=style, damage=damage)
    game = replayed(photos)
    for turn, board, score in zip(game.turns, photos.boards, photos.scores, strict=True):
        assert same_tiles(turn.board, board), f"turn {turn.number}: {photos.damaged}"
        assert turn.score.total == score, f"turn {turn.number}"
    assert game.totals == photos.totals


def test_photo_without_a_board_is_read_from_the_next_one(capsys):
    photos = photographed(9101, 6)
    photos.images[2] = np.full_like(photos.images[2], 128)       # the camera saw only the table
    game = replayed(photos)
    assert "turn 3 is read from the next photo" in capsys.readouterr().err
    assert not game.turns[2].sure
    assert same_tiles(game.turns[3].board, photos.boards[3])       # both moves are on the board
    # КУВШИНКА and СЕМИНАР touch only the old tiles: either could have come first, so which
    # player scored which is a guess, turn 4's too
    assert not game.turns[3].sure
    assert [t.sure for t in game.turns[4:]] == [True, True]


def test_a_move_read_with_the_one_before_it_is_sure_when_it_could_only_come_second():
    photos = photographed(9101, 6)
    photos.images[3] = np.full_like(photos.images[3], 128)
    game = replayed(photos)
    assert not game.turns[3].sure
    # КИКИМОРА crosses the И of СЕМИНАР: it was played second
    assert same_tiles(game.turns[4].board, photos.boards[4]) and game.turns[4].sure
    assert [t.score.total for t in game.turns] == photos.scores


def far_away(image: np.ndarray, share: float = 0.3) -> np.ndarray:
    """The photo as if taken from far off: shrunk to `share` in the middle of the table."""
    small = cv2.resize(image, None, fx=share, fy=share, interpolation=cv2.INTER_AREA)
    far = np.empty_like(image)
    far[:] = image[5, 5]
    height, width = small.shape[:2]
    top, left = (image.shape[0] - height) // 2, (image.shape[1] - width) // 2
    far[top:top + height, left:left + width] = small
    return far


def test_a_board_too_small_to_read_still_shows_which_move_came_first(capsys):
    photos = photographed(9101, 6)
    photos.images[2] = far_away(photos.images[2])    # cells of ~11 px: letters unreadable
    game = replayed(photos)
    err = capsys.readouterr().err
    assert "board too small to read" in err
    assert "turn 3: where its tiles lie is read from this photo" in err
    # the photo shows СЕМИНАР down and КУВШИНКА not yet: the order, and so who scored
    # which, is known; only turn 3's letters, read from photo 4, are left to check
    assert not game.turns[2].sure and game.turns[3].sure
    for turn, board in zip(game.turns, photos.boards, strict=True):
        assert same_tiles(turn.board, board), f"turn {turn.number}"
    assert [t.score.total for t in game.turns] == photos.scores


def illegible(image: np.ndarray):
    """The error of a photo whose board is found too small to read."""
    from vision.locate import IllegibleBoard, locate_board

    with pytest.raises(IllegibleBoard, match="board too small to read") as caught:
        locate_board(image)
    assert caught.value.location is not None
    return caught.value


def test_a_glimpse_is_refused_where_it_does_not_show_the_game_clearly():
    from companion_app.photos import glimpse

    photos = photographed(9101, 5)
    game = Game(ERUDIT, 2, word_check="off")
    for board in photos.boards[:2]:
        game.play(board)
    far = far_away(photos.images[2])
    seen = glimpse(game, far, illegible(far))
    empty = seen.probs[..., seen.labels.index(".")]
    truth = np.array([[photos.boards[2][r, c] != "." for c in range(15)] for r in range(15)])
    # where its tiles lie, to within a cell the tiny board leaves in doubt (0.4-0.6)
    assert ((empty < 0.5) == truth).sum() >= 224 and (empty[truth] < 0.6).all()
    assert (empty[~truth] > 0.4).all()
    # two turns later the photo shows more new tiles than a rack holds: not this turn's board
    later = far_away(photos.images[4])
    assert glimpse(game, later, illegible(later)) is None
    # too few tiles on the board to place it
    assert glimpse(Game(ERUDIT, 2, word_check="off"), far, illegible(far)) is None


def test_last_photo_without_a_board_is_an_error():
    photos = photographed(9101, 3)
    photos.images[-1] = np.full_like(photos.images[-1], 128)
    with pytest.raises(PhotoError, match="no board found"):
        replayed(photos)


def test_photo_of_another_game_is_read_from_the_next_one(capsys):
    photos = photographed(9101, 6)
    other = photographed(9106, 4)
    photos.images[3] = other.images[3]  # a photo from another game's folder
    game = replayed(photos)
    assert "this photo does not show this game's board" in capsys.readouterr().err
    assert not game.turns[3].sure
    assert same_tiles(game.turns[4].board, photos.boards[4])       # the next photo stands in
    assert same_tiles(game.turns[5].board, photos.boards[5]) and game.turns[5].sure


def test_a_proposal_from_a_photo_of_another_game_says_so(tmp_path):
    from companion_app.photos import propose_turn

    photos = photographed(9101, 4)
    other = photographed(9106, 4)
    game = Game(ERUDIT, 2, word_check="off")
    replay_images(game, photos.images[:3])
    path = tmp_path / "other.jpg"
    cv2.imwrite(str(path), other.images[3])
    proposal = propose_turn(game, str(path))
    assert not proposal.sure
    assert str(proposal.message).startswith("this photo does not show this game's board")


def test_a_proposal_names_a_tile_the_photo_shows_past_the_end_of_its_word():
    from companion_app.photos import propose_reading, read_aligned

    photos = photographed(9101, 3)
    game = Game(ERUDIT, 2, word_check="off")
    replay_images(game, photos.images[:2])
    reading = read_aligned(game, photos.images[2])   # КУВШИНКА down J1-J8: J1-J7 new
    assert propose_reading(game, photos.images[2], reading).sure
    # below its last letter the photo shows a tile whose letter it cannot make out
    letters = [reading.labels.index(ch) for ch in "ЪЫЬЩЦЖЭЮФ"]
    reading.probs[8, 9] = 0.0
    reading.probs[8, 9, letters] = 0.89 / len(letters)
    reading.probs[8, 9, reading.labels.index(".")] = 0.11
    proposal = propose_reading(game, photos.images[2], reading)
    assert same_tiles(proposal.board, photos.boards[2]) and not proposal.sure
    assert str(proposal.message) == "the photo shows a tile at J9 too: check the move"


def test_last_photo_of_another_game_is_an_error():
    photos = photographed(9101, 4)
    other = photographed(9106, 4)
    photos.images[-1] = other.images[-1]
    with pytest.raises(PhotoError, match=r"this photo does not show this game's board "
                                         r"\(tiles already down where they were: \d+ of \d+\)"):
        replayed(photos)


def test_replay_photos_json(tmp_path, capsys):
    photos = game_photos(ERUDIT, seed=9201, turns=3, players=2, style="erudit-black")
    paths = []
    for number, image in enumerate(photos.images, 1):
        path = tmp_path / f"turn{number}.jpg"
        cv2.imwrite(str(path), image)
        paths.append(str(path))
    assert main(["replay", *paths, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["score"] for m in out["moves"]] == photos.scores
    assert out["totals"] == photos.totals and out["winner"] is None
    assert all(m["sure"] in (True, False) and isinstance(m["alternatives"], list)
               for m in out["moves"])


def test_unreadable_photo_in_replay_names_it(tmp_path, capsys):
    bad = tmp_path / "turn1.jpg"
    bad.write_bytes(b"not a jpeg")
    assert main(["replay", str(bad)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "turn1.jpg" in err[0]


def test_demo_matches_the_recorded_scores(capsys):
    assert main(["demo"]) == 0
    assert "every score matches" in capsys.readouterr().out


def test_game_photos_of_one_box(monkeypatch):
    import synth.render

    real, boxes = synth.render.render_photo, []

    def recorded(*args, **kwargs):
        boxes.append(kwargs["box_seed"])
        return real(*args, **kwargs)

    monkeypatch.setattr(synth.render, "render_photo", recorded)
    game_photos(ERUDIT, seed=9101, turns=2, players=2, style="erudit-black", box_seed=13)
    game_photos(ERUDIT, seed=9101, turns=1, players=2, style="erudit-black")
    assert boxes == [13, 13, None]
