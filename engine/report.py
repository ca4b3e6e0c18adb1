"""Turns and games as plain data (the JSON of `erudit replay --json`) and as a readable
scoreboard."""

from __future__ import annotations

from engine.game import Game, Turn
from engine.ruleset import PREMIUM_NAMES


def turn_dict(turn: Turn) -> dict:
    """One MOVE object of `erudit replay --json`."""
    tiles = [{"cell": p.cell, "letter": p.symbol} for p in turn.move.placements]
    tiles += [{"cell": p.cell, "letter": p.symbol, "swapped": True} for p in turn.move.swaps]
    return {
        "turn": turn.number,
        "player": turn.player,
        "kind": turn.kind,
        "tiles": tiles,
        "words": [{"word": w.word, "at": w.at, "score": w.score} for w in turn.score.words],
        "bonus": turn.score.bonus,
        "score": turn.score.total,
        "totals": list(turn.totals),
        "sure": turn.sure,
        "alternatives": list(turn.alternatives),
    }


def game_dict(game: Game) -> dict:
    return {"moves": [turn_dict(t) for t in game.turns], "totals": game.totals,
            "winner": game.winner}


def breakdown(turn: Turn) -> list[dict]:
    """Every word of a turn letter by letter: value, premium applied, premium used earlier."""
    words = []
    for w in turn.score.words:
        letters = [{
            "cell": le.cell, "letter": le.symbol, "value": le.value, "new": le.new,
            "premium": PREMIUM_NAMES.get(le.premium),
            "used_premium": PREMIUM_NAMES.get(le.used_premium),
            "used_on_turn": le.used_turn,
        } for le in w.letters]
        words.append({"word": w.word, "at": w.at, "letters": letters,
                      "word_multiplier": w.multiplier, "score": w.score,
                      "explain": w.explain()})
    return words


def scoreboard(game: Game) -> str:
    """A table a player reads: each turn's words and score, the running totals, the winner."""
    names = game.players
    width = max(8, *(len(n) for n in names))
    lines = [f"{'turn':>4}  {'player':<{width}}  {'score':>5}  totals   words"]
    for t in game.turns:
        words = ", ".join(f"{w.word} {w.at} {w.score}" for w in t.score.words)
        if t.kind == "pass":
            words = "exchange" if t.exchange else "pass"
        if t.score.bonus:
            words += f", whole rack +{t.score.bonus}"
        bad = [v.word for v in t.verdicts if not v.ok]
        if bad:
            words += f"  (not in the dictionary as a noun: {', '.join(bad)})"
        if not t.sure:
            words += "  (unsure: see alternatives)"
        totals = " : ".join(str(x) for x in t.totals)
        lines.append(f"{t.number:>4}  {names[t.player]:<{width}}  {t.score.total:>5}  "
                     f"{totals:<7}  {words}")
    for player, points, note in game.adjustments:
        lines.append(f"{'':>4}  {names[player]:<{width}}  {points:>+5}  {'':<7}  {note}")
    lines.append("final: " + ", ".join(f"{n} {s}" for n, s in zip(names, game.totals,
                                                                     strict=True)))
    if game.finished:
        who = "a tie" if game.winner is None else f"{names[game.winner]} wins"
        lines.append(f"game over: {who}")
    return "\n".join(lines)
