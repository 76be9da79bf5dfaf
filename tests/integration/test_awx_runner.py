# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWX as docs/awx.md says: the execution environment carries the collection, a project sync of
this repository installs it from collections/requirements.yml, and the roll runs through
ansible-runner (the library AWX runs its jobs with) with AWX's OpenStack credential (a one-cloud
clouds.yaml named by OS_CLIENT_CONFIG_FILE) against the real Placement on 127.0.0.1, the survey's
answers as extra vars, and ends with the report.  No container engine: ``ansible-builder create``
writes the build context, which is checked."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess

import pytest
import yaml

import simfleet
from test_awx_survey import answers
from test_fleet_playbook import BIN, REPO, trees
from test_reshaper_support import comparable

pytestmark = pytest.mark.slow

AWX = os.path.join(REPO, 'extensions', 'awx')


def _galaxy_version():
    with open(os.path.join(REPO, 'galaxy.yml')) as handle:
        return yaml.safe_load(handle)['version']


def _isolated_env(tmp_path, **extra):
    """An environment that knows no installed copy of the collection: no ~/.ansible of this
    machine, nothing found on Python's path (the venv's .pth), no ANSIBLE_* of the caller."""
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith(('ANSIBLE_', 'OS_')))
    env.update({
        'HOME': str(tmp_path / 'home'),
        'ANSIBLE_COLLECTIONS_SCAN_SYS_PATH': 'false',
        'ANSIBLE_HOME': str(tmp_path / 'home' / '.ansible'),
        'PATH': BIN + os.pathsep + env.get('PATH', ''),
    })
    env.update(extra)
    return env


def _checkout(tmp_path):
    """The project checkout AWX makes: the repository's files, nothing installed."""
    out = subprocess.run(['bash', os.path.join(REPO, '.ci', 'copy-tree.sh'), str(tmp_path / 'scm')],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True)
    project = str(tmp_path / 'project')
    os.rename(out.stdout.strip(), project)
    return project


def test_the_execution_environment_installs_the_collection(tmp_path):
    """extensions/awx/execution-environment.yml: ansible-builder's build context installs
    placement.upgrade (the tarball the documented build command writes beside the file) and the
    collection's own Python dependencies; meta/execution-environment.yml alone would not."""
    awx = str(tmp_path / 'awx')
    shutil.copytree(AWX, awx)
    env = _isolated_env(tmp_path)
    # the first documented command, run in a checkout of the repository
    subprocess.run([os.path.join(BIN, 'ansible-galaxy'), 'collection', 'build', '--force', '--output-path', awx,
                    REPO], env=env, check=True, stdout=subprocess.PIPE)
    tarball = 'placement-upgrade-%s.tar.gz' % _galaxy_version()
    assert os.path.isfile(os.path.join(awx, tarball))
    context = str(tmp_path / 'context')
    proc = subprocess.run([os.path.join(BIN, 'ansible-builder'), 'create', '-f',
                           os.path.join(awx, 'execution-environment.yml'), '-c', context,
                           '--output-filename', 'Containerfile'],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout
    with open(os.path.join(context, '_build', 'requirements.yml')) as handle:
        galaxy = yaml.safe_load(handle)
    names = [c['name'] for c in galaxy['collections']]
    assert names == ['/build/collections/%s' % tarball], names
    assert os.path.isfile(os.path.join(context, '_build', 'collections', tarball))
    with open(os.path.join(context, 'Containerfile')) as handle:
        containerfile = handle.read()
    copy = containerfile.index('COPY _build/collections/ /build/collections/')
    install = containerfile.index('ansible-galaxy collection install')
    assert copy < install, containerfile
    assert 'python3.12' in containerfile
    # the collection's own Python dependencies are introspected from the installed collection
    assert 'ansible-builder introspect' in containerfile or 'introspect' in containerfile


def test_the_survey_from_an_installed_collection(tmp_path):
    """docs/awx.md's job template reads the survey with lookup('placement.upgrade.awx_survey'):
    from the collection installed by a project sync, not from a checkout's relative path."""
    project = _checkout(tmp_path)
    installed = str(tmp_path / 'requirements_collections')
    env = _isolated_env(tmp_path, ANSIBLE_COLLECTIONS_PATH=installed)
    subprocess.run([os.path.join(BIN, 'ansible-galaxy'), 'collection', 'install', '-r',
                    'collections/requirements.yml', '-p', installed], cwd=project, env=env, check=True,
                   stdout=subprocess.PIPE)
    play = tmp_path / 'survey.yml'
    play.write_text('- hosts: localhost\n  gather_facts: false\n  tasks:\n'
                    '    - ansible.builtin.copy:\n        content: "{{ lookup(\'placement.upgrade.awx_survey\') | to_json }}"\n'
                    '        dest: %s\n' % (tmp_path / 'survey.json'))
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', 'localhost,', '-c', 'local', str(play),
                           '-e', 'ansible_python_interpreter=%s' % os.path.join(BIN, 'python')],
                          cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stdout
    with open(str(tmp_path / 'survey.json')) as handle:
        got = json.load(handle)
    with open(os.path.join(AWX, 'rolling_reshape_survey.json')) as handle:
        assert got == json.load(handle)
    # the copy it read is the installed one
    assert os.path.isfile(os.path.join(installed, 'ansible_collections', 'placement', 'upgrade', 'extensions',
                                       'awx', 'rolling_reshape_survey.json'))


@pytest.mark.real
def test_the_roll_through_ansible_runner_as_awx_runs_it(tmp_path, placement_server, rest_backend, unique_name):
    import ansible_runner

    project = _checkout(tmp_path)
    # the project sync: collections/requirements.yml installed into the job's collections path
    installed = str(tmp_path / 'requirements_collections')
    env = _isolated_env(tmp_path, ANSIBLE_COLLECTIONS_PATH=installed)
    subprocess.run([os.path.join(BIN, 'ansible-galaxy'), 'collection', 'install', '-r',
                    'collections/requirements.yml', '-p', installed], cwd=project, env=env, check=True,
                   stdout=subprocess.PIPE)
    assert os.path.isdir(os.path.join(installed, 'ansible_collections', 'placement', 'upgrade', 'roles'))

    prefix = unique_name('awx') + '-'
    fleet = simfleet.build(str(tmp_path / 'f'), nodes=4, prefix=prefix, backend=rest_backend)
    before = trees(fleet, rest_backend)
    # AWX's OpenStack credential: a clouds.yaml with ONE cloud, named only by OS_CLIENT_CONFIG_FILE
    auth = placement_server.module_auth()
    clouds = tmp_path / 'clouds.yaml'
    clouds.write_text(yaml.safe_dump({'clouds': {'devstack': {'auth_type': auth['auth_type'],
                                                              'auth': auth['auth']}}}))
    report_dir = str(tmp_path / 'reports')
    extravars = answers(rolling_reshape_serial='1,50%')
    extravars.update({'rolling_reshape_snapshot_dir': str(tmp_path / 'snapshots'),
                      'rolling_reshape_report_dir': report_dir,
                      # what AWX adds to every job's extra vars
                      'awx_job_id': 42, 'tower_job_id': 42, 'awx_job_template_name': 'Placement: rolling reshape'})
    envvars = {
        'OS_CLIENT_CONFIG_FILE': str(clouds),
        'JOB_ID': '42', 'AWX_HOST': 'https://awx.example.invalid', 'INVENTORY_ID': '7',
        'PROJECT_REVISION': 'main',
        'ANSIBLE_COLLECTIONS_PATH': installed,
        'ANSIBLE_COLLECTIONS_SCAN_SYS_PATH': 'false',
        'ANSIBLE_CALLBACKS_ENABLED': 'placement.upgrade.rolling_progress',
        'ANSIBLE_FORKS': '1',       # the test server's SQLite answers concurrent writers "database is locked"
        'ANSIBLE_HOME': str(tmp_path / 'home' / '.ansible'),
        'HOME': str(tmp_path / 'home'),
        'PATH': BIN + os.pathsep + os.environ.get('PATH', ''),
    }
    (tmp_path / 'pdd').mkdir()
    result = ansible_runner.run(private_data_dir=str(tmp_path / 'pdd'), project_dir=project,
                                playbook='playbooks/rolling_reshape.yml', inventory=fleet['inventory'],
                                extravars=extravars, envvars=envvars, quiet=True,
                                cmdline='-e ansible_python_interpreter=%s' % os.path.join(BIN, 'python'))
    stdout = result.stdout.read()
    assert result.rc == 0 and result.status == 'successful', stdout[-6000:]
    # which collection ran: the one the project sync installed, not the checkout's working tree
    paths = set(e['event_data'].get('task_path', '').split(':')[0] for e in result.events
                if e.get('event') == 'playbook_on_task_start' and '/roles/' in e['event_data'].get('task_path', ''))
    assert paths and all(p.startswith(installed + os.sep) for p in paths), sorted(paths)[:5]
    # every node as the fleet expects, on the real Placement, nothing lost
    with open(os.path.join(report_dir, 'latest', 'summary.json')) as handle:
        summary = json.load(handle)
    assert dict((n['node'], n['status']) for n in summary['nodes']) == fleet['expected']
    assert os.path.isfile(os.path.join(report_dir, 'latest', 'report.html'))
    assert 'report' in stdout.lower()
    after = trees(fleet, rest_backend)
    for node in fleet['nodes']:
        old = comparable(before[node['name']])['allocations']
        new = comparable(after[node['name']])['allocations']
        assert sorted(old) == sorted(new)
