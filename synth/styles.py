"""Box looks for the synthetic photo renderer: layouts, tile values and per-style parameters.

Each style is a function of a numpy Generator that returns a `Look` — the colours and
proportions of one physical box, jittered so no two renders share exactly the same box.

    >>> look = sample_look("erudit-black", np.random.default_rng(0))
    >>> look.tile_top  # BGR
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass, field

import numpy as np

from engine.ruleset import load_layout, load_ruleset

# Premium layouts and printed tile values come from the engine's data files.
ERUDIT_LAYOUT = list(load_layout("erudit").printed())
SCRABBLE_LAYOUT = list(load_layout("scrabble").printed())
# Эрудит values for Cyrillic (Ё from scrabble-ru), English Scrabble values for Latin.
ERUDIT_VALUES = {**load_ruleset("erudit").values, "Ё": load_ruleset("scrabble-ru").values["Ё"]}
ENGLISH_VALUES = dict(load_ruleset("scrabble").values)
# German boxes' umlauts, as German Scrabble prints them
GERMAN_VALUES = {"Ä": 6, "Ö": 8, "Ü": 6}
TILE_VALUES = {**ERUDIT_VALUES, **ENGLISH_VALUES, **GERMAN_VALUES}

STYLES = ("erudit-black", "erudit-cream", "scrabble-hasbro", "scrabble-vintage")
# Boxes the general model never trains on (not in STYLES): material for per-box calibration.
CALIBRATION_STYLES = ("novel-violet",)
# Boxes of any colours, for training variety only: a model that saw just the four looks above
# reads a box of other colours poorly. They never draw the held-out novel box's look.
ANY_STYLES = ("erudit-any", "scrabble-any")
# Looks of real boxes beyond the four (training only, as the any-box ones): a tournament board
# (green, light and dark blue, pink and red squares, stitched edges, printed labels, ivory
# tiles), often photographed from straight above at ~1 MP.
REAL_BOX_STYLES = ("tournament",)
ENGLISH_STYLES = ("scrabble-hasbro", "scrabble-vintage", "scrabble-any", "tournament")
# Hues (degrees) any-box tiles and light inks leave out: novel-violet's violet tiles and yellow ink.
HELD_OUT_TILE_HUES = (250.0, 330.0)
HELD_OUT_INK_HUES = (35.0, 75.0)

PREMIUM_WORDS = {
    "ru": {"W": "ТРОЙНОЕ СЛОВО", "w": "ДВОЙНОЕ СЛОВО", "L": "ТРОЙНАЯ БУКВА",
           "l": "ДВОЙНАЯ БУКВА", "*": "СТАРТ"},
    "en": {"W": "TRIPLE WORD SCORE", "w": "DOUBLE WORD SCORE", "L": "TRIPLE LETTER SCORE",
           "l": "DOUBLE LETTER SCORE", "*": ""},
}
PREMIUM_FACTORS = {"W": "x3", "w": "x2", "L": "x3", "l": "x2", "*": ""}
# What real boxes print on their premium squares (premium_text "labels"), one line per word
PREMIUM_LABELS = {
    "ru-short": {"W": "СЛОВО ×3", "w": "СЛОВО ×2", "L": "БУКВА ×3", "l": "БУКВА ×2", "*": ""},
    "ru-words": PREMIUM_WORDS["ru"],
    "en-words": PREMIUM_WORDS["en"],
    "en-short": {"W": "WORD ×3", "w": "WORD ×2", "L": "LETTER ×3", "l": "LETTER ×2", "*": ""},
    "factor": {"W": "×3", "w": "×2", "L": "×3", "l": "×2", "*": ""},
}


@dataclass
class Look:
    """Colours (BGR) and proportions (fractions of a cell) of one box."""

    english: bool
    cell: tuple          # plain square colour
    line: tuple          # grid line colour
    line_width: float    # fraction of a cell
    line_glint: float    # 0..1 strength of light specks along raised grid walls
    margin: float        # board plastic/cardboard beyond the grid, in cells
    board_edge: tuple    # colour of the margin
    frame: tuple | None  # outer coloured band (Hasbro red) or None
    frame_width: float   # in cells
    labels: tuple | None  # row/column label colour, None = no labels
    premium: dict        # layout char -> colour
    premium_inset: float  # coloured insert inset from the cell edge (0 = whole cell)
    premium_radius: float
    premium_text: str    # "factor" (x2/x3), "words" (tiny print), "none"
    premium_ink: dict    # layout char -> text colour
    centre_star: bool    # draw a star on the centre square
    tile_top: tuple
    tile_side: tuple
    tile_ink: tuple
    tile_size: float     # fraction of a cell
    tile_radius: float   # corner radius, fraction of the tile
    tile_height: float   # thickness, fraction of a cell
    tile_grain: float    # wood grain strength on tiles (0 = plastic)
    tile_gloss: float    # specular highlight strength on tile tops
    letter_size: float   # letter ink height, fraction of the tile
    value_size: float    # value digit ink height, fraction of the tile
    value_near: bool     # digit right beside the letter (Эрудит) or in the tile corner
    texture: float       # print/cardboard noise on the board
    extras: dict = field(default_factory=dict)
    labels_set: str = ""  # premium_text "labels": which of PREMIUM_LABELS is printed
    label_size: float = 0.14  # its capitals' height, fraction of a cell (shrunk to fit)
    stitched: tuple | None = None  # colour of a dotted seam round the premium squares


def jitter(bgr, rng, amount=0.08, hue=6.0):
    """A colour moved a little in brightness, saturation and hue."""
    import cv2

    px = np.uint8([[bgr]])
    h, s, v = cv2.cvtColor(px, cv2.COLOR_BGR2HSV_FULL)[0, 0].astype(float)
    h = (h + rng.normal(0, hue)) % 256
    s = np.clip(s * (1 + rng.normal(0, amount)), 0, 255)
    v = np.clip(v * (1 + rng.normal(0, amount)), 0, 255)
    out = cv2.cvtColor(np.uint8([[[h, s, v]]]), cv2.COLOR_HSV2BGR_FULL)[0, 0]
    return tuple(int(x) for x in out)


def shade(bgr, k):
    """A colour scaled in brightness by k (k<1 darker)."""
    return tuple(int(np.clip(c * k, 0, 255)) for c in bgr)


def _erudit_black(rng):
    cell = jitter((52, 56, 60), rng, 0.15, 4)
    premium = {
        "W": jitter((70, 70, 220), rng), "w": jitter((225, 160, 40), rng),
        "L": jitter((60, 215, 235), rng), "l": jitter((85, 150, 40), rng),
        "*": jitter((240, 242, 242), rng, 0.03, 2),
    }
    ink = {k: shade(v, 0.55) for k, v in premium.items()}
    tile = jitter((205, 120, 25), rng, 0.1, 3)
    return Look(
        english=False, cell=cell, line=jitter((14, 14, 16), rng, 0.2, 2),
        line_width=rng.uniform(0.09, 0.15), line_glint=rng.uniform(0.2, 0.8),
        margin=rng.uniform(0.45, 0.8), board_edge=shade(cell, rng.uniform(0.5, 0.8)),
        frame=None, frame_width=0.0, labels=shade(cell, rng.uniform(1.3, 1.9)),
        premium=premium, premium_inset=rng.uniform(0.06, 0.14),
        premium_radius=rng.uniform(0.1, 0.25),
        premium_text=rng.choice(["factor", "factor", "factor", "words", "none"]), premium_ink=ink,
        centre_star=False, tile_top=tile, tile_side=shade(tile, rng.uniform(0.55, 0.75)),
        tile_ink=jitter((250, 250, 250), rng, 0.02, 2), tile_size=rng.uniform(0.86, 0.98),
        tile_radius=rng.uniform(0.12, 0.25), tile_height=rng.uniform(0.2, 0.35),
        tile_grain=0.0, tile_gloss=rng.uniform(0.1, 0.5),
        letter_size=rng.uniform(0.42, 0.55), value_size=rng.uniform(0.22, 0.3),
        value_near=True, texture=rng.uniform(2, 6),
    )


def _erudit_cream(rng):
    cell = jitter((190, 225, 238), rng, 0.08, 6)
    premium = {
        "W": jitter((60, 60, 205), rng), "w": jitter((215, 170, 90), rng),
        "L": jitter((70, 200, 240), rng), "l": jitter((110, 175, 90), rng),
        "*": jitter((250, 250, 250), rng, 0.03, 2),
    }
    ink = {k: shade(v, 0.45) for k, v in premium.items()}
    tile = jitter((205, 228, 238), rng, 0.06, 5)
    return Look(
        english=False, cell=cell, line=jitter((60, 70, 80), rng, 0.3, 6),
        line_width=rng.uniform(0.02, 0.06), line_glint=0.0,
        margin=rng.uniform(0.4, 1.0), board_edge=jitter((150, 190, 215), rng, 0.15, 10),
        frame=jitter((40, 60, 150), rng, 0.2, 10) if rng.random() < 0.5 else None,
        frame_width=rng.uniform(0.15, 0.4), labels=jitter((50, 50, 60), rng, 0.2, 4),
        premium=premium, premium_inset=rng.uniform(0.0, 0.05),
        premium_radius=rng.uniform(0.0, 0.15),
        premium_text=rng.choice(["factor", "words", "words", "none"]), premium_ink=ink,
        centre_star=bool(rng.random() < 0.5), tile_top=tile,
        tile_side=shade(tile, rng.uniform(0.6, 0.8)), tile_ink=jitter((30, 30, 30), rng, 0.2, 2),
        tile_size=rng.uniform(0.85, 0.97), tile_radius=rng.uniform(0.05, 0.2),
        tile_height=rng.uniform(0.15, 0.3), tile_grain=0.0, tile_gloss=rng.uniform(0.05, 0.3),
        letter_size=rng.uniform(0.45, 0.6), value_size=rng.uniform(0.18, 0.26),
        value_near=bool(rng.random() < 0.5), texture=rng.uniform(3, 8),
    )


def _scrabble_hasbro(rng):
    cell = jitter((170, 190, 200), rng, 0.07, 4)
    premium = {
        "W": jitter((60, 50, 215), rng), "w": jitter((190, 175, 245), rng),
        "L": jitter((190, 120, 30), rng), "l": jitter((240, 200, 140), rng),
        "*": jitter((190, 175, 245), rng),
    }
    ink = {k: (40, 40, 40) for k in premium}
    tile = jitter((160, 215, 240), rng, 0.07, 4)
    return Look(
        english=True, cell=cell, line=jitter((240, 245, 248), rng, 0.03, 2),
        line_width=rng.uniform(0.06, 0.11), line_glint=0.0,
        margin=rng.uniform(0.25, 0.6), board_edge=jitter((200, 225, 235), rng, 0.05, 4),
        frame=jitter((45, 35, 200), rng, 0.12, 4), frame_width=rng.uniform(1.0, 2.2),
        labels=None, premium=premium, premium_inset=0.0, premium_radius=0.0,
        premium_text=rng.choice(["words", "words", "none"]), premium_ink=ink, centre_star=True,
        tile_top=tile, tile_side=shade(tile, rng.uniform(0.6, 0.8)),
        tile_ink=jitter((25, 25, 25), rng, 0.2, 2), tile_size=rng.uniform(0.86, 0.97),
        tile_radius=rng.uniform(0.03, 0.12), tile_height=rng.uniform(0.1, 0.22),
        tile_grain=rng.uniform(0.02, 0.07), tile_gloss=rng.uniform(0.0, 0.15),
        letter_size=rng.uniform(0.5, 0.62), value_size=rng.uniform(0.15, 0.22),
        value_near=False, texture=rng.uniform(2, 5),
    )


def _scrabble_vintage(rng):
    cell = jitter((110, 150, 185), rng, 0.1, 6)
    premium = {
        "W": jitter((70, 50, 215), rng), "w": jitter((175, 165, 240), rng),
        "L": jitter((200, 130, 40), rng), "l": jitter((230, 200, 150), rng),
        "*": jitter((175, 165, 240), rng),
    }
    ink = {k: (40, 40, 40) for k in premium}
    tile = jitter((70, 110, 170), rng, 0.12, 6)
    return Look(
        english=True, cell=cell, line=jitter((225, 235, 240), rng, 0.05, 3),
        line_width=rng.uniform(0.05, 0.1), line_glint=0.0,
        margin=rng.uniform(0.6, 1.3), board_edge=shade(cell, rng.uniform(0.9, 1.1)),
        frame=jitter((50, 45, 190), rng, 0.12, 4), frame_width=rng.uniform(0.25, 0.5),
        labels=None, premium=premium, premium_inset=rng.uniform(0.0, 0.06), premium_radius=0.0,
        premium_text=rng.choice(["words", "words", "none"]), premium_ink=ink,
        centre_star=bool(rng.random() < 0.7), tile_top=tile,
        tile_side=shade(tile, rng.uniform(0.55, 0.75)), tile_ink=jitter((20, 20, 25), rng, 0.2, 2),
        tile_size=rng.uniform(0.86, 0.97), tile_radius=rng.uniform(0.03, 0.1),
        tile_height=rng.uniform(0.1, 0.22), tile_grain=rng.uniform(0.04, 0.1),
        tile_gloss=rng.uniform(0.0, 0.1), letter_size=rng.uniform(0.5, 0.62),
        value_size=rng.uniform(0.15, 0.22), value_near=False, texture=rng.uniform(3, 7),
    )


def _novel_violet(rng):
    """A box unlike any trained style: violet tiles with yellow letters on a grey board."""
    cell = jitter((128, 128, 124), rng, 0.08, 3)
    premium = {
        "W": jitter((70, 70, 220), rng), "w": jitter((225, 160, 40), rng),
        "L": jitter((60, 215, 235), rng), "l": jitter((85, 150, 40), rng),
        "*": jitter((240, 242, 242), rng, 0.03, 2),
    }
    ink = {k: shade(v, 0.5) for k, v in premium.items()}
    tile = jitter((120, 40, 95), rng, 0.1, 3)
    return Look(
        english=False, cell=cell, line=jitter((200, 200, 200), rng, 0.05, 2),
        line_width=rng.uniform(0.04, 0.08), line_glint=0.0,
        margin=rng.uniform(0.4, 0.8), board_edge=shade(cell, rng.uniform(0.6, 0.8)),
        frame=None, frame_width=0.0, labels=None,
        premium=premium, premium_inset=rng.uniform(0.02, 0.08),
        premium_radius=rng.uniform(0.3, 0.45),
        premium_text="factor", premium_ink=ink,
        centre_star=True, tile_top=tile, tile_side=shade(tile, rng.uniform(0.5, 0.7)),
        tile_ink=jitter((30, 230, 255), rng, 0.05, 2), tile_size=rng.uniform(0.86, 0.94),
        tile_radius=rng.uniform(0.2, 0.3), tile_height=rng.uniform(0.12, 0.2),
        tile_grain=0.0, tile_gloss=rng.uniform(0.1, 0.25),
        letter_size=rng.uniform(0.5, 0.6), value_size=rng.uniform(0.16, 0.2),
        value_near=False, texture=rng.uniform(1, 3),
    )


def _tournament(rng):
    """A tournament board: green squares, dark and light blue, red and pink premiums, often
    stitched round and printed with their label, ivory tiles with black letters and values.
    One box in three has squares close to the tiles' ivory."""
    cream = rng.random() < 0.33
    cell = jitter((200, 225, 232), rng, 0.06, 6) if cream else jitter((60, 115, 35), rng, 0.2, 8)
    premium = {
        "W": jitter((45, 40, 200), rng, 0.12, 5), "w": jitter((180, 160, 240), rng, 0.1, 5),
        "L": jitter((150, 70, 20), rng, 0.15, 5), "l": jitter((235, 200, 140), rng, 0.1, 5),
    }
    premium["*"] = premium["w"]
    ink = {k: (245, 245, 245) if _luma(v) < 110 or rng.random() < 0.3 else (30, 30, 30)
           for k, v in premium.items()}
    tile = jitter((195, 228, 240), rng, 0.05, 5)
    labels_set = str(rng.choice(list(PREMIUM_LABELS)))
    return Look(
        english=True, cell=cell, line=jitter((225, 235, 235), rng, 0.1, 4) if rng.random() < 0.7
        else shade(cell, 0.5), line_width=rng.uniform(0.03, 0.09), line_glint=0.0,
        margin=rng.uniform(0.3, 1.2), board_edge=shade(cell, rng.uniform(0.6, 1.1)),
        frame=jitter((40, 80, 30), rng, 0.2, 8) if rng.random() < 0.5 else None,
        frame_width=rng.uniform(0.2, 1.0), labels=None, premium=premium,
        premium_inset=rng.uniform(0.0, 0.08), premium_radius=rng.uniform(0.0, 0.1),
        premium_text="labels" if rng.random() < 0.85 else "none", premium_ink=ink,
        centre_star=True, tile_top=tile, tile_side=shade(tile, rng.uniform(0.6, 0.8)),
        tile_ink=jitter((20, 20, 20), rng, 0.2, 2), tile_size=rng.uniform(0.86, 0.96),
        tile_radius=rng.uniform(0.05, 0.2), tile_height=rng.uniform(0.1, 0.2),
        tile_grain=0.0, tile_gloss=rng.uniform(0.0, 0.2), letter_size=rng.uniform(0.48, 0.6),
        value_size=rng.uniform(0.15, 0.22), value_near=False, texture=rng.uniform(1, 5),
        labels_set=labels_set,
        label_size=rng.uniform(0.3, 0.45) if labels_set == "factor" else rng.uniform(0.1, 0.2),
        stitched=(shade(cell, rng.choice([0.55, 1.6])) if rng.random() < 0.6 else None),
    )


def hsv(hue: float, sat: float, val: float) -> tuple:
    """BGR of a hue in degrees, saturation and value in 0..1."""
    r, g, b = colorsys.hsv_to_rgb((hue % 360) / 360, sat, val)
    return int(b * 255), int(g * 255), int(r * 255)


def _hue(rng, avoid: tuple | None = None) -> float:
    while True:
        h = float(rng.uniform(0, 360))
        if avoid is None or not avoid[0] <= h <= avoid[1]:
            return h


def _any_tile(rng) -> tuple[tuple, tuple]:
    """Tile top and ink of a random box: light tiles with dark ink, or dark/bright ones with light
    ink, always far apart in brightness as printed tiles are."""
    hue = _hue(rng, HELD_OUT_TILE_HUES)
    light = rng.random() < 0.5
    if light:
        tile = hsv(hue, rng.uniform(0, 0.5), rng.uniform(0.7, 0.97))
    else:
        tile = hsv(hue, rng.uniform(0.25, 1.0), rng.uniform(0.2, 0.7))
    for _ in range(50):
        if light:
            ink = hsv(_hue(rng), rng.uniform(0, 0.9), rng.uniform(0.03, 0.35))
        else:
            ink = hsv(_hue(rng, HELD_OUT_INK_HUES), rng.uniform(0, 0.7), rng.uniform(0.82, 1.0))
        if abs(_luma(ink) - _luma(tile)) >= 120:
            return tile, ink
    return tile, ((20, 20, 20) if light else (245, 245, 245))


def _luma(bgr) -> float:
    return 0.114 * bgr[0] + 0.587 * bgr[1] + 0.299 * bgr[2]


def _any_board(rng, tile) -> tuple:
    """A plain-square colour that a tile on it still stands out from."""
    while True:
        cell = hsv(_hue(rng), rng.uniform(0, 0.6), rng.uniform(0.2, 0.92))
        if np.linalg.norm(np.subtract(cell, tile, dtype=float)) > 60:
            return cell


def _any_box(rng, english: bool) -> Look:
    tile, tile_ink = _any_tile(rng)
    cell = _any_board(rng, tile)
    premium = {k: hsv(_hue(rng), rng.uniform(0.3, 0.9), rng.uniform(0.45, 0.95)) for k in "WwLl"}
    premium["*"] = premium["w"] if rng.random() < 0.5 else hsv(_hue(rng), rng.uniform(0, 0.3), 0.95)
    darker = rng.uniform(0.35, 0.6)
    dark_lines = rng.random() < 0.5
    line = hsv(_hue(rng), rng.uniform(0, 0.3),
               rng.uniform(0.03, 0.3) if dark_lines else rng.uniform(0.8, 1))
    frame = (hsv(_hue(rng), rng.uniform(0.2, 0.9), rng.uniform(0.2, 0.8)) if rng.random() < 0.4
             else None)
    return Look(
        english=english, cell=cell, line=line, line_width=rng.uniform(0.02, 0.15),
        line_glint=rng.uniform(0.2, 0.8) if dark_lines and rng.random() < 0.4 else 0.0,
        margin=rng.uniform(0.25, 1.2),
        board_edge=hsv(_hue(rng), rng.uniform(0, 0.6), rng.uniform(0.2, 0.9)),
        frame=frame, frame_width=rng.uniform(0.15, 2.0) if frame is not None else 0.0,
        labels=shade(cell, rng.choice([0.4, 1.7])) if rng.random() < 0.3 else None,
        premium=premium, premium_inset=rng.uniform(0.0, 0.14),
        premium_radius=rng.uniform(0.0, 0.45),
        premium_text=str(rng.choice(["factor", "words", "none"])),
        premium_ink={k: shade(v, darker) for k, v in premium.items()},
        centre_star=bool(rng.random() < 0.6), tile_top=tile,
        tile_side=shade(tile, rng.uniform(0.5, 0.8)), tile_ink=tile_ink,
        tile_size=rng.uniform(0.85, 0.97), tile_radius=rng.uniform(0.03, 0.3),
        tile_height=rng.uniform(0.1, 0.35),
        tile_grain=rng.uniform(0.02, 0.1) if rng.random() < 0.3 else 0.0,
        tile_gloss=rng.uniform(0.0, 0.5), letter_size=rng.uniform(0.42, 0.62),
        value_size=rng.uniform(0.15, 0.3),
        value_near=bool(rng.random() < (0.2 if english else 0.6)),
        texture=rng.uniform(1, 8),
    )


_SAMPLERS = {
    "erudit-black": _erudit_black,
    "erudit-cream": _erudit_cream,
    "scrabble-hasbro": _scrabble_hasbro,
    "scrabble-vintage": _scrabble_vintage,
    "novel-violet": _novel_violet,
    "erudit-any": lambda rng: _any_box(rng, english=False),
    "scrabble-any": lambda rng: _any_box(rng, english=True),
    "tournament": _tournament,
}


def sample_look(style: str, rng: np.random.Generator) -> Look:
    """One jittered box of the named style."""
    return _SAMPLERS[style](rng)


def default_layout(style: str) -> list[str]:
    return list(SCRABBLE_LAYOUT if style in ENGLISH_STYLES else ERUDIT_LAYOUT)
