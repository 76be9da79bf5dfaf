# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every variable of the rolling_reshape role (its defaults, its vars, its argument specs) is either
one of the rehearsal's own settings (playbooks/rehearse.yml ``rehearsal_settings``: fixed by the
playbook, an extra var overriding it refused; tests/integration/test_rehearsal.py tries each one) or
listed here with why a rehearsal may take it from the operator: it only reads the node, or acts on
the copy, the controller's files or the report.  A new variable of the role fails this test until it
is classified, so no new step, hook or nova-compute handling reaches a rehearsal unnoticed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLE = os.path.join(ROOT, 'roles', 'rolling_reshape')

#: the role's variables a rehearsal takes as given, and why that touches no node and not production
ALLOWED = {
    'rolling_reshape_provider_name': "the node's root provider name (in the copy)",
    'rolling_reshape_sysfs_root': 'discovery: read on the node',
    'rolling_reshape_domain_xml_glob': 'discovery: read on the node',
    'rolling_reshape_use_virsh': 'discovery: virsh list/dumpxml/domcapabilities only read',
    'rolling_reshape_pci_filters': 'discovery: what is read',
    'rolling_reshape_numa': 'discovery: what is read',
    'rolling_reshape_nova_conf': 'discovery: read on the node',
    'rolling_reshape_domain_capabilities': 'discovery input',
    'rolling_reshape_devices_replay_dir': 'discovery replayed on the controller',
    'rolling_reshape_become': 'discovery reads as root; no other task runs on the node without steps',
    'rolling_reshape_conflict_retries': 'the retries of the writes to the copy',
    'rolling_reshape_layout': 'the plan, applied to the copy',
    'rolling_reshape_ownership_policy': 'the plan, applied to the copy',
    'rolling_reshape_ownership': 'the plan, applied to the copy',
    'rolling_reshape_allow_foreign_allocations': 'the plan, applied to the copy',
    'rolling_reshape_fail_on_deferred': 'the roll on the copy',
    'rolling_reshape_nova_migrations': "nova's os-migrations are only read (GET)",
    'rolling_reshape_compute_host': 'only names the node to nova (no nova step runs)',
    'rolling_reshape_compute_endpoint': 'only where nova is; no nova step runs (rolling_reshape_nova_* switches fixed)',
    'rolling_reshape_nova_expected_version': 'checked only after a nova-compute start, which never runs',
    'rolling_reshape_nova_timeout': 'a wait of the nova steps, which never run',
    'rolling_reshape_nova_poll_interval': 'a wait of the nova steps, which never run',
    'rolling_reshape_nova_report_interval': 'times a wait of the nova steps, which never run',
    'rolling_reshape_report': 'the rehearsal report on the controller',
    'rolling_reshape_report_title': 'the rehearsal report on the controller',
    'rolling_reshape_report_html_template': 'the rehearsal report on the controller',
    'rolling_reshape_report_markdown_template': 'the rehearsal report on the controller',
    'rolling_reshape_report_command': "how the report's commands start",
    'rolling_reshape_publish_summary': "the run's set_stats artifacts, on the controller",
    'rolling_reshape_run_id': 'the name of the rehearsal report folder',
    'rolling_reshape_plan_only': 'a plan on the copy',
    'rolling_reshape_snapshot_file': 'rollback (tasks_from: rollback) only, not the roll',
    'rolling_reshape_remove_children': 'rollback (tasks_from: rollback) only, not the roll',
    # worked out by the role itself (vars/main.yml) from the variables above and the settings
    'rolling_reshape_planning': 'check mode or plan_only',
    'rolling_reshape_nova_host': "nova's name of the node (no nova step runs)",
    'rolling_reshape_nova_read_optional': "whether nova's read leaves nova-compute to the hooks, read only by the nova steps, which never run",
    'rolling_reshape_providers': 'the report',
    'rolling_reshape_context': 'the report',
    'rolling_reshape_record_option': 'the node record, on the controller',
    'rolling_reshape_outcome': 'the node record',
    'rolling_reshape_summary': 'the node record',
    'rolling_reshape_record': 'the node record',
    'rolling_reshape_discovery_warnings': 'the node record',
    'rolling_reshape_nova_unit_status': "whether nova-compute runs, read only by the nova steps, which never run",
    'rolling_reshape_nova_unit_running': "whether nova-compute runs, read only by the nova steps, which never run",
    'rolling_reshape_nova_status_read': "whether nova-compute runs, read only by the nova steps, which never run",
    'rolling_reshape_nova_found_running': "whether nova-compute runs, read only by the nova steps, which never run",
    'rolling_reshape_nova_running': "whether nova-compute runs, read only by the nova steps, which never run",
    'rolling_reshape_stop_message': 'the message of a failed node',
    'rolling_reshape_nova_unit_unread': "whether nova-compute runs, read only by the nova steps, which never run",
    'rolling_reshape_tree_checked': 'the tree check after a nova-compute start or a post hook',
    'rolling_reshape_tree_moved': 'the tree check after a nova-compute start or a post hook',
    'rolling_reshape_tree_changes': 'the tree check after a nova-compute start or a post hook',
    'rolling_reshape_version_unexpected': 'checked only after a nova-compute start, which never runs',
    'rolling_reshape_version_found': 'checked only after a nova-compute start, which never runs',
    'rolling_reshape_slice_tolerates': 'only in a slice of a sliced roll (playbooks/sliced_roll.yml)',
    'rolling_reshape_left_out_of_service': "nova's record read only with the nova steps, which never run",
    'rolling_reshape_back_in_service': "nova's record read only with the nova steps, which never run",
    'rolling_reshape_node_steps': 'weighed only by the steps around the reshape, which never run',
}


def _load(*parts):
    with open(os.path.join(ROLE, *parts)) as handle:
        return yaml.safe_load(handle) or {}


def role_variables():
    found = set(_load('defaults', 'main.yml')) | set(_load('vars', 'main.yml'))
    for spec in _load('meta', 'argument_specs.yml')['argument_specs'].values():
        found |= set(spec.get('options') or {})
    return set(name for name in found if name.startswith('rolling_reshape_'))


def rehearsal_settings():
    with open(os.path.join(ROOT, 'playbooks', 'rehearse.yml')) as handle:
        plays = yaml.safe_load(handle)
    return plays[0]['vars']['rehearsal_settings']


def test_every_variable_of_the_role_is_a_rehearsal_setting_or_allowed_for_a_reason():
    settings = set(rehearsal_settings())
    unclassified = sorted(role_variables() - settings - set(ALLOWED))
    assert unclassified == [], ('variables of the rolling_reshape role neither fixed by rehearse.yml '
                                '(rehearsal_settings) nor allowed here: %s' % unclassified)
    assert not settings & set(ALLOWED), sorted(settings & set(ALLOWED))


def test_the_settings_switch_off_every_step_hook_and_nova_compute_handling():
    settings = rehearsal_settings()
    for name in ('rolling_reshape_pre_tasks', 'rolling_reshape_post_tasks', 'rolling_reshape_nova_compute_service'):
        assert settings[name] == '', name
    for name in ('rolling_reshape_steps', 'rolling_reshape_nova_steps', 'rolling_reshape_nova_managed',
                 'rolling_reshape_nova_stops', 'rolling_reshape_nova_force_down'):
        assert settings[name] is False, name
    assert settings['rolling_reshape_nova_service'] == 'never'
    commands = [name for name in role_variables() if name.startswith('rolling_reshape_nova_') and name.endswith('_command')]
    assert commands and all(settings[name] == [] for name in commands), commands
    assert settings['rolling_reshape_controller'] == settings['preflight_controller'] == 'localhost'
    copy = {'embedded_db': '{{ rehearsal_store_path }}'}
    assert settings['placement_backend'] == settings['rolling_reshape_backend'] == settings['preflight_backend'] == copy
