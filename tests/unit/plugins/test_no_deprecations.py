# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No deprecation warning from the collection's own code, on the ansible-core this runs on (issue 42, 4).

ansible-core 2.22 deprecates ``ansible.module_utils.six`` (on import) and ``remove_values()`` (on call):
before the fix the demo printed both.  The playbook below runs the code paths that used them (the
node_command action, a module run in process, the same module run as a module) under the running
ansible-core with Python's deprecation warnings shown, and fails on any ``[DEPRECATION WARNING]`` and on
any Python ``DeprecationWarning`` raised from a file of the collection.  The core-matrix stage runs it on
every supported release (2.18 to 2.22).  The static test fails on any release: the collection imports
none of what ansible-core 2.22 deprecates in its module_utils."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import json
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.path.dirname(sys.executable)

PLAY = '''
- hosts: node
  gather_facts: false
  tasks:
    - name: A command by node_command (the action plugin)
      placement.upgrade.node_command:
        argv: ["true"]
    - name: Discovery in process (plugin_utils/in_process.py)
      placement.upgrade.device_info:
        sysfs_root: "{{ out }}/sys"
        domain_xml_glob: "{{ out }}/qemu/*.xml"
      register: in_process
    - name: Discovery by the module (AnsiballZ)
      placement.upgrade.device_info:
        sysfs_root: "{{ out }}/sys"
        domain_xml_glob: "{{ out }}/qemu/*.xml"
      environment:
        PLACEMENT_UPGRADE_TEST: "1"
      register: by_module
    - name: Bad input in process (a failure's result is masked too)
      placement.upgrade.device_info:
        sysfs_root: "{{ out }}/sys"
        numa: sometimes
      ignore_errors: true
'''

#: What ansible-core 2.22 (2.22.0rc1's module_utils) deprecates, module by module: a name of the
#: collection's code importing one of these warns on 2.22.
DEPRECATED = {
    'ansible.module_utils.six': None,  # the whole module (removed in 2.24)
    'ansible.module_utils.common._collections_compat': None,
    'ansible.module_utils._text': None,
    'ansible.module_utils.common.parameters': ('remove_values', 'sanitize_keys'),
    'ansible.module_utils.basic': ('heuristic_log_sanitize', 'get_platform', 'load_platform_subclass',
                                   'get_all_subclasses'),
    'ansible.module_utils.common.collections': ('count',),
    'ansible.module_utils.common.json': ('json_dump',),
}


def _collection_sources():
    for top in ('plugins', 'roles'):
        for dirpath, dirnames, filenames in os.walk(os.path.join(REPO, top)):
            dirnames[:] = [d for d in dirnames if d != '__pycache__']
            for name in filenames:
                if name.endswith('.py'):
                    yield os.path.join(dirpath, name)


def _deprecated_imports(path):
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                for module, names in DEPRECATED.items():
                    if names is None and (alias.name == module or alias.name.startswith(module + '.')):
                        found.append('%s:%s import %s' % (os.path.relpath(path, REPO), node.lineno, alias.name))
        elif isinstance(node, ast.ImportFrom) and node.module:
            for module, names in DEPRECATED.items():
                if node.module == module or node.module.startswith(module + '.'):
                    bad = [a.name for a in node.names if names is None or a.name in names]
                elif names is None and node.module == module.rsplit('.', 1)[0]:
                    bad = [a.name for a in node.names if a.name == module.rsplit('.', 1)[1]]
                else:
                    bad = []
                if bad:
                    where = '%s:%s' % (os.path.relpath(path, REPO), node.lineno)
                    found.append('%s from %s import %s' % (where, node.module, ', '.join(bad)))
    return found


def test_the_collection_imports_nothing_ansible_core_deprecates():
    found = [hit for path in _collection_sources() for hit in _deprecated_imports(path)]
    assert found == []


def test_the_static_check_sees_each_form_of_import(tmp_path):
    # the check above cannot pass by missing a form: each of these is found
    sample = tmp_path / 'sample.py'
    sample.write_text('from ansible.module_utils.six.moves import shlex_quote\n'
                      'import ansible.module_utils.six\n'
                      'from ansible.module_utils import six\n'
                      'from ansible.module_utils.common.parameters import remove_values, _list_no_log_values\n'
                      'from ansible.module_utils.common.parameters import _list_no_log_values\n')
    found = [hit.split(' ', 1)[1] for hit in _deprecated_imports(str(sample))]
    assert found == [
        'from ansible.module_utils.six.moves import shlex_quote',
        'import ansible.module_utils.six',
        'from ansible.module_utils import six',
        'from ansible.module_utils.common.parameters import remove_values',
    ]


@pytest.mark.slow
def test_no_deprecation_warning_from_the_collections_code(tmp_path):
    (tmp_path / 'sys').mkdir()
    (tmp_path / 'qemu').mkdir()
    (tmp_path / 'play.yml').write_text(PLAY)
    (tmp_path / 'inventory.json').write_text(json.dumps({'all': {'hosts': {'node': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}}}}))
    link_parent = tmp_path / 'collections' / 'ansible_collections' / 'placement'
    link_parent.mkdir(parents=True)
    os.symlink(REPO, str(link_parent / 'upgrade'))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / 'collections'), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCAL_TEMP=str(tmp_path / 'tmp'), ANSIBLE_HOME=str(tmp_path / '.ansible'),
               ANSIBLE_DEPRECATION_WARNINGS='True', ANSIBLE_FORCE_COLOR='0',
               PYTHONWARNINGS='always::DeprecationWarning,always::PendingDeprecationWarning',
               PYTHONDONTWRITEBYTECODE='1')
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', str(tmp_path / 'inventory.json'),
                           str(tmp_path / 'play.yml'), '-e', 'out=%s' % tmp_path],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    # the tasks ran (a playbook that did nothing would warn of nothing)
    assert re.search(r'TASK \[Bad input in process.*\n(.*\n)*?fatal: \[node\]', proc.stdout), proc.stdout[-3000:]
    assert proc.stdout.count('ok: [node]') == 2 and proc.stdout.count('changed: [node]') == 1, proc.stdout
    deprecations = [line for line in proc.stdout.splitlines() if 'DEPRECATION WARNING' in line]
    ours = [line for line in proc.stdout.splitlines()
            if 'DeprecationWarning' in line and ('placement/upgrade/' in line or REPO in line)]
    assert deprecations == [] and ours == [], proc.stdout
