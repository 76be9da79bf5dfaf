# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Type names in messages under ansible-core 2.19's data tagging (issue 26): a value from extra
vars or a template is an ``_AnsibleTaggedStr`` / ``_AnsibleTaggedList`` / ``_AnsibleTaggedInt``;
a message names it str, list, int, as the operator wrote it.  Through ansible-playbook: the filters
and the fleet_report module (run in process by its action plugin) with values given by -e."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)

pytestmark = pytest.mark.slow

PLAY = '''
- hosts: localhost
  gather_facts: false
  connection: local
  tasks:
    - name: nova_version of a number
      ansible.builtin.set_fact:
        v: "{{ bad | placement.upgrade.nova_version }}"
      register: nova_version_int
      ignore_errors: true
    - name: pci_filters of a number
      ansible.builtin.set_fact:
        f: "{{ bad | placement.upgrade.pci_filters }}"
      register: pci_filters_int
      ignore_errors: true
    - name: Records that are not node records
      placement.upgrade.fleet_report:
        dest: "{{ out }}/report"
        read_trees: false
        records: "{{ recs }}"
      register: report
    - name: What the tasks returned
      ansible.builtin.copy:
        dest: "{{ out }}/result.json"
        content: "{{ {'nova_version': nova_version_int.msg, 'pci_filters': pci_filters_int.msg,
                      'bad_records': report.bad_records} | to_json }}"
        mode: "0600"
'''


def test_messages_name_builtin_types_of_tagged_values(tmp_path):
    out = str(tmp_path)
    (tmp_path / 'play.yml').write_text(PLAY)
    link_parent = tmp_path / 'collections' / 'ansible_collections' / 'placement'
    link_parent.mkdir(parents=True)
    os.symlink(REPO, str(link_parent / 'upgrade'))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / 'collections'), ANSIBLE_NOCOLOR='1',
               ANSIBLE_HOME=os.path.join(out, '.ansible'), ANSIBLE_LOCAL_TEMP=os.path.join(out, '.ansible', 'tmp'),
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_RETRY_FILES_ENABLED='0')
    env.pop('ANSIBLE_CONFIG', None)
    extra = json.dumps({'bad': 5, 'out': out, 'recs': ['x', {'node': [1]}, {'node': 'cn-1', 'status': 'noop'}]})
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', 'localhost,', 'play.yml', '-e', extra],
                          cwd=out, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert '_AnsibleTagged' not in proc.stdout, proc.stdout[-3000:]
    with open(os.path.join(out, 'result.json')) as handle:
        result = json.load(handle)
    assert 'registered result of the command task, got int' in result['nova_version'], result
    assert 'a int is not a filter list' in result['pci_filters'], result
    problems = sorted(b['problem'] for b in result['bad_records'])
    assert problems == ['records[0] must be a node record (a mapping), got str',
                        'records[1].node must be a string, got list'], problems
