#!/usr/bin/python3
"""docs/ARCHITECTURE.md's daemon tree against the files.

Each branch of the tree (a line with ├─ or └─, and main.c's first line)
stands in one folder of service/: the folder it is labelled with
(`base/`), else the folder of the first file it names without a folder.
Every file the branch names (lm-*.c, lm-*.h, main.c) must be in that
folder, unless written with its own (`disks/lm-removable.c`,
`common/lm-paths.c`); and every .c file in service/ must be named
somewhere in the tree.
"""

import os
import re
import sys

SRC = os.environ.get('LM_SRCDIR') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = re.compile(r'(?<![\w/*.-])((?:[a-z]+/)?)((?:lm-[\w.-]*?|main)\.[ch])(?![\w*])')
BRANCH = re.compile(r'^[\s│]*(?:[├└]─ )?(\S+)')


def tree():
    text = open(os.path.join(SRC, 'docs', 'ARCHITECTURE.md'), encoding='utf-8').read()
    m = re.search(r'^## The daemon\n.*?^```\n(.*?)^```', text, re.S | re.M)
    if not m:
        sys.exit('docs/ARCHITECTURE.md: no tree under "## The daemon"')
    start = text[:m.start(1)].count('\n') + 1
    return [(start + i, line) for i, line in enumerate(m.group(1).splitlines())]


def where_files():
    found = {}
    for root in ('service', 'common'):
        for dirpath, _, filenames in os.walk(os.path.join(SRC, root)):
            for name in filenames:
                found.setdefault(name, set()).add(os.path.relpath(dirpath, SRC))
    return found


def folder_path(folder):
    return folder if folder in ('common',) else 'service/' + folder


def main():
    found = where_files()
    failed = []
    named = set()
    branches = []  # [label, lines[(lineno, text)]]
    for lineno, line in tree():
        if '├─ ' in line or '└─ ' in line or not branches:
            label = BRANCH.match(line.replace('├─ ', '').replace('└─ ', ''))
            branches.append([label.group(1) if label else '', []])
        branches[-1][1].append((lineno, line))
    for label, lines in branches:
        folder = folder_path(label.rstrip('/')) if label.endswith('/') else None
        for lineno, line in lines:
            for explicit, name in NAME.findall(line):
                named.add(name)
                if explicit:
                    want = folder_path(explicit.rstrip('/'))
                else:
                    if folder is None:
                        folder = sorted(found.get(name, {'?'}))[0]
                        if not folder.startswith('service/'):
                            folder = 'service/?'
                    want = folder
                have = found.get(name, set())
                if want not in have:
                    failed.append('docs/ARCHITECTURE.md:%d: %s%s is put in %s (branch "%s"), but it is in %s'
                                  % (lineno, explicit, name, want, label, ', '.join(sorted(have)) or 'no folder'))
    for name, dirs in sorted(found.items()):
        if name.endswith('.c') and any(d.startswith('service/') for d in dirs) and name not in named:
            failed.append('%s/%s is named nowhere in docs/ARCHITECTURE.md\'s tree' % (sorted(dirs)[0], name))
    print('%d files named in the tree, %d branches' % (len(named), len(branches)))
    for line in failed:
        print(line)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
