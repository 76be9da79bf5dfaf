# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reshapes over REST against Placement behind a REAL uWSGI that resets reused connections (issue 28).

uWSGI's ``--http-socket`` answers HTTP/1.1 without ``Connection: close`` and closes the
connection after every answer: a client that sends its next request on the same connection
before it sees the close is reset (devstack adds ``--add-header 'Connection: close'`` for
this).  :func:`run_resets` serves Placement 16.0.0 that way (``PlacementServer`` with
``wsgi_server='uwsgi'``, 4 worker processes, MariaDB by default), reshapes ``nodes`` fresh
nodes (``harness.build_node``) with the collection's REST backend, ``threads`` at a time,
each reshape client straight on uWSGI (no proxy: the resets are uWSGI's own), and counts
every reset the clients met (a hook on their HTTP session: the exception each request
raised, not an assumption).  Each node is then classified as :func:`harness.classify` does
(reshaped, untouched or partial; lost, doubled, mismatched; leftover children named in the
failure's message or not) and reshaped again without resets (the rerun).

The setup, the verdict and the rerun use a client that opens a new connection for every
request, so they are never reset.

:func:`run_roll` plays ``playbooks/rolling_reshape.yml`` over a simulated fleet instead
(:func:`harness.run_rolls`, every node on one shared DISK_GB pool): the modules' own clients
meet the resets, counted by a ``sitecustomize`` put on the roll's ``PYTHONPATH``.

    .venv/bin/python tests/reliability/uwsgi_resets.py --nodes 12 -v     # figures printed
    .venv/bin/python tests/reliability/uwsgi_resets.py --nodes 8 --connection-close   # the control: no resets
    .venv/bin/python tests/reliability/uwsgi_resets.py --nodes 40 --roll 10 -v        # rolling_reshape.yml, serial 10

Exit status 0 when every node is clean and resets were met (none with ``--connection-close``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

#: what a client's exception says when the server reset the connection (ECONNRESET, EPIPE, or
#: http.client's RemoteDisconnected: closed without an answer)
RESET_MARKS = ('ConnectionResetError', 'RemoteDisconnected', 'BrokenPipeError', 'Connection reset by peer')


class ResetCounter(object):
    """Counts the requests an HTTP session sent and the connection resets they met, by method.

    :meth:`watch` wraps the ``request`` of a keystoneauth Session's requests.Session; every
    request that raised is noted (``errors``) and counted as a reset when its exception names
    one of :data:`RESET_MARKS`.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.resets = {}          # {(method, path template): count}
        self.errors = []          # [(method, url, exception text)] of every request that raised

    def watch(self, backend):
        inner = backend.session.session
        orig = inner.request
        counter = self

        def request(method, url, *args, **kwargs):
            with counter.lock:
                counter.requests += 1
            try:
                return orig(method, url, *args, **kwargs)
            except Exception as exc:
                counter.note(method, url, exc)
                raise
        inner.request = request
        return backend

    def note(self, method, url, exc):
        text = '%s: %s' % (type(exc).__name__, exc)
        with self.lock:
            self.errors.append((method, url, text))
            if any(mark in text for mark in RESET_MARKS):
                key = (method.upper(), _template(url))
                self.resets[key] = self.resets.get(key, 0) + 1

    def total(self, writes=None):
        """Resets seen: all, or only on writes (``writes=True``) or on reads (``False``)."""
        return sum(n for (method, path), n in self.resets.items()
                   if writes is None or (method not in ('GET', 'HEAD')) == writes)


def _template(url):
    """``POST /resource_providers/{uuid}/traits`` from a URL (uuids and names of the node folded)."""
    path = url.split('://', 1)[-1].split('/', 1)[-1].split('?', 1)[0]
    parts = []
    for part in path.split('/'):
        if len(part) == 36 and part.count('-') == 4:
            part = '{uuid}'
        elif part.startswith('CUSTOM_'):
            part = '{name}'
        parts.append(part)
    return '/' + '/'.join(parts)


def fresh_connection_backend(server):
    """A REST backend on ``server`` that opens a new connection for every request (never reset)."""
    return harness.RestBackend(fresh_connection_adapter(server))


def fresh_connection_adapter(server, **kwargs):
    """``server.adapter(**kwargs)`` opening a new connection for every request."""
    adapter = server.adapter(**kwargs)
    inner = adapter.session.session
    orig = inner.request

    def request(*args, **kwargs):
        try:
            return orig(*args, **kwargs)
        finally:
            for http_adapter in inner.adapters.values():
                http_adapter.close()   # drop the pooled connection: the next request opens its own
    inner.request = request
    return adapter


def make_server(workdir, db='mariadb', workers=4, connection_close=False):
    """Placement on ``db`` behind uWSGI, ``workers`` processes, without ``Connection: close`` (unless
    ``connection_close``: devstack's configuration, the control)."""
    if db in (None, 'sqlite'):
        return harness.PlacementServer(workdir=workdir, workers=workers, wsgi_server='uwsgi',
                                       uwsgi_connection_close=connection_close)
    return harness.PlacementServer.production(db=db, workers=workers, workdir=workdir, wsgi_server='uwsgi',
                                              uwsgi_connection_close=connection_close)


def _reshape_one(server, node, counter, timeout, out):
    messages = []
    client = counter.watch(harness.RestBackend(server.adapter(timeout=timeout), log=messages.append))
    try:
        result = harness.reshaper.reshape_node(client, node['name'], node['report'], snapshot_dir=node['snapdir'],
                                               log=messages.append)
        out.update(result=result)
    except harness.errors.PlacementError as exc:
        out.update(error=harness._err(exc))  # pylint: disable=protected-access
    except Exception as exc:  # pylint: disable=broad-except  # a crash is a defect, reported as one
        out.update(crash='%s: %s' % (type(exc).__name__, exc))
    finally:
        client.close()
    out['messages'] = messages


def run_resets(workdir, nodes=12, threads=4, db='mariadb', workers=4, timeout=30, log=None, connection_close=False):
    """``nodes`` reshapes, ``threads`` at a time, against Placement behind a resetting uWSGI.

    Returns the figures (:func:`harness.new_figures`) with ``notes``: ``requests`` the reshape
    clients sent, ``resets`` they met (``resets_on_writes``, ``resets_on_reads``), ``reset_paths``
    (``{"METHOD /path": n}``), ``nodes_that_met_a_reset``, what reshape_node returned or raised,
    and ``settled`` (lost answers the collection settled by reading back: its log lines).
    """
    figures = harness.new_figures('reshapes over REST behind uWSGI --http-socket %s Connection: close, '
                                  '%d workers, Placement 16.0.0 on %s' % ('with' if connection_close else 'without',
                                                                          workers, db or 'sqlite'), notes={})
    start = time.time()
    server = make_server(os.path.join(workdir, 'placement'), db=db, workers=workers, connection_close=connection_close)
    server.start()
    counter = ResetCounter()
    try:
        setup = fresh_connection_backend(server)
        try:
            built = []
            for index in range(nodes):
                name = 'rel-u-%04d' % index
                node = harness.build_node(setup, os.path.join(workdir, name), name)
                built.append((node, harness.snapshot_node(setup, node)))
        finally:
            setup.close()
        outs = [{} for _node in built]
        for first in range(0, len(built), threads):
            batch = [threading.Thread(target=_reshape_one, args=(server, built[i][0], counter, timeout, outs[i]))
                     for i in range(first, min(first + threads, len(built)))]
            for thread in batch:
                thread.start()
            for thread in batch:
                thread.join()
        check = fresh_connection_backend(server)
        try:
            for (node, baseline), out in zip(built, outs):
                _judge(figures, check, node, baseline, out, log)
        finally:
            check.close()
    finally:
        server.stop()
    notes = figures['notes']
    notes.update({'requests': counter.requests, 'resets': counter.total(),
                  'resets_on_writes': counter.total(writes=True), 'resets_on_reads': counter.total(writes=False),
                  'reset_paths': dict(('%s %s' % key, n) for key, n in sorted(counter.resets.items())),
                  'other_request_errors': len(counter.errors) - counter.total()})
    figures['seconds'] = time.time() - start
    return figures


def _judge(figures, check, node, baseline, out, log):
    verdict = harness.classify(check, node, baseline)
    again = harness.rerun(check, node, baseline)
    error = out.get('error') or out.get('crash')
    notes = figures['notes']
    if out.get('crash'):
        figures['defects'].append({'trial': node['name'], 'crash': out['crash']})
    if out.get('result'):
        harness._count(notes, 'reshape_%s' % out['result']['status'])  # pylint: disable=protected-access
    messages = out.get('messages') or ()
    # the collection's own lines: a write re-read after its answer was lost (resources.py), a
    # POST /reshaper settled by reading the node back (node/settle.py), a GET sent again (rest.py)
    harness._count(notes, 'lost_writes_reread', len([m for m in messages if 'was lost (' in m]))  # pylint: disable=protected-access
    harness._count(notes, 'reshaper_settled', len([m for m in messages if 'reading the node back' in m]))  # pylint: disable=protected-access
    harness._count(notes, 'gets_sent_again', len([m for m in messages if m.startswith('GET ') and '; retry ' in m]))  # pylint: disable=protected-access
    harness.record(figures, verdict, again, error=error, label=node['name'])
    if log:
        log('%s: %s%s' % (node['name'], harness.brief(verdict, again),
                          '; reshape_node raised %s' % error[:400] if error else ''))


# -- the rolling playbook behind the resetting uWSGI --------------------------------------

#: imported by every Python the roll starts (ansible-playbook, each module): appends one line per
#: reset its requests met to $PLACEMENT_RESET_LOG (O_APPEND: whole lines from many processes)
_SITECUSTOMIZE = """\
import os
_LOG = os.environ.get('PLACEMENT_RESET_LOG')
if _LOG:
    try:
        import requests.sessions
    except ImportError:
        requests = None
    if requests is not None:
        _orig = requests.sessions.Session.request

        def _request(self, method, url, *args, **kwargs):
            try:
                return _orig(self, method, url, *args, **kwargs)
            except Exception as exc:
                text = '%s: %s' % (type(exc).__name__, exc)
                if any(mark in text for mark in {marks!r}):
                    line = '%s %s %s\\n' % (str(method).upper(), url, text.replace('\\n', ' ')[:300])
                    fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                    try:
                        os.write(fd, line.encode('utf-8'))
                    finally:
                        os.close(fd)
                raise
        requests.sessions.Session.request = _request
"""


class _SetupView(object):
    """The server as :func:`harness.run_rolls` sees it: its own client (seeding the fleet, the
    verdict) opens a new connection for every request; the playbook's modules reach uWSGI as is."""

    def __init__(self, server):
        self._server = server

    def __getattr__(self, name):
        return getattr(self._server, name)

    def adapter(self, **kwargs):
        return fresh_connection_adapter(self._server, **kwargs)


def run_roll(workdir, nodes=40, serial=10, db='mariadb', workers=4, log=None, connection_close=False):
    """``playbooks/rolling_reshape.yml`` at ``serial`` / as many forks over a ``nodes``-node fleet
    (:func:`harness.run_rolls`) against Placement behind the resetting uWSGI; the resets every
    Python of the roll met are counted by a ``sitecustomize`` on its ``PYTHONPATH``.  Returns
    run_rolls' figures, with ``resets`` (``resets_on_writes``, ``reset_paths``) in ``notes``."""
    hook = os.path.join(workdir, 'reset-hook')
    os.makedirs(hook)
    with open(os.path.join(hook, 'sitecustomize.py'), 'w') as fh:
        fh.write(_SITECUSTOMIZE.format(marks=RESET_MARKS))
    reset_log = os.path.join(workdir, 'resets.log')
    open(reset_log, 'w').close()
    server = make_server(os.path.join(workdir, 'placement'), db=db, workers=workers, connection_close=connection_close)
    saved = dict((k, os.environ.get(k)) for k in ('PYTHONPATH', 'PLACEMENT_RESET_LOG'))
    server.start()
    try:
        os.environ['PYTHONPATH'] = os.pathsep.join(p for p in (hook, saved['PYTHONPATH']) if p)
        os.environ['PLACEMENT_RESET_LOG'] = reset_log
        figures = harness.run_rolls(_SetupView(server), workdir, nodes=nodes, serial=serial, forks=serial, log=log)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()
    counter = ResetCounter()
    with open(reset_log) as fh:
        for line in fh:
            method, url = line.split(' ', 2)[:2]
            key = (method, _template(url))
            counter.resets[key] = counter.resets.get(key, 0) + 1
    figures['suite'] = 'behind uWSGI --http-socket %s Connection: close, %d workers: %s' % (
        'with' if connection_close else 'without', workers, figures['suite'])
    figures['notes'].update({'resets': counter.total(), 'resets_on_writes': counter.total(writes=True),
                             'resets_on_reads': counter.total(writes=False),
                             'reset_paths': dict(('%s %s' % key, n) for key, n in sorted(counter.resets.items()))})
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=12)
    parser.add_argument('--roll', type=int, metavar='SERIAL', default=None,
                        help='play the rolling playbook at this serial (as many forks) over a --nodes fleet instead')
    parser.add_argument('--threads', type=int, default=4, help='reshapes at a time')
    parser.add_argument('--workers', type=int, default=4, help='uWSGI worker processes')
    parser.add_argument('--db', choices=('sqlite', 'mariadb', 'postgresql'), default='mariadb')
    parser.add_argument('--connection-close', action='store_true',
                        help='the control: devstack\'s --add-header "Connection: close" (expect no resets)')
    parser.add_argument('--keep', action='store_true', help='keep the work directory')
    parser.add_argument('-v', '--verbose', action='store_true', help='one line per node')
    args = parser.parse_args(argv)
    log = (lambda msg: print(msg, flush=True)) if args.verbose else None
    workdir = tempfile.mkdtemp(prefix='reliability-uwsgi-')
    try:
        if args.roll:
            figures = run_roll(workdir, nodes=args.nodes, serial=args.roll, db=args.db, workers=args.workers,
                               log=log, connection_close=args.connection_close)
        else:
            figures = run_resets(workdir, nodes=args.nodes, threads=args.threads, db=args.db, workers=args.workers,
                                 log=log, connection_close=args.connection_close)
    finally:
        if args.keep:
            print('work directory kept: %s' % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(harness.format_figures(figures))
    resets = figures['notes']['resets']
    clean = harness.clean(figures) and figures['leftover_unnamed'] == 0
    print('uwsgi resets: %d met; %s' % (resets, 'clean' if clean else 'DEFECTS (see above)'))
    return 0 if clean and (resets == 0) == args.connection_close else 1


if __name__ == '__main__':
    sys.exit(main())
