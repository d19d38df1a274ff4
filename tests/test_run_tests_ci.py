#!/usr/bin/python3
"""Under CI=true, scripts/run-tests runs every case (issue 47): each
variable that would narrow a phase (LM_GUEST_ONLY, LM_GUEST_BOOTS,
LM_FUZZ_TARGETS, LM_FUZZ_SECONDS below the default) is refused with a
message naming it, before anything runs (even --list), and the same
variables are taken without CI=true. Needs no root: a refusal installs,
builds and runs nothing.
"""

import os
import subprocess
import sys

SRC = os.environ.get('LM_SRCDIR') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(SRC, 'scripts', 'run-tests')
NARROWING = [('LM_GUEST_ONLY', 'storage'), ('LM_GUEST_BOOTS', '6.1'),
             ('LM_FUZZ_TARGETS', 'fuzz-ledger'), ('LM_FUZZ_SECONDS', '5'),
             ('LM_FUZZ_SECONDS', 'thirty')]


def run(extra, ci):
    env = {k: v for k, v in os.environ.items() if not k.startswith(('LM_GUEST', 'LM_FUZZ'))}
    env.pop('CI', None)
    if ci:
        env['CI'] = 'true'
    env.update(extra)
    return subprocess.run([SCRIPT, '--list'], env=env, capture_output=True, text=True, timeout=60)


def main():
    failures = []
    for name, value in NARROWING:
        r = run({name: value}, ci=True)
        if r.returncode != 2 or name not in r.stderr or 'refusing' not in r.stderr:
            failures.append('CI=true %s=%s: exit %d, stderr %r (want 2, refused by name)'
                            % (name, value, r.returncode, r.stderr))
        r = run({name: value}, ci=False)
        if r.returncode != 0 or 'werror' not in r.stdout:
            failures.append('%s=%s without CI: exit %d, %r (want the phases listed)'
                            % (name, value, r.returncode, r.stderr))
    # What does not narrow is taken under CI=true: a longer fuzz, and nothing.
    for extra in ({'LM_FUZZ_SECONDS': '60'}, {}):
        r = run(extra, ci=True)
        if r.returncode != 0 or 'werror' not in r.stdout:
            failures.append('CI=true %r: exit %d, %r (want the phases listed)'
                            % (extra, r.returncode, r.stderr))
    print('%d cases' % (2 * len(NARROWING) + 2))
    if failures:
        sys.exit('\n'.join(failures))


if __name__ == '__main__':
    main()
