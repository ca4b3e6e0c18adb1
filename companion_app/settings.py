"""Where user data lives: `--data DIR`, else $ERUDIT_DATA, else the user's data folder."""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import EruditError


def data_dir(explicit: str | Path | None = None) -> Path:
    """The user data folder (made when first written); EruditError when a file stands there."""
    if explicit:
        folder = Path(explicit).expanduser()
    elif os.environ.get("ERUDIT_DATA"):
        folder = Path(os.environ["ERUDIT_DATA"]).expanduser()
    else:
        base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
        folder = Path(base) / "erudit"
    if folder.exists() and not folder.is_dir():
        raise EruditError(f"{folder}: the data folder is a file, not a folder")
    return folder
