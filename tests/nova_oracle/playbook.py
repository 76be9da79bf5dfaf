# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/rolling_reshape.yml run by the PROJECT venv's ansible-playbook from a test that runs in a
nova venv (the nova oracle's end-to-end test, the upgrade twin's roll): a one-node local-connection
inventory, the variables as an extra-vars file, an environment of its own (no ANSIBLE_*/OS_*/PYTHON*
of the test process, the collection from the project venv, the rolling_progress callback)."""

import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MAIN_VENV = os.path.join(REPO, '.venv')
ANSIBLE_PLAYBOOK = os.path.join(MAIN_VENV, 'bin', 'ansible-playbook')


def missing():
    """Why the playbook cannot be run here, or None."""
    if not os.access(ANSIBLE_PLAYBOOK, os.X_OK):
        return 'the project venv (%s) has no ansible-playbook: run make venv first' % MAIN_VENV
    return None


def run_roll(out, hostname, variables, timeout=600, env=None):
    """Write ``out``/inventory.json and vars.json and run the rolling playbook on ``hostname`` in ``out``;
    returns the finished ``subprocess.CompletedProcess`` (stdout and stderr together, as text).
    ``env``: variables set in ansible-playbook's environment after the scrubbing (e.g.
    ``PLACEMENT_UPGRADE_TOKEN_SHARING``)."""
    inventory = os.path.join(out, 'inventory.json')
    with open(inventory, 'w') as handle:
        json.dump({'compute': {'hosts': {hostname: {
            'ansible_connection': 'local',
            'ansible_python_interpreter': os.path.join(MAIN_VENV, 'bin', 'python')}}}}, handle)
    extra_vars = os.path.join(out, 'vars.json')
    with open(extra_vars, 'w') as handle:
        json.dump(variables, handle, indent=1, sort_keys=True)
    child_env = dict(os.environ)
    for key in [k for k in child_env if k.startswith(('ANSIBLE_', 'OS_', 'PYTHON'))] + ['VIRTUAL_ENV']:
        child_env.pop(key, None)
    child_env.update({
        'PATH': os.path.join(MAIN_VENV, 'bin') + os.pathsep + child_env.get('PATH', ''),
        'ANSIBLE_COLLECTIONS_PATH': os.path.join(MAIN_VENV, 'collections'),
        'ANSIBLE_CALLBACKS_ENABLED': 'placement.upgrade.rolling_progress',
        'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_RETRY_FILES_ENABLED': '0',
        'ANSIBLE_HOME': os.path.join(out, '.ansible'),
        'ANSIBLE_LOCAL_TEMP': os.path.join(out, '.ansible', 'tmp'),
    })
    child_env.update(env or {})
    return subprocess.run(
        [ANSIBLE_PLAYBOOK, '-i', inventory, os.path.join(REPO, 'playbooks', 'rolling_reshape.yml'),
         '-e', '@' + extra_vars],
        env=child_env, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
        timeout=timeout, check=False)
