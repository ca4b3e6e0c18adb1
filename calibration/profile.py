"""Per-box calibration: `erudit calibrate` builds a profile, `--profile` reads with it.

    >>> box = build_profile("empty.jpg", "alphabet.jpg", "kitchen", "erudit", data_dir)
    >>> print("\\n".join(box.summary()))
    >>> box = load_profile("kitchen", data_dir)      # later, in another process
    >>> read_board(image, ruleset=box.apply_to(ruleset), profile=box)

A profile is a small folder `DATA/profiles/NAME/`: profile.json (name, ruleset, model hash,
layout, square colours, differences from the ruleset's layout), refs.npz (reference
embeddings of the box's empty cells and letters, valid only for the model that made them)
and empty.png / alphabet.png (the calibration photos' top-down views, from which another
model makes its own references when the profile is first loaded by it).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from calibration.box import Profile, check_layout, hex_colour, load_box
from calibration.build import box_name, build, check_name
from engine.errors import ProfileError, RulesetError
from engine.files import folder_why
from engine.ruleset import Ruleset, load_ruleset

__all__ = ["Profile", "ProfileError", "build_profile", "describe", "load_profile",
           "profile_folder", "saved_profiles"]


def profile_folder(name: str, data_dir) -> Path:
    return Path(data_dir) / "profiles" / box_name(name)


def build_profile(empty_photo, alphabet_photo, name: str, ruleset: str | Ruleset,
                  data_dir) -> Profile:
    """Calibrate one box from its photos and save the profile under `data_dir`."""
    name = box_name(name)
    check_name(name)
    if isinstance(ruleset, str):
        try:
            ruleset = load_ruleset(ruleset, Path(data_dir))
        except RulesetError as exc:
            raise ProfileError(str(exc)) from None
    profile = build(empty_photo, alphabet_photo, name, ruleset)
    folder = profile_folder(name, data_dir)
    try:
        profile.save(folder)
    except OSError as exc:
        raise ProfileError(f"{folder}: cannot save the profile ({folder_why(exc)})") from None
    _cached.cache_clear()
    return profile


def load_profile(name: str, data_dir) -> Profile:
    """The saved profile NAME (ProfileError when unknown, corrupt or of another model)."""
    name = box_name(name)
    check_name(name)
    folder = profile_folder(name, data_dir)
    stamp = tuple(path.stat().st_mtime_ns if path.exists() else 0   # a file edited: read again
                  for path in (folder / "refs.npz", folder / "profile.json"))
    return _cached(str(folder.resolve()), name, stamp)


@lru_cache(maxsize=8)
def _cached(folder: str, name: str, stamp: tuple) -> Profile:
    return load_box(Path(folder), name)


def describe(meta: dict) -> dict:
    """What a profile says of its box, for a player: its ruleset, the layout read from the
    empty board and where it differs from the ruleset's, the letters it knows by sight, and
    each kind of square's colour (#rrggbb). `meta` is profile.json's content."""
    layout = [str(row) for row in meta["layout"]]
    check_layout(layout)
    differences = [{key: d[key] for key in ("cell", "box", "ruleset")}
                   for d in meta["differences"]]
    colours = {code: f"#{hex_colour(colour['bgr'])}" for code, colour in meta["colours"].items()}
    return {"name": meta["name"], "ruleset": meta["ruleset"], "layout": layout,
            "differences": differences, "letters": "".join(meta["letters"]), "colours": colours}


def saved_profiles(data_dir) -> list[dict]:
    """describe() of every profile saved under `data_dir`, by name, from profile.json alone
    (no model is loaded); a damaged one as {"name", "error"}."""
    root = Path(data_dir) / "profiles"
    found = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if not (folder / "profile.json").is_file():
            continue
        try:
            found.append(describe(json.loads((folder / "profile.json").read_text("utf-8"))))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            found.append({"name": folder.name, "error": f"damaged ({exc}); calibrate it again"})
    return found
