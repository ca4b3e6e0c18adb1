"""Photo files on their way to the reader: timing, decoding at the size reading needs, and
every damaged, cut-short or foreign file refused in one clear line."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from conftest import erudit_words

from engine.errors import PhotoError
from engine.ruleset import SIZE
from synth.render import render_photo
from vision.cells import board_image
from vision.read import read_photo

EMPTY = ["." * 15] * 15


def test_read_photo_times_the_file_and_reads_it(tmp_path):
    shot = render_photo(erudit_words(), seed=9_000_107, style="erudit-black", pose="frontal")
    path = tmp_path / "board.jpg"
    cv2.imwrite(str(path), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    reading = read_photo(path)
    assert reading.board == erudit_words()
    assert reading.ms is not None and reading.ms > 0


def _png_header(width: int, height: int) -> bytes:
    """A PNG file of that size whose image data is a few empty bytes."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(bytes(100))) + chunk(b"IEND", b""))


def test_bad_inputs_are_clear_photo_errors(tmp_path):

    with pytest.raises(PhotoError, match="no such file"):
        read_photo(tmp_path / "missing.jpg")
    text = tmp_path / "notes.jpg"
    text.write_text("not a photo", encoding="utf-8")
    with pytest.raises(PhotoError, match="not an image"):
        read_photo(text)
    (tmp_path / "nothing.jpg").write_bytes(b"")
    with pytest.raises(PhotoError, match=r"nothing.jpg: not an image \(the file is empty\)"):
        read_photo(tmp_path / "nothing.jpg")
    (tmp_path / "game").mkdir()
    with pytest.raises(PhotoError, match=r"game: cannot open \(a folder, not a photo\)"):
        read_photo(tmp_path / "game")
    sliver = tmp_path / "sliver.png"  # too thin to halve: refused, not a resize assertion
    cv2.imwrite(str(sliver), np.zeros((1, 4000, 3), np.uint8))
    with pytest.raises(PhotoError, match=r"photo too small to hold a board"):
        read_photo(sliver)
    for name, brands, kind in (("iphone.heic", b"heic\0\0\0\0mif1heic", "a HEIC"),
                               ("phone.avif", b"avif\0\0\0\0avifmif1miaf", "an AVIF")):
        (tmp_path / name).write_bytes(b"\0\0\0\x1cftyp" + brands + bytes(64))
        with pytest.raises(PhotoError, match=rf"{name}: {kind} photo cannot be opened here: "
                                             "save it as JPEG"):
            read_photo(tmp_path / name)
    huge = tmp_path / "huge.png"  # a header claiming 60 000 × 60 000 px
    huge.write_bytes(_png_header(60_000, 60_000))
    with pytest.raises(PhotoError, match=r"huge.png: too large to read \(60000×60000 pixels; "
                                         r"the limit is 50 megapixels\)"):
        read_photo(huge)
    blank = tmp_path / "wall.png"
    cv2.imwrite(str(blank), np.full((600, 800, 3), 128, np.uint8))
    with pytest.raises(PhotoError, match="board"):
        read_photo(blank)


def test_a_photo_cut_short_is_refused_and_one_with_data_after_its_end_is_read(tmp_path):

    shot = render_photo(erudit_words(), seed=9_000_203, style="erudit-black", pose="frontal")
    whole = cv2.imencode(".jpg", shot.image)[1].tobytes()
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(whole[:len(whole) * 9 // 10])  # decodes without complaint, its end grey
    with pytest.raises(PhotoError, match="cut.jpg: the photo is incomplete"):
        read_photo(cut)
    trailed = tmp_path / "motion.jpg"  # a phone's motion photo: a video after the JPEG's end
    trailed.write_bytes(whole + b"ftypmp42" + bytes(5000))
    assert read_photo(trailed).board == erudit_words()


def test_a_damaged_photo_is_refused_in_one_line_and_a_padded_one_is_read(tmp_path, capfd):

    shot = render_photo(erudit_words(), seed=9_000_203, style="erudit-black", pose="frontal")
    whole = cv2.imencode(".jpg", shot.image)[1].tobytes()
    broken = bytearray(whole)
    broken[len(whole) // 2:len(whole) // 2 + 2] = b"\xff\xd0"  # a restart marker in a file of
    damaged = tmp_path / "damaged.jpg"                          # none: the rest is lost (grey)
    damaged.write_bytes(bytes(broken))
    with pytest.raises(PhotoError, match="damaged.jpg: the photo is damaged"):
        read_photo(damaged)
    png = cv2.imencode(".png", shot.image)[1].tobytes()
    cut = tmp_path / "cut.png"
    cut.write_bytes(png[:len(png) // 2])
    with pytest.raises(PhotoError, match="cut.png: not an image"):
        read_photo(cut)
    assert capfd.readouterr().err == ""  # libjpeg's and libpng's own complaints are not shown
    padded = tmp_path / "padded.jpg"  # bytes before the end marker, as some cameras write
    padded.write_bytes(whole[:-2] + b"\x00\x00\x00" + whole[-2:])
    restarts = tmp_path / "restarts.jpg"  # restart markers where the header says they are
    cv2.imwrite(str(restarts), shot.image, [cv2.IMWRITE_JPEG_RST_INTERVAL, 4])
    assert b"\xff\xd0" in restarts.read_bytes()
    for photo in (padded, restarts):
        assert read_photo(photo).board == erudit_words()


def test_decoder_lines_are_kept_off_stderr_and_other_lines_passed_on(capfd):
    import os

    from vision.photo import damaged, decoder_messages

    with decoder_messages() as messages:
        os.write(2, b"Corrupt JPEG data: premature end of data segment\n")
        os.write(2, b"a server's log line\n")
    assert messages == ["Corrupt JPEG data: premature end of data segment"]
    assert damaged(messages) and not damaged(["Corrupt JPEG data: 2 extraneous bytes before "
                                              "marker 0xd9"])
    assert capfd.readouterr().err == "a server's log line\n"


def test_board_image_is_the_grid_seen_from_above():
    shot = render_photo(EMPTY, seed=9_000_108, style="erudit-cream", pose="frontal",
                        clutter=False)
    top = board_image(shot.image, shot.corners)
    assert top.shape == ((SIZE + 1) * 32, (SIZE + 1) * 32, 3)


def test_photo_is_decoded_once_at_the_size_reading_needs(tmp_path):

    from vision.photo import HALF_SIZE_FROM, Reduced, frame_size, load_for_reading, reduction

    big, small = tmp_path / "big.jpg", tmp_path / "small.jpg"
    cv2.imwrite(str(big), np.zeros((HALF_SIZE_FROM, 2400, 3), np.uint8))
    cv2.imwrite(str(small), np.zeros((HALF_SIZE_FROM - 8, 2400, 3), np.uint8))
    assert frame_size(big.read_bytes()) == (HALF_SIZE_FROM, 2400)          # read from the header
    image, scale = load_for_reading(big)
    assert image.shape[:2] == (HALF_SIZE_FROM // 2, 1200) and scale == 2.0
    assert isinstance(image, Reduced)
    image, scale = load_for_reading(small)
    assert image.shape[:2] == (HALF_SIZE_FROM - 8, 2400) and scale == 1.0
    assert not isinstance(image, Reduced)
    png = tmp_path / "big.png"
    cv2.imwrite(str(png), np.zeros((HALF_SIZE_FROM, 100, 3), np.uint8))
    assert frame_size(png.read_bytes()) is None
    image, scale = load_for_reading(png)
    assert image.shape[:2] == (HALF_SIZE_FROM // 2, 50) and isinstance(image, Reduced)
    larger = tmp_path / "48mp.jpg"                          # each halving leaves 1600+ px
    cv2.imwrite(str(larger), np.zeros((2 * HALF_SIZE_FROM, 100, 3), np.uint8))
    image, scale = load_for_reading(larger)
    assert image.shape[:2] == (HALF_SIZE_FROM // 2, 25) and scale == 4.0
    assert isinstance(image, Reduced)
    sides = (3199, 3200, 6399, 6400, 12800, 40000)
    assert [reduction(side) for side in sides] == [1, 2, 2, 4, 8, 8]
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(big.read_bytes()[:40])                     # a header that stops short
    assert frame_size(cut.read_bytes()) is None
    with pytest.raises(PhotoError, match="cut.jpg: not an image"):
        load_for_reading(cut)


