# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roll timed by nova's cycle (issue 31, part 2): how long a node's nova-compute is out of
service with the rolling role's nova steps on, and how much of that the roll adds.

Usage (from the repository root)::

    make bench-nova-cycle                                   # scale 0.1: about 2.5 minutes
    .venv/bin/python benchmarks/bench_nova_cycle.py [--scale 0.1] [--nodes 4] [--t-stop 3]
        [--t-start 10] [--own-work 0.5] [--interval 5] [--json FILE]

nova is the stand-in of tests/nova_standin.py: os-services 2.53 with nova-compute on real timers
(stop takes T_stop, the started process first reports T_start later (one node's T_start
differs from the next by a share of the polling interval) and then every
report_interval = 10 s, down once its last report is service_down_time = 60 s old or at once when
forced_down).  Every duration, nova's and the polling's alike, is multiplied by ``--scale`` for the
run and divided by it again in what is printed: the figures read as nova's seconds.  The HTTP
requests' own time is divided too (nova's timers run on while a request is answered, so it cannot
be taken out): a request of r s counts r/scale; the mean request time is printed for that.

Each node goes through what roles/rolling_reshape runs with the nova steps on, through the
compute_service module's own calls (nova/services.py, as plugins/modules/compute_service.py
makes them: get_service, then set_service, then wait_for):

    probe (read) -> disable (state=disabled, disabled_reason) -> stop (the service manager) ->
    wait down (forced_down=true first when rolling_reshape_nova_force_down) -> reshape and tree
    check (``--own-work`` s, our own work, slept) -> start -> wait up and reported since the start
    (forced_down=false once the new process wrote its record, then a report after that, when
    forced) -> enable (state=enabled)

Printed per node: nova-compute's downtime (from the disable PUT to the enable PUT's answer),
nova's own restart (stop + start until the first report, as modelled) and the roll's ADDED time
(downtime minus nova's own restart: the waits beyond nova's own, the polling, our own work and
the requests), for each polling (fixed: a read every ``--interval`` s, the module's default
wait_interval 5; backoff: 0.25 s backing off up to it, when nova/services.py has it, and where it
times its reads by nova's heartbeats (0.1 s apart from 0.3 s before one is due; its constants
and report_interval scaled with the rest); backoff<=1s: the same up to 1 s, as the role's tasks
(rolling_reshape_nova_poll_interval 1) poll) and with
rolling_reshape_nova_force_down off (the role's default) and on.  Then one batch: the nodes at
once, as a batch of ``serial`` forks runs them, to show their waits overlap; and fleet minutes
for 1,000 nodes at serial 1/10/20 computed from the per-node figures (serial 1: the sum of the
nodes' times; serial N: one batch lasts as long as its slowest node, the waits of its nodes
overlapping).  Ansible's own per-task time (a few tenths of a second per task, more on a busy
controller) is not in these figures.  Nothing passes or fails on timing.
"""

from __future__ import absolute_import, division, print_function

import argparse
import datetime
import inspect
import json
import math
import os
import statistics
import sys
import threading
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(_HERE)
sys.path.insert(0, os.path.join(REPO, 'tests'))  # nova_standin (reused by the unit tests)

from keystoneauth1 import adapter as ks_adapter  # noqa: E402
from keystoneauth1 import session as ks_session  # noqa: E402

from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import services  # noqa: E402

import nova_standin  # noqa: E402

FLEET = 1000
SERIALS = (1, 10, 20)


def takes(func, name, request_class):
    """Whether this tree's ``func`` takes the option ``name``: a parameter, or a field of the request
    object it takes instead (nova/services.py ``Waiting``, ``ClearRequest``; issue 44)."""
    fields = getattr(getattr(services, request_class, None), 'FIELDS', ())
    return name in inspect.signature(func).parameters or name in [field for field, _default in fields]


def pollings(interval):
    """{name: (first pause, interval)} of the pollings this tree's nova/services.py can do (nova's
    seconds): fixed (every wait_interval, as before), backoff (0.25 s doubling up to it), and
    backoff up to 1 s (what a task setting wait_interval: 1 would get)."""
    found = {'fixed': (interval, interval)}
    if takes(services.wait_for, 'first_interval', 'Waiting'):
        found['backoff'] = (min(0.25, interval), interval)
        if interval > 1:
            found['backoff<=1s'] = (0.25, 1.0)
    return found


class TimedAdapter(ks_adapter.Adapter):
    """keystoneauth's Adapter, adding up the wall-clock seconds its requests took (``spent``)."""

    spent = 0.0
    count = 0

    def request(self, *args, **kwargs):
        begin = time.time()
        try:
            return super(TimedAdapter, self).request(*args, **kwargs)
        finally:
            self.spent += time.time() - begin
            self.count += 1


def adapter_for(url):
    return TimedAdapter(session=ks_session.Session(timeout=30), service_type='compute', endpoint_override=url)


class Stopwatch(object):
    """Seconds since a mark, in nova's seconds (divided by the scale)."""

    def __init__(self, adapter, scale):
        self.scale = scale
        self.at = time.time()

    def seconds(self):
        return (time.time() - self.at) / self.scale


def wait(adapter, host, state, interval, first, since=None, timeout=300.0):
    kwargs = {'first_interval': first} if takes(services.wait_for, 'first_interval', 'Waiting') else {}
    return services.wait_for(adapter, host, state, reported_since=since, timeout=timeout, interval=interval, **kwargs)


def roll_node(nova, adapter, host, args, polling, force_down, t_start):
    """One node through the role's nova steps (its nova-compute starting in ``t_start``); its
    timings in nova's seconds."""
    scale = args.scale
    first, interval = polling[0] * scale, polling[1] * scale
    record = services.get_service(adapter, host)                                    # the probe
    begin = Stopwatch(adapter, scale)
    services.set_service(adapter, record, enabled=False,                            # disable
                         disabled_reason='placement.upgrade bench: reshaping')
    stop_took = nova.stop(host)                                                     # the service manager
    mark = Stopwatch(adapter, scale)
    record = services.get_service(adapter, host)
    services.set_service(adapter, record, forced_down=True if force_down else None)
    wait(adapter, host, 'down', interval, first, timeout=300 * scale)
    waited_down = mark.seconds()
    time.sleep(args.own_work * scale)                                               # reshape, tree check
    # the role stamps whole seconds; scaled, a second is too coarse (the old process's last report
    # may fall in the same second), so the stamp keeps its microseconds here
    started_at = datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M:%S.%f')
    nova.start(host, t_start=t_start)
    mark = Stopwatch(adapter, scale)
    record = services.get_service(adapter, host)
    if force_down:
        # as the compute_service module clears it (nova/services.py clear_forced_down_when_up): once
        # the new process wrote its record, then up with a report after the clearing
        timed = ({'report_interval': nova.report_interval}
                 if takes(services.clear_forced_down_when_up, 'report_interval', 'ClearRequest') else {})
        record, _waited, _changed = services.clear_forced_down_when_up(
            adapter, record, started_at, timeout=300 * scale, interval=interval, first_interval=first, **timed)
    else:
        record, _waited = wait(adapter, host, 'up', interval, first, since=started_at, timeout=300 * scale)
    waited_up = mark.seconds()
    services.set_service(adapter, record, enabled=True)                             # enable
    downtime = begin.seconds()
    own = nova.t_stop / scale + t_start
    return {'host': host, 'downtime': downtime, 'nova_restart': own, 'added': downtime - own,
            'stop': stop_took / scale, 'wait_down': waited_down, 'wait_up': waited_up,
            'requests': adapter.count, 'request_seconds': adapter.spent}


#: nova/services.py's timing of its reads (seconds), scaled with everything else in a run
TIMING = ('FIRST_REPORT_DELAY', 'LEAD', 'QUICK_INTERVAL')


def run_case(args, polling, force_down, offsets, starts, batch=False):
    """The nodes one after the other (or all at once with ``batch``) on a fresh stand-in nova."""
    nova = nova_standin.NovaCycle(scale=args.scale, t_stop=args.t_stop, t_start=args.t_start)
    kept = dict((name, getattr(services, name)) for name in TIMING if hasattr(services, name))
    for name, value in kept.items():
        setattr(services, name, value * args.scale)
    try:
        hosts = ['cmp-%02d' % (n + 1) for n in range(len(offsets))]
        rows = []
        if not batch:
            for host, offset, t_start in zip(hosts, offsets, starts):
                nova.add(host, running_for=offset * args.scale)
                rows.append(roll_node(nova, adapter_for(nova.url), host, args, polling, force_down, t_start))
            return rows, None, nova.gets
        for host, offset in zip(hosts, offsets):
            nova.add(host, running_for=offset * args.scale)
        lock = threading.Lock()

        def one(host, t_start):
            row = roll_node(nova, adapter_for(nova.url), host, args, polling, force_down, t_start)
            with lock:
                rows.append(row)

        threads = [threading.Thread(target=one, args=(host, t_start)) for host, t_start in zip(hosts, starts)]
        begin = time.time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return rows, (time.time() - begin) / args.scale, nova.gets
    finally:
        nova.close()
        for name, value in kept.items():
            setattr(services, name, value)


def fleet_minutes(rows):
    """{serial: minutes} for FLEET nodes from per-node downtimes (nova's seconds)."""
    mean = statistics.mean(r['downtime'] for r in rows)
    slowest = max(r['downtime'] for r in rows)
    out = {}
    for serial in SERIALS:
        out[serial] = FLEET * mean / 60.0 if serial == 1 else math.ceil(FLEET / float(serial)) * slowest / 60.0
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--scale', type=float, default=0.1,
                        help='multiply every duration by this for the run (0.1: 10 s take 1 s); figures are printed unscaled')
    parser.add_argument('--nodes', type=int, default=4)
    parser.add_argument('--t-stop', type=float, default=3.0, help="nova-compute's stop, in nova's seconds")
    parser.add_argument('--t-start', type=float, default=10.0,
                        help="nova-compute's start until its first report, in nova's seconds")
    parser.add_argument('--own-work', type=float, default=0.5, help="the reshape and the tree check, in seconds")
    parser.add_argument('--interval', type=float, default=5.0, help="compute_service's wait_interval (the role's: 5)")
    parser.add_argument('--json', help='write the figures here too')
    args = parser.parse_args(argv)
    if not 0 < args.scale <= 1:
        parser.error('--scale must be in (0, 1]')
    ri = nova_standin.REPORT_INTERVAL
    # where each node's last report falls before its stop: spread over one report_interval
    offsets = [ri * 10 + (ri * n / max(1, args.nodes)) for n in range(args.nodes)]
    # and how long each node's nova-compute takes to start: spread over one polling interval, so
    # the polling does not happen to meet the first report (a t_start that is a multiple of it)
    starts = [args.t_start + args.interval * n / max(1, args.nodes) for n in range(args.nodes)]
    print('nova stand-in (tests/nova_standin.py): report_interval %g s, service_down_time %g s, stop %g s, '
          'start %s s until the first report; own work %g s; polling interval %g s'
          % (ri, nova_standin.SERVICE_DOWN_TIME, args.t_stop, '/'.join('%g' % t for t in starts), args.own_work, args.interval))
    print('timers scaled by %g for this run (%g s of nova take %g s here); every figure below is in nova\'s '
          'seconds (measured / %g)' % (args.scale, ri, ri * args.scale, args.scale))
    results = {'scale': args.scale, 'args': vars(args), 'cases': []}
    wall = time.time()
    for force_down in (False, True):
        for name, polling in pollings(args.interval).items():
            rows, _wall, gets = run_case(args, polling, force_down, offsets, starts)
            label = 'force_down %-3s polling %-11s' % ('on' if force_down else 'off', name)
            spent = sum(r['request_seconds'] for r in rows)
            count = sum(r['requests'] for r in rows)
            print('\n%s  (%d GETs of os-services for %d nodes; %d requests, %.1f ms each, %.2f s each once '
                  'divided by the scale)' % (label, gets, len(rows), count, 1000 * spent / count, spent / count / args.scale))
            print('  %-7s %9s %13s %8s %10s %8s' % ('node', 'downtime', 'nova restart', 'added', 'wait down', 'wait up'))
            for r in rows:
                print('  %-7s %8.1fs %12.1fs %7.1fs %9.1fs %7.1fs'
                      % (r['host'], r['downtime'], r['nova_restart'], r['added'], r['wait_down'], r['wait_up']))
            mean = dict((k, statistics.mean(r[k] for r in rows)) for k in ('downtime', 'nova_restart', 'added'))
            print('  %-7s %8.1fs %12.1fs %7.1fs' % ('mean', mean['downtime'], mean['nova_restart'], mean['added']))
            batch_rows, batch_wall, _gets = run_case(args, polling, force_down, offsets, starts, batch=True)
            print('  one batch of the %d nodes at once: %.1f s (slowest node %.1f s, sum of the nodes %.1f s)'
                  % (len(batch_rows), batch_wall, max(r['downtime'] for r in batch_rows),
                     sum(r['downtime'] for r in batch_rows)))
            fleet = fleet_minutes(rows)
            print('  %d nodes: %s' % (FLEET, ', '.join('serial %d %.0f min' % (s, fleet[s]) for s in SERIALS)))
            results['cases'].append({'force_down': force_down, 'polling': name, 'nodes': rows, 'mean': mean,
                                     'batch_seconds': batch_wall, 'fleet_minutes': fleet, 'gets': gets})
    print('\n(run took %.0f s of wall clock at scale %g)' % (time.time() - wall, args.scale))
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump(results, handle, indent=2, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
