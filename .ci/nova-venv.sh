#!/usr/bin/env bash
# Build (once) a venv of a nova release and its functional harness, laid out as the nova oracle
# and the upgrade twin use it: nova's api-paste.ini where its API fixture looks, and the
# collection's core importable as ansible_collections.placement.upgrade.  Rebuilt from scratch
# when REQUIREMENTS (or CONSTRAINTS) is newer than the venv's stamp.
# Usage: .ci/nova-venv.sh VENV REQUIREMENTS [CONSTRAINTS]   (PYTHON: the interpreter, python3.11)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3.11}

venv=$(realpath -m "$1")
reqs=$2
constraints=${3:-}
stamp=$venv/.installed
if [[ -f $stamp && ! $reqs -nt $stamp && ( -z $constraints || ! $constraints -nt $stamp ) ]]; then
  exit 0
fi
echo "nova-venv: building $venv from $(basename "$reqs")${constraints:+ with $(basename "$constraints")}"
rm -rf "$venv"
"$PYTHON" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip 2>&1 | grep -v "is ignored" || true
pin=()
[[ -z $constraints ]] || pin=(-c "$constraints")
# (the image's pip.conf names local indexes that may be absent: pip's "is ignored" lines are noise)
if ! "$venv/bin/pip" install -q "${pin[@]}" -r "$reqs" >"$venv/pip.log" 2>&1; then
  grep -v 'is ignored' "$venv/pip.log" >&2
  echo "nova-venv: pip failed building $venv (full log: $venv/pip.log)" >&2
  exit 1
fi
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
