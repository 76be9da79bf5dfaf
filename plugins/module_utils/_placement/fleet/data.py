# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's data: node records (:mod:`.checks`) -> the report (a JSON-serialisable dict).

:func:`build_report` orders the records by the list of target hosts (hosts without a record are
``unreached``: the roll stopped before them), computes every consumer's moves and the fleet
totals, says what happened to each node (its outcome, its rollback command or why it has none)
and what to do next; :func:`summary` is its machine-readable part (summary.json, no trees),
:func:`summary_line` the line an operator reads at the end of the run.  What a record says it
wrote (:func:`written_of`, :func:`written_text`) and nova-compute's versions are read here too
(the progress callback reads them the same way).

The report says what happened, never what the play expected: a node is touched when its tree
was changed by this run (its reshape applied, even if something failed after it; a node the roll
never recorded but that has a snapshot of this run), and nodes whose tree could not be read from
Placement are listed with the reason (``unread``).

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import time

from .. import journal as _journal
from .. import request as _request
from .. import shapes
from ..node import reshaper
from .checks import check_record, record_key
from .context import (
    inventory_arg,
    needs_rollback_hint,
    next_steps,
    no_rollback_reason,
    rehearsal_copy,
    rehearsal_no_rollback,
    rollback_command,
)
from .labels import STATUSES, format_duration, shape_text, short_uuid, status_label
from .trees import consumer_moves, moved_counts, normalize_tree, trees_differ


# ---------------------------------------------------------------------------
# one node's entry

def _node_entry(record, names, mode='apply'):
    check_record(record)
    record = dict(record or {})
    node = str(record.get('node') or record.get('provider') or '?')
    status = record.get('status') or 'unreached'
    if status not in STATUSES:
        status = 'failed' if record.get('failed') else status
    written = record.get('written') or {}
    if (status == ('planned' if mode == 'plan' else 'reshaped') and written.get('reshaper') is False
            and (written.get('traits') or written.get('children'))):
        status = 'updated'   # only traits or empty children were (would be) written: no POST /reshaper
    if mode == 'plan':
        touched = False      # a plan run changes nothing
    elif record.get('touched') is not None:
        touched = bool(record['touched'])
    else:
        touched = status in ('reshaped', 'rolled_back')
    after_known = bool(record.get('after')) or not touched
    after = normalize_tree(record.get('after') or record.get('before'))
    before = normalize_tree(record.get('before')) if record.get('before') else after
    moves = consumer_moves(before, after)
    journal = record.get('journal') if isinstance(record.get('journal'), dict) else None
    if journal is not None and mode == 'plan' and journal.get('mode') != _journal.MODE_WOULD:
        journal = None       # a plan run writes nothing: only a plan's journal is told in it
    moved = record.get('moved') if isinstance(record.get('moved'), dict) else None
    counted = moved_counts(moves)
    if journal is not None:
        # every figure of the node from what its pass wrote (or would write, or restored)
        figures = _journal.figures(journal)
        moved = {'consumers': figures['consumers_moved'], 'allocations': figures['allocations_moved']}
    elif moved is None:
        moved = counted
    else:
        moved = {'consumers': int(moved.get('consumers', counted['consumers']) or 0),
                 'allocations': int(moved.get('allocations', counted['allocations']) or 0)}
    duration = record.get('duration')
    if duration is None and record.get('started') is not None and record.get('finished') is not None:
        duration = float(record['finished']) - float(record['started'])
    created = sorted(set(after['providers']) - set(before['providers']),
                     key=lambda u: after['providers'][u]['name'])
    if journal is not None:
        made = set((journal.get('providers') or {}).get('created') or ())
        created = sorted((u for u, p in after['providers'].items() if p['name'] in made),
                         key=lambda u: after['providers'][u]['name'])
    removed = sorted(set(before['providers']) - set(after['providers']),
                     key=lambda u: before['providers'][u]['name'])
    for tree in (before, after):
        for uuid, prov in tree['providers'].items():
            names.setdefault(uuid, prov['name'])
    for uuid, name in (record.get('names') or {}).items():
        names.setdefault(uuid, name)
    verification = [dict(check=v.get('check', '?'), passed=bool(v.get('passed')), detail=v.get('detail', ''))
                    for v in (record.get('verification') or []) if isinstance(v, dict)]
    return {
        'node': node,
        'provider': str(record.get('provider') or node),
        'status': status,
        'reason': str(record.get('reason') or ''),
        'started': record.get('started'),
        'finished': record.get('finished'),
        'duration': duration,
        'before': before,
        'after': after,
        'after_known': after_known,
        'changed_tree': bool(moves or created or removed or trees_differ(before, after)),
        'touched': touched,
        'unread': str(record.get('unread') or ''),
        'derived': bool(record.get('derived')),
        'moves': moves,
        'moved': moved,
        'created': created,
        'removed': removed,
        'verification': verification,
        'snapshot': str(record.get('snapshot') or ''),
        'retries': int(record.get('retries') or 0),
        'warnings': [str(w) for w in (record.get('warnings') or [])],
        'consumer_names': dict(record.get('consumer_names') or {}),
        'nova_compute': nova_compute_versions(record),
        'written': {'reshaper': written.get('reshaper'), 'traits': list(written.get('traits') or []),
                    'children': list(written.get('children') or [])},
        'written_text': written_text(written),
        'journal_mode': (journal or {}).get('mode') or '',
        'left': (sorted(str(n) for n in ((journal.get('providers') or {}).get('left') or ()))
                 if journal is not None and journal.get('mode') == _journal.MODE_RESTORED else []),
        'journal_lines': _journal.journal_lines(journal) if journal is not None else [],
        'figures': _figures_of(journal, moved, created),
    }


_UUID = re.compile(r'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')
#: a pass's remark on a consumer no guest domain is (node/inflight.py ``_no_domain`` / ``_orphan``)
_SUSPECTED = re.compile(r'^consumer (%s) holds (.+?) on this node(?: but no guest domain on the host is this '
                        r'consumer|, and nova has no instance and no migration in flight)' % _UUID.pattern)


def _reconcile_consumer_warnings(nodes):
    """A node's warning that calls a consumer a possible orphan (with ``--delete``) while the report
    defers a node (this one or another) for that same consumer as a move in flight: the warning says
    so instead, never offering a delete for it.  (The source of an evacuation reads the instance only
    partially, so it cannot see the destination's tree that defers the destination.)"""
    deferred = {}
    for entry in nodes:
        if entry['status'] == 'deferred':
            for uuid in _UUID.findall(entry['reason'] or ''):
                deferred.setdefault(uuid.lower(), entry['node'])
    if not deferred:
        return
    for entry in nodes:
        warnings = []
        for text in entry['warnings']:
            found = _SUSPECTED.match(text)
            other = deferred.get(found.group(1).lower()) if found else None
            if other is not None:
                where = 'this node' if other == entry['node'] else other
                text = ('consumer %s holds %s on this node; %s is deferred for the same consumer, a move in flight '
                        '(its reason is in its section of the report): these allocations are that move\'s, so none '
                        'is to be deleted; this run changed none of them' % (found.group(1), found.group(2), where))
            warnings.append(text)
        entry['warnings'] = warnings


def _figures_of(journal, moved, created):
    """The node's figures (journal.FIGURES): its journal's, or for a record without one (written before
    journals, or a failure's) what its trees and its ``moved`` say of moves and created children."""
    if journal is not None:
        return _journal.figures(journal)
    figures = dict((key, 0) for key in _journal.FIGURES)
    figures.update(consumers_moved=moved['consumers'], allocations_moved=moved['allocations'],
                   providers_created=len(created))
    return figures


def words_of(nodes, mode):
    """The journal mode whose words the report's totals are said in: ``would`` for a plan, ``restored``
    when every node with a journal was rolled back, else ``did``."""
    if mode == 'plan':
        return _journal.MODE_WOULD
    modes = set(e.get('journal_mode') for e in nodes if e.get('journal_mode'))
    return modes.pop() if len(modes) == 1 and _journal.MODE_RESTORED in modes else _journal.MODE_DID


def _fallback_entry(record, node, names, mode, exc):
    """The entry of a record that cannot be drawn: its outcome without trees, and why."""
    record = record if isinstance(record, dict) else {}
    status = record.get('status')
    if not isinstance(status, str) or status not in STATUSES:
        status = 'failed'
    reason = record.get('reason')
    fallback = {
        'node': node,
        'provider': record.get('provider') if isinstance(record.get('provider'), str) else node,
        'status': status,
        'reason': reason if isinstance(reason, str) else '',
        'touched': record.get('touched') if isinstance(record.get('touched'), bool) else None,
        'snapshot': record.get('snapshot') if isinstance(record.get('snapshot'), str) else '',
        'unread': 'its node record is badly shaped (%s); trees and counts are not shown' % shape_text(exc),
    }
    return _node_entry(fallback, names, mode)


def _outcome(entry, mode, inventory):
    """What happened to the node, in words (a failed node says whether its tree was changed)."""
    status = entry['status']
    if mode == 'plan':
        return status_label(status, mode)
    if status == 'failed':
        if entry['touched'] and entry['snapshot']:
            return 'failed after its reshape was applied (rollback: %s)' % rollback_command([entry['node']], inventory)
        if entry['touched']:
            return 'failed after its reshape was applied (no snapshot named: nothing to roll it back to)'
        return 'failed, left untouched'
    if status == 'updated':
        return 'updated without a reshape: only what the layout missed was written (%s); nothing moved, no POST /reshaper' % (
            entry['written_text'] or 'nothing recorded')
    if entry['derived']:
        return '%s (derived from its snapshot and Placement: the roll wrote no record of it)' % status_label(status)
    return status_label(status, mode)


# ---------------------------------------------------------------------------
# the report

class ReportRequest(_request.Request):
    """What :func:`build_report` is asked besides the records (each field is described there)."""

    FIELDS = (('hosts', None), ('title', 'Rolling reshape report'), ('mode', 'apply'), ('started', None),
              ('finished', None), ('run_id', None), ('stopped', None), ('context', None))


def build_report(records, request=None, **fields):
    """Assemble the report data (a JSON-serialisable dict).

    ``records``: node records (:mod:`.checks`), any order, or a dict
    ``{node: record}``.  ``request``: a :class:`ReportRequest`, or its fields:
    ``hosts``: every target node in roll order; a host
    without a record is ``unreached``.  ``mode``: ``apply`` or ``plan`` (check
    mode; the nodes that would stop a real roll come first).  ``stopped``:
    ``{"node", "reason"}`` when the roll stopped early (by default the first
    failed node of an apply run).  ``context``: what the report ran against
    (:func:`.context.run_context`).  A record that is not a dict is left out, one that
    cannot be drawn is shown without trees; ``problems`` in the result names them.
    """
    req = ReportRequest.of(request, **fields)
    mode = 'plan' if req.mode in ('plan', 'check') else req.mode
    problems = []
    by_node = _records_by_node(records, problems)
    names = {}
    nodes = _node_entries(by_node, req.hosts, names, mode, problems)
    context = _report_context(req.context, by_node)
    _finish_entries(nodes, names, mode, context)
    started, finished, stopped = req.started, req.finished, req.stopped
    starts = [e['started'] for e in nodes if e['started'] is not None]
    ends = [e['finished'] for e in nodes if e['finished'] is not None]
    if started is None and starts:
        started = min(starts)
    if finished is None and ends:
        finished = max(ends)
    failed = [e for e in nodes if e['status'] == 'failed']
    if stopped is None and failed and mode != 'plan':
        stopped = {'node': failed[0]['node'], 'reason': failed[0]['reason']}
    return {
        'title': req.title,
        'mode': mode,
        'run_id': req.run_id or '',
        'context': context,
        'started': started,
        'finished': finished,
        'generated': time.time(),
        'stopped': stopped,
        'totals': _totals(nodes, mode, started, finished),
        'nodes': nodes,
        'names': names,
        'deferred': [{'node': e['node'], 'reason': e['reason']} for e in nodes if e['status'] == 'deferred'],
        'unreached': [e['node'] for e in nodes if e['status'] == 'unreached'],
        'failed': [{'node': e['node'], 'reason': e['reason'], 'touched': e['touched']} for e in failed],
        'would_stop': ([{'node': e['node'], 'reason': e['reason']} for e in failed] if mode == 'plan' else []),
        'touched': [e['node'] for e in nodes if e['touched']],
        'unread': [{'node': e['node'], 'reason': e['unread']} for e in nodes if e['unread']],
        'next_steps': next_steps(nodes, mode, context),
        'problems': problems,
    }


def _records_by_node(records, problems):
    """``{node: record}`` of the records (a list, or a dict by node); what is left out said in ``problems``."""
    if isinstance(records, dict):
        records = [dict(r, node=r.get('node') or n) if isinstance(r, dict) else r for n, r in records.items()]
    by_node = {}
    for rec in records or []:
        if not rec:
            continue
        if not isinstance(rec, dict):
            problems.append('a node record is not a mapping (%s); it was left out' % shapes.type_name(rec))
            continue
        key = record_key(rec)
        if key is None:
            problems.append('a node record names no node; it was left out')
            continue
        by_node[key] = rec
    return by_node


def _node_entries(by_node, hosts, names, mode, problems):
    """The report's entry of every host in roll order, then of every other node recorded (in
    plan mode the nodes that would stop a real roll first); a host without a record is unreached."""
    order = [str(h) for h in hosts or []]
    for node in sorted(by_node):
        if node not in order:
            order.append(node)
    nodes = []
    for node in order:
        rec = by_node.get(node) or {'node': node, 'status': 'unreached'}
        try:
            entry = _node_entry(rec, names, mode)
        except Exception as exc:  # pylint: disable=broad-except
            problems.append('the record of %s is badly shaped (%s); shown without trees'
                            % (node, shape_text(exc)))
            entry = _fallback_entry(rec, node, names, mode, exc)
        nodes.append(entry)
    if mode == 'plan':
        # the nodes that would stop a real roll first, then the rest in roll order
        nodes = [e for e in nodes if e['status'] == 'failed'] + [e for e in nodes if e['status'] != 'failed']
    return nodes


def _report_context(given, by_node):
    """What the report ran against; without a microversion of its own, the ones the node passes negotiated."""
    context = dict(given or {})
    if context.get('backend') and not context.get('placement_microversion'):
        # the report did not read Placement itself: the microversion the run's node passes negotiated
        seen = sorted(set(str(r['placement_microversion']) for r in by_node.values()
                          if isinstance(r, dict) and r.get('placement_microversion')))
        if seen:
            context['placement_microversion'] = ', '.join(seen)
    return context


def _finish_entries(nodes, names, mode, context):
    """Each entry's outcome and rollback command (none for a rehearsal's copy), and the names of
    the providers its moves name."""
    inventory = inventory_arg(context)
    copy = rehearsal_copy(context)
    _reconcile_consumer_warnings(nodes)
    for entry in nodes:
        entry['outcome'] = _outcome(entry, mode, inventory)
        entry['rollback'] = (rollback_command([entry['node']], inventory)
                             if needs_rollback_hint(entry, mode) else '')
        entry['no_rollback'] = no_rollback_reason(entry, mode)
        if copy and mode != 'plan' and entry['touched']:
            # a rehearsal changed its copy only: no rollback of production to give
            entry['rollback'] = ''
            entry['no_rollback'] = rehearsal_no_rollback(copy)
            if entry['status'] == 'failed':
                entry['outcome'] = 'failed after its reshape was applied to the copy'
        for move in entry['moves']:
            for side in ('from', 'to'):
                for pair in move[side]:
                    names.setdefault(pair[0], short_uuid(pair[0]))


def _totals(nodes, mode, started, finished):
    """The report's totals: nodes per status, what was touched and moved, retries, duration."""
    counts = dict((s, 0) for s in STATUSES)
    for entry in nodes:
        counts[entry['status']] = counts.get(entry['status'], 0) + 1
    figures = dict((key, 0) for key in _journal.FIGURES)
    for entry in nodes:
        for key, value in entry['figures'].items():
            figures[key] = figures.get(key, 0) + value
    return {
        'nodes': len(nodes),
        'statuses': counts,
        'touched': sum(1 for e in nodes if e['touched']),
        'consumers_moved': figures['consumers_moved'],
        'allocations_moved': figures['allocations_moved'],
        'providers_created': figures['providers_created'],
        'figures': figures,
        'words': words_of(nodes, mode),
        'retries': sum(e['retries'] for e in nodes),
        'duration': (float(finished) - float(started)) if started is not None and finished is not None else None,
    }


def summary(report):
    """The machine-readable summary (summary.json): totals and per-node outcome, no trees."""
    return {
        'title': report['title'],
        'mode': report['mode'],
        'run_id': report['run_id'],
        'context': report['context'],
        'started': report['started'],
        'finished': report['finished'],
        'stopped': report['stopped'],
        'totals': report['totals'],
        'deferred': report['deferred'],
        'failed': report['failed'],
        'would_stop': report['would_stop'],
        'unreached': report['unreached'],
        'touched': report['touched'],
        'unread': report['unread'],
        'next_steps': report['next_steps'],
        'nodes': [dict(node=e['node'], provider=e['provider'], status=e['status'],
                       label=status_label(e['status'], report['mode']), outcome=e['outcome'],
                       touched=e['touched'], derived=e['derived'], unread=e['unread'],
                       reason=e['reason'], duration=e['duration'], moved=e['moved'], snapshot=e['snapshot'],
                       rollback=e['rollback'], no_rollback=e['no_rollback'], written=e['written'],
                       warnings=e['warnings'], retries=e['retries'], nova_compute=e['nova_compute'],
                       figures=e['figures'], journal_mode=e['journal_mode'], journal=e['journal_lines'],
                       created=[e['after']['providers'][u]['name'] for u in e['created']],
                       verification_failed=[v['check'] for v in e['verification'] if not v['passed']])
                  for e in report['nodes']],
    }


def summary_line(report):
    """One line an operator reads at the end of the run."""
    totals = report['totals']
    counts = totals['statuses']
    plan = report['mode'] == 'plan'
    parts = []
    if plan:
        parts.append('%d would reshape' % counts.get('planned', 0))
        if counts.get('updated'):
            parts.append('%d would update without a reshape (traits or children only)' % counts['updated'])
        parts.append('%d already done' % counts.get('noop', 0))
        parts.append('%d deferred' % counts.get('deferred', 0))
        parts.append('%d would stop the roll' % counts.get('failed', 0))
    else:
        parts.append('%d reshaped' % counts.get('reshaped', 0))
        if counts.get('updated'):
            parts.append('%d updated without a reshape (traits or children only)' % counts['updated'])
        parts.append('%d skipped' % counts.get('noop', 0))
        parts.append('%d deferred' % counts.get('deferred', 0))
        failed_touched = sum(1 for e in report['nodes'] if e['status'] == 'failed' and e['touched'])
        parts.append('%d failed%s' % (counts.get('failed', 0), (' (%d after its reshape was applied)' % failed_touched)
                                      if failed_touched else ''))
    for status in ('rolled_back', 'verified', 'unreached'):
        if counts.get(status):
            parts.append('%d %s' % (counts[status], status_label(status, report['mode'])))
    words = totals.get('words') or (_journal.MODE_WOULD if plan else _journal.MODE_DID)
    text = '%d node%s%s: %s; %d allocation%s of %d consumer%s %s' % (
        totals['nodes'], '' if totals['nodes'] == 1 else 's', ' (plan)' if plan else '', ', '.join(parts),
        totals['allocations_moved'], '' if totals['allocations_moved'] == 1 else 's',
        totals['consumers_moved'], '' if totals['consumers_moved'] == 1 else 's',
        {_journal.MODE_WOULD: 'to move', _journal.MODE_RESTORED: 'moved back'}.get(words, 'moved'))
    others = _journal.figures_text(dict((k, v) for k, v in (totals.get('figures') or {}).items()
                                        if k not in ('consumers_moved', 'allocations_moved')), words, keep_zero=())
    if others:
        text += '; ' + others
    if report['unread']:
        text += '; %d node tree%s not read from Placement' % (len(report['unread']),
                                                              's' if len(report['unread']) > 1 else '')
    if totals['duration'] is not None:
        text += '; %s' % format_duration(totals['duration'])
    return text


# ---------------------------------------------------------------------------
# what a record says

def written_of(result):
    """What a reshape result says it wrote: ``{"reshaper", "traits", "children"}`` (a node record's
    ``written``, :mod:`.checks`), None for a result that does not say (older, or not a reshape's)."""
    if not isinstance(result, dict) or not isinstance(result.get('reshaper_applied'), bool):
        return None
    traits = [dict(provider=str(w.get('provider') or w.get('uuid') or '?'), uuid=str(w.get('uuid') or ''),
                   added=[str(t) for t in w.get('added') or []], removed=[str(t) for t in w.get('removed') or []])
              for w in result.get('traits_written') or [] if isinstance(w, dict)]
    return {'reshaper': result['reshaper_applied'], 'traits': traits,
            'children': [str(c) for c in result.get('children_created') or []]}


def written_text(written):
    """``traits added: OWNER_NOVA on cn1_pci_0000_81_00_0`` of a record's ``written`` ('' when nothing)."""
    return reshaper.written_text((written or {}).get('children'), (written or {}).get('traits'))


def nova_compute_versions(record):
    """``{'before', 'after'}``: nova-compute's version on the node before and after (null when not read),
    ``{}`` when the roll did not read it."""
    versions = (record or {}).get('nova_compute') if isinstance(record, dict) else None
    if not isinstance(versions, dict) or not (versions.get('before') or versions.get('after')):
        return {}
    return {'before': versions.get('before') or None, 'after': versions.get('after') or None}


def nova_compute_text(versions):
    """``nova-compute 33.0.0 -> 34.0.0`` (``?`` for a version not read), '' without versions."""
    if not versions:
        return ''
    return 'nova-compute %s -> %s' % (versions.get('before') or '?', versions.get('after') or '?')
