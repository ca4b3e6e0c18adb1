"""The web app under load, as `erudit serve` runs it (waitress, photo workers) on 127.0.0.1:
many phones sending 12 MP photos at once, and one honest photo while large PNGs arrive.

    python bench/bench_load.py [--phones 20] [--megapixels 12] [--pngs 6] [--png-side 7000]
                               [--https]

1. `--phones` phones, each at its own game, send a 12 MP photo of turn 1 at the same moment:
   photo → proposal time per phone (p50, p95, max), and the peak memory of the server with its
   worker processes (resident set, summed over the process tree: shared pages count once per
   process, so it is an upper bound).
2. One phone's photo alone, then the same photo sent while `--pngs` PNGs of png-side² pixels
   arrive from other games at once: its time in both, and what the PNGs were answered.
Times are of the whole request on the loopback (upload, decode, reading, storing); with
`--https`, over TLS as `erudit serve --https` serves it, the phones checking its certificate.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import secrets
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TURN1 = ["." * 15] * 7 + ["......КОТ......"] + ["." * 15] * 7
START_S = 60          # longest wait for the server to answer its first page


class Phone:
    """One phone: its own session cookie and CSRF token, talking to the server over HTTP
    (over https when given the server's certificate's TLS context)."""

    def __init__(self, port: int, tls: ssl.SSLContext | None = None):
        self.port, self.cookie, self.tls = port, "", tls
        page = self.request("GET", "/")[1].decode()
        self.csrf = re.search(r'name="csrf-token" content="([^"]+)"', page)[1]

    def request(self, method: str, path: str, body: bytes = b"", headers: dict | None = None):
        conn = (http.client.HTTPSConnection("127.0.0.1", self.port, timeout=600, context=self.tls)
                if self.tls else http.client.HTTPConnection("127.0.0.1", self.port, timeout=600))
        try:
            sent = {"Cookie": self.cookie, **(headers or {})}
            conn.request(method, path, body=body, headers=sent)
            answer = conn.getresponse()
            data = answer.read()
            cookie = answer.getheader("Set-Cookie")
            if cookie:
                self.cookie = cookie.split(";", 1)[0]
            return answer.status, data
        finally:
            conn.close()

    def post(self, path: str, fields: dict, files: dict | None = None):
        boundary = secrets.token_hex(12)
        parts = []
        for name, value in fields.items():
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                         f"{value}\r\n".encode())
        for name, (filename, data) in (files or {}).items():
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                         f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                         .encode() + data + b"\r\n")
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        return self.request("POST", path, body, {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Accept": "application/json", "X-CSRF-Token": self.csrf})

    def new_game(self) -> str:
        boundary = secrets.token_hex(12)
        body = "".join(f'--{boundary}\r\nContent-Disposition: form-data; name="player"\r\n\r\n'
                       f"{name}\r\n" for name in ("Аня", "Борис")) + f"--{boundary}--\r\n"
        status, data = self.request("POST", "/games", body.encode(), {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Accept": "application/json", "X-CSRF-Token": self.csrf})
        if status != 201:
            raise SystemExit(f"a new game was refused: {data.decode()}")
        return json.loads(data)["token"]

    def photo(self, game: str, data: bytes, name: str) -> tuple[int, float, dict]:
        start = time.perf_counter()
        status, body = self.post(f"/g/{game}/photo", {"turn": "1"}, {"photo": (name, data)})
        return status, time.perf_counter() - start, json.loads(body)


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            with open(f"/proc/{current}/status") as status:
                rss = re.search(r"VmRSS:\s+(\d+) kB", status.read())
            total += int(rss[1]) * 1024 if rss else 0
        except OSError:
            pass
    return total


class PeakMemory:
    """Samples the process tree's resident memory every 20 ms in a thread."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            time.sleep(0.02)

    def __enter__(self):
        self.peak = tree_rss(self.pid)
        self._thread.start()
        return self

    def __exit__(self, *_):
        self._stop.set()
        self._thread.join()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(data: Path, https: bool) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, "-m", "companion_app.cli", "serve", "--host",
                               "127.0.0.1", "--port", str(port), "--data", str(data),
                               *(["--https"] if https else [])],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server, port
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the server did not start")


def at_once(jobs: list) -> list:
    """Run each job in its own thread, released together; their results in order."""
    results: list = [None] * len(jobs)
    gate = threading.Barrier(len(jobs))

    def run(index, job):
        gate.wait()
        results[index] = job()

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phones", type=int, default=20)
    parser.add_argument("--megapixels", type=float, default=12.0)
    parser.add_argument("--pngs", type=int, default=6)
    parser.add_argument("--png-side", type=int, default=7000)
    parser.add_argument("--https", action="store_true", help="as `erudit serve --https`")
    args = parser.parse_args()
    from bench.machine import describe
    from synth.render import render_photo

    print(describe())
    width = int(round((args.megapixels * 1e6 * 4 / 3) ** 0.5))
    shot = render_photo(TURN1, seed=901, style="erudit-black", pose="frontal",
                        size=(width, width * 3 // 4))
    jpeg = cv2.imencode(".jpg", shot.image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
    side = args.png_side
    picture = np.full((side, side, 3), 90, np.uint8)
    picture[::500] = 200
    png = cv2.imencode(".png", picture)[1].tobytes()
    del picture
    print(f"photo: {width}×{width * 3 // 4} JPEG, {len(jpeg) / 1e6:.1f} MB; "
          f"PNG: {side}×{side}, {len(png) / 1e3:.0f} KB")

    data = Path(tempfile.mkdtemp(prefix="bench-load-"))
    server, port = start_server(data, args.https)
    tls = ssl.create_default_context(cafile=str(data / "https-cert.pem")) if args.https else None
    try:
        phones = [Phone(port, tls) for _ in range(max(args.phones, args.pngs + 1))]
        games = [phone.new_game() for phone in phones]
        warm = phones[0].photo(games[0], jpeg, "warm.jpg")   # worker start, network loaded
        print(f"first photo (workers starting): {warm[1]:.2f} s, status {warm[0]}")
        # each phone's game keeps its turn 1: a new photo replaces the proposal waiting

        with PeakMemory(server.pid) as memory:
            rest = memory.peak
            results = at_once([lambda p=p, g=g: p.photo(g, jpeg, "board.jpg")
                               for p, g in zip(phones[:args.phones], games, strict=False)])
        times = [seconds for status, seconds, _ in results if status == 200]
        statuses = sorted(status for status, _, _ in results)
        print(f"\n{args.phones} phones, one {args.megapixels:g} MP photo each, sent at once:")
        print(f"  answered: {statuses.count(200)} proposals, others {statuses[len(times):]}")
        print(f"  photo → proposal: p50 {percentile(times, 0.5):.2f} s, "
              f"p95 {percentile(times, 0.95):.2f} s, max {max(times):.2f} s")
        print(f"  server memory: {rest / 2**20:.0f} MB before, peak {memory.peak / 2**20:.0f} MB "
              "(server and workers)")

        alone = [phones[0].photo(games[0], jpeg, "board.jpg")[1] for _ in range(3)]
        honest_alone = statistics.median(alone)

        def honest():
            time.sleep(0.2)                  # the PNGs are on their way first
            return phones[0].photo(games[0], jpeg, "board.jpg")

        jobs = [lambda p=p, g=g: p.photo(g, png, "big.png")
                for p, g in zip(phones[1:args.pngs + 1], games[1:], strict=False)]
        with PeakMemory(server.pid) as memory:
            results = at_once([*jobs, honest])
        status, seconds, _ = results[-1]
        answers = [f"{s} {body.get('error', '')[:48]}" for s, _, body in results[:-1]]
        print(f"\none honest photo while {args.pngs} PNGs of {side}×{side} arrive:")
        print(f"  alone: {honest_alone:.2f} s (median of 3); with the PNGs: {seconds:.2f} s "
              f"({seconds / honest_alone:.1f}× alone), status {status}")
        print(f"  peak memory meanwhile: {memory.peak / 2**20:.0f} MB")
        for answer in sorted(set(answers)):
            print(f"  PNGs answered: {answers.count(answer)} × {answer}")
    finally:
        server.terminate()
        server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
