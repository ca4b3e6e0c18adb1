"""The bundled sample game: photos of the board after each turn, and the scores a careful
scorer recorded from the same boards. `erudit demo` replays the photos and compares.

Regenerate (needs the `render` extra): python -m sample_images.game --seed 1
"""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path

from engine.game import Game
from engine.ruleset import load_ruleset

FOLDER = Path(__file__).resolve().parent
# Each photo is a phone-sized JPEG; quality keeps the bundle small but the letters crisp.
PHOTO_SIZE, JPEG_QUALITY = (1600, 1200), 82


def load_expected() -> dict:
    return json.loads(resources.files("sample_images").joinpath("game.json").read_text("utf-8"))


def photos() -> list[Path]:
    folder = Path(str(resources.files("sample_images")))
    return sorted(folder.glob("turn*.jpg"))


def replay_sample(data=None) -> tuple[Game, dict]:
    """Replay the sample photos as `erudit replay` would; returns the game and the record."""
    from companion_app.photos import replay_photos

    expected = load_expected()
    game = Game(load_ruleset(expected["ruleset"]), expected["players"], word_check="warn")
    replay_photos(game, [str(p) for p in photos()])
    return game, expected


def make(seed: int, turns: int) -> None:
    """Play a synthetic game, render a photo after every turn, record the true scores."""
    import cv2

    from synth.render import render_photo
    from synth.selfplay import random_game, star_free

    ruleset = load_ruleset("erudit")
    players = ["Аня", "Борис", "Вера"]
    boards = random_game(ruleset, turns, seed=seed)
    game = Game(ruleset, players, word_check="off")
    for board in boards:
        game.play(star_free(board))
    for old in FOLDER.glob("turn*.jpg"):
        old.unlink()
    for number, board in enumerate(boards, 1):
        shot = render_photo(str(board).split("\n"), seed=seed * 100 + number, style="erudit-black",
                            size=PHOTO_SIZE, fonts="heldout")
        cv2.imwrite(str(FOLDER / f"turn{number:02d}.jpg"), shot.image,
                    [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    record = {"ruleset": ruleset.name, "players": players, "seed": seed,
              "scores": [t.score.total for t in game.turns], "totals": game.totals,
              "boards": [b.rows() for b in boards]}
    (FOLDER / "game.json").write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n",
                                      encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Regenerate the bundled sample game")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--turns", type=int, default=10)
    options = parser.parse_args()
    make(options.seed, options.turns)
