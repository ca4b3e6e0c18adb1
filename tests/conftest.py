"""Shared helpers: for the rules tests boards from a few placements and rulesets written to a
temporary folder; for the reader's tests a network that counts what it reads; the path to the
real data in ../shared (skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_web_helpers import PHONE

from engine.board import Board, parse_cell
from engine.game import Game
from engine.move import find_move
from engine.ruleset import load_ruleset
from engine.score import score_move

REPO = Path(__file__).resolve().parents[1]
BOARDS = Path(__file__).resolve().parent / "boards"
ERUDIT = load_ruleset("erudit")


class CountingNetwork:
    """A classifier (vision.classifier.Model) that notes how many crops each call reads."""

    def __init__(self, model):
        self.model, self.read = model, []

    def __getattr__(self, name):
        return getattr(self.model, name)

    def run(self, crops):
        self.read.append(len(crops))
        return self.model.run(crops)

    def run_both(self, crops):
        self.read.append(len(crops))
        return self.model.run_both(crops)


def place(board: Board, cell: str, word: str, across: bool = True) -> Board:
    """The board with `word` written from `cell`; `.` in the word steps over a tile already there.

    >>> place(Board(), "G8", "КОТ")["H8"]
    'О'
    """
    row, col = parse_cell(cell)
    dr, dc = (0, 1) if across else (1, 0)
    after = board.copy()
    for i, symbol in enumerate(word):
        if symbol != ".":
            after.set(row + dr * i, col + dc * i, symbol)
    return after


def board_with(*placements: tuple[str, str, bool], start: Board | None = None) -> Board:
    """A board from (cell, word, across) placements, e.g. ("G8", "КОТ", True)."""
    board = start.copy() if start is not None else Board()
    for cell, word, across in placements:
        board = place(board, cell, word, across)
    return board


def score_of(before: Board, after: Board, ruleset=ERUDIT):
    """The Score of the move from `before` to `after` (legality checked on the way)."""
    return score_move(before, find_move(before, after, ruleset), ruleset)


def play_all(game: Game, *placements: tuple[str, str, bool]):
    """Play each placement as the next turn on the game's current board; returns the turns."""
    return [game.play(place(game.board, *p)) for p in placements]


def write_ruleset(folder: Path, name: str, base: str = "erudit", **changes) -> Path:
    """A copy of a bundled ruleset with some fields changed, saved as folder/name.json."""
    data = json.loads((REPO / "engine" / "rulesets" / f"{base}.json").read_text("utf-8"))
    data.update(name=name, **changes)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def shared() -> Path:
    """The read-only real data next to the repository (repo_root/../shared)."""
    path = REPO.parent / "shared"
    if not path.is_dir():
        pytest.skip(f"real data folder {path} is absent (it lives next to the repository, "
                    "never inside it)")
    return path


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    """An empty user data folder, so no test sees (or writes) the real user's data."""
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv("ERUDIT_DATA", str(folder))
    return folder


# a board of a few words with a star, Ё and rare letters: the reader's tests read it
WORDS = [
    "...............",
    "...............",
    ".....Щ.........",
    ".....У.........",
    ".....К.........",
    ".....А.........",
    "...............",
    "...ЦАПЛЯ*Ы.....",
    "......Ё....Й...",
    "......Ж..ЭХО...",
    "......И........",
    "...............",
    "...............",
    "...............",
    "...............",
]


def erudit_words() -> list[str]:
    """WORDS as an Эрудит box shows them (no Ё: an Е)."""
    return [row.replace("Ё", "Е") for row in WORDS]


@pytest.fixture
def browser(chromium):
    """A function making a new page (its own cookies, unless a `context` is given) on a
    screen of the given size, in the test module's own Chromium (its `chromium` fixture)."""
    contexts = []

    def new_page(screen=PHONE, context=None):
        if context is None:
            mobile = screen is PHONE
            context = chromium.new_context(viewport=screen, is_mobile=mobile, has_touch=mobile,
                                           device_scale_factor=2 if mobile else 1)
            contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        return page

    yield new_page
    for context in contexts:
        context.close()
