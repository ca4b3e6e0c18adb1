"""The most probable legal move from a noisy reading: what the game knows corrects the photo."""

import itertools
import random

import numpy as np
import pytest

from engine.board import Board
from engine.infer import (
    COMBOS,
    _likeliest,
    best_shift,
    deduce_stars,
    either_order,
    infer_move,
    temper,
    tile_fit,
)
from engine.ruleset import load_ruleset

ERUDIT = load_ruleset("erudit")
LABELS = [".", "*", *ERUDIT.alphabet]


def board(*placements) -> Board:
    b = Board()
    for cell_row, cell_col, word, across in placements:
        for i, ch in enumerate(word):
            b.set(cell_row + (0 if across else i), cell_col + (i if across else 0), ch)
    return b


def reading(b: Board, sure: float = 0.97) -> np.ndarray:
    """A reading that is right everywhere with probability `sure`, the rest spread evenly."""
    probs = np.full((15, 15, len(LABELS)), (1 - sure) / (len(LABELS) - 1))
    for row in range(15):
        for col in range(15):
            symbol = b[row, col]
            symbol = "*" if symbol.islower() else symbol
            probs[row, col, LABELS.index(symbol)] = sure
    return probs


def set_cell(probs, row, col, **p):
    probs[row, col] = 1e-4
    for symbol, value in p.items():
        probs[row, col, LABELS.index(symbol)] = value
    probs[row, col] /= probs[row, col].sum()


def test_clean_reading_gives_the_move():
    before = board((7, 6, "КОТ", True))
    after = board((7, 6, "КОТ", True), (5, 7, "СО", False), (8, 7, "К", False))
    result = infer_move(before, reading(after), LABELS, ERUDIT)
    assert result.board == after and result.sure


def test_hidden_old_tile_is_kept():
    before = board((7, 6, "КОТ", True))
    after = board((7, 6, "КОТ", True), (8, 8, "ОК", False))
    probs = reading(after)
    set_cell(probs, 7, 6, **{".": 0.99})          # a hand over К
    result = infer_move(before, probs, LABELS, ERUDIT)
    assert result.board == after


def test_misread_old_letter_does_not_change_history():
    before = board((7, 6, "КОТ", True))
    after = board((7, 6, "КОТ", True), (8, 8, "ОК", False))
    probs = reading(after)
    set_cell(probs, 7, 7, Л=0.9, О=0.1)          # О misread as Л in this photo
    assert infer_move(before, probs, LABELS, ERUDIT).board == after


def test_false_tile_off_the_line_is_dropped():
    before = board((7, 6, "КОТ", True))
    after = board((7, 6, "КОТ", True), (8, 8, "ОК", False))
    probs = reading(after)
    set_cell(probs, 1, 1, Р=0.8, **{".": 0.2})    # a blue square mistaken for a tile
    assert infer_move(before, probs, LABELS, ERUDIT).board == after


def test_dictionary_decides_between_two_close_letters():
    before = board((7, 6, "КОТ", True))
    after = board((7, 6, "КОТ", True), (6, 7, "Р", False), (8, 7, "Т", False))    # РОТ down H7
    probs = reading(after)
    set_cell(probs, 6, 7, Р=0.48, Б=0.52)        # Р/Б confusable: БОТ is not a noun here
    result = infer_move(before, probs, LABELS, ERUDIT)
    assert result.board["H7"] in "РБ"
    assert result.board == after or not result.sure


def test_words_of_a_letter_the_photo_barely_gave_are_not_sure():
    # the photo says Ъ, which makes no word either way; the dictionary takes the words of a
    # letter the photo barely gave, and the truth may be a third (tuning game 6 011, turn 21)
    before = board((7, 6, "КОТ", True), (9, 9, "ОСА", True))
    after = board((7, 6, "КОТ", True), (9, 9, "ОСА", True), (8, 8, "ОК", False))  # ТОК, КОСА
    probs = reading(after)
    set_cell(probs, 9, 8, Ъ=0.85, К=0.05, **{".": 0.01})
    result = infer_move(before, probs, LABELS, ERUDIT)
    assert result.board == after and not result.sure
    set_cell(probs, 9, 8, Ъ=0.6, К=0.35, **{".": 0.01})                  # a fair share: sure
    result = infer_move(before, probs, LABELS, ERUDIT)
    assert result.board == after and result.sure


def test_a_word_whose_line_runs_on_into_a_tile_the_photo_shows_is_not_sure():
    # the dictionary chose the shorter word over a tile whose letter the photo could not make
    # out (tuning game 6 063, turn 14: АРАП proposed, a tile at 0.89 above it, the truth ШАРАП)
    before = board((7, 6, "КОТ", True))
    after = board((7, 6, "КОТ", True), (8, 8, "ОК", False))  # ТОК
    letters = "ЪЫЬЩЦЖЭЮФШ"
    for tile, sure in ((0.89, False), (0.5, True)):   # a cell as likely empty as not: sure
        probs = reading(after)
        set_cell(probs, 10, 8, **{ch: tile / len(letters) for ch in letters}, **{".": 1 - tile})
        result = infer_move(before, probs, LABELS, ERUDIT)
        assert result.board == after and result.sure == sure
        assert result.shown == ([] if sure else [(10, 8)])   # named for the player to check


def test_unsure_move_lists_alternatives_with_scores():
    before = board((7, 6, "КОТ", True))
    after = board((7, 6, "КОТ", True), (8, 8, "ОК", False))
    probs = reading(after)
    set_cell(probs, 9, 8, К=0.5, Н=0.5)  # ТОК (2+1×2+2=6) or ТОН (2+1×2+1=5): both nouns
    result = infer_move(before, probs, LABELS, ERUDIT)
    assert not result.sure
    assert result.board["I10"] in "КН"
    other = result.alternatives[0]
    assert other["tiles"][-1]["letter"] in "КН" and other["score"] in (5, 6)
    assert 0.3 < other["p"] < 0.7


def test_unchanged_board_is_a_pass():
    before = board((7, 6, "КОТ", True))
    assert infer_move(before, reading(before), LABELS, ERUDIT).board == before


def test_first_move_must_cover_the_centre():
    after = board((7, 6, "КОТ", True))
    probs = reading(after)
    set_cell(probs, 0, 0, Ж=0.9, **{".": 0.1})    # a loose tile in the corner
    assert infer_move(Board(), probs, LABELS, ERUDIT).board == after


def test_faint_speck_that_would_make_a_word_is_still_a_pass():
    before = board((7, 6, "КОТ", True))
    probs = reading(before)
    set_cell(probs, 6, 6, Я=0.05, **{".": 0.95})   # a speck read as Я above К: ЯК is a noun
    result = infer_move(before, probs, LABELS, ERUDIT)
    assert result.board == before and result.sure


def test_a_first_move_read_off_the_centre_is_no_sure_pass():
    # a grid found rows off shows the first word where no first move can lie
    shown = board((1, 5, "МЕЧ", True))
    result = infer_move(Board(), reading(shown, sure=0.995), LABELS, ERUDIT)
    assert result.board == Board() and not result.sure


def test_a_pass_is_unsure_while_a_tile_plainly_shows_off_the_line():
    before = board((7, 6, "КОТ", True))
    probs = reading(before)
    set_cell(probs, 12, 12, Ж=0.995, **{".": 0.005})   # plainly a tile, but off the line
    result = infer_move(before, probs, LABELS, ERUDIT)
    assert result.board == before and not result.sure and result.shown == [(12, 12)]


def test_next_turns_tiles_seen_early_wait_for_their_turn():
    before = board((7, 6, "КОТ", True))
    now = board((7, 6, "КОТ", True), (8, 8, "ОК", False))                   # ТОК down I8
    then = board((7, 6, "КОТ", True), (8, 8, "ОК", False), (6, 6, "Я", False))
    probs = reading(now)
    set_cell(probs, 6, 6, Я=0.45, **{".": 0.55})   # this photo half shows next turn's tile
    result = infer_move(before, probs, LABELS, ERUDIT, later=(reading(then), reading(then)))
    assert result.board == now


def test_tile_that_later_photos_do_not_show_is_not_placed():
    before = board((7, 6, "КОТ", True))
    probs = reading(before)
    set_cell(probs, 6, 6, Я=0.9, **{".": 0.1})    # glare read as a tile above К (ЯК)
    assert infer_move(before, probs, LABELS, ERUDIT).board != before   # one photo: believed
    later = (reading(before), reading(before))
    assert infer_move(before, probs, LABELS, ERUDIT, later=later).board == before


def test_later_photos_outvote_a_misread_new_letter():
    before = board((7, 6, "КОТ", True))
    after = board((7, 6, "КОТ", True), (8, 8, "ОК", False))
    probs = reading(after)
    set_cell(probs, 9, 8, Н=0.8, К=0.2)          # ТОН, a noun too: the photo alone says Н
    assert infer_move(before, probs, LABELS, ERUDIT).board["I10"] == "Н"
    later = (reading(after), reading(after))
    assert infer_move(before, probs, LABELS, ERUDIT, later=later).board == after


def test_next_turns_tiles_in_the_same_line_are_left_for_it():
    before = board((7, 6, "ПАР", True))
    now = board((7, 6, "ПАРК", True))                     # ПАРК, then ПАРКЕТ next turn
    then = board((7, 6, "ПАРКЕТ", True))
    result = infer_move(before, reading(now), LABELS, ERUDIT, later=(reading(then), reading(then)))
    assert result.board == now


def test_tempering_a_doubtful_photo_keeps_an_empty_cell_empty():
    probs = reading(board((7, 6, "КОТ", True)))
    flat = temper(probs, 0.2, LABELS)
    assert np.allclose(flat.sum(-1), 1)
    assert flat[0, 0, LABELS.index(".")] > 0.5        # flattened, yet still empty
    assert flat[7, 6, LABELS.index("К")] == flat[7, 6, 1:].max()   # and К the likeliest letter


@pytest.mark.parametrize("turns", [1, 2, 3])
def test_alignment_finds_the_side_the_photo_was_taken_from(turns):
    before = board((7, 6, "КОТ", True), (5, 8, "ТОК", False))
    probs = np.rot90(reading(before), k=-turns)            # the photo turned clockwise
    scores = [tile_fit(before, np.rot90(probs, k=k), LABELS) for k in range(4)]
    assert int(np.argmax(scores)) == turns


def test_a_grid_found_cells_off_is_moved_back():
    before = board((7, 6, "КОТ", True), (5, 8, "ТОК", False))
    probs = np.roll(reading(before), (1, -2), axis=(0, 1))   # grid one row down, two left
    assert best_shift(before, probs, LABELS)[1] == (1, -2)


def test_star_letter_deduced_when_only_one_letter_makes_words():
    before = board((7, 6, "КОТ", True))
    after = board((7, 6, "КОТ", True), (8, 6, "*", False), (9, 6, "ША", True))
    result = deduce_stars(before, after, ERUDIT)
    assert result["G9"] in ("*", result["G9"].lower())


@pytest.mark.parametrize("cells", [1, 3, 7])
def test_likeliest_letterings_in_the_order_a_full_sort_gives(cells):
    """Ties included (log-probabilities from a few values): the same picks in the same order
    as sorting every combination by its summed log-probability."""
    rng = random.Random(cells)
    options = [[(letter, rng.choice([-0.1, -0.7, -2.3, -0.1 - 0.2]))
                for letter in rng.sample(ERUDIT.alphabet, 3)] for _ in range(cells)]
    expected = sorted(itertools.product(*options),
                      key=lambda combo: -sum(lp for _, lp in combo))[:COMBOS]
    assert _likeliest(options) == expected


def test_a_one_tile_move_is_weighed_against_the_many_runs_of_the_next_moves_tiles():
    # this photo cannot tell whether next turn's КАРТОНКА is down yet (the far rows of a photo
    # from a chair): each of its many runs outscores the clear Ы alone, yet the next photos
    # show it played a turn later
    before = board((7, 6, "КОТ", True))
    after = board((7, 6, "КОТЫ", True))
    then = board((7, 6, "КОТЫ", True), (7, 6, "КАРТОНКА", False))
    probs = reading(after)
    set_cell(probs, 7, 9, **{".": 0.1, "Ы": 0.9})
    for row, letter in enumerate("АРТОНКА", 8):
        set_cell(probs, row, 6, **{".": 0.5, letter: 0.5})
    later = (reading(then), reading(then))
    assert infer_move(before, probs, LABELS, ERUDIT, later=later).board == after


def test_two_moves_seen_together_may_have_come_in_either_order():
    before = board((7, 6, "КОТ", True))
    middle = board((7, 6, "КОТ", True), (6, 7, "ДОМ", False))
    assert either_order(before, middle, board((7, 6, "КОТЫ", True), (6, 7, "ДОМ", False)), ERUDIT)
    # ДОМА needs the М of ДОМ: it came second
    assert not either_order(before, middle, board((7, 6, "КОТ", True), (6, 7, "ДОМА", False)),
                            ERUDIT)
    assert not either_order(before, before, middle, ERUDIT)  # a pass and a move
