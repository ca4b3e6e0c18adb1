"""Web app timings, in-process (Flask test client, no network): the game page, and a photo turn
on a 12 MP phone photo (upload → checks → photo pipeline → pending proposal), then confirm.
Goal: each under 1 s. Ratios are to a plain JPEG decode of the same photo, measured in this run.

    python bench/bench_web.py [--repeat 5] [--megapixels 12]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion_app.web import create_app  # noqa: E402

EMPTY = "." * 15
BOARDS = [  # the board after turns 1–3 of a short game
    {8: "......КОТ......"},
    {6: "......С........", 7: "......О........", 8: "......КОТ......"},
    {6: "......С........", 7: "......О........", 8: "......КОТ......",
     9: "........О......", 10: "........Р......", 11: "........Т......"},
]


def board_rows(rows: dict[int, str]) -> list[str]:
    return [rows.get(n, EMPTY) for n in range(1, 16)]


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--megapixels", type=float, default=12.0)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    from bench.machine import describe
    from synth.render import render_photo

    print(describe())

    work = Path(tempfile.mkdtemp(prefix="bench-web-"))
    width = int(round((args.megapixels * 1e6 * 4 / 3) ** 0.5))
    size = (width, width * 3 // 4)
    photos = []
    for number, rows in enumerate(BOARDS, 1):
        shot = render_photo(board_rows(rows), seed=900 + number, style="erudit-black",
                            pose="frontal", size=size)
        path = work / f"turn{number}.jpg"
        cv2.imwrite(str(path), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        photos.append(path)
    print(f"photos: {size[0]}×{size[1]} ({size[0] * size[1] / 1e6:.1f} MP), "
          f"{photos[-1].stat().st_size / 1e6:.1f} MB JPEG")

    app = create_app(work / "data")
    phone = app.test_client()
    ask = {"Accept": "application/json"}
    csrf = re.search(r'csrf-token" content="([^"]+)"', phone.get("/").get_data(as_text=True))[1]
    ask_post = {**ask, "X-CSRF-Token": csrf}
    game = phone.post("/games", data={"player": ["Аня", "Борис"], "target": "200"},
                      headers=ask_post).get_json()["token"]

    def upload(path: Path):
        with open(path, "rb") as photo:
            turn = phone.get(f"/g/{game}", headers=ask).get_json()["next_turn"]
            response = phone.post(f"/g/{game}/photo", headers=ask_post,
                                  data={"turn": str(turn), "photo": (photo, path.name)})
        assert response.status_code == 200, response.get_json()
        return response.get_json()["pending"]

    decode_s, _ = timed(lambda: cv2.imread(str(photos[-1])), args.repeat)
    upload_times, confirm_times = [], []
    for path in photos:
        upload_s, pending = timed(lambda p=path: upload(p), args.repeat)
        start = time.perf_counter()
        response = phone.post(f"/g/{game}/confirm", headers=ask_post,
                              data={"turn": pending["turn"], "pending": pending["id"]})
        confirm_times.append(time.perf_counter() - start)
        assert response.status_code == 200, response.get_json()
        upload_times.append(upload_s)
    page_s, _ = timed(lambda: phone.get(f"/g/{game}").status_code, args.repeat * 4)
    state_s, state = timed(lambda: phone.get(f"/g/{game}", headers=ask).get_json(),
                           args.repeat * 4)
    dispute_s, _ = timed(lambda: phone.get(f"/g/{game}/turn/3").status_code, args.repeat * 4)

    print(f"JPEG decode of the photo (cv2.imread): {decode_s * 1000:7.1f} ms")
    for number, seconds in enumerate(upload_times, 1):
        print(f"photo turn {number}: upload → proposal   {seconds * 1000:7.1f} ms "
              f"({seconds / decode_s:.1f}× decode)")
    print(f"confirm (median of {len(confirm_times)}):       "
          f"{statistics.median(confirm_times) * 1000:7.1f} ms")
    print(f"game page (HTML):                  {page_s * 1000:7.1f} ms")
    print(f"game state (JSON):                 {state_s * 1000:7.1f} ms")
    print(f"dispute page:                      {dispute_s * 1000:7.1f} ms")
    print(f"scores read: {[m['score'] for m in state['moves']]} (expected [5, 6, 8])")
    worst = max(max(upload_times), page_s)
    print(f"goal < 1 s: {'met' if worst < 1 else 'NOT met'} (worst {worst * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
