"""Uploaded photos: checked before anything decodes them, stored under names the server makes.

A photo's size is read from its header first (a few bytes, no decoding), so a small file that
claims a huge picture (a decompression bomb) is turned away before cv2 allocates for it.
Files are written to a temporary name and renamed into place only after the database commit.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import cv2
import numpy as np

from engine.errors import PhotoError
from vision.photo import (
    HEAD_BYTES,
    foreign_format,
    header_size,
    jpeg_cut_short,
    unopenable,
)

MAX_PIXELS = 50_000_000      # far above any phone camera (12–48 MP); bombs claim much more
THUMB_PX = 240               # width of a history thumbnail
TEMP_PREFIX = ".tmp-"        # files and folders being written; swept when the app starts


class PhotoTooLarge(PhotoError):
    """A photo whose header claims more pixels than any phone takes."""


def image_size(data: bytes) -> tuple[str, int, int]:
    """(extension, width, height) from a JPEG, PNG or WebP header; PhotoError otherwise."""
    size = header_size(data)
    if size is not None and size[0] != "bmp":
        return size
    if data.startswith(b"\xff\xd8"):
        raise PhotoError(code="upload_damaged_jpeg")
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        raise PhotoError(code="upload_damaged_webp")
    other = foreign_format(data[:HEAD_BYTES])
    if other:
        raise PhotoError(unopenable(other))
    raise PhotoError(code="upload_not_image")


def check_header(data: bytes) -> str:
    """The photo's file extension once its header shows a sanely sized image sent whole:
    nothing is decoded here (that is the workers' part, see reading.py)."""
    if not data:
        raise PhotoError(code="upload_empty")
    ext, width, height = image_size(data)
    if width <= 0 or height <= 0:
        raise PhotoError(code="upload_no_size")
    if width * height > MAX_PIXELS:
        raise PhotoTooLarge(code="pixels_claimed", width=width, height=height,
                            limit=MAX_PIXELS // 1_000_000)
    # a JPEG cut short decodes without complaint (its missing part grey): its end marker tells
    if jpeg_cut_short(data):
        raise PhotoError(code="upload_cut_short")
    return ext


def game_folder(data_dir: Path, game_id: int) -> Path:
    """The game's photo folder, made when missing (for writing)."""
    folder = photo_folder(data_dir, game_id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def photo_folder(data_dir: Path, game_id: int) -> Path:
    """The game's photo folder (for reading: nothing is written on a full disk)."""
    return Path(data_dir) / "photos" / str(int(game_id))


def write_temp(folder: Path, data: bytes, ext: str) -> Path:
    """Write `data` under a fresh hidden name in `folder`, flushed to disk."""
    path = folder / f"{TEMP_PREFIX}{secrets.token_hex(8)}.{ext}"
    try:
        with open(path, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:  # a full disk: no half-written file stays behind
        path.unlink(missing_ok=True)
        raise
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


# -- room on the disk -----------------------------------------------------------------------
DISK_RESERVE = 256 * 1024 * 1024        # free space kept for the games' database and the system
PHOTO_DISK_LIMIT = 4 * 1024 ** 3        # all games' photos together
GAME_PHOTO_LIMIT = 300                  # a game's photos: 60 turns each photographed 5 times


class DiskFull(PhotoError):
    """No room for another photo; what is stored can still be read."""


def check_room(data_dir: Path, game_photos: int, config) -> None:
    """DiskFull unless one more photo fits: under the game's and all photos' caps, with the
    disk's reserve left free."""
    if game_photos >= config.get("GAME_PHOTO_LIMIT", GAME_PHOTO_LIMIT):
        raise DiskFull(code="game_photos_limit", count=game_photos)
    check_free(data_dir, config)
    if photos_bytes(data_dir) >= config.get("PHOTO_DISK_LIMIT", PHOTO_DISK_LIMIT):
        raise DiskFull(code="photo_space_used")


def check_free(data_dir: Path, config) -> None:
    """DiskFull when the data folder's disk is down to its reserve."""
    import shutil

    if shutil.disk_usage(data_dir).free < config.get("DISK_RESERVE", DISK_RESERVE):
        raise DiskFull(code="disk_full_refused")


def photos_bytes(data_dir: Path) -> int:
    """Bytes of every stored photo file (each game's folder, one level deep)."""
    total = 0
    root = Path(data_dir) / "photos"
    if not root.is_dir():
        return 0
    with os.scandir(root) as games:
        for game in games:
            if game.is_dir(follow_symlinks=False):
                with os.scandir(game.path) as files:
                    total += sum(f.stat(follow_symlinks=False).st_size for f in files
                                 if f.is_file(follow_symlinks=False))
    return total


def sweep(data_dir: Path, kept: dict[int, set[str]]) -> list[Path]:
    """Delete what a write cut short (a crash, a full disk) left in the data folder: temporary
    files and folders, and photo files no game names (`kept`: game id → its photo names).
    Returns what was deleted."""
    import shutil

    gone = []
    root = Path(data_dir)
    for path in root.glob(f"{TEMP_PREFIX}*"):
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        gone.append(path)
    photos = root / "photos"
    for folder in photos.iterdir() if photos.is_dir() else []:
        if not folder.is_dir() or not folder.name.isdigit():
            continue
        wanted = {file for photo in kept.get(int(folder.name), ()) for file in
                  names(photo).values()}
        for path in folder.iterdir():
            if path.is_file() and path.name not in wanted:
                path.unlink(missing_ok=True)
                gone.append(path)
    return gone
