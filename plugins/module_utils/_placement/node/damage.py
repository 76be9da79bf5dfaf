# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pass that failed after its ``POST /reshaper`` is never hidden by a later pass (issue 40).

Placement can answer 204 to ``POST /reshaper`` and commit something else (its deadlock retry
runs part of the reshape outside the transaction: an allocation lost, an owner changed, a child
over capacity).  The pass's verification then fails, and its snapshot says so
(snapshot ``outcome``); a pass killed after its ``POST /reshaper`` leaves its snapshot
``pending``.  While the newest snapshot of a node is either (:func:`.snapshot.unsettled`):

* every reshape of the node first reads it in full and checks it against that snapshot
  (:func:`.verify.damage_checks`: each consumer the pass wrote holds what it held before or
  what the pass planned, with its project, user and consumer type; usages fit): damage fails
  the pass before anything is written, naming each damaged consumer with the values Placement
  has and should have, and the correction (:func:`corrections`: one ``placement.upgrade.allocation``
  command per consumer); no damage and nothing to reshape: the pass says the node was verified
  against the snapshot, and marks it verified;
* ``state=verified`` adds the same checks.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

try:
    from shlex import quote as _quote
except ImportError:  # pragma: no cover (Python 2)
    from pipes import quote as _quote

from . import snapshot as _snapshot
from . import verify as _verify
from ..backends.base import provider_tree_state


def unsettled_snapshot(snapshot_dir, root_prov):
    """``(path, doc)`` of the node's newest snapshot when its pass never said the node was verified
    after its POST /reshaper (:func:`.snapshot.unsettled`); None otherwise (no snapshot, or one that
    cannot be read: a rollback reading it says why)."""
    if not snapshot_dir:
        return None
    try:
        path = _snapshot.find_snapshot(snapshot_dir, root_prov['name'], root_uuid=root_prov['uuid'])
        doc = _snapshot.load_snapshot(path)
    except _snapshot.SnapshotError:
        return None
    if doc['root']['uuid'] != root_prov['uuid'] or not _snapshot.unsettled(doc):
        return None
    return path, doc


def check(backend, root_uuid, doc, instances=None):
    """``(checks, damaged, state)``: the node read in full now, checked against ``doc``."""
    state = provider_tree_state(backend, root_uuid)
    checks, damaged = _verify.damage_checks(doc, state, instances=instances)
    return checks, damaged, state


def _owner_text(owner):
    return ', '.join('%s %r' % (field, owner[field]) for field in _verify.OWNER_FIELDS if field in owner)


def corrections(damaged, backend=None):
    """One command per damaged consumer: ``ansible localhost -m placement.upgrade.allocation -a '<JSON>'``
    giving the consumer the allocations and owner it should have (PUT /allocations/{consumer}).
    On the embedded store the command names its file (``embedded_db``); on a real Placement it
    reads the cloud from the environment (``OS_CLOUD``, as the roll's own tasks can)."""
    commands = []
    db = getattr(backend, 'path', None) if getattr(backend, 'kind', None) == 'embedded' else None
    for item in damaged:
        args = {'consumer_uuid': item['consumer'],
                'allocations': [{'resource_provider': rp, 'resources': dict(entry.get('resources') or {})}
                                for rp, entry in sorted(item['should'].items())]}
        args.update(item['owner_should'])
        if db:
            args['embedded_db'] = db
        if not args['allocations']:
            args.pop('allocations')
            args['state'] = 'absent'
        commands.append('ansible localhost -m placement.upgrade.allocation -a %s'
                        % _quote(json.dumps(args, sort_keys=True)))
    return commands


def message(root_name, path, doc, checks, damaged, backend=None):
    """The failure's message: whose pass, what Placement holds and should hold, how to correct it."""
    outcome = doc.get('outcome') if isinstance(doc.get('outcome'), dict) else {}
    run = _snapshot.snapshot_run_id(doc)
    if _snapshot.outcome_status(doc) == _snapshot.OUTCOME_FAILED:
        answer = outcome.get('answer') if isinstance(outcome.get('answer'), dict) else {}
        how = ('the verification after its POST /reshaper failed: Placement answered %s%s and committed '
               'something else' % (answer.get('status') or 204,
                                   ' (request id %s)' % answer['request_id'] if answer.get('request_id') else ''))
    else:
        how = ('it never recorded how it ended: it was stopped between writing the snapshot, just before its '
               'POST /reshaper, and verifying the node')
    head = ('node %s: nothing was written. The pass%s that wrote snapshot %s did not end well (%s), and '
            'Placement still does not hold what that pass left or found'
            % (root_name, ' of run %s' % run if run else '', path, how))
    parts = []
    for item in damaged:
        parts.append('consumer %s: %s' % (item['consumer'], '; '.join(item['problems'])))
    others = [c for c in _verify.failures(checks) if c['check'] != 'consumers_as_snapshot_or_plan']
    for c in others:
        parts.append('%s: %s' % (c['check'], c['detail']))
    text = '%s: %s.' % (head, '; '.join(parts))
    fixes = corrections(damaged, backend)
    if fixes:
        text += (' A rerun does not correct this (it checks the node and writes nothing while this is so): give '
                 'each damaged consumer what it should have%s, then run the pass again (it checks the node against '
                 'this snapshot until it matches): %s'
                 % (' (%s)' % '; '.join('%s: %s' % (d['consumer'], _owner_text(d['owner_should']))
                                        for d in damaged if d['owner_should']) if damaged else '',
                    ' ; '.join(fixes)))
    else:
        text += (' Correct the providers named above (their usages and capacities), then run the pass again '
                 '(it checks the node against this snapshot until it matches).')
    return text
