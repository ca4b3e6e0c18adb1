"""A game played from a page's camera, as `erudit serve` runs it (waitress, on 127.0.0.1): one
phone sends the frames of a filmed game (rendered now) 4 a second, as the game page's camera
does, while another phone opens the game page every 0.1 s. How fast the page answers before
and while the watcher reads the board, how long a frame takes to be taken in, and when each
move is stored, and heard of by a third page's event stream, against when the hand left it.

    python bench/bench_live.py [--turns 2] [--width 1280] [--quality 80]
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_load import Phone, percentile, start_server  # noqa: E402

FPS = 4.0      # frames a page sends each second


def filmed_frames(turns: int, width: int, quality: int):
    """The filmed game and its frames at FPS, as JPEGs a page sends."""
    from engine.ruleset import load_ruleset
    from synth.video import game_video

    path = Path(tempfile.mkdtemp(prefix="bench-live-")) / "game.avi"
    video = game_video(str(path), load_ruleset("erudit"), seed=5, turns=turns,
                       size=(width, width * 9 // 16), hover_every=0)
    capture, frames, index = cv2.VideoCapture(str(path)), [], 0
    step = round(video.fps / FPS)
    while capture.grab():
        if index % step == 0:
            frame = capture.retrieve()[1]
            frames.append(cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])[1]
                          .tobytes())
        index += 1
    return video, frames


def page_times(phone: Phone, game: str, until) -> list[float]:
    """Milliseconds of each game page opened every 0.1 s while `until()` holds."""
    times = []
    while until():
        start = time.perf_counter()
        status, _ = phone.request("GET", f"/g/{game}")
        if status != 200:
            raise SystemExit(f"the game page answered {status}")
        times.append((time.perf_counter() - start) * 1000)
        time.sleep(0.1)
    return times


def pushes(port: int, game: str, heard: list[float]) -> None:
    """The times (time.monotonic()) a page's event stream of the game hears it changed, the
    state it says on opening left out; until the stream ends."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", f"/g/{game}/events")
        answer, opening = conn.getresponse(), True
        for line in answer:
            if line.startswith(b"event: state"):
                if not opening:
                    heard.append(time.monotonic())
                opening = False
    except OSError:
        return
    finally:
        conn.close()


def summary(times: list[float]) -> str:
    return (f"p50 {percentile(times, 0.5):.0f} ms, p95 {percentile(times, 0.95):.0f} ms, "
            f"max {max(times):.0f} ms ({len(times)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--quality", type=int, default=80)
    args = parser.parse_args()
    from bench.machine import describe

    print(describe())
    video, frames = filmed_frames(args.turns, args.width, args.quality)
    print(f"frames: {len(frames)} at {FPS:g} a second, {args.width}×{args.width * 9 // 16} "
          f"JPEG q{args.quality}, {sum(map(len, frames)) / len(frames) / 1e3:.0f} KB each")
    data = Path(tempfile.mkdtemp(prefix="bench-live-"))
    server, port = start_server(data, https=False)
    try:
        camera, page = Phone(port), Phone(port)
        game = camera.new_game()
        ends = time.monotonic() + 5
        idle = page_times(page, game, lambda: time.monotonic() < ends)
        sent, stored, done, heard = [], {}, threading.Event(), []
        threading.Thread(target=pushes, args=(port, game, heard), daemon=True).start()
        time.sleep(0.5)
        start = time.monotonic()

        def send():
            for index, data in enumerate(frames):
                time.sleep(max(0.0, start + index / FPS - time.monotonic()))
                began = time.perf_counter()
                status, body = camera.request("POST", f"/g/{game}/frame", data, {
                    "Content-Type": "image/jpeg", "X-CSRF-Token": camera.csrf})
                sent.append((time.perf_counter() - began) * 1000)
                if status != 200:
                    raise SystemExit(f"a frame was refused: {body.decode()}")
                moves = _moves(camera, game)
                if moves > len(stored):
                    stored[moves] = index / FPS
            done.set()

        sender = threading.Thread(target=send)
        sender.start()
        busy = page_times(page, game, lambda: not done.is_set())
        sender.join()
        print(f"game page, no camera: {summary(idle)}")
        print(f"game page while the camera's frames are read: {summary(busy)}")
        print(f"frame sent → answered: {summary(sent)}")
        for number, laid in enumerate(video.laid, 1):
            at = stored.get(number)
            print(f"move {number}: the hand left at {laid:.1f} s, stored by "
                  + (f"{at:.2f} s ({at - laid:.2f} s later)" if at is not None else "never")
                  + (f", another page heard of it {heard[number - 1] - start - laid:.2f} s "
                     "after the hand left" if len(heard) >= number else ""))
    finally:
        server.terminate()
        server.wait(30)
    return 0


def _moves(phone: Phone, game: str) -> int:
    status, body = phone.request("GET", f"/g/{game}", headers={"Accept": "application/json"})
    return len(json.loads(body)["moves"]) if status == 200 else 0


if __name__ == "__main__":
    sys.exit(main())
