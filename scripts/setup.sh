#!/usr/bin/env bash
# Sets up everything the rig needs on Debian 12 with Python 3.11; safe to run again (it skips what is done).
#   - Debian's Chromium and fonts (apt; as root, or through sudo)
#   - a virtual environment in .venv with the rig, browser-use and the test tools
# Environment: PYTHON (default python3), RIG_SKIP_APT=1 to skip apt (bring your own RIG_CHROMIUM).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
APT_PACKAGES=(chromium fonts-liberation fonts-dejavu-core)

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then missing+=(python3-venv); fi
if [ "${RIG_SKIP_APT:-0}" != 1 ] && [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} from Debian" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$PYTHON" --version)" >&2
  "$PYTHON" -m venv .venv
fi

# Reinstall only when the project's dependencies changed.
stamp=.venv/.rig-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || ! .venv/bin/python -c 'import rig' 2>/dev/null; then
  echo "setup: installing sgr-rig and its extras into .venv" >&2
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[browser-use,ray,test]"
  echo "$want" > "$stamp"
fi
