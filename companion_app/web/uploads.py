"""Uploaded photos: checked before anything decodes them, stored under names the server makes.

A photo's size is read from its header first (a few bytes, no decoding), so a small file that
claims a huge picture (a decompression bomb) is turned away before cv2 allocates for it.
Files are written to a temporary name and renamed into place only after the database commit.
"""

from __future__ import annotations

import os
import secrets
import struct
from pathlib import Path

import cv2
import numpy as np

from engine.errors import PhotoError
from vision.photo import (
    DAMAGED,
    HEAD_BYTES,
    damaged,
    decoder_messages,
    foreign_format,
    frame_size,
    jpeg_cut_short,
    unopenable,
)

MAX_PIXELS = 50_000_000      # far above any phone camera (12–48 MP); bombs claim much more
THUMB_PX = 240               # width of a history thumbnail


class PhotoTooLarge(PhotoError):
    """A photo whose header claims more pixels than any phone takes."""


def image_size(data: bytes) -> tuple[str, int, int]:
    """(extension, width, height) from a JPEG, PNG or WebP header; PhotoError otherwise."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24 and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return "png", width, height
    if data.startswith(b"\xff\xd8"):
        return ("jpg", *_jpeg_size(data))
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ("webp", *_webp_size(data))
    other = foreign_format(data[:HEAD_BYTES])
    if other:
        raise PhotoError(unopenable(other))
    raise PhotoError("not a photo (expected a JPEG, PNG or WebP image)")


def _jpeg_size(data: bytes) -> tuple[int, int]:
    size = frame_size(data)
    if size is None:
        raise PhotoError("not a photo (a damaged JPEG: no image size in its header)")
    return size[1], size[0]


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    raise PhotoError("not a photo (a damaged WebP image)")


def check_image(data: bytes) -> str:
    """The photo's file extension once it is known to be a real, sanely sized image."""
    if not data:
        raise PhotoError("no photo was sent (the file is empty)")
    ext, width, height = image_size(data)
    if width <= 0 or height <= 0:
        raise PhotoError("not a photo (its header gives no size)")
    if width * height > MAX_PIXELS:
        raise PhotoTooLarge(code="pixels_claimed", width=width, height=height,
                            limit=MAX_PIXELS // 1_000_000)
    # a JPEG cut short decodes without complaint (its missing part grey), so it is caught
    # by its missing end marker; a reduced decode reads every compressed byte, so a corrupt
    # file fails here, at an eighth of the cost of a full decode
    if jpeg_cut_short(data):
        raise PhotoError("the photo is incomplete (its image data stops early): send it again")
    try:
        with decoder_messages() as messages:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_REDUCED_GRAYSCALE_8)
    except cv2.error:
        image = None
    if image is None:
        raise PhotoError("not a photo (the image data cannot be decoded)")
    if damaged(messages):
        raise PhotoError(f"{DAMAGED}: send it again")
    return ext


def game_folder(data_dir: Path, game_id: int) -> Path:
    folder = Path(data_dir) / "photos" / str(int(game_id))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_temp(folder: Path, data: bytes, ext: str) -> Path:
    """Write `data` under a fresh hidden name in `folder`, flushed to disk."""
    path = folder / f".tmp-{secrets.token_hex(8)}.{ext}"
    with open(path, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    return path


def thumbnail(jpeg: bytes) -> bytes:
    """A small JPEG of the rectified board for the game history."""
    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise PhotoError("the rectified board picture cannot be decoded")
    height = max(1, round(image.shape[0] * THUMB_PX / image.shape[1]))
    small = cv2.resize(image, (THUMB_PX, height), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 80])
    if not ok:
        raise PhotoError("cannot make a thumbnail")
    return buf.tobytes()


def names(photo: str) -> dict[str, str]:
    """The three files of one photo: the photo as taken, the rectified board, its thumbnail."""
    stem = photo.rsplit(".", 1)[0]
    return {"photo": photo, "board": f"{stem}-board.jpg", "thumb": f"{stem}-thumb.jpg"}


def rename_all(folder: Path, old: str, new: str) -> None:
    """Move the files of photo `old` to the names of photo `new`; missing files are skipped."""
    for kind, name in names(old).items():
        source = folder / name
        if source.exists():
            os.replace(source, folder / names(new)[kind])


def remove_all(folder: Path, photo: str | None) -> None:
    if not photo:
        return
    for name in names(photo).values():
        (folder / name).unlink(missing_ok=True)
