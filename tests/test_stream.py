"""A camera watching the table → the moves, taken by themselves: filmed games (a hand laying
tiles one by one, a hand hovering without playing, shake and noise, a camera that loses the
board) rendered at test time; the cheap look at each frame on small made-up views."""

import json
import re

import cv2
import numpy as np
import pytest

from companion_app.cli import main
from companion_app.stream import SETTLE, TurnTaker, replay_video
from engine.errors import PhotoError
from engine.game import Game
from engine.ruleset import load_ruleset
from synth.video import game_video
from vision.motion import EDGE, SIDE, compare

ERUDIT = load_ruleset("erudit")

# one pytest-xdist worker runs the whole module, so its module fixtures are made once
pytestmark = pytest.mark.xdist_group("stream")


@pytest.fixture(scope="module")
def filmed(tmp_path_factory):
    path = tmp_path_factory.mktemp("video") / "game.avi"
    return game_video(str(path), ERUDIT, seed=5, turns=3)


def assert_exact(game: Game, video) -> None:
    assert [str(t.board) for t in game.turns] == [str(b) for b in video.boards]
    assert [t.score.total for t in game.turns] == video.scores
    assert game.totals == video.totals


def test_every_play_of_a_filmed_game_comes_out_exact(filmed):
    game = Game(ERUDIT, filmed.players, word_check="off")
    where = replay_video(game, filmed.path)
    assert_exact(game, filmed)
    assert all(t.sure for t in game.turns)
    for seen, laid in zip(where, filmed.laid, strict=True):  # taken once the board settled
        assert laid + SETTLE - 0.5 <= seen.t <= laid + SETTLE + 1.0


def test_a_move_undone_is_taken_again_from_the_board_the_camera_sees(filmed):
    game = Game(ERUDIT, filmed.players, word_check="off")
    taker = TurnTaker(game)
    capture = cv2.VideoCapture(filmed.path)
    index, undone = 0, False
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        events = taker.feed(frame, index / filmed.fps)
        if not undone and [e for e in events if e.kind == "move"]:
            game.undo()           # a player takes the first move back: the board still shows it
            taker.resync()
            undone = True
        index += 1
    assert_exact(game, filmed)


def recoloured(frame: np.ndarray) -> np.ndarray:
    """The frame as a camera whose white balance and exposure curve changed would give it:
    not one gain per channel, so the cells unlike before are all over the board."""
    x = np.arange(256, dtype=np.float32) / 255
    table = np.stack([255 * x ** 0.55, 235 * x + 20, 255 * x ** 1.4], axis=1)
    return cv2.LUT(frame, table.clip(0, 255).astype(np.uint8).reshape(256, 1, 3))


def test_a_camera_whose_colours_change_for_good_goes_on_taking_the_moves(tmp_path):
    """From the first move on, every frame in other colours: once the board, found where it
    was, has stayed still a while, it is watched as it looks now, and the next move is taken
    as laid. (The film leaves the board alone 9 s after each move, as players thinking do.)"""
    video = game_video(str(tmp_path / "recoloured.avi"), ERUDIT, seed=5, turns=2,
                       settle=7.0, hover_every=0)
    game = Game(ERUDIT, video.players, word_check="off")
    taker = TurnTaker(game)
    capture = cv2.VideoCapture(video.path)
    index, changed, events = 0, False, []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        seen = taker.feed(recoloured(frame) if changed else frame, index / video.fps)
        changed = changed or any(e.kind == "move" for e in seen)
        events += seen
        index += 1
    assert not [e for e in events if e.kind == "paused"]
    assert_exact(game, video)


def test_replay_of_a_video_prints_progress_and_its_json(filmed, capsys):
    assert main(["replay", filmed.path, "--json"]) == 0
    out, err = capsys.readouterr()
    record = json.loads(out)
    assert [m["score"] for m in record["moves"]] == filmed.scores
    assert record["totals"] == filmed.totals
    for move in record["moves"]:
        assert move["frame"] == round(move["t"] * filmed.fps)
    lines = err.splitlines()
    assert re.fullmatch(f"erudit: {filmed.path}: 1[34] s, 1 move", lines[0])  # one a move
    assert lines[-1].startswith(f"erudit: {filmed.path}: 3 moves in ")


@pytest.mark.parametrize("blind, knock", [("dark", (0, 0)), ("away", (30, 20))])
def test_a_camera_that_loses_the_board_pauses_and_invents_nothing(tmp_path, blind, knock):
    video = game_video(str(tmp_path / "lost.avi"), ERUDIT, seed=5, turns=2, lost_after=1,
                       blind=blind, knock=knock, hover_every=0)
    game = Game(ERUDIT, video.players, word_check="off")
    taker = TurnTaker(game)
    capture = cv2.VideoCapture(video.path)
    events, index = [], 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        events += taker.feed(frame, index / video.fps)
        index += 1
    start, end = video.lost
    paused = [e for e in events if e.kind == "paused"]
    resumed = [e for e in events if e.kind == "resumed"]
    assert len(paused) == 1 and start <= paused[0].t <= start + SETTLE
    assert "the game waits" in paused[0].note
    assert len(resumed) == 1 and end <= resumed[0].t <= end + SETTLE
    moves = [e for e in events if e.kind == "move"]
    assert not [m for m in moves if start <= m.t <= resumed[0].t]
    assert_exact(game, video)


def test_a_file_that_is_no_video_is_an_error_naming_it(tmp_path, capsys):
    path = tmp_path / "broken.mp4"
    path.write_bytes(b"not a video at all")
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err


def test_a_video_without_a_board_is_an_error_naming_it(tmp_path, capsys):
    path = str(tmp_path / "table.avi")
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), 5.0, (320, 240))
    rng = np.random.default_rng(1)
    for _ in range(10):
        writer.write(rng.integers(80, 120, (240, 320, 3), dtype=np.uint8))
    writer.release()
    assert main(["replay", path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"erudit: {path}: no frame of the video shows a board"


def test_replay_of_a_missing_video_names_it():
    with pytest.raises(PhotoError, match="gone.mkv: no such file"):
        replay_video(Game(ERUDIT, 2), "gone.mkv")


# -- the cheap look ------------------------------------------------------------------------
def board(colour=(40, 40, 40)) -> np.ndarray:
    return np.full((SIDE, SIDE, 3), colour, np.float32)


def test_a_tile_laid_changes_its_cell_and_covers_nothing():
    before, after = board(), board()
    after[EDGE + 7, EDGE + 7] = (200, 220, 230)
    look = compare(after, before, before)
    assert look.changed == [(7, 7)] and look.moving and not look.covered and not look.gone


def test_a_hand_over_the_board_s_edge_covers_it():
    before, hand = board(), board()
    hand[0, 5:8] = hand[EDGE:EDGE + 3, 6] = (120, 160, 215)
    look = compare(hand, hand, before)
    assert look.covered and not look.moving and not look.gone


def test_a_shadow_over_many_cells_covers_the_board():
    before, shadow = board((90, 90, 90)), board((90, 90, 90))
    shadow[EDGE + 2:EDGE + 6, EDGE + 2:EDGE + 6] = (30, 30, 30)
    assert compare(shadow, shadow, before).covered


def test_a_view_unlike_the_board_everywhere_has_lost_it():
    before, table = board(), board((30, 90, 160))    # the camera turned to a wooden table
    before[EDGE + 7, EDGE + 5:EDGE + 10] = (200, 220, 230)
    assert compare(table, table, before).gone


def test_the_camera_s_exposure_drifting_changes_nothing():
    before = board((60, 80, 100))
    before[EDGE + 7, EDGE + 7] = (200, 220, 230)
    brighter = before * 1.3
    look = compare(brighter, before, before)
    assert not look.changed and not look.covered


# -- the frames before a move ----------------------------------------------------------------
def reading_of(cells: dict, labels: list[str]) -> np.ndarray:
    """(15, 15, K) probabilities: every cell surely empty but `cells` ({(row, col): {symbol:
    p}}, the rest of each spread over the other symbols)."""
    probs = np.full((15, 15, len(labels)), 1e-4)
    probs[..., labels.index(".")] = 1.0
    for (row, col), shares in cells.items():
        probs[row, col] = (1 - sum(shares.values())) / (len(labels) - len(shares))
        for symbol, p in shares.items():
            probs[row, col, labels.index(symbol)] = p
    return probs / probs.sum(-1, keepdims=True)


def test_a_letter_seen_before_the_move_was_taken_counts():
    from companion_app.stream import with_earlier
    from vision.classifier import labels_for

    labels = labels_for(ERUDIT.alphabet)
    still = reading_of({(7, 7): {"Р": 0.45, "Б": 0.45}, (7, 8): {"О": 0.9}}, labels)
    earlier = reading_of({(7, 7): {"Р": 0.9}}, labels)   # before the hand put down О
    probs = with_earlier(still, [earlier], labels)
    assert probs[7, 7, labels.index("Р")] > 0.8
    assert probs[7, 7, labels.index(".")] == pytest.approx(still[7, 7, labels.index(".")])
    assert np.allclose(probs[7, 8], still[7, 8])      # shown empty before: as the still frame
