#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The layering rules of docs/architecture.md, checked: every #include under lib/, hw/, tools/
and plugins/ is resolved to the file it names and the edge (the includer's layer -> the
header's layer) must be allowed by ALLOWED below, or be one of the named EXCEPTIONS (an edge
of today's tree that a later step of docs/driver-structure.md removes). A new edge fails the
test with the file, the line and the rule it breaks; an exception that no longer occurs fails
too, so the table never keeps a dead entry.

    check_layering.py SOURCE_ROOT
"""
import os
import re
import sys

# Layers by path prefix, most specific first. lib/common is header-only and layer-neutral
# (branch hints, clocks, whole-length I/O): every layer may use it.
LAYERS = [
    ('include/unvme/spec/', 'spec'),
    ('include/unvme/spec.h', 'spec'),
    ('include/unvme/', 'public'),
    ('lib/common/', 'common'),
    ('lib/util/', 'util'),
    ('lib/spec/', 'spec-print'),
    ('lib/driver/mp/', 'mp'),  # several processes: a layer on top of the driver's core
    ('lib/driver/', 'driver'),
    # lib/transport/<name>/: 'transport/<name>', by layer_of below
    # the fabrics layer: what every fabrics transport and the target share ('fabrics'), and
    # the pieces of one transport's wire that its host transport and the target share
    ('lib/fabrics/tcp/', 'fabrics/tcp'),
    ('lib/fabrics/rdma/', 'fabrics/rdma'),
    ('lib/fabrics/', 'fabrics'),
    ('lib/target/', 'target'),
    ('lib/hosttgt/', 'hosttgt'),
    ('lib/ftl/', 'ftl'),
    ('lib/hostkv/', 'hostkv'),
    ('lib/zoned/', 'zoned'),
    ('lib/kvsdk/', 'sdk'),
    ('lib/blobfs/', 'sdk'),
    ('hw/emu/emu_device.h', 'hw-slot'),  # the one header of the device the slot may see
    ('hw/', 'hw'),
    ('tools/bench/', 'bench'),
    ('tools/', 'tools'),
    ('plugins/', 'plugins'),
]

NEUTRAL = {'spec', 'common'}
HW = {'hw', 'hw-slot'}
# What each layer may include besides itself, NEUTRAL and the public header set ('public'),
# which every layer above hw may use. A transport ('transport', for every lib/transport/<name>/
# that has no line of its own) sees the driver core and the fabrics layer, never another
# transport; a fabrics transport sees its own wire's pieces of the fabrics layer too. The
# fabrics layer sees no transport: its transport-neutral part ('fabrics') not even a
# transport's wire pieces (so it can take no transport's struct), those pieces the neutral
# part at most.
ALLOWED = {
    'util': {'public'},
    'spec-print': {'public'},
    'hw': {'hw-slot'},                     # the device sees only the spec and lib/common
    'hw-slot': {'hw'},
    'driver': {'public', 'util'},          # never a transport, never the device, never mp
    # multi-process wraps a transport and listens to the controller's lifecycle: it sees the
    # core, nothing sees it (the core reaches it through the registry and events.c only)
    'mp': {'public', 'util', 'driver'},
    'transport': {'public', 'util', 'driver', 'fabrics'},
    'transport/tcp': {'public', 'util', 'driver', 'fabrics', 'fabrics/tcp'},
    'transport/rdma': {'public', 'util', 'driver', 'fabrics', 'fabrics/rdma'},
    'transport/emu': {'public', 'util', 'driver', 'hw-slot'},  # the only includer of the device
    'fabrics': {'public', 'util', 'driver'},  # no transport's internals, no transport's wire
    'fabrics/tcp': {'public', 'util', 'fabrics'},
    'fabrics/rdma': {'public', 'util', 'fabrics'},
    'target': {'public', 'util', 'driver', 'fabrics', 'fabrics/tcp', 'fabrics/rdma'},
    # the host targets: device models (the one header of the device) over the engines, with
    # transports that see the driver only through its transport interface (ALLOWED_HEADERS)
    'hosttgt': {'public', 'util', 'hw-slot', 'ftl', 'hostkv', 'zoned'},
    'ftl': {'public', 'util', 'zoned'},    # the engines: neither the device nor the driver
    'hostkv': {'public', 'util', 'zoned'},
    'zoned': {'public'},                   # zones through the driver's public API only
    'sdk': {'public'},                     # the SDK, tools and plugins: the public headers only
    'tools': {'public'},
    'plugins': {'public'},
    # the benchmarks measure internals, as tests do
    'bench': {'public', 'util', 'driver', 'ftl', 'hostkv', 'zoned', 'hw', 'hw-slot'},
}
# Fronts of libraries outside libunvme that the unvme tool runs: the target's API
# (`unvme target`) and the FUSE server (`unvme fuse`). The tool may include these headers.
ALLOWED_HEADERS = {
    ('tools', 'lib/target/target.h'),
    ('tools', 'plugins/fuse/blobfs_fuse.h'),
    # the library's error message (unvme_fail, unvme_errmsg) that every piece of libunvme sets
    ('hosttgt', 'lib/driver/errmsg.h'),
    # the host targets' transports register, attach and store their handle through the driver's
    # transport interface, never its controller (lib/driver/ctrlr.h)
    ('hosttgt', 'lib/driver/transport.h'),
}

# Edges today's tree has that break a rule, each named with the step that removes it
# (docs/driver-structure.md). (includer, header): why.
EXCEPTIONS = {
    ('hw/emu/ns/kv_crc.h', 'lib/util/crc.h'):
        'the device shares the CRC code of lib/util; left for later: crc joins lib/common '
        '(listed in docs/driver-structure.md)',
    ('plugins/fio/engine.c', 'lib/driver/qpair_submit.h'):
        'the fio engine submits through the inline fast path; left for later: a public inline '
        'submit header (listed in docs/driver-structure.md)',
}

# Headers of other projects or of the build, included by name.
EXTERNAL = {'fio.h', 'optgroup.h', 'unvme_build_config.h'}

SCANNED = ('lib', 'hw', 'tools', 'plugins')
SOURCE_EXT = ('.c', '.h', '.cc', '.cpp')
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def layer_of(rel):
    m = re.match(r'lib/transport/([^/]+)/', rel)
    if m:
        return 'transport/' + m.group(1)
    for prefix, name in LAYERS:
        if rel.startswith(prefix):
            return name
    return None


def sources(root):
    for top in SCANNED:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(d, f), root)


def resolve(root, includer, kind, name, by_basename):
    """The tree file an #include names (relative to root), None for a system or external one."""
    here = os.path.dirname(includer)
    cands = []
    if kind == '"':
        cands.append(os.path.join(here, name))
    # the include directories meson gives: include/, the tree root, include/unvme/kv (the
    # SDK's, tools' and plugins' "kv_apis.h")
    cands += [os.path.join('include', name), name, os.path.join('include/unvme/kv', name)]
    for c in cands:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    if kind == '<' or name in EXTERNAL:
        return None
    # a header found through a target's include_directories (tools/common, plugins/fuse):
    # the one file of that name in the same area, else in the tree
    area = includer.split('/')[0]
    found = by_basename.get(os.path.basename(name), [])
    if len(found) > 1:
        found = [p for p in found if p.split('/')[0] == area]
    if len(found) == 1:
        return found[0]
    raise SystemExit('%s: cannot resolve #include "%s" (%d candidates)' % (includer, name,
                                                                          len(found)))


def check(root):
    files = list(sources(root))
    by_basename = {}
    for f in files:
        by_basename.setdefault(os.path.basename(f), []).append(f)
    violations, used = [], set()
    nedges = 0
    for f in files:
        src = layer_of(f)
        if src is None:
            violations.append('%s: in no layer (add it to LAYERS)' % f)
            continue
        text = open(os.path.join(root, f), errors='replace').read()
        for m in INCLUDE_RE.finditer(text):
            kind, name = m.group(1), m.group(2)
            target = resolve(root, f, kind, name, by_basename)
            if target is None:
                continue
            dst = layer_of(target)
            nedges += 1
            if dst is None:
                violations.append('%s: includes %s, which is in no layer' % (f, target))
                continue
            if dst == src or dst in NEUTRAL or (dst == 'public' and src not in HW):
                continue
            allowed = ALLOWED.get(src, ALLOWED['transport'] if src.startswith('transport/')
                                  else set())
            if dst in allowed or (src, target) in ALLOWED_HEADERS:
                continue
            if (f, target) in EXCEPTIONS:
                used.add((f, target))
                continue
            line = text.count('\n', 0, m.start()) + 1
            violations.append('%s:%d: %s may not include %s (%s)' % (f, line, src, target, dst))
    for e in sorted(set(EXCEPTIONS) - used):
        violations.append('exception %s -> %s no longer occurs: remove it from EXCEPTIONS' % e)
    return violations, len(files), nedges


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    violations, nfiles, nedges = check(root)
    for v in violations:
        print(v)
    print('%d files, %d includes of the tree, %d exceptions, %d violations' % (
        nfiles, nedges, len(EXCEPTIONS), len(violations)))
    return 1 if violations else 0


if __name__ == '__main__':
    sys.exit(main())
