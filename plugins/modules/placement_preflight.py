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
      description: Name of the check (reachable, microversion, reshape_permission, root_providers, directories).
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


def run_checks(backend, providers, min_microversion, check_reshape_permission, directories=()):
    """Run the checks on an open backend; return the result dict (``failed`` set when one failed)."""
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
                            params['check_reshape_permission'], params['directories'])
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
