"""Photos decoded and read away from the requests that serve the table.

Decoding a photo and reading its board take from a tenth of a second to seconds of CPU, so
they run in worker processes (each with its own decoder and network), never in the threads
that answer the other phones' pages. Photos go down one of two lanes by the pixels their
decode will hold, known from the header: phone photos (JPEGs, decoded reduced) down the
photo lane; large pictures that must be decoded whole (a 7000×7000 PNG holds 150 MB and takes
seconds) down a lane of their own, one at a time and at a lower priority, so they cannot
hold up an honest photo. Each lane takes a bounded number of photos at once; past that, and
past two photos of one game at once, a photo is refused with "busy" rather than queued
without end.

    >>> result = run_photo(config, game_id, data, "board.jpg", game, profile, data_dir)
    >>> result.photo_jpeg, result.proposal.board     # what is stored, what is proposed
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as WaitedTooLong
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from engine.errors import EruditError, PhotoError
from vision.photo import header_size, reduction

# Pixels a decode holds above which a picture goes down the slow lane (a 12 MP phone JPEG is
# decoded at 3 MP; a 16 MP screenshot PNG whole).
HEAVY_PIXELS = 8_000_000
LANE_WORKERS = {"photo": 2, "heavy": 1}
# Photos a lane takes at once, being read or waiting (20 phones at a table sending at once fit)
LANE_LIMIT = {"photo": 24, "heavy": 3}
PER_GAME = 2            # photos of one game read at once: a table sends one at a time
WAIT_S = 120            # longest a request waits for its photo's reading
STORED_QUALITY = 90     # JPEG quality of the stored photo (as decoded, not as sent)
HEAVY_NICE = 10         # the slow lane's workers yield the CPU to the photo lane's


class Busy(EruditError):
    """Too many photos are being read at once; the phone may send again in a moment."""


@dataclass
class PhotoResult:
    """What a worker gives back: the photo as decoded (JPEG) and the proposed turn."""

    photo_jpeg: bytes
    proposal: object | None      # companion_app.photos.Proposal, its reading left out


def lane_of(data: bytes) -> str:
    """'heavy' for a picture whose decode holds over HEAVY_PIXELS, else 'photo'."""
    size = header_size(data)
    if size is None:
        return "heavy"
    kind, width, height = size
    factor = reduction(max(width, height)) if kind == "jpg" else 1
    return "heavy" if width * height / (factor * factor) > HEAVY_PIXELS else "photo"


# -- in the worker ----------------------------------------------------------------------------
def decode_and_read(data: bytes, name: str, game, profile: str | None, data_dir: str | None,
                    propose: bool, past: list | None = None,
                    key: str | None = None) -> PhotoResult:
    """Decode an uploaded photo (every check of a damaged or cut short photo included), encode
    what was decoded for keeping, and, when `propose`, read the move it shows, against what
    the game's photos `past` (paths, one a turn) showed of its box (learnt once per `key` and
    worker, see companion_app.photos.remembered)."""
    import cv2
    import numpy as np

    from vision.photo import decode_for_reading

    image, _ = decode_for_reading(data, name)
    ok, stored = cv2.imencode(".jpg", np.asarray(image), [cv2.IMWRITE_JPEG_QUALITY,
                                                          STORED_QUALITY])
    if not ok:
        raise PhotoError(code="photo_not_kept", name=name)
    if not propose:
        return PhotoResult(stored.tobytes(), None)
    from companion_app.photos import box_profile, propose_image, remembered

    box = box_profile(profile, data_dir)
    memory = remembered(game, past, box, key) if past is not None else None
    try:
        proposal = propose_image(game, image, box, memory)
    except PhotoError as exc:  # the photo's own fault (no board on it): named as it was sent
        raise PhotoError(code="photo_named", name=name, error=exc) from None
    proposal.reading = None  # arrays of no use to the page, and not all of them pickle
    return PhotoResult(stored.tobytes(), proposal)


def _worker_start(nice: int) -> None:
    """Each worker as it starts: its priority, and the networks loaded (as `erudit read`
    loads them), so that no phone's photo waits for that. Ctrl+C at the terminal is the
    server's to handle: the server stops its workers itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice:
        os.nice(nice)
    import cv2

    from vision.classifier import load_model, load_second

    cv2.setNumThreads(1)  # the lanes' processes share the cores among themselves
    load_model(), load_second(), load_model(threads=1)


# -- in the server ----------------------------------------------------------------------------
class Lanes:
    """The worker processes of both lanes, made when first needed; one set per server
    process (every app in it shares them: the workers keep nothing of a game)."""

    def __init__(self):
        self._pools: dict[str, ProcessPoolExecutor] = {}
        self._lock = threading.Lock()
        self._taken = {lane: 0 for lane in LANE_WORKERS}
        self._games: dict[object, int] = {}

    def _pool(self, lane: str, workers: int) -> ProcessPoolExecutor:
        with self._lock:
            if lane not in self._pools:
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(["companion_app.photos", "vision.read"])
                nice = HEAVY_NICE if lane == "heavy" else 0
                self._pools[lane] = ProcessPoolExecutor(workers, mp_context=context,
                                                        initializer=_worker_start,
                                                        initargs=(nice,))
            return self._pools[lane]

    def _take(self, lane: str, game_key, limit: int) -> None:
        with self._lock:
            if self._games.get(game_key, 0) >= PER_GAME:
                raise Busy(code="game_photo_busy")
            if self._taken[lane] >= limit:
                raise Busy(code="server_busy")
            self._taken[lane] += 1
            self._games[game_key] = self._games.get(game_key, 0) + 1

    def _give_back(self, lane: str, game_key) -> None:
        with self._lock:
            self._taken[lane] -= 1
            self._games[game_key] -= 1
            if not self._games[game_key]:
                del self._games[game_key]

    def run(self, lane: str, game_key, workers: int, limit: int, job: Callable, *args):
        """`job(*args)` in a worker of `lane` (in this thread when `workers` is 0), waiting
        for it at most WAIT_S; Busy when the lane or the game has its fill of photos."""
        self._take(lane, game_key, limit)
        try:
            if workers == 0:
                return job(*args)
            future = self._pool(lane, workers).submit(job, *args)
            try:
                return future.result(timeout=WAIT_S)
            except WaitedTooLong:
                future.cancel()
                raise Busy(code="photo_too_slow", seconds=WAIT_S) from None
            except BrokenProcessPool:  # a worker died (out of memory, killed): start anew
                with self._lock:
                    self._pools.pop(lane, None)
                raise Busy(code="reader_stopped") from None
        finally:
            self._give_back(lane, game_key)

    def start(self, workers: int) -> None:
        """Start both lanes' workers now (a server does, before its first photo)."""
        if workers:
            for lane, count in (("photo", workers), ("heavy", LANE_WORKERS["heavy"])):
                pool = self._pool(lane, count)
                for _ in range(count):  # a process pool starts its workers as jobs come
                    pool.submit(os.getpid)

    def shutdown(self) -> None:
        with self._lock:
            pools, self._pools = self._pools, {}
        for pool in pools.values():
            pool.shutdown(wait=True, cancel_futures=True)


LANES = Lanes()


def run_job(config, lane: str, key, job: Callable, *args):
    """Any other job (a box's calibration) down `lane`, as run_photo runs a photo."""
    workers = LANE_WORKERS[lane] if config.get("PHOTO_WORKERS", 1) else 0
    return LANES.run(lane, key, workers, LANE_LIMIT[lane], job, *args)


def run_photo(config, game_key, data: bytes, name: str, game, profile: str | None,
              data_dir: str, propose: bool = True, past: list | None = None) -> PhotoResult:
    """Decode and read an uploaded photo down its lane (config PHOTO_WORKERS: workers of the
    photo lane; 0 reads in the request's own thread, as tests with a scripted reader do)."""
    lane = lane_of(data)
    workers = config.get("PHOTO_WORKERS", LANE_WORKERS["photo"])
    if workers and lane == "heavy":
        workers = LANE_WORKERS["heavy"]
    return LANES.run(lane, game_key, workers, LANE_LIMIT[lane], decode_and_read, data, name,
                     game, profile, data_dir, propose, past, str(game_key))
