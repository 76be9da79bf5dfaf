# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Live traffic on the cloud twin while it is rolled: guests booted and deleted through nova-api, and
nova's os-services watched.

* :class:`ServiceWatcher`: a thread reading nova's ``os-services`` (as the admin) every ``interval``
  seconds; per host, the wall-clock times it saw the service disabled / enabled, up / down
  (:meth:`ServiceWatcher.disabled_intervals`).  Its precision is its interval plus one API call.
* :class:`LoadGenerator`: ``workers`` threads, each booting a guest through nova-api with
  openstacksdk (its own connection, as the user it is given, in ``availability_zone``), waiting
  until ACTIVE or ERROR, recording it, deleting it and waiting until it is gone; flavors taken in turn; bounded by
  ``max_boots`` and ``max_seconds``, and stopped by :meth:`LoadGenerator.stop`.  Per boot
  (:attr:`LoadGenerator.records`): name, flavor, server id, start and end (wall clock, epoch
  seconds), status, host, fault message, nova's instance action events (what the conductor, the
  scheduler and the node did, and when), and the delete's outcome.
* :func:`percentile` (nearest rank) for the figures.

Plain Python and openstacksdk (the project venv); nothing here counts anything it did not see.
"""

import calendar
import math
import threading
import time


def parse_time(text):
    """nova's ISO time (``2026-12-02T04:50:01.000000`` or with ``Z`` / ``+00:00``, UTC) -> epoch seconds."""
    if not text:
        return None
    text = str(text).replace('Z', '').split('+', maxsplit=1)[0]
    whole, _dot, frac = text.partition('.')
    return calendar.timegm(time.strptime(whole, '%Y-%m-%dT%H:%M:%S')) + (float('0.' + frac) if frac else 0.0)


def percentile(values, fraction):
    """The nearest-rank percentile of ``values`` (None when empty)."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, int(math.ceil(fraction * len(ordered))))
    return ordered[rank - 1]


class ServiceWatcher(threading.Thread):
    """nova's os-services of ``hosts`` (nova-compute), read every ``interval`` s: see the module doc."""

    def __init__(self, cloud, hosts, interval=0.5):
        super(ServiceWatcher, self).__init__(name='os-services-watcher', daemon=True)
        self.cloud = cloud
        self.hosts = set(hosts)
        self.interval = interval
        self.samples = []          # [(wall time, {host: (status, state)})]
        self.errors = []
        self._halt = threading.Event()

    def run(self):
        while not self._halt.is_set():
            try:
                services = self.cloud.services()
                seen = time.time()
                self.samples.append((seen, dict(
                    (s['host'], (s['status'], s['state'])) for s in services
                    if s['binary'] == 'nova-compute' and s['host'] in self.hosts)))
            except Exception as exc:  # pylint: disable=broad-except  # kept, the test prints them
                self.errors.append('%s: %s' % (time.strftime('%H:%M:%S'), exc))
            self._halt.wait(self.interval)

    def stop(self):
        self._halt.set()
        self.join(30)

    def disabled_intervals(self, host):
        """[(last seen enabled before, first seen disabled, last seen disabled, first seen enabled after)]
        (wall clock; the outer pair bounds the interval from outside, the inner pair from inside; an
        end is None when the watcher never saw the host enabled again)."""
        out = []
        previous_enabled = None
        current = None
        for seen, states in self.samples:
            if host not in states:
                continue
            disabled = states[host][0] == 'disabled'
            if disabled:
                if current is None:
                    current = [previous_enabled, seen, seen, None]
                else:
                    current[2] = seen
            else:
                if current is not None:
                    current[3] = seen
                    out.append(tuple(current))
                    current = None
                previous_enabled = seen
        if current is not None:
            out.append(tuple(current))
        return out

    def down_intervals(self, host):
        """[(first seen down, first seen up after)] of the host's nova-compute (end None: never up again)."""
        out = []
        start = None
        for seen, states in self.samples:
            if host not in states:
                continue
            if states[host][1] == 'down' and start is None:
                start = seen
            elif states[host][1] == 'up' and start is not None:
                out.append((start, seen))
                start = None
        if start is not None:
            out.append((start, None))
        return out


class LoadGenerator(object):
    """Boots and deletes guests through nova-api while the roll runs: see the module doc."""

    def __init__(self, connect, admin_connect, flavors, image_id, max_boots=40, max_seconds=900.0,
                 workers=2, prefix='load', boot_timeout=300.0, availability_zone=None):
        self.connect = connect                  # () -> an openstack Connection of the user booting
        self.admin_connect = admin_connect      # () -> the admin's (host, fault, instance actions)
        self.flavors = list(flavors)            # [(label, flavor id)]
        self.image_id = image_id
        self.max_boots = max_boots
        self.max_seconds = max_seconds
        self.workers = workers
        self.prefix = prefix
        self.boot_timeout = boot_timeout
        self.availability_zone = availability_zone
        self.records = []
        self.errors = []
        self._lock = threading.Lock()
        self._halt = threading.Event()
        self._threads = []
        self._issued = 0
        self.began = None

    def start(self):
        self.began = time.time()
        for index in range(self.workers):
            thread = threading.Thread(target=self._worker, args=(index,), name='load-%d' % index, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self, timeout=600.0):
        """Ask every worker to end after its current boot (and delete); wait for them."""
        self._halt.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(1.0, deadline - time.monotonic()))
        return [t.name for t in self._threads if t.is_alive()]

    def _next(self):
        with self._lock:
            if self._halt.is_set() or self._issued >= self.max_boots or time.time() - self.began > self.max_seconds:
                return None
            index = self._issued
            self._issued += 1
            return index

    def _worker(self, worker):
        try:
            conn = self.connect()
            admin = self.admin_connect()
        except Exception as exc:  # pylint: disable=broad-except  # the test asserts on errors
            self.errors.append('worker %d could not connect: %s' % (worker, exc))
            return
        while True:
            index = self._next()
            if index is None:
                return
            label, flavor_id = self.flavors[index % len(self.flavors)]
            record = self._boot(conn, admin, index, label, flavor_id)
            with self._lock:
                self.records.append(record)

    def _boot(self, conn, admin, index, label, flavor_id):
        name = '%s-%03d-%s' % (self.prefix, index, label)
        record = {'name': name, 'flavor': label, 'id': None, 'start': time.time(), 'end': None,
                  'status': None, 'host': None, 'fault': None, 'events': [], 'deleted': None, 'error': None}
        server = None
        try:
            attrs = {'name': name, 'flavor_id': flavor_id, 'image_id': self.image_id, 'networks': 'none'}
            if self.availability_zone:
                attrs['availability_zone'] = self.availability_zone
            server = conn.compute.create_server(**attrs)
            record['id'] = server.id
            deadline = time.monotonic() + self.boot_timeout
            while True:
                server = conn.compute.get_server(server.id)
                if server.status in ('ACTIVE', 'ERROR'):
                    break
                if time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            record['end'] = time.time()
            record['status'] = server.status
            shown = admin.compute.get_server(server.id)
            record['host'] = shown.compute_host
            fault = shown.fault or {}
            record['fault'] = fault.get('message') if isinstance(fault, dict) else str(fault)
            record['events'] = self._events(admin, server.id)
        except Exception as exc:  # pylint: disable=broad-except  # recorded: the test fails on it
            record['end'] = record['end'] or time.time()
            record['error'] = '%s: %s' % (type(exc).__name__, exc)
        if record['id']:
            record['deleted'] = self._delete(conn, record['id'])
        return record

    @staticmethod
    def _events(admin, server_id):
        """nova's instance action events of the guest's create: [(event, host, start, finish, result)]."""
        session = admin.compute
        found = []
        actions = session.get('/servers/%s/os-instance-actions' % server_id,
                              microversion='2.84').json()['instanceActions']
        for action in actions:
            if action['action'] != 'create':
                continue
            detail = session.get('/servers/%s/os-instance-actions/%s' % (server_id, action['request_id']),
                                 microversion='2.84').json()['instanceAction']
            for event in detail.get('events') or []:
                found.append((event['event'], event.get('host'), parse_time(event.get('start_time')),
                              parse_time(event.get('finish_time')), event.get('result')))
        return sorted(found, key=lambda e: e[2] or 0)

    def _delete(self, conn, server_id, timeout=300.0):
        """'deleted' once nova-api no longer finds it, else what went wrong."""
        try:
            conn.compute.delete_server(server_id)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if conn.compute.find_server(server_id, ignore_missing=True) is None:
                    return 'deleted'
                time.sleep(0.5)
            return 'still there after %ds' % timeout
        except Exception as exc:  # pylint: disable=broad-except  # recorded
            return '%s: %s' % (type(exc).__name__, exc)
