#!/usr/bin/python3
"""The journal's inside is private: the functions service/journal/
lm-journal-private.h declares (remember, mark, forget, check, the
transaction's steps...) are called only in service/journal/, and the
header is included only there, in service/, client/ and common/ (the unit
tests may include it). Everyone else goes through lm-journal.h's whole
operations on a declared part.

The names are read from the header itself, so a new private function is
covered without touching this test. Fails with each file:line that calls
or includes one.
"""

import os
import re
import sys

# The tree's C files as test_layers.py walks them (service/, client/, common/).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_layers import SRC, sources  # noqa: E402

HEADER = 'service/journal/lm-journal-private.h'
INSIDE = 'service/journal/'


def strip_comments(line, state):
    """The line without its comments; state[0] is True inside /* */."""
    out = ''
    i = 0
    while i < len(line):
        if state[0]:
            end = line.find('*/', i)
            if end < 0:
                return out
            state[0] = False
            i = end + 2
        elif line.startswith('/*', i):
            state[0] = True
            i += 2
        elif line.startswith('//', i):
            return out
        else:
            out += line[i]
            i += 1
    return out


def private_names():
    """The functions the header declares (its comments left out: they
    name public ones too)."""
    state = [False]
    with open(os.path.join(SRC, HEADER), encoding='utf-8') as fh:
        text = ''.join(strip_comments(line, state) for line in fh)
    names = set(re.findall(r'\b(lm_journal_\w+)\s*\(', text))
    if not names:
        sys.exit('%s declares no lm_journal_ function: is this test reading the right file?' % HEADER)
    return names


def main():
    names = private_names()
    call = re.compile(r'\b(%s)\b' % '|'.join(sorted(names, key=len, reverse=True)))
    include = re.compile(r'^\s*#\s*include\s+"lm-journal-private\.h"')
    problems = []
    for f in sources():
        if f.startswith(INSIDE):
            continue
        state = [False]
        with open(os.path.join(SRC, f), encoding='utf-8', errors='replace') as fh:
            for n, line in enumerate(fh, 1):
                if include.match(line):
                    problems.append('%s:%d: includes lm-journal-private.h, which only %s may'
                                    % (f, n, INSIDE))
                code = strip_comments(line, state)
                for m in call.finditer(code):
                    problems.append('%s:%d: calls %s, the journal\'s inside (use lm-journal.h)'
                                    % (f, n, m.group(1)))
    if problems:
        print('\n'.join(problems))
        print('%d use(s) of the journal\'s private functions outside %s' % (len(problems), INSIDE))
        return 1
    print('%d private journal functions; none used outside %s' % (len(names), INSIDE))
    return 0


if __name__ == '__main__':
    sys.exit(main())
