# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    # The backend and auth options shared by every module (plugins/module_utils/common.py).
    DOCUMENTATION = r'''
options:
  embedded_db:
    description:
      - Path of the embedded placement database (a SQLite file, created on first use with
        mode C(0600)).
      - Only the modules that write providers, inventories or allocations
        (M(placement.upgrade.resource_provider), M(placement.upgrade.inventory),
        M(placement.upgrade.allocation)) create a missing file; the others fail with a clear
        message when the file does not exist, so a mistyped path never answers from an empty
        placement.
      - When set, the module works on this embedded store instead of a Placement API, and
        the cloud options below are ignored.
      - Mutually exclusive with O(cloud) and O(auth).
    type: path
  cloud:
    description:
      - Named cloud or cloud config to operate against.
      - If a string, it references a named cloud config as defined in an OpenStack
        C(clouds.yaml) file. If a dict, it contains a complete cloud configuration like
        one section of C(clouds.yaml).
      - Not needed when O(auth) is given or the C(OS_*) environment variables are set.
      - In a dict, the values of the keys that name a secret, at any depth (C(password),
        C(token), C(application_credential_secret), C(passcode), C(client_secret), ...), are
        hidden wherever the task's arguments or results show (C(invocation), registered
        results, the module's syslog entry); every other value, and a cloud name, is shown
        as given.
    type: raw
  auth:
    description:
      - Dictionary containing auth information as needed by the cloud's auth plugin
        strategy. For the default C(password) plugin this holds C(auth_url), C(username),
        C(password), C(project_name) and the domain names; for C(admin_token) it holds
        C(token) and C(endpoint).
      - Not needed when a named O(cloud) is given or the C(OS_*) environment variables
        are set.
      - The values of the keys that name a secret (C(password), C(token),
        C(application_credential_secret), ...) are hidden wherever the task's arguments or
        results show; C(auth_url), C(endpoint), user, project and domain names are not, so
        messages that quote them stay readable.
    type: dict
  auth_type:
    description:
      - Name of the keystoneauth plugin to use, for example C(password), C(v3applicationcredential)
        or C(admin_token).
    type: str
  region_name:
    description:
      - Name of the region.
    type: str
  validate_certs:
    description:
      - Whether SSL API requests are verified.
      - When not set, the cloud configuration (or openstacksdk's default) decides.
    type: bool
    aliases: [verify]
  ca_cert:
    description:
      - A path to a CA certificate bundle used to verify SSL API requests.
    type: path
    aliases: [cacert]
  client_cert:
    description:
      - A path to a client certificate to use as part of the SSL transaction.
    type: path
    aliases: [cert]
  client_key:
    description:
      - A path to a client key to use as part of the SSL transaction.
    type: path
    aliases: [key]
  interface:
    description:
      - Endpoint URL type to fetch from the service catalog.
      - When not set, the cloud's own setting applies (C(interface) in C(clouds.yaml), which
        kolla-ansible sets to C(internal), or C(OS_INTERFACE)), then openstacksdk's default,
        C(public). A value given here overrides both.
    type: str
    choices: [admin, internal, public]
    aliases: [endpoint_type]
  api_timeout:
    description:
      - How long, in seconds, the socket layer waits for an API call before timing out.
      - When not set, nothing is passed to the HTTP library.
    type: int
  sdk_log_path:
    description:
      - Path of a file the OpenStack SDK (openstacksdk) and keystoneauth write their log to, as in
        C(openstack.cloud); the real Placement's REST calls, for debugging. Nothing is logged when
        not set. Ignored with O(embedded_db).
      - Created with mode C(0600) when it does not exist, appended to when it does. Every secret of
        O(auth), O(cloud) and the C(OS_*) variables is replaced by C(********) before a line is
        written; keystoneauth hides tokens itself.
    type: path
  sdk_log_level:
    description:
      - V(DEBUG) logs every HTTP request and answer (method, URL, status, headers with tokens
        hidden, bodies); V(INFO) only what openstacksdk reports at that level.
      - Only used with O(sdk_log_path).
    type: str
    choices: [INFO, DEBUG]
    default: INFO
  conflict_retries:
    description:
      - How many times a write that lost a generation race (Placement's
        C(409 placement.concurrent_update)) is recomputed from a fresh read and sent again.
      - Each retry is reported in the C(retries) and C(log) return values and as a warning.
      - V(0) disables retries.
    type: int
    default: 5
requirements:
  - python >= 3.7
  - openstacksdk >= 1.0.0 (only to talk to a real Placement API; the embedded store needs
    the standard library only)
notes:
  - The embedded store (O(embedded_db)) and a real Placement (the cloud options) accept the
    same tasks and return the same results; the embedded store answers with the status,
    error code and message the real service gives.
  - The standard OpenStack environment variables, such as E(OS_CLOUD) or E(OS_AUTH_URL), may
    be used instead of the cloud options. The secrets among them (E(OS_PASSWORD), E(OS_TOKEN), ...)
    are hidden from the module's results too. Set them in the environment of the process that
    runs the module, not with a task's C(environment) keyword, which Ansible itself prints
    at C(-vvv).
  - Errors name the service that failed - the identity service (Keystone) at its C(auth_url), with
    the error code C(placement_upgrade.identity), or Placement at its endpoint - and say what to
    check. Authentication, version discovery and every read are retried on connection failures
    and on 502/503/504, each retry listed in C(log). Authentication and version discovery are
    retried three times, 0.25 s apart and doubling. A read is retried by keystoneauth, up to three
    times for connection failures and, counted apart, up to three times for those answers, 0.5 s
    apart and doubling.
  - Placement's default policy allows the provider, inventory and allocation calls to the
    C(admin) and C(service) roles.
'''
