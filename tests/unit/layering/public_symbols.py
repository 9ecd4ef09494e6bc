#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The library's public names, three ways, which must agree: the functions the public headers
declare with an export marker (UNVME_API, KV_API), the version script lib/unvme.map, and what
libunvme.so exports (nm -D) and libunvme.a keeps global (nm -g).

    public_symbols.py SOURCE_ROOT LIBUNVME_SO LIBUNVME_A   checks them
    public_symbols.py SOURCE_ROOT --map                     prints the map for the headers
"""
import os
import re
import subprocess
import sys

MARKERS = ('UNVME_API', 'KV_API')
DECL_RE = re.compile(r'\b(?:%s)\b[^;{()]*?\b([A-Za-z_]\w*)\s*\(' % '|'.join(MARKERS))


def declared(root):
    names = set()
    for d, dirs, files in os.walk(os.path.join(root, 'include/unvme')):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith('.h'):
                continue
            text = open(os.path.join(d, f)).read()
            text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
            text = re.sub(r'//[^\n]*', ' ', text)
            text = '\n'.join(l for l in text.split('\n') if not l.lstrip().startswith('#'))
            names.update(DECL_RE.findall(text))
    return names


def in_map(root):
    text = open(os.path.join(root, 'lib/unvme.map')).read()
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    m = re.search(r'global:(.*?)local:', text, re.S)
    return {n.strip() for n in m.group(1).split(';') if n.strip()}


def nm(args, lib):
    out = subprocess.run(['nm'] + args + [lib], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()  # "address type name" for every defined symbol
        if len(parts) == 3 and parts[1] != 'A':  # not the version node (UNVME_1)
            names.add(parts[2].split('@')[0])
    return names


def compare(what, got, want):
    bad = []
    for n in sorted(got - want):
        bad.append('%s: %s is there but not declared in a public header' % (what, n))
    for n in sorted(want - got):
        bad.append('%s: %s is declared in a public header but missing' % (what, n))
    return bad


def main():
    root = sys.argv[1]
    decl = declared(root)
    if sys.argv[2:] == ['--map']:
        print('UNVME_1 {\nglobal:\n' + ''.join('\t%s;\n' % n for n in sorted(decl)) +
              'local:\n\t*;\n};')
        return 0
    so, a = sys.argv[2], sys.argv[3]
    bad = compare('lib/unvme.map', in_map(root), decl)
    bad += compare('libunvme.so', nm(['-D', '--defined-only'], so), decl)
    bad += compare('libunvme.a', nm(['-g', '--defined-only'], a), decl)
    for b in bad:
        print(b)
    print('%d public names; %d disagreements' % (len(decl), len(bad)))
    if bad:
        print('a new public function is declared with UNVME_API (or KV_API) and listed in '
              'lib/unvme.map (public_symbols.py SOURCE_ROOT --map prints it)')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
