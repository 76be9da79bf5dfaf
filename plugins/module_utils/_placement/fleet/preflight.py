# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pre-flight of a rolling reshape: can the roll start, before any node is touched?

Run once for the fleet (the placement_preflight module, in process on the controller):
Placement answers (``reachable``) at a microversion high enough (``microversion``), the
credentials may call ``POST /reshaper`` (``reshape_permission``: a harmless probe on a real
Placement), every named provider is a root provider (``root_providers``), the run's directories
are writable (``directories``), each node's nova-compute may reshape with its OWN ``[placement]``
credentials (``nova_credentials``, :mod:`..nova.placement_auth`), the mdevs guests hold are
defined persistently (``mdev_persistence``, :mod:`..node.mdev_persistence`).  :func:`preflight`
opens Placement and runs them all; every failed check is listed, nothing is changed.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import shutil

from .. import files
from .. import request as _request
from ..backends import factory
from ..errors import BadRequest, Forbidden, PlacementError, ServiceUnavailable, UnsupportedVersion
from ..node import mdev_persistence
from ..nova import placement_auth
from ..rules import microversions
from ..rules import providers as provider_rules
from .labels import error_text

#: The body of the permission probe: valid JSON, refused by the reshaper schema
#: (``inventories`` needs at least one provider) AFTER the policy check.
PROBE_BODY = {'inventories': {}, 'allocations': {}}


def check(name, passed, detail):
    return {'check': name, 'passed': bool(passed), 'detail': detail}


#: How many times the probe is sent when its answer is lost (a reset connection, a 502/503/504).
PROBE_ATTEMPTS = 3


def probe_reshape_permission(backend, attempts=PROBE_ATTEMPTS, log=None):
    """(passed, detail) for ``POST /reshaper`` with :data:`PROBE_BODY`.

    The probe changes nothing whatever happens to it (refused by the schema, or an empty reshape),
    so, unlike a reshape, it is sent again when its answer is lost, up to ``attempts`` times."""
    if backend.kind == 'embedded':
        return True, 'the embedded store has no policy: reshape is allowed'
    for attempt in range(1, attempts + 1):
        try:
            return _probe_once(backend)
        except ServiceUnavailable as exc:
            if attempt == attempts:
                return False, 'the probe POST /reshaper got an unexpected answer: %s' % error_text(exc)
            if log is not None:
                log('the probe POST /reshaper got no answer (%s); it changes nothing: sent again (%d of %d)'
                    % (error_text(exc), attempt + 1, attempts))
    return False, 'the probe POST /reshaper was not sent'


def _probe_once(backend):
    try:
        backend.reshape(dict(PROBE_BODY))
    except Forbidden as exc:
        return False, error_text(exc)
    except BadRequest:
        return True, 'POST /reshaper is allowed by policy (the empty probe was refused by the schema, as expected)'
    except ServiceUnavailable:
        raise
    except PlacementError as exc:
        return False, 'the probe POST /reshaper got an unexpected answer: %s' % error_text(exc)
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
            where, error_text(exc))
        return out
    try:
        out.update(user=info['user'] or user, roles=info['roles'], endpoint=info['endpoint'])
        passed, detail = probe_reshape_permission(nova)
    finally:
        nova.close()
        info.get('cleanup', lambda: None)()
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
        key = json.dumps([conf.get('options'), conf.get('auth_section'), conf.get('auth'), conf.get('secrets'),
                          conf.get('ca')], sort_keys=True, default=str)
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


def nova_options_key(conf):
    """The name of a node's nova [placement] options among the run's probes: a SHA-256 of what
    keystoneauth reads (the options, auth_section, the auth options, the secret), never of the paths."""
    text = json.dumps([conf.get('options'), conf.get('auth_section'), conf.get('auth'), conf.get('secrets')],
                      sort_keys=True, default=str)
    return 'nova-placement-probe:' + hashlib.sha256(text.encode('utf-8')).hexdigest()


def check_node_nova(node, conf, log=None, cache=None):
    """``{passed, detail, user, roles, endpoint, probed_for}`` of one node's nova [placement] options
    (:func:`..node.novaconf.placement_section`'s answer, or ``{missing: why}``), judged before that node's
    reshape.  ``passed`` is None when they could not be probed (a warning, not a failure).

    ``cache``: ``get(key) -> str or None`` and ``put(key, str)`` (the run's shared memory file,
    backends/tokens.py): options a node probed before in the run, with success, are not probed again
    (the same options give the same answer wherever they were read); a failure is probed again."""
    out = {'passed': None, 'detail': '', 'user': None, 'roles': [], 'endpoint': None, 'probed_for': None}
    if conf.get('missing'):
        out['detail'] = "nova-compute's own Placement credentials: %s: not checked: %s" % (node, conf['missing'])
        return out
    key = nova_options_key(conf)
    if cache is not None:
        try:
            seen = json.loads(cache.get(key) or 'null')
        except ValueError:
            seen = None
        if isinstance(seen, dict) and seen.get('passed') is True:
            out.update(seen)
            out['probed_for'] = seen.get('node')
            out.pop('node', None)
            out['detail'] = '%s: %s; the same [placement] options as %s, probed earlier in this run' % (
                node, seen.get('detail'), seen.get('node'))
            return out
    found = _probe_nova(conf, log)
    out.update((k, found[k]) for k in ('passed', 'user', 'roles', 'endpoint'))
    out['detail'] = '%s: %s' % (node, found['detail'])
    if found['passed'] is None:
        out['detail'] = "nova-compute's own Placement credentials: %s: %s" % (node, found['detail'])
    elif found['passed'] and cache is not None:
        kept = dict((k, found[k]) for k in ('passed', 'detail', 'user', 'roles', 'endpoint'))
        kept['node'] = node
        cache.put(key, json.dumps(kept))
    return out


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


class PreflightRequest(_request.Request):
    """What :func:`preflight` is asked besides the backend options (each field is described there)."""

    FIELDS = (('providers', ()), ('min_microversion', '1.30'), ('check_reshape_permission', True), ('directories', ()),
              ('commands', ()), ('nodes', ()), ('fail_on_transient_mdevs', False), ('warn', None), ('log', None),
              ('opened', None))


def run_checks(backend, request=None, **fields):
    """Run the checks on an open backend; return the result dict (``failed`` set when one failed).
    ``request``: a :class:`PreflightRequest`, or its fields (``commands`` and ``opened`` are :func:`preflight`'s)."""
    req = PreflightRequest.of(request, **fields)
    providers, directories, nodes, log = req.providers, req.directories, req.nodes, req.log
    warn = req.warn or (lambda message: None)
    want = microversions.version_tuple(req.min_microversion)
    checks = [check('reachable', True, 'Placement answered (%s backend)' % backend.kind)]
    result = {'changed': False, 'checks': checks, 'backend': backend.kind, 'providers': {}, 'missing': []}
    version = backend.microversion
    result['microversion'] = version
    ok = microversions.version_tuple(version) >= want
    checks.append(check('microversion', ok, 'negotiated %s (need at least %s)' % (version, microversions.version_str(want))))
    if req.check_reshape_permission:
        passed, detail = probe_reshape_permission(backend)
        checks.append(check('reshape_permission', passed, detail))
    refs = [str(r) for r in providers if r is not None and str(r) != '']
    if refs:
        try:
            found, missing, details = check_roots(backend, refs)
        except PlacementError as exc:
            found, missing, details = {}, list(refs), ['cannot list the resource providers: %s' % error_text(exc)]
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
    mdevs = check_mdevs(list(nodes or []), req.fail_on_transient_mdevs, warn)
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


def microversion_problem(value):
    """Why ``min_microversion`` is refused (it does not look like ``1.30``), or None."""
    try:
        microversions.version_tuple(value)
    except (ValueError, TypeError):
        return "min_microversion must look like 1.30, got '%s'" % value
    return None


def preflight(options, request=None, **fields):
    """Open Placement with the backend ``options`` and run the checks (:func:`run_checks`): the result.
    ``request``: a :class:`PreflightRequest`, or its fields (``providers``, ``min_microversion``,
    ``check_reshape_permission``, ``directories``, ``nodes``, ``fail_on_transient_mdevs`` and those below).

    Placement that cannot be reached (or is too old) is a failed check, not an error.  ``failed``
    is set when a check failed; the result then carries the messages of the run (``log``) and,
    when Placement could not be opened, its ``error``.  ``commands``: ``[{"command", "requires"}]``
    whose presence here is returned in ``commands_found`` (:func:`command_found`).  ``warn``, ``log``:
    told the warnings and the messages; ``opened(backend)``: called with the backend once it is open
    (the module hides the secrets of the cloud configuration it resolved).
    """
    req = PreflightRequest.of(request, **fields)
    log, opened = req.log, req.opened
    messages = []

    def keep(message):
        messages.append(message)
        if log is not None:
            log(message)

    found = [command_found(c['command'], c.get('requires')) for c in req.commands or []]
    try:
        backend = factory.get_backend(options, create=False, log=keep)
        if opened is not None:
            opened(backend)
    except UnsupportedVersion as exc:
        checks = [check('reachable', True, 'Placement answered'), check('microversion', False, error_text(exc))]
        return _connect_failure(exc, checks, messages, found)
    except PlacementError as exc:
        return _connect_failure(exc, [check('reachable', False, error_text(exc))], messages, found)
    try:
        result = run_checks(backend, req.replace(log=keep))
    finally:
        backend.close()
    result['commands_found'] = found
    if result.get('failed'):
        result['log'] = messages
    return result


def _connect_failure(exc, checks, log, found):
    """The failed result when Placement could not be reached (or is too old)."""
    result = {'msg': error_text(exc), 'error': exc.to_dict()}
    result.update(checks=checks, providers={}, missing=[], log=log, commands_found=found)
    result['msg'] = 'Pre-flight failed, no node was touched: %s: %s' % (checks[-1]['check'], error_text(exc))
    result['failed'] = True
    return result
