# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 3 of an upgrade-twin case as an operator runs it: ``ansible-playbook`` (the project venv's)
runs playbooks/rolling_reshape.yml, the rolling role, on a one-node local-connection inventory
against the Placement server on the upgraded database: discovery from the host nova left (sysfs,
nova's domain XML, the node's new nova.conf), then the reshape module over the REST backend
(``auth_type: admin_token`` on Placement's noauth2).  nova's services are stopped here (the old
release was stopped for the upgrade, the new one is not started yet), so the role's nova steps are
off (``rolling_reshape_nova_service: never``).

:func:`roll` returns the node's record as the role stored it (its ``reshape`` is the reshape
module's result) and the number of ``POST /reshaper`` requests Placement logged.
"""

import glob
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MAIN_VENV = os.path.join(REPO, '.venv')
RUN_ID = 'upgrade-twin'


class RollError(AssertionError):
    """The playbook could not be run, or left no record of the node."""


def roll(out, placement_url, hostname, built, placement_log):
    """Run the rolling role on ``hostname`` (the fake host ``built``); returns ``(record, posts, output)``."""
    playbook = os.path.join(MAIN_VENV, 'bin', 'ansible-playbook')
    if not os.access(playbook, os.X_OK):
        raise RollError('the project venv (%s) has no ansible-playbook: run make venv first' % MAIN_VENV)
    os.makedirs(out)
    inventory = os.path.join(out, 'inventory.json')
    with open(inventory, 'w') as handle:
        json.dump({'compute': {'hosts': {hostname: {
            'ansible_connection': 'local',
            'ansible_python_interpreter': os.path.join(MAIN_VENV, 'bin', 'python')}}}}, handle)
    variables = {
        'placement_backend': {'auth_type': 'admin_token', 'auth': {'token': 'admin', 'endpoint': placement_url}},
        'rolling_reshape_nova_service': 'never',
        'rolling_reshape_become': False,
        'rolling_reshape_sysfs_root': built['sysfs_root'],
        'rolling_reshape_domain_xml_glob': built['domain_xml_glob'],
        'rolling_reshape_nova_conf': built['nova_conf'],
        'rolling_reshape_snapshot_dir': os.path.join(out, 'snapshots'),
        'rolling_reshape_report_dir': os.path.join(out, 'reports'),
        'rolling_reshape_run_id': RUN_ID,
    }
    if built.get('domain_capabilities'):
        variables['rolling_reshape_domain_capabilities'] = built['domain_capabilities']
    extra_vars = os.path.join(out, 'vars.json')
    with open(extra_vars, 'w') as handle:
        json.dump(variables, handle, indent=1, sort_keys=True)
    env = dict(os.environ)
    for key in [k for k in env if k.startswith(('ANSIBLE_', 'OS_', 'PYTHON'))] + ['VIRTUAL_ENV']:
        env.pop(key, None)
    env.update({
        'PATH': os.path.join(MAIN_VENV, 'bin') + os.pathsep + env.get('PATH', ''),
        'ANSIBLE_COLLECTIONS_PATH': os.path.join(MAIN_VENV, 'collections'),
        'ANSIBLE_CALLBACKS_ENABLED': 'placement.upgrade.rolling_progress',
        'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_RETRY_FILES_ENABLED': '0',
        'ANSIBLE_HOME': os.path.join(out, '.ansible'),
        'ANSIBLE_LOCAL_TEMP': os.path.join(out, '.ansible', 'tmp'),
    })
    posts_before = reshaper_posts(placement_log)
    proc = subprocess.run(
        [playbook, '-i', inventory, os.path.join(REPO, 'playbooks', 'rolling_reshape.yml'), '-e', '@' + extra_vars],
        env=env, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
        timeout=600, check=False)
    with open(os.path.join(out, 'ansible-playbook.log'), 'w') as handle:
        handle.write(proc.stdout)
    records = glob.glob(os.path.join(out, 'reports', RUN_ID, 'nodes', '*.json'))
    if not records:
        raise RollError('the roll (rc %d) stored no record of %s; its output: %s'
                        % (proc.returncode, hostname, proc.stdout[-4000:]))
    with open(records[0]) as handle:
        record = json.load(handle)
    if record.get('node') != hostname:
        raise RollError('the record of the roll is not %s\'s: %r' % (hostname, record))
    # a node the role defers ends the playbook rc 0 too (rolling_reshape_fail_on_deferred: false)
    if proc.returncode != 0:
        raise RollError('ansible-playbook exited %d (%s: %s): %s'
                        % (proc.returncode, record.get('status'), record.get('reason'), proc.stdout[-4000:]))
    return record, reshaper_posts(placement_log) - posts_before, proc.stdout


def reshaper_posts(placement_log):
    """How many ``POST /reshaper`` Placement's request log holds, but for the role's pre-flight
    policy probe: an empty body, which Placement's schema refuses (400) once the policy let it in."""
    if not os.path.exists(placement_log):
        return 0
    with open(placement_log) as handle:
        return sum(1 for line in handle if '"POST /reshaper" status: ' in line and '"POST /reshaper" status: 400' not in line)


def as_result(record, output):
    """The node's record as the fields of the reshape's result the twin's cases read."""
    written = record.get('written') or {}
    return {'status': record.get('status'), 'deferred_reason': record.get('reason') or None,
            'reshaper_applied': bool(written.get('reshaper')), 'moved': record.get('moved') or {},
            'traits_written': list(written.get('traits') or []), 'children_created': list(written.get('children') or []),
            'warnings': list(record.get('warnings') or []), 'msg': output[-3000:], 'record': record}
