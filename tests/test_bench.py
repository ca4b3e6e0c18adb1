"""The benchmarks measure what they claim to."""

import cv2
import numpy as np
from PIL import Image

from bench.bench_read import turned_photos
from bench.eval_read import eval_synthetic


def test_a_photo_from_the_other_side_is_saved_as_its_camera_saved_it(tmp_path):
    rng = np.random.default_rng(0)
    pixels = cv2.GaussianBlur(rng.integers(0, 256, (96, 128, 3), np.uint8), (0, 0), 2)
    pixels[:, :32] = (0, 0, 255)  # a red band on the left of the stored pixels
    photo = tmp_path / "camera.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways, as phones do
    Image.fromarray(pixels[:, :, ::-1]).save(photo, "JPEG", quality=97, subsampling=0,
                                             exif=exif.tobytes())
    (copy,) = turned_photos([photo], tmp_path)
    with Image.open(photo) as before, Image.open(copy) as after:
        assert after.quantization == before.quantization
        assert after.getexif()[0x0112] == 6
        assert after.layer == before.layer  # the same chroma subsampling
    shown_before = cv2.imread(str(photo), cv2.IMREAD_COLOR)
    shown_after = cv2.imread(str(copy), cv2.IMREAD_COLOR)
    assert shown_before.shape == shown_after.shape == (128, 96, 3)  # turned by its EXIF
    difference = np.abs(np.rot90(shown_before, 2).astype(int) - shown_after.astype(int))
    assert difference.mean() < 3


def test_renders_read_side_by_side_read_as_one_at_a_time():
    one, two = (eval_synthetic(2, fonts="train", jobs=jobs) for jobs in (1, 2))
    # true corners, then found: all, large cells, reachable, reachable with large cells
    assert len(one) == len(two) == 8
    assert one[3].boards <= min(one[1].boards, one[2].boards)
    for alone, together in zip(one, two, strict=True):
        assert (alone.name, alone.boards, alone.right, alone.silent, alone.asked, alone.failed) == \
            (together.name, together.boards, together.right, together.silent, together.asked,
             together.failed)
    assert one[0].boards == 2 and one[0].right > 0.9 * 450


def test_the_fonts_holding_the_most_misses_are_listed_first(capsys):
    from bench.eval_read import _by_font

    class Read:
        def __init__(self, board):
            self.board = board

    label = ["А" * 15] * 15
    once, twice = ["Б" + "А" * 14] + ["А" * 15] * 14, ["ББ" + "А" * 13] + ["А" * 15] * 14
    _by_font([{"font": "Plain.ttf", "label": label, "truth": (Read(label),),
               "found": (Read(once),)},
              {"font": "Thin.otf", "label": label, "truth": (Read(once),),
               "found": (Read(twice),)},
              {"font": "Thin.otf", "label": label, "truth": (None,), "found": (Read(label),)}])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "  Thin.otf: 226 / 2 wrong on 2 boards (99.56% found)"  # refused: all wrong
    assert lines[2] == "  Plain.ttf: 0 / 1 wrong on 1 board (99.56% found)"


def test_novel_boxes_read_side_by_side_read_as_one_at_a_time(tmp_path):
    from bench.eval_calibration import _novel_box
    from bench.eval_read import pool_of

    cases = [(1, tmp_path / "alone", box) for box in (11, 12)]
    (tmp_path / "alone").mkdir()
    alone = [_novel_box(case) for case in cases]
    cases = [(1, tmp_path / "together", box) for box in (11, 12)]
    (tmp_path / "together").mkdir()
    with pool_of(2) as pool:
        together = pool.map(_novel_box, cases)
    for (_, first), (_, second) in zip(alone, together, strict=True):
        assert [(t.name, t.right, t.asked, t.silent) for t in first] == \
            [(t.name, t.right, t.asked, t.silent) for t in second]
    for box in (11, 12):  # each box calibrated from its own photos, also side by side
        for photo in ("500.png", "501.png"):
            assert (tmp_path / "together" / f"box{box}" / photo).read_bytes() == \
                (tmp_path / "alone" / f"box{box}" / photo).read_bytes()
    assert (tmp_path / "alone" / "box11" / "500.png").read_bytes() != \
        (tmp_path / "alone" / "box12" / "500.png").read_bytes()


def test_a_benchmark_names_its_machine_and_how_its_networks_run():
    from bench.machine import describe

    avx2 = "processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu sse4_2 avx2 fma\n"
    line = describe(avx2)
    assert line.startswith("machine: Test CPU 9000, ") and "AVX2, no VNNI" in line
    assert line.endswith("networks run the fast 8-bit way")  # 7-bit weights need no exact way
    assert "AVX-512, VNNI" in describe(avx2.replace("avx2", "avx2 avx512f avx512_vnni"))


def test_the_read_benchmark_names_a_photo_it_cannot_read_and_goes_on(tmp_path, capsys):
    import pytest

    from bench.bench_read import readable
    from synth.render import render_photo

    photo = tmp_path / "board.jpg"
    shot = render_photo(["." * 15] * 7 + ["...КОТ........."] + ["." * 15] * 7, seed=3,
                        style="erudit-cream", pose="frontal")
    cv2.imwrite(str(photo), shot.image)
    assert readable([tmp_path / "gone.jpg", photo]) == [photo]
    assert "gone.jpg: left out (" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="no photo to measure"):
        readable([tmp_path / "gone.jpg"])


def test_an_unknown_set_is_named_with_the_ones_there_are():
    import argparse

    import pytest

    from bench.eval_read import set_names

    sets = set_names("real", "jheidel")
    assert sets("real,jheidel") == ["real", "jheidel"]
    with pytest.raises(argparse.ArgumentTypeError, match="unknown set 'rael' .*real, jheidel"):
        sets("rael")


def test_a_render_taken_bowed_or_folded_comes_with_its_grid_s_true_corners():
    from bench.eval_read import folding, render_taken
    from synth.render import render_photo

    board = ["." * 15] * 15
    plain = render_photo(board, seed=3, style="erudit-black", size=(640, 480))
    for condition in (None, "bowed", "folded"):
        image, corners = render_taken(board, 3, condition, style="erudit-black", size=(640, 480))
        assert image.shape == plain.image.shape
        moved = np.abs(corners - plain.corners).max()
        assert (moved == 0) == (condition is None)
    assert 2 <= abs(folding(3)) <= 6 and folding(3) == folding(3)


def test_folded_renders_are_not_asked_of_real_photos(capsys):
    import pytest

    from bench.eval_read import main

    with pytest.raises(SystemExit):
        main(["--sets", "real", "--folded"])
    assert "--folded is a way of rendering: only with --sets synthetic" in capsys.readouterr().err


def test_every_bench_script_prints_its_help(monkeypatch, capsys):
    import importlib
    import sys

    import pytest

    for name in ("bench_locate", "bench_read", "bench_web", "eval_calibration", "eval_layout",
                 "eval_locate", "eval_read", "eval_replay"):
        monkeypatch.setattr(sys, "argv", [f"{name}.py", "--help"])
        with pytest.raises(SystemExit) as stop:
            importlib.import_module(f"bench.{name}").main()
        assert stop.value.code == 0, name
        assert "usage:" in capsys.readouterr().out, name


def test_the_layout_benchmark_reads_each_photo_against_what_its_box_prints(capsys):
    from bench.eval_layout import main

    main(["--count", "8", "--conditions", "as-taken"])
    header, prints, differs, total = capsys.readouterr().out.splitlines()
    assert header.split()[:2] == ["condition", "box"]
    # (photos, not found, wrong by the fixed colour prototypes, wrong by calibration)
    prints, differs = ([int(n) for n in line.split()[-4:]] for line in (prints, differs))
    assert prints[:2] == differs[:2] == [4, 0]  # four boxes print their ruleset's layout
    assert prints[3] == 0 and differs[3] <= differs[2]
    assert total.split()[:2] == ["all", "8"]


def test_the_calibration_benchmark_builds_a_profile_of_a_trained_look():
    from bench.eval_calibration import LOOKS_SEEDS, calibrated_look

    assert calibrated_look((LOOKS_SEEDS + 3, "dim")) == ("dim", "built")


def test_the_live_benchmark_sorts_each_photo_s_proposal(monkeypatch):
    import bench.eval_replay as er

    taken = er.photographed

    def table_only_third(*args):
        photos = taken(*args)
        photos.images[2] = np.full_like(photos.images[2], 128)  # the camera saw only the table
        return photos

    monkeypatch.setattr(er, "photographed", table_only_third)
    outcomes = er.evaluate_live(9101, "none", "erudit-black", 5, 2)
    assert list(outcomes) == [*er.OUTCOMES, er.OFFERED]
    assert outcomes["refused"] == [3]
    # the player confirmed turn 3 by hand: turn 4 is proposed on the true board before it
    assert sorted(sum((outcomes[o] for o in er.OUTCOMES), [])) == [1, 2, 3, 4, 5]
    assert outcomes["right"] == [1, 2, 4, 5]
    assert outcomes[er.OFFERED] == []


def test_the_live_benchmark_knows_a_wrong_proposal_that_offered_the_truth():
    from bench.eval_replay import _offered
    from engine.board import Board

    before = Board.parse("\n".join(["." * 15] * 7 + [".....КОТ......."] + ["." * 15] * 7))
    truth = before.copy()
    truth.set(8, 6, "О")  # О under the О of КОТ: G9
    other = [{"tiles": [{"cell": "G9", "letter": "С"}], "score": 2, "p": 0.3}]
    assert not _offered(before, other, truth)
    assert _offered(before, [*other, {"tiles": [{"cell": "G9", "letter": "О"}], "score": 2,
                                      "p": 0.2}], truth)
