#!/usr/bin/python3
"""The build refuses an include that goes up: a scratch copy of the tree,
configured, builds the ground floor's library (service/base); then one of
its files includes the daemon's header (the top floor), and the same
target fails because the header is not on its include path. Each folder
of service/ is a static library that sees only the folders it declares
(service/meson.build's service_floors)."""

import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get('LM_SRCDIR') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = 'service/liblm-base.a'
VICTIM = os.path.join('service', 'base', 'lm-io.c')
UPWARD = '#include "lm-daemon.h"\n'


def run(args, cwd):
    return subprocess.run(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def main():
    with tempfile.TemporaryDirectory(prefix='lm-layer-build-') as tmp:
        tree = os.path.join(tmp, 'src')
        shutil.copytree(SRC, tree, symlinks=True,
                        ignore=shutil.ignore_patterns('build*', '.git', '__pycache__'))
        build = os.path.join(tmp, 'build')
        setup = run(['meson', 'setup', build, '-Dtests=false'], tree)
        if setup.returncode != 0:
            print(setup.stdout)
            print('not ok: the scratch copy does not configure')
            return 1
        before = run(['ninja', '-C', build, TARGET], tree)
        if before.returncode != 0:
            print(before.stdout)
            print('not ok: %s does not build even before the change' % TARGET)
            return 1
        with open(os.path.join(tree, VICTIM), 'a', encoding='utf-8') as f:
            f.write(UPWARD)
        after = run(['ninja', '-C', build, TARGET], tree)
        if after.returncode == 0:
            print('not ok: %s still builds with %s including the daemon' % (TARGET, VICTIM))
            return 1
        if 'lm-daemon.h' not in after.stdout:
            print(after.stdout)
            print('not ok: the build failed, but not for the upward include')
            return 1
        print('ok: %s refused: %s' % (TARGET, next(
            line for line in after.stdout.splitlines() if 'lm-daemon.h' in line).strip()))
    return 0


if __name__ == '__main__':
    sys.exit(main())
