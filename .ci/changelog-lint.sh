#!/usr/bin/env bash
# Lint the changelog fragments and changelogs/changelog.yaml (antsibull-changelog).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/.venv/bin}
cd "$root"
"$BIN/antsibull-changelog" lint
"$BIN/antsibull-changelog" lint-changelog-yaml changelogs/changelog.yaml
echo "changelog-lint: $(find changelogs/fragments -name '*.y*ml' | wc -l) fragment(s) and changelogs/changelog.yaml are valid"
