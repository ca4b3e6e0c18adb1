"""Synthetic photos of a game board, with exact ground truth, for training and tests.

The board is drawn upright at a cell size of ~40-90 px (grid, premium squares, tiles with a
visible thickness and shadows), then warped by a camera homography onto a table background
with clutter, and degraded like a phone photo (light, white balance, blur, noise, JPEG).

    >>> shot = render_photo(["." * 15] * 7 + ["...КОТ........."] + ["." * 15] * 7, seed=1)
    >>> shot.image.shape, shot.corners  # BGR photo, grid corners in board order
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from engine.board import COLUMNS
from engine.ruleset import SIZE
from synth.camera import (
    POSES,
    Camera,
    add_noise,
    orientation,
    photo_effects,
    project,
    sample_camera,
    smooth_noise,
)
from synth.glyphs import (
    font_paths,
    print_label,
    print_letter,
    sample_glyph_style,
    text_centered,
)
from synth.styles import (
    ANY_STYLES,
    CALIBRATION_STYLES,
    PREMIUM_FACTORS,
    PREMIUM_LABELS,
    PREMIUM_WORDS,
    REAL_BOX_STYLES,
    STYLES,
    Look,
    default_layout,
    sample_look,
    shade,
)

__all__ = ["Shot", "render_photo", "table_background", "STYLES", "CALIBRATION_STYLES",
           "ANY_STYLES", "REAL_BOX_STYLES", "font_paths"]
ALL_STYLES = STYLES + CALIBRATION_STYLES + ANY_STYLES + REAL_BOX_STYLES


@dataclass
class Shot:
    """One rendered photo and its ground truth."""

    image: np.ndarray        # HxWx3 uint8 BGR
    corners: np.ndarray      # (4,2) float32 grid outer corners: TL, TR, BR, BL of the upright board
    orientation: int         # 0/90/180/270: clockwise turn of the upright board in the image
    board: list[str]
    layout: list[str]
    style: str
    font: str = ""           # the font file the tiles' letters were drawn in
    look: Look | None = None  # the box drawn: its colours, proportions and printing


# ----------------------------------------------------------------------------- shapes

def _rounded_rect(w: float, h: float, r: float, steps: int = 4) -> np.ndarray:
    """Polygon of a rounded rectangle centred at the origin."""
    r = max(0.0, min(r, w / 2, h / 2))
    pts = []
    for cx, cy, a0 in ((w / 2 - r, h / 2 - r, 0), (-w / 2 + r, h / 2 - r, 90),
                       (-w / 2 + r, -h / 2 + r, 180), (w / 2 - r, -h / 2 + r, 270)):
        for t in np.linspace(a0, a0 + 90, steps + 1):
            pts.append((cx + r * math.cos(math.radians(t)), cy + r * math.sin(math.radians(t))))
    return np.float32(pts)


def _fill(dst, poly, color, shift=4):
    pts = np.round(np.asarray(poly) * (1 << shift)).astype(np.int32)
    cv2.fillPoly(dst, [pts], color, cv2.LINE_AA, shift)


def _rot(a_deg: float) -> np.ndarray:
    a = math.radians(a_deg)
    return np.float32([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])


# ----------------------------------------------------------------------------- board

def _board_canvas(look: Look, layout, c: int, font: str, rng) -> tuple[np.ndarray, np.ndarray, int]:
    """Upright board: colour canvas, alpha mask and the grid's offset (px) inside it."""
    m = int(round((look.margin + look.frame_width) * c))
    size = SIZE * c + 2 * m
    canvas = np.empty((size, size, 3), np.uint8)
    canvas[:] = look.frame if look.frame is not None else look.board_edge
    if look.frame is not None:
        inner = int(round(look.frame_width * c))
        canvas[inner: size - inner, inner: size - inner] = look.board_edge
        if rng.random() < 0.7:  # thin dark edge round the frame, as on printed boards
            cv2.rectangle(canvas, (0, 0), (size - 1, size - 1), shade(look.frame, 0.4),
                          max(1, c // 12))
    _draw_grid(canvas, look, layout, c, m, font, rng)
    if look.labels is not None:
        _draw_labels(canvas, look, c, m, font)
    _add_texture(canvas, look.texture, rng)
    alpha = np.zeros((size, size), np.uint8)
    rad = c * (rng.uniform(0.1, 0.4) if not look.english else rng.uniform(0.0, 0.1))
    _fill(alpha, _rounded_rect(size - 1, size - 1, rad) + (size - 1) / 2, 255)
    if look.line_glint > 0:  # lit rim of the moulded plastic board
        rim = _rounded_rect(size - 4, size - 4, rad) + (size - 1) / 2
        pts = np.round(rim * 16).astype(np.int32)
        cv2.polylines(canvas, [pts], True, shade(look.board_edge, 2.2), 2, cv2.LINE_AA, 4)
    return canvas, alpha, m


def _draw_grid(canvas, look: Look, layout, c, m, font, rng):
    lw = max(1, int(round(look.line_width * c)))
    grid = canvas[m: m + SIZE * c, m: m + SIZE * c]
    pos = np.arange(SIZE * c) % c
    on_line = (pos < lw // 2) | (pos >= c - (lw - lw // 2))
    grid[:] = look.cell
    grid[on_line, :] = look.line
    grid[:, on_line] = look.line
    for r in range(SIZE):
        for k in range(SIZE):
            kind = layout[r][k]
            if kind in look.premium and kind != ".":
                _draw_premium(grid, look, kind, k * c, r * c, c, lw, font, rng)
    if look.centre_star:
        _draw_star(grid, 7.5 * c, 7.5 * c, 0.32 * c, shade(look.premium["*"], 0.45), 5)
    if look.line_glint > 0:
        _draw_glints(grid, look, c, lw, rng)
    # outer border line of the grid
    cv2.rectangle(grid, (0, 0), (SIZE * c - 1, SIZE * c - 1), look.line, max(1, lw // 2 + 1))


def _draw_premium(grid, look: Look, kind, x, y, c, lw, font, rng):
    inset = look.premium_inset * c + lw / 2
    w = c - 2 * inset
    poly = _rounded_rect(w, w, look.premium_radius * c) + (x + c / 2, y + c / 2)
    _fill(grid, poly, look.premium[kind])
    ink = look.premium_ink[kind]
    if look.premium_text == "factor" and PREMIUM_FACTORS[kind]:
        word = kind in "Ww"
        cap = c * (0.36 if word else 0.2)
        cx = x + c * (0.58 if word else 0.68)
        cy = y + c * (0.55 if word else 0.7)
        text_centered(grid, font, PREMIUM_FACTORS[kind], cx, cy, cap, ink, 0.85)
    elif look.premium_text == "words":
        words = PREMIUM_WORDS["en" if look.english else "ru"][kind].split()
        cap = c * 0.1
        y0 = y + c / 2 - (len(words) - 1) * cap * 0.85
        for i, wd in enumerate(words):
            text_centered(grid, font, wd, x + c / 2, y0 + i * cap * 1.7, cap, ink, 0.9)
    elif look.premium_text == "labels" and not (look.centre_star and x == y == 7 * c):
        print_label(grid, PREMIUM_LABELS[look.labels_set][kind].split(), (x + c / 2, y + c / 2),
                    w, look.label_size * c, font, ink)
    if look.stitched is not None:
        _stitch(grid, poly, look.stitched, max(1, c // 30))


def _stitch(grid, poly, colour, thickness):
    """A dotted seam just inside a premium square's edge, as on cloth-like tournament boards."""
    centre = poly.mean(axis=0)
    ring = centre + (poly - centre) * 0.9
    for a, b in zip(ring, np.roll(ring, -1, axis=0), strict=True):
        length = float(np.linalg.norm(b - a))
        for t in np.arange(0.0, length, 4.0 * thickness) / max(length, 1e-6):
            p = a + (b - a) * t
            q = a + (b - a) * min(1.0, t + 2.0 * thickness / max(length, 1e-6))
            cv2.line(grid, (int(p[0]), int(p[1])), (int(q[0]), int(q[1])), colour, thickness)


def _draw_star(img, cx, cy, r, color, points):
    ang = np.linspace(-math.pi / 2, 1.5 * math.pi, 2 * points, endpoint=False)
    rad = np.where(np.arange(2 * points) % 2 == 0, r, r * 0.42)
    poly = np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], 1)
    _fill(img, poly, color)


def _draw_glints(grid, look: Look, c, lw, rng):
    """Short light streaks along the raised grid walls (they catch the light in real photos)."""
    bright = shade(look.cell, 1.0 + 1.6 * look.line_glint)
    for _ in range(int(40 * look.line_glint) + 5):
        horizontal = rng.random() < 0.5
        k = int(rng.integers(1, SIZE))
        a = rng.uniform(0, SIZE * c)
        ln = rng.uniform(0.2, 1.5) * c
        p = k * c + rng.uniform(-lw / 2, lw / 2)
        p0, p1 = ((a, p), (a + ln, p)) if horizontal else ((p, a), (p, a + ln))
        cv2.line(grid, tuple(int(v) for v in p0), tuple(int(v) for v in p1), bright, 1,
                 cv2.LINE_AA)


def _draw_labels(canvas, look: Look, c, m, font):
    cap = c * 0.2
    for i in range(SIZE):
        text_centered(canvas, font, str(i + 1), m + (i + 0.5) * c, m - 0.28 * c, cap,
                      look.labels, 0.7)
        text_centered(canvas, font, COLUMNS[i], m - 0.28 * c, m + (i + 0.5) * c, cap,
                       look.labels, 0.7)


def _add_texture(canvas, amount, rng):
    """Fine print/plastic grain and slight uneven dye over the whole board."""
    h, w = canvas.shape[:2]
    low = smooth_noise(rng, h, w, 6, -amount * 1.5, amount * 1.5)
    add_noise(canvas, amount, rng, low, coarse=2)


# ----------------------------------------------------------------------------- tiles

def _tile_face(ch: str, s: int, look: Look, font: str, rng, grain: np.ndarray | None):
    """Top face of a tile: BGR sprite and alpha, letter and value printed on it."""
    alpha, bevel = _face_shape(s, int(look.tile_radius * s))
    f = np.float32(look.tile_top) * bevel
    if grain is not None:
        y, x = rng.integers(0, grain.shape[0] - s), rng.integers(0, grain.shape[1] - s)
        f *= grain[y: y + s, x: x + s, None]
    if look.tile_gloss > 0:
        g = _gloss(s, rng) * look.tile_gloss * 120
        f += g[..., None]
    face = np.clip(f, 0, 255).astype(np.uint8)
    if ch in "*" or ch.islower():
        if not look.english:
            _draw_asterisk(face, s, look.tile_ink, rng)
    else:
        print_letter(face, ch, s, look, font)
    return face, alpha


@lru_cache(maxsize=64)
def _face_shape(s: int, radius: int) -> tuple[np.ndarray, np.ndarray]:
    """Alpha of a tile top and its bevel shading (the face darkens toward its rounded edge)."""
    alpha = np.zeros((s, s), np.uint8)
    _fill(alpha, _rounded_rect(s - 1, s - 1, radius) + (s - 1) / 2, 255)
    inner = cv2.GaussianBlur(alpha, (0, 0), max(0.6, s * 0.04)).astype(np.float32) / 255
    return alpha, (0.7 + 0.3 * inner)[..., None]


@lru_cache(maxsize=64)
def _gloss_base(s: int, q: int) -> np.ndarray:
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32) / s
    cx, cy = [(0.25, 0.25), (0.75, 0.25), (0.3, 0.7), (0.5, 0.2)][q]
    return np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 0.05)


def _gloss(s, rng):
    return _gloss_base(s, int(rng.integers(0, 4)))


def _draw_asterisk(face, s, color, rng):
    cx, cy = s * rng.uniform(0.45, 0.55), s * rng.uniform(0.45, 0.55)
    if rng.random() < 0.5:
        r, t = s * rng.uniform(0.18, 0.26), max(2, int(s * 0.07))
        for a in (90, 30, 150):
            d = np.float32([math.cos(math.radians(a)), math.sin(math.radians(a))]) * r
            cv2.line(face, (int(cx - d[0]), int(cy - d[1])), (int(cx + d[0]), int(cy + d[1])),
                     color, t, cv2.LINE_AA)
    else:
        _draw_star(face, cx, cy, s * rng.uniform(0.22, 0.3), color, int(rng.choice([5, 6])))


def _grain_texture(rng, size: int, strength: float) -> np.ndarray:
    """Multiplicative wood grain (stripes bent by low-frequency noise) around 1.0."""
    warp = smooth_noise(rng, size, size, 5, 0, 1)
    xx = np.arange(size, dtype=np.float32)[None, :]
    freq = rng.uniform(0.3, 0.8)
    stripes = np.sin(xx * freq + warp * rng.uniform(4, 10))
    fine = smooth_noise(rng, size, size, size // 3, -1, 1)
    g = 1 + strength * (0.6 * stripes + 0.4 * fine)
    if rng.random() < 0.5:
        g = g.T
    return g.astype(np.float32)


def _tile_list(board):
    return [(r, k, board[r][k]) for r in range(SIZE) for k in range(SIZE) if board[r][k] != "."]


def _draw_tiles(canvas, board, look: Look, c, m, cam_xy, cam_z, light, font, rng, scene=None):
    """Tiles with thickness seen from the camera, soft shadows, painted far-to-near. With
    `scene` (a seed) each tile's place and face come from the scene and its cell alone, and
    `rng` is left untouched: a tile looks the same whatever else lies on the board."""
    tiles = _tile_list(board)
    if not tiles:
        return
    s = int(round(look.tile_size * c))
    h = look.tile_height * c
    base = _rounded_rect(s, s, look.tile_radius * s)
    own = [rng if scene is None else np.random.default_rng([scene, r, k]) for r, k, _ in tiles]
    place = []
    for (r, k, ch), draw in zip(tiles, own, strict=True):
        centre = np.float32([m + (k + 0.5) * c, m + (r + 0.5) * c]) + draw.normal(0, 0.03 * c, 2)
        place.append((centre.astype(np.float32), float(np.clip(draw.normal(0, 2.5), -8, 8)), ch))
    _tile_shadows(canvas, place, base, h, light, c)
    grain_rng = rng if scene is None else np.random.default_rng([scene, SIZE])
    grain = _grain_texture(grain_rng, 4 * s, look.tile_grain) if look.tile_grain > 0 else None
    dist = [-float(np.linalg.norm(p[0] - cam_xy)) for p in place]
    faces: dict[str, tuple] = {}
    for i in np.argsort(dist):
        centre, angle, ch = place[i]
        top_shift = (centre - cam_xy) * (h / max(cam_z - h, 1.0))
        foot = base @ _rot(angle).T + centre
        top = foot + top_shift
        hull = cv2.convexHull(np.concatenate([foot, top]).astype(np.float32))[:, 0]
        _fill(canvas, hull, look.tile_side)
        key = ch if grain is None and scene is None else f"{ch}{i}"
        if key not in faces:
            faces[key] = _tile_face(ch, s, look, font, own[i], grain)
        _paste_rotated(canvas, *faces[key], centre + top_shift, angle)


def _tile_shadows(canvas, place, base, h, light, c):
    size = canvas.shape[1], canvas.shape[0]
    mask = np.zeros((size[1] // 2, size[0] // 2), np.uint8)  # half resolution: it is blurred anyway
    for centre, angle, _ in place:
        _fill(mask, (base @ _rot(angle).T + centre + light * h) / 2, 255)
    mask = cv2.resize(cv2.GaussianBlur(mask, (0, 0), max(0.5, 0.06 * c)), size)
    keep = cv2.cvtColor(255 - (mask.astype(np.uint16) * 115 // 255).astype(np.uint8),
                        cv2.COLOR_GRAY2BGR)
    cv2.multiply(canvas, keep, dst=canvas, scale=1 / 255)


def _paste_rotated(dst, face, alpha, centre, angle):
    """The face turned by `angle` and blended in at `centre`, cut where it leaves `dst` (a
    tall tile seen low at the board's edge leans past the board's own picture)."""
    s = face.shape[0]
    half = s * 0.75
    w = int(2 * half) + 2
    left, top = int(centre[0] - half), int(centre[1] - half)
    x0, y0 = max(left, 0), max(top, 0)
    x1, y1 = min(left + w, dst.shape[1]), min(top + w, dst.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    m = cv2.getRotationMatrix2D(((s - 1) / 2, (s - 1) / 2), -angle, 1.0)
    m[:, 2] += (centre[0] - x0 - (s - 1) / 2, centre[1] - y0 - (s - 1) / 2)
    size = (x1 - x0, y1 - y0)
    f = cv2.warpAffine(face, m, size, flags=cv2.INTER_LINEAR)
    a = cv2.warpAffine(alpha, m, size, flags=cv2.INTER_LINEAR).astype(np.float32)[..., None] / 255
    roi = dst[y0:y1, x0:x1].astype(np.float32)
    dst[y0:y1, x0:x1] = (roi * (1 - a) + f.astype(np.float32) * a).astype(np.uint8)


# ----------------------------------------------------------------------------- background & clutter

def table_background(rng, w, h) -> np.ndarray:
    """A table or cloth `w` × `h` px drawn from `rng`: wood, cloth, plain, noise or carpet."""
    kind = rng.choice(["wood", "cloth", "plain", "noise", "carpet"])
    sw, sh = max(8, w // 4), max(8, h // 4)
    base = np.float32(_table_colour(rng, kind))
    if kind == "wood":
        g = _grain_texture(rng, max(sw, sh), rng.uniform(0.05, 0.2))[:sh, :sw]
        small = base * g[..., None]
        planks = int(rng.integers(2, 6))
        for i in range(1, planks):
            x = int(i * sw / planks + rng.normal(0, 3))
            small[:, max(0, x - 1): x + 1] *= 0.7
    elif kind == "noise":
        other = np.float32(_table_colour(rng, "plain"))
        t = smooth_noise(rng, sh, sw, int(rng.integers(3, 16)))
        small = base * t[..., None] + other * (1 - t[..., None])
    else:
        small = np.broadcast_to(base, (sh, sw, 3)).copy()
    shading = smooth_noise(rng, sh, sw, 3, 0.8, 1.15)
    small *= shading[..., None]
    img = cv2.resize(np.clip(small, 0, 255).astype(np.uint8), (w, h),
                     interpolation=cv2.INTER_LINEAR)
    if kind in ("cloth", "carpet"):
        amp = rng.uniform(6, 18) if kind == "carpet" else rng.uniform(2, 6)
        noise = np.empty((h // 2, w // 2), np.int16)
        cv2.randn(noise, 0, amp)
        noise = cv2.resize(noise, (w, h), interpolation=cv2.INTER_NEAREST)
        img = np.clip(img.astype(np.int16) + noise[..., None], 0, 255).astype(np.uint8)
    return img


TABLE_COLOURS = (  # BGR of common tables and cloths; random colours are mixed in too
    (200, 215, 225), (170, 195, 215), (235, 238, 240), (120, 125, 130), (60, 60, 65),
    (90, 120, 150), (150, 160, 165), (205, 225, 240), (40, 55, 75), (110, 140, 120),
)


def _table_colour(rng, kind):
    if kind == "wood":
        wood = [(120, 170, 210), (60, 100, 150), (150, 190, 215), (40, 70, 110), (175, 200, 220)]
        return tuple(np.float32(wood[int(rng.integers(len(wood)))]) * rng.uniform(0.8, 1.15))
    if rng.random() < 0.25:
        return tuple(rng.uniform(30, 240, 3))
    base = np.float32(TABLE_COLOURS[int(rng.integers(len(TABLE_COLOURS)))])
    return tuple(np.clip(base * rng.uniform(0.8, 1.1) + rng.normal(0, 8, 3), 0, 255))


def _warp_into(dst, sprite, alpha, hm, shadow=0.0, rng=None):
    """Warp sprite (BGR + alpha) by hm into dst, touching only the projected bounding box."""
    sh, sw = sprite.shape[:2]
    quad = project(hm, np.float64([[0, 0], [sw, 0], [sw, sh], [0, sh]]))
    x0, y0 = np.floor(quad.min(0)).astype(int)
    x1, y1 = np.ceil(quad.max(0)).astype(int)
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, dst.shape[1]), min(y1, dst.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    t = np.float64([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]]) @ hm
    size = (x1 - x0, y1 - y0)
    f = cv2.warpPerspective(sprite, t, size, flags=cv2.INTER_LINEAR)
    a = cv2.warpPerspective(alpha, t, size, flags=cv2.INTER_LINEAR)
    roi = dst[y0:y1, x0:x1]
    if shadow > 0:
        keep = cv2.cvtColor(255 - _soft_shadow(a, shadow, rng), cv2.COLOR_GRAY2BGR)
        cv2.multiply(roi, keep, dst=roi, scale=1 / 255)
    af = a.astype(np.float32) / 255
    dst[y0:y1, x0:x1] = cv2.blendLinear(f, roi, af, 1 - af)


def _warp_folded(dst, canvas, alpha, cam: Camera, fold: float, to_units, hinge_row: float, rng):
    """The board canvas warped in two halves that meet at the hinge (canvas row `hinge_row`):
    the near half as it lies, casting the board's shadow, the far half turned `fold` degrees.
    They overlap by a row, so no seam shows."""
    split = int(round(hinge_row))
    near, far = alpha.copy(), alpha.copy()
    near[split + 1:] = 0
    far[:split - 1] = 0
    _warp_into(dst, canvas, near, cam.h_units @ to_units, rng.uniform(0.2, 0.6), rng)
    _warp_into(dst, canvas, far, cam.folded(fold) @ to_units)


def _soft_shadow(a, strength, rng):
    """Blurred, shifted copy of an alpha footprint: the object's shadow on the table."""
    h, w = a.shape
    k = max(2.0, max(h, w) * 0.012)
    small = cv2.resize(a, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), k / 4)
    dx, dy = rng.normal(0, k / 4, 2)
    small = cv2.warpAffine(small, np.float32([[1, 0, dx], [0, 1, dy]]), small.shape[::-1])
    small = cv2.convertScaleAbs(small, alpha=strength)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _clutter_objects(img, cam: Camera, look: Look, extent, c, font, rng):
    """Racks and loose tiles on the table plane, outside the board."""
    letters = "ABCDEFGHIJKLMNOPRSTUW" if look.english else "АБВГДЕЖЗИЙКЛМНОПРСТУФЯ"
    for _ in range(int(rng.integers(0, 4))):
        pos = _outside_spot(rng, extent, 2.0)
        if rng.random() < 0.5:
            sprite, alpha = _rack_sprite(look, c, font, letters, rng)
        else:
            s = int(look.tile_size * c)
            sprite, alpha = _tile_face(str(rng.choice(list(letters))), s, look, font, rng, None)
            if rng.random() < 0.3:  # face down
                sprite = np.full_like(sprite, look.tile_top)
        angle = rng.uniform(0, 360)
        hm = cam.h_units @ _place(pos, angle, sprite.shape[1], sprite.shape[0], c)
        _warp_into(img, sprite, alpha, hm, rng.uniform(0.3, 0.6), rng)


def _place(pos, angle, sw, sh, c):
    """Sprite pixels -> board units: centred at pos, turned by angle."""
    a = math.radians(angle)
    ca, sa = math.cos(a) / c, math.sin(a) / c
    return np.float64([[ca, -sa, pos[0] - ca * sw / 2 + sa * sh / 2],
                       [sa, ca, pos[1] - sa * sw / 2 - ca * sh / 2], [0, 0, 1]])


def _outside_spot(rng, extent, reach):
    side = rng.integers(0, 4)
    along = rng.uniform(7.5 - extent, 7.5 + extent)
    away = 7.5 + extent + rng.uniform(0.8, reach + 0.8)
    if side == 0:
        return np.float64([along, 15 - away])
    if side == 1:
        return np.float64([along, away])
    if side == 2:
        return np.float64([15 - away, along])
    return np.float64([away, along])


def _rack_sprite(look: Look, c, font, letters, rng):
    n = int(rng.integers(3, 9))
    s = int(look.tile_size * c)
    w, h = int(n * s * 1.05 + 0.4 * s), int(s * 1.5)
    wood = np.float32(rng.choice([(60, 110, 170), (30, 40, 50), (200, 120, 30), (120, 160, 200)]))
    sprite = np.empty((h, w, 3), np.uint8)
    sprite[:] = np.clip(wood * rng.uniform(0.7, 1.2), 0, 255)
    sprite[int(h * 0.75):] = shade(tuple(int(v) for v in sprite[0, 0]), 0.7)
    for i in range(n):
        face, a = _tile_face(str(rng.choice(list(letters))), s, look, font, rng, None)
        x = int(0.2 * s + i * s * 1.05)
        roi = sprite[int(0.1 * s): int(0.1 * s) + s, x: x + s].astype(np.float32)
        af = a.astype(np.float32)[..., None] / 255
        blended = (roi * (1 - af) + face * af).astype(np.uint8)
        sprite[int(0.1 * s): int(0.1 * s) + s, x: x + s] = blended
    return sprite, np.full((h, w), 255, np.uint8)


def _cups_and_hand(img, grid_quad, rng):
    """Image-space blobs: cups and a hand at an edge, kept off the playing grid."""
    h, w = img.shape[:2]
    grid_mask = np.zeros((h // 8 + 1, w // 8 + 1), np.uint8)
    cv2.fillConvexPoly(grid_mask, np.int32(grid_quad / 8), 1)
    for _ in range(int(rng.integers(0, 3))):
        r = rng.uniform(0.05, 0.12) * min(w, h)
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        if _hits(grid_mask, cx, cy, r * 1.3):
            continue
        col = tuple(float(v) for v in rng.uniform(20, 240, 3))
        ax = (int(r), int(r * rng.uniform(0.6, 1.0)))
        ang = rng.uniform(0, 180)
        cv2.ellipse(img, (int(cx + r * 0.25), int(cy + r * 0.25)), ax, ang, 0, 360, (20, 20, 20),
                    -1, cv2.LINE_AA)
        cv2.ellipse(img, (int(cx), int(cy)), ax, ang, 0, 360, col, -1, cv2.LINE_AA)
        inner = (int(ax[0] * 0.82), int(ax[1] * 0.82))
        cv2.ellipse(img, (int(cx), int(cy)), inner, ang, 0, 360, shade(col, 0.5), -1, cv2.LINE_AA)
    if rng.random() < 0.3:
        _hand(img, grid_mask, rng)


def _hits(grid_mask, cx, cy, r):
    m = np.zeros_like(grid_mask)
    cv2.circle(m, (int(cx / 8), int(cy / 8)), max(1, int(r / 8)), 1, -1)
    return bool((m & grid_mask).any())


def _hand(img, grid_mask, rng):
    h, w = img.shape[:2]
    skin = np.float32([rng.uniform(90, 150), rng.uniform(130, 180), rng.uniform(180, 235)])
    r = rng.uniform(0.08, 0.14) * min(w, h)
    side = rng.integers(0, 4)
    t = rng.uniform(0.1, 0.9)
    cx, cy, ang = [(t * w, h, -90), (t * w, 0, 90), (0, t * h, 0), (w, t * h, 180)][side]
    d = np.float32([math.cos(math.radians(ang)), math.sin(math.radians(ang))])
    palm = np.float32([cx, cy]) + d * r * 0.6
    if _hits(grid_mask, *(palm + d * r * 1.6), r):
        return
    q = 4  # draw at quarter resolution: the hand is a soft blob anyway
    mask = np.zeros((h // q + 1, w // q + 1), np.uint8)
    pq, rq = palm / q, r / q
    cv2.ellipse(mask, (int(pq[0]), int(pq[1])), (int(rq * 1.1), int(rq * 0.9)), ang, 0, 360,
                255, -1)
    perp = np.float32([-d[1], d[0]])
    for i, ln in enumerate((1.5, 1.8, 1.7, 1.3)):
        base = pq + perp * (i - 1.5) * rq * 0.45 + d * rq * 0.5
        tip = base + d * rq * ln * rng.uniform(0.8, 1.1)
        cv2.line(mask, tuple(int(v) for v in base), tuple(int(v) for v in tip), 255,
                 max(1, int(rq * 0.36)))
        cv2.circle(mask, tuple(int(v) for v in tip), max(1, int(rq * 0.18)), 255, -1)
    light = cv2.GaussianBlur(mask, (0, 0), rq * 0.3 + 1).astype(np.float32) / 255
    mask = cv2.resize(cv2.GaussianBlur(mask, (0, 0), 0.8), (w, h), interpolation=cv2.INTER_LINEAR)
    light = cv2.resize(light, (w, h), interpolation=cv2.INTER_LINEAR)
    col = np.empty_like(img)
    col[:] = skin.astype(np.uint8)
    lit = cv2.cvtColor(cv2.convertScaleAbs(light, alpha=102, beta=153), cv2.COLOR_GRAY2BGR)
    col = cv2.multiply(col, lit, scale=1 / 255)
    a = mask.astype(np.float32) / 255
    img[:] = cv2.blendLinear(col, img, a, 1 - a)


# ----------------------------------------------------------------------------- entry point

def _check_board(board, name):
    if len(board) != SIZE or any(len(row) != SIZE for row in board):
        raise ValueError(f"{name} must be {SIZE} strings of {SIZE} characters")


def _pick_size(rng) -> tuple[int, int]:
    long_side = int(rng.integers(1280, 2001))
    short = int(long_side * rng.uniform(0.56, 0.75))
    short = max(720, min(short, 1500))
    return (long_side, short) if rng.random() < 0.5 else (short, long_side)


def render_photo(board, *, seed: int, style: str | None = None, layout: list[str] | None = None,
                 fonts: str = "train", size: tuple[int, int] | None = None, clutter: bool = True,
                 pose: str = "any", box_seed: int | None = None, variety: bool = False,
                 fold: float = 0.0, quality: tuple[int, int] | None = None,
                 scene: bool = False) -> Shot:
    """A synthetic phone photo of `board` (15 rows of board text) with exact ground truth.

    `box_seed` fixes the box (font and jittered look) apart from the photo, so several photos
    can show one physical box, as calibration needs; None draws the box from `seed` too.
    `variety` also draws a random GlyphStyle for the box (bolder, thinner, condensed or
    slanted letters, values closer or lower): training data only.
    `scene` draws the tiles apart from the rest of the photo: photos of one board with the
    same `seed` differ only where their tiles differ (the frames of a video of one game).
    `fold` turns the board's far half that many degrees up about the hinge along the middle of
    its centre row (row 8), as a folding board that does not lie flat shows it (negative:
    down, a ridge); `corners` then are the grid's true corners, of two planes.
    `quality` is the JPEG quality's range (both ends included; None: 45-95).

    >>> shot = render_photo(board, seed=3, style="erudit-black", pose="frontal")
    >>> cv2.imwrite("x.jpg", shot.image)
    """
    board = list(board)
    _check_board(board, "board")
    if pose not in POSES:
        raise ValueError(f"unknown pose {pose!r}")
    rng = np.random.default_rng(seed)
    style = style or STYLES[int(rng.integers(len(STYLES)))]
    if style not in ALL_STYLES:
        raise ValueError(f"unknown style {style!r}; one of {ALL_STYLES}")
    layout = list(layout) if layout is not None else default_layout(style)
    _check_board(layout, "layout")
    pool = font_paths(fonts)
    if not pool:
        raise RuntimeError(f"no usable fonts in split {fonts!r}")
    box_rng = rng if box_seed is None else np.random.default_rng(box_seed)
    font = pool[int(box_rng.integers(len(pool)))]
    look = sample_look(style, box_rng)
    if variety:  # own random stream: the rest of the photo is the same as without variety
        box = seed if box_seed is None else box_seed
        look.extras["glyph"] = sample_glyph_style(np.random.default_rng([box, 0x61F]))
    w, h = size or _pick_size(rng)
    extent = 7.5 + look.margin + look.frame_width
    cam = sample_camera(rng, pose, extent, w, h)
    corners = project(cam.h_units, np.float64([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]]))
    if fold:
        corners[2:] = project(cam.folded(fold), np.float64([[SIZE, SIZE], [0, SIZE]]))
    cell_px = float(np.linalg.norm(corners[1] - corners[0])
                    + np.linalg.norm(corners[2] - corners[3])) / (2 * SIZE)
    c = int(np.clip(cell_px * rng.uniform(1.0, 1.25), 40, 90))

    canvas, alpha, m = _board_canvas(look, layout, c, font, rng)
    light = rng.normal(0, 0.4, 2).astype(np.float32) + np.float32([0.3, 0.4])
    _draw_tiles(canvas, board, look, c, m, (cam.ground + m / c) * c, cam.height * c, light, font,
                rng, seed if scene else None)

    img = table_background(rng, w, h)
    # canvas pixel centres are integers, so the grid's outer edge lies at m - 0.5
    to_units = np.float64([[1 / c, 0, (0.5 - m) / c], [0, 1 / c, (0.5 - m) / c], [0, 0, 1]])
    if clutter:
        _clutter_objects(img, cam, look, extent, c, font, rng)
    if fold:
        _warp_folded(img, canvas, alpha, cam, fold, to_units, m - 0.5 + SIZE / 2 * c, rng)
    else:
        _warp_into(img, canvas, alpha, cam.h_units @ to_units, rng.uniform(0.2, 0.6), rng)
    if clutter:
        _cups_and_hand(img, corners, rng)
    img = photo_effects(img, rng, quality)
    corners = corners.astype(np.float32)
    return Shot(img, corners, orientation(corners), board, layout, style, font, look)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Render a synthetic photo of a board text file.")
    ap.add_argument("board")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--style", choices=ALL_STYLES)
    ap.add_argument("--pose", choices=POSES, default="any")
    ap.add_argument("--fonts", choices=("train", "heldout", "all"), default="train")
    args = ap.parse_args(argv)
    board = Path(args.board).read_text(encoding="utf-8").split()
    shot = render_photo(board, seed=args.seed, style=args.style, pose=args.pose, fonts=args.fonts)
    cv2.imwrite(args.out, shot.image)
    print(f"{args.out}: style={shot.style} orientation={shot.orientation} "
          f"corners={np.round(shot.corners, 1).tolist()}")


if __name__ == "__main__":
    main()
