# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reshape module on a node whose last pass Placement damaged (issue 40, section 1)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends.embedded import EmbeddedBackend
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import reshaper
from ansible_collections.placement.upgrade.plugins.modules import reshape

from module_runner import run_module_main
from test_reshaper_support import consumers_by_name, flat_gpu_node, gpu_report, Wrapper


def test_the_reshape_module_fails_a_damaged_node_with_its_corrections(capsys, tmp_path):
    """The module's task on a node whose last pass Placement damaged: a clean failure (no traceback),
    changed=false, the damaged consumer and its correction command in the result (issue 40)."""
    db = str(tmp_path / 'placement.db')
    snapdir = str(tmp_path / 'snaps')
    report = gpu_report(tmp_path / 'host', 'compute-01')
    with EmbeddedBackend(db) as store:
        node = flat_gpu_node(store, 'compute-01', report)
        victim = consumers_by_name(report)['instance-00000003']

        class LosesDisk(Wrapper):
            def reshape(self, body):
                body = json.loads(json.dumps(body))
                body['allocations'][victim]['allocations'].pop(node['pool'])
                return self.inner.reshape(body)

        first = reshaper.reshape_node(LosesDisk(store), 'compute-01', report, snapshot_dir=snapdir)
        assert first['status'] == 'failed'
    rc, res = run_module_main(reshape.main, {'embedded_db': db, 'root_provider': 'compute-01', 'devices': report,
                                             'snapshot_dir': snapdir}, capsys)
    assert rc == 1 and res['failed'] is True and 'exception' not in res
    assert res['changed'] is False and res['status'] == 'failed' and res['verified'] is False
    assert [d['consumer'] for d in res['damaged']] == [victim]
    assert res['corrections'][0].startswith('ansible localhost -m placement.upgrade.allocation -a ')
    assert res['corrections'][0] in res['msg'] and victim in res['msg']
    assert 'Traceback' not in res['msg']
