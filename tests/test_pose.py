"""vision.pose: the plane of the tile tops, recovered from the grid's corners alone."""

import math

import numpy as np
import pytest

from vision.pose import USUAL_FOCAL, tile_tops

SHAPE = (3000, 4000, 3)  # a 12 MP phone photo, landscape


def _camera(tilt_deg: float, focal: float, turn_deg: float = 20.0):
    """A pinhole camera `tilt_deg` off straight down, its axis through the photo's centre and
    the board's centre; a function from board points (cells; z up) to photo pixels."""
    tilt, turn = math.radians(tilt_deg), math.radians(turn_deg)
    back = np.float64([math.sin(tilt) * math.cos(turn), math.sin(tilt) * math.sin(turn),
                       math.cos(tilt)])  # from the board's centre towards the camera
    centre = np.float64([7.5, 7.5, 0]) + 40 * back
    forward = -back
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right = right / np.linalg.norm(right) if np.linalg.norm(right) > 1e-9 else np.float64([1, 0, 0])
    down = np.cross(forward, right)
    rot = np.stack([right, down, forward])
    middle = (np.float64(SHAPE[1::-1]) - 1) / 2

    def photo(points):
        cam = (np.asarray(points, np.float64) - centre) @ rot.T
        return cam[:, :2] / cam[:, 2:] * focal + middle
    return photo


def _square(z: float) -> np.ndarray:
    return np.float64([[0, 0, z], [15, 0, z], [15, 15, z], [0, 15, z]])


@pytest.mark.parametrize("tilt", [25, 45, 58])
def test_tile_tops_is_the_raised_plane_of_a_tilted_camera(tilt):
    photo = _camera(tilt, focal=3200)
    tops = tile_tops(photo(_square(0)), SHAPE, height=0.3)
    assert np.abs(tops - photo(_square(0.3))).max() < 0.5  # px, on ~150 px cells


def test_tile_tops_follows_the_corners_order():
    corners = _camera(50, focal=3200)(_square(0))
    turned = np.roll(corners, 1, axis=0)
    assert np.allclose(tile_tops(turned, SHAPE), np.roll(tile_tops(corners, SHAPE), 1, axis=0),
                       atol=1e-3)


def test_seen_straight_down_tops_grow_about_the_centre_with_the_usual_lens():
    focal = USUAL_FOCAL * max(SHAPE[:2])
    photo = _camera(0, focal=focal)
    tops = tile_tops(photo(_square(0)), SHAPE, height=0.3)
    assert np.abs(tops - photo(_square(0.3))).max() < 0.5
    middle = (np.float64(SHAPE[1::-1]) - 1) / 2
    grown = np.linalg.norm(tops - middle, axis=1) / np.linalg.norm(photo(_square(0)) - middle,
                                                                    axis=1)
    assert np.all(grown > 1)


def test_tops_of_no_height_are_the_grid():
    corners = _camera(40, focal=2500)(_square(0))
    assert np.allclose(tile_tops(corners, SHAPE, height=0.0), corners, atol=1e-3)


def test_a_grid_no_camera_can_see_keeps_its_own_plane():
    line = np.float32([[10, 10], [20, 10], [30, 10], [40, 10]])
    crossed = np.float32([[0, 0], [100, 100], [100, 0], [0, 100]])  # a bow tie
    for corners in (line, crossed):
        assert np.array_equal(tile_tops(corners, SHAPE), corners)
