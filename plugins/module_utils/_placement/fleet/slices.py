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

Each claim names its job: the owner given (``AWX job 1234``), and the ansible-playbook process
that claimed (host, boot, pid and its start: :func:`this_job`).  A node claimed without a record is
a node some job took and did not finish: when that job is gone (its process on this host is no more,
a relaunch after a kill) the claim is taken over; when it cannot be told (another host, an AWX job's
container, a claim without a job), the batch claims nothing and the slice fails naming it (never
skipped silently: its node would be left out of the roll while the job ends green).

The run: the pre-flight job publishes its run id in ``<report dir>/sliced-run.json``
(:func:`publish_run`); a slice given another run id is refused before it claims anything (two slices
given different run ids rolled the same nodes each in its own folder, the fleet's failure budget split
in two).  Without a pre-flight, the first slice's run id is published so.

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
import socket
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


#: the file naming the sliced roll's run, in the report directory (beside the run folders)
RUN_FILE = 'sliced-run.json'
#: the programs whose process is "the job" of a claim
_JOB_PROGRAMS = ('ansible-playbook', 'ansible-runner')


def run_file(dest):
    """``<report dir>/sliced-run.json`` of the run folder ``dest`` (``<report dir>/<run id>``)."""
    return os.path.join(os.path.dirname(os.path.abspath(dest)), RUN_FILE)


def _read_text(path):
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8', 'replace')
    except (OSError, IOError):
        return None


def _stat_field(pid, number):
    """Field ``number`` (counted from 1, as proc(5) does) of /proc/<pid>/stat as an int, or None.
    The fields are counted after the command name (field 2, in parentheses, may hold spaces)."""
    stat = _read_text('/proc/%d/stat' % pid)
    if not stat or ')' not in stat:
        return None
    try:
        return int(stat.rsplit(')', 1)[1].split()[number - 3])
    except (IndexError, ValueError):
        return None


def _start_ticks(pid):
    """The start of process ``pid`` (clock ticks after boot, /proc/<pid>/stat field 22), or None."""
    return _stat_field(pid, 22)


def _parent(pid):
    """The parent of process ``pid`` (/proc/<pid>/stat field 4), or None."""
    return _stat_field(pid, 4)


def _argv(pid):
    text = _read_text('/proc/%d/cmdline' % pid)
    return [part for part in (text or '').split('\0') if part]


def _is_job(argv):
    return any(os.path.basename(part) in _JOB_PROGRAMS for part in argv[:3])


def _boot_id():
    return (_read_text('/proc/sys/kernel/random/boot_id') or '').strip() or None


def _started_at(ticks):
    """UTC time (ISO 8601) of a start ``ticks`` after boot."""
    stat = _read_text('/proc/stat') or ''
    btime = None
    for line in stat.splitlines():
        if line.startswith('btime '):
            btime = int(line.split()[1])
    if btime is None or ticks is None:
        return None
    seconds = btime + float(ticks) / os.sysconf('SC_CLK_TCK')
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(seconds))


def this_job(pid=None):
    """The ansible-playbook process this module runs under: ``{host, boot_id, pid, start_ticks,
    started}`` (the outermost of the chain of ancestors running ansible-playbook: its workers are
    forks with the same command line), or ``{host}`` alone when there is none here (the claim then
    names its owner only, and nobody can tell whether it is still running)."""
    job = {'host': socket.gethostname()}
    current = os.getppid() if pid is None else pid
    found = None
    seen = 0
    while current and current > 1 and seen < 64:
        seen += 1
        argv = _argv(current)
        if _is_job(argv):
            found = current
        elif found is not None:
            break
        current = _parent(current)
    if found is not None:
        ticks = _start_ticks(found)
        job.update({'boot_id': _boot_id(), 'pid': found, 'start_ticks': ticks, 'started': _started_at(ticks)})
    return job


def job_text(claim):
    """``AWX job 7 (ansible-playbook pid 4242 on ctl-1, started 2026-11-28T00:47:00Z)`` of a claim."""
    owner = str(claim.get('owner') or 'an unnamed owner')
    job = claim.get('job') if isinstance(claim.get('job'), dict) else {}
    if job.get('pid'):
        owner += ' (ansible-playbook pid %s on %s, started %s)' % (
            job['pid'], job.get('host') or '?', job.get('started') or '?')
    elif job.get('host'):
        owner += ' (on %s)' % job['host']
    return owner


def job_alive(job, here=None):
    """True / False when it can be told whether the job of a claim still runs (its process, on this
    host, in this boot), None when it cannot (another host or boot, or a claim without a process)."""
    here = this_job() if here is None else here
    if not isinstance(job, dict) or not job.get('pid') or job.get('start_ticks') is None:
        return None
    if job.get('host') != here.get('host') or not job.get('boot_id') or job.get('boot_id') != _boot_id():
        return None
    try:
        pid = int(job['pid'])
    except (TypeError, ValueError):
        return None
    return _start_ticks(pid) == job['start_ticks']


def publish_run(dest, run_id, by, now=None, replace=True):
    """Write ``run_id`` as the sliced roll's run in :func:`run_file` (``by``: who published it).  With
    ``replace`` false (a slice, not the pre-flight), only when there is none yet (``O_EXCL``).
    Returns ``(written, the run's document)``."""
    path = run_file(dest)
    doc = {'run_id': run_id, 'published_by': by, 'published': time.time() if now is None else now}
    _files.make_dirs(os.path.dirname(path))
    if replace:
        _files.atomic_write(path, json.dumps(doc, sort_keys=True) + '\n', mode=FILE_MODE)
        return True, doc
    return _create_once(path, doc)


def check_run(dest, run_id, by, check_mode=False):
    """Refuse (``msg``) a slice whose ``run_id`` is not the sliced roll's run published in the report
    directory; None when it is, or when none was published (it is then published as this one's, unless
    ``check_mode``)."""
    path = run_file(dest)
    published = _read_claim(path) if os.path.exists(path) else None
    if published is None and not check_mode:
        _written, published = publish_run(dest, run_id, by, replace=False)
    if not published:
        return None
    theirs = str(published.get('run_id') or '')
    if theirs == run_id:
        return None
    when = published.get('published')
    when = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(when)) if isinstance(when, (int, float)) else '?'
    return ('this slice was given run id %s, but the sliced roll of %s is run %s (%s, published by %s at %s): '
            'a slice must be given the run id the pre-flight job published (preflight_run_id), or two runs '
            'would roll the same nodes, each with its own failure budget. Nothing was claimed. For a new run, '
            'run the pre-flight job (playbooks/sliced_preflight.yml) first: it publishes its run id there'
            % (run_id, os.path.dirname(path), theirs or '(none)', path, published.get('published_by') or '?', when))


def claim(dest, node, owner, run_id, now=None, job=None):
    """Claim ``node`` for ``owner``: ``(True, claim)`` when this call created the claim, ``(False,
    the existing claim)`` when someone had it (a claim being written may read as ``{}``)."""
    path = claim_path(dest, node)
    doc = {'node': node, 'owner': owner, 'run_id': run_id, 'claimed': time.time() if now is None else now,
           'job': this_job() if job is None else job}
    return _create_once(path, doc)


def _create_once(path, doc):
    """Write ``doc`` to ``path`` only if no file is there (``O_EXCL``): ``(True, doc)``, or ``(False, what
    the file holds)`` when one was (a document being written may read as ``{}``)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
        return False, _read_claim(path)
    with os.fdopen(fd, 'w') as handle:
        handle.write(json.dumps(doc, sort_keys=True) + '\n')
    return True, doc


def take_over(dest, node, dead, owner, run_id, job):
    """Replace the claim ``dead`` (a claim whose job is known to be gone) on ``node`` by this job's:
    ``(True, claim)``, or ``(False, the claim found)`` when another relaunch was quicker."""
    path = claim_path(dest, node)
    aside = '%s.taken-over.%d' % (path, os.getpid())
    try:
        os.rename(path, aside)                          # one of the relaunches moves it
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise
        return claim(dest, node, owner, run_id, job=job)
    moved = _read_claim(aside)
    if moved != dead:                                   # a newer claim (another relaunch's): put it back
        try:
            os.link(aside, path)
        except OSError:
            pass
        os.unlink(aside)
        return False, moved
    os.unlink(aside)
    won, doc = claim(dest, node, owner, run_id, job=job)
    if won:
        doc['took_over'] = dict((k, dead.get(k)) for k in ('owner', 'claimed', 'job'))
        _files.atomic_write(path, json.dumps(doc, sort_keys=True) + '\n', mode=FILE_MODE)
    return won, doc


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
    job = this_job()
    failed, problems = failed_records(dest, run_id)
    out = {'failed_nodes': failed, 'max_fail': max_fail, 'claimed': [], 'taken': [], 'problems': problems,
           'spent': len(failed) > max_fail, 'stale': [], 'taken_over': [], 'job': job}
    refused = check_run(dest, run_id, owner, check_mode)
    if refused:
        out['spent'] = False
        out['refused'] = refused
        out['msg'] = refused
        return out
    if out['spent']:
        out['msg'] = ('the fleet failure budget is spent: %d node(s) failed in run %s (%s), more than max_fail %d; '
                      'this batch claims nothing: %s' % (len(failed), run_id, ', '.join(failed), max_fail,
                                                         ', '.join(nodes) or 'no node'))
        return out
    # the claims of the batch's nodes without a record: a job that is gone is taken over; one that
    # cannot be told stops the batch before anything is claimed (the slice fails naming it)
    dead = {}
    for node in nodes:
        path = claim_path(dest, node)
        if os.path.exists(record_path(dest, node)) or not os.path.exists(path):
            continue
        existing = _read_claim(path)
        alive = job_alive(existing.get('job'), job) if existing else True   # (a claim being written: alive)
        if alive is False:
            dead[node] = existing
        elif alive is None:
            out['stale'].append({'node': node, 'owner': job_text(existing), 'claimed': existing.get('claimed'),
                                 'file': path})
    if out['stale']:
        out['msg'] = ('%s claimed by a job that is not known to be running and has no record in run %s: %s. '
                      'This batch claims nothing (its nodes would be left out of the roll). Once that job is '
                      'known to have ended, remove the claim file and relaunch the slice: rm %s'
                      % ('%d node(s)' % len(out['stale']), run_id,
                         '; '.join('%s by %s' % (item['node'], item['owner']) for item in out['stale']),
                         ' '.join(_quote(item['file']) for item in out['stale'])))
        return out
    if not check_mode:
        _files.make_dirs(dest)
        _files.make_dirs(os.path.join(dest, 'claims'))
    for node in nodes:
        if node in dead:
            if check_mode:
                out['claimed'].append(node)
                out['taken_over'].append({'node': node, 'owner': job_text(dead[node])})
                continue
            won, doc = take_over(dest, node, dead[node], owner, run_id, job)
            if won:
                out['claimed'].append(node)
                out['taken_over'].append({'node': node, 'owner': job_text(dead[node])})
            else:
                out['taken'].append({'node': node, 'owner': str(doc.get('owner', '')), 'why': 'claimed'})
            continue
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
        won, doc = claim(dest, node, owner, run_id, job=job)
        if won:
            out['claimed'].append(node)
        else:
            out['taken'].append({'node': node, 'owner': str(doc.get('owner', '')), 'why': 'claimed'})
    out['msg'] = '%d of %d node(s) claimed by %s (%d failed in the fleet so far, max_fail %d)%s' % (
        len(out['claimed']), len(nodes), job_text({'owner': owner, 'job': job}), len(failed), max_fail,
        ''.join('; %s taken over from %s, which is no longer running' % (item['node'], item['owner'])
                for item in out['taken_over']))
    return out


def _quote(path):
    """``path`` quoted for a POSIX shell (as shlex.quote)."""
    if path and all(c.isalnum() or c in '@%+=:,./-_' for c in path):
        return path
    return "'" + path.replace("'", "'\"'\"'") + "'"
