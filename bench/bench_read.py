"""Speed and memory of reading a photo, next to a plain JPEG decode of the same file.

    python -m bench.bench_read                  # the 12 MP real photos + rendered 12 MP photos
                                                # (three mid-game, two late-game boards)
    python -m bench.bench_read photo.jpg ...
    python -m bench.bench_read --turned         # the same photos taken from the other side

For each photo: cv2.imread time and read_photo time (decode included, model loading excluded),
each the best of 10 taken in turn, and their ratio; then, each in a fresh process, the peak
memory of a decode alone and of a full read (model loaded).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, JpegImagePlugin

from bench.bench_locate import late_board, write_render
from bench.machine import describe
from engine.errors import PhotoError
from vision.read import read_photo

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "external"
REAL_12MP = [EXTERNAL / "scrabble_assistant" / "ML" / "test" / f"test{n}.jpg" for n in (10, 12, 14)]
RENDERED = 3  # rendered 4000×3000 mid-game photos added to the real ones ...
LATE_STYLES = ("erudit-black", "erudit-cream")  # ... and a late-game board in each Эрудит look
REPEATS = 10  # best of 3 swung 1.94-2.26x a decode on a 2-core machine; best of 10 1.83-1.86x

# VmHWM (not ru_maxrss, which a child inherits from its parent across fork and exec).
_PEAK = """
import sys, cv2
cv2.setNumThreads({threads})
path, mode = sys.argv[1], sys.argv[2]
if mode == "read":
    from vision.read import read_photo
    read_photo(path)
else:
    cv2.imread(path, cv2.IMREAD_COLOR)
status = open("/proc/self/status").read().split("VmHWM:")[1]
print(int(status.split()[0]) / 1024)
"""


def rendered_photos(folder: Path) -> list[Path]:
    """A few 12 MP JPEGs rendered from a board with a game on it."""
    board = (["." * 15] * 5 + ["..С..А..О......", "..*..П..Р.М....", "ПРОКРАСТИНАЦИЯ.",
             "..Р..Т..Е.М....", "..О..И..Н.О....", "..Ж..Я..Т.Н....", ".......ПИХТА...",
             "........Р......"] + ["." * 15] * 2)
    paths = [write_render(str(folder), f"rendered_{i}", board, 9_050_000 + i, "erudit-black")
             for i in range(RENDERED)]
    paths += [write_render(str(folder), f"late_{style}", late_board(seed, style), seed, style)
              for seed, style in enumerate(LATE_STYLES, start=100)]
    return [Path(path) for path in paths]


def turned_photos(paths: list[Path], folder: Path) -> list[Path]:
    """Each photo turned half round, as its camera would have saved it from the other side of
    the table: the pixels turned, the file's own quantization tables, chroma subsampling and
    EXIF kept (a re-encode at a fixed quality decoded up to a quarter faster than the camera's
    file, and dropping an EXIF turn spared the decode its turning; either skewed the ratio)."""
    copies = []
    for path in paths:
        copy = folder / f"turned_{path.name}"
        with Image.open(path) as photo:
            turned = photo.transpose(Image.Transpose.ROTATE_180)
            turned.save(copy, "JPEG", qtables=photo.quantization,
                        subsampling=JpegImagePlugin.get_sampling(photo),
                        exif=photo.info.get("exif", b""))
        copies.append(copy)
    return copies


def best_ms(path: Path, repeats: int = REPEATS) -> tuple[float, float]:
    """Best-of-`repeats` times of a decode and of a read of one photo, taken in turn: a busy
    or throttled machine then slows both alike (timed one after the other, a decode's best
    of ten moved 104-142 ms between runs on a 2-core Xeon)."""
    decodes, reads = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        cv2.imread(str(path), cv2.IMREAD_COLOR)
        decodes.append((time.perf_counter() - start) * 1000)
        reads.append(read_photo(path).ms)
    return min(decodes), min(reads)


def peak_mb(path: Path, mode: str, threads: int) -> float:
    out = subprocess.run([sys.executable, "-c", _PEAK.format(threads=threads), str(path), mode],
                         capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    return float(out.stdout.strip().splitlines()[-1])


def readable(paths: list[Path]) -> list[Path]:
    """The photos `read` reads, each read once untimed (the first loads the model, as a
    long-running process would); each other one is named with its reason and left out."""
    kept = []
    for path in paths:
        try:
            read_photo(path)
        except PhotoError as exc:
            print(f"{path.name}: left out ({exc})")
            continue
        kept.append(path)
    if not kept:
        raise SystemExit("bench_read: no photo to measure")
    return kept


def bench(paths: list[Path], threads: int) -> None:
    cv2.setNumThreads(threads)
    print(describe())
    rows = []
    for path in readable(paths):
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        decode, read = best_ms(path)
        rows.append((path.name, image.shape[1] * image.shape[0] / 1e6, decode, read,
                     peak_mb(path, "decode", threads), peak_mb(path, "read", threads)))
    print(f"{'photo':28} {'MP':>5} {'decode ms':>9} {'read ms':>8} {'ratio':>6} "
          f"{'decode MB':>9} {'read MB':>8}")
    for name, mp, decode, read, mem_decode, mem_read in rows:
        print(f"{name:28} {mp:5.1f} {decode:9.0f} {read:8.0f} {read / decode:6.2f} "
              f"{mem_decode:9.0f} {mem_read:8.0f}")
    ratios = np.array([r[3] / r[2] for r in rows])
    print(json.dumps({"median_ratio": round(float(np.median(ratios)), 2),
                      "max_ratio": round(float(ratios.max()), 2),
                      "max_read_mb": round(max(r[5] for r in rows))}))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("photos", nargs="*", type=Path)
    parser.add_argument("--threads", type=int, default=1, help="OpenCV threads (decode and warp)")
    parser.add_argument("--turned", action="store_true", help="read the photos turned half round")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = args.photos or [p for p in REAL_12MP if p.exists()] + rendered_photos(Path(tmp))
        if args.turned:
            paths = turned_photos(paths, Path(tmp))
        bench(paths, args.threads)


if __name__ == "__main__":
    main()
