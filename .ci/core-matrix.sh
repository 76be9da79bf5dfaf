#!/usr/bin/env bash
# Unit tests and `ansible-test sanity` on every ansible-core release the collection claims
# (meta/runtime.yml requires_ansible ">=2.18.0"): 2.18 (Python 3.11), 2.20 (Python 3.12), 2.21
# and 2.22 (Python 3.13; its release candidate until 2.22.0 is out) here, each in its own venv
# (.venv-core-<v>, built once from
# tests/core-matrix-requirements.txt with the Python that release's controller supports);
# 2.19 is the project venv's and runs in the unit and sanity stages.
# Usage: .ci/core-matrix.sh [versions...]   (default: 2.18 and 2.22, the oldest release claimed and
# the newest; `make core-matrix-full` names all four)
# The unit tests run on the releases named by CORE_MATRIX_UNITS (default "2.18 2.22"), sanity on those
# named by CORE_MATRIX_SANITY (default "2.22": the newest, where deprecations and removals show first;
# 2.19's sanity is the sanity stage's); "all" is every release given. make test runs the defaults:
# each release's sanity builds ansible-test's own venvs for it (3-4 minutes a release on a fresh
# machine, measured 2026-12-01), so 2.18's, 2.20's and 2.21's sanity and 2.20's and 2.21's unit tests
# are `make core-matrix-full`'s (CORE_MATRIX_UNITS=all CORE_MATRIX_SANITY=all, the four releases), to
# keep make test within its 45 minutes.
# CORE_MATRIX_PRIME=1 only builds what the stage needs (each release's venv, and ansible-test's
# sanity venvs of the releases whose sanity it runs: `ansible-test sanity --prime-venvs`) and runs
# no test: make test does it in the background while the unit stage runs (.ci/prefetch.sh).
set -euo pipefail
units=${CORE_MATRIX_UNITS:-2.18 2.22}
prime=${CORE_MATRIX_PRIME:-0}
sanity=${CORE_MATRIX_SANITY:-2.22}

root=$(cd "$(dirname "$0")/.." && pwd)
reqs=$root/tests/core-matrix-requirements.txt
versions=("$@")
# 2.22 is its release candidate (2.22.0rc1) until 2.22.0 is out (core_requirement below)
[[ ${#versions[@]} -gt 0 ]] || versions=(2.18 2.22)
cd "$root"

# The controller Python of each release: 2.20 and later need 3.12+.
python_for() {
  case $1 in
    2.17|2.18|2.19) echo 3.11 ;;
    2.20) echo 3.12 ;;
    *) echo 3.13 ;;
  esac
}

# The pip requirement of a release: its newest, or its release candidate while it has no final
# release (a specifier naming a pre-release lets pip take one; "==2.22.*" alone would not).
core_requirement() {
  case $1 in
    2.22) echo "ansible-core>=2.22.0rc1,<2.23" ;;
    *) echo "ansible-core==$1.*" ;;
  esac
}

# python3.X: on the PATH, or pyenv's copy of that version (this machine image carries several)
find_python() {
  local want=python$1 prefix
  if command -v pyenv >/dev/null 2>&1 && prefix=$(pyenv prefix "$(pyenv versions --bare | grep -E "^$1(\.|$)" | tail -1)" 2>/dev/null) \
      && [[ -x $prefix/bin/$want ]]; then
    echo "$prefix/bin/$want"
  elif command -v "$want" >/dev/null 2>&1 && "$want" -c 'import sys' 2>/dev/null; then
    command -v "$want"
  else
    echo "core-matrix: $want is needed for ansible-core $2 and was not found (on the PATH or in pyenv)" >&2
    return 1
  fi
}

for v in "${versions[@]}"; do
  pyver=$(python_for "$v")
  PYTHON=$(find_python "$pyver" "$v")
  venv=$root/.venv-core-$v
  stamp=$venv/.installed
  if [[ ! -f $stamp || $reqs -nt $stamp ]]; then
    echo "core-matrix: building $venv (ansible-core $v, Python $pyver)"
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip 2>&1 | grep -v 'is ignored' || true
    "$venv/bin/pip" install -q "$(core_requirement "$v")" -r "$reqs" 2>&1 | { grep -v 'is ignored' || true; }; test "${PIPESTATUS[0]}" -eq 0
    mkdir -p "$venv/collections/ansible_collections/placement"
    ln -sfn "$root" "$venv/collections/ansible_collections/placement/upgrade"
    purelib=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "$venv/collections" > "$purelib/placement_upgrade_collection.pth"
    touch "$stamp"
  fi
  echo "core-matrix: ansible-core $("$venv/bin/python" -c 'import ansible.release as r; print(r.__version__)')"
  if [[ $prime == 1 ]]; then
    :
  elif [[ $units == all || " $units " == *" $v "* ]]; then
    echo "core-matrix: unit tests (tests/unit)"
    "$venv/bin/python" -m pytest -p no:cacheprovider -q -n 2 tests/unit
  else
    echo "core-matrix: ansible-core $v: unit tests NOT run in this stage (CORE_MATRIX_UNITS=$units; make core-matrix-full runs them)"
  fi
  if [[ $sanity != all && " $sanity " != *" $v "* ]]; then
    echo "core-matrix: ansible-core $v: ansible-test sanity NOT run in this stage (CORE_MATRIX_SANITY=$sanity; make core-matrix-full runs it)"
    continue
  fi
  [[ $prime == 1 ]] || echo "core-matrix: ansible-test sanity (Python $pyver)"
  # ansible-core 2.22.0rc1's ansible-test installs pylint's dill from a github.com archive (a URL
  # in its requirements/sanity.pylint.txt), which pip cannot fetch from a package index: where
  # the release pins such a URL, pylint is left out of that release's sanity, saying so (it runs
  # on the others and in the sanity stage), and runs again once the release pins a package.
  skip=()
  pylint_reqs=$("$venv/bin/python" -c 'import ansible_test, os; print(os.path.join(os.path.dirname(ansible_test.__file__), "_data", "requirements", "sanity.pylint.txt"))')
  if grep -Eq '@ https?://' "$pylint_reqs" 2>/dev/null; then
    echo "core-matrix: ansible-core $v: pylint NOT run: its ansible-test installs $(grep -Eo '^[A-Za-z0-9_.-]+ @ https?://[^/]+' "$pylint_reqs" | head -1) (from $pylint_reqs), not from a package index"
    skip=(--skip-test pylint)
  fi
  if [[ $prime == 1 ]]; then
    echo "core-matrix: ansible-core $v: priming ansible-test's sanity venvs (Python $pyver)"
    skip+=(--prime-venvs)
  fi
  BIN=$venv/bin SANITY_PYTHON=$pyver "$root/.ci/sanity.sh" "${skip[@]}"
done
