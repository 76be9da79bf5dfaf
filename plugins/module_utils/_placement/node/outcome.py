# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node's pass says it did: the statuses, the result's keys, what was written.

The result of :func:`reshaper.reshape_node`, :func:`rollback.rollback_node` and
:func:`verify_pass.verify_node` (:func:`result`: ``changed``, ``status``, ``plan``, ``diff``, ...,
docs in :mod:`.reshaper`), the words for what a pass wrote (:func:`written_text`,
:func:`would_write`, :func:`note_traits`), what landed of a reshape Placement did not commit
as sent (:func:`landed`) and the retries of a message (:func:`retries_text`); and the root's
trait PUT after a reshape (:func:`set_root_traits`).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ..rules import allocations as allocation_rules
from .. import resources as ops
from .. import tree as _tree
from .settle import log_line

STATUS_RESHAPED = 'reshaped'
STATUS_NOOP = 'noop'
STATUS_DEFERRED = 'deferred'
STATUS_ROLLED_BACK = 'rolled_back'
STATUS_VERIFIED = 'verified'
STATUS_FAILED = 'failed'


def set_root_traits(backend, change, attempts, log):
    """The root's traits after the reshape, as nova sets them in the same pass
    (HW_CPU_X86_AMD_SEV leaves the root with MEM_ENCRYPTION_CONTEXT).  Traits are not
    part of ``POST /reshaper``; this is a generation-checked PUT with bounded retry."""
    if not change:
        return
    ops.set_traits(backend, change['uuid'], change['after'], what='root provider %s' % change['name'],
                   attempts=attempts, log=log)
    log_line(log, 'root %s traits: %s -> %s'
             % (change['name'], ', '.join(change['before']), ', '.join(change['after'])))


def note_traits(written, item, state):
    """Add to ``written`` what the trait PUT of ``item`` (a plan's ``set_traits`` entry) changed on an
    existing provider of ``state``: ``{"provider", "uuid", "added", "removed"}`` (merged per provider)."""
    before = set((state['providers'].get(item['uuid']) or {}).get('traits') or ())
    after = set(item['traits'])
    entry = next((w for w in written if w['uuid'] == item['uuid']), None)
    if entry is None:
        entry = {'provider': item['name'], 'uuid': item['uuid'], 'added': [], 'removed': []}
        written.append(entry)
    entry['added'] = sorted(set(entry['added']) | (after - before))
    entry['removed'] = sorted(set(entry['removed']) | (before - after))


def root_traits_item(change):
    """A plan's ``root_traits`` change (after the reshape) as a ``set_traits`` entry."""
    return {'name': change['name'], 'uuid': change['uuid'], 'traits': change['after']}


def would_write(plan, state):
    """What a planned reshape (check mode) would write: ``{"reshaper": whether a POST /reshaper would be
    sent, "traits": [trait changes on existing providers, as ``traits_written``], "children": [names]}``."""
    created = set(c['uuid'] for c in plan['create_children'])
    traits = []
    for item in plan['set_traits']:
        if item['uuid'] not in created:
            note_traits(traits, item, state)
    if plan.get('root_traits'):
        note_traits(traits, root_traits_item(plan['root_traits']), state)
    return {'reshaper': bool(plan['allocations'] or plan['inventory_changes'] or plan.get('root_traits')),
            'traits': traits, 'children': [c['name'] for c in plan['create_children']]}


def written_text(created, traits_written):
    """``traits added: OWNER_NOVA on cn1_pci_0000_81_00_0; children created: ...`` ('' when nothing)."""
    parts = []
    if created:
        parts.append('children created: %s' % ', '.join(created))
    for key, verb in (('added', 'added'), ('removed', 'removed')):
        items = ['%s on %s' % (', '.join(w[key]), w['provider']) for w in traits_written or () if w.get(key)]
        if items:
            parts.append('traits %s: %s' % (verb, '; '.join(items)))
    return '; '.join(parts)


def result(status, changed, **kwargs):
    result = {
        'changed': changed,
        'status': status,
        'plan': None,
        'diff': {'before': {}, 'after': {}},
        'retries': 0,
        'resent': 0,
        'verification': [],
        'verified': None,
        'snapshot': None,
        'moved': {'consumers': 0, 'allocations': 0},
        'deferred_reason': None,
        'warnings': [],
        'reshaper_applied': False,
        'traits_written': [],
        'children_created': [],
    }
    result.update(kwargs)
    return result


def landed(plan, after):
    """``moved`` as Placement holds it after a reshape it did not commit as sent: the consumers
    holding exactly their planned allocations, their moved allocations and units."""
    tree = _tree.ProviderTree.of(after)
    landed = [c for c, body in sorted(plan['allocations'].items())
              if tree.allocations(c) == allocation_rules.strip_allocations(body['allocations'])]
    units = {}
    records = 0
    for consumer in landed:
        for rc, rec in (plan['assignments'].get(consumer) or {}).items():
            records += 1
            units[rc] = units.get(rc, 0) + rec['amount']
    return {'consumers': len(landed), 'allocations': records, 'units': units}


def retries_text(retries, resent):
    """`` after N retries (...)`` of a reshape's message: generation conflicts and POST /reshaper
    sent again after it failed or got no answer and was not applied, each said as what it was."""
    if not retries:
        return ''
    why = []
    if retries - resent:
        why.append('%d on generation conflicts' % (retries - resent))
    if resent:
        why.append('%d after POST /reshaper failed or got no answer and was not applied, see warnings' % resent)
    return ' after %d retr%s (%s)' % (retries, 'y' if retries == 1 else 'ies', '; '.join(why))
