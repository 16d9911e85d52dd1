#!/usr/bin/env bash
# README command 2: set up (idempotent) and run the whole test suite. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
