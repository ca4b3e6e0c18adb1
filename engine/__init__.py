"""The rules of Эрудит and Scrabble boxes: boards, moves, scores and whole games.

    >>> from engine import Board, Game, load_ruleset
    >>> game = Game(load_ruleset("erudit"), ["Аня", "Борис"])
    >>> game.play(Board.parse(text_of_the_board_after_a_turn)).score.total

`load_ruleset` / `load_layout` read a box's rules and premium layout (bundled by name, or a
file), `installed_rulesets` every installed ruleset (and the files that cannot be read);
`Board` is a 15×15 grid of letters; `find_move` and `score_move` turn two boards into a
scored move; `Game` keeps turns, passes, corrections and the winner; `read_record` and
`write_record` read and write GCG records; `check_word` is the Russian word check. Every error
a user can cause is an `EruditError`.
"""

from engine.board import Board
from engine.errors import (
    BoardTextError,
    EruditError,
    GameError,
    MoveError,
    PhotoError,
    ProfileError,
    RecordError,
    RulesetError,
)
from engine.game import Game, Turn
from engine.gcg import read_record, write_record
from engine.move import Move, find_move
from engine.ruleset import (
    Layout,
    Ruleset,
    installed_rulesets,
    load_layout,
    load_ruleset,
    ruleset_names,
)
from engine.score import Score, score_move
from engine.words import check_word

__all__ = [
    "Board", "BoardTextError", "EruditError", "Game", "GameError", "Layout", "Move", "MoveError",
    "PhotoError", "ProfileError", "RecordError", "Ruleset", "RulesetError", "Score", "Turn",
    "check_word", "find_move", "installed_rulesets", "load_layout", "load_ruleset", "read_record",
    "ruleset_names", "score_move", "write_record",
]
