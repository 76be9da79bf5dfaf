#!/usr/bin/env bash
# `make deps`: the system packages the tests need, as one explicit, printed step.
# They are the lines of bindep.txt with the profile "test" (bindep's format); on Debian or
# Ubuntu (dpkg) the missing ones are installed with apt-get, as root, after saying which and
# how many packages apt-get will install with them.  Nothing else in the pipeline installs
# system packages.
# Usage: .ci/deps.sh [--check]
#   --check  only list what is missing; install nothing (exit 1 when something is missing)
# Without root (or without apt-get) it names the missing packages and the command that
# installs them; that is a failure under CI (CI=true), a warning otherwise.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bindep=${BINDEP_FILE:-$root/bindep.txt}
check_only=false
case ${1:-} in
  --check) check_only=true ;;
  '') ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# The packages of profile "test" for this platform: "name [selectors]" lines whose selectors
# include "test" and, when they name platforms, this one (only dpkg is known here).
platform=none
if command -v dpkg-query >/dev/null 2>&1; then
  platform=dpkg
fi
wanted=()
while read -r name rest; do
  [[ -z $name || $name == \#* ]] && continue
  selectors=" $(tr -d '[]' <<<"$rest") "
  [[ $selectors == *" test "* ]] || continue
  if [[ $selectors == *" platform:"* && $selectors != *" platform:$platform "* ]]; then
    continue
  fi
  wanted+=("$name")
done <"$bindep"

if [[ ${#wanted[@]} -eq 0 ]]; then
  echo "deps: bindep.txt lists no test packages for this platform ($platform): nothing to install"
  exit 0
fi
if [[ $platform != dpkg ]]; then
  echo "deps: not a dpkg system: cannot check the test packages of bindep.txt; install them yourself" \
       "(Debian names: ${wanted[*]})"
  exit 0
fi

missing=()
for name in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$name" 2>/dev/null || true)
  [[ $status == ii* ]] || missing+=("$name")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all present (${wanted[*]}: bindep.txt, profile test)"
  exit 0
fi

echo "deps: missing ${#missing[@]} of the ${#wanted[@]} test packages of bindep.txt: ${missing[*]}"
command_line="apt-get install -y --no-install-recommends ${missing[*]}"
if $check_only; then
  echo "deps: --check: nothing installed; 'make deps' as root runs: $command_line"
  exit 1
fi
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  echo "deps: not root (or no apt-get): nothing installed; as root run: $command_line"
  if [[ -n ${CI:-} ]]; then
    echo "deps: CI needs them: failing" >&2
    exit 1
  fi
  echo "deps: WARNING: the tests that need them fail or cannot run until they are installed"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
log=${DEPS_LOG:-$root/tests/output/deps-apt.log}
mkdir -p "$(dirname "$log")"
: >"$log"
# What apt-get would install with them (a simulation); the package lists are read first when
# the simulation cannot find a package.
simulate() { apt-get install -s -y --no-install-recommends "${missing[@]}" 2>>"$log"; }
if ! plan=$(simulate); then
  echo "deps: apt-get update (the package lists do not name ${missing[*]})"
  timeout 600 apt-get update -q >>"$log" 2>&1 || { echo "deps: apt-get update failed; see $log" >&2; exit 1; }
  plan=$(simulate) || { echo "deps: apt-get cannot install ${missing[*]}; see $log" >&2; exit 1; }
fi
mapfile -t packages < <(awk '/^Inst /{print $2}' <<<"$plan")
echo "deps: installing ${missing[*]} with apt-get as root: ${#packages[@]} package(s) with their dependencies:"
fold -s -w 100 <<<"${packages[*]}" | sed 's/^/deps:   /'
install() { timeout 1200 apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$log" 2>&1; }
if ! install; then
  # stale package lists (a download not found): read them again, then try once more
  echo "deps: apt-get install failed; apt-get update, then once more"
  timeout 600 apt-get update -q >>"$log" 2>&1 || true
  if ! install; then
    echo "deps: apt-get install failed; its output: ${log#"$root"/}" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
fi
echo "deps: installed ${#packages[@]} package(s) (apt-get's output: ${log#"$root"/})"
