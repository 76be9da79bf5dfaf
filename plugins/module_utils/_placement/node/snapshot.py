# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Snapshots of a node's provider tree and allocations, taken before a reshape.

A snapshot is one JSON document (mode 0600, written to a temporary file in the
same directory, fsync'ed, then renamed over the target so a reader never sees a
half-written file) named ``<root name>.<UTC timestamp>.json``; the same content
is written to ``<root name>.latest.json``, the stable name a rollback picks up.
``<root name>`` is :func:`.names.file_stem` of the name (``cmp/01`` -> ``cmp%2F01``: no two
names share a file); a snapshot written under the old naming (``cmp_01`` for both
``cmp/01`` and ``cmp_01``) is still found when its own root name says it is the one.

Content::

    {"format": 1, "kind": "placement_upgrade.snapshot", "created_at": "...Z",
     "root": {"uuid", "name"}, "state": <backend.provider_tree_state>,
     "foreign": {rp: {"name", "traits", "root_provider_uuid"}},
     "layout_children": [child names], "created_children": [child names],
     "plan": <the plan summary>, "run_id": "<the roll's run id, '' when none>"}

``run_id`` was added later without a format change: a snapshot without it reads
as run ``''`` (:func:`snapshot_run_id`).

``outcome`` (added later without a format change) says how the pass that wrote the snapshot
ended: ``{"status": "pending"}`` when written, just before its ``POST /reshaper``;
``{"status": "verified", "at"}`` once the node was verified after it; ``{"status": "failed",
"at", "run_id", "failures": [text]}`` when the verification after its applied ``POST /reshaper``
failed (Placement answered 204 and holds something else); ``{"status": "rolled_back", "at"}``
once a rollback restored it and verified the node (the fleet report then does not call the node
reshaped).  While the newest snapshot of a node is
``pending`` or ``failed`` (:func:`unsettled`), every pass checks the node against it first
(verify.damage_checks); :func:`set_outcome` rewrites it (digest recomputed, ``.latest.json`` too
when it is the same snapshot).  A snapshot without ``outcome`` (older) is taken as verified.

``digest`` (``"sha256:<hex>"``, added later without a format change either) is the sha256
of the document's canonical JSON (:func:`canonical_text`: every key but ``digest``,
``sort_keys``, no spaces).  :func:`load_snapshot` refuses a document whose content does
not match it (edited or damaged after it was written); a snapshot without one (written
before digests) is read, and :func:`has_digest` tells the reader it was not verified.

Independent of the digest, :mod:`.rollback` checks, before a rollback writes anything, that
the document agrees with the plan recorded in it and with the node (``rollback_problems``,
``inventory_drift``: what refuses a rollback lives with the rollback).  :func:`run_snapshots` finds the
snapshots one run wrote of a node, which is how the fleet report tells a node
this run reshaped even when the roll stopped before recording it.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import hashlib
import json
import os
import re

from .. import shapes as _shapes
from .. import names as _names
from ..files import atomic_write, make_dirs, remove_leftovers
from ..errors import SNAPSHOT, BadInput, PlacementError
from ..request import Request

FORMAT = 1
KIND = 'placement_upgrade.snapshot'  # the document's kind (not an error code, though the same text)
DIGEST_KEY = 'digest'
_DIGEST_RE = re.compile(r'^sha256:[0-9a-f]{64}$')
_STAMP = r'\d{8}T\d{6}\.\d{6}Z'


class SnapshotError(PlacementError):
    """A snapshot cannot be written, found or read."""

    status = 0
    default_code = SNAPSHOT
    default_title = 'Snapshot Error'


def safe_name(root_name):
    """The file-name form of a provider name: :func:`.names.file_stem` (injective, readable)."""
    return _names.file_stem(root_name)


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def utc_stamp(now=None):
    now = now or _utcnow()
    return now.strftime('%Y%m%dT%H%M%S.%fZ')


def latest_path(snapshot_dir, root_name):
    return os.path.join(snapshot_dir, '%s.latest.json' % safe_name(root_name))


#: the stamp of a timestamped snapshot's name (:func:`utc_stamp`)
STAMP_PATTERN = r'[0-9]{8}T[0-9]{6}\.[0-9]{6}Z'


def remove_stamped_leftovers(snapshot_dir, root_name):
    """Remove the temporary files killed writes of ``root_name``'s timestamped snapshots left
    (``.<root>.<stamp>.json.<random>.tmp``): each name is written once, so the writer's own cleanup
    of its path never meets them (``<root>.latest.json``'s are removed by its writer).  Only files of
    exactly that pattern, older than this process (files.remove_leftovers)."""
    return remove_leftovers(snapshot_dir, None, '.tmp',
                            name_regex=r'%s\.%s\.json' % (re.escape(safe_name(root_name)), STAMP_PATTERN))


OUTCOME_PENDING = 'pending'
OUTCOME_VERIFIED = 'verified'
OUTCOME_FAILED = 'failed'
OUTCOME_ROLLED_BACK = 'rolled_back'


class SnapshotContent(Request):
    """What a snapshot holds besides the node's tree (``state``): the providers outside it that
    its consumers use (``foreign``), the layout's and the created children's names, the plan's
    summary, the roll's ``run_id`` and how the pass ended (``outcome``; None: not recorded)."""

    FIELDS = (('foreign', None), ('layout_children', None), ('created_children', None), ('plan', None),
              ('run_id', ''), ('outcome', None))


def write_snapshot(snapshot_dir, root, state, content=None, path=None, now=None, **fields):
    """Write a snapshot and ``<root>.latest.json``; return the timestamped path.

    ``content``: a :class:`SnapshotContent`, or its fields as keywords.
    ``path`` rewrites an earlier snapshot of the same run (a conflict retry
    re-reads the tree, and the snapshot must describe what the reshape replaced).
    ``run_id`` names the roll that wrote it (stored as the document's ``run_id``).
    """
    content = SnapshotContent.of(content, **fields)
    if not snapshot_dir:
        raise SnapshotError('snapshot_dir is required to reshape: a reshape is only applied after '
                            'the node\'s tree and allocations are saved for rollback')
    try:
        make_dirs(snapshot_dir)
    except OSError as exc:
        raise SnapshotError('cannot create snapshot_dir %s: %s' % (snapshot_dir, exc))
    remove_stamped_leftovers(snapshot_dir, root['name'])
    now = now or _utcnow()
    created_at = now.strftime('%Y-%m-%dT%H:%M:%S.%fZ')
    doc = {
        'format': FORMAT,
        'kind': KIND,
        'created_at': created_at,
        'root': {'uuid': root['uuid'], 'name': root['name']},
        'state': state,
        'foreign': content.foreign or {},
        'layout_children': sorted(content.layout_children or []),
        'created_children': sorted(content.created_children or []),
        'plan': content.plan,
        'run_id': str(content.run_id or ''),
    }
    if content.outcome is not None:
        doc['outcome'] = content.outcome
    # the digest is of the content as it is read back (tuples as lists, keys as strings)
    doc = json.loads(json.dumps(doc))
    doc[DIGEST_KEY] = content_digest(doc)
    text = json.dumps(doc, indent=1, sort_keys=True)
    if path is None:
        path = os.path.join(snapshot_dir, '%s.%s.json' % (safe_name(root['name']), utc_stamp(now)))
    try:
        atomic_write(path, text)
        atomic_write(latest_path(snapshot_dir, root['name']), text)
    except (OSError, IOError) as exc:
        raise SnapshotError('cannot write snapshot %s: %s' % (path, exc))
    return path


def outcome_status(doc):
    """How the pass that wrote ``doc`` ended (``outcome.status``); ``verified`` for a snapshot without one."""
    outcome = (doc or {}).get('outcome')
    status = outcome.get('status') if isinstance(outcome, dict) else None
    return status if status in (OUTCOME_PENDING, OUTCOME_FAILED, OUTCOME_ROLLED_BACK) else OUTCOME_VERIFIED


def unsettled(doc):
    """Whether the pass that wrote ``doc`` never said its node was verified after its POST /reshaper
    (killed after it, or verification failed): every later pass checks the node against it."""
    return outcome_status(doc) in (OUTCOME_PENDING, OUTCOME_FAILED)


def set_outcome(path, outcome, snapshot_dir=None):
    """Rewrite the snapshot at ``path`` with ``outcome`` (its digest recomputed), and its twin in
    ``snapshot_dir`` (default: ``path``'s folder) when that holds the same snapshot: the
    timestamped file for ``<root>.latest.json``, ``<root>.latest.json`` for the timestamped file.
    Returns the new document."""
    doc = load_snapshot(path)
    old_digest = doc.get(DIGEST_KEY)
    folder = snapshot_dir or os.path.dirname(path) or '.'
    twins = [latest_path(folder, doc['root']['name'])]
    created = doc.get('created_at')
    if isinstance(created, type(u'')):
        try:
            when = datetime.datetime.strptime(created, '%Y-%m-%dT%H:%M:%S.%fZ')
            twins.append(os.path.join(folder, '%s.%s.json' % (safe_name(doc['root']['name']), utc_stamp(when))))
        except ValueError:
            pass
    targets = [path]
    for twin in twins:
        if os.path.abspath(twin) == os.path.abspath(path) or not os.path.exists(twin) or old_digest is None:
            continue
        try:
            if load_snapshot(twin).get(DIGEST_KEY) == old_digest:
                targets.append(twin)
        except SnapshotError:
            continue
    doc = dict((k, v) for k, v in doc.items() if k != DIGEST_KEY)
    doc['outcome'] = outcome
    doc = json.loads(json.dumps(doc))
    doc[DIGEST_KEY] = content_digest(doc)
    text = json.dumps(doc, indent=1, sort_keys=True)
    try:
        for target in targets:
            atomic_write(target, text)
    except (OSError, IOError) as exc:
        raise SnapshotError('cannot write snapshot %s: %s' % (path, exc))
    return doc


def load_snapshot(path):
    """Read and check one snapshot file."""
    try:
        with open(path) as handle:
            doc = json.load(handle)
    except (OSError, IOError) as exc:
        raise SnapshotError('cannot read snapshot %s: %s' % (path, exc))
    except ValueError as exc:
        raise SnapshotError('snapshot %s is not valid JSON: %s' % (path, exc))
    if not isinstance(doc, dict) or doc.get('kind') != KIND:
        raise SnapshotError('%s is not a placement.upgrade snapshot' % path)
    if doc.get('format') != FORMAT:
        raise SnapshotError('snapshot %s has format %r; this version reads format %d'
                            % (path, doc.get('format'), FORMAT))
    for key in ('root', 'state'):
        if key not in doc:
            raise SnapshotError('snapshot %s has no %r' % (path, key))
    try:
        check_document(doc)
    except BadInput as exc:
        raise SnapshotError('snapshot %s is badly shaped: %s; it was not used (restore the file from a '
                            'backup, or give another snapshot)' % (path, exc.detail))
    _check_digest(doc, path)
    return doc


def canonical_text(doc):
    """The canonical JSON of a snapshot document: every key but ``digest``, sorted, no spaces."""
    body = dict((key, value) for key, value in doc.items() if key != DIGEST_KEY)
    return json.dumps(body, sort_keys=True, separators=(',', ':'))


def content_digest(doc):
    """``"sha256:<hex>"`` of :func:`canonical_text`."""
    return 'sha256:' + hashlib.sha256(canonical_text(doc).encode('utf-8')).hexdigest()


def has_digest(doc):
    """Whether a document read by :func:`load_snapshot` carried a digest (then it matched)."""
    return DIGEST_KEY in (doc or {})


def _check_digest(doc, path):
    if DIGEST_KEY not in doc:
        return  # written before digests: read, and said unverified by the reader (has_digest)
    given = doc[DIGEST_KEY]
    if not isinstance(given, type(u'')) or not _DIGEST_RE.match(given):
        raise SnapshotError('snapshot %s has a %s field that is not a sha256 digest ("sha256:" and 64 hex '
                            'digits): %r. It was not used; restore the file from a backup, or give another '
                            'snapshot' % (path, DIGEST_KEY, given))
    actual = content_digest(doc)
    if actual != given:
        raise SnapshotError('snapshot %s was changed after it was written: the sha256 of its content is %s, '
                            'the digest written with it %s. It was not used; restore the file from a backup, '
                            'or give another snapshot (the timestamped files beside %s.latest.json hold what '
                            'each reshape saved)'
                            % (path, actual[len('sha256:'):], given[len('sha256:'):],
                               safe_name((doc.get('root') or {}).get('name') or '')))


def check_document(doc):
    """The fields of a snapshot document that rollback, verify and the fleet report read."""
    _shapes.expect_fields(doc, 'snapshot', {'root': 'mapping!', 'state': 'mapping!', 'foreign': 'mapping?',
                                            'plan': 'mapping?', 'run_id': 'scalar?', 'created_at': 'text?',
                                            DIGEST_KEY: 'text?', 'outcome': 'mapping?'})
    _shapes.expect_fields(doc['root'], 'root', {'uuid': 'text!', 'name': 'text!'})
    check_state(doc['state'], 'state')
    for key in ('layout_children', 'created_children'):
        _shapes.expect_list_of(doc.get(key), 'text', key, 'a list of provider names')
    for rp, info in (doc.get('foreign') or {}).items():
        _shapes.expect_fields(info, 'foreign.%s' % rp, {'name': 'text?', 'traits': 'list?',
                                                        'root_provider_uuid': 'text?'})


def _check_tree_links(providers, field):
    """One tree: each provider filed under its own uuid, its parent and its root in the tree, a root
    exactly when it has no parent (what a snapshot read from Placement always is)."""
    for uuid, prov in providers.items():
        where = '%s.providers.%s' % (field, uuid)
        if prov.get('uuid') not in (None, uuid):
            raise BadInput('%s.uuid is %s, not the uuid it is filed under' % (where, prov['uuid']),
                           field=where + '.uuid')
        parent = prov.get('parent_provider_uuid')
        root = prov.get('root_provider_uuid')
        if parent is not None and parent not in providers:
            raise BadInput('%s.parent_provider_uuid %s is not a provider of the tree' % (where, parent),
                           field=where + '.parent_provider_uuid')
        if root is not None and root not in providers:
            raise BadInput('%s.root_provider_uuid %s is not a provider of the tree' % (where, root),
                           field=where + '.root_provider_uuid')
        if root is not None and (root == uuid) != (parent is None):
            raise BadInput('%s: parent_provider_uuid %s and root_provider_uuid %s disagree (a provider is its own '
                           'root exactly when it has no parent)' % (where, parent, root),
                           field=where + '.parent_provider_uuid')


_INVENTORY_KINDS = {'total': 'int!', 'reserved': 'int?', 'min_unit': 'int?', 'max_unit': 'int?',
                    'step_size': 'int?', 'allocation_ratio': 'number?'}


def check_state(state, field='state'):
    """A provider tree state (:func:`.backend.provider_tree_state`): refuse wrong types, naming the field.

    ``{"providers": {uuid: {"uuid", "name", "generation", "parent_provider_uuid",
    "root_provider_uuid", "inventories": {RC: record}, "usages": {RC: n}, "traits": [..],
    "aggregates": [..]}}, "allocations": {consumer: {"allocations": {rp: {"resources":
    {RC: n}}}, "consumer_generation", "project_id", "user_id", "consumer_type"}}}``.
    Raises :class:`.errors.BadInput`.
    """
    _shapes.expect_fields(state, field, {'providers': 'mapping!', 'allocations': 'mapping?'},
                          'a provider tree state (a mapping)')
    for uuid, prov in state['providers'].items():
        where = '%s.providers.%s' % (field, uuid)
        _shapes.expect_fields(prov, where, {
            'uuid': 'text?', 'name': 'text!', 'generation': 'int?', 'parent_provider_uuid': 'text?',
            'root_provider_uuid': 'text?', 'inventories': 'mapping?', 'usages': 'mapping?'}, 'a provider record (a mapping)')
        for rc, inv in (prov.get('inventories') or {}).items():
            _shapes.expect_fields(inv, '%s.inventories.%s' % (where, rc), _INVENTORY_KINDS,
                                  'an inventory record (a mapping)')
        for rc, used in (prov.get('usages') or {}).items():
            _shapes.expect(used, 'int', '%s.usages.%s' % (where, rc))
        _shapes.expect_list_of(prov.get('traits'), 'text', where + '.traits', 'a list of trait names')
        _shapes.expect_list_of(prov.get('aggregates'), 'text', where + '.aggregates', 'a list of aggregate uuids')
    _check_tree_links(state['providers'], field)
    for consumer, entry in (state.get('allocations') or {}).items():
        where = '%s.allocations.%s' % (field, consumer)
        _shapes.expect_fields(entry, where, {'allocations': 'mapping?', 'consumer_generation': 'int?',
                                             'project_id': 'text?', 'user_id': 'text?', 'consumer_type': 'text?',
                                             'partial': 'bool?'},
                              "a consumer's allocations (a mapping)")
        for rp, item in (entry.get('allocations') or {}).items():
            item_where = '%s.allocations.%s' % (where, rp)
            _shapes.expect_fields(item, item_where, {'resources': 'mapping?', 'generation': 'int?'})
            for rc, amount in (item.get('resources') or {}).items():
                _shapes.expect(amount, 'int', '%s.resources.%s' % (item_where, rc))


def legacy_latest_path(snapshot_dir, root_name):
    """Where a snapshot written before :func:`.names.file_stem` (``cmp/01`` -> ``cmp_01``) was put."""
    return os.path.join(snapshot_dir, '%s.latest.json' % _names.legacy_file_stem(root_name))


def find_snapshot(snapshot_dir, root_name, path=None, root_uuid=None):
    """The snapshot to use: ``path`` if given, else ``<root>.latest.json`` in ``snapshot_dir``.

    A snapshot written under the old file naming (unsafe characters as ``_``, which
    several names shared) is used only when it is unambiguously this root's: the
    document's own root name (or uuid, when ``root_uuid`` is given) must match.
    """
    if path:
        return path
    if not snapshot_dir:
        raise SnapshotError('give snapshot_dir (or a snapshot file) to roll back')
    candidate = latest_path(snapshot_dir, root_name)
    if os.path.exists(candidate):
        return candidate
    legacy = legacy_latest_path(snapshot_dir, root_name)
    if legacy != candidate and os.path.exists(legacy):
        try:
            root = load_snapshot(legacy).get('root') or {}
        except SnapshotError as exc:
            raise SnapshotError('no snapshot of %s in %s (looked for %s); the file under the old naming %s '
                                'cannot be used: %s' % (root_name, snapshot_dir, os.path.basename(candidate),
                                                        os.path.basename(legacy), exc.detail))
        if root.get('name') == root_name or (root_uuid and root.get('uuid') == root_uuid):
            return legacy
        raise SnapshotError('no snapshot of %s in %s (looked for %s); %s, under the old file naming, is the '
                            'snapshot of another provider (%s, %s), not of %s'
                            % (root_name, snapshot_dir, os.path.basename(candidate), os.path.basename(legacy),
                               root.get('name'), root.get('uuid'), root_name))
    raise SnapshotError('no snapshot of %s in %s (looked for %s)'
                        % (root_name, snapshot_dir, os.path.basename(candidate)))


def snapshot_run_id(doc):
    """The run that wrote a snapshot document (``''`` for one written before run ids existed)."""
    value = (doc or {}).get('run_id')
    return '' if value is None else str(value)


def run_snapshots(snapshot_dir, root_name, run_id):
    """``[(path, doc)]``: the timestamped snapshots of ``root_name`` that run ``run_id`` wrote, oldest first.

    Only ``<safe_name(root)>.<stamp>.json`` files are read (not ``.latest.json``;
    the old naming's ``<legacy stem>.<stamp>.json`` too), and only documents of
    that very root name; an empty ``run_id`` matches
    nothing (a snapshot without a run id belongs to no known run).  Files that
    cannot be read are skipped: this is a look-up, not a restore.
    """
    if not run_id or not snapshot_dir or not os.path.isdir(snapshot_dir):
        return []
    stems = sorted(set([safe_name(root_name), _names.legacy_file_stem(root_name)]))
    pattern = re.compile(r'^(?:%s)\.(%s)\.json$' % ('|'.join(re.escape(stem) for stem in stems), _STAMP))
    found = []
    for name in os.listdir(snapshot_dir):
        match = pattern.match(name)
        if not match:
            continue
        path = os.path.join(snapshot_dir, name)
        try:
            doc = load_snapshot(path)
        except SnapshotError:
            continue
        if snapshot_run_id(doc) != str(run_id) or (doc.get('root') or {}).get('name') != root_name:
            continue
        found.append((match.group(1), path, doc))
    found.sort(key=lambda item: item[0])
    return [(path, doc) for _stamp, path, doc in found]
