# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""System packages are one explicit, printed step: `make deps` (.ci/deps.sh, bindep.txt), never a
side effect of a test stage.

.ci/deps.sh runs here against stand-ins of dpkg-query, apt-get and id (scripts first on the PATH)
that record what they are asked: the real system is neither read nor changed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPS = os.path.join(REPO, '.ci', 'deps.sh')

BINDEP = """\
# comment
gcc [compile platform:rpm]
gcc [compile platform:dpkg]
chromium [test platform:dpkg]
shellcheck [test platform:dpkg]
podman [test platform:rpm]
"""

SHIMS = {
    # installed packages: $FAKE_INSTALLED (space separated)
    'dpkg-query': '#!/bin/sh\nfor a; do name=$a; done\n'
                  'for p in $FAKE_INSTALLED; do [ "$p" = "$name" ] && { printf "ii "; exit 0; }; done\n'
                  'echo "dpkg-query: no packages found matching $name" >&2; exit 1\n',
    # apt-get -s: one Inst line per package of $FAKE_PLAN; every call is logged
    'apt-get': '#!/bin/sh\necho "$*" >> "$FAKE_LOG"\n'
               'if [ "$1" = install ] && [ "$2" = -s ]; then for p in $FAKE_PLAN; do echo "Inst $p (1.0 Debian)"; done; fi\n'
               'exit 0\n',
    'id': '#!/bin/sh\necho "$FAKE_UID"\n',
}


def _run(tmp_path, installed='', uid='0', plan='', args=(), ci=''):
    shims = tmp_path / 'bin'
    if not shims.exists():
        shims.mkdir()
        for name, text in SHIMS.items():
            (shims / name).write_text(text)
            (shims / name).chmod(0o755)
        (tmp_path / 'bindep.txt').write_text(BINDEP)
    log = tmp_path / 'apt.log'
    if log.exists():
        log.unlink()
    env = {'PATH': '%s:/usr/bin:/bin' % shims, 'FAKE_INSTALLED': installed, 'FAKE_UID': uid, 'FAKE_PLAN': plan,
           'FAKE_LOG': str(log), 'BINDEP_FILE': str(tmp_path / 'bindep.txt'), 'DEPS_LOG': str(tmp_path / 'deps.log'),
           'CI': ci}
    proc = subprocess.run(['bash', DEPS] + list(args), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=60, check=False)
    calls = log.read_text().splitlines() if log.exists() else []
    return proc.returncode, proc.stdout, calls


def test_all_present_installs_nothing_and_says_so(tmp_path):
    rc, out, calls = _run(tmp_path, installed='chromium shellcheck')
    assert (rc, out, calls) == (0, 'deps: all present (chromium shellcheck: bindep.txt, profile test)\n', [])


def test_missing_packages_are_named_counted_and_installed_as_one_printed_step(tmp_path):
    rc, out, calls = _run(tmp_path, installed='shellcheck', plan='libfoo1 libbar2 chromium-common chromium')
    assert rc == 0, out
    assert out.splitlines() == [
        'deps: missing 1 of the 2 test packages of bindep.txt: chromium',
        'deps: installing chromium with apt-get as root: 4 package(s) with their dependencies:',
        'deps:   libfoo1 libbar2 chromium-common chromium',
        "deps: installed 4 package(s) (apt-get's output: %s)" % (tmp_path / 'deps.log'),
    ]
    # a simulation first (what is printed), then the install of exactly the missing ones
    assert calls == ['install -s -y --no-install-recommends chromium',
                     'install -y -q --no-install-recommends chromium']


def test_check_only_and_not_root_install_nothing(tmp_path):
    rc, out, calls = _run(tmp_path, args=['--check'])
    assert rc == 1 and calls == []
    assert out.splitlines()[-1] == ("deps: --check: nothing installed; 'make deps' as root runs: "
                                    'apt-get install -y --no-install-recommends chromium shellcheck')
    rc, out, calls = _run(tmp_path, uid='1000')
    assert rc == 0 and calls == []
    assert 'deps: not root (or no apt-get): nothing installed; as root run: apt-get install -y ' \
           '--no-install-recommends chromium shellcheck' in out
    # under CI a missing package that cannot be installed fails the step
    rc, out, calls = _run(tmp_path, uid='1000', ci='true')
    assert rc == 1 and calls == [] and 'CI needs them' in out


def test_the_pipeline_installs_system_packages_only_through_make_deps():
    with open(os.path.join(REPO, 'Makefile')) as handle:
        makefile = handle.read()
    # make test runs make deps before the first stage
    assert re.search(r'^test: venv deps$', makefile, flags=re.M)
    assert re.search(r'^deps:\n\t@\.ci/deps\.sh \$\(DEPS_ARGS\)$', makefile, flags=re.M)
    with open(os.path.join(REPO, '.ci', 'run')) as handle:
        assert handle.read().strip().splitlines()[-1] == 'exec make test </dev/null'
    # no other apt-get in the Makefile, the CI scripts or the tools
    places = ['Makefile'] + [os.path.join('.ci', n) for n in os.listdir(os.path.join(REPO, '.ci'))]
    places += [os.path.join('tools', n) for n in os.listdir(os.path.join(REPO, 'tools')) if n.endswith('.py')]
    for place in places:
        path = os.path.join(REPO, place)
        if place == os.path.join('.ci', 'deps.sh') or not os.path.isfile(path):
            continue
        with open(path) as handle:
            code = [line for line in handle.read().splitlines() if not line.lstrip().startswith('#')]
        assert not [line for line in code if re.search(r'\bapt-get\s+(install|update)|\bapt\s+install', line)], place
    # bindep.txt names the test packages under the profile make deps reads
    with open(os.path.join(REPO, 'bindep.txt')) as handle:
        bindep = handle.read()
    for name in ('chromium', 'shellcheck'):
        assert re.search(r'^%s \[test platform:dpkg\]$' % name, bindep, flags=re.M), name
