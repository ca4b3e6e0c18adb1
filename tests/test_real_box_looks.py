"""The shipped networks on what real boxes look like: German umlauts on the tiles, and premium
squares printed with their label (read as empty, never as a letter). Rendered at test time in
fonts no network trained on."""

from __future__ import annotations

import numpy as np
import pytest

from engine.ruleset import SIZE
from synth.render import render_photo
from vision.cells import board_image, cut_cell
from vision.classifier import EMPTY, GLYPHS, load_model, load_second
from vision.read import read_board

GERMAN = ["." * 15, "." * 15,
          "..ÄRGER........", "." * 15,
          "......KÖNIG....", "." * 15,
          "...ÜBER...GRÜN.", "." * 15,
          ".MÄDCHEN.......", "." * 15,
          ".....ÖL...TÜR..", "." * 15,
          "..BÄR.....HÖHLE", "." * 15, "." * 15]
ENGLISH = ["." * 15] * 5 + ["....QUARTZ.....", "." * 15, "......JINX.....", "." * 15,
                            "...VOWEL.......", "." * 15, "........FUDGE..", ] + ["." * 15] * 3


def _tile_crops(shot) -> tuple[np.ndarray, list[str]]:
    """The crops of the board's tiles (cut at the true corners) and the letters they show."""
    top = board_image(shot.image, shot.corners)
    cells = [(r, c) for r in range(SIZE) for c in range(SIZE) if shot.board[r][c] != EMPTY]
    return (np.stack([cut_cell(top, r, c) for r, c in cells]),
            [shot.board[r][c] for r, c in cells])


@pytest.mark.parametrize("style, seed", [("tournament", 9_000_501), ("scrabble-hasbro", 9_000_502)])
def test_both_networks_read_umlauts_on_tiles(style, seed):
    shot = render_photo(GERMAN, seed=seed, style=style, pose="frontal", fonts="heldout")
    crops, letters = _tile_crops(shot)
    umlauts = [i for i, ch in enumerate(letters) if ch in "ÄÖÜ"]
    assert len(umlauts) == 9
    for model in (load_model(), load_second()):
        read = [GLYPHS[i] for i in model.run(crops)[0].argmax(axis=1)]
        assert [read[i] for i in umlauts] == [letters[i] for i in umlauts]


def _labelled_boxes(count: int) -> list[int]:
    """Seeds of tournament boxes whose premium squares print their label, of as many label
    sets as there are boxes asked for."""
    seeds, sets = [], set()
    for seed in range(9_000_600, 9_000_700):
        look = render_photo(["." * 15] * 15, seed=seed, style="tournament", size=(64, 48),
                            clutter=False, fonts="heldout").look
        if look.premium_text == "labels" and look.labels_set not in sets:
            seeds.append(seed)
            sets.add(look.labels_set)
            if len(seeds) == count:
                return seeds
    raise AssertionError("too few tournament boxes with printed labels")


@pytest.mark.parametrize("box", range(3))
def test_no_printed_premium_label_is_read_as_a_tile(box):
    seed = _labelled_boxes(3)[box]
    shot = render_photo(ENGLISH, seed=seed, style="tournament", pose="frontal", fonts="heldout")
    assert shot.look.premium_text == "labels"
    reading = read_board(shot.image, ruleset="scrabble")
    premium = [(r, c) for r in range(SIZE) for c in range(SIZE)
               if shot.layout[r][c] != "." and ENGLISH[r][c] == EMPTY]
    assert len(premium) > 50
    assert [reading.board[r][c] for r, c in premium] == [EMPTY] * len(premium)
