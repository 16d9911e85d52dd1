#!/usr/bin/env bash
# README command 1: set up (idempotent) and run `rig demo` on the bundled sites. Arguments go to `rig demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/rig demo "$@"
