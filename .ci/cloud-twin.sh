#!/usr/bin/env bash
# The cloud twin (issue 41, docs/cloud-twin.md): a whole control plane (MariaDB, RabbitMQ, Keystone
# and Placement under uWSGI, nova-api/-conductor/-scheduler 34) as processes on 127.0.0.1, and
# nova-compute nodes on fakelibvirt, started by the tests of tests/cloud_twin.
# Builds .venv-nova (nova 34, as .ci/nova-oracle.sh) and .venv-nova33 (as .ci/upgrade-twin.sh) once and adds PyMySQL to .venv-nova (nova's control
# plane talks to MariaDB; the oracle's requirements do not need it).
# Usage: .ci/cloud-twin.sh [--stage] [pytest args]
#   --stage: the 2-node stage only (test_cloud_twin_stage.py); without it every case
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv=${CLOUD_TWIN_NOVA_VENV:-$root/.venv-nova}
.ci/nova-venv.sh "$venv" "$root/tests/nova_oracle/requirements.txt"
# the previous release the nodes run before the roll (tests/cloud_twin/novactl.py VENVS), as the
# upgrade twin builds it (a no-op when make twin-per-kind built it already)
.ci/nova-venv.sh "$root/.venv-nova33" "$root/tests/upgrade_twin/requirements-nova33.txt" \
  "$root/tests/upgrade_twin/upper-constraints-2026.1.txt"
if ! "$venv/bin/python" -c 'import pymysql' 2>/dev/null; then
  echo "cloud-twin: adding PyMySQL to $venv (nova's control plane on MariaDB)"
  "$venv/bin/pip" install -q PyMySQL 2>&1 | grep -v 'is ignored' || true
  "$venv/bin/python" -c 'import pymysql'
fi
tests=(tests/cloud_twin)
if [[ ${1:-} == --stage ]]; then
  shift
  tests=(tests/cloud_twin/test_cloud_twin_smoke.py tests/cloud_twin/test_cloud_twin_stage.py)
fi
existing=()
for t in "${tests[@]}"; do
  [[ -e $t ]] && existing+=("$t")
done
export CLOUD_TWIN_NOVA_VENV=$venv
exec .venv/bin/python -m pytest -p no:cacheprovider -q -s -W ignore::DeprecationWarning "${existing[@]}" "$@"
