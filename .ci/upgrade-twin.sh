#!/usr/bin/env bash
# The upgrade twin stage (issue 29): a REAL older nova (31.x, 33.x), each in its own venv,
# boots guests through its own functional harness on file databases; nova 34 (.venv-nova)
# upgrades copies of them with its own nova-manage / placement-manage, the collection
# reshapes, nova 34's compute judges.  See docs/upgrade-twin.md.
# Builds .venv-nova31 / .venv-nova33 (python3.11, pinned by the release's
# upper-constraints from openstack/requirements) and .venv-nova (as .ci/nova-oracle.sh) once.
# Usage: .ci/upgrade-twin.sh [pytest args]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# build VENV REQUIREMENTS [CONSTRAINTS]: once (.ci/nova-venv.sh)
build() {
  "$root/.ci/nova-venv.sh" "$@"
}

twin=$root/tests/upgrade_twin
if [[ ${UPGRADE_TWIN_SKIP_BUILD:-} != 1 ]]; then
  build "${NOVA_VENV:-$root/.venv-nova}" "$root/tests/nova_oracle/requirements.txt"
  build "$root/.venv-nova31" "$twin/requirements-nova31.txt" "$twin/upper-constraints-2025.1.txt"
  build "$root/.venv-nova33" "$twin/requirements-nova33.txt" "$twin/upper-constraints-2026.1.txt"
fi
# the NEW release of a case judges it in its own venv: nova 34 (.venv-nova), then nova 33
# (.venv-nova33, the 31 -> 33 cases); each runs the older releases as subprocesses
status=0
ran=0
for judge in "${NOVA_VENV:-$root/.venv-nova}" "$root/.venv-nova33"; do
  echo "upgrade-twin: judging with $("$judge/bin/python" -c 'from nova import version; print("nova", version.version_string())')"
  "$judge/bin/python" -m pytest -p no:cacheprovider -o addopts="" -q -p no:logging \
    -W ignore::DeprecationWarning --timeout 1200 tests/upgrade_twin "$@" && rc=0 || rc=$?
  # 5: every case here was deselected (they are the other release's, or -k chose none here)
  if [[ $rc -eq 0 ]]; then ran=1; elif [[ $rc -ne 5 ]]; then status=$rc; ran=1; fi
done
if [[ $ran -eq 0 ]]; then
  echo "upgrade-twin: no case selected" >&2
  exit 5
fi
exit "$status"
