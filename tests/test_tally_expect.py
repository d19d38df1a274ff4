#!/usr/bin/python3
"""scripts/tally-results --expect (issue 47): a phase that reports fewer
cases than it declares fails the run, even when every case it reported
passed; as many passes; more passes with a note to update the declaration.
And the closing line counts executions and distinct cases: one case run in
two builds is two executions of one distinct case.
"""

import json
import os
import subprocess
import sys
import tempfile

SRC = os.environ.get('LM_SRCDIR') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TALLY = os.path.join(SRC, 'scripts', 'tally-results')


def tally(*args):
    return subprocess.run([sys.executable, TALLY] + list(args), capture_output=True, text=True)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        tap = os.path.join(d, 'guest.tap')
        with open(tap, 'w') as f:
            f.write('ok 1 - a\nok 2 - b\n1..2\n')
        src = 'tap:guest:0:' + tap
        for declared, want_rc, want in ((3, 1, 'ran 2 cases, declares 3'), (2, 0, '2 passed'),
                                        (1, 0, 'more than the 1 it declares')):
            r = tally('--expect', 'guest=%d' % declared, src)
            if r.returncode != want_rc or want not in r.stdout:
                failures.append('declared %d: exit %d (want %d), %r lacks %r'
                                % (declared, r.returncode, want_rc, r.stdout, want))
        # One unit case in two builds.
        for build in ('build-a', 'build-b'):
            logs = os.path.join(d, build, 'meson-logs')
            os.makedirs(logs)
            with open(os.path.join(logs, 'testlog.json'), 'w') as f:
                f.write(json.dumps({'name': 'laptop-moded:unit / test-x', 'result': 'OK',
                                    'stdout': 'ok 1 /x/one\n1..1\n'}) + '\n')
        r = tally('meson:' + os.path.join(d, 'build-a'), 'meson:' + os.path.join(d, 'build-b'))
        if r.returncode != 0 or '(2 executions of 1 distinct cases)' not in r.stdout:
            failures.append('two builds: exit %d, %r' % (r.returncode, r.stdout))
    print('4 cases')
    if failures:
        sys.exit('\n'.join(failures))


if __name__ == '__main__':
    main()
