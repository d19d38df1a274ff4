#!/usr/bin/python3
"""No C file or header of the project over 600 lines (issue 38): a file
that long holds more than one concern and is split by what it owns.

Walks service/, client/, common/ and tests/ in the source tree (build
directories and node_modules are not there), and fails with each file
and its length.
"""

import os
import sys

SRC = os.environ.get('LM_SRCDIR') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 600
ROOTS = ('service', 'client', 'common', 'tests')


def c_files():
    for root in ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(SRC, root)):
            dirnames[:] = [d for d in dirnames if d != 'node_modules' and not d.startswith('.')]
            for name in filenames:
                if name.endswith(('.c', '.h')):
                    yield os.path.join(dirpath, name)


def main():
    files = sorted(c_files())
    if len(files) < 100:
        sys.exit(f'only {len(files)} C files under {", ".join(ROOTS)}: not the source tree?')
    long = []
    for path in files:
        with open(path, encoding='utf-8', errors='replace') as f:
            n = sum(1 for _ in f)
        if n > LIMIT:
            long.append((os.path.relpath(path, SRC), n))
    for path, n in long:
        print(f'{path}: {n} lines, more than {LIMIT}')
    if long:
        sys.exit(1)
    print(f'{len(files)} C files, none over {LIMIT} lines')


if __name__ == '__main__':
    main()
