"""Fetch the extra training fonts of models/training-fonts.txt into a folder.

    python -m models.fonts ~/.cache/erudit/training-fonts     # then: models.train --fonts DIR

The packages are downloaded with `apt-get download` and unpacked with `dpkg-deb -x` into the
folder: nothing is installed, so the system's font split (and with it the held-out fonts and
every render the tests and benchmarks make) stays as it is.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

LIST = "training-fonts.txt"


def listed() -> tuple[list[str], tuple[str, ...]]:
    """(Debian packages, file-name prefixes to skip) from the list beside this module."""
    packages, skip = [], []
    for line in resources.files("models").joinpath(LIST).read_text("utf-8").splitlines():
        line = line.strip()
        if line.startswith("skip:"):
            skip += line.removeprefix("skip:").split()
        elif line and not line.startswith("#"):
            packages.append(line)
    return packages, tuple(skip)


def fetch(folder: Path) -> None:
    """Download the listed packages and unpack their files below `folder`."""
    packages, _ = listed()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["apt-get", "download", "-q", *packages], cwd=tmp, check=True)
        for deb in sorted(Path(tmp).glob("*.deb")):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(folder)], check=True)
    print(f"{len(packages)} font packages unpacked into {folder}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    try:
        fetch(args.folder.expanduser())
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"{args.folder}: could not fetch the fonts ({exc})")


if __name__ == "__main__":
    main()
