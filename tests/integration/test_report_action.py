# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet_report action plugin under ansible-playbook: the module gathers, the controller renders
from the operator's template (found in the play's templates/), and the files are written where the
module ran: directly on the local connection, by a second module run on any other connection."""

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
  connection: "{{ conn }}"
  tasks:
    - name: Report with the operator's HTML template
      placement.upgrade.fleet_report:
        dest: "{{ out }}/reports/run-1"
        read_trees: false
        run_id: run-1
        records: [{node: "cn-<1>", status: reshaped, reason: "a & b"}]
        hosts: ["cn-<1>", cn-2]
        html_template: mine.html.j2
      register: first
    - name: A template that is nowhere
      placement.upgrade.fleet_report:
        dest: "{{ out }}/reports/run-1"
        read_trees: false
        markdown_template: nowhere.md.j2
      register: missing
      ignore_errors: true
    - name: What the tasks returned
      ansible.builtin.copy:
        dest: "{{ out }}/result.json"
        content: "{{ {'first': first, 'missing': missing} | to_json }}"
        mode: "0600"
'''

NOT_LOCAL = '''
from ansible.plugins.connection.local import Connection as _Local


class Connection(_Local):
    """The local connection under another name: to the action plugin a host that is not this controller."""
    transport = 'notlocal'
'''


def _run(tmp_path, conn):
    out = str(tmp_path)
    (tmp_path / 'templates').mkdir()
    (tmp_path / 'templates' / 'mine.html.j2').write_text(
        '<h1>{{ report.title }}</h1>{% for e in report.nodes %}<p>{{ e.node }}: {{ label(e.status) }}</p>{% endfor %}\n')
    (tmp_path / 'connection_plugins').mkdir()
    (tmp_path / 'connection_plugins' / 'notlocal.py').write_text(NOT_LOCAL)
    (tmp_path / 'play.yml').write_text(PLAY)
    link_parent = tmp_path / 'collections' / 'ansible_collections' / 'placement'
    link_parent.mkdir(parents=True)
    os.symlink(REPO, str(link_parent / 'upgrade'))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / 'collections'), ANSIBLE_NOCOLOR='1',
               ANSIBLE_HOME=os.path.join(out, '.ansible'), ANSIBLE_LOCAL_TEMP=os.path.join(out, '.ansible', 'tmp'),
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_RETRY_FILES_ENABLED='0')
    env.pop('ANSIBLE_CONFIG', None)
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', 'localhost,', '-vvv', 'play.yml',
                           '-e', 'conn=%s' % conn, '-e', 'out=%s' % out],
                          cwd=out, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    with open(os.path.join(out, 'result.json')) as handle:
        return json.load(handle), proc.stdout


@pytest.mark.parametrize('conn, module_runs', [('local', 0), ('notlocal', 2)])
def test_action_renders_on_the_controller_and_writes_where_the_module_ran(tmp_path, conn, module_runs):
    result, log = _run(tmp_path, conn)
    first = result['first']
    dest = str(tmp_path / 'reports' / 'run-1')
    assert first['changed'] and 'report' not in first and first['paths']['html'] == os.path.join(dest, 'report.html')
    with open(first['paths']['html']) as handle:
        assert handle.read() == '<h1>Rolling reshape report</h1><p>cn-&lt;1&gt;: reshaped</p><p>cn-2: not reached</p>'  # trim_blocks: no newline after endfor
    with open(first['paths']['markdown']) as handle:
        assert '## cn-&lt;1\\>: reshaped' in handle.read()
    for name in ('report.html', 'report.md', 'summary.json'):
        assert oct(os.stat(os.path.join(dest, name)).st_mode & 0o777) == oct(0o600)
    assert os.readlink(str(tmp_path / 'reports' / 'latest')) == 'run-1'
    # on this controller the module ran in process (plugin_utils/in_process.py); on another
    # connection it ran once to gather and once more to write
    first_task = log.split('TASK [A template that is nowhere]')[0]
    puts = [line for line in first_task.splitlines() if 'PUT ' in line and 'AnsiballZ_fleet_report.py' in line]
    assert len(puts) == module_runs, puts
    missing = result['missing']
    assert missing['failed'] and missing['msg'].startswith("markdown_template: Could not find or access 'nowhere.md.j2'")
