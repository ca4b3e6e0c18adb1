"""The phone: where it stands over the board (any tilt, straight down, or from a chair at the
table), the frame it takes, and what its lens and sensor do to the picture."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from engine.ruleset import SIZE


def smooth_noise(rng, h, w, cells, lo=0.0, hi=1.0):
    """Low-frequency noise field in [lo, hi] of size (h, w) from a cells x cells random grid."""
    gh, gw = max(2, int(cells * h / max(h, w)) + 2), max(2, int(cells * w / max(h, w)) + 2)
    g = rng.random((gh, gw)).astype(np.float32)
    return lo + (hi - lo) * cv2.resize(g, (w, h), interpolation=cv2.INTER_CUBIC).clip(0, 1)


def add_noise(img, sigma, rng, offset=None, coarse=1):
    """Add grey Gaussian noise (+ an optional float offset field) in place, saturating."""
    h, w = img.shape[:2]
    noise = np.empty((h // coarse, w // coarse), np.float32)
    cv2.setRNGSeed(int(rng.integers(1 << 31)))
    cv2.randn(noise, 0, sigma)
    if coarse > 1:
        noise = cv2.resize(noise, (w, h), interpolation=cv2.INTER_LINEAR)
    if offset is not None:
        noise += offset
    pos = cv2.cvtColor(cv2.convertScaleAbs(np.maximum(noise, 0)), cv2.COLOR_GRAY2BGR)
    neg = cv2.cvtColor(cv2.convertScaleAbs(np.minimum(noise, 0)), cv2.COLOR_GRAY2BGR)
    cv2.add(img, pos, dst=img)
    cv2.subtract(img, neg, dst=img)


# ----------------------------------------------------------------------------- camera

@dataclass
class Camera:
    h_units: np.ndarray   # 3x3 homography board units (1 = one cell, grid from 0 to 15) -> image
    ground: np.ndarray    # camera position projected on the board plane (units)
    height: float         # camera height above the board (units)
    rise: np.ndarray      # homogeneous image direction of one unit up off the board

    def folded(self, degrees: float) -> np.ndarray:
        """The homography of the board's far half (past the hinge along the middle of the
        centre row, row 8) turned `degrees` up about that hinge, as a folding board that does
        not lie flat shows it; the near half stays h_units."""
        turn = math.radians(degrees)
        hinge = SIZE / 2
        onto = np.float64([[1, 0, 0], [0, math.cos(turn), hinge * (1 - math.cos(turn))],
                           [0, 0, 1]])
        up = np.float64([0, math.sin(turn), -hinge * math.sin(turn)])
        return self.h_units @ onto + np.outer(self.rise, up)


POSES = ("any", "frontal", "seated")  # tilt 0-46° (most under 30°), 0-7°, 50-62°


def sample_camera(rng, pose: str, extent: float, w: int, h: int) -> Camera:
    """A camera looking at the board; extent = half size of the board incl. margin (units)."""
    if pose == "frontal":
        tilt, dist = rng.uniform(0, 7), rng.uniform(2.2, 3.5)
        roll = rng.normal(0, 1.5)
    elif pose == "seated":  # a player photographing the board from their chair
        tilt, dist = rng.uniform(50, 62), rng.uniform(1.3, 2.5)
        roll = rng.normal(0, 8)
    else:
        tilt, dist = min(abs(rng.normal(0, 22)), 46), rng.uniform(1.3, 3.0)
        roll = (rng.uniform(0, 360) if rng.random() < 0.6
                else rng.choice([0, 90, 180, 270]) + rng.normal(0, 6))
    azim = rng.uniform(0, 2 * math.pi)
    target = np.float64([7.5, 7.5, 0]) + np.r_[rng.normal(0, 0.5, 2), 0]
    d = dist * 2 * extent
    t = math.radians(tilt)
    centre = target + d * np.float64([math.sin(t) * math.cos(azim), math.sin(t) * math.sin(azim),
                                      -math.cos(t)])
    fwd = (target - centre) / np.linalg.norm(target - centre)
    x_c = np.cross(fwd, [0.0, -1.0, 0.0])
    x_c /= np.linalg.norm(x_c)
    y_c = np.cross(fwd, x_c)
    rr = math.radians(roll)
    x_c, y_c = math.cos(rr) * x_c + math.sin(rr) * y_c, -math.sin(rr) * x_c + math.cos(rr) * y_c
    rot = np.stack([x_c, y_c, fwd])
    h0 = np.column_stack([rot[:, 0], rot[:, 1], -rot @ centre])
    frame = _fit_frame(h0, rng, pose, extent, w, h)
    fitted = frame @ np.linalg.inv(h0)  # the frame's scale and shift
    return Camera(frame, centre[:2].astype(np.float32), float(-centre[2]), fitted @ -rot[:, 2])


def project(hm, pts):
    p = np.c_[pts, np.ones(len(pts))] @ hm.T
    return p[:, :2] / p[:, 2:3]


def _fit_frame(h0, rng, pose, extent, w, h):
    """Scale and shift the projection so the board sits in the frame as a photographer would."""
    grid = np.float64([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]])
    outer = np.float64([[7.5 - extent, 7.5 - extent], [7.5 + extent, 7.5 - extent],
                        [7.5 + extent, 7.5 + extent], [7.5 - extent, 7.5 + extent]])
    po, pg = project(h0, outer), project(h0, grid)
    span = po.max(0) - po.min(0)
    fit = min(w / span[0], h / span[1])  # board incl. margin just fills the frame
    if pose == "frontal":
        scale = fit * rng.uniform(0.8, 0.97)
    elif rng.random() < 0.15:  # cropped close to the grid
        gspan = pg.max(0) - pg.min(0)
        scale = min(w / gspan[0], h / gspan[1]) * rng.uniform(0.9, 1.0)
    else:
        scale = fit * rng.uniform(0.5, 1.0)
    pg = pg * scale
    lo, hi = pg.min(0), pg.max(0)
    pad = 2.0
    room = np.float64([w, h]) - (hi - lo) - 2 * pad
    if (room < 0).any():  # grid does not fit: shrink until it does
        k = min(1.0, (w - 2 * pad) / (hi - lo)[0], (h - 2 * pad) / (hi - lo)[1]) * 0.99
        return _fit_frame_scaled(h0, scale * k, w, h, rng)
    place = rng.random(2) if pose != "frontal" else np.clip(rng.normal(0.5, 0.1, 2), 0, 1)
    shift = pad - lo + place * room
    moved = np.float64([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]])
    return moved @ np.diag([scale, scale, 1]) @ h0


def _fit_frame_scaled(h0, scale, w, h, rng):
    pg = project(h0, np.float64([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]])) * scale
    lo, hi = pg.min(0), pg.max(0)
    room = np.maximum(np.float64([w, h]) - (hi - lo) - 4, 0)
    shift = 2 - lo + rng.random(2) * room
    moved = np.float64([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]])
    return moved @ np.diag([scale, scale, 1]) @ h0


def orientation(corners: np.ndarray) -> int:
    v = corners[1] - corners[0]
    ang = math.degrees(math.atan2(v[1], v[0]))  # image y points down: positive = clockwise
    return int(round(ang / 90.0)) % 4 * 90


# ----------------------------------------------------------------------------- photo effects

def photo_effects(img, rng, quality: tuple[int, int] | None = None) -> np.ndarray:
    h, w = img.shape[:2]
    sh, sw = max(8, h // 8), max(8, w // 8)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    rr = ((xx / sw - 0.5) ** 2 + (yy / sh - 0.5) ** 2) * 2
    gain = smooth_noise(rng, sh, sw, 3, rng.uniform(0.55, 0.95), rng.uniform(1.0, 1.25))
    gain *= 1 - rng.uniform(0, 0.45) * rr
    glare = np.zeros((sh, sw), np.float32)
    for _ in range(int(rng.poisson(0.8))):
        gx, gy = rng.uniform(0, sw), rng.uniform(0, sh)
        sx, sy = rng.uniform(0.02, 0.15) * sw, rng.uniform(0.02, 0.15) * sh
        glare += rng.uniform(0.2, 1.0) * np.exp(-((xx - gx) ** 2 / (2 * sx * sx)
                                                  + (yy - gy) ** 2 / (2 * sy * sy)))
    wb = np.float32(np.exp(rng.normal(0, 0.07, 3)))
    wb *= np.float32([1 - 0.08 * (t := rng.normal(0, 1)), 1, 1 + 0.08 * t])  # warm/cool
    gain3 = np.clip(gain[..., None] * wb * 128, 0, 255).astype(np.uint8)
    out = cv2.multiply(img, cv2.resize(gain3, (w, h), interpolation=cv2.INTER_LINEAR),
                       scale=1 / 128)
    glare = cv2.convertScaleAbs(glare, alpha=255 * rng.uniform(0.4, 1.0))
    glare = cv2.resize(glare, (w, h), interpolation=cv2.INTER_LINEAR)
    cv2.add(out, cv2.cvtColor(glare, cv2.COLOR_GRAY2BGR), dst=out)
    out = _blur(out, rng)
    add_noise(out, rng.uniform(1, 7), rng, coarse=int(rng.integers(1, 3)))
    low, high = quality or (45, 95)  # both ends included
    ok, buf = cv2.imencode(".jpg", out,
                           [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(low, high + 1))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def _blur(f, rng):
    p = rng.random()
    if p < 0.35:
        return f
    if p < 0.8:
        return cv2.GaussianBlur(f, (0, 0), rng.uniform(0.4, 1.6))
    n = int(rng.integers(3, 10))
    k = np.zeros((n, n), np.float32)
    k[n // 2] = 1
    rotm = cv2.getRotationMatrix2D(((n - 1) / 2, (n - 1) / 2), rng.uniform(0, 180), 1.0)
    k = cv2.warpAffine(k, rotm, (n, n))
    return cv2.filter2D(f, -1, k / max(k.sum(), 1e-6))
