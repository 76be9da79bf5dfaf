#!/usr/bin/env bash
# Copy the collection (git-tracked files plus untracked files that are not
# ignored, as they are in the working tree now) into DEST/ansible_collections/
# placement/upgrade, a real copy rather than a symlink so that tools writing
# into the tree (ansible-test's tests/output) keep their output private.
# Usage: .ci/copy-tree.sh DEST   -> prints the collection path
set -euo pipefail

dest=${1:?usage: copy-tree.sh DEST}
root=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
target="$dest/ansible_collections/placement/upgrade"
mkdir -p "$target"

cd "$root"
# Tracked files deleted in the working tree are still listed by --cached: skip them.
git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' f; do
      if [[ -e "$f" || -L "$f" ]]; then printf '%s\0' "$f"; fi
    done \
  | tar --null --no-recursion -T - -cf - \
  | tar -xf - -C "$target"
printf '%s\n' "$target"
