#!/usr/bin/env bash
# `ansible-builder create` (offline: it only writes the build context) on
# meta/execution-environment.yml.  Its dependency paths are relative to the
# collection root (that is how ansible-builder reads an installed collection's
# meta/execution-environment.yml), so the file is placed at the root of a temp
# copy with the two requirement files beside it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/.venv/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/placement-upgrade-ee.XXXXXX")
trap 'rm -rf "$work"' EXIT

cp "$root/meta/execution-environment.yml" "$root/requirements.txt" "$root/bindep.txt" "$work/"
"$BIN/ansible-builder" create -f "$work/execution-environment.yml" -c "$work/context" --output-filename Containerfile
for f in Containerfile _build/requirements.txt _build/bindep.txt; do
  [[ -f "$work/context/$f" ]] || { echo "ee-check: $f missing from the build context" >&2; exit 1; }
done
echo "ee-check: build context created ($(find "$work/context" -type f | wc -l) files)"
