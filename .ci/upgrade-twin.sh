#!/usr/bin/env bash
# The upgrade twin stage (issue 29): a REAL older nova (31.x, 33.x), each in its own venv,
# boots guests through its own functional harness on file databases; the new release (nova 34
# in .venv-nova, nova 33 in .venv-nova33 for the 31 -> 33 cases) upgrades copies of them with
# its own nova-manage / placement-manage, the collection reshapes, the new release's compute
# judges.  See docs/upgrade-twin.md.
# Builds .venv-nova31 / .venv-nova33 (python3.11, pinned by the release's upper-constraints
# from openstack/requirements) and .venv-nova (as .ci/nova-oracle.sh) once.
# The two judges run at the same time (one pytest process each), each into its own log,
# printed when both are done.
# Usage: .ci/upgrade-twin.sh [--per-kind] [pytest args]
#   --per-kind: one release pair per reshape kind (what `make test` runs); without it, every
#   case of every pair (`make upgrade-twin`)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# one pair per kind: the pair where the kind really moves (SEV moves only from 31: nova 33
# already reports <node>_amd_sev) and, where several do, the newest
PER_KIND=(
  Test33To34VGPU                      # vGPU
  Test33To34PCI                       # PCI passthrough, report_in_placement off -> on
  Test31To33SEV                       # SEV
  Test33To34PCPU                      # pinned CPUs (and, as Test33To34PCPUMigrationInFlight, a migration in flight)
  Test33To34Mixed                     # several kinds on one host
)
args=()
if [[ ${1:-} == --per-kind ]]; then
  shift
  expr=$(printf ' or %s' "${PER_KIND[@]}")
  args=(-k "${expr# or }")
fi

twin=$root/tests/upgrade_twin
if [[ ${UPGRADE_TWIN_SKIP_BUILD:-} != 1 ]]; then
  "$root/.ci/nova-venv.sh" "${NOVA_VENV:-$root/.venv-nova}" "$root/tests/nova_oracle/requirements.txt"
  # the two older releases' venvs are independent: built side by side
  "$root/.ci/nova-venv.sh" "$root/.venv-nova31" "$twin/requirements-nova31.txt" "$twin/upper-constraints-2025.1.txt" &
  b31=$!
  "$root/.ci/nova-venv.sh" "$root/.venv-nova33" "$twin/requirements-nova33.txt" "$twin/upper-constraints-2026.1.txt" &
  b33=$!
  wait "$b31"
  wait "$b33"
fi

logs=$root/tests/output/upgrade-twin
mkdir -p "$logs"
# the NEW release of a case judges it in its own venv: nova 34 (.venv-nova) and nova 33
# (.venv-nova33, the 31 -> 33 cases); each runs the older releases as subprocesses and
# deselects the other judge's cases
judges=("${NOVA_VENV:-$root/.venv-nova}" "$root/.venv-nova33")
pids=()
for i in "${!judges[@]}"; do
  judge=${judges[$i]}
  (
    echo "upgrade-twin: judging with $("$judge/bin/python" -c 'from nova import version; print("nova", version.version_string())')"
    exec "$judge/bin/python" -m pytest -p no:cacheprovider -o addopts="" -q -p no:logging \
      -W ignore::DeprecationWarning --timeout 1200 --durations=0 tests/upgrade_twin "${args[@]}" "$@"
  ) >"$logs/judge-$i.log" 2>&1 &
  pids+=("$!")
done
status=0
ran=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" && rc=0 || rc=$?
  cat "$logs/judge-$i.log"
  # 5: every case here was deselected (they are the other release's, or -k chose none here)
  if [[ $rc -eq 0 ]]; then ran=1; elif [[ $rc -ne 5 ]]; then status=$rc; ran=1; fi
done
if [[ $ran -eq 0 ]]; then
  echo "upgrade-twin: no case selected" >&2
  exit 5
fi
exit "$status"
