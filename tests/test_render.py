"""The synthetic photo renderer: shapes, ground truth, determinism, styles, font split."""

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from synth.camera import project, sample_camera
from synth.glyphs import font_paths, print_letter
from synth.photos import bowed, bowed_points, dimmed, shadowed, warmed
from synth.render import ANY_STYLES, STYLES, _paste_rotated, render_photo
from synth.styles import HELD_OUT_INK_HUES, HELD_OUT_TILE_HUES, sample_look

EMPTY = ["." * 15] * 15
WORDS = [
    "...............",
    ".....С.........",
    ".....Л.........",
    ".....О.........",
    ".....Н.........",
    "...............",
    "...............",
    "....КОТ*Щ......",
    ".......ь.......",
    "...............",
    "...............",
    "...............",
    "...............",
    "...............",
    "...............",
]
SIZE = (960, 720)


def one_tile(cell_letter="Ж"):
    rows = [list(r) for r in EMPTY]
    rows[7][7] = cell_letter  # H8
    return ["".join(r) for r in rows]


def rectify(shot, cell=40):
    side = 15 * cell
    dst = np.float32([[0, 0], [side, 0], [side, side], [0, side]])
    m = cv2.getPerspectiveTransform(shot.corners, dst)
    return cv2.warpPerspective(shot.image, m, (side, side))


def cell_mean(flat, col, row, cell=40):
    """Mean BGR of the middle of a cell (0-based column, row)."""
    q = cell // 4
    square = flat[row * cell + q: (row + 1) * cell - q, col * cell + q: (col + 1) * cell - q]
    return square.reshape(-1, 3).mean(0)


def test_shape_dtype_and_fields():
    shot = render_photo(WORDS, seed=1, size=SIZE)
    assert shot.image.shape == (720, 960, 3) and shot.image.dtype == np.uint8
    assert shot.corners.shape == (4, 2) and shot.corners.dtype == np.float32
    assert shot.board == WORDS and shot.style in STYLES and len(shot.layout) == 15
    assert shot.orientation in (0, 90, 180, 270)


@pytest.mark.parametrize("seed", range(8))
def test_corners_inside_and_match_orientation(seed):
    shot = render_photo(WORDS, seed=seed, size=SIZE, clutter=False)
    c = shot.corners
    assert (c >= 0).all() and (c[:, 0] <= SIZE[0]).all() and (c[:, 1] <= SIZE[1]).all()
    # board order runs clockwise in the image (y down): positive signed area
    area = 0.5 * sum(c[i, 0] * c[(i + 1) % 4, 1] - c[(i + 1) % 4, 0] * c[i, 1] for i in range(4))
    assert area > 0.02 * SIZE[0] * SIZE[1]
    top = c[1] - c[0]
    angle = math.degrees(math.atan2(top[1], top[0])) % 360
    diff = (angle - shot.orientation + 180) % 360 - 180
    assert abs(diff) <= 45.001


@pytest.mark.parametrize("centre", [(8, 8), (92, 92)])
def test_a_tile_face_leaning_past_the_board_picture_is_cut_not_dropped(centre):
    # a tall tile seen low at the board's edge: its face leans past the board's picture
    canvas = np.zeros((100, 100, 3), np.uint8)
    face, alpha = np.full((40, 40, 3), 255, np.uint8), np.full((40, 40), 255, np.uint8)
    _paste_rotated(canvas, face, alpha, np.float32(centre), 0.0)
    x, y = centre
    inside = canvas[max(y - 15, 0):y + 15, max(x - 15, 0):x + 15]
    assert inside.size and (inside == 255).all()


def test_deterministic_by_seed():
    a = render_photo(WORDS, seed=7, size=SIZE)
    b = render_photo(WORDS, seed=7, size=SIZE)
    c = render_photo(WORDS, seed=8, size=SIZE)
    assert np.array_equal(a.image, b.image) and np.array_equal(a.corners, b.corners)
    assert not np.array_equal(a.image, c.image)


@pytest.mark.parametrize("style", STYLES)
def test_every_style_renders_in_both_poses(style):
    for pose in ("any", "frontal"):
        shot = render_photo(WORDS, seed=3, style=style, pose=pose)
        assert shot.style == style
        h, w = shot.image.shape[:2]
        assert min(h, w) >= 720 and max(h, w) <= 2000
        assert shot.image.std() > 10  # not a blank frame


@pytest.mark.parametrize("style", ANY_STYLES)
def test_random_colour_boxes_render_with_readable_tiles(style):
    shot = render_photo(one_tile(), seed=5, style=style, pose="frontal", clutter=False)
    flat = rectify(shot)
    tile, plain = cell_mean(flat, 7, 7), cell_mean(flat, 1, 0)
    assert shot.style == style and np.abs(tile - plain).max() > 15  # the tile shows on the board


def hue(bgr) -> tuple[float, float]:
    h, s, _ = cv2.cvtColor(np.uint8([[bgr]]), cv2.COLOR_BGR2HSV_FULL)[0, 0].astype(float)
    return h * 360 / 256, s / 255


def test_random_boxes_never_take_the_held_out_novel_look():
    """novel-violet must stay unseen: no violet tiles, no yellow light ink in any-colour boxes."""
    for seed in range(400):
        look = sample_look(ANY_STYLES[seed % 2], np.random.default_rng(seed))
        tile_hue, tile_sat = hue(look.tile_top)
        ink_hue, ink_sat = hue(look.tile_ink)
        low, high = HELD_OUT_TILE_HUES
        assert not (tile_sat > 0.05 and low + 2 < tile_hue < high - 2)
        light_ink = sum(look.tile_ink) > 3 * 180
        low, high = HELD_OUT_INK_HUES
        assert not (light_ink and ink_sat > 0.05 and low + 2 < ink_hue < high - 2)


def test_frontal_pose_is_upright_and_large():
    for seed in range(4):
        shot = render_photo(WORDS, seed=seed, pose="frontal", size=SIZE)
        assert shot.orientation == 0
        width = np.linalg.norm(shot.corners[1] - shot.corners[0])
        assert width > 0.5 * min(SIZE)


def test_font_split_is_disjoint_and_covers_all():
    train, held, every = font_paths("train"), font_paths("heldout"), font_paths("all")
    assert train and held
    assert not set(train) & set(held)
    assert set(train) | set(held) == set(every)
    assert 0.05 < len(held) / len(every) < 0.3
    with pytest.raises(ValueError):
        font_paths("test")


def test_heldout_fonts_render():
    shot = render_photo(WORDS, seed=2, fonts="heldout", size=SIZE)
    assert shot.image.shape == (720, 960, 3)
    assert shot.font in font_paths("heldout")  # a render says which font its letters are in


@pytest.mark.parametrize("seed", range(3))
def test_rectified_tile_and_premium_colours(seed):
    shot = render_photo(one_tile(), seed=seed, style="erudit-black", pose="frontal", clutter=False)
    flat = rectify(shot)
    b, g, r = cell_mean(flat, 7, 7)          # H8: blue tile over the white centre
    assert b > r + 40 and b > g
    b, g, r = cell_mean(flat, 0, 0)          # A1: empty red ×3 word square
    assert r > b + 40 and r > g + 20
    plain = cell_mean(flat, 1, 0)            # B1: plain black square
    assert plain.max() < 110
    empty = rectify(render_photo(EMPTY, seed=seed, style="erudit-black", pose="frontal",
                                 clutter=False))
    assert cell_mean(empty, 7, 7).min() > 150  # the centre square is white when no tile covers it


def test_star_tile_drawn_for_lower_case():
    shot = render_photo(one_tile("к"), seed=5, style="erudit-black", pose="frontal", clutter=False)
    centre = rectify(shot)[7 * 40 + 8: 8 * 40 - 8, 7 * 40 + 8: 8 * 40 - 8]
    blue = (centre[..., 0].astype(int) - centre[..., 2]) > 40
    white = centre.min(axis=2) > 150
    assert blue.mean() > 0.3 and 0.02 < white.mean() < 0.5


def test_english_style_uses_scrabble_layout():
    shot = render_photo(EMPTY, seed=1, style="scrabble-hasbro", size=SIZE)
    assert shot.layout[5][5] == "L" and shot.layout[7][7] == "w"


def test_bad_board_is_rejected():
    with pytest.raises(ValueError):
        render_photo(["..."], seed=0)
    with pytest.raises(ValueError):
        render_photo(EMPTY, seed=0, style="chess")


def test_corners_are_exact_on_grid_lines():
    """The dark grid walls of a rectified empty board fall on multiples of the cell size."""
    shot = render_photo(EMPTY, seed=4, style="erudit-black", pose="frontal", clutter=False)
    flat = cv2.cvtColor(rectify(shot, cell=40), cv2.COLOR_BGR2GRAY).astype(float)
    profile = flat[:, 20:-20].mean(axis=1)
    for k in range(1, 15):
        window = profile[k * 40 - 10: k * 40 + 11]
        assert abs(int(np.argmin(window)) - 10) <= 3


@pytest.mark.parametrize("style", ["scrabble-hasbro", "novel-violet"])
def test_a_value_in_the_corner_keeps_clear_of_its_letter(style):
    # printers keep the value off the letter: a "10" under Ш's right stem reads as Щ's tail
    fonts = font_paths("train")[:6] + font_paths("heldout")[:6]
    for seed in range(6):
        look = sample_look(style, np.random.default_rng(seed))
        assert not look.value_near
        for font in fonts:
            for letter in "ШЦ":  # one stroke each, worth 10: three pieces of ink with the value
                face = np.zeros((120, 120, 3), np.uint8)
                print_letter(face, letter, 120, replace(look, tile_ink=(255, 255, 255)), font)
                pieces, _ = cv2.connectedComponents((face[..., 0] > 30).astype(np.uint8))
                assert pieces - 1 == 3, (style, seed, font, letter)


def test_a_photo_in_dim_light_has_half_the_light_and_its_own_noise():
    shot = render_photo(WORDS, seed=2, style="erudit-cream", size=(640, 480))
    dim = dimmed(shot.image, seed=3)
    assert dim.shape == shot.image.shape and dim.dtype == np.uint8
    assert dim.mean() == pytest.approx(shot.image.mean() / 2, rel=0.05)
    assert np.array_equal(dim, dimmed(shot.image, seed=3))
    assert not np.array_equal(dim, dimmed(shot.image, seed=4))


def test_a_photo_with_a_shadow_is_darker_over_part_of_it_only():
    shot = render_photo(WORDS, seed=2, style="erudit-cream", size=(640, 480))
    shaded = shadowed(shot.image, seed=3)
    assert shaded.shape == shot.image.shape and shaded.dtype == np.uint8
    ratio = cv2.blur(shaded.astype(np.float32), (31, 31)).sum(2) / (
        cv2.blur(shot.image.astype(np.float32), (31, 31)).sum(2) + 1)
    assert ratio.min() < 0.65  # the shadow: 40-60 % darker
    assert np.mean(ratio > 0.9) > 0.3  # the rest as it was (a JPEG round trip)
    assert np.array_equal(shaded, shadowed(shot.image, seed=3))
    assert not np.array_equal(shaded, shadowed(shot.image, seed=4))


def test_a_bowed_photo_shows_each_point_where_bowed_points_says():
    dots = np.float32([[40, 30], [600, 50], [320, 240], [100, 420], [610, 460]])
    image = np.zeros((480, 640, 3), np.uint8)
    for x, y in dots:
        cv2.circle(image, (int(x), int(y)), 4, (255, 255, 255), -1)
    bowed_image = bowed(image, seed=5)
    moved = bowed_points(dots, image.shape, seed=5)
    for x, y in moved:
        window = bowed_image[int(y) - 12:int(y) + 13, int(x) - 12:int(x) + 13, 0].astype(float)
        rows, columns = np.mgrid[-12:13, -12:13]
        centre = np.array([(columns * window).sum(), (rows * window).sum()]) / window.sum()
        assert np.abs(centre - (x - int(x), y - int(y))).max() < 0.5  # the dot lies there
    centre = np.array([319.5, 239.5])
    reach = np.linalg.norm(dots - centre, axis=1)
    assert np.all(np.linalg.norm(moved - centre, axis=1) <= reach)  # barrel: drawn inwards
    assert np.linalg.norm(moved[2] - dots[2]) < 0.5  # the centre stays
    assert not np.array_equal(bowed_image, bowed(image, seed=6))


def test_a_folded_board_turns_only_its_far_half_about_the_hinge():
    flat = render_photo(WORDS, seed=2, style="erudit-cream", size=SIZE, clutter=False)
    again = render_photo(WORDS, seed=2, style="erudit-cream", size=SIZE, clutter=False, fold=0)
    folded = render_photo(WORDS, seed=2, style="erudit-cream", size=SIZE, clutter=False, fold=5)
    assert np.array_equal(flat.image, again.image)
    assert np.array_equal(folded.corners[:2], flat.corners[:2])  # rows 1-7 lie as they were
    assert np.abs(folded.corners[2:] - flat.corners[2:]).max() > 2  # row 15's corners moved


def test_the_far_half_s_homography_keeps_the_hinge_and_turns_away_from_it():
    camera = sample_camera(np.random.default_rng(4), "any", 8.5, 960, 720)
    hinge = np.float64([[0, 7.5], [7.5, 7.5], [15, 7.5]])
    far = np.float64([[0, 15], [15, 15]])
    assert np.allclose(project(camera.folded(4), hinge), project(camera.h_units, hinge))
    assert np.allclose(camera.folded(0), camera.h_units)
    lifted = np.abs(project(camera.folded(4), far) - project(camera.h_units, far)).max()
    assert lifted > np.abs(project(camera.folded(2), far) - project(camera.h_units, far)).max()


def test_a_photo_under_a_warm_lamp_keeps_its_red_and_loses_blue():
    shot = render_photo(WORDS, seed=2, style="erudit-cream", size=(640, 480))
    warm = warmed(shot.image, seed=3).astype(np.float32)
    blue, green, red = (warm[..., k].mean() / (shot.image[..., k].mean() + 1e-6) for k in range(3))
    assert 0.5 < blue < 0.8 and 0.75 < green < 0.95 and red > 0.95
    assert np.array_equal(warmed(shot.image, seed=3), warmed(shot.image, seed=3))
    assert not np.array_equal(warmed(shot.image, seed=3), warmed(shot.image, seed=4))


def _foreshortening(corners) -> float:
    """Shortest over longest stretch of the grid's homography at the board's centre."""
    from vision.locate import grid_homography

    homography = grid_homography(np.float32(corners))
    x, y, w = homography @ [7.5, 7.5, 1.0]
    jacobian = (homography[:2, :2] * w - np.outer([x, y], homography[2, :2])) / w ** 2
    stretches = np.linalg.svd(jacobian, compute_uv=False)
    return float(stretches[1] / stretches[0])


def test_a_photo_from_a_chair_sees_the_board_far_more_steeply_than_one_from_above():
    for seed in range(4):
        seated = render_photo(EMPTY, seed=seed, style="erudit-cream", pose="seated", size=SIZE)
        above = render_photo(EMPTY, seed=seed, style="erudit-cream", pose="frontal", size=SIZE)
        assert _foreshortening(seated.corners) < 0.7 < 0.9 < _foreshortening(above.corners)
