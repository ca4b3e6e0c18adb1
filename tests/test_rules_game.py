"""Game flow: 2–4 players in turn order; pass or exchange leaves the board; the target
score ends the game at the end of its round (highest total wins, a tie has no winner); undo;
fixing a letter of an earlier turn re-scores every turn after it; end by agreement."""

import pytest
from conftest import ERUDIT, board_with, play_all

from engine.errors import GameError
from engine.game import Game

LUK = ("G8", "ЛУК", True)        # Л2 + У3 + К2 = 7 (G8, H8, I8 plain)
LES = ("G9", "ЕС", False)        # ЛЕС down from G8, Е on G9 (×2 letter): Л2 + Е1×2 + С2 = 6
KORA = ("I9", "ОРА", False)      # КОРА down from I8, О on I9 (×2 letter): К2 + О1×2 + Р2 + А1 = 7


@pytest.mark.parametrize("players", [1, 5])
def test_two_to_four_players(players):
    with pytest.raises(GameError, match=f"a game has 2–4 players, not {players}"):
        Game(ERUDIT, players)


@pytest.mark.parametrize("names, message", [
    (["Аня", "Аня"], "two players have the same name"),
    (["Аня", " "], "player 2 has no name"),
])
def test_players_are_told_apart_by_name(names, message):
    with pytest.raises(GameError, match=f"^{message}$"):
        Game(ERUDIT, names)


def test_players_move_in_turn_order():
    game = Game(ERUDIT, ["Аня", "Борис", "Вера"])
    turns = play_all(game, LUK, LES)
    turns += [game.pass_turn(), game.pass_turn(exchange=True)]
    assert [t.player for t in turns] == [0, 1, 2, 0]
    assert [t.totals for t in turns] == [[7, 0, 0], [7, 6, 0], [7, 6, 0], [7, 6, 0]]


def test_unchanged_board_is_a_pass():
    game = Game(ERUDIT, 2)
    first = game.play(board_with(LUK))
    again = game.play(first.board.copy())
    assert (again.kind, again.score.total, again.board) == ("pass", 0, first.board)


def test_exchange_leaves_the_board():
    game = Game(ERUDIT, 2)
    first = game.play(board_with(LUK))
    exchange = game.pass_turn(exchange=True)
    assert (exchange.kind, exchange.exchange, exchange.board) == ("pass", True, first.board)


def test_no_winner_without_a_target():
    game = Game(ERUDIT, 2)
    play_all(game, LUK, LES)
    assert not game.finished and game.winner is None


def test_target_reached_the_round_is_played_out():
    game = Game(ERUDIT, 3, target=5)
    game.play(board_with(LUK))                        # player 0 reaches 7 ≥ 5 …
    assert not game.finished                          # … players 1 and 2 still play the round
    game.pass_turn()
    assert not game.finished
    play_all(game, LES)                               # player 2: 6
    assert game.finished and game.winner == 0 and game.totals == [7, 0, 6]
    with pytest.raises(GameError, match="the game is over: Player 1 won; no more turns"):
        game.pass_turn()


def test_target_reached_by_the_last_player_of_the_round_ends_at_once():
    game = Game(ERUDIT, 2, target=5)
    game.pass_turn()
    game.play(board_with(LUK))
    assert game.finished and game.winner == 1


def test_a_tie_has_no_winner():
    game = Game(ERUDIT, 2, target=5)
    play_all(game, LUK, KORA)                         # 7 : 7
    assert game.finished and game.winner is None and game.totals == [7, 7]
    with pytest.raises(GameError, match="a tie"):
        game.play(game.board)


def test_undo_takes_back_the_last_turn():
    game = Game(ERUDIT, 2, target=5)
    first, _ = play_all(game, LUK, LES)
    assert game.finished
    game.undo()
    assert (game.board, game.totals, game.finished) == (first.board, [7, 0], False)
    game.undo()
    assert game.board.is_empty() and game.totals == [0, 0]
    with pytest.raises(GameError, match="nothing to undo"):
        game.undo()


def test_undo_keeps_adjustments_made_before_the_undone_turn():
    game = Game(ERUDIT, 2)
    game.play(board_with(LUK))
    game.adjust(1, 5, "challenge")                    # a bonus recorded after turn 1
    play_all(game, LES)
    game.undo()
    assert game.totals == [7, 5]


def test_fix_a_letter_rescores_every_later_turn():
    game = Game(ERUDIT, 2, word_check="off")
    # the reader saw Ж for Л: ЖУК = Ж5 + У3 + К2 = 10; ЖЕС = Ж5 + Е1×2 + С2 = 9
    play_all(game, ("G8", "ЖУК", True), LES)
    assert game.totals == [10, 9]
    game.fix(1, "G8", "Л")
    # ЛУК = 7 and ЛЕС = 6: the second turn changes too though it placed nothing on G8
    assert [t.score.total for t in game.turns] == [7, 6] and game.totals == [7, 6]
    assert [w.word for w in game.turns[1].score.words] == ["ЛЕС"]


def test_fix_errors():
    game = Game(ERUDIT, 2, word_check="off")
    play_all(game, LUK, LES)
    with pytest.raises(GameError, match="turn 1 placed no tile on G9"):
        game.fix(1, "G9", "А")
    with pytest.raises(GameError, match=r"no turn 3 \(the game has 2 turns\)"):
        game.fix(3, "G8", "А")
    with pytest.raises(GameError, match="G8: 'Q' is not a letter of the erudit box"):
        game.fix(1, "G8", "Q")
    assert game.totals == [7, 6] and game.board["G8"] == "Л"   # a failed fix changes nothing


def test_end_by_agreement_with_racks():
    game = Game(ERUDIT, 2)
    play_all(game, LUK, LES)                          # 7 : 6
    game.end(racks={0: "", 1: "ФА"})                  # player 1 holds Ф10 + А1 = 11
    assert game.totals == [7 + 11, 6 - 11] and game.winner == 0


def test_end_keeps_earlier_adjustments_and_replaces_its_own():
    game = Game(ERUDIT, 2)
    play_all(game, LUK, LES)                          # 7 : 6
    game.adjust(1, 5, "challenge")                    # 7 : 11
    game.end(racks={0: "Ф", 1: ""})                   # player 0 holds Ф10: −10 / +10
    assert game.totals == [7 - 10, 11 + 10]
    game.end(racks={0: "А", 1: ""})                   # corrected rack: А1
    assert game.totals == [7 - 1, 11 + 1] and game.winner == 1
