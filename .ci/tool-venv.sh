#!/usr/bin/env bash
# Build (once) a venv of tools that must not share the project venv's pins (galaxy-importer brings
# its own ansible-core and ansible-lint; sphinx and ansible-sign are only the publishing stage's).
# Rebuilt from scratch when REQUIREMENTS is newer than the venv's stamp.
# Usage: .ci/tool-venv.sh VENV REQUIREMENTS   (PYTHON: the interpreter, python3.11)
set -euo pipefail

PYTHON=${PYTHON:-python3.11}
venv=$(realpath -m "$1")
reqs=$2
stamp=$venv/.installed
if [[ -f $stamp && ! $reqs -nt $stamp ]]; then
  exit 0
fi
echo "tool-venv: building $venv from $reqs"
rm -rf "$venv"
"$PYTHON" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip 2>&1 | grep -v "is ignored" || true
# (the image's pip.conf names local indexes that may be absent: pip's "is ignored" lines are noise)
if ! "$venv/bin/pip" install -q -r "$reqs" >"$venv/pip.log" 2>&1; then
  grep -v 'is ignored' "$venv/pip.log" >&2
  echo "tool-venv: pip failed building $venv (full log: $venv/pip.log)" >&2
  exit 1
fi
touch "$stamp"
