#!/usr/bin/env bash
# `ansible-test sanity` on a private copy of the collection, offline, no Docker,
# no ignore files.  Usage: .ci/sanity.sh [extra ansible-test sanity args]
# Needs the project venv (make venv): ansible-test is taken from $BIN.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/.venv/bin}
PYVER=${SANITY_PYTHON:-3.11}

# 1. ansible-test downloads get-pip from a host we cannot reach: use the offline stand-in.
"$BIN/python" "$root/.ci/install_get_pip.py"

# 2. sanity's shellcheck test passes silently when shellcheck is missing: say so.  This script
#    installs nothing; `make deps` (which `make test` runs first) installs it (bindep.txt).
if ! command -v shellcheck >/dev/null 2>&1; then
  echo "sanity: WARNING: shellcheck is not installed, so the shellcheck test checks nothing; 'make deps' installs it"
fi

# 3. A real copy under .../ansible_collections/placement/upgrade (tests/output stays private).
work=$(mktemp -d "${TMPDIR:-/tmp}/placement-upgrade-sanity.XXXXXX")
trap 'rm -rf "$work"' EXIT
target=$("$root/.ci/copy-tree.sh" "$work")
if compgen -G "$target/tests/sanity/ignore-*.txt" >/dev/null; then
  echo "sanity: tests/sanity/ignore-*.txt found; this collection carries no ignore files: fix the code instead" >&2
  exit 1
fi

cd "$target"
export PATH="$BIN:$PATH"
# pip's progress chatter from the per-test venv installs is dropped (its errors are kept);
# SANITY_VERBOSE=1 shows everything.
pip_chatter='^(Collecting |Downloading |  Downloading |Processing |Installing collected |Successfully installed |Looking in |WARNING: Location |  Using cached |  Attempting uninstall|    Found existing|    Uninstalling|      Successfully uninstalled|Requirement already|Using cached pip |     [^ ])'
status=0
if [[ ${SANITY_VERBOSE:-0} == 1 ]]; then
  "$BIN/ansible-test" sanity --venv --python "$PYVER" --color no "$@" || status=$?
else
  set +e
  "$BIN/ansible-test" sanity --venv --python "$PYVER" --color no "$@" 2>&1 | grep -Ev "$pip_chatter"
  status=${PIPESTATUS[0]}
  set -e
fi
if [[ $status -ne 0 && -d tests/output ]]; then
  rm -rf "$root/tests/output/sanity"
  mkdir -p "$root/tests/output/sanity"
  cp -r tests/output/. "$root/tests/output/sanity/" 2>/dev/null || true
  echo "sanity: ansible-test output kept in tests/output/sanity/" >&2
fi
exit "$status"
