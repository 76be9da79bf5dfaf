# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova's compute services (``/os-services``): read, disable / enable, wait for up or down.

What the rolling pass does around a node's reshape: disable its nova-compute so the
scheduler sends nothing there, wait until nova reports it down once the node's service
manager stopped it, and after the reshape wait until the new nova-compute is up and has
reported (its ``updated_at`` is later than its start), then enable it again.

Compute microversion 2.53: service ids are uuids and ``PUT /os-services/{id}`` takes
``status`` (``enabled``/``disabled``), ``disabled_reason`` and ``forced_down``.  nova answers
400 to a PUT that changes nothing, so :func:`set_service` compares first and sends only
what differs: idempotent, and ``changed`` is true only when nova's record changed.

Errors are :mod:`.errors` types naming nova's endpoint (nova.py's mapping); a GET or a PUT
(both idempotent) is retried on a connection failure or a 5xx.  The list is read through
openstacksdk's compute resource (what ``conn.compute.services()`` lists with, compute.list_records),
its retries keystoneauth's.

nova does not report a nova-compute's version through its API: it is read on the node
(``nova-compute --version``) and :func:`parse_version` finds it in what that printed, for the
compute_service module's ``version_command`` and the rolling role's node-side read (the
``placement.upgrade.nova_version`` filter) alike.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import re
import time

from .. import errors
from .. import request as _request
from . import compute as _nova

MICROVERSION = '2.53'
PATH = '/os-services'
#: the fields of a service record kept in results (nova 2.53 sends these)
SERVICE_KEYS = ('id', 'binary', 'host', 'zone', 'status', 'state', 'updated_at', 'disabled_reason',
                'forced_down')
STATES = ('up', 'down')
POLICY_HINT = ('nova\'s compute services are listed and updated by the `admin` role under nova\'s '
               'default policy (os_compute_api:os-services:list and :update)')


#: a dotted version number (34.0.0, 2025.2, 34.0.1.dev12 gives 34.0.1)
_DOTTED = re.compile(r'(?<![\w.])v?(\d+(?:\.\d+)+)')
#: a line that is a version and nothing else, maybe after the program's name
#: (``34.0.0``, ``nova-compute 34.0.0``, ``34.0.0-0ubuntu1``)
_VERSION_LINE = re.compile(r'^\s*(?:[\w.-]*nova[\w.-]*\s+)?v?(\d+(?:\.\d+)+)[\w.+~:-]*\s*$')


def parse_version(output):
    """``{'version': '34.0.0', 'line': '34.0.0'}`` from what ``nova-compute --version`` printed.

    The line that is a version alone (``34.0.0``, as oslo.config prints it; ``nova-compute
    34.0.0``; a package suffix ``-0ubuntu1`` is kept in ``line`` only) wins over warnings
    printed before it; otherwise the first dotted number of the output.  ``{'version': None,
    'line': <first non-empty line>}`` when there is none.
    """
    if isinstance(output, (list, tuple)):
        output = '\n'.join(str(part) for part in output if part is not None)
    lines = [line.strip() for line in str(output or '').splitlines() if line.strip()]
    for line in lines:
        found = _VERSION_LINE.match(line)
        if found:
            return {'version': found.group(1), 'line': line}
    for line in lines:
        found = _DOTTED.search(line)
        if found:
            return {'version': found.group(1), 'line': line}
    return {'version': None, 'line': lines[0] if lines else ''}


def version_matches(version, expected):
    """Whether ``version`` is ``expected`` or within it: ``34`` and ``34.0`` take ``34.0.2``."""
    if not version or not expected:
        return False
    want = str(expected).strip().lstrip('v').split('.')
    have = str(version).strip().lstrip('v').split('.')
    return have[:len(want)] == want


def _keep(record):
    return dict((k, record.get(k)) for k in SERVICE_KEYS)


def get_service(adapter, host, binary='nova-compute', retries=3, backoff=0.25, log=None):
    """nova's record of ``binary`` on ``host``; NotFound naming the hosts nova knows."""
    found = [s for s in _nova.list_records(adapter, 'services', {'host': host, 'binary': binary}, MICROVERSION,
                                           POLICY_HINT, retries=retries, backoff=backoff, log=log)
             if s.get('host') == host and s.get('binary') == binary]
    if not found:
        known = _nova.list_records(adapter, 'services', {'binary': binary}, MICROVERSION, POLICY_HINT,
                                   retries=retries, backoff=backoff, log=log)
        hosts = sorted(s.get('host') for s in known if s.get('host'))
        err = errors.NotFound('nova at %s has no %s service on host %r (nova\'s service host, often the short '
                              'hostname: the hosts it knows are %s)'
                              % (_nova._endpoint(adapter), binary, host, ', '.join(hosts[:20]) or 'none'))
        err.method, err.path = 'GET', PATH
        raise err
    if len(found) > 1:
        # a host re-added in another cell: two records, and nothing tells which one this node runs
        err = errors.ConfigurationError(
            'nova at %s lists %d %s services on host %r (%s): the host is known twice (re-added in another '
            'cell?), and the wrong record would be disabled or enabled; delete the stale service '
            '(openstack compute service delete <id>) so one is left, then rerun'
            % (_nova._endpoint(adapter), len(found), binary, host,
               '; '.join('id %s, zone %s, status %s, state %s, updated_at %s'
                         % (s.get('id'), s.get('zone'), s.get('status'), s.get('state'), s.get('updated_at'))
                         for s in found)))
        err.method, err.path = 'GET', PATH
        raise err
    return _keep(found[0])


def _put(adapter, service_id, body, retries, backoff, log):
    answer = _nova.request(adapter, 'PUT', '%s/%s' % (PATH, service_id), _nova._endpoint(adapter), retries, backoff,
                           log, body=body, microversion=MICROVERSION, hint=POLICY_HINT)
    return _keep((answer or {}).get('service') or {})


def wanted_update(current, enabled=None, disabled_reason=None, forced_down=None):
    """The PUT body that brings ``current`` to what is asked (``{}`` when it already is).

    ``enabled`` None leaves the status alone; ``disabled_reason`` applies to a disabled
    service only (nova refuses one with ``enabled``), None keeps the current reason.
    """
    body = {}
    if enabled is True and current.get('status') != 'enabled':
        body['status'] = 'enabled'
    elif enabled is False:
        reason_differs = disabled_reason is not None and current.get('disabled_reason') != disabled_reason
        if current.get('status') != 'disabled' or reason_differs:
            body['status'] = 'disabled'
            if disabled_reason is not None:
                body['disabled_reason'] = disabled_reason
            elif current.get('disabled_reason'):
                body['disabled_reason'] = current['disabled_reason']
    if forced_down is not None and bool(current.get('forced_down')) != bool(forced_down):
        body['forced_down'] = bool(forced_down)
    return body


def predicted(current, body):
    """``current`` after ``body`` as nova would apply it (check mode)."""
    after = dict(current)
    if body.get('status') == 'enabled':
        after.update(status='enabled', disabled_reason=None)
    elif body.get('status') == 'disabled':
        after.update(status='disabled', disabled_reason=body.get('disabled_reason'))
    if 'forced_down' in body:
        after['forced_down'] = body['forced_down']
        if body['forced_down']:
            after['state'] = 'down'
    return after


class ServiceChange(_request.Request):
    """What :func:`set_service` is asked: ``enabled``, ``disabled_reason``, ``forced_down`` (None:
    left as it is), ``check_mode``, and the PUT's ``retries``, ``backoff`` and ``log``."""

    FIELDS = (('enabled', None), ('disabled_reason', None), ('forced_down', None), ('check_mode', False),
              ('retries', 3), ('backoff', 0.25), ('log', None))


def set_service(adapter, current, change=None, **fields):
    """``(changed, after)``: one PUT with what differs, nothing when nothing does (``change``: a
    :class:`ServiceChange`, or its fields)."""
    change = ServiceChange.of(change, **fields)
    enabled, disabled_reason, forced_down, log = change.enabled, change.disabled_reason, change.forced_down, change.log
    if enabled is True and disabled_reason:
        raise errors.ConfigurationError('disabled_reason is for a disabled service; nova refuses it with '
                                        'state=enabled')
    body = wanted_update(current, enabled=enabled, disabled_reason=disabled_reason, forced_down=forced_down)
    if not body:
        return False, dict(current)
    if change.check_mode:
        return True, predicted(current, body)
    after = _put(adapter, current['id'], body, change.retries, change.backoff, log)
    if log is not None:
        log('nova-compute on %s: %s' % (current['host'], ', '.join('%s=%s' % kv for kv in sorted(body.items()))))
    return True, after


def _after(stamp, since):
    """Whether nova's ``updated_at`` (ISO 8601, UTC, no zone) is later than ``since``."""
    if not since:
        return True
    if not stamp:
        return False
    return str(stamp).replace('T', ' ')[:26] > str(since).replace('T', ' ')[:26]


#: the first pause of :func:`wait_for`'s polling when it expects no write at a known moment
FIRST_INTERVAL = 0.25
#: nova-compute's first heartbeat comes this long after it joined its service group, the last
#: step of its start (nova/servicegroup/api.py INITIAL_REPORTING_DELAY): never sooner after the
#: service was started
FIRST_REPORT_DELAY = 5.0
#: nova's [DEFAULT]report_interval default: a running service writes its record this often
REPORT_INTERVAL = 10.0
#: how long before a write it expects :func:`wait_for` reads again (timers and clocks are not exact)
LEAD = 0.3
#: the pause between reads around a write that is due
QUICK_INTERVAL = 0.1
#: past that moment, the pause grows by this part of the time since (a write 1 s late is seen
#: within 0.25 s, one 4 s late within 1 s)
BACKOFF = 0.25


def epoch(stamp):
    """Seconds since the epoch of nova's ``updated_at`` (or reported_since): UTC ISO 8601, with or
    without the ``T``, microseconds or a UTC suffix (``Z``, ``+00:00``); None when it is none, or
    in another zone (only the reads' timing uses it)."""
    text = str(stamp or '').strip().replace('T', ' ')
    for suffix in ('Z', '+00:00'):
        if text.endswith(suffix):
            text = text[:-len(suffix)]
    if not text or '+' in text or text.count('-') > 2:
        return None
    for form in ('%Y-%m-%d %H:%M:%S.%f', '%Y-%m-%d %H:%M:%S'):
        try:
            moment = datetime.datetime.strptime(text[:26], form)
        except ValueError:
            continue
        return (moment - _EPOCH).total_seconds()
    return None


_EPOCH = datetime.datetime(1970, 1, 1)


def next_pause(now, begun, expected, interval, first_interval=FIRST_INTERVAL):
    """How long :func:`wait_for` pauses before its next read, at ``now``: sub-second around each
    moment in ``expected``, when a write of the service is due (QUICK_INTERVAL from LEAD before it, then
    BACKOFF of the time since it, so the reads back off when the write does not come), or, with
    none, right after the wait began (``first_interval``, then as long as the wait so far); at most
    ``interval`` in between (a pause that would pass a window ends at its start).  Only the timing
    depends on ``expected``: a write that comes at another moment is seen within ``interval`` all
    the same."""
    if not first_interval or first_interval <= 0 or first_interval >= interval:
        return interval
    quick = min(QUICK_INTERVAL, first_interval)
    # with no moment known, the service may get there at once (forced down, say)
    pauses = [] if expected else [max(first_interval, now - begun)]
    for moment in expected:
        if now < moment - LEAD:
            pauses.append(moment - LEAD - now)
        else:
            pauses.append(max(quick, (now - moment) * BACKOFF))
    return max(0.0, min([interval] + pauses))


class Waiting(_request.Request):
    """How :func:`wait_for` polls: ``timeout``, ``interval`` (the longest pause), ``first_interval``,
    ``clock`` and ``sleep`` (time.time and time.sleep, or a test's), ``log``."""

    FIELDS = (('timeout', 300), ('interval', 5.0), ('clock', time.time), ('sleep', time.sleep), ('log', None),
              ('first_interval', FIRST_INTERVAL))


class ClearRequest(_request.Request):
    """What :func:`clear_forced_down_when_up` is asked besides the service and ``reported_since``:
    ``enabled`` and ``disabled_reason`` (sent with the clearing PUT), the polling (the fields of
    :class:`Waiting`), the PUT's ``retries`` and ``backoff``, nova's ``report_interval`` and the
    caller's own forced_down write (``forced_down_at``)."""

    FIELDS = (('enabled', None), ('disabled_reason', None)) + Waiting.FIELDS + (
        ('retries', 3), ('backoff', 0.25), ('report_interval', REPORT_INTERVAL), ('forced_down_at', None))


def clear_forced_down_when_up(adapter, current, reported_since, request=None, **fields):
    """Clear ``forced_down`` of a restarted service and wait until it is up and has reported since
    ``reported_since``, without being fooled by nova's own bookkeeping: ``(record, waited seconds,
    changed)`` (``changed``: a PUT was sent; something else may have cleared it meanwhile).

    nova's os-services ``updated_at`` is the record's, moved by every write (our PUT too), and its
    ``state`` follows the last heartbeat (``last_seen_up``, not shown) for ``service_down_time``
    once ``forced_down`` is cleared.  A service stopped a few seconds ago, forced down and then
    cleared reads ``up`` with an ``updated_at`` of the clearing PUT at once, running or not
    (shown against nova 34: tests/nova_oracle/test_nova_services.py).  So, while it is still
    forced down: wait for a write of the service after ``reported_since`` and after the caller's
    own forced_down write (``forced_down_at``; without it, after its last write in ``current``),
    i.e. the new process': its service version saved at its start, or its first heartbeat; then
    clear ``forced_down`` (with ``enabled`` in the same PUT); then wait until it is up with a write
    after that PUT's as nova stored it (a heartbeat, after its start-up pass: nova-compute joins
    the service group last).  At most one ``report_interval`` more than its first report, where a
    version saved at the start came first.

    nova answers the PUT with the time it wrote, to the microsecond, but its database may store
    whole seconds (MySQL rounds, MariaDB truncates ``DATETIME``): a stored ``...:11`` for a PUT at
    ``...:10.6`` would read as a later write, and the service as up on its old heartbeat.  So the
    record is read again after the PUT and the later of the two stamps is the one to pass.

    The reads are timed by nova's heartbeats (:func:`next_pause`): quick from FIRST_REPORT_DELAY
    after ``reported_since`` (the earliest a started nova-compute's first heartbeat can come), and
    after the clearing around when the next write is due (below).
    """
    req = ClearRequest.of(request, **fields)
    clock, timeout, forced_down_at = req.clock, req.timeout, req.forced_down_at
    waiting = Waiting(**dict((name, getattr(req, name)) for name, _default in Waiting.FIELDS))
    begun = clock()
    # a write after reported_since AND after the caller's own forced_down PUT (``forced_down_at``,
    # nova's stamp of it): that PUT is stamped by nova's clock, which need not be the caller's (nor
    # as fine as it: a reported_since in whole seconds is older than a PUT in the same second).
    # Without forced_down_at, the last write when we looked (``current``) is taken for that PUT and
    # not counted, at the cost of a new process' write made before we looked (a version saved at
    # its start) being passed over for the next one.
    since = reported_since
    if forced_down_at:
        if _after(forced_down_at, since):
            since = forced_down_at
    elif _after(current.get('updated_at'), since):
        since = current['updated_at']
    started = epoch(reported_since)
    first, _waited = wait_for(adapter, current['host'], None, binary=current['binary'], reported_since=since,
                              expected=[started + FIRST_REPORT_DELAY] if started is not None else [],
                              waiting=waiting)
    changed, cleared = set_service(adapter, first, enabled=req.enabled, disabled_reason=req.disabled_reason,
                                   forced_down=False, retries=req.retries, backoff=req.backoff, log=req.log)
    stored = get_service(adapter, current['host'], binary=current['binary'], log=req.log)
    baseline = cleared.get('updated_at') or reported_since
    if _after(stored.get('updated_at'), baseline):
        baseline = stored['updated_at']
    # the next write: a version saved at the start (before FIRST_REPORT_DELAY, which no heartbeat
    # comes sooner than) is followed by the first heartbeat at least FIRST_REPORT_DELAY later; a
    # first heartbeat by the next one report_interval later (a version saved after a longer start
    # is read as one: its heartbeat is then seen within ``interval``, not as soon)
    wrote = epoch(first.get('updated_at'))
    due = []
    if wrote is not None:
        version_saved = started is not None and wrote < started + FIRST_REPORT_DELAY
        due = [wrote + (FIRST_REPORT_DELAY if version_saved else req.report_interval)]
    record, _more = wait_for(adapter, current['host'], 'up', binary=current['binary'],
                             reported_since=baseline, expected=due,
                             waiting=waiting.replace(timeout=max(0.0, timeout - (clock() - begun))))
    return record, round(clock() - begun, 3), changed


def wait_for(adapter, host, state, binary='nova-compute', reported_since=None, expected=None, waiting=None,
             **fields):
    """Poll nova until the service's ``state`` is ``state`` (and, for ``up``, it reported after
    ``reported_since``); ``(record, waited seconds)``; WaitTimeout after ``timeout``.

    The pauses between reads (:func:`next_pause`) are never longer than ``interval`` (the module's
    wait_interval).  With moments in ``expected`` (seconds since the epoch when a write of the
    service is due; None: FIRST_REPORT_DELAY after ``reported_since`` when waiting for ``up`` or
    a write, when a service started then first reports, and none when waiting for ``down``), they
    are QUICK_INTERVAL around each and back off from there.  With none,
    ``first_interval`` (0.25 s) at first and then as long as the wait so far: a service that gets
    there within a second is seen within a fraction of a second, and a long wait (nova's
    service_down_time) reads every ``interval``.  ``first_interval`` at or above ``interval``
    polls every ``interval``, as before.  ``waiting``: a :class:`Waiting`, or its fields.
    """
    waiting = Waiting.of(waiting, **fields)
    timeout, interval, clock, sleep, log = waiting.timeout, waiting.interval, waiting.clock, waiting.sleep, waiting.log
    first_interval = waiting.first_interval
    if state not in STATES and not (state is None and reported_since):
        raise errors.ConfigurationError('wait_for must be up or down, got %r' % (state,))
    if expected is None:
        started = epoch(reported_since) if state != 'down' else None
        expected = [started + FIRST_REPORT_DELAY] if started is not None else []
    start = clock()
    while True:
        record = get_service(adapter, host, binary=binary, log=log)
        reported = state == 'down' or _after(record.get('updated_at'), reported_since)
        if (state is None or record.get('state') == state) and reported:
            return record, round(clock() - start, 3)
        waited = clock() - start
        if waited >= timeout and state is None:
            raise errors.WaitTimeout(
                '%s on %s has not written its record in nova since %s after %d s (nova reports state %s, '
                'forced_down %s, last write %s): is it running and can it reach the message queue and the '
                'database?' % (binary, host, reported_since, timeout, record.get('state'), record.get('forced_down'),
                               record.get('updated_at')))
        if waited >= timeout:
            raise errors.WaitTimeout(
                '%s on %s is not %s after %d s (nova reports state %s, last report %s%s): %s'
                % (binary, host, state, timeout, record.get('state'), record.get('updated_at'),
                   ', expected after %s' % reported_since if reported_since and state == 'up' else '',
                   'is it running and can it reach the message queue and the database?' if state == 'up'
                   else 'nova marks a stopped service down after [DEFAULT]service_down_time (60 s by '
                        'default); check that it is stopped, or set forced_down once it is'))
        sleep(min(next_pause(clock(), start, expected, interval, first_interval), max(0.0, timeout - waited)))
