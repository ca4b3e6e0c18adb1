#!/usr/bin/env bash
# Installs everything the tests need on a fresh Debian machine, then lints and runs the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

FONTS="fonts-dejavu fonts-liberation fonts-freefont-ttf fonts-noto-core fonts-roboto fonts-open-sans
fonts-crosextra-carlito fonts-crosextra-caladea fonts-linuxlibertine fonts-paratype fonts-go
fonts-cantarell fonts-oldstandard fonts-jetbrains-mono"
missing=""
for pkg in $FONTS chromium; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[test,train]'
python3 -m ruff check .
# two workers, one a core; a module whose tests share costly fixtures (marked xdist_group)
# runs in one of them
python3 -m pytest -q -n 2 --dist loadgroup "$@"
