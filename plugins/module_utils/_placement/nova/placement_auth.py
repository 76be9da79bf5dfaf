# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova-compute's OWN credentials for Placement, connected as nova-compute connects at start-up.

nova 34 reaches Placement with the keystoneauth options of its ``[placement]`` section
(nova/conf/placement.py ``register_ksa_opts``; nova/utils.py ``get_sdk_adapter``): the auth
plugin ``auth_type`` loaded from the section (or from the one ``auth_section`` names), a
session with ``cafile`` / ``certfile`` / ``keyfile`` / ``insecure`` / ``timeout``, and the
Placement endpoint of the service catalog for ``service_type`` (``placement``), the first of
``valid_interfaces`` (nova's default ``internal,public``) found in ``region_name``, unless
``endpoint_override`` names it.  :func:`connect` does the same from the options a node's
nova.conf holds (:func:`.node.novaconf.placement_section`): a token from the identity service,
Placement's endpoint, its version discovery; the caller then probes what it needs (the
reshape permission) on the backend it returns.  Every failure is a typed error saying which
step failed; no secret is ever put in a message.

Plain Python: no Ansible import here (keystoneauth is imported when a node is probed).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile

from .. import errors

#: nova's defaults for the adapter options it registers (nova/conf/utils.py get_ksa_adapter_opts)
DEFAULT_SERVICE_TYPE = 'placement'
DEFAULT_INTERFACES = ('internal', 'public')
#: seconds a request of the probe may take when [placement]timeout is not set
DEFAULT_TIMEOUT = 30.0
_TRUE = ('1', 'true', 'yes', 'on', 'y', 't')


def _list(value, default):
    if value is None or not str(value).strip():
        return list(default)
    return [item.strip() for item in str(value).split(',') if item.strip()]


def _bool(value):
    return str(value or '').strip().lower() in _TRUE


def endpoint_choice(options):
    """How nova finds Placement: ``{service_type, interfaces, region_name, endpoint_override}``."""
    options = options or {}
    return {
        'service_type': options.get('service_type') or DEFAULT_SERVICE_TYPE,
        'service_name': options.get('service_name') or None,
        'interfaces': _list(options.get('valid_interfaces'), DEFAULT_INTERFACES),
        'region_name': options.get('region_name') or None,
        'endpoint_override': options.get('endpoint_override') or None,
    }


def _plugin(auth, secrets):
    """The keystoneauth auth plugin of the options, as ``load_auth_from_conf_options`` loads it."""
    from keystoneauth1 import exceptions as ks_exc
    from keystoneauth1 import loading

    auth_type = auth.get('auth_type') or auth.get('auth_plugin')
    if not auth_type:
        raise errors.ConfigurationError(
            'no auth_type is set: keystoneauth loads no credentials, so nova-compute cannot '
            'authenticate to Placement')
    try:
        loader = loading.get_plugin_loader(auth_type)
    except ks_exc.NoMatchingPlugin:
        raise errors.ConfigurationError('auth_type = %s is not an auth plugin keystoneauth knows' % auth_type)
    values = dict(auth)
    values.update(secrets or {})
    kwargs = {}
    for opt in loader.get_options():
        names = [opt.dest] + [d.dest for d in getattr(opt, 'deprecated', None) or []]
        for name in names:
            if values.get(name) not in (None, ''):
                value = values[name]
                if opt.type is bool:
                    value = _bool(value)
                elif opt.type in (int, float):
                    try:
                        value = opt.type(value)
                    except ValueError:
                        raise errors.ConfigurationError('%s = %r is not a number' % (name, value))
                kwargs[opt.dest] = value
                break
    try:
        return auth_type, kwargs.get('auth_url'), loader.load_from_options(**kwargs)
    except ks_exc.MissingRequiredOptions as exc:
        missing = ', '.join(sorted(o.dest for o in exc.options))
        raise errors.ConfigurationError('auth_type = %s needs %s, which is not set' % (auth_type, missing))
    except ks_exc.ClientException as exc:
        raise errors.ConfigurationError('keystoneauth cannot load auth_type = %s: %s' % (auth_type, exc))


def _nothing():
    return None


def _remover(path):
    """A function that removes ``path`` (if it is still there)."""
    def remove():
        if os.path.exists(path):
            os.unlink(path)
    return remove


def _here(option, path):
    """``path`` of nova.conf's ``option``, refused unless it is a file of this machine (the controller)."""
    if not os.path.isfile(path):
        raise errors.ConfigurationError(
            "[placement] %s %s is not a file on the controller, where nova-compute's credentials are probed "
            "from: it is a path where nova-compute runs (under kolla-ansible, in its container)%s"
            % (option, path, '' if option != 'cafile' else
               "; placement.upgrade.node_preflight reads nova's CA on the node and gives it to the probe"))
    return path


def session_for(conf, plugin):
    """``(session, cleanup)``: the keystoneauth session nova-compute would open with ``conf``'s options.

    The CA: the text the node's pre-flight read where nova-compute gets it (``conf["ca"]``,
    :func:`..node.novaconf.node_ca`), written to a private temporary file that ``cleanup()``
    removes; without it, ``cafile`` must be a file of the controller.  A CA or client certificate
    that cannot be had is a :class:`..errors.ConfigurationError` naming it, never an OSError."""
    from keystoneauth1 import session as ks_session

    options = dict(conf.get('options') or {})
    ca = conf.get('ca') or {}
    verify, cleanup = True, _nothing
    if _bool(options.get('insecure')):
        verify = False
    elif ca.get('pem'):
        handle, verify = tempfile.mkstemp(prefix='placement-upgrade-nova-ca-', suffix='.pem')
        cleanup = _remover(verify)
        with os.fdopen(handle, 'w') as out:
            out.write(ca['pem'])
    elif ca.get('missing'):
        raise errors.ConfigurationError("nova-compute's CA for Placement could not be read on the node: %s"
                                        % ca['missing'])
    elif options.get('cafile'):
        verify = _here('cafile', options['cafile'])
    cert = None
    if options.get('certfile'):
        cert = _here('certfile', options['certfile'])
        if options.get('keyfile'):
            cert = (cert, _here('keyfile', options['keyfile']))
    try:
        timeout = float(options['timeout']) if options.get('timeout') else DEFAULT_TIMEOUT
    except ValueError:
        timeout = DEFAULT_TIMEOUT
    return ks_session.Session(auth=plugin, verify=verify, cert=cert, timeout=timeout), cleanup


def connect(conf, log=None):
    """Connect as nova-compute would with ``conf`` (:func:`.node.novaconf.placement_section`).

    Returns ``(backend, info)``: an open :class:`..backends.rest.RestBackend` on the endpoint
    nova would use, and ``{user, project, roles, auth_url, endpoint}`` (what the token says),
    with ``cleanup``: call it once done with the backend (it removes the CA file of the probe).
    Raises a PlacementError naming the step that failed (identity errors carry
    :data:`..backends.rest.IDENTITY_CODE`; a TLS file that cannot be had, a ConfigurationError
    naming it); the caller says whose options they were.
    """
    options = dict(conf.get('options') or {})
    auth = dict(conf.get('auth') or {})
    if not conf.get('auth_section'):
        auth = dict(options, **auth)
    _auth_type, auth_url, plugin = _plugin(auth, conf.get('secrets') or {})
    sess, cleanup = session_for(conf, plugin)
    info = {'auth_url': auth_url, 'user': None, 'project': None, 'roles': [], 'endpoint': None,
            'cleanup': cleanup}
    try:
        return _connect(sess, plugin, options, auth_url, info, log)
    except BaseException:
        cleanup()
        raise


def _connect(sess, plugin, options, auth_url, info, log):
    from keystoneauth1 import adapter as ks_adapter
    from keystoneauth1 import exceptions as ks_exc

    from ..backends import rest, rest_errors

    try:
        sess.get_auth_headers()
        access = plugin.get_access(sess)
    except ks_exc.ClientException as exc:
        raise rest_errors.identity_error(exc, auth_url, ks_exc)
    except (IOError, OSError) as exc:  # requests: a CA bundle or certificate it cannot load
        raise errors.ConfigurationError('nova-compute\'s TLS files for %s cannot be used: %s'
                                        % (auth_url or 'the identity service', exc))
    info['user'] = getattr(access, 'username', None) or getattr(access, 'user_id', None)
    info['project'] = getattr(access, 'project_name', None) or getattr(access, 'project_id', None)
    info['roles'] = sorted(getattr(access, 'role_names', None) or [])
    choice = endpoint_choice(options)
    adapter = ks_adapter.Adapter(
        session=sess, service_type=choice['service_type'], service_name=choice['service_name'],
        interface=choice['interfaces'], region_name=choice['region_name'],
        endpoint_override=choice['endpoint_override'])
    try:
        endpoint = adapter.get_endpoint()
    except ks_exc.ClientException as exc:
        endpoint = None
        if not isinstance(exc, ks_exc.EndpointNotFound):
            raise rest_errors.identity_error(exc, auth_url, ks_exc)
    if not endpoint:
        raise errors.ConfigurationError(
            'the service catalog of %s has no %s endpoint for interface %s%s, which nova-compute '
            'looks up (valid_interfaces, region_name; or set endpoint_override)'
            % (auth_url or 'the identity service', choice['service_type'],
               ' or '.join(choice['interfaces']),
               ' in region %s' % choice['region_name'] if choice['region_name'] else ' in any region'))
    info['endpoint'] = endpoint
    backend = rest.RestBackend(adapter, log=log, auth_url=auth_url)
    return backend, info
