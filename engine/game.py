"""Game flow: players in turn order, moves from successive boards, passes, target score,
end-of-round rule, winner, corrections (undo, fix a letter and re-score), unseen tiles.

>>> from engine.ruleset import load_ruleset
>>> game = Game(load_ruleset("erudit"), ["Аня", "Борис"])
>>> rows = ["." * 15] * 7 + ["......КОТ......"] + ["." * 15] * 7
>>> game.play(Board.parse("\\n".join(rows))).score.total
5
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from engine.board import STAR, Board, is_star, parse_cell
from engine.errors import GameError, MoveError
from engine.move import Move, find_move
from engine.ruleset import Ruleset
from engine.score import Score, score_move
from engine.words import MODES, Verdict, check_words


@dataclass
class Turn:
    """One turn as it stands in the game: who, what changed, the score and the totals after."""

    number: int
    player: int
    kind: str                      # "play" | "pass"
    move: Move
    score: Score
    board: Board                   # the board after this turn
    totals: list[int]
    sure: bool = True
    alternatives: list[dict] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    exchange: bool = False


@dataclass
class _Input:
    """What the players gave for a turn; turns are always re-derived from these."""

    board: Board | None            # None for a pass / exchange
    exchange: bool = False
    sure: bool = True
    alternatives: list[dict] = field(default_factory=list)


class Game:
    """A game under one ruleset. Every turn is re-derived from the boards given, so a
    correction anywhere re-scores everything after it through the same path."""

    def __init__(self, ruleset: Ruleset, players: list[str] | int = 2, target: int | None = None,
                 word_check: str = "warn"):
        names = [f"Player {i + 1}" for i in range(players)] if isinstance(players, int) else list(
            players)
        if not 2 <= len(names) <= 4:
            raise GameError(code="players_count", count=len(names))
        for number, name in enumerate(names, start=1):
            if not str(name).strip():
                raise GameError(code="player_unnamed", number=number)
            if any(unicodedata.category(ch).startswith("C") for ch in str(name)):
                # a line break or NUL would split the scoreboard and the game record's lines
                raise GameError(code="player_control", number=number)
        if len(set(names)) != len(names):  # the scoreboard and a record tell players by name
            raise GameError("two players have the same name")
        if target is not None and target <= 0:
            raise GameError(f"target score must be positive, not {target}")
        if word_check not in MODES:
            raise GameError(f"word check must be one of {', '.join(MODES)}, not {word_check!r}")
        self.ruleset = ruleset
        self.players = names
        self.target = target
        self.word_check = word_check
        self.adjustments: list[tuple[int, int, str]] = []
        self._adjusted_after: list[int | None] = []   # turns played then; None: made by end()
        self.ended = False
        self._inputs: list[_Input] = []
        self.turns: list[Turn] = []

    # -- state ---------------------------------------------------------------
    @property
    def board(self) -> Board:
        return self.turns[-1].board if self.turns else Board()

    @property
    def totals(self) -> list[int]:
        totals = list(self.turns[-1].totals) if self.turns else [0] * len(self.players)
        for player, points, _ in self.adjustments:
            totals[player] += points
        return totals

    @property
    def to_move(self) -> int:
        return len(self.turns) % len(self.players)

    @property
    def finished(self) -> bool:
        return self.ended or self._target_decided()

    def _target_decided(self) -> bool:
        if self.target is None or not self.turns:
            return False
        round_over = self.turns[-1].player == len(self.players) - 1
        return round_over and max(self.turns[-1].totals) >= self.target

    @property
    def winner(self) -> int | None:
        """The player with the highest total once the game is decided; None on a tie."""
        if not self.finished:
            return None
        totals = self.totals
        best = max(totals)
        return totals.index(best) if totals.count(best) == 1 else None

    def placed_turns(self, upto: int | None = None) -> dict[tuple[int, int], int]:
        """Which turn first covered each occupied cell."""
        seen: dict[tuple[int, int], int] = {}
        for turn in self.turns[:upto]:
            for p in turn.move.placements:
                seen.setdefault((p.row, p.col), turn.number)
        return seen

    def unseen(self) -> Counter:
        """Tiles not on the board (in the bag or on racks), from the box's counts."""
        left = Counter(self.ruleset.counts)
        left["*"] = self.ruleset.stars
        for _, _, symbol in self.board.tiles():
            left["*" if is_star(symbol) else symbol] -= 1
        return +left

    # -- turns ---------------------------------------------------------------
    def play(self, board: Board, sure: bool = True, alternatives: list[dict] | None = None) -> Turn:
        """The next turn, given the board after it (an unchanged board is a pass)."""
        self._check_open()
        self._inputs.append(_Input(board, sure=sure, alternatives=list(alternatives or [])))
        return self._derive_last()

    def pass_turn(self, exchange: bool = False) -> Turn:
        self._check_open()
        self._inputs.append(_Input(None, exchange=exchange))
        return self._derive_last()

    def undo(self) -> Turn:
        """Take back the last turn."""
        if not self._inputs:
            raise GameError("nothing to undo: no turn has been played")
        self._inputs.pop()
        turn = self.turns.pop()
        self.ended = False
        # only what came after the undone turn goes with it (a GCG withdrawal keeps old bonuses)
        self._keep_adjustments(lambda n: n is not None and n <= len(self.turns))
        return turn

    def fix(self, number: int, cell: str, symbol: str) -> None:
        """Correct the tile that turn `number` placed on `cell` and re-score every later turn."""
        if not 1 <= number <= len(self.turns):
            raise GameError(code="no_turn", number=number, count=len(self.turns))
        row, col = parse_cell(cell)
        if not (symbol == STAR or symbol.upper() in self.ruleset.alphabet):
            raise GameError(f"{cell}: {symbol!r} is not a letter of the {self.ruleset.name} box")
        turn = self.turns[number - 1]
        if (row, col) not in {(p.row, p.col) for p in turn.move.placements}:
            raise GameError(f"turn {number} placed no tile on {cell}")
        old = turn.board[row, col]
        saved = [(inp.board.copy() if inp.board else None) for inp in self._inputs]
        for inp in self._inputs[number - 1:]:
            if inp.board is not None and inp.board[row, col] in (old, STAR):
                inp.board.set(row, col, symbol)
        try:
            self._rederive()
        except MoveError:
            for inp, board in zip(self._inputs, saved, strict=True):
                inp.board = board
            self._rederive()
            raise

    def end(self, racks: dict[int, str] | None = None) -> None:
        """End the game by agreement; with the racks left, apply the usual rack adjustments:
        each player loses their rack's value, and a player who went out gains the others'."""
        self._keep_adjustments(lambda n: n is not None)    # a challenge bonus stays
        if racks:
            values = {p: sum(self.ruleset.value("*" if ch == "?" else ch) for ch in rack
                             if not ch.isspace()) for p, rack in racks.items()}
            out = [p for p in range(len(self.players)) if not racks.get(p)]
            for player, value in values.items():
                if value:
                    self.adjust(player, -value, f"rack {racks[player]}", by_end=True)
            if len(out) == 1:
                self.adjust(out[0], sum(values.values()), "went out", by_end=True)
        self.ended = True

    def adjust(self, player: int, points: int, note: str, by_end: bool = False) -> None:
        """A recorded adjustment (end-of-game rack points, a challenge bonus, a time penalty)."""
        self.adjustments.append((player, points, note))
        self._adjusted_after.append(None if by_end else len(self.turns))

    def _keep_adjustments(self, keep) -> None:
        pairs = [(a, n) for a, n in zip(self.adjustments, self._adjusted_after, strict=True)
                 if keep(n)]
        self.adjustments = [a for a, _ in pairs]
        self._adjusted_after = [n for _, n in pairs]

    def _check_open(self) -> None:
        if self.finished:
            raise self._over_error()

    def _over_message(self) -> str:
        return str(self._over_error())

    def _over_error(self) -> GameError:
        if self.winner is None:
            return GameError("the game is over (a tie); no more turns")
        return GameError(code="game_won", name=self.players[self.winner])

    # -- derivation ------------------------------------------------------------
    def _rederive(self) -> None:
        self.turns = []
        for _ in range(len(self._inputs)):
            self._derive_turn(len(self.turns))

    def _derive_last(self) -> Turn:
        try:
            return self._derive_turn(len(self.turns))
        except MoveError:
            self._inputs.pop()
            raise

    def _derive_turn(self, index: int) -> Turn:
        inp, number = self._inputs[index], index + 1
        before = self.board
        player = index % len(self.players)
        move = Move() if inp.board is None else find_move(before, inp.board, self.ruleset,
                                                          turn=number)
        self._check_star_debt(move, player, number)     # a pass does not escape it either
        score = score_move(before, move, self.ruleset, self.placed_turns())
        totals = list(self.turns[-1].totals) if self.turns else [0] * len(self.players)
        totals[player] += score.total
        verdicts = self._verdicts(score, number)
        kind = "pass" if move.is_pass else "play"
        after = move.apply(before)
        turn = Turn(number, player, kind, move, score, after, totals, inp.sure,
                    inp.alternatives, verdicts, inp.exchange)
        self.turns.append(turn)
        return turn

    def _verdicts(self, score: Score, number: int) -> list[Verdict]:
        if self.word_check == "off":
            return []
        words = [w.word for w in score.words]
        verdicts = check_words(words, self.ruleset.word_check)
        bad = [v for v in verdicts if not v.ok]
        if bad and self.word_check == "strict":
            raise MoveError(code="word_not_allowed", turn=number,
                            words=[[v.word.upper(), v.reason] for v in bad])
        return verdicts

    def _check_star_debt(self, move: Move, player: int, number: int) -> None:
        """Under the next-move swap rule, a star taken must be played in the player's next move."""
        if self.ruleset.star_swap != "next-move":
            return
        n = len(self.players)
        earlier = self.turns[-n] if len(self.turns) >= n else None
        if earlier is None or not earlier.move.swaps:
            return
        owed = len(earlier.move.swaps) - earlier.move.stars_played()
        if owed > 0 and move.stars_played() < owed:
            cell = earlier.move.swaps[0].cell
            raise MoveError(code="star_next_move", turn=number, cell=cell,
                            earlier=earlier.number)

