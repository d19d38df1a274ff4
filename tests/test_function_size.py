#!/usr/bin/python3
"""No function over 80 lines in service/ and client/ (issue 52): a longer
one does several things, and is split into functions named for them.

The project's layout (.clang-format, GNU style) puts a function's name at
the start of a line after its return type, and its braces alone in the
first column; the body is what lies between them. Checks that the reader
finds the functions it should (a long one in a sample, enough in the tree),
then fails with each function over the limit, its file and line.
"""

import os
import re
import sys

SRC = os.environ.get('LM_SRCDIR') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 80
ROOTS = ('service', 'client')
NAME = re.compile(r'^([A-Za-z_][A-Za-z0-9_]*) \(')


def functions(text):
    """(name, first line, body lines) of each function defined in @text."""
    lines = text.split('\n')
    i = 0
    while i < len(lines):
        m = NAME.match(lines[i])
        if m and i > 0 and lines[i - 1].strip() and not lines[i - 1].startswith((' ', '#', '/')):
            j = i
            while j < len(lines) and lines[j] != '{' and not lines[j].rstrip().endswith(';'):
                j += 1
            if j < len(lines) and lines[j] == '{':
                k = j + 1
                while k < len(lines) and lines[k] != '}':
                    k += 1
                yield m.group(1), i + 1, k - j - 1
                i = k
        i += 1


def c_files():
    for root in ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(SRC, root)):
            dirnames[:] = [d for d in dirnames if d != 'node_modules' and not d.startswith('.')]
            for name in filenames:
                if name.endswith('.c'):
                    yield os.path.join(dirpath, name)


def self_check():
    """The reader sees a declaration as none, a short and a long function."""
    body = '\n'.join('  x++;' for _ in range(LIMIT + 1))
    sample = ('static int one (void);\n\nstatic int\none (void)\n{\n  return 1;\n}\n\n'
              'void\nlong_one (int x,\n          int y)\n{\n%s\n}\n' % body)
    got = list(functions(sample))
    if got != [('one', 4, 1), ('long_one', 10, LIMIT + 1)]:
        sys.exit('the function reader is wrong on its sample: %r' % got)


def main():
    self_check()
    found, long = 0, []
    for path in sorted(c_files()):
        with open(path, encoding='utf-8', errors='replace') as f:
            for name, line, n in functions(f.read()):
                found += 1
                if n > LIMIT:
                    long.append('%s:%d: %s: %d lines' % (os.path.relpath(path, SRC), line, name, n))
    if found < 1000:
        sys.exit('only %d functions under %s: not the source tree?' % (found, ', '.join(ROOTS)))
    for entry in long:
        print('%s, more than %d' % (entry, LIMIT))
    if long:
        sys.exit(1)
    print('%d functions in %s, none over %d lines' % (found, ', '.join(ROOTS), LIMIT))


if __name__ == '__main__':
    main()
