"""Speed and memory of taking turns from a camera, as ratios to decoding one 12 MP JPEG with
OpenCV in the same run.

    python -m bench.bench_stream                 # a 12 MP render, 1280×720 frames, 2 h stream
    python -m bench.bench_stream --minutes 20    # a shorter stream for the memory figure

- check: the cheap look at a still 1280×720 frame (TurnTaker.feed when nothing needs reading:
  brightness, straightened board, compare), median of many frames;
- read: the full read of a 1280×720 frame, best of a few: finding the grid and reading every
  cell (vision.read_board), and reading it where the watcher already knows it lies
  (vision.read_grid: the stream's read while the camera stays put), against the best of as
  many decodes timed in turn with them;
- latency: a filmed game at 1280×720 and 10 fps replayed as a live camera would feed it (each
  frame waits for the work on the one before): from the hand leaving the board to the move
  taken, in the video's seconds plus the wall time the read took;
- replay: `erudit replay`'s work on such a game filmed as a phone saves it (30 fps, MPEG-4),
  against the video's own length;
- memory: the process's resident size while a TurnTaker watches a long stream (the last
  board of that game, a hand coming and going over it every few seconds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from bench.bench_locate import write_render
from bench.machine import describe
from companion_app.stream import SETTLE, TurnTaker
from engine.game import Game
from engine.ruleset import load_ruleset
from synth.render import render_photo
from synth.video import draw_arm, game_video

FRAME = (1280, 720)
FPS = 10.0
PHONE_FPS = 30.0  # a phone's video
DECODES = 10  # best of this many 12 MP decodes
CHECKS = 300  # still frames timed for the cheap look
READS = 10  # best of this many full reads (and decodes in turn with them)
HAND_EVERY = 6.0  # s between a hand's visits over the board in the long stream
SAMPLE_EVERY = 600.0  # s of stream between two memory samples


def decode_time(path: str) -> float:
    best = np.inf
    for _ in range(DECODES):
        start = time.perf_counter()
        cv2.imread(path, cv2.IMREAD_COLOR)
        best = min(best, time.perf_counter() - start)
    return best


def check_time(frame: np.ndarray) -> float:
    """Median time of the cheap look at a still frame, after the taker has read it once."""
    taker = TurnTaker(Game(load_ruleset("erudit"), 2, word_check="off"))
    rng = np.random.default_rng(0)
    frames = [cv2.add(frame, rng.integers(0, 3, frame.shape, dtype=np.uint8)) for _ in range(4)]
    t = 0.0
    while t < 2 * SETTLE + 1:  # found, still, read once
        taker.feed(frames[0], t)
        t += 1 / FPS
    times = []
    for i in range(CHECKS):
        start = time.perf_counter()
        events = taker.feed(frames[i % len(frames)], t)
        times.append(time.perf_counter() - start)
        t += 1 / FPS
        assert not events, events
    return statistics.median(times)


def read_times(frame: np.ndarray, jpeg: str) -> tuple[float, float, float]:
    """Best times of a full read of the frame: finding the grid and reading it, and reading
    it where the watcher already knows it lies (what a camera that has not moved needs); and
    of the unit's decode, taken in turn with them: on a shared host the load swings within
    seconds, and a decode timed apart (before the check's frames) or more often than the reads
    can catch a quieter moment than they do."""
    from vision.locate import locate_board
    from vision.read import read_board, read_grid

    read_board(frame)  # the networks loaded
    location = locate_board(frame)
    found = known = decoded = np.inf
    for _ in range(READS):  # in turn, so that all three see the same load
        start = time.perf_counter()
        cv2.imread(jpeg, cv2.IMREAD_COLOR)
        decoded = min(decoded, time.perf_counter() - start)
        start = time.perf_counter()
        read_board(frame)
        found = min(found, time.perf_counter() - start)
        start = time.perf_counter()
        read_grid(frame, location)
        known = min(known, time.perf_counter() - start)
    return found, known, decoded


def latency(folder: Path) -> tuple[list[float], list[float], bool]:
    """(video seconds from the hand leaving to each move taken, wall seconds each move's read
    took, whether every move came out exact), on a filmed game fed frame by frame."""
    video = game_video(str(folder / "game.avi"), load_ruleset("erudit"), seed=5, turns=3,
                       size=FRAME, fps=FPS)
    game = Game(video.ruleset, video.players, word_check="off")
    taker = TurnTaker(game)
    capture = cv2.VideoCapture(video.path)
    taken, reads, index = [], [], 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        start = time.perf_counter()
        events = taker.feed(frame, index / video.fps)
        took = time.perf_counter() - start
        for event in events:
            if event.kind == "move":
                taken.append(event.t)
                reads.append(took)
        index += 1
    exact = [str(t.board) for t in game.turns] == [str(b) for b in video.boards] and \
        [t.score.total for t in game.turns] == video.scores
    return [t - laid for t, laid in zip(taken, video.laid, strict=False)], reads, exact


def replay_speed(folder: Path) -> tuple[float, float, bool]:
    """(video seconds, wall seconds, every move exact) of `erudit replay`'s work on a filmed
    game as a phone would save it: 1280×720, 30 frames a second, MPEG-4."""
    from companion_app.stream import replay_video

    video = game_video(str(folder / "phone.mp4"), load_ruleset("erudit"), seed=5, turns=3,
                       size=FRAME, fps=PHONE_FPS)
    game = Game(video.ruleset, video.players, word_check="off")
    start = time.perf_counter()
    replay_video(game, video.path)
    took = time.perf_counter() - start
    exact = [t.score.total for t in game.turns] == video.scores
    return video.frames / video.fps, took, exact


def memory(minutes: float) -> list[tuple[float, float]]:
    """(stream minutes, resident MB) every SAMPLE_EVERY seconds of a long watched stream."""
    board = ["." * 15] * 7 + ["...ГУЦУЛ......."] + ["." * 15] * 7
    shot = render_photo(board, seed=5, style="erudit-black", size=FRAME, pose="frontal",
                        scene=True)
    game = Game(load_ruleset("erudit"), 2, word_check="off")
    taker = TurnTaker(game)
    centre = shot.corners.mean(axis=0)
    arm = float(np.linalg.norm(shot.corners[1] - shot.corners[0])) / 15 * 1.4
    hand = shot.image.copy()
    draw_arm(hand, centre, (centre[0], FRAME[1] + 40), arm)
    samples, t, next_sample = [], 0.0, 0.0
    while t <= minutes * 60:
        frame = hand if t % HAND_EVERY < 1.0 else shot.image
        taker.feed(frame, t)
        if t >= next_sample:
            samples.append((t / 60, resident_mb()))
            next_sample += SAMPLE_EVERY
        t += 1 / FPS
    samples.append((t / 60, resident_mb()))
    return samples


def resident_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=120.0, help="long stream (default 2 h)")
    args = parser.parse_args(argv)
    print(describe())
    with tempfile.TemporaryDirectory() as folder:
        board = ["." * 15] * 7 + ["...ГУЦУЛ......."] + ["." * 15] * 7
        jpeg = write_render(folder, "unit", board, 9_060_000, "erudit-black")
        frame = render_photo(board, seed=5, style="erudit-black", size=FRAME, pose="frontal",
                             scene=True).image
        unit = decode_time(jpeg)
        check, (found, known, beside) = check_time(frame), read_times(frame, jpeg)
        print(f"unit: 12 MP JPEG decode {unit * 1000:.1f} ms")
        print(f"check of a still 1280×720 frame: {check * 1000:.2f} ms = {check / unit:.3f} "
              f"unit (goal ≤ 0.1)")
        print(f"full read of a 1280×720 frame (goal ≤ 1 unit; the decode timed in turn with "
              f"the reads {beside * 1000:.1f} ms): grid found and read {found * 1000:.0f} ms = "
              f"{found / beside:.2f} unit; read where the camera watches it "
              f"{known * 1000:.0f} ms = {known / beside:.2f} unit")
        after, reads, exact = latency(Path(folder))
        worst = max(a + r for a, r in zip(after, reads, strict=True)) if after else float("nan")
        print(f"hand gone → move taken: {', '.join(f'{a:.2f}' for a in after)} s of video; "
              f"the read {', '.join(f'{r:.2f}' for r in reads)} s; worst {worst:.2f} s "
              f"(goal ≤ settle + 1 = {SETTLE + 1:.1f} s); moves exact: {exact}")
        length, took, exact = replay_speed(Path(folder))
        print(f"replay of a 1280×720 30 fps MPEG-4 video of {length:.0f} s: {took:.1f} s, "
              f"{length / took:.1f}× real time; moves exact: {exact}")
    samples = memory(args.minutes)
    print("memory over the stream: " + ", ".join(f"{m:.0f} min {mb:.0f} MB" for m, mb in samples))
    growth = samples[-1][1] - samples[1][1] if len(samples) > 2 else 0.0
    print(f"growth after the first {SAMPLE_EVERY / 60:.0f} min: {growth:+.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
