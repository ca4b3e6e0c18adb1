"""Scoring: premiums only under tiles placed this move (first-use rule), letter premiums
first, then word premiums multiply (two of them: ×4, ×9); cross-words with their own premiums;
the whole rack earns the bonus; the words in order: main first, then cross-words.

Эрудит letter values used below: А Е И Н О 1; К Л П Р С Т 2; Б Г У 3; Ж Х Ь 5; Ф Ш Э 10."""

from conftest import ERUDIT, board_with, play_all, score_of

from engine import report
from engine.board import Board
from engine.game import Game
from engine.ruleset import load_ruleset


def words(score) -> list[tuple[str, str, int]]:
    return [(w.word, w.at, w.score) for w in score.words]


def test_first_word_without_premiums():
    after = board_with(("G8", "КОТ", True))
    # G8, H8 (plain centre on Эрудит), I8 plain: К2 + О1 + Т2 = 5
    assert score_of(Board(), after).total == 5


def test_first_word_on_the_scrabble_centre_is_doubled():
    after = board_with(("G8", "КОТ", True))
    # Mattel values К2 О1 Т1, H8 is ×2 word there: (2 + 1 + 1) × 2 = 8
    assert score_of(Board(), after, load_ruleset("scrabble-ru")).total == 8


def test_letter_premium_before_word_premium():
    game = Game(ERUDIT, 2)
    kot, entrekot = play_all(game, ("F8", "КОТ", True), ("A8", "ЭНТРЕ", True))
    assert kot.score.total == 5                   # К2 + О1 + Т2, no premium under F8–H8
    # ЭНТРЕКОТ from A8: Э on A8 (×3 word), Р on D8 (×2 letter):
    # (Э10 + Н1 + Т2 + Р2×2 + Е1 + К2 + О1 + Т2) × 3 = 23 × 3 = 69
    # (the other order, word first, would give 21 × 3 + 2 = 65)
    assert words(entrekot.score) == [("ЭНТРЕКОТ", "8A", 69)]


def test_premium_used_up_by_an_earlier_turn_counts_no_more():
    game = Game(ERUDIT, 2)
    *_, echo = play_all(game, ("F8", "КОТ", True), ("A8", "ЭНТРЕ", True), ("A8", ".ХО", False))
    # ЭХО down from A8 through the old Э on the ×3 word cell: Э10 + Х5 + О1 = 16 (not 48)
    assert words(echo.score) == [("ЭХО", "A8", 16)]


def test_breakdown_names_the_premium_used_and_by_which_turn():
    game = Game(ERUDIT, 2)
    *_, echo = play_all(game, ("F8", "КОТ", True), ("A8", "ЭНТРЕ", True), ("A8", ".ХО", False))
    first = report.breakdown(echo)[0]["letters"][0]
    assert first == {"cell": "A8", "letter": "Э", "value": 10, "new": False, "premium": None,
                     "used_premium": "×3 word", "used_on_turn": 2}
    assert echo.score.words[0].explain() == (
        "ЭХО A8: Э10 + Х5 + О1 = 16  [A8 ×3 word used on turn 2]")


def test_two_double_word_cells_make_four_times():
    game = Game(ERUDIT, 2)
    okno, poloska = play_all(game, ("E8", "ОКНО", True), ("E5", "ПОЛ.СКА", False))
    assert okno.score.total == 5                  # О1 + К2 + Н1 + О1
    # ПОЛОСКА E5–E11 through the old О at E8; E5 and E11 are ×2 word:
    # (П2 + О1 + Л2 + О1 + С2 + К2 + А1) × 2 × 2 = 11 × 4 = 44; 6 tiles: no bonus
    assert words(poloska.score) == [("ПОЛОСКА", "E5", 44)]
    assert poloska.score.bonus == 0 and poloska.score.total == 44


def test_two_triple_word_cells_make_nine_times():
    before = board_with(("A5", "О", True))
    after = board_with(("A1", "КАРТ.ШКА", False), start=before)
    # КАРТОШКА A1–A8, A1 and A8 ×3 word, Т on A4 ×2 letter, old О on A5:
    # (К2 + А1 + Р2 + Т2×2 + О1 + Ш10 + К2 + А1) × 3 × 3 = 23 × 9 = 207; 7 tiles: + 15 = 222
    score = score_of(before, after)
    assert words(score) == [("КАРТОШКА", "A1", 207)]
    assert (score.bonus, score.total) == (15, 222)


def test_cross_word_scores_the_new_tile_with_its_own_premium():
    game = Game(ERUDIT, 2)
    _, shar = play_all(game, ("E8", "КОЛА", True), ("D8", "ШАР", False))
    # Ш on D8 (×2 letter) counts doubled in both words it makes:
    # ШАР down: Ш10×2 + А1 + Р2 = 23; ШКОЛА across: Ш10×2 + К2 + О1 + Л2 + А1 = 26; 23 + 26 = 49
    assert words(shar.score) == [("ШАР", "D8", 23), ("ШКОЛА", "8D", 26)]
    assert shar.score.total == 49


def test_words_main_first_then_cross_words_left_to_right():
    before = board_with(("E8", "КОЛА", True))
    after = board_with(("F9", "ЛАК", True), start=before)
    # ЛАК across F9–H9, А on G9 (×2 letter): Л2 + А1×2 + К2 = 6
    # cross-words under О, Л, А: ОЛ = 1 + 2 = 3; ЛА = 2 + 1×2 = 4; АК = 1 + 2 = 3; total 16
    score = score_of(before, after)
    assert words(score) == [("ЛАК", "9F", 6), ("ОЛ", "F8", 3), ("ЛА", "G8", 4), ("АК", "H8", 3)]
    assert score.total == 16


def test_words_main_first_then_cross_words_top_to_bottom():
    before = board_with(("H7", "ЛУК", False))
    after = board_with(("I7", "ОСА", False), start=before)
    # ОСА down I7–I9, О on I7 and А on I9 (×2 letter): 1×2 + 2 + 1×2 = 6
    # cross-words: ЛО = 2 + 1×2 = 4; УС = 3 + 2 = 5; КА = 2 + 1×2 = 4; total 19
    score = score_of(before, after)
    assert words(score) == [("ОСА", "I7", 6), ("ЛО", "7H", 4), ("УС", "8H", 5), ("КА", "9H", 4)]
    assert score.total == 19


def test_single_tile_main_word_is_the_across_word():
    before = board_with(("G8", "ЛУК", True), ("G9", "ЕС", False))   # ЛУК, then ЛЕС down
    after = board_with(("H9", "Ж", True), start=before)
    # one Ж on H9 makes ЕЖ across and УЖ down; across first: Е1 + Ж5 = 6, У3 + Ж5 = 8
    assert words(score_of(before, after)) == [("ЕЖ", "9G", 6), ("УЖ", "H8", 8)]


def test_single_tile_with_only_a_down_word():
    before = board_with(("G8", "ЛУК", True))
    after = board_with(("H9", "Ж", True), start=before)
    assert words(score_of(before, after)) == [("УЖ", "H8", 8)]   # У3 + Ж5


def test_whole_rack_bonus_erudit():
    after = board_with(("H8", "КОРАБЛЬ", True))
    # H8–N8, Б on L8 (×2 letter): К2 + О1 + Р2 + А1 + Б3×2 + Л2 + Ь5 = 19; 7 tiles: + 15 = 34
    score = score_of(Board(), after)
    assert (score.bonus, score.total) == (15, 34)
    assert score.explanation[-1] == "all 7 tiles of the rack: +15"


def test_no_bonus_for_fewer_tiles_than_the_rack():
    after = board_with(("H8", "КОРАБ", True))
    # 5 tiles (say the last of a short rack), Б on L8 (×2 letter):
    # К2 + О1 + Р2 + А1 + Б3×2 = 12, no bonus
    score = score_of(Board(), after)
    assert (score.bonus, score.total) == (0, 12)


def test_gift_edition_bonus_needs_eight_tiles():
    english = load_ruleset("erudit-english")
    seven = board_with(("H8", "GIRAFFE", True))
    # H8–N8, first F on L8 (×2 letter): G2 + I1 + R1 + A1 + F4×2 + F4 + E1 = 18; rack is 8: no bonus
    assert score_of(Board(), seven, english).total == 18
    eight = board_with(("A8", "ELEPHANT", True))
    # A8 ×3 word, P on D8 ×2 letter: (E1 + L1 + E1 + P3×2 + H4 + A1 + N1 + T1) × 3 = 48; + 15 = 63
    score = score_of(Board(), eight, english)
    assert (score.bonus, score.total) == (15, 63)


def test_scrabble_bonus_is_fifty():
    after = board_with(("H8", "JUKEBOX", True))
    # centre ×2 word, B on L8 ×2 letter: (J8 + U1 + K5 + E1 + B3×2 + O1 + X8) × 2 = 60; + 50 = 110
    score = score_of(Board(), after, load_ruleset("scrabble"))
    assert (score.bonus, score.total) == (50, 110)
