"""GCG in and out: a record's placement moves become boards and are scored by the same path as
photos; every recorded score and running total must come out; a game written as GCG reads back
with every score the same."""

import time

import pytest
from conftest import ERUDIT, board_with, play_all, write_ruleset

from engine.board import Board
from engine.errors import RecordError
from engine.game import Game
from engine.gcg import parse_record, place_word, read_record, replay_record, write_record
from engine.ruleset import load_ruleset

SCRABBLE = load_ruleset("scrabble")

# A hand-made English game; scores by hand on the Scrabble layout (H8 ×2 word, J10 ×3 letter):
RECORD = """\
#character-encoding UTF-8
#player1 ann Ann Smith
#player2 bob Bob
>ann: ACTEEIR 8G CAT +10 10
#note (C3 + A1 + T1) × 2 = 10
>bob: AEIOUXY -AEI +0 0
>ann: BDEEIRS H7 B.D +6 16
#note B3 + A1 + D2 = 6, through the old A
>bob: IOSUXYZ 8G (CAT)S +6 6
#note C3 + A1 + T1 + S1 = 6: no premium under old tiles
>bob: IOUXYZ (challenge) +5 11
>ann: EEIRS?N - +0 16
>bob: IOUXY?N J8 (S)oN +4 15
#note S1 + blank 0 + N1×3 = 4
>ann: EEIRSIX 10J (N)XI +10 26
>ann: EEIRSIX -- -10 16
>bob: (IX) +18 33
"""


def running_totals(record, game) -> tuple[int, int]:
    """Compare each event's recorded running total with the game's; returns (checked, wrong).
    A play later withdrawn is not checked: the game holds the withdrawal, not the phony."""
    nicks = [nick for nick, _ in record.players]
    withdrawn = {i - 1 for i, e in enumerate(record.events) if e.kind == "withdrawn"}
    turns = adjustments = checked = wrong = 0
    for i, event in enumerate(record.events):
        if event.kind in ("bonus", "time", "end"):
            adjustments += 1
        elif event.kind != "withdrawn":
            turns += 1
        if event.total is None or i in withdrawn:
            continue
        player = nicks.index(event.nick)
        total = game.turns[turns - 1].totals[player] if turns else 0
        total += sum(points for who, points, _ in game.adjustments[:adjustments] if who == player)
        checked += 1
        wrong += total != event.total
    return checked, wrong


def test_read_a_record():
    record = parse_record(RECORD)
    assert record.players == [("ann", "Ann Smith"), ("bob", "Bob")]
    assert [e.kind for e in record.events] == [
        "play", "exchange", "play", "play", "bonus", "pass", "play", "play", "withdrawn", "end"]
    assert (record.events[0].position, record.events[0].word, record.events[0].total) == (
        "8G", "CAT", 10)


def test_replay_matches_every_hand_computed_score_and_total():
    record = parse_record(RECORD)
    game, recorded = replay_record(record, SCRABBLE)
    assert [t.score.total for t in game.turns] == [10, 0, 6, 6, 0, 4, 0]
    assert recorded == [10, 0, 6, 6, 0, 4, 0]          # the withdrawn +10 became 0
    assert [t.kind for t in game.turns][-1] == "pass"
    assert game.totals == [16, 33]
    assert running_totals(record, game) == (9, 0)


def test_place_word_notations():
    board = place_word(Board(), "8G", "CaT", "test")   # lower case: a blank standing for A
    assert board["H8"] == "a"
    board = place_word(board, "G8", ".?B", "test")      # `.` plays through; `?` an unknown blank
    assert (board["G9"], board["G10"]) == ("*", "B")
    assert place_word(board, "8G", "(CA)TS", "test")["J8"] == "S"


@pytest.mark.parametrize("pos, word, reason", [
    ("8M", "CATS", "runs off the board"),
    ("8G", "C.T", "plays through an empty cell"),
])
def test_place_word_errors(pos, word, reason):
    with pytest.raises(RecordError, match=reason):
        place_word(Board(), pos, word, "game.gcg: line 3")


def test_out_of_turn_and_bad_lines():
    with pytest.raises(RecordError, match="line 3: bob moves out of turn"):
        replay_record(parse_record("#player1 ann A\n#player2 bob B\n>bob: - +0 0\n"), SCRABBLE)
    with pytest.raises(RecordError, match=r"line 1: no score like \+12"):
        parse_record(">ann: 8G CAT")
    with pytest.raises(RecordError, match="no moves in the record"):
        parse_record("#player1 ann Ann\n")
    with pytest.raises(RecordError, match="line 1: expected '#swap CELL LETTER' after a move"):
        parse_record("#swap H8 A\n>ann: - +0 0\n")


def test_an_illegal_recorded_move_names_the_line():
    text = "#player1 ann A\n#player2 bob B\n>ann: 8A CAT +15 15\n"
    with pytest.raises(RecordError, match=r"^x\.gcg: line 3: turn 1: the first word"):
        replay_record(parse_record(text, "x.gcg"), SCRABBLE, source="x.gcg")


def test_a_record_of_one_player_names_the_file():
    record = parse_record("#player1 ann A\n>ann: 8G CAT +10 10\n", "solo.gcg")
    with pytest.raises(RecordError, match=r"^solo\.gcg: a game has 2–4 players, not 1$"):
        replay_record(record, SCRABBLE, source="solo.gcg")


def test_players_of_one_full_name_go_by_their_nicks():
    record = parse_record("#player1 ann Ann\n#player2 ann2 Ann\n>ann: 8G CAT +10 10\n"
                          ">ann2: 9G AT +5 5\n", "twins.gcg")
    game, _ = replay_record(record, SCRABBLE, source="twins.gcg")
    assert game.players == ["ann", "ann2"]


def _erudit_game() -> Game:
    """Three players, a star, a swap, a pass, an exchange and a whole-rack move."""
    game = Game(ERUDIT, ["Аня Петрова", "Борис", "Вера"], word_check="off")
    play_all(game, ("G8", "КОТ", True), ("I9", "оК", False))
    game.play(board_with(("H9", "сОМ", True), start=game.board))   # swaps the star on I9
    game.pass_turn()
    game.pass_turn(exchange=True)
    # 7 tiles down F7–F13, no premium there: П2 + Е1 + Р2 + Е1 + Л2 + Е1 + Т2 = 11;
    # Е on F8 makes ЕКОТ: 1 + 2 + 1 + 2 = 6; whole rack + 15: 32
    play_all(game, ("F7", "ПЕРЕЛЕТ", False))
    return game


def test_round_trip_keeps_every_score():
    game = _erudit_game()
    assert game.turns[-1].score.total == 32 and game.totals == [5, 4, 4 + 32]
    text = write_record(game)
    record = parse_record(text)
    again, recorded = replay_record(record, load_ruleset(record.ruleset))
    assert [t.score.total for t in again.turns] == [t.score.total for t in game.turns]
    assert recorded == [t.score.total for t in game.turns]
    assert again.totals == game.totals and again.board == game.board
    assert again.players == game.players
    assert [t.exchange for t in again.turns] == [t.exchange for t in game.turns]
    assert running_totals(record, again) == (len(game.turns), 0)


def test_round_trip_of_a_swap_only_turn(tmp_path):
    later = load_ruleset(str(write_ruleset(tmp_path, "later", star_swap="next-move")))
    game = Game(later, 2, word_check="off")
    game.play(board_with(("G8", "КоТ", True)))
    game.play(board_with(("H8", "О", True), start=game.board))      # a swap, no tile placed
    game.play(board_with(("I9", "ОК", False), start=game.board))
    game.play(board_with(("F8", "с", True), start=game.board))      # the star comes back
    record = parse_record(write_record(game))
    again, _ = replay_record(record, later)
    assert [t.score.total for t in again.turns] == [t.score.total for t in game.turns]
    assert again.board == game.board and [p.cell for p in again.turns[1].move.swaps] == ["H8"]


SKIPPED = {
    "gcgio__polish_endgame.gcg": "Polish alphabet (Ć, Ł, Ź …): not the scrabble ruleset's letters",
}


def test_real_tournament_games(shared):
    """Every placement move of every real game: the recorded score and running total."""
    files = sorted((shared / "external" / "gcg").glob("*/*.gcg"))
    assert files, "no .gcg files under external/gcg"
    start = time.perf_counter()
    placements = matched = totals_checked = totals_wrong = 0
    wrong = []
    for path in files:
        if path.name in SKIPPED:
            print(f"skipped {path.name}: {SKIPPED[path.name]}")
            continue
        record = read_record(path)
        game, recorded = replay_record(record, SCRABBLE, source=str(path))
        for turn, score in zip(game.turns, recorded, strict=True):
            if turn.kind == "play":
                placements += 1
                matched += turn.score.total == score
                if turn.score.total != score:
                    wrong.append(f"{path.name} turn {turn.number}: {turn.score.total} ≠ {score}")
        checked, bad = running_totals(record, game)
        totals_checked += checked
        totals_wrong += bad
    print(f"{len(files) - len(SKIPPED)} games, {matched}/{placements} placement scores and "
          f"{totals_checked - totals_wrong}/{totals_checked} running totals match "
          f"({time.perf_counter() - start:.1f} s)")
    assert wrong == []
    assert totals_wrong == 0
    assert placements == 2062, "the number of placement moves read from the records changed"


# A German game in ScrabScrap's style: a pass's or exchange's score written `0`, not `+0`.
# Scores by hand on the Scrabble layout with the German values (Ü 6, P 4, L 2, M 3, H 2):
GERMAN_RECORD = """\
#player1 anna Anna
#player2 ben Ben
>anna: EINOOSU -OOU 0 0
>ben: DEIRSTÜ 8G DÜS +16 16
#note (D1 + Ü6 + S1) × 2 on H8 = 16
>anna: EEILNPS - 0 0
>ben: EHIMRT H7 MÜH +11 27
#note M3 + Ü6 + H2 = 11, through the old Ü
>anna: EEILPST J2 SPIELTE +76 76
#note S1×3 + P4 + I1 + E1 + L2×3 + T1 + E1 = 17, DÜSE 9, all seven tiles +50
>ben: AEIQRXY -QX 0 27
"""


def test_a_pass_or_exchange_scored_0_without_a_sign_is_read():
    [exchange] = parse_record(">Anna: OOU -OOU 0 0\n").events
    assert (exchange.kind, exchange.word, exchange.score, exchange.total) == (
        "exchange", "OOU", 0, 0)
    [passed] = parse_record(">Anna: EINSTAR - 0 12\n").events
    assert (passed.kind, passed.score, passed.total) == ("pass", 0, 12)


def test_a_whole_german_record_with_unsigned_scores():
    record = parse_record(GERMAN_RECORD)
    assert [e.kind for e in record.events] == [
        "exchange", "play", "pass", "play", "play", "exchange"]
    game, recorded = replay_record(record, load_ruleset("scrabble-de"))
    assert [t.score.total for t in game.turns] == recorded == [0, 16, 0, 11, 76, 0]
    assert game.turns[4].score.bonus == 50
    assert game.totals == [76, 27]
    assert running_totals(record, game) == (6, 0)


def test_real_german_games_score_as_recorded(shared):
    """ScrabScrap's tournament records (German Scrabble): every move's recorded score."""
    files = sorted((shared / "external" / "scrabscrap").glob("game*/record.gcg"))
    assert files, "no records under external/scrabscrap"
    german = load_ruleset("scrabble-de")
    moves = 0
    for path in files:
        game, recorded = replay_record(read_record(path), german, source=str(path))
        assert [t.score.total for t in game.turns] == recorded, path
        moves += len(recorded)
    assert moves == 25 + 27 + 28
