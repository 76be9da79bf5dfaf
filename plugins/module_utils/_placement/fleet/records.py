# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node records of a run: collected with their trees, stored, read back (the one record store).

A rolling pass stores each node's record in the run's report folder (``dest/nodes/<node>.json``)
as soon as the node is done; the report is rendered once, from the stored records, at the end of
the roll or where it stops (:mod:`.report`).  Two callers store records: ``fleet_report`` (any
records given to it: :func:`store_given` with ``summarize: false``, :func:`collect_records` and
:func:`save_records` in the full report), and ``reshape`` with its ``record`` option (the record of
the node it just reshaped, without a task of its own and through the backend it has open:
:func:`store`).  Both collect a record with :func:`.collect.collect_record` and keep a record that
cannot be collected with its plain fields, so a record is the same whoever stored it.

A folder holds the records of one run (:func:`check_run`); the files are written atomically,
mode 0600, in folders 0700 (``files.py``).  :class:`Reader` opens Placement once for the records
of a fleet_report task and goes on without it when it cannot be reached or stops answering.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time

from .. import files as _files
from .. import names as _names
from .. import request as _request
from ..backends import factory
from ..errors import BadInput, PlacementError, ServiceUnavailable, type_name
from ..node import snapshot as _snapshot
from .checks import record_key
from .collect import collect_record, derive_record
from .labels import ReportError, error_text, shape_text

#: the mode of every file the report writes (its folders are made 0700: files.DIR_MODE)
FILE_MODE = 0o600

_PLAIN = (str, int, float, bool, type(None))


# ---------------------------------------------------------------------------
# a node's record as the roll keeps it

class NodeDetails(_request.Request):
    """What :func:`node_record` records besides the node and its reshape's result (described there)."""

    FIELDS = (('run_id', ''), ('started', None), ('finished', None), ('instances', None), ('nova_compute', None),
              ('warnings', None))


def node_record(node, provider, result, details=None, **fields):
    """The record the rolling role keeps for a node whose reshape task returned ``result``.

    ``details``: a :class:`NodeDetails`, or its fields:
    ``result``: the reshape's result (``status``, ``deferred_reason``, ``moved``, ``plan``, ...).
    ``started`` / ``finished``: epoch seconds of the node's pass (``finished`` defaults to now).
    ``instances``: the device report's guests (named in the report).
    ``warnings``: the warnings of the node's pass before the reshape (:func:`discovery_warnings`);
    the reshape's own remarks are in ``result``.
    """
    req = NodeDetails.of(details, **fields)
    finished = req.finished
    return {
        'warnings': list(req.warnings or []),
        'node': node,
        'provider': provider,
        'status': result.get('status'),
        'run_id': req.run_id,
        'reason': result.get('deferred_reason') or '',
        'started': req.started,
        'finished': time.time() if finished is None else finished,
        'nova_compute': dict(req.nova_compute or {}),
        'reshape': result,
        'instances': dict(req.instances or {}),
    }


#: how the warnings of the node's discovery are marked in its record
DISCOVERY_WARNING = 'device_info: %s'


def discovery_warnings(devices):
    """The device report's warnings as the node's record carries them (``device_info: ...``)."""
    warnings = (devices or {}).get('warnings') if isinstance(devices, dict) else None
    return [DISCOVERY_WARNING % w for w in warnings or [] if isinstance(w, str)]


def as_given(record, exc):
    """What is kept of a record that could not be collected: its plain fields, and why."""
    kept = dict((k, v) for k, v in record.items() if isinstance(v, _PLAIN) and k not in ('before', 'after'))
    kept['unread'] = 'the record could not be collected (%s)' % shape_text(exc)
    return kept


# ---------------------------------------------------------------------------
# the record files (dest/nodes/<node>.json), one run a folder

def record_path(dest, node):
    """``dest/nodes/<file_stem(node)>.json``: one file per node name, never shared (``cmp/01`` -> ``cmp%2F01``)."""
    return os.path.join(dest, 'nodes', '%s.json' % _names.file_stem(node))


def save_record(dest, record):
    """Store one node record as ``dest/nodes/<node>.json`` (atomic, 0600, folders 0700); return the path."""
    _files.make_dirs(dest)  # (an empty dest fails here, never the current directory's nodes/)
    _files.make_dirs(os.path.join(dest, 'nodes'))
    path = record_path(dest, record.get('node') or record.get('provider') or 'unknown')
    _files.atomic_write(path, json.dumps(record, indent=1, sort_keys=True, default=str) + '\n', mode=FILE_MODE)
    return path


def load_records(dest):
    """Every node record stored under ``dest/nodes`` (unreadable or badly shaped files are skipped and named)."""
    folder = os.path.join(dest, 'nodes')
    records, problems = [], []
    if not os.path.isdir(folder):
        return records, problems
    for name in sorted(os.listdir(folder)):
        if not name.endswith('.json') or name.startswith('.'):
            continue
        path = os.path.join(folder, name)
        try:
            with open(path) as handle:
                record = json.load(handle)
        except (OSError, IOError, ValueError) as exc:
            problems.append('%s: %s' % (path, exc))
            continue
        if not isinstance(record, dict) or record_key(record) is None:
            problems.append('%s: not a node record (a mapping naming its node)' % path)
            continue
        own = record_path(dest, record_key(record))
        if os.path.basename(own) != name:
            # a copy, a renamed or a hand-made file: the roll stores each node only under its own name
            problems.append('%s: a stray record file: it names node %s, whose record the roll stores as %s; '
                            'left out' % (path, record_key(record), own))
            continue
        records.append(record)
    return records, problems


def load_some_records(dest, nodes):
    """The stored records of ``nodes`` under ``dest/nodes``, or else one stored record: enough to
    tell the run the folder holds (every record stored there agrees on it) without reading all."""
    folder = os.path.join(dest, 'nodes')
    if not os.path.isdir(folder):
        return []
    paths = [record_path(dest, node) for node in nodes if node]
    found = [path for path in paths if os.path.exists(path)]
    if not found:
        for name in sorted(os.listdir(folder)):
            if name.endswith('.json') and not name.startswith('.'):
                found = [os.path.join(folder, name)]
                break
    records = []
    for path in found:
        try:
            with open(path) as handle:
                record = json.load(handle)
        except (OSError, IOError, ValueError):
            continue  # the full report names unreadable files
        if isinstance(record, dict) and record_key(record) is not None:
            records.append(record)
    return records


def check_run_id(run_id, field='run_id'):
    """Refuse a run id that is no plain folder name: the run's records go to ``<report dir>/<run id>``,
    and a ``/`` or a ``..`` there wrote them outside the report directory.  An empty one is let through
    (the callers that need one say so)."""
    text = '' if run_id is None else str(run_id)
    if not text:
        return text
    bad = [c for c in text if c in '/\\' or ord(c) < 32 or ord(c) == 127]
    if bad or text in ('.', '..') or text != text.strip():
        raise BadInput('%s %r cannot name the run\'s folder in the report directory: %s. Give a plain name '
                       '(letters, digits, - _ . and no / or \\), as the pre-flight makes one (20261128T004700Z-1a2b3c)'
                       % (field, text, 'it holds %s' % ' '.join(sorted(set(repr(c) for c in bad))) if bad
                          else 'it is %r' % text if text in ('.', '..') else 'it begins or ends with white space'),
                       field=field)
    return text


def record_run_ids(records):
    """{run id: [nodes]} of stored records (``''`` for a record without one)."""
    runs = {}
    for rec in records:
        run = rec.get('run_id')
        runs.setdefault('' if run is None else str(run), []).append(record_key(rec))
    return runs


def check_run(records, run_id, dest=''):
    """The run id the report is of; :class:`ReportError` when ``dest`` holds another run's records.

    With ``run_id`` given every stored record must carry that same id; without
    one, the stored records must agree on theirs (which is then the report's).
    """
    check_run_id(run_id)
    runs = record_run_ids(records)
    if run_id:
        others = dict((k, v) for k, v in runs.items() if k != run_id)
        if others:
            detail = '; '.join('run %s: %s' % (k or '(none)', ', '.join(sorted(v))) for k, v in sorted(others.items()))
            raise ReportError('%s already holds node records of another run (%s), not of run %s: the report '
                              'would mix two runs. Give each run its own directory (a new run id), or move the '
                              'old records away.' % (dest or 'dest', detail, run_id))
        return run_id
    if len(runs) > 1:
        raise ReportError('%s holds node records of several runs (%s): the report would mix them; give the '
                          'run_id to report on, each run in its own directory.'
                          % (dest or 'dest', ', '.join(sorted(k or '(none)' for k in runs))))
    return next(iter(runs)) if runs else ''


# ---------------------------------------------------------------------------
# storing: one record (reshape's record option), the records given to fleet_report

def _collected(collect, record, log, bad=None):
    """``collect(record)`` -> the record with its trees, its warnings told to ``log``; a record that
    cannot be collected (a badly shaped result, ...) is kept with its plain fields (:func:`as_given`),
    ``log`` is told and ``bad`` (when given) lists it: one bad record never sinks the others."""
    node = record.get('node') or record.get('provider')
    try:
        rec, warnings = collect(record)
    except Exception as exc:  # pylint: disable=broad-except
        rec, warnings = as_given(record, exc), []
        if bad is not None:
            bad.append({'node': str(node), 'file': None, 'problem': shape_text(exc)})
        log('%s: the record could not be collected (%s); stored with its plain fields' % (node, shape_text(exc)))
    for warning in warnings:
        log(warning)
    return rec


class StoreRequest(_request.Request):
    """How :func:`store` collects a record: ``mode``, ``snapshot_dir``, ``run_id``, ``read_error``,
    ``log``, ``read`` (described there)."""

    FIELDS = (('mode', 'apply'), ('snapshot_dir', None), ('run_id', ''), ('read_error', None), ('log', None),
              ('read', None))


def store(backend, dest, record, request=None, **fields):
    """Collect ``record`` with its trees (:func:`.collect.collect_record`) and store it in ``dest``
    (``request``: a :class:`StoreRequest`, or its fields).

    The run id is checked against the records already in ``dest`` (:func:`check_run`:
    a folder never mixes two runs).  A record that cannot be collected (Placement stopped
    answering, a badly shaped result) is stored with its plain fields, saying why, and ``log``
    is told: storing never fails on Placement.  ``read``: ``(state, foreign)`` of the node's tree as
    the reshape last read it (``reshape_node``'s ``observed``): the tree is then not read again.
    Returns ``(path, collected record)``.
    """
    req = StoreRequest.of(request, **fields)
    mode, snapshot_dir, read_error, log, read = req.mode, req.snapshot_dir, req.read_error, req.log, req.read
    node = record.get('node') or record.get('provider')
    run_id = check_run(load_some_records(dest, [node]), req.run_id, dest)

    def collect(given):
        try:
            return collect_record(backend, given, mode=mode, read_error=read_error, snapshot_dir=snapshot_dir,
                                  run_id=run_id, read=read)
        except ServiceUnavailable as exc:
            return collect_record(None, given, mode=mode, snapshot_dir=snapshot_dir, run_id=run_id,
                                  read_error='Placement stopped answering: %s' % exc)

    rec = _collected(collect, record, log or (lambda message: None))
    rec['run_id'] = run_id
    return save_record(dest, rec), rec


class Reader(object):
    """Reads the node trees through one backend; when Placement cannot be reached, goes on without it.

    ``options``: the backend options (``embedded_db``, the openstack.cloud ones); ``read_trees``
    False reads nothing.  Placement is opened by :meth:`open` (once), never created.
    """

    def __init__(self, options, read_trees, log):
        self.options = options
        self.read_trees = read_trees
        self.log = log
        self.backend = self.error = None      # the open backend; why Placement is not read
        self.tried = False

    def open(self):
        if self.tried:
            return
        self.tried = True
        if not self.read_trees:
            return
        try:
            self.backend = factory.get_backend(self.options, create=False)
        except PlacementError as exc:
            self._down('cannot use Placement: %s' % error_text(exc))
        except Exception as exc:  # pylint: disable=broad-except
            # openstacksdk / keystoneauth errors the REST backend does not map
            self._down('cannot use Placement (%s: %s)' % (type(exc).__name__, exc))

    def _down(self, why):
        self.error = why
        self.log('not reading provider trees: %s; the report is written from the records alone' % why)
        self.close()

    def collect(self, call, *args, **kwargs):
        """``call(backend, *args, read_error=..., **kwargs)``; a Placement that stops answering is dropped."""
        try:
            return call(self.backend, *args, read_error=self.error, **kwargs)
        except ServiceUnavailable as exc:
            self._down('Placement stopped answering: %s' % error_text(exc))
            return call(None, *args, read_error=self.error, **kwargs)

    def close(self):
        backend, self.backend = self.backend, None
        if backend is not None:
            try:
                backend.close()
            except Exception:  # pylint: disable=broad-except
                pass


def given_records(given, bad):
    """The usable records of ``given`` (fleet_report's records option); the others are listed in ``bad``."""
    records = []
    for index, record in enumerate(given or []):
        if not isinstance(record, dict):
            bad.append({'node': None, 'file': None,
                        'problem': 'records[%d] must be a node record (a mapping), got %s'
                                   % (index, type_name(record))})
            continue
        node = record.get('node') or record.get('provider')
        if not node:
            bad.append({'node': None, 'file': None,
                        'problem': 'records[%d] names no node (neither node nor provider is set)' % index})
            continue
        if not isinstance(node, (str, int, float)) or isinstance(node, bool):
            bad.append({'node': None, 'file': None,
                        'problem': 'records[%d].node must be a string, got %s' % (index, type_name(node))})
            continue
        records.append(record)
    return records


def collect_records(reader, records, mode, snapshot_dir, run_id, bad, log):
    """Each given record with its trees (:func:`.collect.collect_record`, through ``reader``); one bad
    record does not sink the others: it is kept with its plain fields and listed in ``bad``."""
    def collect(record):
        return reader.collect(collect_record, record, mode=mode, snapshot_dir=snapshot_dir, run_id=run_id)

    return [_collected(collect, record, log, bad) for record in records]


def save_records(dest, collected, run_id, check_mode=False):
    """Store the ``collected`` records in ``dest``, each with ``run_id`` (none in check mode); the paths."""
    for rec in collected:
        rec['run_id'] = run_id
    return [] if check_mode else [save_record(dest, rec) for rec in collected]


class StoreGivenRequest(_request.Request):
    """How :func:`store_given` collects and stores: ``run_id``, ``mode``, ``snapshot_dir``,
    ``read_trees`` (False: the trees are not read), ``check_mode`` (nothing stored), ``log``."""

    FIELDS = (('run_id', ''), ('mode', 'apply'), ('snapshot_dir', None), ('read_trees', True), ('check_mode', False),
              ('log', None))


def store_given(options, given, dest, request=None, **fields):
    """fleet_report ``summarize: false``: collect and store the ``given`` records; nothing else is read
    (``request``: a :class:`StoreGivenRequest`, or its fields).

    Only the stored records of the given nodes (or one stored record) are read, for their run id
    (:func:`check_run`).  Returns ``(stored paths, collected records, bad records)``.
    """
    req = StoreGivenRequest.of(request, **fields)
    mode, snapshot_dir = req.mode, req.snapshot_dir
    log = req.log or (lambda message: None)
    bad = []
    records = given_records(given, bad)
    for item in bad:
        log('node record skipped: %s' % item['problem'])
    run_id = check_run(load_some_records(dest, [r.get('node') or r.get('provider') for r in records]), req.run_id, dest)
    reader = Reader(options, req.read_trees, log)
    collected = []
    try:
        if records:
            reader.open()
        collected = collect_records(reader, records, mode, snapshot_dir, run_id, bad, log)
    finally:
        reader.close()
    return save_records(dest, collected, run_id, req.check_mode), collected, bad


# ---------------------------------------------------------------------------
# the nodes the roll recorded nothing of, but that this run reshaped (a snapshot of this run)

def _hosts_without_record(hosts, have):
    seen = set()
    out = []
    for host in hosts:
        if host not in have and host not in seen:
            seen.add(host)
            out.append(host)
    return out


def derivable(hosts, have, providers, snapshot_dir, run_id, mode, log):
    """``{host: (provider, snapshots)}`` of the ``hosts`` without a record (not in ``have``) that have a
    snapshot of this run in ``snapshot_dir`` (``providers``: a host's root provider when not named
    after it).  Not searched in a plan, nor without a run id (a snapshot tells its run by its run id)."""
    derive = {}
    if mode != 'plan' and snapshot_dir and run_id:
        for host in _hosts_without_record(hosts, have):
            provider = str(providers.get(host) or host)
            try:
                found = _snapshot.run_snapshots(snapshot_dir, provider, run_id)
            except OSError as exc:
                log('%s: cannot look for its snapshots in %s: %s' % (host, snapshot_dir, exc))
                continue
            if found:
                derive[host] = (provider, found)
    elif snapshot_dir and not run_id and mode != 'plan':
        log('snapshot_dir is not searched without a run_id: a snapshot tells its run by its run id')
    return derive


def collect_derived(reader, derive, hosts, log):
    """The records derived (:func:`.collect.derive_record`) of the hosts :func:`derivable` found, in roll order."""
    collected = []
    for host, (provider, found) in sorted(derive.items(), key=lambda kv: hosts.index(kv[0])):
        try:
            rec, warnings = reader.collect(derive_record, host, provider, found)
        except Exception as exc:  # pylint: disable=broad-except
            log('%s: a snapshot of this run exists (%s) but no entry could be derived from it (%s: %s)'
                % (host, found[0][0], type(exc).__name__, exc))
            continue
        for warning in warnings:
            log(warning)
        collected.append(rec)
    return collected
