"""Finding and rectifying the grid: rendered hard cases, every error case, and the real photos."""

import csv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from bench.bench_locate import late_board
from engine.errors import PhotoError
from engine.ruleset import SIZE
from synth.photos import dimmed, shadowed
from synth.render import render_photo
from vision.locate import (
    LSD_SIDES,
    STEADY_QUALITY,
    SURE_MISFIT,
    SURE_QUALITY,
    VIEW_CELL,
    Location,
    _alone,
    _better,
    _clean_pieces,
    _crossing_lattices,
    _exposure_gain,
    _fitted,
    _fitted_rescaled,
    _grid_regions,
    _grid_view,
    _lattices,
    _misfit,
    _moved_onto_layout,
    _pyramid,
    _refine_location,
    _refined_past_tiles,
    _rescale,
    _segments,
    _settled,
    _shifted,
    _steady,
    _stretched,
    _sure,
    _vanishing_lattice,
    cell_size,
    grid_homography,
    locate_board,
    order_corners,
)
from vision.photo import load_for_reading, load_photo
from vision.premium import read_premiums
from vision.rectify import CELL_PX, rectify

SHARED = Path(__file__).resolve().parents[2] / "shared" / "external"
EMPTY = ["." * 15] * 15
PLAYED = ["." * 15] * 7 + ["...ЭРУДИТ......"] + ["." * 15] * 7
EDGES = ["КОТ.........ДОМ", "О.............О", "Т.............М"] + ["." * 15] * 9 + [
    "Л.............С", "Е.............О", "СОК.........ЛЕС"]  # tiles hide all four corners
LATE_GAME = [
    "Ф.К.ХГ.*ГД.Н.ЬБ", ".ЮИ..ЙР..Ш.М.БВ", ".К......ИЗЖДЯ.Й",
    ".РРЗ.Ш...Ц..Д..", "..АНЮ......ОФ..", "Й.ЙВ..ОГ.....ЮИ",
    "Ь.СМ.*.Ю..*ФЦМС", "Ы.Д.Ы.Т..УП..ЦХ", ".ЧБ..О..УФ.....",
    ".Ш.ТЩГ.ГЮС...Й.", "Ш..Я.ЬЩГ.Ы.ЭК..", "...*....ЫУ*ЙПЕ.",
    "Э.ЕЧЙЮ.Б.Д..КОЩ", "ЫС.ЕО.Б.У.....Л", "...Л.Э...РД..РЛ",
]  # 112 tiles, as late in a game: on most squares of several kinds a tile lies
STEEP_LATE_GAME = [
    ".Я.ЕЗ.ЯЦСЭЯ..Х.", "..ХФ*Э*Д.ЛВЖЛЦЫ", "......Н......Ы.", ".ЛХБ.ЦЭМ..Й..Д.",
    "ЗР.Ц.Ь.ХВФЮ....", "ЦЬ.ЮВМЪЩ...ХОНУ", "..ГЩ*ЧЮШМВ.ХГН*", "..С.ЯО.Щ.Ф*.Е.Ц",
    "Ю.Ю....Ы....*Д.", "Р.К..У.ХЧ.ЭЛХЙ.", ".ВНЪЫЭ.Ц...ИПЗ.", "*ЮБТ.Р..У.ТЛ.*В",
    "Т.Щ..ДЙО.ЯЛЮ.щ.", "Ш.ХНТЩЙЮЪ.Ш.БТТ", "ЯВ..Щ.ФХ...З..Щ",
]  # 131 tiles: the held-out render 9 000 044 of bench.eval_read, whose tall tiles are seen low
ROW_OFF_LATE_GAME = [
    ".С.*...Ю..ФО...", "..Н.СО..БЫ..БУ.", ".П....Ц.Щ..Ч.ГЮ", ".*БЦ.ОРХ.Ри..ИШ",
    "..ЗЩ....Л....ФХ", ".Б.ЪЙ.Ы....иШП*", "..Р....НИМД.Г..", "Й..ЮПЬРО...Ю..Х",
    "Ц...ЗЪ.ЩЬЖЙЧЛ..", "Т.Б.И.*ЙЛ..Б..Щ", "щ...ЭФ.ДН.ЬК..М", ".К.....ЬЕЛ..КС.",
    ".ЬЖ.ВЗЪ..Э.НЬЩА", ".З.КЯШВЫ.нЖ..Х.", ".АВ...У.Г..уФ.Н",
]  # 112 tiles: the tuning render 7 000 072 of bench.eval_read
DIM_LATE_GAME = [
    "Ш..*Ц.В.З.Э...М", ".ЭЦЦ.Г.*дДФП..В", "Р.И..АЯ..Б.В.Ь.", "ЙУ.*И...ЦЕСА...",
    ".Ч..Ж..Ч.ВН.ЙА.", "В.Ш.ЮЫуШ...ДЫЮ.", "ШС.Ж.Б.*ОДФ...*", ".Ь.ЬДЛ...РЩН...",
    ".ДИЮНК.Ж.З.Р..Ж", "УВАЖ*Ю.Д.Ю...Ь.", ".ЩФ.М..ЗЬЪ.П*.О", "..Ы.К..ИМ.Ж....",
    ".А....Ц....О.К.", "МЮЦ...ППХУШОФ..", "...З.ЕМЮЕ.ЭЙЛ.В",
]  # 119 tiles: the tuning render 7 001 128 of bench.eval_read's seeds
SHADED_LATE_GAME = [
    "Ы..Ж..КО.Ь....*", ".ДР.НК.Ф.Ъ.Б.Щ*", "М.Ж.Л.И..*УЯ...", "ЕЕЮ.Ш.Ю*.К.ТН*.",
    "..Э.С.ШНЛ.О..Ц.", "СЭХЩЩЩ.КЩ*.Ц..Щ", "И.ГЪ*.Я.Щ.Ц.Ч..", "ЩИИ.....В.А.ВЪЛ",
    ".О.Ь.А.ОЭ..У..Х", "Гш..ЪЗ...РЛЫ..Й", "З.Е.Ь..*Ж*О..Э.", "..Ю..ЦЪШ.ИТЮГ.Щ",
    "*Б.*Ы.Ч.СШ..Ч..", "И..Г..Ф.Е...ЛЗТ", "Й.Ш.Я.ШШ..ФЛЮ.Ы",
]  # 122 tiles: the tuning render 7 000 041 of bench.eval_read's seeds
SHADED_BLACK_GAME = [
    "М......Й.А.....", "П......С...Н.Д.", "...*......М..Ц.", "Ю..Ш.ы...Ц.В...",
    ".........Ъ.Э..В", "......ЗЦЭ..В...", "ЦЛ...Г.........", "Щ......ГЛЬ...Ж*",
    ".Ъ.М..ЫБС...М.*", "...ЪОЙ..РВД....", "ШЕЫ.....Ю.*Н...", "ФЖ.......Д.....",
    "....ХЙ....Ю...Ю", "...Э........П.Р", "...ЮЪ..Х.Ф.К..Ю",
]  # 66 tiles: the tuning render 7 001 160 of bench.eval_read's seeds
TOLERANCE = 0.01  # of the board diagonal, as in bench/eval_locate.py
QUARTER_CELL = 0.25 / (SIZE * 2 ** 0.5)  # of the board diagonal


def corner_error(found, truth) -> float:
    diagonal = float(np.linalg.norm(truth[0] - truth[2]))
    return min(float(np.linalg.norm(np.roll(found, k, axis=0) - truth, axis=1).max())
               for k in range(4)) / diagonal


def located_well(shot) -> Location:
    where = locate_board(shot.image)
    assert corner_error(where.corners, shot.corners) < TOLERANCE
    return where


@pytest.mark.parametrize("style", ["erudit-black", "erudit-cream", "scrabble-hasbro", "scrabble-vintage"])
def test_each_board_look_is_found_in_a_webcam_frame(style):
    shot = render_photo(PLAYED, seed=11, style=style, size=(1280, 720))
    where = located_well(shot)
    assert 0 < where.quality <= 1
    sides = np.linalg.norm(shot.corners - np.roll(shot.corners, 1, axis=0), axis=1)
    assert where.cell_px == pytest.approx(sides.mean() / 15, rel=0.05)


@pytest.mark.parametrize("seed", [3, 8, 21])
def test_tilted_and_turned_photos_with_clutter(seed):
    located_well(render_photo(PLAYED, seed=seed, style="erudit-black", pose="any"))


def test_tiles_on_every_corner_cell_do_not_move_the_grid():
    located_well(render_photo(EDGES, seed=5, style="erudit-cream", size=(1600, 1200)))


@pytest.mark.parametrize("style", ["erudit-black", "scrabble-vintage"])
def test_a_grid_off_by_whole_cells_is_moved_back_onto_the_premium_layout(style):
    from vision.locate import _layout_shift

    shot = render_photo(PLAYED, seed=13, style=style, pose="frontal")
    corners = order_corners(shot.corners)
    for dx, dy in [(1, 0), (0, -2), (-1, 1)]:
        wrong = _shifted(corners, (dx, dy))  # a margin or a row of tiles taken for cells
        assert _layout_shift(shot.image, wrong)[0] == (-dx, -dy)
    shift, misfit = _layout_shift(shot.image, corners)
    assert shift == (0, 0) and misfit < 0.7


@pytest.mark.parametrize(("seed", "pose"), [(1, "any"), (4, "frontal")])
def test_late_game_board_whose_tiles_outnumber_its_empty_squares(seed, pose):
    from vision.locate import _layout_shift

    # tiles hide the premium squares: the layout must still tell the grid from one a cell off
    shot = render_photo(LATE_GAME, seed=seed, style="erudit-black", pose=pose)
    corners = order_corners(shot.corners)
    for dx, dy in [(0, 0), (1, 0), (0, -1)]:
        assert _layout_shift(shot.image, _shifted(corners, (dx, dy)))[0] == (-dx, -dy)
    located_well(shot)


@pytest.mark.parametrize(("seed", "style"), [(104, "erudit-black"), (105, "erudit-cream"),
                                             (107, "scrabble-vintage")])
def test_late_game_grid_a_cell_off_is_moved_back_whichever_colour_it_takes_for_the_tiles(
        seed, style):
    from vision.locate import _layout_shift

    # from a grid a cell off, the commonest colours of its own cells can pass for the tiles'
    # the wrong way round; the board's grid is then judged by the wrong colour
    shot = render_photo(late_board(seed, style), seed=seed, style=style, fonts="train")
    corners = order_corners(shot.corners)
    for dx, dy in [(1, 0), (0, 1), (-1, 0), (0, -1)]:
        assert _layout_shift(shot.image, _shifted(corners, (dx, dy)))[0] == (-dx, -dy)


def located_noting_last_stage(monkeypatch, shot) -> tuple[Location, bool]:
    """located_well, and whether the search reached its last stage (outlines, scale search)."""
    import vision.locate as locate

    searched = []
    rescaled = locate._rescaled_if_off
    monkeypatch.setattr(locate, "_rescaled_if_off",
                        lambda *args: searched.append(1) or rescaled(*args))
    return located_well(shot), bool(searched)


def first_lattice_fit(shot, side: int):
    """(levels, fit) of the first line lattice of one segment size, refined onto the grid."""
    levels = _pyramid(shot.image)
    fit = _fitted(levels, _lattices(_segments(levels[-1][0], side), [(0, 1)])[0])
    assert corner_error(fit[0], shot.corners) < TOLERANCE
    return levels, fit


def test_guesses_refined_side_by_side_give_the_grid_one_thread_finds(monkeypatch):
    import vision.locate as locate

    # this late game takes the search to its last stage, whose many guesses and scale
    # searches run on threads: the fits must be weighed as one thread would weigh them
    shot = render_photo(LATE_GAME, seed=4, style="erudit-cream")
    together, last_stage = located_noting_last_stage(monkeypatch, shot)
    assert last_stage
    monkeypatch.setattr(locate, "SEARCH_THREADS", 1)
    np.testing.assert_array_equal(locate_board(shot.image).corners, together.corners)


def test_a_size_whose_lattice_by_direction_fits_nothing_looks_where_its_lines_cross_at_once(monkeypatch):
    import vision.locate as locate
    from bench.eval_locate import ERUDIT_LETTERS, random_board

    # the strongest directions at the smallest size are a cloth's stripes: the board is found
    # where that size's lines cross, without the larger sizes (which see the same stripes)
    # and without the lattice of the stripes' vanishing points (a refinement of ~30 ms)
    shot = render_photo(random_board(np.random.default_rng(10_021), ERUDIT_LETTERS), seed=21,
                        style="erudit-cream")
    sides, crossed, vanished = [], [], []
    segments, crossing = locate._segments, locate._crossing_fit
    vanishing = locate._vanishing_lattice
    monkeypatch.setattr(locate, "_segments",
                        lambda small, side, **named: sides.append(side) or segments(
                            small, side, **named))
    monkeypatch.setattr(locate, "_crossing_fit",
                        lambda levels, size, best: crossed.append(1) or crossing(levels, size, best))
    monkeypatch.setattr(locate, "_vanishing_lattice",
                        lambda found: vanished.append(1) or vanishing(found))
    located_well(shot)
    assert sides == [LSD_SIDES[0]] and crossed == [1] and not vanished


def test_a_copy_too_plain_for_enough_segments_is_not_searched_for_them(monkeypatch):
    import vision.locate as locate

    # bench_read's late Эрудит-black board: at the smallest size LSD finds too few segments
    # for the grid (4 ms for nothing). That copy shows too few edges to hold them, so LSD is
    # not run there, and the board is found at the next size just where it was before.
    shot = render_photo(late_board(100, "erudit-black"), seed=100, style="erudit-black",
                        size=(4000, 3000))
    small = _pyramid(shot.image)[-1][0]
    segments = _segments(small, LSD_SIDES[0])
    assert segments is not None and len(segments[0]) < locate.MIN_QUICK_SEGMENTS
    assert _segments(small, LSD_SIDES[0], skim=True) is None
    skimmed = locate_board(shot.image).corners
    monkeypatch.setattr(locate, "PLAIN_COPY", 0.0)
    assert np.array_equal(locate_board(shot.image).corners, skimmed)
    assert corner_error(skimmed, shot.corners) < TOLERANCE


def test_from_a_chair_a_faint_lattice_by_direction_waits_for_the_one_by_vanishing_points(
        monkeypatch):
    import vision.locate as locate
    from bench.eval_locate import ERUDIT_LETTERS, corner_error, random_board
    from bench.eval_read import render_taken

    # eval_locate's photo 53 from a chair: the first view of the lattice by direction shows
    # about half its line pieces, the one by vanishing points 0.8. That one is refined first
    # and found sure; the other, once refined for nothing, is not refined at all
    image, truth = render_taken(random_board(np.random.default_rng(10_053), ERUDIT_LETTERS),
                                53, "seated", style="erudit-cream", pose="any")
    levels = _pyramid(image)
    by_direction = _lattices(_segments(levels[-1][0], LSD_SIDES[0]), [(0, 1)])[0]
    assert locate.MIN_QUALITY <= locate._first_view(levels, by_direction).quality < locate.WEAK_GUESS
    refined = []
    fitted = locate._fitted
    monkeypatch.setattr(locate, "_fitted",
                        lambda levels, corners, *more: refined.append(corners) or fitted(
                            levels, corners, *more))
    assert corner_error(locate_board(image).corners, truth) < TOLERANCE
    assert refined and not any(np.array_equal(corners, by_direction) for corners in refined)


STRIPED_TABLE = (["." * 15] * 5 + ["..С..А..О......", "..*..П..Р.М....", "ПРОКРАСТИНАЦИЯ.",
                 "..Р..Т..Е.М....", "..О..И..Н.О....", "..Ж..Я..Т.Н....", ".......ПИХТА...",
                 "........Р......"] + ["." * 15] * 2)  # bench_read's board


def test_a_guess_on_a_striped_cloth_is_given_up_after_one_snap(monkeypatch):
    import vision.locate as locate

    # bench_read's first rendered photo: the smallest size's strongest directions are the
    # table's stripes, whose lattice shows no lines and none of the layout (five snaps and
    # ~30 ms of a 12 MP photo's read before they were given up)
    shot = render_photo(STRIPED_TABLE, seed=9_050_000, style="erudit-black", size=(4000, 3000))
    levels = _pyramid(shot.image)
    stripes = _lattices(_segments(levels[-1][0], LSD_SIDES[0]), [(0, 1)])[0]
    snaps = []
    snap = locate._snap_to_lines
    monkeypatch.setattr(locate, "_snap_to_lines", lambda *args: snaps.append(1) or snap(*args))
    assert _refine_location(levels, stripes) is None
    assert len(snaps) == 1
    assert corner_error(locate_board(shot.image).corners, shot.corners) < TOLERANCE


def test_a_lattice_by_direction_that_shows_no_lines_waits_for_where_the_lines_cross(monkeypatch):
    import vision.locate as locate

    # the same photo: the stripes' lattice shows under HOPELESS of its line pieces at first
    # sight, so the crossing lines are looked at first; their fit is sure, and the stripes'
    # lattice is never refined (a wasted snap, ~9 ms of the read, session 58)
    shot = render_photo(STRIPED_TABLE, seed=9_050_000, style="erudit-black", size=(4000, 3000))
    levels = _pyramid(shot.image)
    stripes = _lattices(_segments(levels[-1][0], LSD_SIDES[0]), [(0, 1)])[0]
    assert locate._first_view(levels, stripes).quality < locate.HOPELESS
    refined = []
    refine = locate._refine_location
    monkeypatch.setattr(locate, "_refine_location",
                        lambda levels, corners, *more, **named: refined.append(corners) or refine(
                            levels, corners, *more, **named))
    assert corner_error(locate_board(shot.image).corners, shot.corners) < TOLERANCE
    assert refined and not any(np.abs(corners - stripes).max() < 1 for corners in refined)


def test_a_family_whose_comb_took_a_table_s_stripes_is_combed_again_near_the_other(
        tmp_path, monkeypatch):
    import vision.locate as locate
    from bench.bench_read import turned_photos

    # bench_read's second render as its camera would save it from the other side of the table
    # (`--turned`): at the smallest size the stripes give one family a comb 2.4 times finer
    # than the other's, and that lattice shows under WEAK_GUESS of its line pieces. Combed
    # again near the other family's period it is sure there, and the larger size is never
    # looked at (its read 2.5 -> 1.9 times one decode, session 59).
    shot = render_photo(STRIPED_TABLE, seed=9_050_001, style="erudit-black", size=(4000, 3000))
    cv2.imwrite(str(tmp_path / "striped.jpg"), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    image, factor = load_for_reading(turned_photos([tmp_path / "striped.jpg"], tmp_path)[0])
    levels = _pyramid(image)
    segments = _segments(levels[-1][0], LSD_SIDES[0])
    squared = []
    lattice = _lattices(segments, [(0, 1)], squared)[0]
    first = locate._first_view(levels, lattice)
    assert locate.MIN_QUALITY <= first.quality < locate.WEAK_GUESS and len(squared) == 1
    fit = locate._squared_ahead(levels, locate._Look(segments, [lattice], squared=squared), [first])
    truth = np.array(shot.image.shape[1::-1]) - 1 - shot.corners  # turned half round
    assert locate._sure(levels, fit) and corner_error(fit[0] * factor, truth) < TOLERANCE
    sides = []
    look = locate._segments
    monkeypatch.setattr(locate, "_segments", lambda small, side, **named: sides.append(
        side) or look(small, side, **named))
    assert corner_error(locate_board(image).corners * factor, truth) < TOLERANCE
    assert sides == [LSD_SIDES[0]]


def test_a_steady_fit_gives_way_to_a_sure_one_where_lines_cross_with_far_more_lines(
        monkeypatch):
    import vision.locate as locate
    from bench.eval_locate import ERUDIT_LETTERS, corner_error, random_board
    from bench.eval_read import render_taken

    # eval_locate's photo 324 from a chair, an empty board: every size's best fit shows half
    # its line pieces and passes for steady (a late game's test), 1.6 cells off at a far
    # corner; where the lines cross gives a sure fit of 0.92 (session 59)
    image, truth = render_taken(random_board(np.random.default_rng(10_324), ERUDIT_LETTERS),
                                324, "seated", style="erudit-black", pose="frontal")
    steady = []
    judge = locate._steady
    monkeypatch.setattr(locate, "_steady", lambda levels, fitted: judge(levels, fitted) and (
        steady.append(fitted) or True))
    found = locate_board(image)
    assert steady and corner_error(steady[0][0], truth) > 5 * TOLERANCE
    assert corner_error(found.corners, truth) < TOLERANCE and found.quality > 0.9


def test_a_faint_board_whose_cells_show_the_layout_is_refined_on():
    from bench.eval_locate import ENGLISH_LETTERS, random_board

    # eval_locate's photo 258 in dim light: its lines barely stand out from the first guess
    # on (line quality under 0.1), but the premium layout explains its cells
    rng = np.random.default_rng(10_258)
    shot = render_photo(random_board(rng, ENGLISH_LETTERS), seed=258, style="scrabble-hasbro",
                        pose="any")
    assert corner_error(locate_board(dimmed(shot.image, 258)).corners, shot.corners) < TOLERANCE


def grid_segments(corners, centre, clutter=0, seed=0):
    """`_segments`' tuple for the pieces of the 16 + 16 lines of a grid whose outer corners are
    `corners` (photo px), between the lines they cross, and `clutter` random segments."""
    to_photo = grid_homography(corners)
    pieces = []
    for line in range(SIZE + 1):
        for cell in range(SIZE):
            pieces += [[(line, cell + 0.1), (line, cell + 0.9)], [(cell + 0.1, line), (cell + 0.9, line)]]
    ends = cv2.perspectiveTransform(np.float64(pieces).reshape(1, -1, 2), to_photo).reshape(-1, 2, 2)
    centre = np.float64(centre)
    rng = np.random.default_rng(seed)
    starts = rng.uniform(0, 2 * centre, (clutter, 2))
    ends = np.concatenate([ends, np.stack([starts, starts + rng.normal(0, 15, (clutter, 2))], 1)])
    ends -= centre
    vectors = ends[:, 1] - ends[:, 0]
    lengths = np.linalg.norm(vectors, axis=1)
    angles = np.degrees(np.arctan2(vectors[:, 1], vectors[:, 0])) % 180
    return ends, vectors, lengths, angles, centre, min(centre) * 2 / 90


def cells_off(found, corners) -> float:
    """Largest distance, in the grid's cells, of a found corner from its true one."""
    square = np.float64([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]])
    to_grid = np.linalg.inv(grid_homography(corners))
    grid = cv2.perspectiveTransform(np.float64(found).reshape(1, -1, 2), to_grid)[0]
    return min(float(np.abs(np.roll(grid, k, axis=0) - square).max()) for k in range(4))


# a board seen from a chair through a phone's lens: both vanishing points lie just past the
# photo (1000 × 700 px), the far cells are a quarter the size of the near ones, and one
# family's lines turn by 60° across the board
FROM_A_CHAIR = [[420, 210], [610, 170], [930, 640], [170, 690]]


def test_a_lattice_keeps_the_cell_size_of_a_board_seen_from_a_chair():
    # the board of tuning render 7 000 185 seen from a chair (shrunk to 1000 × 731 px): the
    # horizon runs near the photo's centre, and flattening shrinks the cells below the
    # smallest looked for, unless its comb is fitted in photo px
    board = [[5, 261], [355, 93], [361, 410], [156, 643]]
    segments = grid_segments(board, (500, 365.5), clutter=150)
    assert cells_off(_lattices(segments, [(0, 1)])[0], board) < 0.2


def test_a_lattice_from_vanishing_points_takes_a_family_whose_lines_turn_far():
    # a family whose lines turn by more than FAMILY_SPREAD has two peaks of direction: the
    # strongest pair of peaks then holds half a family; its vanishing point holds all of it
    segments = grid_segments(FROM_A_CHAIR, (500, 350), clutter=150)
    lattice = _vanishing_lattice(segments)
    assert len(lattice) == 1 and cells_off(lattice[0], FROM_A_CHAIR) < 0.1


def test_a_lattice_holds_a_board_on_the_far_side_of_the_horizon_from_the_photo_centre():
    # the board of tuning game 6 019's 11th photo from a chair (shrunk to 642 × 1000 px):
    # aimed high, the horizon crosses the photo below its centre, above the board
    board = [[117, 786], [327, 761], [390, 925], [21, 948]]
    lattice = _vanishing_lattice(grid_segments(board, (321, 500)))
    assert len(lattice) == 1 and cells_off(lattice[0], board) < 0.1


def test_a_board_seen_from_a_chair_is_found(monkeypatch):
    import vision.locate as locate

    # its families' lines turn too far for one direction each: where they meet finds the grid
    # (a lattice only looked for where the directions' lattice is not sure: from above it is)
    called = []
    vanishing = locate._vanishing_lattice
    monkeypatch.setattr(locate, "_vanishing_lattice",
                        lambda segments: called.append(1) or vanishing(segments))
    located_well(render_photo(PLAYED, seed=5, style="erudit-cream", pose="seated"))
    assert called
    called.clear()
    located_well(render_photo(PLAYED, seed=5, style="erudit-cream"))
    assert not called


def test_a_grid_of_half_the_period_one_way_is_stretched_back_onto_the_board():
    # From a chair the comb once took half the period across the board (tuning game 6 008's
    # 14th photo): a grid over the board's middle half that the layout explains nothing of.
    # Twice as long that way, moved and scaled onto the layout, and refined, it is the board.
    shot = render_photo(PLAYED, seed=5, style="erudit-cream", pose="seated")
    levels = _pyramid(shot.image)
    scale = levels[-1][1]
    to_photo = grid_homography(shot.corners)
    half = np.float32([[[3.5, 0], [11, 0], [11, SIZE], [3.5, SIZE]]])  # 7.5 columns as 15
    crowded = _rescale(cv2.perspectiveTransform(half, to_photo)[0], 1.0, scale)
    assert _misfit(levels[-1][0], crowded) > SURE_MISFIT
    stretched = _stretched(crowded, 0, 0.5)
    assert cells_off(_rescale(stretched, scale, 1.0), shot.corners) == pytest.approx(0.25, abs=0.01)
    fit = _fitted_rescaled(levels, stretched)
    assert corner_error(fit[0], shot.corners) < TOLERANCE and _sure(levels, fit)
    down = _stretched(np.float32([[0, 0], [10, 0], [10, 10], [0, 10]]), 1, 0.0)
    assert np.allclose(down, [[0, 0], [10, 0], [10, 20], [0, 20]])


def test_the_last_stage_weighs_its_guesses_in_order_and_stops_at_the_first_sure_one(monkeypatch):
    import vision.locate as locate

    # a guess there costs up to ~750 ms: once one is sure, the guesses not begun are not run
    monkeypatch.setattr(locate, "_sure", lambda levels, fit: fit is not None and fit[1] > 0.5)
    ran = []

    def guess(score):
        return lambda: ran.append(score) or (INSIDE, score, 0.9, 0.2)

    levels = _pyramid(np.zeros((300, 300, 3), np.uint8))
    with ThreadPoolExecutor(2) as pool:
        best = locate._first_sure(levels, pool, None, [guess(s) for s in (0.1, 0.6, 0.9, 0.3, 0.8)])
    assert best[1] == 0.6 and 0.3 not in ran and 0.8 not in ran
    with ThreadPoolExecutor(2) as pool:
        best = locate._first_sure(levels, pool, None, [guess(s) for s in (0.1, 0.3, 0.2)])
    assert best[1] == 0.3 and sorted(ran[-3:]) == [0.1, 0.2, 0.3]


INSIDE = np.float32([[20, 20], [280, 20], [280, 280], [20, 280]])  # a grid a 300 px photo holds


def test_a_fit_the_photo_holds_wins_over_one_cut_off_by_its_edge():
    # A shadow over half a late board let a grid five cells off, past the photo's edge, fit the
    # layout better than the board's own, and the photo was refused as cut off (tuning render
    # 7 000 041 in a shadow). Plausibility still comes first, and a grid past the edge that
    # the layout confirms (a board really cut off: test_board_cut_off) keeps its score.
    levels = _pyramid(np.zeros((300, 300, 3), np.uint8))
    held = (INSIDE, -0.08, 0.37, 0.89)
    past = (INSIDE + np.float32([90, 0]), -0.04, 0.36, 0.81)
    assert _better(levels, held, past) is held and _better(levels, past, held) is held
    assert _better(levels, past, (INSIDE, 0.5, 0.1, 0.99)) is past  # implausible
    confirmed = (INSIDE + np.float32([90, 0]), 0.6, 0.89, 0.58)
    assert _better(levels, (INSIDE, 0.36, 0.75, 0.79), confirmed) is confirmed
    assert _better(levels, held, (INSIDE, -0.02, 0.4, 0.85))[1] == -0.02  # else the score


def test_late_game_fit_is_sure_once_every_grid_moved_by_whole_cells_is_checked():
    # Tiles hide most squares of several kinds: the layout explains the cells only if they may
    # show the tiles' colour, and so it can explain a grid a few cells off, onto the margin
    # (the full search ran: up to 40× a photo's decode). Such a fit is sure only when each grid
    # moved by whole cells fits the layout clearly worse or, far off, has fewer lines.
    shot = render_photo(LATE_GAME, seed=4, style="erudit-black", pose="frontal")
    levels, fitted = first_lattice_fit(shot, LSD_SIDES[0])
    small, scale = levels[-1]
    assert _misfit(small, _rescale(fitted[0], 1.0, scale), tiles=False) > SURE_MISFIT
    assert _sure(levels, fitted)
    truth = _rescale(order_corners(shot.corners), 1.0, scale)
    for shift in [(1, 0), (0, -2), (-1, 3), (4, 0), (0, -5), (6, 6)]:
        assert not _alone(levels, _shifted(truth, shift), SURE_QUALITY), shift


def test_late_game_fit_with_fainter_lines_is_settled_when_two_segment_sizes_agree():
    # Tiles hide a third of the line pieces (quality under SURE_QUALITY), yet the lattices of two
    # segment sizes refine onto one grid: that grid is taken unless a grid moved by whole cells
    # could be the board, or the two fits lie apart.
    shot = render_photo(LATE_GAME, seed=5, style="erudit-cream", pose="frontal")
    (levels, first), (_, second) = (first_lattice_fit(shot, side) for side in LSD_SIDES[:2])
    fits = [first, second]
    assert not _sure(levels, fits[1]) and _settled(levels, fits[1], *fits)
    cell = np.linalg.norm(shot.corners[1] - shot.corners[0]) / SIZE
    apart = (fits[0][0] + np.float32([0.2 * cell, 0]),) + fits[0][1:]
    assert not _settled(levels, fits[1], apart, fits[1])
    for shift in [(1, 0), (0, -4), (7, 0)]:
        moved = (_shifted(fits[1][0], shift),) + fits[1][1:]
        assert not _settled(levels, moved, moved, moved), shift


def test_late_game_fit_with_fainter_lines_is_steady_unless_a_grid_moved_by_whole_cells_fits():
    # Tiles hide a third of the line pieces (quality under SURE_QUALITY), yet the lattice refines
    # onto the grid: once every segment size was looked at, such a fit is taken without the last
    # stage's guesses unless its lines stand out too rarely, the layout explains its cells too
    # poorly, or it is a grid moved by whole cells.
    shot = render_photo(LATE_GAME, seed=5, style="erudit-cream", pose="frontal")
    levels, fit = first_lattice_fit(shot, LSD_SIDES[1])
    assert not _sure(levels, fit) and _steady(levels, fit)
    corners, score, quality, misfit = fit
    assert not _steady(levels, (corners, score, STEADY_QUALITY - 0.01, misfit))
    assert not _steady(levels, (corners, score, quality, SURE_MISFIT + 0.01))
    for shift in [(1, 0), (0, -4), (7, 0)]:
        assert not _steady(levels, (_shifted(corners, shift), score, quality, misfit)), shift


def test_a_steady_fit_bent_past_the_photos_edge_is_left_to_the_last_stage():
    # A late-game fit with a corner half a cell past the photo's edge was taken as steady, and
    # the board then refused as cut off (held-out render 9 000 049 at 12 MP); the last stage's
    # guesses find it whole. Only the edge counts: inside the photo the same fit is steady.
    shot = render_photo(LATE_GAME, seed=5, style="erudit-cream", pose="frontal")
    levels, (corners, score, quality, misfit) = first_lattice_fit(shot, LSD_SIDES[1])
    bent = order_corners(corners).copy()
    bent[3, 1] += 0.5 * cell_size(corners)  # the bottom-left corner
    cut = _pyramid(shot.image[:int(corners[:, 1].max()) + 10])  # the photo ends below the grid
    assert _steady(cut, (corners, score, quality, misfit))
    assert _steady(levels, (bent, score, quality, misfit))
    assert not _steady(cut, (bent, score, quality, misfit))


def test_late_game_board_whose_fit_is_steady_is_found_without_the_last_stage(monkeypatch):
    # no segment size's fit is sure here, nor do two sizes agree: the best of them is steady
    shot = render_photo(LATE_GAME, seed=2, style="scrabble-vintage")
    assert not located_noting_last_stage(monkeypatch, shot)[1]


def test_late_game_grid_is_refined_on_the_lines_between_bare_squares():
    # Tiles cover most squares of every kind, so each kind's median colour is the tiles': the
    # pieces taken for clean (between two cells of their kind's usual colour) were those between
    # tiles, whose tall sides, seen low, pulled the fit 0.44 cells off even from the true grid.
    shot = render_photo(STEEP_LATE_GAME, seed=9_000_044, style="erudit-black", fonts="heldout",
                        size=(4000, 3000))
    view, _ = _grid_view(shot.image, shot.corners, VIEW_CELL, 1)  # upright: rows as the board's
    vertical, horizontal = _clean_pieces(view, past_tiles=True)
    tiles = np.pad([[ch != "." for ch in row] for row in STEEP_LATE_GAME], 1)
    assert vertical.sum() + horizontal.sum() >= 30
    assert not (vertical & (tiles[1:-1, :-1] | tiles[1:-1, 1:]).T).any()
    assert not (horizontal & (tiles[:-1, 1:-1] | tiles[1:, 1:-1])).any()
    levels = _pyramid(shot.image)
    truth = order_corners(shot.corners)
    corners, _ = _refine_location(levels, _rescale(truth, 1.0, levels[-1][1]), past_tiles=True)
    assert np.abs(order_corners(corners) - truth).max() < 0.2 * cell_size(truth)


def test_late_game_grid_refined_a_row_off_is_moved_back_onto_the_layout():
    # A lattice two rows off and a little too large was moved one row by the layout and refined
    # there onto the lines, a row off: its lines stood out (quality 0.77) and the layout fitted
    # it well enough to pass for sure. The grid a row over scores higher (misfit 0.67 vs 0.81).
    shot = render_photo(ROW_OFF_LATE_GAME, seed=7_000_072, style="erudit-black", size=(4000, 3000))
    levels = _pyramid(shot.image)
    cell = cell_size(shot.corners)
    off = (_shifted(order_corners(shot.corners), (0, 1)), 0.36, 0.77, 0.81)
    moved = _moved_onto_layout(levels, off)
    assert np.abs(order_corners(moved[0]) - order_corners(shot.corners)).max() < 0.2 * cell
    located_well(shot)


def test_early_game_grid_is_not_refined_again():
    shot = render_photo(PLAYED, seed=3, style="erudit-black")
    levels = _pyramid(shot.image)
    corners = order_corners(shot.corners)
    refined, quality = _refined_past_tiles(levels, corners, 0.9)
    assert refined is corners and quality == 0.9


def test_corners_come_in_image_order():
    shot = render_photo(PLAYED, seed=4, style="scrabble-hasbro")
    corners = locate_board(shot.image).corners
    assert corners.shape == (4, 2) and corners.dtype == np.float32
    assert np.argmin(corners.sum(axis=1)) == 0  # nearest the image's top-left first
    (ax, ay), (bx, by) = corners[1] - corners[0], corners[2] - corners[1]
    turn = ax * by - ay * bx
    assert turn > 0  # clockwise on screen (y down)
    assert np.allclose(order_corners(corners[::-1]), corners)


def test_small_blurred_board_is_found_by_its_premium_squares():
    # Cells of 15 px blurred by a sixth of a cell (a webcam's soft focus): the grid lines barely
    # show, so the line fit is poor (this was "no board found"), but the premium squares still
    # say where the grid lies.
    shot = render_photo(EMPTY, seed=1, style="erudit-black", pose="frontal", clutter=False)
    factor = 15 / (np.linalg.norm(shot.corners[1] - shot.corners[0]) / SIZE)
    small = cv2.resize(shot.image, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
    canvas = np.full((720, 1280, 3), 120, np.uint8)
    canvas[60:60 + small.shape[0], 200:200 + small.shape[1]] = small[:660, :1080]
    canvas = cv2.GaussianBlur(canvas, (0, 0), 0.16 * 15)
    truth = (shot.corners + 0.5) * factor - 0.5 + np.float32([200, 60])
    where = locate_board(canvas)
    assert corner_error(where.corners, truth) < QUARTER_CELL  # every cell read from its square


def test_small_turned_board_on_wood_at_the_photo_edge():
    # Wood grain runs one way all over the photo: its segments hid the directions of a small
    # board turned 18° from it (a wrong grid was read). Only the board's lines cross each other
    # everywhere, so the lattice is looked for there too. The board's frame is cut off by the
    # photo's edge, the grid is not: that is no reason to refuse the photo.
    from synth.render import _background

    shot = render_photo(PLAYED, seed=5, style="erudit-cream", pose="frontal", clutter=False)
    top = rectify(shot.image, shot.corners, cell_px=32, margin=1.0)  # the board with its frame
    canvas = _background(np.random.default_rng(14), 900, 1500)  # wood, grain across
    turn = np.radians(18)
    rotation = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    square = np.float32([[0, 0], [17, 0], [17, 17], [0, 17]])
    placed = (square - 8.5) @ rotation.T * 22 + np.float32([228, 1250])  # cells of 22 px
    warp = cv2.getPerspectiveTransform(square * 32, np.float32(placed))
    cv2.warpPerspective(top, warp, (900, 1500), dst=canvas, borderMode=cv2.BORDER_TRANSPARENT)
    truth = cv2.perspectiveTransform((square[None] * 15 / 17 + 1) * 32, warp)[0]
    assert truth.min() > 0 and placed[:, 0].min() < 0  # the grid is inside, the frame is not
    assert corner_error(locate_board(canvas).corners, truth) < TOLERANCE


def test_small_board_seen_steeply_on_a_striped_cloth():
    # Stripes cross the place of a small board too and outweigh its lines there: turned 45° and
    # seen steeply (its lines meet at 70°), both of its directions are weaker than the stripes',
    # so the lattice is looked for on the pair of them as well (a grid two cells off was read).
    shot = render_photo(PLAYED, seed=5, style="erudit-cream", pose="frontal", clutter=False)
    top = rectify(shot.image, shot.corners, cell_px=32, margin=1.0)  # the board with its frame
    rows = np.arange(1140)[:, None] + 3 * np.sin(np.arange(1900)[None] / 60)  # wavy stripes
    stripes = 1 + 0.2 * np.sign(np.sin(2 * np.pi * rows / 26))
    canvas = np.uint8(np.clip(np.float32([170, 170, 230]) * stripes[..., None], 0, 255))
    turn = np.radians(45)
    rotation = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    square = np.float32([[0, 0], [17, 0], [17, 17], [0, 17]])
    placed = (square - 8.5) @ rotation.T * np.float32([24, 16.8]) + np.float32([800, 450])
    warp = cv2.getPerspectiveTransform(square * 32, np.float32(placed))
    cv2.warpPerspective(top, warp, (1900, 1140), dst=canvas, borderMode=cv2.BORDER_TRANSPARENT)
    truth = cv2.perspectiveTransform((square[None] * 15 / 17 + 1) * 32, warp)[0]
    assert corner_error(locate_board(canvas).corners, truth) < TOLERANCE


def test_board_turned_a_little_off_the_stripes_of_a_cloth_is_sure_where_lines_cross():
    # The cloth's stripes run 8° off the board's rows and outweigh them over the whole photo:
    # their family took the rows' segments, the lattice missed the board, and the slow full
    # search ran (1.5 s). The place where the segments cross holds the board's lines alone; it
    # is tried once no lattice of the strongest directions is sure (on a board crowded with
    # tiles a grid fitted there can be a row off yet pass for sure).
    board = ["." * 15] * 5 + ["..С..А..О......", "..*..П..Р.М....", "ПРОКРАСТИНАЦИЯ.",
                              "..Р..Т..Е.М....", "..О..И..Н.О....", "..Ж..Я..Т.Н....",
                              ".......ПИХТА...", "........Р......"] + ["." * 15] * 2
    shot = render_photo(board, seed=9_050_000, style="erudit-black", size=(2000, 1500))
    levels = _pyramid(shot.image)
    small = levels[-1][0]
    segments = _segments(small, LSD_SIDES[0])
    lattices = _lattices(segments, [(0, 1)])
    assert not _sure(levels, _fitted(levels, lattices[0]))  # the stripes' lattice
    regions = _grid_regions(segments, small.shape)
    crossing = [_fitted(levels, c) for c in _crossing_lattices(regions, lattices)]
    assert _sure(levels, crossing[0]) and corner_error(crossing[0][0], shot.corners) < TOLERANCE
    assert corner_error(locate_board(shot.image).corners, shot.corners) < TOLERANCE


def test_small_busy_board_on_strong_grain_is_found_on_the_full_working_copy():
    # A small board (cells of 6 px at the last line-segment size) turned 40° on strongly grained
    # wood, a rack touching it: only the grain's crossings stood out there and no board was
    # found. On the working copy itself its lines show, so the crossings are looked for there too.
    board = ["...Ш...........", "...А...........", "...Б.....ЮЗ....", "...ЛАСКАР.Р....",
             "..ТИ.У....Я.К..", "..В..Р.Д..Ч.А..", "..О..О.И..Е.Д.П", "..РАшКУЛЬ.С.ЕДА",
             "..ОР...Е..Т.Т.Л", "ФИГА...МоСЬЕ..О", ".......М.К....М", "...РЫНДА.Е.К..Н",
             "......У..Т.И..И", "......Г..ЧЕЛНОК", "......А....Т.З."]
    located_well(render_photo(board, seed=5022020, style="erudit-black", fonts="heldout"))


def test_photo_already_cropped_to_the_grid():
    shot = render_photo(EMPTY, seed=2, style="erudit-black", pose="frontal", clutter=False)
    top = rectify(shot.image, shot.corners, cell_px=48, margin=0)  # exactly the 15×15 grid
    where = locate_board(top)
    truth = np.float32([[0, 0], [720, 0], [720, 720], [0, 720]])
    assert corner_error(where.corners, truth) < TOLERANCE


def test_large_phone_photo_with_exif_rotation(tmp_path):
    shot = render_photo(PLAYED, seed=7, style="erudit-cream", size=(4000, 3000))
    stored = np.ascontiguousarray(np.rot90(shot.image, 1))  # stored sideways, EXIF says turn back
    path = tmp_path / "phone.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    Image.fromarray(stored[:, :, ::-1]).save(path, quality=92, exif=exif)
    image = load_photo(path)
    assert image.shape == shot.image.shape
    located_well(type(shot)(image, shot.corners, shot.orientation, shot.board, shot.layout,
                            shot.style))
    half = load_photo(path, reduce=2)  # the fast reduced decode turns the photo upright too
    assert half.shape == (1500, 2000, 3)
    assert corner_error(locate_board(half).corners * 2 + 0.5, shot.corners) < TOLERANCE


def test_photo_decoded_at_half_size_is_shrunk_linearly_to_the_working_copy(tmp_path):
    shot = render_photo(PLAYED, seed=7, style="erudit-black", size=(3264, 2448))
    path = tmp_path / "phone.jpg"
    cv2.imwrite(str(path), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    half, scale = load_for_reading(path)  # 1632 px long: its pixels average 2×2 already
    linear = cv2.resize(half, (1000, 750), interpolation=cv2.INTER_LINEAR)
    assert np.array_equal(_pyramid(half)[-1][0], linear)
    plain = np.ascontiguousarray(half)  # the same pixels, not known to be averaged
    area = cv2.resize(plain, (1000, 750), interpolation=cv2.INTER_AREA)
    assert np.array_equal(_pyramid(plain)[-1][0], area)
    assert corner_error(locate_board(half).corners * scale + 0.5, shot.corners) < TOLERANCE


def test_rectified_view_puts_cells_where_promised():
    shot = render_photo(EMPTY, seed=1, style="erudit-black", pose="frontal")
    top = rectify(shot.image, shot.corners)
    assert top.shape == (16 * CELL_PX, 16 * CELL_PX, 3)
    rows = read_premiums(top, scheme="erudit")
    assert rows == list(shot.layout)


def test_premiums_of_an_english_board_and_occupied_cells():
    shot = render_photo(PLAYED, seed=6, style="scrabble-hasbro", pose="frontal")
    occupied = np.array([[ch != "." for ch in row] for row in PLAYED])
    rows = read_premiums(rectify(shot.image, shot.corners), occupied=occupied)
    for r in range(SIZE):
        for c in range(SIZE):
            expected = "?" if occupied[r, c] else shot.layout[r][c]
            assert rows[r][c] == expected, (r, c)


# --- errors -------------------------------------------------------------------------------------


def test_not_an_image_names_the_file(tmp_path):
    path = tmp_path / "notes.jpg"
    path.write_text("not a picture")
    with pytest.raises(PhotoError, match="notes.jpg: not an image"):
        load_photo(path)
    with pytest.raises(PhotoError, match="missing.jpg: cannot open"):
        load_photo(tmp_path / "missing.jpg")


def test_clutter_without_a_board_is_no_board():
    rng = np.random.default_rng(0)
    noise = cv2.GaussianBlur(rng.integers(0, 255, (720, 1280, 3), dtype=np.uint8), (0, 0), 1)
    cups = noise.copy()
    for _ in range(6):
        centre = tuple(int(v) for v in rng.integers(100, 620, 2))
        cv2.circle(cups, centre, int(rng.integers(30, 90)), tuple(int(v) for v in rng.integers(0, 255, 3)), -1)
    for image in (noise, cups):
        with pytest.raises(PhotoError, match="no board found"):
            locate_board(image)


def test_board_too_small():
    shot = render_photo(PLAYED, seed=3, style="erudit-cream", pose="frontal", clutter=False)
    small = cv2.resize(shot.image, None, fx=0.16, fy=0.16, interpolation=cv2.INTER_AREA)
    canvas = np.full((720, 1280, 3), 170, np.uint8)
    canvas[100:100 + small.shape[0], 300:300 + small.shape[1]] = small
    with pytest.raises(PhotoError, match=r"board too small to read \(cells of \d+ px\)"):
        locate_board(canvas)


def test_dim_photo_is_found():
    # In half the light every colour difference shrinks; judged by fixed Lab steps the premium
    # layout fitted no grid well, and this late board was taken for one cut off at the edge.
    shot = render_photo(DIM_LATE_GAME, seed=7_001_128, style="erudit-black", fonts="train")
    where = locate_board(dimmed(shot.image))
    assert corner_error(where.corners, shot.corners) < QUARTER_CELL


def test_photo_with_a_shadow_over_half_the_board_is_found():
    # The shadow left the board's own grid a worse layout fit than one five cells off, past
    # the photo's edge, and the photo was refused as cut off.
    shot = render_photo(SHADED_LATE_GAME, seed=7_000_041, style="erudit-cream", fonts="train")
    where = locate_board(shadowed(shot.image, seed=7_000_041))
    assert corner_error(where.corners, shot.corners) < 2 * QUARTER_CELL  # 0.28 cells here


def test_a_black_board_in_the_shadow_is_found_on_a_second_look():
    # The whole board lies in the shadow, the table beside it in the light: its lines, dark
    # grey on black, were too faint for the line segments, and no grid was found. The photo
    # with its lightness evened out locally shows them.
    shot = render_photo(SHADED_BLACK_GAME, seed=7_001_160, style="erudit-black", fonts="train")
    where = locate_board(shadowed(shot.image, seed=7_001_160))
    assert corner_error(where.corners, shot.corners) < QUARTER_CELL


def test_a_photo_without_a_board_is_refused_after_a_second_look(monkeypatch):
    import vision.locate as locate

    looked = []
    evened = locate._evened
    monkeypatch.setattr(locate, "_evened", lambda image: looked.append(1) or evened(image))
    table = render_photo(PLAYED, seed=4, style="erudit-cream", pose="frontal").image[:120, :160]
    with pytest.raises(PhotoError, match="no board found|board too blurred"):
        locate_board(np.ascontiguousarray(table))
    assert looked == [1]


def test_only_an_under_exposed_view_is_brightened():
    # A photo exposed as cameras expose them is measured as it is: its fits stay the same.
    shot = render_photo(PLAYED, seed=3, style="erudit-cream", pose="frontal", clutter=False)
    views = [_grid_view(image, shot.corners, 12, 0)[0] for image in (shot.image, dimmed(shot.image))]
    assert _exposure_gain(views[0]) == 1.0
    assert _exposure_gain(views[1]) > 1.2


def test_board_too_blurred():
    shot = render_photo(PLAYED, seed=9, style="scrabble-vintage", pose="frontal")
    cell = np.linalg.norm(shot.corners[1] - shot.corners[0]) / 15
    with pytest.raises(PhotoError, match="board too blurred"):
        locate_board(cv2.GaussianBlur(shot.image, (0, 0), 0.35 * cell))
    located_well(shot)  # the same photo sharp is fine


def test_board_cut_off():
    shot = render_photo(PLAYED, seed=12, style="erudit-cream", pose="frontal", clutter=False)
    xs = shot.corners[:, 0]
    cut = int(xs.min() + 0.2 * (xs.max() - xs.min()))  # lose the left fifth of the grid
    with pytest.raises(PhotoError, match="board cut off at the photo's edge"):
        locate_board(np.ascontiguousarray(shot.image[:, cut:]))


# --- real photos (../shared, skipped when absent) ----------------------------------------------


def _rows(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def _real_photos():
    for folder, scheme in (("scrabble_assistant", "erudit"), ("jheidel_scrabble-opencv", "scrabble")):
        labels = SHARED / folder / "labels" / "labels.csv"
        if labels.exists():
            with open(labels, encoding="utf-8") as handle:
                for record in csv.DictReader(handle):
                    yield folder, scheme, record["image"], record["board_label"]


@pytest.mark.skipif(not SHARED.exists(), reason="real photos in ../shared are not present")
def test_real_photos_read_their_premium_map():
    failures = []
    for folder, scheme, image_name, label_name in _real_photos():
        root = SHARED / folder
        premium = np.array([list(row) for row in _rows(root / "labels" / "premium_map.txt")])
        tiles = np.array([[ch != "." for ch in row] for row in _rows(root / label_name)])
        try:
            image = load_photo(root / image_name)
            top = rectify(image, locate_board(image).corners)
        except PhotoError as exc:
            failures.append(f"{image_name}: {exc}")
            continue
        seen = np.array([list(row) for row in read_premiums(top, scheme=scheme)])
        # The label is upright, the photo's corners start at its top-left: take the turn whose
        # tiles cover the cells that do not show their premium colour.
        wrong = seen != premium
        turn = max(range(4), key=lambda k: int((wrong == np.rot90(tiles, k)).sum()))
        occupied = np.rot90(tiles, turn)
        read = np.array([list(row) for row in
                         read_premiums(top, occupied=occupied, scheme=scheme)])
        bad = (read != premium) & ~occupied
        if bad.any():
            failures.append(f"{image_name}: cells {np.argwhere(bad).tolist()[:5]}")
    assert not failures, failures

