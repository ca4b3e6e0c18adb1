"""Where user data lives: `--data DIR`, else $ERUDIT_DATA, else the user's data folder."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir(explicit: str | Path | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get("ERUDIT_DATA"):
        return Path(os.environ["ERUDIT_DATA"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "erudit"
