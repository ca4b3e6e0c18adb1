"""Rulesets and premium layouts: data files, loaded and validated by one loader.

>>> rs = load_ruleset("erudit")
>>> rs.rack, rs.bonus, rs.value("Ф")
(7, 15, 10)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from engine.errors import RulesetError
from engine.files import read_text

SIZE = 15
PREMIUMS = {".": (1, 1), "l": (2, 1), "L": (3, 1), "w": (1, 2), "W": (1, 3)}
PREMIUM_NAMES = {"l": "×2 letter", "L": "×3 letter", "w": "×2 word", "W": "×3 word"}
STAR_SWAP_RULES = ("same-move", "next-move", "never")
END_RULES = ("agreement", "scrabble")
WORD_CHECKS = ("ru", "none")
# how the box's jokers look: a printed star, a tile with nothing printed, or not said (either)
STAR_LOOKS = ("star", "blank", "either")
_FIELDS = {
    "name": str, "title": str, "alphabet": str, "stars": int, "rack": int, "bonus": int,
    "layout": str, "star_scores_letter": bool, "star_swap": str, "end": str,
    "word_check": str, "source": str, "tiles": dict,
}
_OPTIONAL = {"star_look": (str, "either")}


@dataclass(frozen=True)
class Layout:
    """A 15×15 premium grid: `W w L l .` per cell; `*` marks the centre, whose premium is
    `centre`."""

    name: str
    rows: tuple[str, ...]
    centre: str = "."

    def premium(self, row: int, col: int) -> str:
        """The premium code of a cell (`*` resolved to the centre's own premium)."""
        code = self.rows[row][col]
        return self.centre if code == "*" else code

    def text(self) -> str:
        return "\n".join(self.rows)

    def printed(self) -> tuple[str, ...]:
        """The rows as the box prints them: the centre shows its own premium where it has one
        (English boards: a double word), else the star."""
        centre = "*" if self.centre == "." else self.centre
        return tuple(row.replace("*", centre) for row in self.rows)


@dataclass(frozen=True)
class Ruleset:
    """One box's rules: letters with counts and values, stars, rack, bonus, layout, options."""

    name: str
    title: str
    alphabet: tuple[str, ...]
    counts: dict[str, int]
    values: dict[str, int]
    stars: int
    rack: int
    bonus: int
    layout: Layout
    star_scores_letter: bool
    star_swap: str
    end: str
    word_check: str
    source: str
    star_look: str = "either"

    @property
    def tile_count(self) -> int:
        return sum(self.counts.values()) + self.stars

    def value(self, symbol: str) -> int:
        """Points of a board symbol: a letter tile, a star `*`, or a star standing for a letter."""
        if symbol == "*":
            return 0
        if symbol.islower():
            return self.values.get(symbol.upper(), 0) if self.star_scores_letter else 0
        return self.values[symbol]

    def with_layout(self, layout: Layout) -> Ruleset:
        return replace(self, layout=layout)


def parse_layout(text: str, name: str = "layout") -> Layout:
    """Read a layout file: `#` comments, an optional `centre: X` line, then 15 rows of 15 codes."""
    rows, centre = [], "."
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("centre:"):
            centre = line.split(":", 1)[1].strip() or "."
            continue
        bad = set(line) - set(PREMIUMS) - {"*"}
        if len(line) != SIZE or bad:
            raise RulesetError(f"{name}: line {number}: expected 15 of 'W w L l . *', got {line!r}")
        rows.append(line)
    if len(rows) != SIZE:
        raise RulesetError(f"{name}: expected 15 rows, got {len(rows)}")
    if centre not in PREMIUMS:
        raise RulesetError(f"{name}: centre premium {centre!r} is not one of W w L l .")
    return Layout(name=name, rows=tuple(rows), centre=centre)


def load_layout(name_or_path: str, base: Path | None = None) -> Layout:
    """A bundled layout by name (`erudit`, `scrabble`) or a layout file path (relative paths
    are taken from `base`, the folder of the ruleset that names the layout)."""
    path = Path(name_or_path)
    if base is not None and not path.is_absolute():
        path = base / path
    if path.suffix == ".txt" and path.exists():
        return parse_layout(_read(path), name=path.stem)
    try:
        text = resources.files("engine.layouts").joinpath(f"{name_or_path}.txt").read_text("utf-8")
    except FileNotFoundError:
        raise RulesetError(f"unknown layout {name_or_path!r}") from None
    return parse_layout(text, name=name_or_path)


def _read(path: Path) -> str:
    return read_text(path, RulesetError)


def parse_ruleset(data: dict, source: str) -> Ruleset:
    """Validate a ruleset's JSON object; every problem names the file and the field."""
    if not isinstance(data, dict):
        raise RulesetError(f"{source}: a ruleset is a JSON object")
    for field, kind in _FIELDS.items():
        if field not in data:
            raise RulesetError(f"{source}: missing field {field!r}")
        if not isinstance(data[field], kind) or (kind is int and isinstance(data[field], bool)):
            raise RulesetError(f"{source}: field {field!r} must be {kind.__name__}")
    data = _with_defaults(data, source)
    for field, allowed in (("star_swap", STAR_SWAP_RULES), ("end", END_RULES),
                           ("word_check", WORD_CHECKS), ("star_look", STAR_LOOKS)):
        if data[field] not in allowed:
            raise RulesetError(f"{source}: field {field!r} must be one of {', '.join(allowed)}")
    alphabet = tuple(data["alphabet"])
    counts, values = _parse_tiles(data["tiles"], alphabet, source)
    for field in ("stars", "rack", "bonus"):
        if data[field] < 0 or (field == "rack" and data[field] == 0):
            raise RulesetError(f"{source}: field {field!r} must be positive")
    try:
        layout = load_layout(data["layout"], Path(source).parent)
    except RulesetError as exc:
        raise RulesetError(f"{source}: field 'layout': {exc}") from None
    return Ruleset(
        name=data["name"], title=data["title"], alphabet=alphabet, counts=counts, values=values,
        stars=data["stars"], rack=data["rack"], bonus=data["bonus"],
        layout=layout, star_scores_letter=data["star_scores_letter"],
        star_swap=data["star_swap"], end=data["end"], word_check=data["word_check"],
        source=data["source"], star_look=data["star_look"],
    )


def _with_defaults(data: dict, source: str) -> dict:
    """The ruleset's fields with the optional ones it leaves out at their defaults."""
    data = dict(data)
    for field, (kind, default) in _OPTIONAL.items():
        data.setdefault(field, default)
        if not isinstance(data[field], kind):
            raise RulesetError(f"{source}: field {field!r} must be {kind.__name__}")
    return data


def _parse_tiles(tiles: dict, alphabet: tuple[str, ...], source: str):
    if len(set(alphabet)) != len(alphabet) or not all(ch.isupper() for ch in alphabet):
        raise RulesetError(f"{source}: field 'alphabet' must be distinct upper-case letters")
    if set(tiles) != set(alphabet):
        odd = sorted(set(tiles) ^ set(alphabet))
        raise RulesetError(f"{source}: field 'tiles' does not match the alphabet at {''.join(odd)}")
    counts, values = {}, {}
    for letter in alphabet:
        pair = tiles[letter]
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(n, int) and n >= 0 for n in pair)):
            raise RulesetError(f"{source}: tiles[{letter!r}] must be [count, value]")
        counts[letter], values[letter] = pair
    return counts, values


def load_ruleset(name_or_path: str, data_dir: Path | None = None) -> Ruleset:
    """A ruleset by name (bundled or the user's own in DATA/rulesets) or by a `.json` path."""
    path = Path(name_or_path)
    if path.suffix != ".json":
        path = _find(name_or_path, data_dir)
    try:
        data = json.loads(_read(path))
    except json.JSONDecodeError as exc:
        raise RulesetError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    return parse_ruleset(data, str(path))


def _find(name: str, data_dir: Path | None) -> Path:
    for folder in _folders(data_dir):
        candidate = folder / f"{name}.json"
        if candidate.is_file():
            return candidate
    known = ", ".join(ruleset_names(data_dir))
    raise RulesetError(f"unknown ruleset {name!r} (installed: {known})")


def _folders(data_dir: Path | None) -> list[Path]:
    folders = [Path(str(resources.files("engine.rulesets")))]
    if data_dir is not None:
        folders.insert(0, Path(data_dir) / "rulesets")
    return folders


def installed_rulesets(data_dir: Path | None = None) -> tuple[dict[str, Ruleset],
                                                              list[RulesetError]]:
    """Every installed ruleset that loads, by installed name in `ruleset_names` order, and
    the error of each one that does not: a broken file in the user's folder hides no other."""
    loaded, broken = {}, []
    for name in ruleset_names(data_dir):
        try:
            loaded[name] = load_ruleset(name, data_dir)
        except RulesetError as exc:
            broken.append(exc)
    return loaded, broken


def ruleset_names(data_dir: Path | None = None) -> list[str]:
    """Names of every installed ruleset: bundled ones and the user's own."""
    names = set()
    for folder in _folders(data_dir):
        if folder.is_dir():
            names.update(p.stem for p in folder.glob("*.json"))
    return sorted(names, key=lambda n: (n != "erudit", n))


def ruleset_dict(ruleset: Ruleset) -> dict:
    """A ruleset as plain JSON data, its layout written out in full: what a game keeps, so that
    later edits of the ruleset file or a box's calibration never re-score it.

    >>> ruleset_from_dict(ruleset_dict(load_ruleset("erudit"))) == load_ruleset("erudit")
    True
    """
    rs = ruleset
    return {
        "name": rs.name, "title": rs.title, "alphabet": "".join(rs.alphabet), "stars": rs.stars,
        "rack": rs.rack, "bonus": rs.bonus, "star_scores_letter": rs.star_scores_letter,
        "star_swap": rs.star_swap, "end": rs.end, "word_check": rs.word_check,
        "star_look": rs.star_look, "source": rs.source,
        "tiles": {le: [rs.counts[le], rs.values[le]] for le in rs.alphabet},
        "layout": {"name": rs.layout.name, "rows": list(rs.layout.rows),
                   "centre": rs.layout.centre},
    }


def ruleset_from_dict(data: dict, source: str = "stored ruleset") -> Ruleset:
    """The ruleset ruleset_dict wrote, checked as a ruleset file is."""
    if not isinstance(data, dict) or not isinstance(data.get("layout"), dict):
        raise RulesetError(f"{source}: a ruleset with its layout written out is a JSON object")
    grid = data["layout"]
    rows, centre = grid.get("rows"), grid.get("centre", ".")
    if not isinstance(rows, list) or not all(isinstance(r, str) for r in rows):
        raise RulesetError(f"{source}: field 'layout': 'rows' must be a list of 15 lines")
    text = f"centre: {centre}\n" + "\n".join(rows)
    layout = parse_layout(text, name=str(grid.get("name", "layout")))
    ruleset = parse_ruleset({**data, "layout": "erudit"}, source)
    return ruleset.with_layout(layout)
