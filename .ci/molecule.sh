#!/usr/bin/env bash
# Run every molecule scenario under extensions/molecule/ (local connection, no Docker).
# Usage: .ci/molecule.sh [molecule test args]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/.venv/bin}

shopt -s nullglob
scenarios=("$root"/extensions/molecule/*/molecule.yml)
if [[ ${#scenarios[@]} -eq 0 ]]; then
  echo "molecule: no scenarios yet"
  exit 0
fi
# The live tree, not the stale copy molecule would install into ~/.ansible/collections.
export ANSIBLE_COLLECTIONS_PATH="$root/.venv/collections"
export PATH="$BIN:$PATH"
if [[ ! -t 1 ]]; then
  # plain logs in CI and in files: no ANSI colours from molecule or ansible
  export NO_COLOR=1 PY_COLORS=0 ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
fi
cd "$root/extensions"
echo "molecule: ${#scenarios[@]} scenario(s)"
"$BIN/molecule" test --all "$@"
