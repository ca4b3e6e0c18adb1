"""Letters as a box prints them: the fonts (a training split and a held-out one, whole
families apart), glyph bitmaps at any size, weight, width and slant, and a tile's letter and
value stamped without touching."""

from __future__ import annotations

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

from synth.styles import (
    TILE_VALUES,
    Look,
)

FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts")
NEEDED_GLYPHS = "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
HELDOUT_SHARE = 0.15  # fraction of font files kept away from training
GLYPH_BASE = 96       # font size at which glyph bitmaps are rasterised before scaling
VALUE_CLEARANCE = 0.03  # of a tile: the least gap between a letter and its value in the corner
SHRINK_STEP = 0.95     # the letter's size kept at each step it takes to clear the value ...
CLEAR_STEP = 0.015     # ... and how far (of a tile) it moves up and left at each
MAX_SHRINKS = 6        # at most this many steps (0.74 of its size, 0.09 of a tile away)


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
def _glyph(path: str, text: str, cap_px: int,
           form: tuple = (0, 1.0, 0.0)) -> tuple[np.ndarray, float, float]:
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


def text_centered(dst, path, text, cx, cy, cap_px, color, alpha=1.0):
    mask, _, _ = _glyph(path, text, max(3, int(cap_px)))
    _stamp(dst, mask, cx - mask.shape[1] / 2, cy - mask.shape[0] / 2, color, alpha)


def print_label(dst, lines, centre, room, cap, font, ink):
    """A premium square's label, a line per word, centred on `centre`, its capitals `cap` px
    tall or less, so the widest line takes at most 0.88 of `room` px."""
    if not lines:
        return
    widest = max(_glyph(font, line, max(3, int(cap)))[0].shape[1] for line in lines)
    cap *= min(1.0, 0.88 * room / widest)
    step = cap * 1.6
    top = centre[1] - (len(lines) - 1) * step / 2
    for i, line in enumerate(lines):
        text_centered(dst, font, line, centre[0], top + i * step, cap, ink, 0.95)


def print_letter(face, ch, s, look: Look, font):
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
