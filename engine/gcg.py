"""Game records in GCG notation: read a record into a game, write a game as a record.

Placement moves become boards and go through the same board → move → score path as
photos. Our own pragmas: `#ruleset NAME` names the box's rules, `#swap CELL LETTER` after a
move says it swapped the star on CELL for LETTER; stars unknown to GCG are `?`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from engine.board import Board, parse_cell, parse_position
from engine.errors import BoardTextError, GameError, MoveError, RecordError
from engine.files import why
from engine.game import Game
from engine.ruleset import Ruleset

_POSITION = re.compile(r"^(\d{1,2}[A-Oa-o]|[A-Oa-o]\d{1,2})$")
# a move's score: `+12`, `-5`; some programs (ScrabScrap) write a pass's or exchange's as `0`
_SCORE = re.compile(r"^[+-]?\d+$")


@dataclass
class Event:
    """One `>` line of a record."""

    line: int
    nick: str
    kind: str                  # play | withdrawn | pass | exchange | bonus | end | time
    position: str = ""
    word: str = ""
    score: int = 0
    total: int | None = None
    rack: str = ""
    swaps: list[tuple[str, str]] = field(default_factory=list)   # (cell, letter) from #swap


@dataclass
class Record:
    players: list[tuple[str, str]] = field(default_factory=list)   # (nick, full name)
    ruleset: str | None = None
    events: list[Event] = field(default_factory=list)


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_record(path: str | Path) -> Record:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {why(exc)}") from None
    return parse_record(decode(data), str(path))


def parse_record(text: str, source: str = "record") -> Record:
    record = Record()
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        line = raw.strip()
        if line.startswith("#player"):
            parts = line.split(None, 2)
            if len(parts) < 2:
                raise RecordError(f"{source}: line {number}: player pragma without a nick")
            record.players.append((parts[1], parts[2] if len(parts) > 2 else parts[1]))
        elif line.startswith("#ruleset"):
            record.ruleset = line.split(None, 1)[1].strip() if " " in line else None
        elif line.startswith("#swap"):
            _parse_swap(record, line, f"{source}: line {number}")
        elif line.startswith(">"):
            record.events.append(_parse_event(line, number, source))
    for event in record.events:
        if event.nick not in [nick for nick, _ in record.players]:
            record.players.append((event.nick, event.nick))
    if not record.events:
        raise RecordError(f"{source}: no moves in the record")
    return record


def _parse_swap(record: Record, line: str, where: str) -> None:
    parts = line.split()
    if len(parts) != 3 or not record.events:
        raise RecordError(f"{where}: expected '#swap CELL LETTER' after a move")
    record.events[-1].swaps.append((parts[1], parts[2]))


def _parse_event(line: str, number: int, source: str) -> Event:
    nick, sep, rest = line[1:].partition(":")
    tokens = rest.split()
    where = f"{source}: line {number}"
    if not sep or len(tokens) < 1:
        raise RecordError(f"{where}: expected '>nick: RACK MOVE +score total'")
    total = int(tokens.pop()) if len(tokens) >= 2 and re.fullmatch(r"-?\d+", tokens[-1]) else None
    if not tokens or not _SCORE.match(tokens[-1]):
        raise RecordError(f"{where}: no score like +12 in {line!r}")
    score = int(tokens.pop())
    event = Event(number, nick.strip(), "", score=score, total=total)
    if tokens and not _is_move_token(tokens[0]):
        event.rack = tokens.pop(0)
    event.kind, event.position, event.word = _classify(tokens, where)
    return event


def _is_move_token(token: str) -> bool:
    return bool(_POSITION.match(token)) or token.startswith(("-", "("))


def _classify(tokens: list[str], where: str) -> tuple[str, str, str]:
    if not tokens:
        return "pass", "", ""
    head = tokens[0]
    if _POSITION.match(head):
        if len(tokens) != 2:
            raise RecordError(f"{where}: expected a position and a word")
        return "play", head, tokens[1]
    if head == "--":
        return "withdrawn", "", ""
    if head == "-":
        return "pass", "", ""
    if head.startswith("-"):
        return "exchange", "", head[1:]
    if head == "(challenge)":
        return "bonus", "", ""
    if head == "(time)":
        return "time", "", ""
    if head.startswith("(") and head.endswith(")"):
        return "end", "", head[1:-1]
    raise RecordError(f"{where}: cannot read the move {' '.join(tokens)!r}")


def place_word(board: Board, pos: str, word: str, where: str) -> Board:
    """The board after writing a GCG word at a position: `.` or a letter already there plays
    through an old tile, lower case is a blank (star) standing for that letter."""
    row, col, across = parse_position(pos)
    dr, dc = (0, 1) if across else (1, 0)
    after = board.copy()
    letters = _letters(word)
    for i, symbol in enumerate(letters):
        r, c = row + dr * i, col + dc * i
        if not board.in_bounds(r, c):
            raise RecordError(f"{where}: {word} at {pos} runs off the board")
        old = board[r, c]
        if symbol == "." or (old != "." and _same(old, symbol)):
            if old == ".":
                raise RecordError(f"{where}: {word} at {pos} plays through an empty cell")
            continue
        if old != ".":
            raise RecordError(f"{where}: {word} at {pos} covers a tile already there")
        after.set(r, c, "*" if symbol == "?" else symbol)
    return after


def _letters(word: str) -> list[str]:
    """Letters of a GCG word; `(AB)` marks played-through letters in some notations."""
    out, through = [], False
    for ch in word:
        if ch in "()":
            through = ch == "("
            continue
        out.append("." if through else ch)
    return out


def _same(old: str, symbol: str) -> bool:
    return old == symbol or (old.islower() and old == symbol.lower())


def replay_record(record: Record, ruleset: Ruleset, target: int | None = None,
                  source: str = "record") -> tuple[Game, list[int | None]]:
    """Play a record through a game; returns the game and each turn's recorded score."""
    nicks = [nick for nick, _ in record.players]
    names = [name for _, name in record.players]
    if len(set(names)) < len(names):  # two players of one full name: their nicks tell them apart
        names = nicks
    try:
        game = Game(ruleset, names, target=target, word_check="off")
    except GameError as exc:  # the record's #player lines: too few or too many, or a nick twice
        raise RecordError(f"{source}: {exc}") from None
    recorded: list[int | None] = []
    for event in record.events:
        where = f"{source}: line {event.line}"
        player = nicks.index(event.nick)
        if event.kind in ("bonus", "time", "end"):
            game.adjust(player, event.score, event.kind)
            continue
        if event.kind == "withdrawn":
            _withdraw(game, recorded, where)
            continue
        if player != game.to_move:
            raise RecordError(f"{where}: {event.nick} moves out of turn")
        if event.kind == "play" or event.swaps:
            after = game.board.copy()
            if event.kind == "play":
                after = place_word(after, event.position, event.word, where)
            for cell, letter in event.swaps:
                after.set(*parse_cell(cell), letter)
            try:
                game.play(after)
            except (MoveError, BoardTextError) as exc:
                raise RecordError(f"{where}: {exc}") from None
        else:
            game.pass_turn(exchange=event.kind == "exchange")
        recorded.append(event.score)
    return game, recorded


def _withdraw(game: Game, recorded: list[int | None], where: str) -> None:
    if not game.turns or game.turns[-1].kind != "play":
        raise RecordError(f"{where}: a withdrawn move without a play before it")
    game.undo()
    recorded.pop()
    game.pass_turn()
    recorded.append(0)


def write_record(game: Game) -> str:
    """The game as a GCG record (UTF-8)."""
    nicks = _nicks(game.players)
    lines = ["#character-encoding UTF-8", f"#ruleset {game.ruleset.name}"]
    lines += [f"#player{i + 1} {nick} {name}" for i, (nick, name) in
              enumerate(zip(nicks, game.players, strict=True))]
    for turn in game.turns:
        nick, total = nicks[turn.player], turn.totals[turn.player]
        if not turn.move.placements:     # a pass, an exchange, or (next-move rule) a swap only
            what = "-?" if turn.exchange else "-"
            lines.append(f">{nick}: {what} +{turn.score.total} {total}")
        else:
            rack = "".join("?" if p.symbol == "*" or p.symbol.islower() else p.symbol
                           for p in turn.move.placements)
            pos, word = _main_word(turn)
            lines.append(f">{nick}: {rack} {pos} {word} +{turn.score.total} {total}")
        lines += [f"#swap {swap.cell} {swap.symbol}" for swap in turn.move.swaps]
    return "\n".join(lines) + "\n"


def _main_word(turn) -> tuple[str, str]:
    new = {p.cell for p in turn.move.placements}
    main = turn.score.words[0]
    word = "".join(
        ("?" if le.symbol == "*" else le.symbol) if le.cell in new else "."
        for le in main.letters)
    return main.at, word


def _nicks(names: list[str]) -> list[str]:
    nicks = []
    for i, name in enumerate(names):
        nick = re.sub(r"\s+", "_", name.strip()) or f"p{i + 1}"
        nicks.append(nick if nick not in nicks else f"{nick}_{i + 1}")
    return nicks


__all__ = ["Event", "Record", "parse_record", "read_record", "replay_record", "write_record",
           "place_word"]
