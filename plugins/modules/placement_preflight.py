#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: placement_preflight
short_description: Check that a rolling reshape can start, before any node is touched
version_added: 0.1.0
author: placement.upgrade contributors (@placement-upgrade)
description:
  - Runs the checks a rolling reshape needs once, before the first node, and fails with every
    failed check listed when one does not pass. It changes nothing.
  - C(reachable) - Placement answers (a real API through openstacksdk, or the embedded store
    opens).
  - C(microversion) - the negotiated microversion is at least O(min_microversion) (C(POST
    /reshaper) needs 1.30).
  - C(reshape_permission) - the credentials may call C(POST /reshaper). On a real Placement the
    module sends a harmless probe, a reshape body with empty C(inventories) and C(allocations). Placement checks
    the policy before the request body, so an allowed caller gets C(400 Bad Request) (the
    schema wants at least one provider) and nothing is written, a refused one C(403
    Forbidden). The embedded store has no policy, so the check passes without a probe.
  - C(root_providers) - every name or UUID in O(providers) is an existing B(root) provider
    (the compute node provider nova creates).
  - C(directories) - every path in O(directories) (the run's snapshot and report directories)
    is a writable directory, or can be created (its nearest existing parent is a writable
    directory). Nothing is created here; the reshape and the report create them (mode C(0700)) when
    they write their first file.
  - C(nova_credentials) - for every node of O(nodes) whose nova.conf was read, nova-compute's OWN
    C([placement]) credentials do what nova-compute needs at start-up, probed from where this module
    runs as nova 34 connects (keystoneauth's options of the section). That is a token from the identity
    service (Keystone), the Placement endpoint nova would use (C(endpoint_override), else the catalog's
    C(service_type) endpoint for the first of C(valid_interfaces), default C(internal,public), in
    C(region_name)), its version discovery, and the same C(POST /reshaper) probe as
    C(reshape_permission). Nodes with the same options are probed once. A node whose nova cannot
    reshape (no token, no endpoint, or C(403) on the probe when the credentials lack the C(service) role)
    fails the check, named with the step and what Keystone or Placement answered. A node whose nova.conf
    was not found or sets no C(auth_type) in C([placement]) cannot be checked, and a warning names it.
    Against the embedded store nothing is probed.
  - C(mdev_persistence) - on every node of O(nodes) with mdevs, C(mdevctl) is installed and every
    mdev a guest holds is defined persistently (C(/etc/mdevctl.d/<parent>/<uuid>)). A reboot of the
    host loses a transient mdev, and nova 34 starts only defined mdevs, so its guest cannot start.
    Each problem is a warning naming the node, the mdevs, their parent and the guest, with the
    C(mdevctl define) command that fixes it; with O(fail_on_transient_mdevs=true) it fails the check.
options:
  providers:
    description:
      - Names or UUIDs of the root providers of the nodes the roll will touch (nova's compute
        node providers, named after the hypervisor hostname).
    type: list
    elements: str
    default: []
  min_microversion:
    description:
      - Lowest acceptable Placement microversion, as C(X.Y).
    type: str
    default: '1.30'
  check_reshape_permission:
    description:
      - Probe whether the credentials may call C(POST /reshaper).
    type: bool
    default: true
  directories:
    description:
      - Directories the run will write into where this module runs (the snapshot and report
        directories, on the controller), checked to be writable or creatable. C(~) is expanded.
    type: list
    elements: path
    default: []
  commands:
    description:
      - Commands looked up where this module runs, without running them (the optional upgrade
        checks of the P(placement.upgrade.preflight#role) role that run on the controller).
      - One is found when the first word of its O(commands[].command) is an executable in C(PATH) (or
        an executable path) and its O(commands[].requires), when set, exists. A command not found does
        not fail the pre-flight; RV(commands_found) says which were found.
    type: list
    elements: dict
    default: []
    suboptions:
      command:
        description: The command line, for example C(nova-status upgrade check).
        type: str
        required: true
      requires:
        description: A file the command needs (its service's configuration).
        type: str
  nodes:
    description:
      - What the P(placement.upgrade.preflight#role) role read on each node the roll will touch, with
        M(placement.upgrade.node_preflight) (each element is that module's result plus the node's name),
        that is nova-compute's C([placement]) options and the node's mdevs. Used by the C(nova_credentials) and
        C(mdev_persistence) checks.
      - The secret options (C(nova_placement.secrets)) are never logged or returned.
    type: list
    elements: dict
    default: []
    suboptions:
      node:
        description: The node's name, as messages name it (its inventory name).
        type: str
        required: true
      nova_placement:
        description:
          - M(placement.upgrade.node_preflight)'s RV(placement.upgrade.node_preflight#module:nova_placement)
            (V(null) when it was not read).
        type: dict
        suboptions:
          files:
            description: The files read, in order.
            type: list
            elements: str
            default: []
          options:
            description: The options of C([placement]), secrets left out.
            type: dict
            default: {}
          auth_section:
            description: The section C(auth_section) names, when set.
            type: str
          auth:
            description: The options of the section the auth options are read from, secrets left out.
            type: dict
            default: {}
          secrets:
            description: The auth options holding a secret (C(password), C(application_credential_secret), ...).
            type: dict
            default: {}
          missing:
            description: Why nothing was read (no nova.conf), when nothing was.
            type: str
      mdevs:
        description:
          - M(placement.upgrade.node_preflight)'s RV(placement.upgrade.node_preflight#module:mdevs)
            (V(null) when it was not read).
        type: dict
  fail_on_transient_mdevs:
    description:
      - Fail the C(mdev_persistence) check when a node's guests hold mdevs that are not defined
        persistently or C(mdevctl) is missing on an mdev node. By default each is a warning, since the
        reshape does not touch the mdevs (they are lost at the next reboot of the host, not by the roll).
    type: bool
    default: false
extends_documentation_fragment:
  - placement.upgrade.auth
  - placement.upgrade.auth.ATTRIBUTES
  - placement.upgrade.auth.ACTIONGROUP
attributes:
  check_mode:
    support: full
    details: The module only reads; the permission probe is refused by Placement's schema and writes nothing.
  diff_mode:
    support: N/A
    details: The module only reads.
  idempotent:
    support: full
notes:
  - The roll's P(placement.upgrade.preflight#role) role runs this module once per run, delegated to the
    controller, together with the optional C(placement-status upgrade check) and C(nova-status
    upgrade check) commands.
  - All providers are read with one C(GET /resource_providers) call, so the check costs the
    same for ten nodes or a thousand.
seealso:
  - module: placement.upgrade.reshape
'''

EXAMPLES = r'''
- name: Check Placement before rolling through the compute nodes
  placement.upgrade.placement_preflight:
    cloud: overcloud
    providers: "{{ groups['compute'] }}"
  delegate_to: localhost
  run_once: true

- name: Same against the embedded store, without the permission probe
  placement.upgrade.placement_preflight:
    embedded_db: /var/lib/placement-upgrade/placement.db
    providers:
      - compute-01
      - compute-02
    check_reshape_permission: false
    directories:
      - ~/placement-upgrade/snapshots
      - ~/placement-upgrade/reports
'''

RETURN = r'''
checks:
  description: Every check that ran, in order, with its outcome.
  returned: always
  type: list
  elements: dict
  contains:
    check:
      description: >-
        Name of the check (reachable, microversion, reshape_permission, root_providers, directories,
        nova_credentials, mdev_persistence).
      type: str
      returned: always
      sample: microversion
    passed:
      description: Whether the check passed.
      type: bool
      returned: always
      sample: true
    detail:
      description: What was found.
      type: str
      returned: always
      sample: negotiated 1.39 (need at least 1.30)
microversion:
  description: The negotiated Placement microversion.
  returned: when Placement was reached
  type: str
  sample: '1.39'
backend:
  description: Which backend answered, C(embedded) or C(rest).
  returned: when Placement was reached
  type: str
  sample: rest
providers:
  description: Each provider of O(providers) that exists, by the name or UUID given, with its uuid and name.
  returned: always
  type: dict
  sample: {compute-01: {uuid: 8d6bb6c4-4d9f-4ba9-9d60-3d1c17a3ad7f, name: compute-01}}
commands_found:
  description: For each entry of O(commands), in order, whether it was found (it can run here).
  returned: always
  type: list
  elements: bool
  sample: [false, true]
missing:
  description: Entries of O(providers) that are not an existing root provider.
  returned: always
  type: list
  elements: str
  sample: []
nova_credentials:
  description:
    - For each node of O(nodes) whose nova.conf was read, by node name, what probing nova-compute's own
      C([placement]) credentials found. No secret is returned.
    - C(passed) (V(null) when the node could not be checked), C(detail) (what was found, or why the node
      could not be checked), C(user), C(roles) (of the token Keystone gave; empty when none was given) and
      C(endpoint) (the Placement endpoint nova-compute would use; V(null) when not found).
  returned: when O(nodes) holds nova.conf options
  type: dict
  sample:
    compute-01:
      passed: false
      detail: "nova-compute may not reshape with its own credentials (user nova, project service, ...): 403 Forbidden ..."
      user: nova
      roles: [admin, member, reader]
      endpoint: https://placement.internal.example:8778
mdev_problems:
  description: For each node of O(nodes) whose mdevs are not all persistent, the problems found.
  returned: when O(nodes) holds mdevs
  type: dict
  sample:
    compute-03:
      - "compute-03: 1 mdev(s) held by guests are not defined persistently ..."
log:
  description: Messages from the task.
  returned: always
  type: list
  elements: str
  sample: []
error:
  description: Placement's error when Placement could not be reached or a read failed.
  returned: failure
  type: dict
'''

import json
import os
import shutil

from ansible_collections.placement.upgrade.plugins.module_utils.common import (
    backend_options,
    error_result,
    format_error,
    new_module,
    placement_argument_spec_for,
    placement_module_kwargs,
    protect_secrets,
    run_module,
)
from ansible_collections.placement.upgrade.plugins.module_utils._placement import files
from ansible_collections.placement.upgrade.plugins.module_utils._placement.backends import factory
from ansible_collections.placement.upgrade.plugins.module_utils._placement.node import mdev_persistence
from ansible_collections.placement.upgrade.plugins.module_utils._placement.nova import placement_auth
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import microversions
from ansible_collections.placement.upgrade.plugins.module_utils._placement.rules import providers as provider_rules
from ansible_collections.placement.upgrade.plugins.module_utils._placement.errors import (
    BadRequest,
    Forbidden,
    PlacementError,
    UnsupportedVersion,
)

#: The body of the permission probe: valid JSON, refused by the reshaper schema
#: (``inventories`` needs at least one provider) AFTER the policy check.
PROBE_BODY = {'inventories': {}, 'allocations': {}}


def check(name, passed, detail):
    return {'check': name, 'passed': bool(passed), 'detail': detail}


def probe_reshape_permission(backend):
    """(passed, detail) for ``POST /reshaper`` with :data:`PROBE_BODY`."""
    if backend.kind == 'embedded':
        return True, 'the embedded store has no policy: reshape is allowed'
    try:
        backend.reshape(dict(PROBE_BODY))
    except Forbidden as exc:
        return False, format_error(exc)
    except BadRequest:
        return True, 'POST /reshaper is allowed by policy (the empty probe was refused by the schema, as expected)'
    except PlacementError as exc:
        return False, 'the probe POST /reshaper got an unexpected answer: %s' % format_error(exc)
    return True, 'POST /reshaper is allowed by policy (the empty probe was accepted and changed nothing)'


def check_roots(backend, refs):
    """(found {ref: {uuid, name}}, problems [ref], details [text]) for the wanted root providers."""
    found, missing, details = {}, [], []
    if not refs:
        return found, missing, details
    everything = backend.list_providers()
    by_uuid = dict((p['uuid'], p) for p in everything)
    by_name = dict((p['name'], p) for p in everything)
    for ref in refs:
        prov = None
        if provider_rules.is_uuid_like(ref):
            prov = by_uuid.get(provider_rules.normalize_uuid(ref))
        if prov is None:
            prov = by_name.get(ref)
        if prov is None:
            missing.append(ref)
            details.append("no resource provider named or with uuid '%s'" % ref)
            continue
        root = prov.get('root_provider_uuid') or prov['uuid']
        if prov.get('parent_provider_uuid') or root != prov['uuid']:
            missing.append(ref)
            root_name = by_uuid.get(root, {}).get('name', root)
            details.append("'%s' is not a root provider (its root is '%s')" % (ref, root_name))
            continue
        found[ref] = {'uuid': prov['uuid'], 'name': prov['name']}
    return found, missing, details


def check_directories(paths):
    """(passed, detail) for the directories the run will write into."""
    problems = [files.directory_problem(path) for path in paths]
    problems = [problem for problem in problems if problem]
    if problems:
        return False, '; '.join(problems)
    return True, 'writable or can be created: %s' % ', '.join(paths)


def command_found(command, requires=None):
    """Whether ``command`` (a command line) can run here: its first word is an executable in PATH
    (or an executable path) and ``requires``, when given, exists."""
    words = (command or '').split()
    if not words or shutil.which(words[0]) is None:
        return False
    return not requires or os.path.exists(requires)


def _names(nodes, of=None):
    """The nodes named (every one: the operator must know which), or 'all N nodes' when they are all of ``of``."""
    names = [n['node'] for n in nodes]
    if of is not None and len(names) > 1 and len(names) == len(of):
        return 'all %d nodes' % len(names)
    return ', '.join(names)


def _conf_where(conf, read):
    section = '[placement]'
    if conf.get('auth_section'):
        section = '[placement] (auth options in [%s])' % conf['auth_section']
    if len(read) > 1:
        return "%s of each node's nova.conf (%s)" % (section, ', '.join(' + '.join(f) for f in read))
    return '%s of %s' % (section, ' + '.join(read[0] if read else []) or 'nova.conf')


def _probe_nova(conf, log, read=None):
    """``{passed, detail, user, roles, endpoint}`` of one set of nova [placement] options
    (``read``: the distinct file lists the nodes sharing them read them from)."""
    auth = conf.get('auth') if conf.get('auth_section') else conf.get('options')
    user = (auth or {}).get('username') or (auth or {}).get('user_id') or (auth or {}).get('application_credential_id')
    out = {'passed': False, 'detail': '', 'user': user, 'roles': [], 'endpoint': None}
    where = _conf_where(conf, read or [conf.get('files') or []])
    if not (auth or {}).get('auth_type') and not (auth or {}).get('auth_plugin'):
        out.update(passed=None, detail='not checked: %s sets no auth_type (nova-compute would have no '
                   'credentials for Placement; if nova-compute reads another file, name it with '
                   'rolling_reshape_nova_conf)' % where)
        return out
    try:
        nova, info = placement_auth.connect(conf, log=log)
    except PlacementError as exc:
        out['detail'] = 'nova-compute cannot reach Placement with its own credentials (%s): %s' % (
            where, format_error(exc))
        return out
    try:
        out.update(user=info['user'] or user, roles=info['roles'], endpoint=info['endpoint'])
        passed, detail = probe_reshape_permission(nova)
    finally:
        nova.close()
    who = 'user %s, project %s, Placement at %s, from %s' % (out['user'], info['project'], info['endpoint'], where)
    if passed:
        out.update(passed=True, detail='nova-compute may reshape (%s)' % who)
    else:
        roles = ', '.join(info['roles']) or 'none'
        lacks = '' if 'service' in info['roles'] else ', no `service` role'
        out['detail'] = ('nova-compute may not reshape with its own credentials (%s; the token\'s roles: %s%s): %s'
                         % (who, roles, lacks, detail))
    return out


def check_nova_credentials(backend, nodes, warn, log):
    """``(passed, detail, {node: result})`` for nova-compute's own credentials, or None when no
    node of ``nodes`` carries nova.conf options.  Nodes with the same options are probed once."""
    read = [n for n in nodes if n.get('nova_placement') is not None]
    if not read:
        return None
    results = {}
    if backend.kind == 'embedded':
        return True, 'the embedded store has no identity service: nova-compute\'s credentials of %d node(s) ' \
            'are not probed' % len(read), results
    groups, unread = {}, {}
    for item in read:
        conf = item['nova_placement']
        if conf.get('missing'):
            unread.setdefault(conf['missing'], []).append(item)
            continue
        # the same options give the same answer wherever they were read (the path only names them)
        key = json.dumps([conf.get('options'), conf.get('auth_section'), conf.get('auth'), conf.get('secrets')],
                         sort_keys=True, default=str)
        groups.setdefault(key, []).append(item)
    failed, unchecked, probes = [], [], 0
    for reason, items in sorted(unread.items()):
        unchecked.append('%s: not checked: %s' % (_names(items), reason))
        for item in items:
            results[item['node']] = {'passed': None, 'detail': 'not checked: %s' % reason, 'user': None,
                                     'roles': [], 'endpoint': None}
    passed_nodes = 0
    for key in sorted(groups):
        items = groups[key]
        paths = []
        for item in items:
            if (item['nova_placement'].get('files') or []) not in paths:
                paths.append(item['nova_placement'].get('files') or [])
        outcome = _probe_nova(items[0]['nova_placement'], log, paths[:3] + ([['...']] if len(paths) > 3 else []))
        probes += outcome['passed'] is not None
        for item in items:
            results[item['node']] = dict(outcome)
        if outcome['passed'] is None:
            unchecked.append('%s: %s' % (_names(items), outcome['detail']))
        elif outcome['passed']:
            passed_nodes += len(items)
        else:
            failed.append('%s: %s' % (_names(items, read), outcome['detail']))
    for text in unchecked:
        warn('nova-compute\'s own Placement credentials: %s' % text)
    if failed:
        return False, '; '.join(failed), results
    detail = 'nova-compute may reshape with its own [placement] credentials on %d node(s) (%d probe(s))' % (
        passed_nodes, probes)
    if unchecked:
        detail += '; %d node(s) not checked (see the warnings)' % (len(read) - passed_nodes)
    return True, detail, results


def check_mdevs(nodes, fail, warn):
    """``(passed, detail, {node: [problem]})`` of the mdev persistence of ``nodes``, or None."""
    read = [n for n in nodes if n.get('mdevs') is not None]
    if not read:
        return None
    found = {}
    mdev_nodes = [n for n in read if (n.get('mdevs') or {}).get('mdev_node') or (n.get('mdevs') or {}).get('error')]
    for item in mdev_nodes:
        texts = mdev_persistence.problems(item['node'], item['mdevs'])
        if texts:
            found[item['node']] = texts
    if not found:
        return True, 'every mdev held by a guest is defined persistently (mdevctl) on the %d mdev node(s)' % len(
            mdev_nodes), found
    texts = [t for node in sorted(found) for t in found[node]]
    if fail:
        return False, '; '.join(texts), found
    for text in texts:
        warn(text)
    return True, '%d of %d mdev node(s) have mdevs that a reboot of the host would lose, or no mdevctl ' \
        '(warned: fail_on_transient_mdevs is false)' % (len(found), len(mdev_nodes)), found


def run_checks(backend, providers, min_microversion, check_reshape_permission, directories=(),
               nodes=(), fail_on_transient_mdevs=False, warn=None, log=None):
    """Run the checks on an open backend; return the result dict (``failed`` set when one failed)."""
    warn = warn or (lambda message: None)
    want = microversions.version_tuple(min_microversion)
    checks = [check('reachable', True, 'Placement answered (%s backend)' % backend.kind)]
    result = {'changed': False, 'checks': checks, 'backend': backend.kind, 'providers': {}, 'missing': []}
    version = backend.microversion
    result['microversion'] = version
    ok = microversions.version_tuple(version) >= want
    checks.append(check('microversion', ok, 'negotiated %s (need at least %s)' % (version, microversions.version_str(want))))
    if check_reshape_permission:
        passed, detail = probe_reshape_permission(backend)
        checks.append(check('reshape_permission', passed, detail))
    refs = [str(r) for r in providers if r is not None and str(r) != '']
    if refs:
        try:
            found, missing, details = check_roots(backend, refs)
        except PlacementError as exc:
            found, missing, details = {}, list(refs), ['cannot list the resource providers: %s' % format_error(exc)]
        result['providers'] = found
        result['missing'] = missing
        if missing:
            text = '%d of %d not found: %s' % (len(missing), len(refs), '; '.join(details))
        else:
            text = 'all %d exist and are root providers' % len(refs)
        checks.append(check('root_providers', not missing, text))
    if directories:
        checks.append(check('directories', *check_directories(directories)))
    nova = check_nova_credentials(backend, list(nodes or []), warn, log)
    if nova is not None:
        checks.append(check('nova_credentials', nova[0], nova[1]))
        result['nova_credentials'] = nova[2]
    mdevs = check_mdevs(list(nodes or []), fail_on_transient_mdevs, warn)
    if mdevs is not None:
        checks.append(check('mdev_persistence', mdevs[0], mdevs[1]))
        result['mdev_problems'] = mdevs[2]
    failed = [c for c in checks if not c['passed']]
    if failed:
        result['failed'] = True
        result['msg'] = 'Pre-flight failed, no node was touched: %s' % ' | '.join(
            '%s: %s' % (c['check'], c['detail']) for c in failed)
    else:
        result['msg'] = 'Pre-flight passed: %s' % ', '.join(c['check'] for c in checks)
    return result


def _run(module, _backend, log):
    """run_module's action: the module opens Placement itself (a connection failure is a failed check)."""
    params = module.params
    messages = []

    def keep(message):
        messages.append(message)
        log(message)

    try:
        microversions.version_tuple(params['min_microversion'])
    except (ValueError, TypeError):
        module.fail_json(msg="min_microversion must look like 1.30, got '%s'" % params['min_microversion'])
    found = [command_found(c['command'], c.get('requires')) for c in params['commands']]
    try:
        backend = factory.get_backend(backend_options(params), create=False, log=keep)
        protect_secrets(module, backend)
    except UnsupportedVersion as exc:
        checks = [check('reachable', True, 'Placement answered'), check('microversion', False, format_error(exc))]
        module.fail_json(**_connect_failure(exc, checks, messages, found))
    except PlacementError as exc:
        module.fail_json(**_connect_failure(exc, [check('reachable', False, format_error(exc))], messages, found))
    try:
        result = run_checks(backend, params['providers'], params['min_microversion'],
                            params['check_reshape_permission'], params['directories'],
                            nodes=params['nodes'], fail_on_transient_mdevs=params['fail_on_transient_mdevs'],
                            warn=module.warn, log=keep)
    finally:
        backend.close()
    result['commands_found'] = found
    if result.get('failed'):
        result['log'] = messages
        module.fail_json(**result)
    return result


def argument_spec(args=None):
    """The module's options (with the backend / auth ones) for the task arguments ``args``
    (None: those of this run); the in-process action (plugins/action/placement_preflight.py) uses it too."""
    return placement_argument_spec_for(
        args,
        providers=dict(type='list', elements='str', default=[]),
        min_microversion=dict(type='str', default='1.30'),
        check_reshape_permission=dict(type='bool', default=True),
        directories=dict(type='list', elements='path', default=[]),
        commands=dict(type='list', elements='dict', default=[], options=dict(
            command=dict(type='str', required=True),
            requires=dict(type='str'),
        )),
        nodes=dict(type='list', elements='dict', default=[], options=dict(
            node=dict(type='str', required=True),
            nova_placement=dict(type='dict', options=dict(
                files=dict(type='list', elements='str', default=[]),
                options=dict(type='dict', default={}),
                auth_section=dict(type='str'),
                auth=dict(type='dict', default={}),
                secrets=dict(type='dict', default={}, no_log=True),
                missing=dict(type='str'),
            )),
            mdevs=dict(type='dict'),
        )),
        fail_on_transient_mdevs=dict(type='bool', default=False),
    )


def module_kwargs():
    """AnsibleModule's keyword arguments besides the spec."""
    return placement_module_kwargs()


def execute(module):
    """Run the checks on ``module`` (an AnsibleModule, or the in-process stand-in).  PlacementError
    and anything unexpected are mapped by run_module: never a traceback."""
    run_module(module, _run, open_backend=False)


def main():
    execute(new_module(argument_spec=argument_spec(), **module_kwargs()))


def _connect_failure(exc, checks, log, found):
    """fail_json keys when Placement could not be reached (or is too old)."""
    result = error_result(exc)
    result.update(checks=checks, providers={}, missing=[], log=log, commands_found=found)
    result['msg'] = 'Pre-flight failed, no node was touched: %s: %s' % (checks[-1]['check'], format_error(exc))
    return result


if __name__ == '__main__':
    main()
