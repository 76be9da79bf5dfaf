# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the mdevs a node's guests hold survive a reboot of the host (mdevctl).

A mediated device made with the kernel's ``create`` file (or by an older nova that did not
define the mdevs it created) is transient: it is gone after a reboot of the host.  nova 34 creates each new mdev through
libvirt, defined and set to start automatically (``_create_mdev``: ``nodeDeviceDefineXML``,
``setAutostart``), and at start-up starts only the mdevs that are DEFINED
(``_start_inactive_mediated_devices``): a guest whose mdev was transient cannot start after
the next reboot of its host.  libvirt creates and defines mdevs with ``mdevctl``, which keeps
each definition in ``/etc/mdevctl.d/<parent>/<uuid>`` (JSON: ``mdev_type``, ``start``
``auto`` or ``manual``; what ``mdevctl list --defined`` lists) and, through its udev rule,
starts the ``auto`` ones when their parent appears.

:func:`check` reads those definitions (it runs no command: mdevctl is only looked up) for
the mdevs a device report (:func:`.discovery.discover`) says guests hold;
:func:`problems` says what is wrong, per node, with the command that fixes each mdev.

Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

DEFAULT_MDEVCTL_DIR = '/etc/mdevctl.d'
#: where mdevctl is looked up besides PATH (as Ansible's get_bin_path does: mdevctl installs
#: in /usr/sbin, which a non-login PATH may lack)
SBIN_DIRS = ('/usr/local/sbin', '/usr/sbin', '/sbin')


def find_command(command, path=None, sbin=SBIN_DIRS):
    """The executable ``command`` names (a path, or a name looked up in ``path``, default PATH,
    then ``sbin``), or None."""
    if not command:
        return None
    if os.sep in command:
        return command if os.path.isfile(command) and os.access(command, os.X_OK) else None
    dirs = [d for d in (path if path is not None else os.environ.get('PATH', '')).split(os.pathsep) if d]
    for directory in dirs + [d for d in sbin if d not in dirs]:
        full = os.path.join(directory, command)
        if os.path.isfile(full) and os.access(full, os.X_OK):
            return full
    return None


def read_definitions(mdevctl_dir):
    """``({uuid: [{parent, type, start, file}]}, [unreadable file: reason])`` from mdevctl's store."""
    found, unreadable = {}, []
    if not mdevctl_dir or not os.path.isdir(mdevctl_dir):
        return found, unreadable
    for parent in sorted(os.listdir(mdevctl_dir)):
        pdir = os.path.join(mdevctl_dir, parent)
        if not os.path.isdir(pdir):
            continue
        for name in sorted(os.listdir(pdir)):
            path = os.path.join(pdir, name)
            if not os.path.isfile(path):
                continue
            try:
                with open(path, 'rb') as handle:
                    doc = json.loads(handle.read().decode('utf-8'))
            except (IOError, OSError) as exc:
                unreadable.append('%s: %s' % (path, exc.strerror or exc))
                continue
            except ValueError as exc:
                unreadable.append('%s: not JSON (%s)' % (path, exc))
                continue
            if not isinstance(doc, dict) or not doc.get('mdev_type'):
                unreadable.append('%s: no mdev_type' % path)
                continue
            found.setdefault(name.lower(), []).append({
                'parent': parent, 'type': str(doc.get('mdev_type')),
                'start': str(doc.get('start') or 'manual'), 'file': path})
    return found, unreadable


def check(report, mdevctl_dir=DEFAULT_MDEVCTL_DIR, mdevctl='mdevctl', path=None, sbin=SBIN_DIRS):
    """What a node's device report says of its mdevs' persistence.

    Returns ``{"mdev_node": bool, "mdevctl": path or None, "mdevctl_dir": dir,
    "held": n, "not_persistent": [{uuid, parent, type, instance, instance_name, active, defined_on}],
    "unreadable": [...]}``; ``mdev_node`` is true when the node has mdev parents or a guest
    names an mdev.  An mdev is persistent when mdevctl defines it on the parent it is active on
    (any parent when it is not active).
    """
    active = {}
    for gpu in report.get('gpus') or []:
        for mdev in gpu.get('mdevs') or []:
            active[str(mdev['uuid']).lower()] = {'parent': gpu['address'], 'type': mdev.get('type')}
    held = []
    for instance in sorted(report.get('instances') or {}):
        info = report['instances'][instance] or {}
        for uuid in info.get('mdevs') or []:
            held.append((str(uuid).lower(), instance, info.get('name')))
    mdev_node = bool(report.get('gpus')) or bool(held)
    result = {'mdev_node': mdev_node, 'mdevctl': None, 'mdevctl_dir': mdevctl_dir, 'held': len(held),
              'not_persistent': [], 'unreadable': []}
    if not mdev_node:
        return result
    result['mdevctl'] = find_command(mdevctl, path, sbin)
    definitions, result['unreadable'] = read_definitions(mdevctl_dir)
    for uuid, instance, name in held:
        now = active.get(uuid)
        defined = definitions.get(uuid) or []
        parents = [d['parent'] for d in defined]
        if (now is not None and now['parent'] in parents) or (now is None and defined):
            continue
        first = defined[0] if defined else {}
        result['not_persistent'].append({
            'uuid': uuid, 'parent': now['parent'] if now else first.get('parent'),
            'type': now['type'] if now else first.get('type'), 'instance': instance,
            'instance_name': name, 'active': now is not None, 'defined_on': parents})
    return result


def define_command(mdev):
    """The mdevctl command (run on the node) that defines ``mdev`` persistently, started at boot."""
    words = ['mdevctl', 'define', '--auto', '--uuid', mdev['uuid']]
    if mdev.get('parent'):
        words += ['--parent', mdev['parent']]
    if mdev.get('type'):
        words += ['--type', mdev['type']]
    return ' '.join(words)


def problems(node, result):
    """Sentences (none when all is well) about one node's :func:`check` result."""
    if result and result.get('error'):
        return ['%s: its mdevs could not be checked: %s' % (node, result['error'])]
    if not result or not result.get('mdev_node'):
        return []
    out = []
    where = result.get('mdevctl_dir') or DEFAULT_MDEVCTL_DIR
    if not result.get('mdevctl'):
        out.append('%s: mdevctl is not installed (not found in PATH, %s): libvirt creates and defines '
                   'mdevs with it (nova 34 creates each new vGPU through libvirt), and without it no mdev '
                   'is started again after a reboot of the host' % (node, ', '.join(SBIN_DIRS)))
    for text in result.get('unreadable') or []:
        out.append('%s: an mdevctl definition cannot be read: %s' % (node, text))
    lost = result.get('not_persistent') or []
    if lost:
        items = []
        for mdev in lost:
            holder = mdev.get('instance_name') or mdev['instance']
            if mdev.get('instance_name'):
                holder = '%s (%s)' % (mdev['instance_name'], mdev['instance'])
            state = 'on parent %s' % mdev['parent'] if mdev.get('parent') else 'not active, parent unknown'
            if mdev.get('defined_on'):
                state += ', defined on %s only' % ', '.join(mdev['defined_on'])
            items.append('%s %s, held by %s' % (mdev['uuid'], state, holder))
        fixes = [define_command(m) for m in lost if m.get('parent') and m.get('type')]
        text = ('%s: %d mdev(s) held by guests are not defined persistently (no %s/<parent>/<uuid>, what '
                '`mdevctl list --defined` lists): %s. A reboot of the host loses them, and nova 34 starts '
                'only defined mdevs, so their guests cannot start again'
                % (node, len(lost), where, '; '.join(items)))
        if fixes:
            text += '. Define them on %s: %s' % (node, '; '.join(fixes))
        out.append(text)
    return out
