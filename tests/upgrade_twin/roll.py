# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 3 of an upgrade-twin case as an operator runs it: ``ansible-playbook`` (the project venv's)
runs playbooks/rolling_reshape.yml, the rolling role (tests/nova_oracle/playbook.py), on a one-node local-connection inventory
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

import playbook  # tests/nova_oracle (on sys.path: test_upgrade_twin.py)

RUN_ID = 'upgrade-twin'


class RollError(AssertionError):
    """The playbook could not be run, or left no record of the node."""


def roll(out, placement_url, hostname, built, placement_log):
    """Run the rolling role on ``hostname`` (the fake host ``built``); returns ``(record, posts, output)``."""
    if playbook.missing():
        raise RollError(playbook.missing())
    os.makedirs(out)
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
    posts_before = reshaper_posts(placement_log)
    proc = playbook.run_roll(out, hostname, variables)
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
