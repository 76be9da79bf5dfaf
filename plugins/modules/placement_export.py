#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: placement_export
short_description: Copy compute nodes' provider trees and their consumers from Placement into an embedded store
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Reads the provider trees of the chosen compute nodes from the Placement the task talks to
    (the production Placement, through the backend and auth options) and writes them into a
    NEW embedded store file, a faithful copy a rehearsal of the rolling reshape runs against
    (see C(playbooks/rehearse.yml) and C(docs/rehearse.md)).
  - "Copied: every provider of each chosen tree with its uuid, name and parent, its inventories
    (every field), traits and aggregates; every consumer holding an allocation on those trees
    with its FULL allocations (also on providers outside the trees), its project, user and consumer
    type (a consumer without a type, as nova writes its migration records, stays without one);
    the sharing providers (trait C(MISC_SHARES_VIA_AGGREGATE)) of the trees' aggregates; and every
    other provider those consumers hold allocations on, with the providers above it, with its
    inventories, traits and aggregates, so that every allocation fits."
  - A provider outside the chosen trees is copied without the allocations of other consumers.
    Generations are the copy's own.
  - The source is only read, with GET requests - each tree, its providers' inventories, traits,
    aggregates and allocations, each consumer's allocations, and one request for the sharing
    providers of the trees' aggregates.
  - The store is built under a temporary name next to O(dest) and renamed into place when
    complete; a failed export leaves no partial store. What an export killed before its rename
    left there is removed by the next export to O(dest) (RV(leftovers_removed)).
options:
  compute_nodes:
    description:
      - Names or uuids of the root providers (compute nodes) to export. A provider that is not a
        root, or a name that is no provider, fails the task before anything is written.
      - An empty list exports every root provider of the source (the whole Placement); an empty
        item (null or an empty string, as a template rendering to nothing gives) is refused.
    type: list
    elements: str
    default: []
  dest:
    description:
      - Path of the embedded store file to create. Its directory must exist.
    type: path
    required: true
  force:
    description:
      - Replace O(dest) when it exists. Without it an existing file fails the task and is left as it is.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    details: Reads the source and returns what would be exported; writes nothing.
  diff_mode:
    support: none
  idempotent:
    support: none
    details: With O(force=true) the store is written again on every run.
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.attributes
  - placement.upgrade.attributes.PLACEMENT
notes:
  - C(changed) is about O(dest) only; the source is never written to.
  - O(embedded_db), when given, is the source (an embedded store copied into another one), never O(dest).
seealso:
  - module: placement.upgrade.plan_compare
  - module: placement.upgrade.device_info
'''

EXAMPLES = r'''
- name: Copy three compute nodes from production into a rehearsal store
  placement.upgrade.placement_export:
    cloud: overcloud
    compute_nodes: [compute-01, compute-02, compute-03]
    dest: /var/lib/placement-upgrade/rehearsal.db
  register: exported

- name: Show what the copy holds
  ansible.builtin.debug:
    msg: "{{ exported.export.providers }} providers, {{ exported.export.consumers }} consumers"
'''

RETURN = r'''
dest:
  description: Absolute path of the store file (written, or that would be written in check mode).
  returned: success
  type: str
  sample: /var/lib/placement-upgrade/rehearsal.db
export:
  description: What the copy holds.
  returned: success
  type: dict
  contains:
    compute_nodes:
      description: Names of the root providers exported, in the order given.
      type: list
      elements: str
      returned: success
      sample: [compute-01, compute-02]
    providers:
      description: Number of providers copied (trees, sharing providers and the others).
      type: int
      returned: success
      sample: 7
    sharing_providers:
      description: Names of the sharing providers of the trees' aggregates.
      type: list
      elements: str
      returned: success
      sample: [shared-storage-pool]
    other_providers:
      description: Names of the other providers copied because exported consumers hold allocations on them (or under them).
      type: list
      elements: str
      returned: success
      sample: [compute-09]
    consumers:
      description: Number of consumers copied.
      type: int
      returned: success
      sample: 12
    allocations:
      description: Number of (consumer, provider) allocations copied.
      type: int
      returned: success
      sample: 24
leftovers_removed:
  description:
    - The files an earlier, interrupted export to O(dest) left next to it (C(.<name>.<random>.export)
      and its SQLite C(-wal), C(-shm), C(-journal) files, all older than the task), removed before
      this export; a warning names them too.
  returned: when any was removed
  type: list
  elements: str
  sample: [/srv/rehearsal/.placement.db.k3j4h5g6.export, /srv/rehearsal/.placement.db.k3j4h5g6.export-wal]
'''

import os

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import ConfigurationError
from ansible_collections.placement.upgrade.plugins.module_utils._placement.fleet import export


def _run(module, backend, log):
    params = module.params
    dest = os.path.abspath(params['dest'])          # (both options are type path: ~ expanded)
    source = params.get('embedded_db')
    if source and os.path.realpath(source) == os.path.realpath(dest):
        raise ConfigurationError('dest: %s is the source store (embedded_db); export into another file' % dest)
    export.check_dest(dest, params['force'])
    data = export.read_export(backend, params['compute_nodes'])
    summary = export.summarize(data)
    if not module.check_mode:
        export.write_export(data, dest, force=params['force'])
        log('exported %d providers and %d consumers into %s' % (summary['providers'], summary['consumers'], dest))
    return {'changed': True, 'dest': dest, 'export': summary}


SPEC = ModuleSpec(
    action=_run, creates_store=False,
    options=dict(
        compute_nodes=dict(type='list', elements='str', default=[]),
        dest=dict(type='path', required=True),
        force=dict(type='bool', default=False),
    ),
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
