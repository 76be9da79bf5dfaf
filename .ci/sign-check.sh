#!/usr/bin/env bash
# AWX content signing (issue 43): sign a copy of the project with ansible-sign and a throw-away
# GnuPG key made here, then verify it as AWX's project update does (`ansible-sign project
# gpg-verify` with the public key only), and check that a changed file and an added file both
# fail the verification. Nothing is written to the working tree or to ~/.gnupg.
# Needs gpg (GnuPG) and the venv .venv-publish (.ci/requirements-publish.txt, built on first run).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
PUB=${PUB:-$root/.venv-publish}
"$root/.ci/tool-venv.sh" "$PUB" "$root/.ci/requirements-publish.txt"
sign=$PUB/bin/ansible-sign
command -v gpg >/dev/null || { echo "sign-check: gpg (GnuPG) is missing: make deps installs it (gnupg, bindep.txt)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/placement-upgrade-sign.XXXXXX")
cleanup() {
  GNUPGHOME=$work/signer gpgconf --kill all 2>/dev/null || true
  GNUPGHOME=$work/verifier gpgconf --kill all 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -m 700 "$work/signer" "$work/verifier"
project=$("$root/.ci/copy-tree.sh" "$work/checkout")
[[ -f $project/MANIFEST.in ]] || { echo "sign-check: MANIFEST.in (the files ansible-sign signs) is missing" >&2; exit 1; }

# the throw-away key: signing only, expires in a day, protected by a random passphrase that
# ansible-sign is given as a CI signer gives it (ANSIBLE_SIGN_GPG_PASSPHRASE: there is no TTY)
passphrase=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
GNUPGHOME=$work/signer gpg --batch --quiet --pinentry-mode loopback --passphrase "$passphrase" \
  --quick-gen-key 'placement.upgrade sign-check <sign-check@placement-upgrade.invalid>' ed25519 sign 1d
GNUPGHOME=$work/signer gpg --batch --quiet --armor --export > "$work/pubkey.asc"
# AWX's "GPG Public Key" credential: the public key alone, in a keyring of its own
GNUPGHOME=$work/verifier gpg --batch --quiet --import "$work/pubkey.asc"

GNUPGHOME=$work/signer ANSIBLE_SIGN_GPG_PASSPHRASE=$passphrase "$sign" --nocolor project gpg-sign "$project" </dev/null >"$work/sign.log" 2>&1 \
  || { cat "$work/sign.log" >&2; echo "sign-check: ansible-sign project gpg-sign failed" >&2; exit 1; }
for f in .ansible-sign/sha256sum.txt .ansible-sign/sha256sum.txt.sig; do
  [[ -s $project/$f ]] || { echo "sign-check: ansible-sign wrote no $f" >&2; exit 1; }
done
signed=$(wc -l < "$project/.ansible-sign/sha256sum.txt")
for f in playbooks/rolling_reshape.yml roles/rolling_reshape/tasks/main.yml plugins/modules/reshape.py \
    collections/requirements.yml galaxy.yml; do
  grep -q "  $f\$" "$project/.ansible-sign/sha256sum.txt" \
    || { echo "sign-check: $f is not among the signed files (MANIFEST.in)" >&2; exit 1; }
done
verify() { GNUPGHOME=$work/verifier "$sign" --nocolor project gpg-verify "$project" >"$work/verify.log" 2>&1; }
if ! verify; then
  cat "$work/verify.log" >&2
  echo "sign-check: gpg-verify failed on the project just signed" >&2
  exit 1
fi
echo "sign-check: $signed file(s) signed with a throw-away key; ansible-sign project gpg-verify passes"

# a changed file must fail the verification
cp "$project/playbooks/rolling_reshape.yml" "$work/saved.yml"
echo "# changed after signing" >> "$project/playbooks/rolling_reshape.yml"
if verify; then
  echo "sign-check: gpg-verify passed on a project changed after signing" >&2
  exit 1
fi
cp "$work/saved.yml" "$project/playbooks/rolling_reshape.yml"
verify || { cat "$work/verify.log" >&2; echo "sign-check: gpg-verify failed after restoring the file" >&2; exit 1; }
# so must a file added where the signed files are
echo "- hosts: all" > "$project/playbooks/added_after_signing.yml"
if verify; then
  echo "sign-check: gpg-verify passed on a project with a playbook added after signing" >&2
  exit 1
fi
echo "sign-check: a changed file and an added playbook both fail gpg-verify"
