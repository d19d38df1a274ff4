#!/usr/bin/python3
"""docs/ARCHITECTURE.md's two routes (a spin-up, a Start) against the code.

Under "## Two routes, file by file", each `path` `function()` pair of a
step names a function the file defines: a line starting with the name and
" (" (the project's layout), or a BPF program's BPF_PROG (name, ...). Both
routes must be there, each with its steps numbered from 1 without a gap.
Fails naming each pair that is not true.
"""

import os
import re
import sys

SRC = os.environ.get('LM_SRCDIR') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIR = re.compile(r'`((?:service|common|client)/[\w./-]+\.[ch])`\s+`(\w+)\(\)`')
STEP = re.compile(r'^(\d+)\. ', re.M)


def section():
    text = open(os.path.join(SRC, 'docs', 'ARCHITECTURE.md'), encoding='utf-8').read()
    m = re.search(r'^## Two routes, file by file\n(.*?)(?=^## )', text, re.S | re.M)
    if not m:
        sys.exit('docs/ARCHITECTURE.md: no "## Two routes, file by file" section')
    return m.group(1)


def defines(path, name):
    with open(os.path.join(SRC, path), encoding='utf-8', errors='replace') as f:
        text = f.read()
    return re.search(r'^%s \(' % re.escape(name), text, re.M) is not None or \
        re.search(r'BPF_PROG \(%s,' % re.escape(name), text) is not None


def main():
    text = section()
    routes = re.split(r'^(?=A spin-up|A `Start` call)', text, flags=re.M)[1:]
    if [r.split(':')[0].split(',')[0] for r in routes] != ['A spin-up', 'A `Start` call']:
        sys.exit('the section must hold the spin-up route, then the Start route')
    bad = []
    pairs = 0
    for route in routes:
        steps = [int(n) for n in STEP.findall(route)]
        if len(steps) < 5 or steps != list(range(1, len(steps) + 1)):
            bad.append('%s: steps %s, not 1..N (at least 5)' % (route.split(':')[0], steps))
        for path, name in PAIR.findall(route.replace('\n   ', ' ').replace('\n    ', ' ')):
            pairs += 1
            if not os.path.isfile(os.path.join(SRC, path)):
                bad.append('%s: no such file' % path)
            elif not defines(path, name):
                bad.append('%s does not define %s()' % (path, name))
    if pairs < 20:
        bad.append('only %d file and function pairs found' % pairs)
    for b in bad:
        print('docs/ARCHITECTURE.md: ' + b)
    if bad:
        sys.exit(1)
    print('%d routes, %d file and function pairs, each defined where it says' % (len(routes), pairs))


if __name__ == '__main__':
    main()
