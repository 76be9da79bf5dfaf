#!/usr/bin/env bash
# Build, ahead of the stages that use them, the venvs of make test's later stages: nova 34's
# (.venv-nova, nova-oracle), nova 31's and 33's (.venv-nova31, .venv-nova33, twin-per-kind),
# ansible-core 2.18's and 2.22's (.venv-core-<v>, core-matrix) with ansible-test's sanity venvs of
# 2.22 and of the project venv's release (~/.ansible/test, sanity and core-matrix), and the
# publishing tools' (.venv-importer, .venv-publish).  make test (.ci/test.sh) runs it in the
# background, niced, while the unit stage runs: downloading and unpacking wheels is mostly waiting.
# Each builder is the one its stage calls, and is a no-op once built, so a stage finds its venv
# ready; a step that fails here is said, and its stage builds (and reports) it again itself.
# Usage: .ci/prefetch.sh   (each step's output and time on stdout)
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
twin=$root/tests/upgrade_twin
failed=()

step() {
  local name=$1 start rc
  shift
  start=$(date +%s)
  echo "prefetch: $name"
  "$@"
  rc=$?
  if [[ $rc -eq 0 ]]; then
    echo "prefetch: $name done in $(( $(date +%s) - start ))s"
  else
    echo "prefetch: $name FAILED (exit $rc) after $(( $(date +%s) - start ))s; its stage builds it again"
    failed+=("$name")
  fi
}

step .venv-nova .ci/nova-venv.sh "$root/.venv-nova" "$root/tests/nova_oracle/requirements.txt"
step .venv-nova31 .ci/nova-venv.sh "$root/.venv-nova31" "$twin/requirements-nova31.txt" "$twin/upper-constraints-2025.1.txt"
step .venv-nova33 .ci/nova-venv.sh "$root/.venv-nova33" "$twin/requirements-nova33.txt" "$twin/upper-constraints-2026.1.txt"
step sanity-venvs .ci/sanity.sh --prime-venvs
step core-matrix-venvs env CORE_MATRIX_PRIME=1 .ci/core-matrix.sh
step .venv-importer .ci/tool-venv.sh "$root/.venv-importer" "$root/.ci/requirements-importer.txt"
step .venv-publish .ci/tool-venv.sh "$root/.venv-publish" "$root/.ci/requirements-publish.txt"

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "prefetch: ${#failed[@]} step(s) failed: ${failed[*]}"
  exit 1
fi
echo "prefetch: every venv built"
