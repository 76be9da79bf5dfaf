#!/usr/bin/env bash
# The nova oracle stage: nova 34.0.0's own libvirt driver (fakelibvirt, functional
# harness from the nova wheel) started on every fake host after OUR reshape must
# write nothing to Placement.  See tests/nova_oracle/test_nova_accepts.py.
# Builds .venv-nova (python3.11) from tests/nova_oracle/requirements.txt once.
# Usage: .ci/nova-oracle.sh [pytest args]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv=${NOVA_VENV:-$root/.venv-nova}
cd "$root"
# nova 34.0.0 and its test harness, ~400 MB, built once
.ci/nova-venv.sh "$venv" "$root/tests/nova_oracle/requirements.txt"
# every test gets at most 15 minutes (the slowest, the e2e roll, takes ~1-2)
exec "$venv/bin/python" -m pytest -p no:cacheprovider -o addopts="" -q -W ignore::DeprecationWarning --timeout 900 tests/nova_oracle "$@"
