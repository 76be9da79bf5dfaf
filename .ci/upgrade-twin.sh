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
PYTHON=${PYTHON:-python3.11}
cd "$root"

# build VENV REQUIREMENTS [CONSTRAINTS]
build() {
  local venv reqs=$2 constraints=${3:-}
  venv=$(realpath -m "$1")
  local stamp=$venv/.installed
  if [[ -f $stamp && ! $reqs -nt $stamp && ( -z $constraints || ! $constraints -nt $stamp ) ]]; then
    return 0
  fi
  echo "upgrade-twin: building $venv from $(basename "$reqs")${constraints:+ with $(basename "$constraints")}"
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip 2>&1 | grep -v "is ignored" || true
  local pin=()
  [[ -z $constraints ]] || pin=(-c "$constraints")
  # (the image's pip.conf names local indexes that may be absent: pip's "is ignored" lines are noise)
  if ! "$venv/bin/pip" install -q "${pin[@]}" -r "$reqs" >"$venv/pip.log" 2>&1; then
    grep -v 'is ignored' "$venv/pip.log" >&2
    echo "upgrade-twin: pip failed building $venv (full log: $venv/pip.log)" >&2
    exit 1
  fi
  local purelib
  purelib=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  # nova's API fixture looks for etc/nova/api-paste.ini next to the package; the
  # wheel installs it under <venv>/etc/nova
  mkdir -p "$purelib/etc"
  ln -sfn "$venv/etc/nova" "$purelib/etc/nova"
  # the collection's core, importable as ansible_collections.placement.upgrade
  mkdir -p "$venv/collections/ansible_collections/placement"
  ln -sfn "$root" "$venv/collections/ansible_collections/placement/upgrade"
  echo "$venv/collections" > "$purelib/placement_upgrade_collection.pth"
  touch "$stamp"
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
