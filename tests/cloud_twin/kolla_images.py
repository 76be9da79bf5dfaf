# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kolla-shaped nova-compute images of the cloud twin, built on this machine (no registry here).

One image per nova release (``localhost/kolla/nova-compute:33`` and ``:34``), each a Debian bookworm
root filesystem with the release's nova venv and the twin's launcher in it:

* the root filesystem: ``debootstrap --variant=minbase bookworm`` from the Debian mirror, with the
  libraries the Python and the venvs' compiled modules load (``INCLUDE``: OpenSSL, SQLite, ncurses,
  readline, expat, libffi, ...), made once and kept as a tarball under tests/output/kolla-twin/;
* this machine's Python (pyenv 3.11.7, which the venvs are built on) at the same path,
  ``/root/.pyenv/versions/3.11.7`` (its stdlib and libpython; not its own site-packages or tests);
* the release's venv (``.venv-nova33`` / ``.venv-nova``) at kolla's path, ``/var/lib/kolla/venv``
  (kolla's images keep their service's venv there and put its bin on PATH; the scripts' first
  lines are rewritten to it), so ``nova-compute --version`` in the container is nova's own;
* the twin's launcher, tests/cloud_twin/compute.py with what it imports (nodes.py,
  tools/fakehost.py, tests/nova_oracle/mirror.py), under ``/var/lib/kolla/twin``;
* ``kolla_start`` (:data:`KOLLA_START`), the image's command as in kolla's images: kolla's
  ``set_configs.py`` in small (``KOLLA_CONFIG_STRATEGY=COPY_ALWAYS``: every file of
  ``/var/lib/kolla/config_files/config.json`` copied to its place at each start), then the command
  config.json names.

An image is rebuilt only when its inputs change: the label ``placement-upgrade.kolla-twin`` holds a
digest of the debootstrap settings, of the Python's and the venv's files (path, size, mtime), of the
launcher's files and of this file; an image of that tag with another digest is replaced.
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(REPO, 'tests', 'output', 'kolla-twin')
MIRROR = os.environ.get('KOLLA_TWIN_MIRROR', 'http://deb.debian.org/debian')
SUITE = 'bookworm'
INCLUDE = ('libssl3', 'libsqlite3-0', 'libncursesw6', 'libreadline8', 'libexpat1', 'libffi8', 'libnsl2',
           'libgdbm6', 'libgdbm-compat4', 'libbz2-1.0', 'liblzma5', 'libuuid1', 'zlib1g', 'ca-certificates',
           # nova's libvirt driver runs uptime (procps) for its host stats
           'procps')
PYTHON = '/root/.pyenv/versions/3.11.7'
#: the Python's parts not copied (its own packages and its test suite)
PYTHON_SKIP = ('lib/python3.11/site-packages', 'lib/python3.11/test', 'lib/python3.11/idlelib',
               'lib/python3.11/tkinter', 'lib/python3.11/turtledemo', 'lib/python3.11/lib2to3/tests')
VENV_IN_IMAGE = '/var/lib/kolla/venv'
TWIN_IN_IMAGE = '/var/lib/kolla/twin'
LAUNCHER_FILES = ('tests/cloud_twin/compute.py', 'tests/cloud_twin/nodes.py', 'tools/fakehost.py',
                  'tests/nova_oracle/mirror.py')
IMAGE = 'localhost/kolla/nova-compute:%s'
LIBVIRT_IMAGE = 'localhost/kolla/nova-libvirt:%s'
LABEL = 'placement-upgrade.kolla-twin'
VENVS = {'33': os.path.join(REPO, '.venv-nova33'),
         '34': os.environ.get('CLOUD_TWIN_NOVA_VENV') or os.path.join(REPO, '.venv-nova')}

KOLLA_START = '''#!%(venv)s/bin/python
# kolla_start of the cloud twin's kolla-shaped images: kolla's set_configs.py in small
# (KOLLA_CONFIG_STRATEGY=COPY_ALWAYS: the files of config.json copied at every start), then the
# command of config.json, which becomes this process (PID 1 of the container: podman stop's
# SIGTERM goes to it).
import json, os, shlex, shutil
with open('/var/lib/kolla/config_files/config.json') as handle:
    config = json.load(handle)
for item in config.get('config_files', []):
    dest = item['dest']
    if os.path.isdir(dest) or dest.endswith('/'):
        dest = os.path.join(dest, os.path.basename(item['source']))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copy(item['source'], dest)
    os.chmod(dest, int(item.get('perm', '0600'), 8))
# nova's extend_start: its log folder in the kolla_logs volume, the instances folder
os.makedirs('/var/log/kolla/nova', exist_ok=True)
os.makedirs('/var/lib/nova/instances', exist_ok=True)
argv = shlex.split(config['command'])
os.execvp(argv[0], argv)
'''


def _run(cmd, **kwargs):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False, **kwargs)
    if proc.returncode != 0:
        raise RuntimeError('%s: rc %d: %s' % (' '.join(cmd), proc.returncode, proc.stdout[-3000:]))
    return proc.stdout


def _listing(root, skip=()):
    """[(relative path, size, mtime)] of the files under ``root`` (symlinks as their target)."""
    found = []
    for folder, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(folder, root)
        dirs[:] = sorted(d for d in dirs if os.path.normpath(os.path.join(rel_dir, d)) not in skip
                         and d != '__pycache__')
        for name in sorted(files):
            path = os.path.join(folder, name)
            if os.path.islink(path):
                found.append((os.path.join(rel_dir, name), os.readlink(path), 0))
            else:
                stat = os.stat(path)
                found.append((os.path.join(rel_dir, name), stat.st_size, int(stat.st_mtime)))
    return found


def rootfs_key():
    return hashlib.sha256(json.dumps([MIRROR, SUITE, 'minbase', INCLUDE]).encode()).hexdigest()[:16]


def rootfs_tarball(timings):
    """The debootstrap root filesystem as a tarball, made once (cached by its settings)."""
    path = os.path.join(CACHE, 'rootfs-%s-%s.tar' % (SUITE, rootfs_key()))
    if os.path.exists(path):
        return path
    if shutil.which('debootstrap') is None:
        raise RuntimeError('debootstrap is not installed: `make deps` installs it (bindep.txt), '
                           'or apt-get install debootstrap')
    os.makedirs(CACHE, exist_ok=True)
    work = tempfile.mkdtemp(prefix='rootfs-', dir=CACHE)
    began = time.monotonic()
    try:
        _run(['debootstrap', '--variant=minbase', '--include=' + ','.join(INCLUDE), SUITE,
              os.path.join(work, 'rootfs'), MIRROR])
        timings['debootstrap (s)'] = time.monotonic() - began
        _unmount_under(work)
        _run(['tar', '-C', os.path.join(work, 'rootfs'), '--one-file-system', '-cf', path + '.tmp', '.'])
        os.replace(path + '.tmp', path)
    finally:
        # never a tree removal through a mount debootstrap left (its /proc, seen here once)
        if not _unmount_under(work):
            shutil.rmtree(work, ignore_errors=True)
    return path


def _mounts_under(folder):
    prefix = os.path.realpath(folder) + os.sep
    with open('/proc/mounts') as handle:
        points = [line.split()[1].replace('\\040', ' ') for line in handle]
    return sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True)


def _unmount_under(folder):
    """Unmount what debootstrap left mounted under ``folder`` (deepest first); the mounts still there."""
    for point in _mounts_under(folder):
        subprocess.run(['umount', point], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return _mounts_under(folder)


def image_key(release):
    venv = os.path.realpath(VENVS[release])
    parts = [rootfs_key(), release, venv, _listing(PYTHON, PYTHON_SKIP), _listing(venv)]
    for rel in LAUNCHER_FILES + (os.path.relpath(os.path.abspath(__file__), REPO),):
        with open(os.path.join(REPO, rel)) as handle:
            parts.append([rel, handle.read()])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:20]


def _label(image):
    proc = subprocess.run(['podman', 'image', 'inspect', '--format', '{{ index .Labels "%s" }}' % LABEL, image],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def _stage(staging, release, rootfs):
    venv = os.path.realpath(VENVS[release])
    _run(['tar', '-C', staging, '-xf', rootfs])
    # the Python, at its own path (the venv's python links there)
    target = staging + PYTHON
    os.makedirs(target)
    excludes = []
    for skip in PYTHON_SKIP:
        excludes += ['--exclude=./' + skip]
    tar = subprocess.Popen(['tar', '-C', PYTHON, '-cf', '-'] + excludes + ['.'], stdout=subprocess.PIPE)
    _run(['tar', '-C', target, '-xf', '-'], stdin=tar.stdout)
    if tar.wait() != 0:
        raise RuntimeError('tar of %s failed' % PYTHON)
    os.makedirs(os.path.join(target, 'lib', 'python3.11', 'site-packages'), exist_ok=True)
    # the release's venv at kolla's path, its scripts pointing there
    dest = staging + VENV_IN_IMAGE
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    _run(['cp', '-a', venv, dest])
    bin_dir = os.path.join(dest, 'bin')
    for name in os.listdir(bin_dir):
        path = os.path.join(bin_dir, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, 'rb') as handle:
            data = handle.read()
        if data.startswith(b'#!' + venv.encode() + b'/bin/'):
            with open(path, 'wb') as handle:
                handle.write(b'#!' + VENV_IN_IMAGE.encode() + data[2 + len(venv):])
    for rel in LAUNCHER_FILES:
        path = os.path.join(staging + TWIN_IN_IMAGE, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copy(os.path.join(REPO, rel), path)
    start = os.path.join(staging, 'usr', 'local', 'bin', 'kolla_start')
    os.makedirs(os.path.dirname(start), exist_ok=True)
    with open(start, 'w') as handle:
        handle.write(KOLLA_START % {'venv': VENV_IN_IMAGE})
    os.chmod(start, 0o755)
    for folder in ('etc/nova', 'etc/libvirt/qemu', 'var/lib/nova', 'var/lib/libvirt', 'var/log/kolla',
                   'var/lib/kolla/config_files'):
        os.makedirs(os.path.join(staging, folder), exist_ok=True)


def ensure_images(podman=('podman',)):
    """Both releases' images, built when missing or their inputs changed; returns (images, timings)."""
    timings = {}
    images = {}
    for release in ('33', '34'):
        image = IMAGE % release
        images[release] = image
        key = image_key(release)
        if _label(image) == key:
            continue
        rootfs = rootfs_tarball(timings)
        began = time.monotonic()
        staging = tempfile.mkdtemp(prefix='image-%s-' % release, dir=CACHE)
        try:
            _stage(staging, release, rootfs)
            timings['stage %s (s)' % release] = time.monotonic() - began
            began = time.monotonic()
            # the stale image goes with every tag of it made here (the libvirt tag of the old release)
            stale = [image] + ([LIBVIRT_IMAGE % release] if _label(LIBVIRT_IMAGE % release) is not None else [])
            if _label(image) is not None:
                subprocess.run(list(podman) + ['rmi', '--force'] + stale, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False)
            tar = subprocess.Popen(['tar', '-C', staging, '-cf', '-', '.'], stdout=subprocess.PIPE)
            _run(list(podman) + ['import', '--change', 'CMD ["kolla_start"]',
                                 '--change', 'ENV PATH=%s/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
                                 % VENV_IN_IMAGE,
                                 '--change', 'ENV KOLLA_BASE_DISTRO=debian',
                                 '--change', 'LABEL %s=%s' % (LABEL, key), '-', image], stdin=tar.stdout)
            if tar.wait() != 0:
                raise RuntimeError('tar of the staged image %s failed' % image)
            timings['import %s (s)' % release] = time.monotonic() - began
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    # nova_libvirt runs the old release's image (no libvirtd in it: fakelibvirt lives in nova-compute)
    _run(list(podman) + ['tag', images['33'], LIBVIRT_IMAGE % '33'])
    images['libvirt'] = LIBVIRT_IMAGE % '33'
    return images, timings


if __name__ == '__main__':
    began = time.monotonic()
    made, took = ensure_images()
    print(json.dumps({'images': made, 'timings': took, 'total (s)': time.monotonic() - began}, indent=1))
