"""Synthetic photos of a game board, with exact ground truth, for training and tests.

The board is drawn upright at a cell size of ~40-90 px (grid, premium squares, tiles with a
visible thickness and shadows), then warped by a camera homography onto a table background
with clutter, and degraded like a phone photo (light, white balance, blur, noise, JPEG).

    >>> shot = render_photo(["." * 15] * 7 + ["...КОТ........."] + ["." * 15] * 7, seed=1)
    >>> shot.image.shape, shot.corners  # BGR photo, grid corners in board order
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from engine.board import COLUMNS
from engine.ruleset import SIZE
from synth.styles import (
    ANY_STYLES,
    CALIBRATION_STYLES,
    PREMIUM_FACTORS,
    PREMIUM_WORDS,
    STYLES,
    TILE_VALUES,
    Look,
    default_layout,
    sample_look,
    shade,
)

__all__ = ["Shot", "render_photo", "table_background", "STYLES", "CALIBRATION_STYLES",
           "ANY_STYLES", "font_paths"]
ALL_STYLES = STYLES + CALIBRATION_STYLES + ANY_STYLES

FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts")
NEEDED_GLYPHS = "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
HELDOUT_SHARE = 0.15  # fraction of font files kept away from training
GLYPH_BASE = 96       # font size at which glyph bitmaps are rasterised before scaling
VALUE_CLEARANCE = 0.03  # of a tile: the least gap between a letter and its value in the corner
SHRINK_STEP = 0.95     # the letter's size kept at each step it takes to clear the value ...
CLEAR_STEP = 0.015     # ... and how far (of a tile) it moves up and left at each
MAX_SHRINKS = 6        # at most this many steps (0.74 of its size, 0.09 of a tile away)


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


# ----------------------------------------------------------------------------- fonts

def _font_files() -> list[str]:
    files = []
    for d in FONT_DIRS:
        root = Path(os.path.expanduser(d))
        if root.is_dir():
            files += _fonts_below(root)
    return sorted(set(files))


def _fonts_below(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.suffix.lower() in (".ttf", ".otf")]


def _has_glyphs(path: str) -> bool:
    """True if the font draws every needed glyph (not its .notdef box, not blank)."""
    try:
        font = ImageFont.truetype(path, 24)
        notdef = font.getmask("\U0010fffd")
    except OSError:
        return False
    notdef_bytes, notdef_size = bytes(notdef), notdef.size
    for ch in NEEDED_GLYPHS:
        mask = font.getmask(ch)
        if mask.getbbox() is None or (mask.size == notdef_size and bytes(mask) == notdef_bytes):
            return False
    return True


def _family(path: str) -> str:
    stem = Path(path).stem.split("-")[0]
    return re.sub(r"(Bold|Oblique|Italic|\d\dF)+$", "", stem) or stem


@lru_cache(maxsize=1)
def _font_split() -> dict[str, list[str]]:
    usable = [p for p in _font_files() if _has_glyphs(p)]
    families: dict[str, list[str]] = {}
    for p in usable:
        families.setdefault(_family(p), []).append(p)
    # Whole families are held out, picked in a fixed hash order, so a held-out font is unseen.
    order = sorted(families, key=lambda f: hashlib.md5(f.encode()).hexdigest())
    held: list[str] = []
    for fam in order:
        if len(held) >= HELDOUT_SHARE * len(usable) * 0.85:
            break
        if len(held) + len(families[fam]) <= HELDOUT_SHARE * len(usable) * 1.2:
            held += families[fam]
    train = [p for p in usable if p not in set(held)]
    return {"train": train, "heldout": sorted(held), "all": usable}


def font_paths(split: str = "train") -> list[str]:
    """Font files (with Cyrillic, Latin and digits) in the split "train", "heldout" or "all"."""
    if split not in ("train", "heldout", "all"):
        raise ValueError(f"unknown font split {split!r}")
    return list(_font_split()[split])


@lru_cache(maxsize=256)
def _pil_font(path: str) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, GLYPH_BASE)


@lru_cache(maxsize=256)
def _cap_height(path: str) -> float:
    box = _pil_font(path).getbbox("H", anchor="ls")
    return float(box[3] - box[1])


@lru_cache(maxsize=16384)
def _raster(path: str, text: str) -> tuple[np.ndarray, int, int]:
    """Ink bitmap of text at GLYPH_BASE and its offset from the pen (left, baseline)."""
    font = _pil_font(path)
    x0, y0, x1, y1 = font.getbbox(text, anchor="ls")
    img = Image.new("L", (x1 - x0 + 4, y1 - y0 + 4))
    ImageDraw.Draw(img).text((2 - x0, 2 - y0), text, font=font, fill=255, anchor="ls")
    arr = np.asarray(img)
    ys, xs = np.nonzero(arr)
    if len(xs) == 0:
        return np.zeros((1, 1), np.uint8), 0, 0
    arr = arr[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]
    return arr, int(xs.min() - 2 + x0), int(ys.min() - 2 + y0)


@lru_cache(maxsize=20000)
def _glyph(path: str, text: str, cap_px: int, form: tuple = (0, 1.0, 0.0)) -> tuple[np.ndarray, float, float]:
    """Ink mask of text scaled so a capital is cap_px tall, with its pen offset.

    `form` = (weight px at GLYPH_BASE, horizontal stretch, italic shear) of a GlyphStyle.
    """
    arr, dx, dy = _raster(path, text) if form == (0, 1.0, 0.0) else _formed_raster(path, text, form)
    k = cap_px / _cap_height(path)
    w, h = max(1, round(arr.shape[1] * k)), max(1, round(arr.shape[0] * k))
    return cv2.resize(arr, (w, h), interpolation=cv2.INTER_AREA), dx * k, dy * k


@lru_cache(maxsize=4096)
def _formed_raster(path: str, text: str, form: tuple) -> tuple[np.ndarray, int, int]:
    """_raster made bolder or thinner, condensed or widened and slanted: unseen fonts differ
    from the training ones mostly in these ways."""
    arr, dx, dy = _raster(path, text)
    weight, stretch, shear = form
    if weight < 0:  # thinning must not break the strokes: keep at least 2 px of half-stroke
        half = cv2.distanceTransform((arr > 127).astype(np.uint8), cv2.DIST_L2, 3).max()
        weight = -min(-weight, max(0, int(half) - 2))
    pad = abs(weight) + 2
    arr = cv2.copyMakeBorder(arr, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    if weight:
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * abs(weight) + 1,) * 2)
        arr = (cv2.dilate if weight > 0 else cv2.erode)(arr, kernel)
    h, w = arr.shape
    extra = int(math.ceil(abs(shear) * h))
    # x' = stretch·x + shear·(h − y): the top leans right for a positive shear, baseline fixed
    m = np.float32([[stretch, -shear, shear * h + (extra if shear < 0 else 0)], [0, 1, 0]])
    arr = cv2.warpAffine(arr, m, (int(math.ceil(w * stretch)) + extra, h), flags=cv2.INTER_LINEAR)
    ys, xs = np.nonzero(arr)
    if len(xs) == 0:
        return np.zeros((1, 1), np.uint8), 0, 0
    arr = arr[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]
    return arr, int(round(dx * stretch)), dy - pad + int(ys.min())


def _stamp(dst: np.ndarray, mask: np.ndarray, x: float, y: float, color, alpha=1.0):
    """Alpha-blend a solid colour through mask onto dst with mask's top-left at (x, y)."""
    x, y = int(round(x)), int(round(y))
    h, w = mask.shape
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, dst.shape[1]), min(y + h, dst.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    a = mask[y0 - y: y1 - y, x0 - x: x1 - x].astype(np.float32)[..., None] * (alpha / 255.0)
    roi = dst[y0:y1, x0:x1].astype(np.float32)
    dst[y0:y1, x0:x1] = (roi * (1 - a) + np.float32(color) * a).astype(np.uint8)


def _text_centered(dst, path, text, cx, cy, cap_px, color, alpha=1.0):
    mask, _, _ = _glyph(path, text, max(3, int(cap_px)))
    _stamp(dst, mask, cx - mask.shape[1] / 2, cy - mask.shape[0] / 2, color, alpha)


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


def _smooth_noise(rng, h, w, cells, lo=0.0, hi=1.0):
    """Low-frequency noise field in [lo, hi] of size (h, w) from a cells x cells random grid."""
    gh, gw = max(2, int(cells * h / max(h, w)) + 2), max(2, int(cells * w / max(h, w)) + 2)
    g = rng.random((gh, gw)).astype(np.float32)
    return lo + (hi - lo) * cv2.resize(g, (w, h), interpolation=cv2.INTER_CUBIC).clip(0, 1)


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
        _text_centered(grid, font, PREMIUM_FACTORS[kind], cx, cy, cap, ink, 0.85)
    elif look.premium_text == "words":
        words = PREMIUM_WORDS["en" if look.english else "ru"][kind].split()
        if not words:
            return
        cap = c * 0.1
        y0 = y + c / 2 - (len(words) - 1) * cap * 0.85
        for i, wd in enumerate(words):
            _text_centered(grid, font, wd, x + c / 2, y0 + i * cap * 1.7, cap, ink, 0.9)


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
        _text_centered(canvas, font, str(i + 1), m + (i + 0.5) * c, m - 0.28 * c, cap, look.labels, 0.7)
        _text_centered(canvas, font, COLUMNS[i], m - 0.28 * c, m + (i + 0.5) * c, cap,
                       look.labels, 0.7)


def _add_texture(canvas, amount, rng):
    """Fine print/plastic grain and slight uneven dye over the whole board."""
    h, w = canvas.shape[:2]
    low = _smooth_noise(rng, h, w, 6, -amount * 1.5, amount * 1.5)
    _add_noise(canvas, amount, rng, low, coarse=2)


def _add_noise(img, sigma, rng, offset=None, coarse=1):
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
        _print_letter(face, ch, s, look, font)
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


def _print_letter(face, ch, s, look: Look, font):
    g = look.extras.get("glyph", PLAIN_GLYPHS)
    cap = max(4, int(look.letter_size * s))
    value = str(TILE_VALUES.get(ch, 0))
    vcap = max(3, int(look.value_size * g.value_scale * s))
    mask, _, dy = _glyph(font, ch, cap, g.form)
    vmask, _, vdy = _glyph(font, value, vcap, g.form)
    gap = s * g.value_gap
    room = s * (0.9 if look.value_near else 0.72)
    need = mask.shape[1] + (gap + vmask.shape[1] if look.value_near else 0)
    if need > room:  # wide letter (Ж, Ш, Ю, W) or "10": shrink to stay on the tile
        k = room / need
        cap, vcap = max(4, int(cap * k)), max(3, int(vcap * max(k, 0.8)))
        mask, _, dy = _glyph(font, ch, cap, g.form)
        vmask, _, vdy = _glyph(font, value, vcap, g.form)
    base_y = s / 2 + cap / 2 + g.shift[1] * s  # baseline that centres a capital vertically
    if look.value_near:
        x = max(s * 0.04, (s - mask.shape[1] - gap - vmask.shape[1]) / 2 + g.shift[0] * s)
        _stamp(face, mask, x, base_y + dy, look.tile_ink)
        _stamp(face, vmask, x + mask.shape[1] + gap, base_y + s * g.value_drop + vdy, look.tile_ink)
        return
    # the value in the corner: a printer keeps it off the letter (a "10" under Ш's right stem
    # reads as Щ's tail), so the letter moves up and left, a little smaller, until it is clear
    value_at = (s * 0.92 - vmask.shape[1], s * 0.9 + vdy)
    value_ink = _ink(s, vmask, value_at)
    for step in range(MAX_SHRINKS + 1):
        away = step * CLEAR_STEP * s
        at = ((s - mask.shape[1]) / 2 - s * 0.04 + g.shift[0] * s - away,
              base_y - s * 0.03 + dy - away)
        if step == MAX_SHRINKS or not _touching(_ink(s, mask, at), value_ink, VALUE_CLEARANCE * s):
            break
        cap = max(4, int(cap * SHRINK_STEP))
        mask, _, dy = _glyph(font, ch, cap, g.form)
        base_y = s / 2 + cap / 2 + g.shift[1] * s
    _stamp(face, mask, *at, look.tile_ink)
    _stamp(face, vmask, *value_at, look.tile_ink)


def _ink(s: int, mask: np.ndarray, at) -> np.ndarray:
    """Where a glyph mask stamped at `at` inks an s×s face (0/1)."""
    face = np.zeros((s, s, 1), np.uint8)
    _stamp(face, mask, *at, 255)
    return (face[..., 0] > 100).astype(np.uint8)


def _touching(ink: np.ndarray, other: np.ndarray, clearance: float) -> bool:
    """Whether two inks of one face come closer than `clearance` px."""
    reach = 2 * max(1, round(clearance)) + 1
    return bool((cv2.dilate(ink, np.ones((reach, reach), np.uint8)) & other).any())


@dataclass(frozen=True)
class GlyphStyle:
    """How a box's printer drew its tiles' letters and values beyond the font itself."""

    form: tuple = (0, 1.0, 0.0)  # (weight px at GLYPH_BASE, horizontal stretch, italic shear)
    shift: tuple = (0.0, 0.0)     # letter moved off the tile's centre, fraction of the tile
    value_gap: float = 0.03       # gap between letter and value (value beside the letter)
    value_drop: float = 0.04      # value baseline below the letter's
    value_scale: float = 1.0      # value size relative to the look's


PLAIN_GLYPHS = GlyphStyle()


def sample_glyph_style(rng: np.random.Generator) -> GlyphStyle:
    """A random GlyphStyle for training variety; one box in five keeps the font as it is."""
    if rng.random() < 0.2:
        return PLAIN_GLYPHS
    weight = int(rng.choice([-2, -1, 0, 1, 1, 2, 2, 3, 4]))
    stretch = round(float(np.exp(rng.uniform(-0.22, 0.18))) * 20) / 20
    shear = round(float(rng.uniform(-0.08, 0.25)) * 20) / 20 if rng.random() < 0.3 else 0.0
    return GlyphStyle(form=(weight, stretch, shear),
                      shift=tuple(float(v) for v in rng.uniform(-0.05, 0.05, 2)),
                      value_gap=float(rng.uniform(-0.01, 0.05)),
                      value_drop=float(rng.uniform(-0.01, 0.06)),
                      value_scale=float(rng.uniform(0.8, 1.2)))


def _grain_texture(rng, size: int, strength: float) -> np.ndarray:
    """Multiplicative wood grain (stripes bent by low-frequency noise) around 1.0."""
    warp = _smooth_noise(rng, size, size, 5, 0, 1)
    xx = np.arange(size, dtype=np.float32)[None, :]
    freq = rng.uniform(0.3, 0.8)
    stripes = np.sin(xx * freq + warp * rng.uniform(4, 10))
    fine = _smooth_noise(rng, size, size, size // 3, -1, 1)
    g = 1 + strength * (0.6 * stripes + 0.4 * fine)
    if rng.random() < 0.5:
        g = g.T
    return g.astype(np.float32)


def _tile_list(board):
    return [(r, k, board[r][k]) for r in range(SIZE) for k in range(SIZE) if board[r][k] != "."]


def _draw_tiles(canvas, board, look: Look, c, m, cam_xy, cam_z, light, font, rng):
    """Tiles with thickness seen from the camera, soft shadows, painted far-to-near."""
    tiles = _tile_list(board)
    if not tiles:
        return
    s = int(round(look.tile_size * c))
    h = look.tile_height * c
    base = _rounded_rect(s, s, look.tile_radius * s)
    place = []
    for r, k, ch in tiles:
        centre = np.float32([m + (k + 0.5) * c, m + (r + 0.5) * c]) + rng.normal(0, 0.03 * c, 2)
        place.append((centre.astype(np.float32), float(np.clip(rng.normal(0, 2.5), -8, 8)), ch))
    _tile_shadows(canvas, place, base, h, light, c)
    grain = _grain_texture(rng, 4 * s, look.tile_grain) if look.tile_grain > 0 else None
    dist = [-float(np.linalg.norm(p[0] - cam_xy)) for p in place]
    faces: dict[str, tuple] = {}
    for i in np.argsort(dist):
        centre, angle, ch = place[i]
        top_shift = (centre - cam_xy) * (h / max(cam_z - h, 1.0))
        foot = base @ _rot(angle).T + centre
        top = foot + top_shift
        hull = cv2.convexHull(np.concatenate([foot, top]).astype(np.float32))[:, 0]
        _fill(canvas, hull, look.tile_side)
        key = ch if grain is None else f"{ch}{i}"
        if key not in faces:
            faces[key] = _tile_face(ch, s, look, font, rng, grain)
        _paste_rotated(canvas, *faces[key], centre + top_shift, angle)


def _tile_shadows(canvas, place, base, h, light, c):
    size = canvas.shape[1], canvas.shape[0]
    mask = np.zeros((size[1] // 2, size[0] // 2), np.uint8)  # half resolution: it is blurred anyway
    for centre, angle, _ in place:
        _fill(mask, (base @ _rot(angle).T + centre + light * h) / 2, 255)
    mask = cv2.resize(cv2.GaussianBlur(mask, (0, 0), max(0.5, 0.06 * c)), size)
    keep = cv2.cvtColor(255 - (mask.astype(np.uint16) * 115 // 255).astype(np.uint8), cv2.COLOR_GRAY2BGR)
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


# ----------------------------------------------------------------------------- camera

@dataclass
class _Camera:
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


def _sample_camera(rng, pose: str, extent: float, w: int, h: int) -> _Camera:
    """A camera looking at the board; extent = half size of the board incl. margin (units)."""
    if pose == "frontal":
        tilt, dist = rng.uniform(0, 7), rng.uniform(2.2, 3.5)
        roll = rng.normal(0, 1.5)
    elif pose == "seated":  # a player photographing the board from their chair
        tilt, dist = rng.uniform(50, 62), rng.uniform(1.3, 2.5)
        roll = rng.normal(0, 8)
    else:
        tilt, dist = min(abs(rng.normal(0, 22)), 46), rng.uniform(1.3, 3.0)
        roll = rng.uniform(0, 360) if rng.random() < 0.6 else rng.choice([0, 90, 180, 270]) + rng.normal(0, 6)
    azim = rng.uniform(0, 2 * math.pi)
    target = np.float64([7.5, 7.5, 0]) + np.r_[rng.normal(0, 0.5, 2), 0]
    d = dist * 2 * extent
    t = math.radians(tilt)
    centre = target + d * np.float64([math.sin(t) * math.cos(azim), math.sin(t) * math.sin(azim), -math.cos(t)])
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
    return _Camera(frame, centre[:2].astype(np.float32), float(-centre[2]), fitted @ -rot[:, 2])


def _project(hm, pts):
    p = np.c_[pts, np.ones(len(pts))] @ hm.T
    return p[:, :2] / p[:, 2:3]


def _fit_frame(h0, rng, pose, extent, w, h):
    """Scale and shift the projection so the board sits in the frame as a photographer would."""
    grid = np.float64([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]])
    outer = np.float64([[7.5 - extent, 7.5 - extent], [7.5 + extent, 7.5 - extent],
                        [7.5 + extent, 7.5 + extent], [7.5 - extent, 7.5 + extent]])
    po, pg = _project(h0, outer), _project(h0, grid)
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
    return np.float64([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]]) @ np.diag([scale, scale, 1]) @ h0


def _fit_frame_scaled(h0, scale, w, h, rng):
    pg = _project(h0, np.float64([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]])) * scale
    lo, hi = pg.min(0), pg.max(0)
    room = np.maximum(np.float64([w, h]) - (hi - lo) - 4, 0)
    shift = 2 - lo + rng.random(2) * room
    return np.float64([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]]) @ np.diag([scale, scale, 1]) @ h0


def _orientation(corners: np.ndarray) -> int:
    v = corners[1] - corners[0]
    ang = math.degrees(math.atan2(v[1], v[0]))  # image y points down: positive = clockwise
    return int(round(ang / 90.0)) % 4 * 90


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
        t = _smooth_noise(rng, sh, sw, int(rng.integers(3, 16)))
        small = base * t[..., None] + other * (1 - t[..., None])
    else:
        small = np.broadcast_to(base, (sh, sw, 3)).copy()
    shading = _smooth_noise(rng, sh, sw, 3, 0.8, 1.15)
    small *= shading[..., None]
    img = cv2.resize(np.clip(small, 0, 255).astype(np.uint8), (w, h), interpolation=cv2.INTER_LINEAR)
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
    quad = _project(hm, np.float64([[0, 0], [sw, 0], [sw, sh], [0, sh]]))
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


def _warp_folded(dst, canvas, alpha, cam: _Camera, fold: float, to_units, hinge_row: float, rng):
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


def _clutter_objects(img, cam: _Camera, look: Look, extent, c, font, rng):
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
        sprite[int(0.1 * s): int(0.1 * s) + s, x: x + s] = (roi * (1 - af) + face * af).astype(np.uint8)
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
        cv2.ellipse(img, (int(cx + r * 0.25), int(cy + r * 0.25)), ax, ang, 0, 360, (20, 20, 20), -1, cv2.LINE_AA)
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
    cv2.ellipse(mask, (int(pq[0]), int(pq[1])), (int(rq * 1.1), int(rq * 0.9)), ang, 0, 360, 255, -1)
    perp = np.float32([-d[1], d[0]])
    for i, ln in enumerate((1.5, 1.8, 1.7, 1.3)):
        base = pq + perp * (i - 1.5) * rq * 0.45 + d * rq * 0.5
        tip = base + d * rq * ln * rng.uniform(0.8, 1.1)
        cv2.line(mask, tuple(int(v) for v in base), tuple(int(v) for v in tip), 255, max(1, int(rq * 0.36)))
        cv2.circle(mask, tuple(int(v) for v in tip), max(1, int(rq * 0.18)), 255, -1)
    light = cv2.GaussianBlur(mask, (0, 0), rq * 0.3 + 1).astype(np.float32) / 255
    mask = cv2.resize(cv2.GaussianBlur(mask, (0, 0), 0.8), (w, h), interpolation=cv2.INTER_LINEAR)
    light = cv2.resize(light, (w, h), interpolation=cv2.INTER_LINEAR)
    col = np.empty_like(img)
    col[:] = skin.astype(np.uint8)
    col = cv2.multiply(col, cv2.cvtColor(cv2.convertScaleAbs(light, alpha=102, beta=153), cv2.COLOR_GRAY2BGR), scale=1 / 255)
    a = mask.astype(np.float32) / 255
    img[:] = cv2.blendLinear(col, img, a, 1 - a)


# ----------------------------------------------------------------------------- photo effects

def _photo_effects(img, rng) -> np.ndarray:
    h, w = img.shape[:2]
    sh, sw = max(8, h // 8), max(8, w // 8)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    rr = ((xx / sw - 0.5) ** 2 + (yy / sh - 0.5) ** 2) * 2
    gain = _smooth_noise(rng, sh, sw, 3, rng.uniform(0.55, 0.95), rng.uniform(1.0, 1.25))
    gain *= 1 - rng.uniform(0, 0.45) * rr
    glare = np.zeros((sh, sw), np.float32)
    for _ in range(int(rng.poisson(0.8))):
        gx, gy = rng.uniform(0, sw), rng.uniform(0, sh)
        sx, sy = rng.uniform(0.02, 0.15) * sw, rng.uniform(0.02, 0.15) * sh
        glare += rng.uniform(0.2, 1.0) * np.exp(-((xx - gx) ** 2 / (2 * sx * sx) + (yy - gy) ** 2 / (2 * sy * sy)))
    wb = np.float32(np.exp(rng.normal(0, 0.07, 3)))
    wb *= np.float32([1 - 0.08 * (t := rng.normal(0, 1)), 1, 1 + 0.08 * t])  # warm/cool
    gain3 = np.clip(gain[..., None] * wb * 128, 0, 255).astype(np.uint8)
    out = cv2.multiply(img, cv2.resize(gain3, (w, h), interpolation=cv2.INTER_LINEAR), scale=1 / 128)
    glare = cv2.convertScaleAbs(glare, alpha=255 * rng.uniform(0.4, 1.0))
    cv2.add(out, cv2.cvtColor(cv2.resize(glare, (w, h), interpolation=cv2.INTER_LINEAR), cv2.COLOR_GRAY2BGR), dst=out)
    out = _blur(out, rng)
    _add_noise(out, rng.uniform(1, 7), rng, coarse=int(rng.integers(1, 3)))
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(45, 96))])
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
                 fold: float = 0.0) -> Shot:
    """A synthetic phone photo of `board` (15 rows of board text) with exact ground truth.

    `box_seed` fixes the box (font and jittered look) apart from the photo, so several photos
    can show one physical box, as calibration needs; None draws the box from `seed` too.
    `variety` also draws a random GlyphStyle for the box (bolder, thinner, condensed or
    slanted letters, values closer or lower): training data only.
    `fold` turns the board's far half that many degrees up about the hinge along the middle of
    its centre row (row 8), as a folding board that does not lie flat shows it (negative:
    down, a ridge); `corners` then are the grid's true corners, of two planes.

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
    cam = _sample_camera(rng, pose, extent, w, h)
    corners = _project(cam.h_units, np.float64([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]]))
    if fold:
        corners[2:] = _project(cam.folded(fold), np.float64([[SIZE, SIZE], [0, SIZE]]))
    cell_px = float(np.linalg.norm(corners[1] - corners[0]) + np.linalg.norm(corners[2] - corners[3])) / (2 * SIZE)
    c = int(np.clip(cell_px * rng.uniform(1.0, 1.25), 40, 90))

    canvas, alpha, m = _board_canvas(look, layout, c, font, rng)
    light = rng.normal(0, 0.4, 2).astype(np.float32) + np.float32([0.3, 0.4])
    _draw_tiles(canvas, board, look, c, m, (cam.ground + m / c) * c, cam.height * c, light, font, rng)

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
    img = _photo_effects(img, rng)
    corners = corners.astype(np.float32)
    return Shot(img, corners, _orientation(corners), board, layout, style, font)


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
