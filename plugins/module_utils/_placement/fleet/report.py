# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report of a rolling reshape (Markdown, a self-contained HTML page, JSON), as the
fleet_report module makes it.

:func:`run` is that module's work: the node records given to it are collected with their trees
and stored in the run's folder; then, unless it only stores (``summarize: false``), the report is
built from every record stored there and written; or (its action plugin rendered the files on the
controller) only the given files are written.

The report's modules, bottom up (each imports only from the ones above it)::

    labels.py   statuses, labels, formats, an error in one line, the report's error
    trees.py    a tree reduced to what the report draws, moves, a plan applied, differences
    context.py  what the report ran against, and the operator's commands (next steps)
    checks.py   the node record and its check
    data.py     node records -> the report's data (build_report, summary, summary_line)
    collect.py  one node's record collected with its trees (reads Placement and snapshots)
    records.py  the one record store: records collected, stored, read back (one run a folder)
    render.py   the report drawn from the Jinja2 templates (templates/fleet_report/)
    output.py   the report's files rendered and written, the ``latest`` link
    report.py   this module: the fleet_report module's work

This module's namespace also carries the report's names its callers use (``report.build_report``,
``report.collect_record``, ``report.render_html``, ...: :data:`__all__`), as ``node/layout.py``
carries the layout's.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from . import records
from .collect import collect_record, consumer_names, derive_record
from .context import CALLER_CONTEXT_KEYS, context_rows, run_context
from .data import build_report, summary, summary_line
from .labels import ReportError, _h, short_reason
from .output import latest_link, link_latest, report_files, report_paths, write_files, write_report
from .records import check_run, load_records, record_path, save_record
from ..node import snapshot as _snapshot
from .render import render_html, render_markdown, tree_svg
from .trees import apply_plan, consumer_moves, normalize_tree, provider_tree

__all__ = [
    'run',
    # the names of the modules below that the report's callers use
    'ReportError', '_h', 'short_reason',
    'apply_plan', 'consumer_moves', 'normalize_tree', 'provider_tree',
    'context_rows', 'run_context',
    'build_report', 'summary', 'summary_line',
    'collect_record', 'consumer_names', 'derive_record',
    'check_run', 'load_records', 'record_path', 'save_record',
    'render_html', 'render_markdown', 'tree_svg',
    'latest_link', 'report_files', 'report_paths', 'write_files', 'write_report',
]


def run(params, options, check_mode=False, log=None):
    """The fleet_report module's work: its result (``changed``, ``paths``, ``msg`` and the rest).

    ``params``: the module's options (``dest``, ``records``, ``hosts``, ``mode``, ``summarize``,
    ``files``, ...); ``options``: the backend options Placement is opened with (it is opened
    here, only when there is a record to collect, and the report goes on without it);
    ``log``: told every warning met.  A file that cannot be written is a :class:`ReportError`.
    """
    log = log or (lambda message: None)
    try:
        if params['files'] is not None:
            return _write_given(params, check_mode, log)
        if not params['summarize']:
            return _store(params, options, check_mode, log)
        return _report(params, options, check_mode, log)
    except (OSError, IOError) as exc:
        raise ReportError('Cannot write the report in %s: %s' % (params['dest'], exc))


def _report(params, options, check_mode, log):
    """summarize=true: the given records stored, the report built from every stored record, written."""
    dest = params['dest']
    mode = params['mode']
    existing, problems = load_records(dest)
    bad = []
    for problem in problems:
        log('unreadable node record skipped: %s' % problem)
        bad.append({'node': None, 'file': problem.split(': ', 1)[0], 'problem': problem})
    run_id = check_run(existing, params['run_id'], dest)
    existing = _of_hosts(existing, params['hosts'], dest, bad, log)
    given = records.given_records(params['records'], bad)
    for item in bad:
        if item['file'] is None:
            log('node record skipped: %s' % item['problem'])
    reader = records.Reader(options, params['read_trees'], log)
    collected = []
    try:
        # the hosts the roll recorded nothing of, but that this run reshaped (a snapshot of this run)
        have = set(str(r.get('node') or r.get('provider')) for r in given + existing)
        derive = records.derivable(params['hosts'], have, params['providers'], params['snapshot_dir'], run_id, mode, log)
        if given or derive:
            reader.open()
        collected = records.collect_records(reader, given, mode, params['snapshot_dir'], run_id, bad, log)
        collected += records.collect_derived(reader, derive, params['hosts'], log)
        context, dropped = run_context(params['context'], options, reader.backend)
    finally:
        reader.close()
    if dropped:
        log('context keys not shown (only %s are): %s' % (', '.join(CALLER_CONTEXT_KEYS), ', '.join(dropped)))
    stored = records.save_records(dest, collected, run_id, check_mode)
    by_node = dict((str(r.get('node') or r.get('provider')), r) for r in existing)
    for rec in collected:
        by_node[str(rec['node'])] = rec
    if mode != 'plan':
        for node, rec in list(by_node.items()):
            by_node[node] = _rolled_back_since(rec, log)
    data = build_report(list(by_node.values()), hosts=params['hosts'], title=params['title'],
                        mode=mode, run_id=run_id, context=context)
    for problem in data['problems']:
        log(problem)
    known = set(item['node'] for item in bad if item['node'])
    for entry in data['nodes']:
        if entry['node'] not in known and entry['unread'].startswith('its node record is badly shaped'):
            bad.append({'node': entry['node'], 'file': record_path(dest, entry['node']),
                        'problem': entry['unread']})
    paths = report_paths(dest)
    changed = bool(stored)
    if params['render'] and not check_mode and not params['return_report']:
        # the module renders (run without its action plugin: needs jinja2 and the templates here)
        paths = write_report(dest, data, params['html_template'], params['markdown_template'])
        changed = True
        if params['latest_link']:
            link_latest(dest, log)
    line = summary_line(data)
    if bad:
        line = '%s; %d bad node record(s), the rest is reported (see bad_records)' % (line, len(bad))
    result = dict(changed=changed, paths=paths, summary=summary(data), summary_line=line, bad_records=bad,
                  deferred_nodes=data['deferred'], failed_nodes=data['failed'], unreached_nodes=data['unreached'],
                  would_stop=data['would_stop'], touched_nodes=data['touched'], unread_nodes=data['unread'],
                  next_steps=data['next_steps'], stored=stored, msg=line)
    if params['return_report']:
        result['report'] = data
    return result


def _of_hosts(existing, hosts, dest, bad, log):
    """The stored records of the run's hosts; with ``hosts`` given, a stored record of a node that is not
    one of them (a file left from elsewhere) is left out and named in ``bad``, never reported."""
    if not hosts:
        return existing
    wanted = set(str(h) for h in hosts)
    kept = []
    for rec in existing:
        node = str(rec.get('node') or rec.get('provider'))
        if node in wanted:
            kept.append(rec)
            continue
        problem = ('%s: a stray record file: node %s is not a host of this run (hosts: %d); left out'
                   % (record_path(dest, node), node, len(wanted)))
        log(problem)
        bad.append({'node': node, 'file': record_path(dest, node), 'problem': problem})
    return kept


def _rolled_back_since(rec, log):
    """A record the run stored as reshaped whose snapshot says a rollback restored it since: reported as
    rolled back (a sliced roll's report is written after its slices, maybe after a rollback)."""
    path = rec.get('snapshot') if isinstance(rec, dict) else None
    if rec.get('status') != 'reshaped' or not path or not isinstance(path, str):
        return rec
    try:
        doc = _snapshot.load_snapshot(path)
    except _snapshot.SnapshotError:
        return rec
    if _snapshot.outcome_status(doc) != _snapshot.OUTCOME_ROLLED_BACK:
        return rec
    when = (doc.get('outcome') or {}).get('at') or 'an unknown time'
    reason = ('rolled back after this run (at %s, from snapshot %s); it was %s by the run'
              % (when, path, rec.get('status')))
    log('%s: %s' % (rec.get('node') or rec.get('provider'), reason))
    return dict(rec, status='rolled_back', reason=reason)


def _store(params, options, check_mode, log):
    """summarize=false: collect and store the given records; nothing else is read or built."""
    dest = params['dest']
    stored, collected, bad = records.store_given(options, params['records'], dest, run_id=params['run_id'],
                                                 mode=params['mode'], snapshot_dir=params['snapshot_dir'],
                                                 read_trees=params['read_trees'], check_mode=check_mode, log=log)
    line = 'stored %d node record(s) in %s' % (len(stored), dest) if not check_mode else \
        'check mode: %d node record(s) not stored' % len(collected)
    return dict(changed=bool(stored), stored=stored, bad_records=bad, paths=report_paths(dest), msg=line)


def _write_given(params, check_mode, log):
    """Write the files the action plugin rendered (``files``) and the latest link; nothing else."""
    if check_mode:
        return dict(changed=False, paths=report_paths(params['dest']), msg='check mode: nothing written')
    paths = write_files(params['dest'], params['files'])
    if params['latest_link']:
        link_latest(params['dest'], log)
    return dict(changed=True, paths=paths, msg='report written in %s' % params['dest'])
