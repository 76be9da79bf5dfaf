#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: compute_service
short_description: Disable or enable a host's nova-compute in nova, and wait until it is down or up
version_added: 1.0.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Reads nova's record of a compute service (C(GET /os-services), compute microversion 2.53),
    disables it with a reason or enables it again (C(PUT /os-services/{id})), sets or clears
    C(forced_down), and waits until nova reports it C(down) or C(up).
  - What the rolling pass does around a node's reshape; see the
    P(placement.upgrade.rolling_reshape#role) role.
  - Idempotent; nova refuses a C(PUT) that changes nothing, so only what differs is sent, and
    C(changed) is true only when nova's record changed. Check mode predicts the record; diff
    mode shows it before and after.
  - Needs nova's compute endpoint, from the cloud's service catalog or O(compute_endpoint);
    nova's default policy gives these calls to the C(admin) role.
  - Its arguments are checked before anything is sent to nova (an empty O(host), O(state=enabled)
    with O(disabled_reason), a negative O(wait_timeout), O(wait_interval) or O(report_interval)
    not above 0, an O(reported_since) or O(forced_down_at) of another form, an O(reported_since)
    more than 5 minutes off this host's UTC clock, an O(compute_endpoint) that is no http(s) URL
    are refused).
  - nova does not report the version of a nova-compute service through its API; read it on the
    node (C(nova-compute --version)). Run where nova-compute runs, O(version_command) does that
    and returns RV(version).
attributes:
  check_mode:
    details:
      - Reads nova's record and returns it as nova would have it; sends nothing, waits for nothing.
  diff_mode:
    details:
      - The service record before and after.
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.attributes
  - placement.upgrade.attributes.PLACEMENT
  - placement.upgrade.attributes.WRITES
options:
  host:
    description:
      - nova's service host of the compute service (C(host) in C(openstack compute service list)),
        often the short hostname. An empty name is refused.
    type: str
    required: true
  binary:
    description: The service's binary.
    type: str
    default: nova-compute
  state:
    description:
      - V(disabled) disables the service (the scheduler sends nothing to the host), V(enabled)
        enables it. Omitted, the status is left as it is (read or wait only).
    type: str
    choices: [enabled, disabled]
  disabled_reason:
    description:
      - Why the service is disabled (shown by C(openstack compute service list --long)). With
        O(state=disabled), a service disabled with another reason gets this one.
      - Not allowed with O(state=enabled) (nova refuses it).
    type: str
  forced_down:
    description:
      - Set (V(true)) or clear (V(false)) nova's C(forced_down) flag. nova reports a forced down
        service down at once, without waiting for C(service_down_time); set it only once the
        service is really stopped, and clear it when it runs again.
    type: bool
  wait_for:
    description:
      - After any change, wait until nova reports the service V(up) or V(down).
      - nova reports a stopped service down after C([DEFAULT]service_down_time) (60 s by default).
    type: str
    choices: [up, down]
  reported_since:
    description:
      - With O(wait_for=up), also wait until the service reported after this time (UTC,
        C(YYYY-MM-DD HH:MM:SS), as nova's C(updated_at)). A service started after that time has
        then really started and reported, not just kept its old state.
      - Another form (a zone, a date alone) is refused before nova is asked, and so is a time more
        than 5 minutes off the UTC clock of the host the module runs on (the controller, in the
        rolling role). Taken from a clock behind UTC, nova's earlier records would pass for reports of
        the restarted service.
      - With O(forced_down=false) on a service that is forced down, nova's C(updated_at) moves with
        the clearing PUT itself, and a service that reported within nova's C(service_down_time)
        reads up once cleared, running or not. So then C(forced_down) is cleared only once the
        service has written its record after this time, and the wait goes on until it is up and
        has reported after the clearing (a heartbeat, which nova-compute sends first after its
        start-up pass). This costs at most one O(report_interval) more than its first report.
    type: str
  forced_down_at:
    description:
      - With O(forced_down=false), O(wait_for=up) and O(reported_since) on a service that is forced
        down, nova's C(updated_at) of the write that forced it down (the RV(service.updated_at)
        of the task that set O(forced_down=true) and waited for V(down)). A write after both it and
        O(reported_since) is taken for the restarted service's, one made before this task reads the
        record too (nova-compute saves its new service version at its start, before its start-up
        pass). So nothing else may write the record in between (another task, an operator's tool),
        unless nova's clock is surely not ahead of the one O(reported_since) was taken from.
      - Without it, the last write when this task first reads the record is taken for that PUT
        (nova stamps it by its own clock, which may be ahead of the one O(reported_since) was
        taken from) and not counted; a version saved before then is then passed over, and the
        wait goes on to the first heartbeat before clearing, and to the next after it.
      - Same form as O(reported_since).
    type: str
  wait_timeout:
    description: Seconds to wait for O(wait_for); 0 or more.
    type: int
    default: 300
  wait_interval:
    description:
      - The longest wait, in seconds, between two reads while waiting; more than 0.
      - The reads start 0.25 s apart and back off up to it (each pause as long as the wait so far).
        They are 0.1 s apart from 0.3 s before a moment nova-compute is due to write its
        record, and back off from there - 5 s after O(reported_since) (nova-compute's first
        heartbeat comes 5 s after its start-up, never sooner), and, when O(forced_down=false)
        clears a restarted service, after the write it waited for - 5 s after it when it came
        sooner than 5 s after O(reported_since) (a version saved at the start, before the first
        heartbeat), else O(report_interval) after it (the next heartbeat).
    type: float
    default: 5
  report_interval:
    description:
      - nova's C([DEFAULT]report_interval) (seconds between nova-compute's heartbeats; 10 by
        default), for timing the reads of O(wait_interval) only - a wrong value makes the wait
        read less well timed (a write is still seen within O(wait_interval)), never wrong.
      - Used only when O(forced_down=false) clears a restarted service (the wait after the
        clearing); other waits do not use it.
      - More than 0.
    type: float
    default: 10
  compute_endpoint:
    description:
      - nova's compute API URL (ending in C(/v2.1)) when the service catalog does not list it. A value
        that is no C(http://) or C(https://) URL is refused before nova is asked.
    type: str
  version_command:
    description:
      - A command (program and arguments, no shell) printing the version of nova-compute, such
        as V([nova-compute, --version]) or, in a container, V([docker, exec, nova_compute,
        nova-compute, --version]). Run on the host the task runs on (the node itself, not the
        controller), after everything else the task does; its output gives RV(version).
      - The task fails when the command fails or prints no version.
      - The P(placement.upgrade.rolling_reshape#role) role reads the version on the node with
        C(rolling_reshape_nova_version_command) and the P(placement.upgrade.nova_version#filter)
        filter, which parses the output the same way.
    type: list
    elements: str
'''

EXAMPLES = r'''
- name: Keep the scheduler away from the node during its reshape
  placement.upgrade.compute_service:
    cloud: overcloud
    host: cmp-r1-01
    state: disabled
    disabled_reason: "placement.upgrade: reshape in progress"

- name: Wait until nova sees the stopped nova-compute down
  placement.upgrade.compute_service:
    cloud: overcloud
    host: cmp-r1-01
    wait_for: down
    wait_timeout: 180

- name: After the upgrade, wait for the new nova-compute to report, then enable it
  placement.upgrade.compute_service:
    cloud: overcloud
    host: cmp-r1-01
    state: enabled
    wait_for: up
    reported_since: "{{ started_at }}"

- name: On the node itself, wait for nova-compute and say which version runs there
  placement.upgrade.compute_service:
    cloud: overcloud
    host: cmp-r1-01
    wait_for: up
    version_command: [nova-compute, --version]
  register: nova_compute

- name: Fail unless the upgraded version runs
  ansible.builtin.assert:
    that: nova_compute.version is version('34.0.0', '>=')
'''

RETURN = r'''
service:
  description: nova's record of the service after the task (predicted in check mode).
  returned: success
  type: dict
  contains:
    id:
      description: The service's uuid.
      type: str
      sample: 7a3e6f4e-0bd4-4d6e-8f0e-2a9a4cdd61a7
    binary:
      description: The service's binary.
      type: str
      sample: nova-compute
    host:
      description: nova's service host.
      type: str
      sample: cmp-r1-01
    zone:
      description: Availability zone.
      type: str
      sample: nova
    status:
      description: V(enabled) or V(disabled).
      type: str
      sample: disabled
    state:
      description: V(up) or V(down), as nova reports it.
      type: str
      sample: up
    updated_at:
      description: When the service last reported (UTC).
      type: str
      sample: "2026-11-23T12:00:00.000000"
    disabled_reason:
      description: Why it is disabled (null when enabled).
      type: str
      sample: "placement.upgrade: reshape in progress"
    forced_down:
      description: nova's forced_down flag.
      type: bool
      sample: false
waited:
  description: Seconds spent waiting for O(wait_for) (0 without it, or in check mode).
  returned: success
  type: float
  sample: 12.5
diff:
  description: The service record before and after (diff mode).
  returned: when diff mode is on
  type: dict
version:
  description:
    - The version of nova-compute printed by O(version_command) (its first dotted number, as
      C(nova-compute --version) prints it).
  returned: when O(version_command) is given
  type: str
  sample: 34.0.0
version_line:
  description: The line of O(version_command)'s output the version was read from.
  returned: when O(version_command) is given
  type: str
  sample: 34.0.0
log:
  description: Messages from the task (the update sent, retries).
  returned: always
  type: list
  elements: str
  sample: ["nova-compute on cmp-r1-01: disabled_reason=placement.upgrade: reshape in progress, status=disabled"]
error:
  description: The error (C(status), C(code), C(title), C(detail), C(request_id)) when the task failed on one.
  returned: failure
  type: dict
'''

import datetime

from ansible_collections.placement.upgrade.plugins.module_utils.common import ModuleSpec, run_module
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import compute as nova
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import services as nova_services
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import BadInput, ConfigurationError
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules.inventory import is_finite

#: the forms of reported_since (nova's updated_at, UTC, no zone)
TIME_FORMATS = ('%Y-%m-%d %H:%M:%S', '%Y-%m-%d %H:%M:%S.%f', '%Y-%m-%dT%H:%M:%S', '%Y-%m-%dT%H:%M:%S.%f')


def check_arguments(params):
    """Refuse arguments nova would refuse, or that cannot work, before anything is sent (BadInput)."""
    for key in ('host', 'binary'):
        if not (params[key] or '').strip():
            raise BadInput('%s must name nova\'s %s of the compute service, got an empty string'
                           % (key, 'service host' if key == 'host' else 'binary'), field=key)
    if params['state'] == 'enabled' and params['disabled_reason']:
        raise BadInput('disabled_reason is for a disabled service; nova refuses it with state=enabled', field='disabled_reason')
    if params['wait_timeout'] < 0:
        raise BadInput('wait_timeout must be 0 or more seconds, got %s' % params['wait_timeout'], field='wait_timeout')
    for key in ('wait_interval', 'report_interval'):
        if not is_finite(params[key]) or params[key] <= 0:
            raise BadInput('%s must be more than 0 seconds, got %s' % (key, params[key]), field=key)
    if params.get('compute_endpoint') is not None:
        nova.check_endpoint(params['compute_endpoint'])
    for key in ('reported_since', 'forced_down_at'):
        since = params[key]
        if since is None:
            continue
        for form in TIME_FORMATS:
            try:
                moment = datetime.datetime.strptime(since, form)
                break
            except ValueError:
                continue
        else:
            raise BadInput('%s must be a UTC time as YYYY-MM-DD HH:MM:SS (as nova\'s updated_at), got %r'
                           % (key, since), field=key)
        if key == 'reported_since':
            _check_clock(moment, since, now())


#: how far reported_since may be from this host's UTC clock (a start taken moments ago on the node)
MAX_CLOCK_SKEW = 300


def now():
    """This host's UTC clock (naive, as nova's updated_at)."""
    return datetime.datetime.utcnow()


def _check_clock(moment, given, current):
    """Refuse a reported_since more than MAX_CLOCK_SKEW seconds off ``current``: taken from a clock
    behind UTC (or in another zone), any record nova wrote before the restart passes for a report of
    the new service, which would then be enabled before it ever ran."""
    off = (moment - current).total_seconds()
    if abs(off) > MAX_CLOCK_SKEW:
        raise BadInput(
            'reported_since %s is %s %s this host\'s UTC clock (%s UTC): more than %d minutes off, so it was '
            'not taken just before the service was started, or the clock it came from is not on UTC. A time '
            'behind would count nova\'s earlier records as reports of the restarted service; check the '
            'node\'s clock (NTP) and give the UTC time of the start'
            % (given, _span(abs(off)), 'ahead of' if off > 0 else 'behind', current.strftime('%Y-%m-%d %H:%M:%S'),
               MAX_CLOCK_SKEW // 60), field='reported_since')


def _span(seconds):
    seconds = int(round(seconds))
    if seconds >= 3600:
        return '%dh%02dm' % (seconds // 3600, seconds % 3600 // 60)
    return '%dm%02ds' % (seconds // 60, seconds % 60)


def _run(module, backend, log):
    params = module.params
    adapter = nova.compute_adapter(backend, endpoint_override=params['compute_endpoint'])
    if adapter is None:
        raise ConfigurationError(
            'compute_service needs nova\'s compute API, and there is none here (%s): use cloud/auth '
            'options whose service catalog lists nova, or set compute_endpoint'
            % ('the embedded store has no nova' if getattr(backend, 'kind', None) != 'rest'
               else 'the service catalog lists no compute endpoint'))
    before = nova_services.get_service(adapter, params['host'], binary=params['binary'], log=log)
    enabled = None if params['state'] is None else params['state'] == 'enabled'
    if (params['forced_down'] is False and before.get('forced_down') and params['wait_for'] == 'up'
            and params['reported_since'] and not module.check_mode):
        # a restarted service forced down: cleared only once it wrote its record since, and then
        # waited for until it reported after the clearing (nova/services.py says why)
        after, waited, changed = nova_services.clear_forced_down_when_up(
            adapter, before, params['reported_since'], enabled=enabled, disabled_reason=params['disabled_reason'],
            timeout=params['wait_timeout'], interval=params['wait_interval'], log=log,
            report_interval=params['report_interval'], forced_down_at=params['forced_down_at'])
    else:
        changed, after = nova_services.set_service(adapter, before, enabled=enabled,
                                                   disabled_reason=params['disabled_reason'],
                                                   forced_down=params['forced_down'],
                                                   check_mode=module.check_mode, log=log)
        waited = 0
        if params['wait_for'] and not module.check_mode:
            after, waited = nova_services.wait_for(adapter, params['host'], params['wait_for'], binary=params['binary'],
                                                   reported_since=params['reported_since'],
                                                   timeout=params['wait_timeout'], interval=params['wait_interval'],
                                                   log=log)
    result = {'changed': changed, 'service': after, 'waited': waited,
              'diff': {'before': before, 'after': after}}
    if params['version_command']:
        result.update(_version(module, params['version_command'], log))
    return result


def _version(module, command, log):
    """``{'version', 'version_line'}`` from ``command`` run here (no shell)."""
    rc, out, err = module.run_command(list(command), check_rc=False)
    if rc != 0:
        raise ConfigurationError('version_command %s failed (rc %s): %s'
                                 % (' '.join(command), rc, (err or out or '').strip()[-400:] or 'no output'))
    found = nova_services.parse_version(out if (out or '').strip() else err)
    if not found['version']:
        raise ConfigurationError('version_command %s printed no version (%s)'
                                 % (' '.join(command), found['line'][:200] or 'no output'))
    log('nova-compute version %s (%s)' % (found['version'], ' '.join(command)))
    return {'version': found['version'], 'version_line': found['line']}


def execute(module):
    """The module's work (SPEC's one call): its arguments checked, then nova's steps through run_module."""
    try:
        check_arguments(module.params)       # before the backend is opened: nothing reaches nova
    except BadInput as exc:
        module.fail_json(msg=exc.detail)
    # nova alone: Placement is not looked up (two requests fewer while nova-compute is out of service)
    run_module(module, _run, creates_store=False, placement=False)


SPEC = ModuleSpec(
    execute=execute,
    options=dict(
        host=dict(type='str', required=True),
        binary=dict(type='str', default='nova-compute'),
        state=dict(type='str', choices=['enabled', 'disabled']),
        disabled_reason=dict(type='str'),
        forced_down=dict(type='bool'),
        wait_for=dict(type='str', choices=['up', 'down']),
        reported_since=dict(type='str'),
        wait_timeout=dict(type='int', default=300),
        wait_interval=dict(type='float', default=5),
        report_interval=dict(type='float', default=10),
        forced_down_at=dict(type='str'),
        compute_endpoint=dict(type='str'),
        version_command=dict(type='list', elements='str'),
    ),
)


def main():
    SPEC.main()


if __name__ == '__main__':
    main()
