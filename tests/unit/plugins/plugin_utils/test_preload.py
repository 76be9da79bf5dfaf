# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/preload.py: what ansible-playbook's own process imports for the node passes' workers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys
import textwrap

from ansible_collections.placement.upgrade.plugins.plugin_utils import preload


def test_every_module_named_exists_and_the_in_process_actions_are_there():
    # every name is importable in the project venv: warm() reports none missing
    assert preload.warm() == []
    for name in ('compute_service', 'resource_provider_info', 'reshape', 'fleet_report'):
        assert 'ansible_collections.placement.upgrade.plugins.action.%s' % name in preload.MODULES
        assert 'ansible_collections.placement.upgrade.plugins.modules.%s' % name in preload.MODULES


def test_a_worker_forked_after_warm_imports_nothing_of_openstacksdk_or_keystoneauth():
    # the REST backend imports openstacksdk lazily (on first use): warmed in the parent, a forked
    # worker finds it imported; without it, each in-process task would import it again
    code = textwrap.dedent('''
        import os, sys
        from ansible_collections.placement.upgrade.plugins.plugin_utils import preload
        if sys.argv[1] == 'warm':
            assert preload.warm() == []
        before = set(sys.modules)
        from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import rest
        import openstack, openstack.connection, keystoneauth1.session, keystoneauth1.adapter
        print(len([m for m in set(sys.modules) - before if m.startswith(('openstack', 'keystoneauth1'))]))
    ''')
    counts = {}
    for mode in ('warm', 'cold'):
        out = subprocess.run([sys.executable, '-c', code, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, check=True, env=_env())
        counts[mode] = int(out.stdout.strip())
    assert counts['warm'] == 0
    assert counts['cold'] > 50, counts


def _env():
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in sys.path if p)
    return env
