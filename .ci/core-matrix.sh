#!/usr/bin/env bash
# Unit tests and `ansible-test sanity` on every ansible-core release the collection claims
# (meta/runtime.yml requires_ansible ">=2.17.0"): 2.17 and 2.18 here, each in its own venv
# (.venv-core-<v>, built once from tests/core-matrix-requirements.txt); 2.19 is the project
# venv's and runs in the unit and sanity stages.  Usage: .ci/core-matrix.sh [versions...]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3.11}
reqs=$root/tests/core-matrix-requirements.txt
versions=("$@")
[[ ${#versions[@]} -gt 0 ]] || versions=(2.17 2.18)
cd "$root"
for v in "${versions[@]}"; do
  venv=$root/.venv-core-$v
  stamp=$venv/.installed
  if [[ ! -f $stamp || $reqs -nt $stamp ]]; then
    echo "core-matrix: building $venv (ansible-core $v)"
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip 2>&1 | grep -v 'is ignored' || true
    "$venv/bin/pip" install -q "ansible-core==$v.*" -r "$reqs" 2>&1 | { grep -v 'is ignored' || true; }; test "${PIPESTATUS[0]}" -eq 0
    mkdir -p "$venv/collections/ansible_collections/placement"
    ln -sfn "$root" "$venv/collections/ansible_collections/placement/upgrade"
    purelib=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "$venv/collections" > "$purelib/placement_upgrade_collection.pth"
    touch "$stamp"
  fi
  echo "core-matrix: ansible-core $("$venv/bin/python" -c 'import ansible.release as r; print(r.__version__)')"
  echo "core-matrix: unit tests (tests/unit)"
  "$venv/bin/python" -m pytest -p no:cacheprovider -q -n 2 tests/unit
  echo "core-matrix: ansible-test sanity"
  BIN=$venv/bin "$root/.ci/sanity.sh"
done
