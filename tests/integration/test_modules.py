# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the module integration playbook with ansible-playbook, on both backends.

``tests/integration/playbooks/modules.yml`` asserts everything itself
(``ansible.builtin.assert``): create, idempotent rerun, check mode predicting the
real result, diff, Placement's conflicts, bad input failing with no change, the
seed move rpA -> rpB (DISK_GB staying on rpC) in one call, and a multi-consumer
write.  It runs once against a fresh embedded_db and once against the real
Placement (``placement_server`` fixture); the task results must be the same.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PLAYBOOK = os.path.join(HERE, 'playbooks', 'modules.yml')
COLLECTIONS = os.path.join(ROOT, '.venv', 'collections')

pytestmark = pytest.mark.slow


def run_playbook(tmp_path, backend_vars, playbook=PLAYBOOK):
    extra = {
        'placement_backend': backend_vars,
        'prefix': 'it-%s' % uuid.uuid4().hex[:8],
        'ansible_python_interpreter': sys.executable,
    }
    extra_file = tmp_path / 'extra_vars.json'
    extra_file.write_text(json.dumps(extra))
    env = dict(os.environ)
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': COLLECTIONS,
        'ANSIBLE_LOCAL_TEMP': str(tmp_path / 'ansible-tmp'),
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_RETRY_FILES_ENABLED': '0',
        'ANSIBLE_STDOUT_CALLBACK': 'default',
        'ANSIBLE_DEPRECATION_WARNINGS': '0',
    })
    for var in ('OS_CLOUD', 'OS_AUTH_URL'):
        env.pop(var, None)
    bindir = os.path.dirname(sys.executable)
    cmd = [os.path.join(bindir, 'ansible-playbook'), '-i', 'localhost,', '-c', 'local',
           '-e', '@%s' % extra_file, playbook]
    proc = subprocess.run(cmd, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=600,
                          check=False)
    return proc.returncode, proc.stdout


def _recap(output):
    for line in output.splitlines():
        if line.startswith('localhost') and 'ok=' in line:
            return dict(part.split('=') for part in line.split()[2:])
    return {}


def _check(rc, output):
    assert rc == 0, output[-6000:]
    recap = _recap(output)
    assert recap.get('failed') == '0' and recap.get('unreachable') == '0', output[-6000:]
    assert int(recap['rescued']) == 10, output[-6000:]   # the ten bad requests, each rescued
    assert 'Traceback' not in output
    return recap


def test_modules_playbook_embedded(tmp_path):
    db = tmp_path / 'placement.db'
    rc, output = run_playbook(tmp_path, {'embedded_db': str(db)})
    _check(rc, output)
    assert db.exists()


@pytest.mark.real
def test_modules_playbook_real_placement(tmp_path, placement_server):
    rc, output = run_playbook(tmp_path, placement_server.module_auth())
    _check(rc, output)
