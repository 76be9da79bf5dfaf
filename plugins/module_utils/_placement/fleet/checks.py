# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's node record, and its check.

The report is made of one *node record* per compute node (plain dicts, JSON-serialisable)::

    node:         inventory hostname ("compute-01")
    provider:     root provider name (defaults to node)
    status:       reshaped | noop | deferred | failed | planned | rolled_back |
                  verified | unreached (the report shows a reshaped node whose
                  ``written`` says no POST /reshaper was applied as ``updated``)
    reason:       why a node was deferred or failed (text, optional)
    started, finished:  epoch seconds (optional); duration: seconds (optional)
    before, after:      provider trees, the shape of backend.provider_tree_state:
                        {"providers": {uuid: {"name", "parent_provider_uuid",
                         "inventories", "usages", "traits"}},
                         "allocations": {consumer: {"allocations": {rp: {"resources"}}}}}
    moved:        {"consumers": n, "allocations": n} (computed from the trees when absent)
    verification: [{"check", "passed", "detail"}] (optional)
    snapshot:     path of the snapshot the node can be rolled back from (optional)
    retries:      generation-conflict retries the reshape needed (optional)
    names:        {provider uuid: name} for providers outside the tree (optional)
    touched:      whether this run changed the node's tree (optional; default: the
                  status is reshaped or rolled_back); a failed node whose reshape was
                  applied before the failure is touched
    unread:       why the node's tree could not be read from Placement (optional)
    derived:      true when the roll wrote no record of the node and the record was
                  derived from the run's snapshot of it and Placement (optional)
    run_id:       the run the record belongs to (optional)
    written:      what the reshape wrote (optional): {"reshaper": whether its POST /reshaper
                  was applied, "traits": [{"provider", "uuid", "added", "removed"}],
                  "children": [names]}
    journal:      what the pass wrote, would write (check mode) or restored (a rollback):
                  :func:`..journal.journal_of`'s shape; every figure of the node comes from it
    warnings:     the warnings of the node's pass (its discovery's, the reshape's remarks)
    placement_microversion: the microversion of the backend that stored the record (optional)

:func:`check_record` refuses a record (or the reshape result in it) whose fields have the wrong
types, naming the field; the report shows such a record without trees (:mod:`.data`) and the
fleet_report module lists it.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from .. import journal as _journal
from .. import shapes
from ..node import snapshot as _snapshot

#: the type of each field of a node record, and of the reshape result it may carry (``reshape``)
_RECORD_KINDS = {
    'node': 'scalar?', 'provider': 'scalar?', 'status': 'text?', 'reason': 'text?', 'started': 'number?',
    'finished': 'number?', 'duration': 'number?', 'touched': 'bool?', 'derived': 'bool?', 'failed': 'bool?',
    'snapshot': 'text?', 'retries': 'int?', 'warnings': 'list?', 'verification': 'list?', 'moved': 'mapping?',
    'names': 'mapping?', 'consumer_names': 'mapping?', 'before': 'mapping?', 'after': 'mapping?',
    'unread': 'text?', 'run_id': 'scalar?', 'instances': 'mapping?', 'nova_compute': 'mapping?',
    'written': 'mapping?', 'placement_microversion': 'text?', 'journal': 'mapping?',
}
_RESULT_KINDS = {
    'status': 'text?', 'changed': 'bool?', 'snapshot': 'text?', 'moved': 'mapping?', 'verification': 'list?',
    'retries': 'int?', 'remarks': 'list?', 'warnings': 'list?', 'plan': 'mapping?', 'deferred_reason': 'text?',
    'reshaper_applied': 'bool?', 'traits_written': 'list?', 'children_created': 'list?', 'would_write': 'mapping?',
    'resent': 'int?', 'journal': 'mapping?',
}


def check_record(record, field='record'):
    """Refuse a node record (or the reshape result in it) whose fields have the wrong types, naming the field.

    Raises :class:`.errors.BadInput` (``record.started must be a finite number, got str``);
    :func:`.data.build_report` shows such a record as a bad record without trees, and the
    fleet report module lists it in its result.
    """
    shapes.expect_fields(record, field, _RECORD_KINDS, 'a node record (a mapping)')
    for key in ('warnings',):
        shapes.expect_list_of(record.get(key), 'text', '%s.%s' % (field, key), 'a list of texts')
    for index, check in enumerate(record.get('verification') or []):
        shapes.expect(check, 'mapping', '%s.verification[%d]' % (field, index), 'a check (a mapping)')
    shapes.expect_fields(record.get('moved') or {}, field + '.moved', {'consumers': 'int?', 'allocations': 'int?'})
    shapes.expect_fields(record.get('nova_compute') or {}, field + '.nova_compute', {'before': 'text?', 'after': 'text?'})
    _check_written(record.get('written') or {}, field + '.written')
    if record.get('journal') is not None:
        _check_journal(record['journal'], field + '.journal')
    for key in ('names', 'consumer_names'):
        for sub, name in (record.get(key) or {}).items():
            shapes.expect(name, 'scalar', '%s.%s.%s' % (field, key, sub))
    for key in ('before', 'after'):
        if record.get(key) is not None:
            _check_tree(record[key], '%s.%s' % (field, key))
    result = record.get('reshape')
    if result is not None:
        shapes.expect_fields(result, field + '.reshape', _RESULT_KINDS, 'a reshape task result (a mapping)')
        for key in ('remarks', 'warnings'):
            shapes.expect_list_of(result.get(key), 'text', '%s.reshape.%s' % (field, key), 'a list of texts')
        shapes.expect_fields(result.get('moved') or {}, field + '.reshape.moved',
                             {'consumers': 'int?', 'allocations': 'int?'})
        for index, check in enumerate(result.get('verification') or []):
            shapes.expect(check, 'mapping', '%s.reshape.verification[%d]' % (field, index), 'a check (a mapping)')
        if result.get('journal') is not None:
            _check_journal(result['journal'], field + '.reshape.journal')
    return record


def _check_journal(journal, field):
    """A record's ``journal`` (:func:`..journal.journal_of`'s shape), as far as the report reads it."""
    shapes.expect_fields(journal, field, {'mode': 'text!', 'providers': 'mapping?', 'inventories': 'list?',
                                          'allocations': 'list?', 'conversions': 'list?', 'traits': 'list?'})
    if journal['mode'] not in _journal.MODES:
        raise shapes.shape_error(field + '.mode', 'one of %s' % ', '.join(_journal.MODES), journal['mode'])
    for key in ('created', 'removed', 'left'):
        shapes.expect_list_of((journal.get('providers') or {}).get(key), 'text', '%s.providers.%s' % (field, key),
                              'a list of provider names')
    for key, kinds in (('inventories', {'provider': 'text!', 'resource_class': 'text!', 'before': 'int?',
                                        'after': 'int?'}),
                       ('allocations', {'consumer': 'text!', 'resource_class': 'text!', 'kind': 'text!',
                                        'from': 'list!', 'to': 'list!'}),
                       ('conversions', {'consumer': 'text!', 'from': 'text!', 'to': 'text!', 'providers': 'list!',
                                        'amount': 'int!'}),
                       ('traits', {'provider': 'text!', 'added': 'list!', 'removed': 'list!'})):
        for index, item in enumerate(journal.get(key) or []):
            shapes.expect_fields(item, '%s.%s[%d]' % (field, key, index), kinds)


def _check_written(written, field):
    """A record's ``written`` (:func:`.data.written_of`'s shape)."""
    shapes.expect_fields(written, field, {'reshaper': 'bool?', 'traits': 'list?', 'children': 'list?'})
    shapes.expect_list_of(written.get('children'), 'text', field + '.children', 'a list of texts')
    for index, item in enumerate(written.get('traits') or []):
        where = '%s.traits[%d]' % (field, index)
        shapes.expect_fields(item, where, {'provider': 'text?', 'uuid': 'text?', 'added': 'list?', 'removed': 'list?'},
                             'a trait change (a mapping)')
        for key in ('added', 'removed'):
            shapes.expect_list_of(item.get(key), 'text', '%s.%s' % (where, key), 'a list of texts')


def _check_tree(tree, field):
    """A tree in a record: a provider tree state, or the normalized form (allocations {consumer: {rp: {RC: n}}})."""
    shapes.expect_fields(tree, field, {'providers': 'mapping?', 'allocations': 'mapping?'}, 'a provider tree (a mapping)')
    state = {'providers': tree.get('providers') or {}, 'allocations': {}}
    for consumer, entry in (tree.get('allocations') or {}).items():
        where = '%s.allocations.%s' % (field, consumer)
        shapes.expect(entry, 'mapping', where, "a consumer's allocations (a mapping)")
        allocs = entry.get('allocations', entry)
        shapes.expect(allocs, 'mapping', where + '.allocations', optional=True)
        for rp, item in (allocs or {}).items():
            if isinstance(item, dict) and 'resources' not in item and 'generation' not in item:
                item = {'resources': item}        # the normalized form {rp: {RC: n}}
            shapes.expect_fields(item, '%s.%s' % (where, rp), {'resources': 'mapping?', 'generation': 'int?'})
            for rc, amount in (item.get('resources') or {}).items():
                shapes.expect(amount, 'int', '%s.%s.resources.%s' % (where, rp, rc))
    providers = dict((u, dict(p, name=p.get('name') or u) if isinstance(p, dict) else p)
                     for u, p in state['providers'].items())
    _snapshot.check_state({'providers': providers}, field)


def record_key(rec):
    """The node a record is of (its ``node``, else its ``provider``), as text; None when it names none."""
    key = rec.get('node') or rec.get('provider')
    return None if key is None else str(key)
