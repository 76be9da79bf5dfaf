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
cd "$root/extensions"
echo "molecule: ${#scenarios[@]} scenario(s)"
"$BIN/molecule" test --all "$@"
