# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Several controllers rolling one fleet at once (AWX job slices): what they agree on through the
run's record folder (``<report dir>/<run id>``, on storage every slice sees).

* a node is taken by at most one slice: before a batch starts, the slice CLAIMS each node of the
  batch by creating ``claims/<node>.json`` with ``O_CREAT | O_EXCL`` (one creator wins, whatever
  the number of slices); a node already claimed, or already recorded (``nodes/<node>.json``, e.g.
  the canary's), is left to whoever has it;
* the fleet's failure budget: the failed node records stored so far under ``nodes/`` (the record
  store of :mod:`.records`, written by every slice) are counted before the claims; when there are
  more than ``max_fail`` the batch claims nothing and the slice stops.

Consistency (docs/awx.md says it to operators): a failed node's record is stored (the role's
rescue) before its slice stops; every other slice reads the count at the start of each of its
batches, so a slice may start at most ONE batch after the failure (the one whose count it read
before the failed record was stored) and none after it.  The overshoot past the budget is
therefore at most one batch per other slice, plus the rest of the failing node's own batch.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import time

from .. import files as _files
from .. import names as _names
from .records import FILE_MODE, load_records, record_path


def claim_path(dest, node):
    """``dest/claims/<file_stem(node)>.json``: the claim of one node, made once."""
    return os.path.join(dest, 'claims', '%s.json' % _names.file_stem(node))


def failed_records(dest, run_id):
    """The nodes recorded as failed under ``dest/nodes`` for ``run_id``, and the unreadable files."""
    records, problems = load_records(dest)
    failed = sorted(str(rec.get('node') or rec.get('provider')) for rec in records
                    if rec.get('status') == 'failed' and str(rec.get('run_id') or '') == run_id)
    return failed, problems


def _read_claim(path):
    try:
        with open(path) as handle:
            claim = json.load(handle)
    except (OSError, IOError, ValueError):
        return {}
    return claim if isinstance(claim, dict) else {}


def claim(dest, node, owner, run_id, now=None):
    """Claim ``node`` for ``owner``: ``(True, claim)`` when this call created the claim, ``(False,
    the existing claim)`` when someone had it (a claim being written may read as ``{}``)."""
    path = claim_path(dest, node)
    doc = {'node': node, 'owner': owner, 'run_id': run_id, 'claimed': time.time() if now is None else now}
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
        return False, _read_claim(path)
    with os.fdopen(fd, 'w') as handle:
        handle.write(json.dumps(doc, sort_keys=True) + '\n')
    return True, doc


def claim_batch(dest, nodes, owner, run_id, max_fail=0, check_mode=False):
    """Before a slice's batch: the failure budget read, then each node of ``nodes`` claimed.

    Returns a dict: ``spent`` (more than ``max_fail`` failed records: nothing is claimed),
    ``failed_nodes``, ``claimed`` (the nodes this call took, in order), ``taken`` (``[{node,
    owner, why}]``: claimed by someone else or already recorded), ``problems`` (unreadable
    record files) and ``msg``.  In check mode nothing is written: ``claimed`` lists the nodes
    that were free.
    """
    if max_fail < 0:
        raise ValueError('max_fail must be 0 or more, not %d' % max_fail)
    failed, problems = failed_records(dest, run_id)
    out = {'failed_nodes': failed, 'max_fail': max_fail, 'claimed': [], 'taken': [], 'problems': problems,
           'spent': len(failed) > max_fail}
    if out['spent']:
        out['msg'] = ('the fleet failure budget is spent: %d node(s) failed in run %s (%s), more than max_fail %d; '
                      'this batch claims nothing: %s' % (len(failed), run_id, ', '.join(failed), max_fail,
                                                         ', '.join(nodes) or 'no node'))
        return out
    if not check_mode:
        _files.make_dirs(dest)
        _files.make_dirs(os.path.join(dest, 'claims'))
    for node in nodes:
        if os.path.exists(record_path(dest, node)):
            out['taken'].append({'node': node, 'owner': '', 'why': 'already recorded in run %s' % run_id})
            continue
        if check_mode:
            existing = _read_claim(claim_path(dest, node)) if os.path.exists(claim_path(dest, node)) else None
            if existing is None:
                out['claimed'].append(node)
            else:
                out['taken'].append({'node': node, 'owner': str(existing.get('owner', '')), 'why': 'claimed'})
            continue
        won, doc = claim(dest, node, owner, run_id)
        if won:
            out['claimed'].append(node)
        else:
            out['taken'].append({'node': node, 'owner': str(doc.get('owner', '')), 'why': 'claimed'})
    out['msg'] = '%d of %d node(s) claimed by %s (%d failed in the fleet so far, max_fail %d)' % (
        len(out['claimed']), len(nodes), owner, len(failed), max_fail)
    return out
