"""Open a photo as the camera meant it to be seen.

    >>> image = load_photo("game/turn3.jpg")   # BGR uint8, EXIF orientation applied
    >>> image.shape[2]
    3
"""

import os
import re
import struct
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import cv2
import numpy as np

from engine.errors import Message, PhotoError

MAX_PIXELS = 1 << 30  # OpenCV's default CV_IO_MAX_IMAGE_PIXELS: larger images are refused
# Pixels a decode may hold (3 bytes each: 150 MB), checked from the header before decoding: a
# small file can claim a huge picture (a 109 KB PNG of 30000×30000 took 5.4 GB). A JPEG is
# decoded reduced from 12 MP up, so a 200 MP phone photo stays far under it.
MAX_DECODED_PIXELS = 50_000_000
REDUCED_DECODES = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2,
                   4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}


def load_photo(path, reduce: int = 1) -> np.ndarray:
    """Decode `path` to a BGR uint8 image, turned upright as its EXIF orientation says.

    cv2.imdecode applies the EXIF orientation tag itself (checked on a photo stored sideways with
    orientation 6, also for the reduced decodes), so the pixels come back as the photo is
    displayed. `reduce` 2, 4 or 8 decodes a JPEG at 1/2, 1/4 or 1/8 of its size, about twice as
    fast as a full decode at 1/2: enough for a 12 MP photo whose cells span 100+ pixels.
    """
    if reduce not in REDUCED_DECODES:
        raise ValueError(f"reduce must be one of {sorted(REDUCED_DECODES)}, not {reduce!r}")
    name = os.fspath(path)
    return _decoded(name, reduce, _whole_file(name))


def _decoded(name: str, reduce: int, data: bytes) -> np.ndarray:
    """The decode of a file's bytes `data` (_whole_file has checked them), its failures as
    PhotoErrors naming the file. Decoding the bytes already read is 2-3 ms faster for a 12 MP
    photo than cv2.imread reading the file again (the same pixels, EXIF turn included)."""
    if not data:
        raise PhotoError(f"{name}: not an image (the file is empty)")
    check_decoded_size(name, data, reduce)
    try:
        with decoder_messages() as messages:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), REDUCED_DECODES[reduce])
    except cv2.error as exc:  # a corrupt header can raise instead of returning None
        if "CV_IO_MAX_IMAGE_PIXELS" in exc.err:  # the header's size, refused before decoding
            raise PhotoError(f"{name}: too large to open (over {MAX_PIXELS:,} pixels)") from None
        raise PhotoError(f"{name}: not an image ({exc.err.strip()})") from None
    if image is None:
        other = foreign_format(data[:HEAD_BYTES])
        raise PhotoError(f"{name}: {unopenable(other) if other else 'not an image'}")
    if damaged(messages):
        raise PhotoError(f"{name}: {DAMAGED}")
    return image


def header_size(data: bytes) -> tuple[str, int, int] | None:
    """(extension, width, height) from the header of a JPEG, PNG, WebP or BMP image, without
    decoding it; None for other data (or a header cut short)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24 and data[12:16] == b"IHDR":
        return ("png", *struct.unpack(">II", data[16:24]))
    if data.startswith(b"\xff\xd8"):
        size = frame_size(data)
        return ("jpg", size[1], size[0]) if size else None
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        size = _webp_size(data)
        return ("webp", *size) if size else None
    if data[:2] == b"BM" and len(data) >= 26:
        width, height = struct.unpack("<ii", data[18:26])
        return "bmp", abs(width), abs(height)
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def check_decoded_size(name: str, data: bytes, reduce: int = 1) -> None:
    """PhotoError when decoding `data` (reduced `reduce` times, which only a JPEG can be) would
    hold more than MAX_DECODED_PIXELS, judged from its header alone."""
    size = header_size(data)
    if size is None:
        return
    kind, width, height = size
    pixels = width * height / (reduce * reduce if kind == "jpg" else 1)
    if pixels > MAX_DECODED_PIXELS:
        raise PhotoError(code="too_large_to_read", name=name, width=width, height=height,
                         limit=MAX_DECODED_PIXELS // 1_000_000)


# A phone's other photo formats, which OpenCV's wheels do not decode: an ISO-BMFF file names
# them by the brands of its leading 'ftyp' box (an iPhone saves HEIC unless told otherwise).
HEAD_BYTES = 64
_BRANDS = (("AVIF", {b"avif", b"avis"}),
           ("HEIC", {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis"}),
           ("HEIF", {b"mif1", b"msf1"}))


def foreign_format(head: bytes) -> str | None:
    """The format of a file starting with `head` ("HEIC", "HEIF" or "AVIF"), if one of those."""
    if head[4:8] != b"ftyp":
        return None
    end = min(len(head), int.from_bytes(head[:4], "big"))
    brands = {head[8:12]} | {head[at:at + 4] for at in range(16, end - 3, 4)}
    return next((name for name, names in _BRANDS if brands & names), None)


def unopenable(kind: str) -> Message:
    """Why a photo in a foreign format is refused, and what the player can do about it."""
    return Message("photo_format", article="an" if kind[0] in "AEIOU" else "a", kind=kind)


# What libjpeg and libpng print while decoding (they write to the process's stderr themselves).
_DECODER_LINE = re.compile(r"(Corrupt JPEG data|Premature end of JPEG file|Invalid SOS|"
                           r"Inconsistent progression|Warning: unknown JFIF|libpng )")
# libjpeg's words for compressed data that is lost or garbled part way: the decoder fills the
# rest out grey or shifted, and the board would be misread without a word. ("N extraneous
# bytes before marker" is not among them: some cameras pad their files so, harmlessly.)
_LOST_DATA = ("premature end of data segment", "found marker", "bad Huffman code",
              "Premature end of JPEG file")
DAMAGED = "the photo is damaged (part of its image data is corrupt, so part of the picture is lost)"
_QUIET = threading.Lock()


@contextmanager
def decoder_messages():
    """Collect what the image decoders print while a photo is decoded (a list, filled when the
    block ends), so that a bad photo costs one clear line and its damage can be told:
    OpenCV's own log is silenced, and the C libraries' lines are taken from the process's
    stderr. Other lines written meanwhile (another thread's log) are passed on. Decodes take
    turns: stderr and OpenCV's log level belong to the whole process."""
    messages: list[str] = []
    with _QUIET:
        level = cv2.utils.logging.getLogLevel()
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
        lines: list[str] = []
        try:
            with _stderr_caught(lines):
                yield messages
        finally:
            cv2.utils.logging.setLogLevel(level)
            messages += [line for line in lines if _DECODER_LINE.match(line)]
            others = [line for line in lines if not _DECODER_LINE.match(line)]
            if others:
                sys.stderr.write("\n".join(others) + "\n")


@contextmanager
def _stderr_caught(lines: list[str]):
    """Add to `lines` what is written to the process's stderr (file descriptor 2) inside the
    block; nothing where stderr cannot be moved (closed, or no temporary file allowed)."""
    with ExitStack() as stack:
        try:
            caught = stack.enter_context(tempfile.TemporaryFile())
            saved = os.dup(2)
        except OSError:
            yield
            return
        sys.stderr.flush()
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            lines += caught.read().decode("utf-8", "replace").splitlines()


def damaged(messages: list[str]) -> bool:
    """Whether the decoder said part of the compressed image data was lost or garbled."""
    return any(words in message for message in messages for words in _LOST_DATA)


def _whole_file(name: str) -> bytes:
    """The file's bytes; PhotoError when it is missing, unreadable or a JPEG cut short (read
    as it is, its missing part would be a grey band on the board, misread without a word)."""
    if os.path.isdir(name):
        raise PhotoError(f"{name}: cannot open (a folder, not a photo)")
    if not os.path.isfile(name):
        raise PhotoError(f"{name}: cannot open (no such file)")
    try:
        with open(name, "rb") as fh:
            data = fh.read()
    except OSError:
        raise PhotoError(f"{name}: cannot open (permission denied)") from None
    if jpeg_cut_short(data):
        raise PhotoError(code="photo_cut_short", name=name)
    return data


# A photo this long (px) or longer is read reduced, halved again while its longer side stays
# at least half this: a 12 MP photo at half size, 48 MP at a quarter, 200 MP at an eighth. Its
# board's cells stay far above the 32 px the reader works at; decoding and finding cost a part.
HALF_SIZE_FROM = 3200
MOST_REDUCED = 8  # the smallest reduced decode a JPEG offers


class Reduced(np.ndarray):
    """A photo decoded (or shrunk) to a half, a quarter or an eighth of its size: each pixel
    about the mean of 2×2 or more of the photo's, so the board finder may shrink it further
    linearly, as after its own halvings."""


def reduction(longest: int) -> int:
    """How many times smaller (1, 2, 4 or 8) a photo whose longer side is `longest` px is read."""
    factor = 1
    while factor < MOST_REDUCED and longest >= HALF_SIZE_FROM * factor:
        factor *= 2
    return factor


def load_for_reading(path) -> tuple[np.ndarray, float]:
    """Decode a photo at the size reading needs — reduced (a Reduced) from 12 MP up — and the
    factor from its pixels back to the photo's own. The size is taken from the JPEG header of
    the bytes read for the cut-short check, so a photo is decoded once."""
    name = os.fspath(path)
    return decode_for_reading(_whole_file(name), name)


def decode_for_reading(data: bytes, name: str) -> tuple[np.ndarray, float]:
    """load_for_reading for a photo's bytes already read (an upload), named `name` in errors."""
    if jpeg_cut_short(data):
        raise PhotoError(code="photo_cut_short", name=name)
    size = frame_size(data)
    if size is not None:
        factor = reduction(max(size))
        image = _decoded(name, factor, data)
        return (image.view(Reduced) if factor > 1 else image), float(factor)
    image = _decoded(name, 1, data)
    factor = reduction(max(image.shape[:2]))
    if factor == 1 or min(image.shape[:2]) < factor:  # a sliver: the board finder refuses it
        return image, 1.0
    shrunk = cv2.resize(image, None, fx=1 / factor, fy=1 / factor, interpolation=cv2.INTER_AREA)
    return shrunk.view(Reduced), float(factor)


# JPEG start-of-frame markers (they carry the size); C4, C8 and CC are other tables.
_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_SCAN = 0xDA  # start of scan: the compressed image follows its header


def jpeg_segments(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(marker, offset of its payload, payload length) of each header segment of a JPEG, up to
    and including its first scan; nothing for other data. Stops where the header cannot be
    followed (the decoder then says what is wrong)."""
    if data[:2] != b"\xff\xd8":
        return
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker == 0xFF:  # a fill byte before a marker
            pos += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # markers without a length
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        if length < 2:
            return
        yield marker, pos + 4, length - 2
        if marker == _SCAN:
            return
        pos += 2 + length


def frame_size(data: bytes) -> tuple[int, int] | None:
    """(height, width) from JPEG data's frame header, None when it has none."""
    for marker, at, length in jpeg_segments(data):
        if marker in _FRAMES:
            head = data[at:at + 5]
            return (int.from_bytes(head[1:3], "big"), int.from_bytes(head[3:5], "big")) \
                if length >= 5 and len(head) == 5 else None
    return None


def jpeg_cut_short(data: bytes) -> bool:
    """True for a JPEG whose compressed image stops before its end marker: a file cut short in
    copying or sending, which the decoder fills out grey without a word. Anything after the
    end marker (a phone's motion-photo video, say) is allowed: in the compressed data a 0xFF
    byte is always followed by 0x00 or a restart marker, so the first FF D9 after the scan's
    header is the end."""
    scans = [at + length for marker, at, length in jpeg_segments(data) if marker == _SCAN]
    if not scans:
        return False
    if data.endswith(b"\xff\xd9") and len(data) - 2 >= scans[0]:
        return False  # the usual file ends at its end marker: no need to search 2-10 MB for it
    return data.find(b"\xff\xd9", scans[0]) < 0
