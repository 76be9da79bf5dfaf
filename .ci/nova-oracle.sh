#!/usr/bin/env bash
# The nova oracle stage: nova 34.0.0's own libvirt driver (fakelibvirt, functional
# harness from the nova wheel) started on every fake host after OUR reshape must
# write nothing to Placement.  See tests/nova_oracle/test_nova_accepts.py.
# Builds .venv-nova (python3.11) from tests/nova_oracle/requirements.txt once.
# Usage: .ci/nova-oracle.sh [pytest args]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3.11}
venv=${NOVA_VENV:-$root/.venv-nova}
reqs=$root/tests/nova_oracle/requirements.txt
stamp=$venv/.installed
cd "$root"
if [[ ! -f $stamp || $reqs -nt $stamp ]]; then
  echo "nova-oracle: building $venv (nova 34.0.0 and its test harness, ~400 MB)"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -r "$reqs"
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
fi
# every test gets at most 15 minutes (the slowest, the e2e roll, takes ~1-2)
exec "$venv/bin/python" -m pytest -p no:cacheprovider -o addopts="" -q -W ignore::DeprecationWarning --timeout 900 tests/nova_oracle "$@"
