# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets suite (issue 12, figure e): real ``ansible-playbook -vvv`` runs with EVERY auth form
against a real Keystone and a real Placement (tests/keystone_server.py), then every secret
value is searched for in everything a run leaves behind.

Auth forms (each once with good credentials, once with a bad secret, so both the result and
the error messages are searched):

* ``auth`` dict, password plugin;  * ``auth`` dict, token plugin;
* ``auth`` dict, application credential (id + secret);  * ``admin_token`` straight to
  Placement (token + endpoint);  * ``cloud`` as a dict with ``auth`` inside;
* ``cloud`` NAME from a clouds.yaml holding the password (``OS_CLIENT_CONFIG_FILE``);
* ``OS_*`` variables in the environment of ansible-playbook (an openrc sourced before the
  run; the local connection hands them to the module).

Searched: the whole ``-vvv`` output (task results, ``invocation.module_args``, the failure
JSON Ansible prints), every registered result (``debug: var=`` of each, and all of them
written to a JSON file), and what each module wrote to syslog (its "Invoked with ..." line:
``syslog.syslog`` of the MODULE process is redirected to a file by a ``sitecustomize`` on
``PYTHONPATH``; nothing else changes).

Figures: forms run, module tasks run, secret occurrences found (must be 0), masked
non-secrets (must be 0): every ``********`` (Ansible's mask, not a banner's asterisks) in the
output or the results (no message carries
a secret, so any mask there hides something that is not one: an endpoint, the user name
``placement`` inside ``placement_upgrade.identity``, ...) plus every expected non-secret text
(the auth_url or endpoint in a message, the user name in ``invocation.module_args``) missing
from the task where it belongs (its block of the -vvv output and its registered result).

``--full`` adds Keystone unreachable, Placement unreachable, writes (create then delete a
provider), the reshape permission probe of ``placement_preflight`` for a user without the
``service`` role (a 403 whose message names the role), and the ``environment:`` keyword
caveat (Ansible itself prints a task's ``environment:`` in its ``-vvv`` EXEC line: that is
counted on its own line, it is not a module's output).

Usage: ``python tests/reliability/keystone_secrets.py [--full] [--collections PATH]``
(``--collections``: an ``ansible_collections`` parent to test instead of the live tree,
e.g. a checkout of an older commit, to see what the suite counts there).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
_TESTS = os.path.dirname(_HERE)
_ROOT = os.path.dirname(_TESTS)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from keystone_server import DOMAIN, REGION, SERVICE_PROJECT, closed_port_url, shared_stack  # noqa: E402

COLLECTIONS = os.path.join(_ROOT, '.venv', 'collections')
MASK = '********'
#: Ansible's mask, not a run of the asterisks of a TASK banner
MASKED = re.compile(r'(?<!\*)\*{8}(?!\*)')
NO_LOG = 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'
CLOUD_NAME = 'secrets-cloud'

_SITECUSTOMIZE = '''\
import os
import syslog

_PATH = os.environ.get('SECRETS_SUITE_SYSLOG')


def _capture(*args):
    with open(_PATH, 'a') as fh:
        fh.write(str(args[-1]).replace('\\n', ' ') + '\\n')


if _PATH:
    syslog.syslog = _capture
    syslog.openlog = lambda *args, **kwargs: None
'''


def as_modules(tasks):
    """``tasks`` with a task ``environment`` (a variable no module reads): the action plugin then
    runs the module as a module, not its code in process (``in_process.runs_here``)."""
    return [Task(t.form, t.label, t.module, t.args, t.expect_ok, t.expected,
                 environment=dict(t.environment or {}, PLACEMENT_UPGRADE_SECRETS_SUITE='module')) for t in tasks]


class Task(object):
    """One module task of a generated playbook and what its result must show."""

    def __init__(self, form, label, module, args, expect_ok, expected=(), environment=None):
        self.form = form
        self.label = label
        self.module = module
        self.args = args
        self.expect_ok = expect_ok
        self.expected = list(expected)      # non-secret texts the result must show unmasked
        self.environment = environment


class Suite(object):
    """Builds the forms on a running KeystoneStack, runs the playbooks, counts."""

    def __init__(self, stack, workdir, full=False, collections=COLLECTIONS, python=None):
        self.stack = stack
        self.workdir = workdir
        self.full = full
        self.collections = collections
        self.python = python or sys.executable
        self.secrets = set([stack.keystone.admin_password]) | set(stack.passwords.values())
        self.runs = []
        self.forms = set()

    def secret(self, value):
        self.secrets.add(value)
        return value

    # -- the forms ---------------------------------------------------------------
    def _password_auth(self, password=None, auth_url=None, user='placement'):
        return self.stack.auth_dict(user, password=password, auth_url=auth_url)

    def arg_tasks(self):
        stack = self.stack
        url, placement = stack.auth_url, stack.placement.url
        wrong = self.secret('wrong-pw-%s' % os.urandom(6).hex())
        token = self.secret(stack.token('placement'))
        revoked = self.secret(stack.token('placement'))
        stack.keystone.revoke_token(revoked)
        cred_id, cred_secret = stack.keystone.application_credential('placement', stack.passwords['placement'])
        self.secret(cred_secret)
        wrong_cred = self.secret('wrong-appcred-%s' % os.urandom(6).hex())
        expired, expires = stack.keystone.short_lived_token('placement', stack.passwords['placement'], seconds=1)
        self.secret(expired)
        identity = 'The identity service (Keystone) at %s' % url
        tasks = []

        def pair(form, ok_args, bad_args, ok_expected, bad_expected):
            self.forms.add(form)
            tasks.append(Task(form, 'ok', 'resource_provider_info', ok_args, True, ok_expected))
            tasks.append(Task(form, 'bad secret', 'resource_provider_info', bad_args, False, bad_expected))

        pair('auth dict, password',
             {'auth_type': 'password', 'region_name': REGION, 'auth': self._password_auth()},
             {'auth_type': 'password', 'region_name': REGION, 'auth': self._password_auth(wrong)},
             ['"username": "placement"', '"auth_url": "%s"' % url],
             [identity, 'rejected the credentials', 'placement_upgrade.identity', '"username": "placement"'])
        token_auth = {'auth_url': url, 'project_name': SERVICE_PROJECT, 'project_domain_name': DOMAIN}
        pair('auth dict, token',
             {'auth_type': 'token', 'region_name': REGION, 'auth': dict(token_auth, token=token)},
             {'auth_type': 'token', 'region_name': REGION, 'auth': dict(token_auth, token=revoked)},
             ['"auth_url": "%s"' % url, '"project_name": "service"'],
             [identity, 'does not accept the token', 'placement_upgrade.identity'])
        pair('auth dict, application credential',
             {'auth_type': 'v3applicationcredential', 'region_name': REGION,
              'auth': {'auth_url': url, 'application_credential_id': cred_id, 'application_credential_secret': cred_secret}},
             {'auth_type': 'v3applicationcredential', 'region_name': REGION,
              'auth': {'auth_url': url, 'application_credential_id': cred_id, 'application_credential_secret': wrong_cred}},
             ['"application_credential_id": "%s"' % cred_id],
             [identity, 'rejected the credentials', '"application_credential_id": "%s"' % cred_id])
        time.sleep(max(0.0, expires - time.time()) + 1.2)
        pair('admin_token to Placement (token + endpoint)',
             {'auth_type': 'admin_token', 'auth': {'token': token, 'endpoint': placement}},
             {'auth_type': 'admin_token', 'auth': {'token': expired, 'endpoint': placement}},
             ['"endpoint": "%s"' % placement],
             ['Placement at %s rejected the credentials' % placement, 'expired or revoked',
              '"endpoint": "%s"' % placement])
        pair('cloud dict with auth inside',
             {'cloud': {'auth_type': 'password', 'region_name': REGION, 'auth': self._password_auth()}},
             {'cloud': {'auth_type': 'password', 'region_name': REGION, 'auth': self._password_auth(wrong)}},
             ['"username": "placement"', '"auth_url": "%s"' % url],
             [identity, 'rejected the credentials', '"username": "placement"'])
        pair('cloud name from clouds.yaml',
             {'cloud': CLOUD_NAME}, {'cloud': CLOUD_NAME + '-bad'},
             ['"cloud": "%s"' % CLOUD_NAME],
             [identity, 'rejected the credentials', '"cloud": "%s-bad"' % CLOUD_NAME])
        if self.full:
            sock, dead = closed_port_url()
            self._dead = sock
            for form, args in (('auth dict, password', {'auth_type': 'password', 'region_name': REGION,
                                                        'auth': self._password_auth(auth_url=dead)}),
                               ('cloud dict with auth inside', {'cloud': {'auth_type': 'password', 'region_name': REGION,
                                                                          'auth': self._password_auth(auth_url=dead)}})):
                tasks.append(Task(form, 'keystone unreachable', 'resource_provider_info', args, False,
                                  ['The identity service (Keystone) at %s could not be reached' % dead,
                                   '"username": "placement"']))
            sock2, dead_placement = closed_port_url()
            self._dead_placement = sock2
            dead_placement = dead_placement[:-len('/v3')]
            tasks.append(Task('admin_token to Placement (token + endpoint)', 'placement unreachable',
                              'resource_provider_info', {'auth_type': 'admin_token',
                                                         'auth': {'token': token, 'endpoint': dead_placement}},
                              False, ['Placement at %s could not be reached' % dead_placement]))
            for form, args in (('auth dict, password', {'auth_type': 'password', 'region_name': REGION,
                                                        'auth': self._password_auth()}),
                               ('auth dict, application credential', {
                                   'auth_type': 'v3applicationcredential', 'region_name': REGION,
                                   'auth': {'auth_url': url, 'application_credential_id': cred_id,
                                            'application_credential_secret': cred_secret}}),
                               ('cloud name from clouds.yaml', {'cloud': CLOUD_NAME})):
                name = 'secrets-placement-%s' % os.urandom(4).hex()
                tasks.append(Task(form, 'write (create)', 'resource_provider', dict(args, name=name), True, [name]))
                tasks.append(Task(form, 'write (delete)', 'resource_provider', dict(args, name=name, state='absent'),
                                  True, [name]))
            for form, args in (('auth dict, password', {'auth_type': 'password', 'region_name': REGION,
                                                        'auth': self._password_auth(user='operator')}),
                               ('cloud dict with auth inside', {'cloud': {'auth_type': 'password', 'region_name': REGION,
                                                                          'auth': self._password_auth(user='operator')}})):
                # placement_preflight probes POST /reshaper: the stock policy refuses it (403)
                tasks.append(Task(form, 'reshape probe without the service role', 'placement_preflight', args, False,
                                  ['"username": "operator"', 'placement:reshaper:reshape', 'service']))
        return tasks

    def clouds_yaml(self):
        wrong = self.secret('wrong-clouds-pw-%s' % os.urandom(6).hex())
        clouds = {'clouds': {
            CLOUD_NAME: {'auth_type': 'password', 'region_name': REGION, 'auth': self._password_auth()},
            CLOUD_NAME + '-bad': {'auth_type': 'password', 'region_name': REGION, 'auth': self._password_auth(wrong)}}}
        path = os.path.join(self.workdir, 'clouds.yaml')
        with open(path, 'w') as fh:
            json.dump(clouds, fh)       # JSON is YAML
        return path

    def env_vars(self, password=None):
        auth = self._password_auth(password)
        return {'OS_AUTH_TYPE': 'password', 'OS_AUTH_URL': auth['auth_url'], 'OS_USERNAME': auth['username'],
                'OS_PASSWORD': auth['password'], 'OS_PROJECT_NAME': auth['project_name'],
                'OS_USER_DOMAIN_NAME': DOMAIN, 'OS_PROJECT_DOMAIN_NAME': DOMAIN, 'OS_REGION_NAME': REGION,
                'OS_IDENTITY_API_VERSION': '3'}

    # -- running ----------------------------------------------------------------
    def _playbook(self, tasks, results_path):
        lines = ['- hosts: localhost', '  gather_facts: false', '  tasks:']
        for index, task in enumerate(tasks):
            lines.append('    - name: %s' % json.dumps('%s | %s' % (task.form, task.label)))
            lines.append('      placement.upgrade.%s: %s' % (task.module, json.dumps(task.args)))
            lines.append('      register: r%d' % index)
            lines.append('      ignore_errors: true')
            if task.environment:
                lines.append('      environment: %s' % json.dumps(task.environment))
            lines.append('    - ansible.builtin.debug:')
            lines.append('        var: r%d' % index)
        names = ', '.join('"r%d": r%d' % (i, i) for i in range(len(tasks)))
        lines.append('    - ansible.builtin.copy:')
        lines.append('        content: "{{ {%s} | to_nice_json }}"' % names.replace('"', "'"))
        lines.append('        dest: %s' % json.dumps(results_path))
        lines.append('        mode: "0600"')
        return '\n'.join(lines) + '\n'

    def run(self, label, tasks, extra_env=None):
        run_dir = os.path.join(self.workdir, 'run-%d' % len(self.runs))
        os.makedirs(run_dir)
        site = os.path.join(run_dir, 'site')
        os.makedirs(site)
        with open(os.path.join(site, 'sitecustomize.py'), 'w') as fh:
            fh.write(_SITECUSTOMIZE)
        results_path = os.path.join(run_dir, 'results.json')
        syslog_path = os.path.join(run_dir, 'syslog.txt')
        playbook = os.path.join(run_dir, 'secrets.yml')
        with open(playbook, 'w') as fh:
            fh.write(self._playbook(tasks, results_path))
        env = dict((k, v) for k, v in os.environ.items() if not k.startswith('OS_'))
        env.update({'ANSIBLE_COLLECTIONS_PATH': self.collections, 'ANSIBLE_LOCAL_TEMP': os.path.join(run_dir, 'tmp'),
                    'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_RETRY_FILES_ENABLED': '0', 'ANSIBLE_STDOUT_CALLBACK': 'default',
                    'ANSIBLE_DEPRECATION_WARNINGS': '0', 'PYTHONPATH': site, 'SECRETS_SUITE_SYSLOG': syslog_path,
                    'OS_CLIENT_CONFIG_FILE': self.clouds_path, 'NO_PROXY': '127.0.0.1,localhost'})
        env.update(extra_env or {})
        cmd = [os.path.join(os.path.dirname(self.python), 'ansible-playbook'), '-vvv', '-i', 'localhost,',
               '-c', 'local', '-e', 'ansible_python_interpreter=%s' % self.python, playbook]
        started = time.monotonic()
        proc = subprocess.run(cmd, cwd=run_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=900, check=False)
        with open(os.path.join(run_dir, 'output.txt'), 'w') as fh:
            fh.write(proc.stdout)
        results = {}
        if os.path.exists(results_path):
            with open(results_path) as fh:
                results_text = fh.read()
            results = json.loads(results_text)
        else:
            results_text = ''
        syslog_text = ''
        if os.path.exists(syslog_path):
            with open(syslog_path) as fh:
                syslog_text = fh.read()
        self.runs.append({'label': label, 'tasks': tasks, 'rc': proc.returncode, 'output': proc.stdout,
                          'results': results, 'results_text': results_text, 'syslog': syslog_text,
                          'seconds': time.monotonic() - started})
        return self.runs[-1]

    def run_all(self):
        self.clouds_path = self.clouds_yaml()
        tasks = self.arg_tasks()
        # delegated to this controller in this Python, the tasks run in process in their action
        # plugin (plugin_utils/in_process.py); the same tasks again as modules (AnsiballZ, the
        # module's own no_log and its syslog line), as they run on any other connection
        self.run('forms given as module options (and a clouds.yaml)', tasks)
        self.run('the same forms, run as modules', as_modules(tasks))
        self.forms.add('OS_* environment')
        wrong = self.secret('wrong-env-pw-%s' % os.urandom(6).hex())
        auth_url = self.stack.auth_url
        self.run('OS_* environment (good)', [Task('OS_* environment', 'ok', 'resource_provider_info', {}, True,
                                                  ['"providers"'])],
                 extra_env=self.env_vars())
        bad = Task('OS_* environment', 'bad secret', 'resource_provider_info', {}, False,
                   ['The identity service (Keystone) at %s' % auth_url, 'rejected the credentials'])
        self.run('OS_* environment (wrong OS_PASSWORD)', [bad], extra_env=self.env_vars(wrong))
        if self.full:
            caveat = self.secret('env-keyword-pw-%s' % os.urandom(6).hex())
            keyword = Task('environment: keyword', 'caveat', 'resource_provider_info', {}, False,
                           ['rejected the credentials'], environment=self.env_vars(caveat))
            self.run('environment: keyword (caveat)', [keyword])
        return self.figures()

    # -- counting ---------------------------------------------------------------
    def figures(self):
        leaks, masked, missing, problems = 0, 0, 0, []
        caveat_leaks = 0
        tasks_run = 0
        module_runs = 0
        for run in self.runs:
            caveat = run['label'].startswith('environment: keyword')
            texts = {'-vvv output': run['output'], 'registered results': run['results_text'], 'syslog': run['syslog']}
            for where, text in texts.items():
                for secret in self.secrets:
                    found = text.count(secret)
                    if caveat and where == '-vvv output':
                        caveat_leaks += found
                        found = text.count(secret) - _exec_line_count(text, secret)
                    if found:
                        leaks += found
                        problems.append('%s: a secret shows %d time(s) in the %s' % (run['label'], found, where))
            for where in ('-vvv output', 'registered results'):
                stars = len(MASKED.findall(texts[where]))
                if stars:
                    masked += stars
                    problems.append('%s: %d masked text(s) (%s) in the %s' % (run['label'], stars, MASK, where))
            if run['rc'] not in (0, 2) or 'PLAY RECAP' not in run['output']:
                problems.append('%s: ansible-playbook rc %s' % (run['label'], run['rc']))
            for index, task in enumerate(run['tasks']):
                result = run['results'].get('r%d' % index)
                if result is None:
                    problems.append('%s/%s: no registered result' % (task.form, task.label))
                    continue
                tasks_run += 1
                # the task's block of the -vvv output (its result with invocation.module_args) and
                # the registered result (Ansible drops invocation from it)
                text = _task_block(run['output'], '%s | %s' % (task.form, task.label)) + json.dumps(result)
                if task.expect_ok is True and result.get('failed'):
                    problems.append('%s/%s: failed: %s' % (task.form, task.label, result.get('msg')))
                if task.expect_ok is False and not result.get('failed'):
                    problems.append('%s/%s: did not fail' % (task.form, task.label))
                for want in task.expected:
                    if want not in text:
                        missing += 1
                        problems.append('%s/%s: %r missing from the result (%s)'
                                        % (task.form, task.label, want, result.get('msg') or 'ok'))
            # a task that ran as a module (its AnsiballZ payload in its -vvv block) logs its invocation;
            # one that ran in process in its action plugin (plugin_utils/in_process.py: delegated to
            # this controller, this Python) starts no module process and writes nothing to syslog
            shipped = sum(1 for task in run['tasks']
                          if 'AnsiballZ_' in _task_block(run['output'], '%s | %s' % (task.form, task.label)))
            if not caveat and run['syslog'].count('Invoked with') < shipped:
                problems.append('%s: the syslog capture saw %d invocation(s) for %d module run(s)'
                                % (run['label'], run['syslog'].count('Invoked with'), shipped))
            module_runs += shipped
        if self.runs and not module_runs:
            problems.append('no task ran as a module: the syslog capture was never exercised')
        return {
            'forms': len(self.forms), 'playbook_runs': len(self.runs), 'module_tasks': tasks_run,
            'module_runs': module_runs,
            'secrets_searched': len(self.secrets), 'secret_occurrences': leaks,
            'masked_non_secrets': masked + missing, 'problems': problems,
            'environment_keyword_exec_line': caveat_leaks if self.full else None,
            'seconds': round(sum(run['seconds'] for run in self.runs), 1),
        }


def _task_block(output, name):
    """The lines of ``output`` from ``TASK [name]`` to the next TASK banner."""
    start = output.find('TASK [%s]' % name)
    if start < 0:
        return ''
    end = output.find('\nTASK [', start + 1)
    return output[start:end if end > 0 else len(output)]


def _exec_line_count(text, secret):
    """Occurrences of ``secret`` in Ansible's own ``<host> EXEC`` lines (the environment: keyword)."""
    return sum(line.count(secret) for line in text.splitlines() if ' EXEC ' in line)


def format_figures(fig, full=False):
    lines = ['secrets suite (issue 12 e)%s: real Keystone 30 + Placement 16, ansible-playbook -vvv'
             % (' --full' if full else ''),
             '  auth forms run ..................... %d' % fig['forms'],
             '  playbook runs / module tasks ....... %d / %d' % (fig['playbook_runs'], fig['module_tasks']),
             '  of which run as modules (syslog) ... %d (the others in process)' % fig['module_runs'],
             '  distinct secret values searched .... %d' % fig['secrets_searched'],
             '  secret occurrences found ........... %d' % fig['secret_occurrences'],
             '  masked non-secrets ................. %d' % fig['masked_non_secrets']]
    if fig.get('environment_keyword_exec_line') is not None:
        lines.append('  caveat: a secret in a task\'s environment: keyword shows %d time(s) in Ansible\'s own '
                     '-vvv EXEC line (not module output)' % fig['environment_keyword_exec_line'])
    lines.append('  time in ansible-playbook ........... %.1f s' % fig['seconds'])
    for problem in fig['problems'][:20]:
        lines.append('  ! ' + problem)
    return '\n'.join(lines)


def run_suite(full=False, collections=COLLECTIONS, stack=None, keep=False):
    """Run the suite (starting the stack unless given); return (figures, text)."""
    stack = stack or shared_stack()
    workdir = tempfile.mkdtemp(prefix='secrets-suite-')
    try:
        suite = Suite(stack, workdir, full=full, collections=collections)
        fig = suite.run_all()
        return fig, format_figures(fig, full)
    finally:
        if keep:
            print('kept %s' % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--full', action='store_true', help='every failure variant and the environment: caveat')
    parser.add_argument('--collections', default=COLLECTIONS,
                        help='the directory holding ansible_collections/placement/upgrade (default: the live tree)')
    parser.add_argument('--keep', action='store_true', help='keep the playbooks, outputs and results')
    args = parser.parse_args(argv)
    fig, text = run_suite(full=args.full, collections=os.path.abspath(args.collections), keep=args.keep)
    print(text)
    return 0 if fig['secret_occurrences'] == 0 and fig['masked_non_secrets'] == 0 and not fig['problems'] else 1


if __name__ == '__main__':
    sys.exit(main())
