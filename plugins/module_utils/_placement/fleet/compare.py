# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare what a rehearsal did with what a plan against production says the real roll will do.

Both sides are report folders the rolling_reshape role writes (``<report_dir>/<run_id>``, or
its ``latest`` link): the node records under ``nodes/`` hold, for each node, its status and
its tree before and after (:mod:`.records`).  The rehearsal is a real roll on an exported copy
(:mod:`.export`); the plan is a check-mode run (``playbooks/plan.yml`` or ``--check``) against
production, whose tree after is the plan applied to production's tree.

For each node :func:`compare_runs` compares:

* ``status``: what the pass does (a reshape -- ``reshaped`` in a roll, ``planned`` in a
  plan --, nothing, deferred, failed);
* ``before``: the tree each one started from -- providers, inventories, traits, parents,
  consumers and their allocations (what changed in production since the export);
* ``created``: the child providers the pass creates (name, parent, inventories, traits);
* ``moves``: per consumer and resource class, the amounts it leaves and gains on each provider;
* ``after``: every provider's inventories and traits, every consumer's allocations after the pass.

Providers are compared by uuid (the export keeps them; the children's uuids are derived
from their names) and shown by name; generations and usages are never compared.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ..errors import BadInput, LocalFileError
from .checks import check_record
from .records import load_records
from .trees import consumer_moves, normalize_tree

#: statuses that mean the same outcome in a roll and in a plan
SAME_OUTCOME = {'planned': 'reshaped'}


def load_run(path, field='rehearsal'):
    """``{node: record}`` of a report folder (``nodes/*.json``) and its summary.json (or None)."""
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(os.path.join(path, 'nodes')):
        raise LocalFileError('%s: %s is not a report folder of the rolling_reshape role (no nodes/ in it; '
                             'give <report_dir>/<run_id> or <report_dir>/latest)' % (field, path), path=path)
    records, problems = load_records(path)
    if problems:
        raise LocalFileError('%s: unreadable node records: %s' % (field, '; '.join(problems)), path=path)
    _check_records(path, records, field)
    if not records:
        raise LocalFileError('%s: %s holds no node record' % (field, path), path=path)
    summary = None
    summary_path = os.path.join(path, 'summary.json')
    if os.path.isfile(summary_path):
        try:
            with open(summary_path) as handle:
                summary = json.load(handle)
        except (OSError, IOError, ValueError):
            summary = None
    return dict((rec.get('node') or rec.get('provider'), rec) for rec in records), summary


def _check_records(path, records, field):
    """Refuse a record whose fields have the wrong types, naming the side, the file and the field
    (``plan: <dir>/nodes/cn1.json: record.after must be a provider tree (a mapping), got int``), as
    the fleet report does; compared as they are, such fields ended as an AttributeError."""
    for record in records:
        try:
            check_record(record)
        except BadInput as exc:
            raise BadInput('%s: %s: %s' % (field, _record_file(path, record), exc.detail), field=field)


def _record_file(path, record):
    """The file under ``path/nodes`` that holds ``record`` (its folder if none does any more)."""
    folder = os.path.join(path, 'nodes')
    for name in sorted(os.listdir(folder)):
        if name.endswith('.json') and not name.startswith('.'):
            try:
                with open(os.path.join(folder, name)) as handle:
                    if json.load(handle) == record:
                        return os.path.join(folder, name)
            except (OSError, IOError, ValueError):
                continue
    return folder


def outcome(status):
    return SAME_OUTCOME.get(status, status)


def _names(*records):
    names = {}
    for rec in records:
        names.update(rec.get('names') or {})
        for key in ('before', 'after'):
            for uuid, prov in ((rec.get(key) or {}).get('providers') or {}).items():
                if prov.get('name'):
                    names[uuid] = prov['name']
    return names


def _providers(tree, names):
    """{uuid: (name, parent name, inventories, traits)} of a normalized tree."""
    return dict((uuid, {'name': prov['name'], 'parent': names.get(prov['parent'], prov['parent']),
                        'inventories': prov['inventories'], 'traits': sorted(prov['traits'] or [])})
                for uuid, prov in tree['providers'].items())


def _allocations(tree, names, tree_part=()):
    """{consumer: {provider name: resources}}; the consumers of ``tree_part`` cut to the tree's own
    providers (see :func:`partial_consumers`)."""
    return dict((consumer, dict((names.get(rp, rp), resources) for rp, resources in allocs.items()
                                if consumer not in tree_part or rp in tree['providers']))
                for consumer, allocs in tree['allocations'].items())


def partial_consumers(*records):
    """The consumers any of ``records`` holds as a PARTIAL body (before or after): only their tree
    part was read (a reshape reads in full only the consumers it may write), so only that part can
    be compared."""
    found = set()
    for record in records:
        for part in ('before', 'after'):
            tree = (record or {}).get(part)
            bodies = (tree.get('allocations') if isinstance(tree, dict) else None) or {}
            found.update(c for c, body in bodies.items() if isinstance(body, dict) and body.get('partial'))
    return found


def _created(before, after, names):
    return dict((prov['name'], {'parent': names.get(prov['parent'], prov['parent']),
                                'inventories': prov['inventories'], 'traits': sorted(prov['traits'] or [])})
                for uuid, prov in after['providers'].items() if uuid not in before['providers'])


def _moves(before, after, names):
    found = {}
    for move in consumer_moves(before, after):
        key = '%s %s' % (move['consumer'], move['resource_class'])
        found[key] = {'from': sorted([names.get(rp, rp), n] for rp, n in move['from']),
                      'to': sorted([names.get(rp, rp), n] for rp, n in move['to'])}
    return found


def node_view(record, names, tree_part=()):
    """What one node record says, in comparable form (no generations, no usages); the consumers of
    ``tree_part`` by their allocations on the node's tree only."""
    before = normalize_tree(record.get('before'))
    after = normalize_tree(record.get('after'))
    return {
        'status': outcome(record.get('status')),
        'before': {'providers': _providers(before, names), 'allocations': _allocations(before, names, tree_part)},
        'created': _created(before, after, names),
        'moves': _moves(before, after, names),
        'after': {'providers': _providers(after, names), 'allocations': _allocations(after, names, tree_part)},
    }


def _diff_maps(node, what, rehearsal, production, label):
    """Differences between two dicts keyed by ``label`` items (a provider, a consumer, ...)."""
    found = []
    for key in sorted(set(rehearsal) | set(production), key=str):
        old, new = rehearsal.get(key), production.get(key)
        if old != new:
            found.append({'node': node, 'what': what, 'item': '%s %s' % (label, key) if label else str(key),
                          'rehearsal': old, 'production': new})
    return found


def _provider_key(view, uuid):
    return view['providers'][uuid]['name'] if uuid in view['providers'] else uuid


def compare_node(node, rehearsal, production, names):
    """The differences of one node (an empty list when the pass does the same)."""
    if rehearsal is None or production is None:
        return [{'node': node, 'what': 'node', 'item': 'record',
                 'rehearsal': None if rehearsal is None else rehearsal.get('status'),
                 'production': None if production is None else production.get('status')}]
    tree_part = partial_consumers(rehearsal, production)
    old, new = node_view(rehearsal, names, tree_part), node_view(production, names, tree_part)
    found = []
    if old['status'] != new['status']:
        found.append({'node': node, 'what': 'status', 'item': 'outcome', 'rehearsal': old['status'],
                      'production': new['status']})
    for part in ('before', 'after'):
        providers_old = dict((_provider_key(old[part], u), p) for u, p in old[part]['providers'].items())
        providers_new = dict((_provider_key(new[part], u), p) for u, p in new[part]['providers'].items())
        found += _diff_maps(node, part, providers_old, providers_new, 'provider')
        found += _diff_maps(node, part, old[part]['allocations'], new[part]['allocations'], 'consumer')
    found += _diff_maps(node, 'created', old['created'], new['created'], 'child')
    found += _diff_maps(node, 'moves', old['moves'], new['moves'], 'consumer')
    return found


def compare_runs(rehearsal, production):
    """Compare two ``{node: record}`` maps; ``{"equal", "nodes": {node: [difference]}, "differences": [...]}``.

    Each difference is ``{"node", "what" (node | status | before | created | moves | after),
    "item", "rehearsal", "production"}``.
    """
    names = _names(*(list(rehearsal.values()) + list(production.values())))
    nodes = {}
    differences = []
    for node in sorted(set(rehearsal) | set(production)):
        found = compare_node(node, rehearsal.get(node), production.get(node), names)
        nodes[node] = found
        differences.extend(found)
    return {'equal': not differences, 'nodes': nodes, 'differences': differences,
            'compared': sorted(nodes)}


def _short(value):
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 300 else text[:297] + '...'


def lines(result):
    """One line per difference, for an operator (and the task's message)."""
    out = []
    for diff in result['differences']:
        out.append('%s: %s %s: rehearsal %s, production %s' % (
            diff['node'], diff['what'], diff['item'], _short(diff['rehearsal']), _short(diff['production'])))
    return out


def message(result, limit=20):
    """The task's one-paragraph summary, with the first ``limit`` differences."""
    if result['equal']:
        return ('The plan against production is the plan the rehearsal executed, on every node (%s).'
                % ', '.join(result['compared']))
    changed = sorted(node for node, found in result['nodes'].items() if found)
    shown = lines(result)
    more = len(shown) - limit
    return ('The plan against production differs from the rehearsal on %d node(s): %s (%d difference(s)). '
            'Production changed since the export, or the rehearsal ran on other data: export and rehearse '
            'again, or review the differences before the real roll. %s%s'
            % (len(changed), ', '.join(changed), len(result['differences']), '; '.join(shown[:limit]),
               ' (and %d more: see differences)' % more if more > 0 else ''))
