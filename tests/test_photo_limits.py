"""Opening photos safely from the command line: a picture too large to decode is refused from
its header, and a picture with no board says so (not "too blurred")."""

from __future__ import annotations

import json
import struct

import cv2
import numpy as np
import pytest

from companion_app.cli import main
from engine.errors import PhotoError


def png_claiming(width: int, height: int) -> bytes:
    """A small PNG whose header claims width×height pixels (a decompression bomb's shape)."""
    ok, buf = cv2.imencode(".png", np.zeros((8, 8, 3), np.uint8))
    data = bytearray(buf.tobytes())
    data[16:24] = struct.pack(">II", width, height)
    return bytes(data)


def orange_table(blur: float) -> np.ndarray:
    """A table top with a green oval on it, and no board."""
    image = np.zeros((1200, 1600, 3), np.uint8)
    image[:] = (40, 130, 230)
    cv2.ellipse(image, (800, 600), (450, 300), 0, 0, 360, (60, 160, 50), -1)
    return cv2.GaussianBlur(image, (0, 0), blur) if blur else image


def test_read_refuses_a_picture_too_large_to_decode_from_its_header(tmp_path, capsys):
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(png_claiming(30_000, 30_000))
    assert main(["read", str(bomb), "--json"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out) == {"image": str(bomb), "error": "too large to read (30000×30000 "
                                                            "pixels; the limit is 50 megapixels)"}
    assert err.count("\n") == 1


def test_a_large_jpeg_is_judged_by_its_reduced_decode():
    from vision.photo import MAX_DECODED_PIXELS, check_decoded_size

    ok, buf = cv2.imencode(".jpg", np.zeros((16, 16, 3), np.uint8))
    data = bytearray(buf.tobytes())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", 12_000, 16_000)   # a 192 MP camera's photo
    assert MAX_DECODED_PIXELS < 16_000 * 12_000
    check_decoded_size("big.jpg", bytes(data), reduce=8)         # 3 MP once reduced: fine
    with pytest.raises(PhotoError, match="too large to read"):
        check_decoded_size("big.jpg", bytes(data), reduce=1)


def test_read_says_there_is_no_board_on_a_table_with_an_oval(tmp_path, capsys):
    paths = []
    for blur in (0, 3):
        path = tmp_path / f"table{blur}.jpg"
        cv2.imwrite(str(path), orange_table(blur))
        paths.append(str(path))
    assert main(["read", *paths]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"erudit: {path}: no board found" for path in paths]
