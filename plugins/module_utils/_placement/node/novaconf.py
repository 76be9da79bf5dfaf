# -*- coding: utf-8 -*-
# Copyright: (c) 2026, placement.upgrade contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nova.conf as nova 34 reads it, for the options that decide a node's provider tree.

nova-compute lays out its provider tree from its configuration; so must we.  This
module reads a node's ``nova.conf`` plus ``nova.conf.d/*.conf`` (oslo.config
order: the file first, then the directory's files sorted by name, later values
win; a MultiStrOpt such as ``[pci]device_spec`` collects every line) and returns
the options nova 34 uses for the layout, with nova's defaults and types:

* ``[devices]enabled_mdev_types`` and, per type, ``[mdev_<type>]device_addresses``,
  ``mdev_class`` (``VGPU`` or ``CUSTOM_*``) and ``max_instances``
  (nova/conf/devices.py, nova/virt/libvirt/driver.py ``_get_supported_vgpu_types``);
* ``[pci]report_in_placement``, ``[pci]device_spec`` (also its deprecated names
  ``[pci]passthrough_whitelist`` and ``[DEFAULT]pci_passthrough_whitelist``) and
  ``[pci]alias`` (nova/conf/pci.py, nova/pci/devspec.py);
* ``[compute]cpu_dedicated_set`` / ``cpu_shared_set``, ``[DEFAULT]reserved_host_*``
  and the allocation ratios.

:func:`spec_matches` is nova's device_spec matching (``PciDeviceSpec.match``):
vendor/product ids (``*`` wildcards), an address in glob form
(``"*:0a:00.*"``) or regex form (``{"domain": ".*", "bus": "02", ...}``), and a
single PF address also matching that PF's VFs.

The result is plain data that the device report carries (``report["nova_conf"]``),
so the layout can be computed where the reshape runs and the report says what
was read.  Plain Python: no Ansible import here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import os
import re

from ..errors import NOVA_CONF, LocalFileError
from ..rules import names as name_rules
from .discover import sysfs as _sysfs

NOVACONF_CODE = NOVA_CONF  # the catalog's (errors.py); its name here for the callers
DEFAULT_NOVA_CONF = '/etc/nova/nova.conf'

_SECTION_RE = re.compile(r'^\[([^\]]+)\]\s*$')
_TRUE = ('1', 'true', 'yes', 'on', 'y', 't')
_FALSE = ('0', 'false', 'no', 'off', 'n', 'f', '')
ANY = '*'
_REGEX_ANY = '.*'


class NovaConfError(LocalFileError):
    """nova.conf cannot be read or holds a value nova itself would refuse; names file and option."""

    default_code = NOVACONF_CODE
    default_title = 'nova.conf Error'


# -- reading the files ----------------------------------------------------------------------

def parse_text(text, source, into=None):
    """oslo.config INI text -> ``{section: {option: [values in order]}}`` (merged into ``into``).

    Option and section names are kept as written, except that ``DEFAULT`` is
    the default section.  Continuation lines (leading whitespace) extend the
    previous value, as oslo.config's parser does.
    """
    out = into if into is not None else {}
    section = None
    last = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith('#') or stripped.startswith(';'):
            last = None
            continue
        if raw[:1] in (' ', '\t') and last is not None:
            values = out[last[0]][last[1]]
            values[-1] = (values[-1] + '\n' + stripped).strip()
            continue
        match = _SECTION_RE.match(stripped)
        if match:
            section = match.group(1).strip()
            out.setdefault(section, {})
            last = None
            continue
        if section is None:
            raise NovaConfError('%s line %d: option outside of any [section]: %r'
                                % (source, number, stripped), path=source)
        sep = None
        for candidate in ('=', ':'):
            pos = stripped.find(candidate)
            if pos > 0 and (sep is None or pos < sep):
                sep = pos
        if sep is None:
            raise NovaConfError('%s line %d: expected "option = value", got %r'
                                % (source, number, stripped), path=source)
        key = stripped[:sep].strip()
        value = stripped[sep + 1:].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in ('"', "'"):
            value = value[1:-1]
        out[section].setdefault(key, []).append(value)
        last = (section, key)
    return out


def config_files(path=DEFAULT_NOVA_CONF, conf_dir=None):
    """The files oslo.config would read for ``--config-file path`` + ``--config-dir``.

    ``conf_dir`` defaults to ``<path>.d`` (``/etc/nova/nova.conf.d``); only its
    ``*.conf`` files count, sorted by name.  Missing files are left out.
    """
    files = []
    if path and os.path.isfile(path):
        files.append(path)
    if conf_dir is None and path:
        conf_dir = path + '.d'
    if conf_dir and os.path.isdir(conf_dir):
        for name in sorted(os.listdir(conf_dir)):
            full = os.path.join(conf_dir, name)
            if name.endswith('.conf') and os.path.isfile(full):
                files.append(full)
    return files


def read_raw(files):
    """Parse ``files`` in order into one ``{section: {option: [values]}}``.

    A single-valued option takes the LAST value given (a later file wins); a
    multi-valued one collects them all, as oslo.config does for MultiStrOpt.
    """
    raw = {}
    for path in files:
        try:
            with open(path, 'rb') as handle:
                text = handle.read().decode('utf-8')
        except (IOError, OSError) as exc:
            raise NovaConfError('cannot read %s: %s' % (path, exc.strerror or exc), path=path)
        except UnicodeDecodeError as exc:
            raise NovaConfError('cannot read %s: not UTF-8 text (%s)' % (path, exc), path=path)
        parse_text(text, path, into=raw)
    return raw


# -- typed options (nova's defaults) -----------------------------------------------------------

def _last(raw, section, option, default=None):
    values = (raw.get(section) or {}).get(option)
    return values[-1] if values else default


def _where(section, option):
    return '[%s]%s' % (section, option)


def _bool(raw, section, option, default, source):
    value = _last(raw, section, option)
    if value is None:
        return default
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise NovaConfError('%s: %s = %r is not a boolean' % (source, _where(section, option), value))


def _number(raw, section, option, default, source, cast, what):
    value = _last(raw, section, option)
    if value is None or value.strip() == '':
        return default
    try:
        return cast(value.strip())
    except ValueError:
        raise NovaConfError('%s: %s = %r is not %s' % (source, _where(section, option), value, what))


def _int(raw, section, option, default, source, minimum=None):
    number = _number(raw, section, option, default, source, int, 'an integer')
    if number is not None and minimum is not None and number < minimum:
        raise NovaConfError('%s: %s = %d is below the minimum %d'
                            % (source, _where(section, option), number, minimum))
    return number


def _float(raw, section, option, default, source):
    number = _number(raw, section, option, default, source, float, 'a number')
    if number is not None and (math.isnan(number) or number < 0):
        raise NovaConfError('%s: %s = %r must be a number >= 0'
                            % (source, _where(section, option), _last(raw, section, option)))
    return number


def parse_cpu_spec(spec):
    """nova's CPU set syntax (nova/virt/hardware.py parse_cpu_spec): ``"1-4,^3,6"``."""
    ids, reject = set(), set()
    for rule in str(spec).split(','):
        rule = rule.strip()
        if not rule:
            continue
        parts = rule.split('-', 1)
        if len(parts) > 1:
            neg = parts[0].startswith('^')
            if neg:
                parts[0] = parts[0][1:]
            try:
                start, end = [int(p.strip()) for p in parts]
            except ValueError:
                raise ValueError('invalid range expression %r' % rule)
            if start > end:
                raise ValueError('invalid range expression %r' % rule)
            (reject if neg else ids).update(range(start, end + 1))
        elif rule.startswith('^'):
            try:
                reject.add(int(rule[1:].strip()))
            except ValueError:
                raise ValueError('invalid exclusion expression %r' % rule)
        else:
            try:
                ids.add(int(rule))
            except ValueError:
                raise ValueError('invalid inclusion expression %r' % rule)
    return ids - reject


def _cpus(raw, section, option, source):
    """A CPU set option as a sorted list, or None when unset (nova: '' is unset)."""
    value = _last(raw, section, option)
    if value is None or not value.strip():
        return None
    try:
        cpus = parse_cpu_spec(value)
    except ValueError as exc:
        raise NovaConfError('%s: %s = %r: %s' % (source, _where(section, option), value, exc))
    if not cpus:
        raise NovaConfError('%s: %s = %r leaves no CPU' % (source, _where(section, option), value))
    return sorted(cpus)


def _list(raw, section, option, default=None):
    value = _last(raw, section, option)
    if value is None:
        return list(default or [])
    return [item.strip() for item in value.split(',') if item.strip()]


def _multi(raw, candidates):
    """Values of a MultiStrOpt, from its name and its deprecated names, in order."""
    out = []
    for section, option in candidates:
        out.extend((raw.get(section) or {}).get(option) or [])
    return out


def _normalize_address(text, source, where):
    try:
        return _sysfs.normalize_address(text)
    except ValueError:
        raise NovaConfError('%s: %s names %r, which is not a PCI address (DDDD:BB:SS.F)'
                            % (source, where, text))


def _parse_device_spec(value, source, index):
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise NovaConfError('%s: [pci]device_spec #%d is not valid JSON (%s): %r'
                            % (source, index, exc, value))
    items = parsed if isinstance(parsed, list) else [parsed]
    specs = []
    for item in items:
        if not isinstance(item, dict):
            raise NovaConfError('%s: [pci]device_spec #%d must be a JSON object (or a list of '
                                'objects), got %r' % (source, index, item))
        spec = {}
        for key, val in item.items():
            if key == 'address' and isinstance(val, dict):
                spec[key] = dict((str(k), str(v)) for k, v in val.items())
            elif isinstance(val, bool):
                spec[str(key)] = 'true' if val else 'false'
            else:
                spec[str(key)] = str(val)
        specs.append(spec)
    return specs


def read(path=DEFAULT_NOVA_CONF, conf_dir=None):
    """Read nova.conf (+ conf.d) and return the layout-relevant options, or None.

    None means no file was found: the caller decides what that means (the
    layout then falls back to its own options and says so).  Returns::

        {"files": [paths read], "set": ["[section]option", ...],
         "devices": {"enabled_mdev_types": [..]},
         "mdev_types": {type: {"device_addresses": [..], "mdev_class": "VGPU",
                               "max_instances": int|None}},
         "pci": {"report_in_placement": bool, "device_spec": [spec], "alias": [..]},
         "compute": {"cpu_dedicated_set": str|None, "cpu_shared_set": str|None},
         "default": {"reserved_host_memory_mb": 512, "reserved_host_cpus": 0,
                     "reserved_host_disk_mb": 0, "cpu_allocation_ratio": None, ...}}
    """
    files = config_files(path, conf_dir)
    if not files:
        return None
    raw = read_raw(files)
    return interpret(raw, files)


def interpret(raw, files=None):
    """``{section: {option: [values]}}`` -> the typed options (see :func:`read`)."""
    files = list(files or [])
    source = ' + '.join(files) or 'nova.conf'
    enabled = _list(raw, 'devices', 'enabled_mdev_types')
    mdev_types = {}
    for mtype in enabled:
        group = 'mdev_%s' % mtype
        legacy = 'vgpu_%s' % mtype
        addresses = _list(raw, group, 'device_addresses', _list(raw, legacy, 'device_addresses'))
        mdev_class = _last(raw, group, 'mdev_class', 'VGPU').strip()
        if mdev_class != 'VGPU' and not name_rules.is_valid_custom_name(mdev_class):
            raise NovaConfError('%s: [%s]mdev_class = %r: nova accepts only VGPU or CUSTOM_[A-Z0-9_]+'
                                % (source, group, mdev_class))
        mdev_types[mtype] = {
            'device_addresses': [_normalize_address(a, source, '[%s]device_addresses' % group)
                                 for a in addresses],
            'mdev_class': mdev_class,
            'max_instances': _int(raw, group, 'max_instances', None, source, minimum=1),
        }
    specs = []
    for index, value in enumerate(_multi(raw, [('pci', 'device_spec'), ('pci', 'passthrough_whitelist'),
                                               ('DEFAULT', 'pci_passthrough_whitelist')]), 1):
        specs.extend(_parse_device_spec(value, source, index))
    set_options = sorted('[%s]%s' % (section, option)
                         for section, options in raw.items() for option in options)
    return {
        'files': files,
        'set': set_options,
        'devices': {'enabled_mdev_types': enabled},
        'mdev_types': mdev_types,
        'pci': {
            'report_in_placement': _bool(raw, 'pci', 'report_in_placement', False, source),
            'device_spec': specs,
            'alias': _multi(raw, [('pci', 'alias'), ('DEFAULT', 'pci_alias')]),
        },
        'compute': {
            'cpu_dedicated_set': _cpus(raw, 'compute', 'cpu_dedicated_set', source),
            'cpu_shared_set': _cpus(raw, 'compute', 'cpu_shared_set', source),
            'vcpu_pin_set': _cpus(raw, 'DEFAULT', 'vcpu_pin_set', source),
        },
        'libvirt': {
            # memory encryption (nova/virt/libvirt/host.py): TDX needs host-passthrough
            'cpu_mode': _last(raw, 'libvirt', 'cpu_mode'),
            'num_intel_tdx_guests': _int(raw, 'libvirt', 'num_intel_tdx_guests', None, source, 0),
        },
        'default': {
            'reserved_host_memory_mb': _int(raw, 'DEFAULT', 'reserved_host_memory_mb', 512, source, 0),
            'reserved_host_cpus': _int(raw, 'DEFAULT', 'reserved_host_cpus', 0, source, 0),
            'reserved_host_disk_mb': _int(raw, 'DEFAULT', 'reserved_host_disk_mb', 0, source, 0),
            'cpu_allocation_ratio': _float(raw, 'DEFAULT', 'cpu_allocation_ratio', None, source),
            'ram_allocation_ratio': _float(raw, 'DEFAULT', 'ram_allocation_ratio', None, source),
            'disk_allocation_ratio': _float(raw, 'DEFAULT', 'disk_allocation_ratio', None, source),
        },
    }


# -- [pci]device_spec matching (nova/pci/devspec.py) -------------------------------------------

def _hex_field(value, width):
    value = str(value).strip().lower()
    if value in ('', ANY):
        return ANY
    if value.startswith('0x'):
        value = value[2:]
    return value.rjust(width, '0')


def _split_address(address):
    domain, bus, rest = address.split(':')
    slot, func = rest.split('.')
    return domain.lower(), bus.lower(), slot.lower(), func.lower()


def _glob_fields(text):
    """nova's PciAddressGlobSpec: "[[[[domain]:]bus]:][slot][.[function]]", blanks are wildcards."""
    dbs, _sep, func = text.partition('.')
    fields = [ANY, ANY, ANY, _hex_field(func, 1) if func.strip() else ANY]
    if dbs:
        parts = dbs.split(':')
        if len(parts) > 3:
            raise ValueError(text)
        parts = [ANY] * (3 - len(parts)) + parts
        fields[0] = _hex_field(parts[0], 4) if parts[0].strip() else ANY
        fields[1] = _hex_field(parts[1], 2) if parts[1].strip() else ANY
        fields[2] = _hex_field(parts[2], 2) if parts[2].strip() else ANY
    return fields


def _address_matches(spec_address, address):
    fields = _split_address(address)
    if isinstance(spec_address, dict):
        keys = ('domain', 'bus', 'slot', 'function')
        return all(re.match(spec_address.get(k, _REGEX_ANY), fields[i]) for i, k in enumerate(keys))
    want = _glob_fields(spec_address)
    return all(w in (ANY, f) for w, f in zip(want, fields))


def _single_address(spec_address):
    """The address of a glob spec naming exactly one function, else None."""
    if isinstance(spec_address, dict):
        return None
    try:
        fields = _glob_fields(spec_address)
    except ValueError:
        return None
    if ANY in fields:
        return None
    return '%s:%s:%s.%s' % tuple(fields)


def spec_matches(spec, address, vendor_id, product_id, parent_addr=None, pf_addresses=()):
    """True when ``spec`` (one parsed device_spec) matches the device, as nova matches it.

    ``parent_addr`` is the PF of a VF; ``pf_addresses`` are the node's SR-IOV PFs: a
    spec whose address names one PF exactly also matches that PF's VFs.  A spec
    with ``devname`` matches nothing here (nova matches it by netdev name, and
    refuses it with ``report_in_placement``).
    """
    if spec.get('devname'):
        return False
    if _hex_field(spec.get('vendor_id', ANY), 4) not in (ANY, _hex_field(vendor_id, 4)):
        return False
    if _hex_field(spec.get('product_id', ANY), 4) not in (ANY, _hex_field(product_id, 4)):
        return False
    spec_address = spec.get('address', '*:*:*.*')
    try:
        single = _single_address(spec_address)
        if single is not None and parent_addr and single in set(a.lower() for a in pf_addresses):
            if single == parent_addr.lower():
                return True
        return _address_matches(spec_address, address)
    except (ValueError, re.error):
        raise NovaConfError('[pci]device_spec %s has an address nova cannot parse: %r'
                            % (json.dumps(spec, sort_keys=True), spec_address))


def spec_tags(spec):
    """The tags of a device_spec: every key but the matching ones (nova's ``get_tags``)."""
    return dict((k, v) for k, v in spec.items()
                if k not in ('vendor_id', 'product_id', 'address', 'devname'))


def matching_spec(specs, address, vendor_id, product_id, parent_addr=None, pf_addresses=()):
    """The first device_spec that matches (nova's ``Whitelist.get_devspec``), or None."""
    for spec in specs or []:
        if spec_matches(spec, address, vendor_id, product_id, parent_addr, pf_addresses):
            return spec
    return None


# -- nova-compute's own credentials for Placement ([placement]) --------------------------------

PLACEMENT_SECTION = 'placement'


def _section_options(raw, section):
    """``{option: last value}`` of one section, option names as oslo.config's ``dest`` (``-`` -> ``_``)."""
    out = {}
    for option, values in sorted((raw.get(section) or {}).items()):
        if values:
            out[option.replace('-', '_')] = values[-1]
    return out


def placement_section(path=DEFAULT_NOVA_CONF, conf_dir=None, is_secret=None):
    """nova-compute's ``[placement]`` options, as nova 34 hands them to keystoneauth, or None.

    nova registers keystoneauth's auth, session and adapter options in ``[placement]``
    (nova/conf/placement.py, ``register_ksa_opts``); keystoneauth takes the auth plugin's
    options from the section ``auth_section`` names when it is set.  Nothing is interpreted
    here: the values are the text of the files (the last one of each option, a later file
    winning), for the caller to load as keystoneauth does.  Returns None when no file exists,
    else::

        {"files": [paths read], "options": {option: value},   # [placement], secrets left out
         "auth_section": name or None,
         "auth": {option: value},                             # where the auth options are
         "secrets": {option: value}}                          # the auth options holding a secret

    ``is_secret``: ``is_secret(option) -> bool`` (which options hold a secret); their values go
    only in ``secrets`` (the caller keeps them out of every log).
    """
    files = config_files(path, conf_dir)
    if not files:
        return None
    raw = read_raw(files)
    options = _section_options(raw, PLACEMENT_SECTION)
    auth_section = options.get('auth_section') or None
    auth = _section_options(raw, auth_section) if auth_section else dict(options)
    is_secret = is_secret or (lambda name: False)
    # (with auth_section, a secret in [placement] itself is not read by keystoneauth: left out)
    secrets = dict((k, v) for k, v in auth.items() if is_secret(k))
    options = dict((k, v) for k, v in options.items() if not is_secret(k))
    auth = dict((k, v) for k, v in auth.items() if not is_secret(k))
    found = {'files': files, 'options': options, 'auth_section': auth_section, 'auth': auth,
             'secrets': secrets}
    if options.get('cafile'):
        found['ca'] = node_ca(options['cafile'], path)
    return found


#: kolla-ansible's nova.conf on the host: /etc/kolla/<service>/nova.conf (any prefix: a test's tree)
_KOLLA_CONF_RE = re.compile(r'^(?P<service_dir>.*/etc/kolla/(?P<service>[^/]+))/[^/]+$')
#: where kolla's config.json copies the service's config folder (/var/lib/kolla/config_files) to
_KOLLA_NOVA_DIR = '/etc/nova/'


def _read_text(path):
    with open(path) as handle:
        return handle.read()


def node_ca(cafile, nova_conf):
    """The CA nova-compute verifies Placement and Keystone with, read on the node:
    ``{cafile, read: [paths], pem: text}``, or ``{cafile, missing: why}``.

    nova.conf's ``cafile`` is a path where nova-compute runs.  Outside kolla that is the node
    itself: the file at that path.  Under kolla-ansible (``nova_conf`` is the host's
    ``/etc/kolla/<service>/nova.conf``) it is a path in the container: one under ``/etc/nova/`` is a
    file config.json copied from the service's folder (``/etc/kolla/<service>/<rest>``); any other
    (the container's system bundle, kolla's ``openstack_cacert``) holds the CA certificates kolla
    adds to that bundle (``kolla_copy_ca_into_containers``: ``/etc/kolla/<service>/ca-certificates/
    *.crt``).  The text (public certificates, no secret) is what the controller's probe verifies
    with, not a file of the controller that may hold another CA."""
    kolla = _KOLLA_CONF_RE.match(nova_conf or '')
    if not kolla:
        if os.path.isfile(cafile):
            try:
                return {'cafile': cafile, 'read': [cafile], 'pem': _read_text(cafile)}
            except (IOError, OSError, UnicodeDecodeError) as exc:
                return {'cafile': cafile, 'missing': '[placement] cafile %s cannot be read on the node: %s'
                        % (cafile, exc)}
        return {'cafile': cafile, 'missing': '[placement] cafile %s: no such file on the node' % cafile}
    service_dir, service = kolla.group('service_dir'), kolla.group('service')
    where = "[placement] cafile %s is a path in kolla's %s container" % (cafile, service)
    if cafile.startswith(_KOLLA_NOVA_DIR):
        paths = [os.path.join(service_dir, cafile[len(_KOLLA_NOVA_DIR):])]
        looked = '%s, the file kolla copies to %s' % (paths[0], cafile)
        paths = [p for p in paths if os.path.isfile(p)]
    else:
        folder = os.path.join(service_dir, 'ca-certificates')
        looked = "%s/*.crt, the CA certificates kolla adds to the container's system bundle" % folder
        paths = sorted(os.path.join(folder, n) for n in (os.listdir(folder) if os.path.isdir(folder) else [])
                       if n.endswith('.crt') and os.path.isfile(os.path.join(folder, n)))
    if not paths:
        return {'cafile': cafile, 'missing': '%s: no CA of it on the node (looked for %s)' % (where, looked)}
    try:
        texts = [_read_text(p) for p in paths]
    except (IOError, OSError, UnicodeDecodeError) as exc:
        return {'cafile': cafile, 'missing': '%s: %s' % (where, exc)}
    return {'cafile': cafile, 'read': paths, 'pem': ''.join(t if t.endswith('\n') else t + '\n' for t in texts)}
