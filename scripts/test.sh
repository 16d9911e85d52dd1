#!/usr/bin/env bash
# README command 2: set up (idempotent) and run the whole test suite, in two pytest-xdist workers
# (RIG_TEST_WORKERS=N for another number, 0 for none). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -n "${RIG_TEST_WORKERS:-2}" --dist loadgroup "$@"
