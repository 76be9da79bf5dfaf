#!/usr/bin/env bash
# pytest over tests/unit and tests/integration (pytest.ini testpaths).
# The session-scoped real-Placement fixture starts one server per xdist worker on a
# kernel-picked 127.0.0.1 port, so the suite runs with `-n 2` by default.
# Usage: .ci/unit.sh [pytest args]   (PYTEST_ARGS overrides the default "-n 2")
# --durations prints the slowest tests of the run: a test there without the "slow" marker
# belongs in it (`make check` deselects "slow" and "real").
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/.venv/bin}
cd "$root"
status=0
# shellcheck disable=SC2086  # PYTEST_ARGS is a list of words on purpose
# -m "not extended": the slower duplicates of cases run here (another database, batch size or number
# of rolls) are `make extended`'s (UNIT_MARKS overrides it; UNIT_MARKS=extended is that lane).
# --dist worksteal: a worker that runs out of tests takes some of the other's, so the slow tests at
# the end of the run do not leave one core idle.
"$BIN/python" -m pytest ${PYTEST_ARGS--n 2 --dist worksteal} -m "${UNIT_MARKS-not extended}" --durations=15 "$@" || status=$?
if [[ $status -eq 5 ]]; then
  echo "unit: pytest collected no tests (tests/unit and tests/integration are empty): nothing to run"
  exit 0
fi
exit $status
