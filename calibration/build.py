"""Build a box profile from a photo of its empty board and a photo of its alphabet laid out.

The empty board gives the layout (the ruleset's, changed where the box's own colours show
another kind), the colour of each kind of square and references of every empty cell. The
alphabet photo holds the ruleset's letters then the star, row by row from the top-left of the
upright board; its upright is the turn that puts the occupied cells first in reading order,
and each tile becomes references of its letter.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from calibration.box import COLUMNS, Profile, View
from calibration.references import (
    PhotoBoard,
    embed,
    empty_references,
    letter_references,
    model_hash,
    open_board,
)
from engine.board import cut
from engine.errors import ProfileError
from engine.ruleset import SIZE, Ruleset
from vision import classifier
from vision.classifier import EMPTY, STAR, check_readable, glyph_of, load_model
from vision.premium import cell_colours, read_premiums

NAME = re.compile(r"^[\w][\w.-]{0,63}$")
ALONE = 0.55  # embedding similarity to its mirror cells below which a cell is not empty
ODD = 0.7  # ... below which a cell is not empty when its colour is odd too
ODD_COLOUR = 20.0  # Lab units from its mirror cells' colour: a tile, not glare
GLARE_LIGHTER = 15.0  # L units lighter than its mirror cells: glare, if it reads as empty
NEAR = 3  # similarity of a cell to a set: the mean of its NEAR most similar members
MISREAD = 0.9  # the general model reads another letter at least this surely ...
EXPECTED_LOW = 0.02  # ... and the letter laid there at most this likely: out of order
MISREADS_ALLOWED = 3  # more such cells than this mean the letters are out of order
SEARCH = 2  # tiles are told from empty cells among the SEARCH × expected most tile-like
LAB_WEIGHT = np.float32([0.5, 1, 1])  # lightness shifts with shading more than hue does
UNLIKE_KIND = 12.0  # Lab units (lightness halved) from a kind's usual colour: another kind
FAR_NEARER = 0.5  # ... or this share of its distance to the kind it has, read so too
LAYOUT_ROUNDS = 3  # rounds of telling the box's kinds by their colours
CENTRE = SIZE * SIZE // 2  # flat index of the centre cell


def box_name(text: str) -> str:
    """A box's name as typed, in one Unicode form (a phone may send `й` as и and a breve)."""
    return unicodedata.normalize("NFC", (text or "").strip())


def check_name(name: str) -> None:
    if not NAME.match(name or ""):
        raise ProfileError(code="profile_name", name=cut(name))


def read_empty(path, ruleset: Ruleset) -> dict:
    """Layout rows (in the photo's turn), square colours and references of the empty cells."""
    photo = open_board(path, "empty")
    log_probs, embeddings = embed(photo.crops.reshape(-1, *photo.crops.shape[2:]))
    colours = cell_colours(photo.rectified)
    _refuse_tiles(photo, embeddings, colours, log_probs)
    refs = empty_references(photo.crops)
    return {"photo": photo, "layout": layout_of(photo.rectified, ruleset, colours),
            "lab": colours, "refs": refs}


def layout_of(rectified: np.ndarray, ruleset: Ruleset, lab: np.ndarray | None = None) -> list[str]:
    """The premium layout of an empty board seen top-down (`vision.rectify`), in its turn
    (`lab`: its cell_colours, when already measured)."""
    lab = cell_colours(rectified) if lab is None else lab
    return confirmed_layout(read_premiums(rectified), lab, ruleset)


def _refuse_tiles(photo: PhotoBoard, embeddings: np.ndarray, lab: np.ndarray,
                  log_probs: np.ndarray) -> None:
    """Every premium layout is symmetric, so an empty cell looks like its mirror cells; a cell
    unlike them in look (and in colour, unless very unlike) holds a tile, unless it is much
    lighter than them and the general model reads it as an empty square: glare."""
    alike = np.zeros(SIZE * SIZE)
    odd = np.zeros(SIZE * SIZE)
    lighter = np.zeros(SIZE * SIZE)
    lab = lab.reshape(-1, 3)
    for i, mirrors in enumerate(_orbits()):
        others = [j for j in mirrors if j != i]
        if not others:
            alike[i] = 1.0
            continue
        alike[i] = np.median(embeddings[others] @ embeddings[i])
        centre = np.median(lab[others], axis=0)
        odd[i] = np.linalg.norm((lab[i] - centre) * LAB_WEIGHT)
        lighter[i] = lab[i, 0] - centre[0]
    unlike = (alike < ALONE) | ((alike < ODD) & (odd > ODD_COLOUR))
    reads_empty = log_probs[:, load_model().glyphs.index(EMPTY)] >= np.log(0.5)
    glare = (lighter > GLARE_LIGHTER) & reads_empty
    tiles = np.flatnonzero(unlike & ~glare)
    if len(tiles):
        cells = ", ".join(_cell_name(i) for i in tiles[:8])
        raise ProfileError(code="empty_has_tiles", photo=photo.path, count=len(tiles),
                           cells=cells)


def square_colours(photo: PhotoBoard, layout: list[str], lab: np.ndarray) -> dict:
    """Mean BGR and Lab colour of each kind of square, from the middles of its cells."""
    cell = photo.rectified.shape[0] // (SIZE + 1)  # rectify's margin is half a cell each side
    start, inset = cell // 2, cell // 4
    out = {}
    for code in sorted(set("".join(layout)) - {"?"}):
        cells = [(r, c) for r in range(SIZE) for c in range(SIZE) if layout[r][c] == code]
        bgr = [photo.rectified[start + r * cell + inset:start + (r + 1) * cell - inset,
                               start + c * cell + inset:start + (c + 1) * cell - inset]
               .reshape(-1, 3).mean(axis=0) for r, c in cells]
        out[code] = {"bgr": [round(float(x), 1) for x in np.mean(bgr, axis=0)],
                     "lab": [round(float(x), 1) for x in np.mean([lab[r, c] for r, c in cells],
                                                                 axis=0)],
                     "cells": len(cells)}
    return out


def confirmed_layout(read: list[str], lab: np.ndarray, ruleset: Ruleset) -> list[str]:
    """The box's layout, told by its own colours. Starting from the ruleset's, each set of
    mirror cells keeps its kind while its colour is like that kind's squares (their median),
    else takes the kind whose squares it is like; a colour like no kind's (glare, a shadow's
    edge) keeps its kind unless another is far nearer and `read` says so too. Then again with
    the kinds so found. `read` (the colour scheme's fixed prototypes, `vision.premium`) alone
    took light blue for dark blue, or every kind for another on a field of an unusual colour,
    in dim or warm light (`bench.eval_layout`). The centre, a kind of one cell, has no other
    squares to compare with: it keeps its kind unless it is like another kind's squares, or
    far nearer one kind than any other and read so. Premium layouts are symmetric, so this
    holds in any turn of the photo."""
    read = _symmetric(np.array([list(row) for row in read])).ravel()
    colours = lab.reshape(-1, 3) * LAB_WEIGHT
    kinds = np.array(list("".join(ruleset.layout.rows)))
    field = np.arange(len(kinds)) != CENTRE
    orbits = [list(orbit) for orbit in {tuple(mirrors) for mirrors in _orbits()}]
    for _ in range(LAYOUT_ROUNDS):
        usual = {kind: np.median(colours[field & (kinds == kind)], axis=0)
                 for kind in set(kinds[field].tolist())}
        found = kinds.copy()
        for orbit in orbits:
            colour = np.median(colours[orbit], axis=0)
            near = {kind: float(np.linalg.norm(colour - mean)) for kind, mean in usual.items()}
            found[orbit] = _nearer_kind(near, kinds[orbit[0]], read[orbit[0]])
        kinds = found
    return ["".join(row) for row in kinds.reshape(SIZE, SIZE)]


def _nearer_kind(near: dict, now: str, seen: str) -> str:
    """The kind of a set of mirror cells (`near`: its distance to each kind's usual colour;
    the centre's own kind has none)."""
    if near.get(now, np.inf) <= UNLIKE_KIND:
        return now
    nearest = min(near, key=near.get)
    if near[nearest] <= UNLIKE_KIND:
        return nearest
    # like no kind: glare or a shadow's edge keeps the kind, unless another is far nearer
    # than it (the centre: than the next kind) and the colour scheme reads it too (a shaded
    # ×3-letter square the ruleset has not)
    rival = near[now] if now in near else sorted(near.values())[1]
    if near[nearest] <= FAR_NEARER * rival and seen == nearest:
        return nearest
    return now


def fit_layout(read: list[str], ruleset: Ruleset) -> tuple[list[str], list[dict]]:
    """The read layout turned to best match the ruleset's (an empty board has no upright),
    and the cells where the box differs from the ruleset."""
    grid = _symmetric(np.array([list(row) for row in read]))
    rule = np.array([list(row) for row in ruleset.layout.rows])
    turns = [np.rot90(grid, k) for k in range(4)]
    best = min(turns, key=lambda g: int(((g != rule) & (g != "?")).sum()))
    centre = SIZE // 2
    # a plain or white centre, or one showing the ruleset's centre premium: the start cell
    if best[centre, centre] in ("*", ".", "?", ruleset.layout.centre):
        best[centre, centre] = rule[centre, centre]
    rows = ["".join(row) for row in best]
    differences = [{"cell": f"{COLUMNS[c]}{r + 1}", "box": rows[r][c],
                    "ruleset": ruleset.layout.rows[r][c]}
                   for r in range(SIZE) for c in range(SIZE)
                   if rows[r][c] not in ("?", ruleset.layout.rows[r][c])]
    return rows, differences


def _symmetric(grid: np.ndarray) -> np.ndarray:
    """Each cell takes the kind most of its mirror cells show (glare on one square, a tile
    on another): premium layouts are symmetric under the square's turns and flips."""
    flat = grid.ravel()
    out = flat.copy()
    for i, mirrors in enumerate(_orbits()):
        kinds, counts = np.unique(flat[mirrors], return_counts=True)
        if counts.max() * 2 > len(mirrors):
            out[i] = kinds[counts.argmax()]
    return out.reshape(grid.shape)


def read_alphabet(path, ruleset: Ruleset, empty: dict):
    """Letter/star glyphs, their reference embeddings and the photo's top-down view (kept
    so that a later model can make its own references) from the alphabet photo."""
    photo = open_board(path, "alphabet")
    symbols = [*ruleset.alphabet, STAR]
    log_probs, embeddings = embed(photo.crops.reshape(-1, *photo.crops.shape[2:]))
    turns, occupied = _laid_out(embeddings, log_probs, empty["refs"], len(symbols))
    laid = np.zeros(SIZE * SIZE, bool)
    laid[_first_cells(turns, len(symbols))] = True
    # in the laid-out cells colour alone tells a tile; elsewhere look, model and colour must
    # all agree (the printed centre star looks like the star tile laid out)
    now, usual = _cell_and_usual_colours(photo, empty)
    off = np.linalg.norm(now - usual, axis=1) > ODD_COLOUR
    occupied = np.where(laid, occupied | off, occupied & off)
    occupied |= laid & _tile_coloured(now, usual, laid & occupied)
    count = int(occupied.sum())
    if count != len(symbols):
        # with nothing laid out, the cells counted are merely the most tile-like empty squares
        raise ProfileError(code="alphabet_count" if off.any() else "alphabet_none", photo=path,
                           count=count, expected=len(symbols), letters=len(ruleset.alphabet))
    if not np.array_equal(occupied, laid):
        raise ProfileError(code="alphabet_rows", photo=path)
    crops, refs = letter_references(photo.board, turns, len(symbols))
    glyphs = _refuse_disorder(path, crops[:, 0], symbols)
    return glyphs, refs, np.repeat(glyphs, crops.shape[1]), View(photo.board, turns)


def _cell_and_usual_colours(photo: PhotoBoard, empty: dict) -> tuple[np.ndarray, np.ndarray]:
    """(225, 3) each cell's colour in the photo and its kind's colour on the empty board, each
    relative to its photo's own plain squares and weighted by LAB_WEIGHT; the layout is
    symmetric, so each cell's kind needs no upright."""
    kinds = np.array(list("".join(empty["layout"])))
    before = empty["lab"].reshape(-1, 3)
    now = cell_colours(photo.rectified).reshape(-1, 3)
    plain = kinds == EMPTY
    before = before - np.median(before[plain], axis=0)
    now = now - np.median(now[plain], axis=0)  # most plain cells stay empty
    expected = {kind: np.median(before[kinds == kind], axis=0) for kind in set(kinds)}
    usual = np.array([expected[kind] for kind in kinds])
    return now * LAB_WEIGHT, usual * LAB_WEIGHT


def _tile_coloured(now: np.ndarray, usual: np.ndarray, tiles: np.ndarray) -> np.ndarray:
    """Cells nearer the colour of the `tiles` (their median) than their own square's: a blank
    tile, whose wood or plastic only its colour shows (in dim light within ODD_COLOUR of a
    pale square's)."""
    if not tiles.any():
        return np.zeros(len(now), bool)
    tile = np.median(now[tiles], axis=0)
    return np.linalg.norm(now - tile, axis=1) < np.linalg.norm(now - usual, axis=1)


def _laid_out(embeddings: np.ndarray, log_probs: np.ndarray, empty_refs: np.ndarray,
              count: int):
    """(turns, occupied mask in photo order): the turn whose first `count` cells in reading
    order least resemble this box's empty squares; then how much more each cell is like those
    cells (itself left out) than like the empty squares of its kind, cut into two groups. A
    laid-out cell is a tile when that or the general model says so; another cell only when
    both do."""
    n = SIZE * SIZE
    sims = embeddings @ empty_refs.T
    like_empty = np.array([_near(sims[i, [k * n + j for k in range(4) for j in mirrors]])
                           for i, mirrors in enumerate(_orbits())])
    turns = min(range(4), key=lambda k: like_empty[_first_cells(k, count)].mean())
    first = _first_cells(turns, count)
    like_tiles = embeddings @ embeddings[first].T
    like_tiles[first, np.arange(len(first))] = -1
    margin = np.array([_near(row) for row in like_tiles]) - like_empty
    order = np.sort(margin)[::-1]
    split = _two_groups(order[:SEARCH * count + 1])  # this many cells look like tiles
    by_look = margin >= order[split - 1]
    by_model = log_probs[:, load_model().glyphs.index(EMPTY)] < np.log(0.5)
    laid = np.zeros(n, bool)
    laid[first] = True
    return turns, np.where(laid, by_look | by_model, by_look & by_model)


def _two_groups(values: np.ndarray) -> int:
    """Where to cut sorted values into two groups of least total spread (Otsu)."""
    spreads = [values[:k].var() * k + values[k:].var() * (len(values) - k)
               for k in range(1, len(values))]
    return int(np.argmin(spreads)) + 1


def _near(values: np.ndarray) -> float:
    k = min(NEAR, len(values))
    return float(np.partition(values, len(values) - k)[-k:].mean())


def _first_cells(turns: int, count: int) -> np.ndarray:
    """Photo-order indices of the first `count` upright cells in reading order."""
    return np.rot90(np.arange(SIZE * SIZE).reshape(SIZE, SIZE), turns).ravel()[:count]


def _refuse_disorder(path, crops: np.ndarray, symbols: list[str]) -> list[str]:
    """The glyph each laid-out tile shows, after checking the order: the general model is
    trusted only where it is sure, and several cells it surely reads as another letter (and
    not as the one laid there) mean the letters are out of order."""
    model = load_model()
    log_probs, _ = model.run(np.ascontiguousarray(crops))
    probs = np.exp(log_probs)
    glyphs = [_star_glyph(probs[i], model.glyphs) if s == STAR else glyph_of(s)
              for i, s in enumerate(symbols)]
    mine = probs[:, [model.glyphs.index(g) for g in glyphs]]
    mine /= mine.sum(axis=1, keepdims=True)
    best = mine.argmax(axis=1)
    wrong = [i for i in range(len(symbols))
             if best[i] != i and mine[i, best[i]] >= MISREAD and mine[i, i] <= EXPECTED_LOW]
    if len(wrong) > MISREADS_ALLOWED:
        cells = ", ".join(f"{_cell_name(i)} {symbols[best[i]]} (expected {symbols[i]})"
                          for i in wrong[:8])
        raise ProfileError(code="alphabet_order", photo=path, count=len(wrong), cells=cells)
    return glyphs


def _star_glyph(probs: np.ndarray, glyphs) -> str:
    """A box's star tile shows an asterisk or nothing (a blank), if the model tells them apart."""
    blank = getattr(classifier, "BLANK", None)
    if blank not in glyphs:
        return STAR
    return blank if probs[glyphs.index(blank)] > probs[glyphs.index(STAR)] else STAR


def _cell_name(index: int) -> str:
    r, c = divmod(int(index), SIZE)
    return f"{COLUMNS[c]}{r + 1}"


def _orbits() -> list[list[int]]:
    """For each cell, the flat indices of its images under the square's 8 symmetries."""
    last = SIZE - 1
    out = []
    for r in range(SIZE):
        for c in range(SIZE):
            points = {(r, c), (c, r), (last - r, c), (r, last - c), (last - r, last - c),
                      (last - c, r), (c, last - r), (last - c, last - r)}
            out.append(sorted(a * SIZE + b for a, b in points))
    return out


def build(empty_path, alphabet_path, name: str, ruleset: Ruleset) -> Profile:
    """A profile of one box from its photos (not saved)."""
    check_name(name)
    check_readable(ruleset)  # a box's letters are read by the general model first
    empty = read_empty(empty_path, ruleset)
    layout, differences = fit_layout(empty["layout"], ruleset)
    colours = square_colours(empty["photo"], empty["layout"], empty["lab"])
    refs, letters, alphabet = empty["refs"], [], None
    kinds = np.array([EMPTY + code for code in "".join(empty["layout"])])
    classes = np.tile(kinds, len(refs) // len(kinds))  # empty_references: 4 turns of 225
    if alphabet_path is not None:
        letters, letter_refs, letter_glyphs, alphabet = read_alphabet(alphabet_path, ruleset,
                                                                      empty)
        refs = np.concatenate([refs, letter_refs])
        classes = np.concatenate([classes, letter_glyphs])
    return Profile(name=name, ruleset=ruleset.name, model=model_hash(), layout=layout,
                   colours=colours, differences=differences, refs=refs, ref_classes=classes,
                   letters=letters, empty_view=View(empty["photo"].board, 0),
                   alphabet_view=alphabet)
