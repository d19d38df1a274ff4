#!/usr/bin/python3
"""The tier of each Python test case: tests/integration/lmtiers.py (what
meson registers) and lmtest.main() (what runs) on small test files written
here, with marks on classes, on mixins in a sibling file and on single
methods. No bus, no daemon: the cases here only pass or fail. In the
integration suite: lmtest needs Debian's python3 with python3-gi."""

import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
INTEGRATION_DIR = os.path.join(HERE, "integration")
sys.path.insert(0, INTEGRATION_DIR)
import lmtiers  # noqa: E402

SIBLING = '''
import unittest
import lmtest


@lmtest.realkernel
class LoopMixin:
    def test_loop(self):
        pass


class PlainMixin:
    def test_plain(self):
        pass
'''

MAIN = '''
import unittest
import lmtest
import sibling
from sibling import PlainMixin


class FakeRootTest(PlainMixin, unittest.TestCase):
    def test_fake(self):
        pass

    @lmtest.realkernel
    def test_real_one(self):
        pass


class RealTest(sibling.LoopMixin, unittest.TestCase):
    pass


if __name__ == "__main__":
    lmtest.main()
'''

ONLY_INTEGRATION = '''
import unittest
import lmtest


class OnlyTest(unittest.TestCase):
    def test_one(self):
        pass


class HelperMixin:
    @lmtest.realkernel
    def test_never_run(self):
        pass


if __name__ == "__main__":
    lmtest.main()
'''


# Real-kernel cases that leave a value changed, or are stopped by meson's
# timeout; MACHINE is lmtest's LM_TEST_MACHINE_ROOT, a directory here.
LEAVES_CHANGED = '''
import os
import time
import unittest
import lmtest

MACHINE = os.environ["LM_TEST_MACHINE_ROOT"]


def write(path, value):
    with open(MACHINE + path, "w") as f:
        f.write(value + "\\n")


@lmtest.realkernel
class LeakTest(unittest.TestCase):
    def test_leaves_expire_and_bytes(self):
        write("/proc/sys/vm/dirty_expire_centisecs", "1234")
        write("/proc/sys/vm/dirty_bytes", "200000000")
        write("/proc/sys/vm/dirty_ratio", "0")


@lmtest.realkernel
class HangTest(unittest.TestCase):
    def test_hangs(self):
        write("/sys/kernel/rcu_expedited", "1")
        open(os.path.join(MACHINE, "started"), "w").close()
        time.sleep(60)


if __name__ == "__main__":
    lmtest.main()
'''

MACHINE_BEFORE = {
    "/proc/sys/vm/laptop_mode": "0",
    "/proc/sys/vm/dirty_expire_centisecs": "3000",
    "/proc/sys/vm/dirty_writeback_centisecs": "500",
    "/proc/sys/vm/dirty_ratio": "20",
    "/proc/sys/vm/dirty_bytes": "0",
    "/proc/sys/vm/dirty_background_ratio": "10",
    "/proc/sys/vm/dirty_background_bytes": "0",
    "/sys/kernel/rcu_expedited": "0",
}


class TiersTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="lm-tiers-")
        self.addCleanup(subprocess.run, ["rm", "-rf", self.tmp])
        for name, text in (("sibling.py", SIBLING), ("test_main.py", MAIN),
                           ("test_only.py", ONLY_INTEGRATION),
                           ("test_leaves.py", LEAVES_CHANGED)):
            with open(os.path.join(self.tmp, name), "w") as f:
                f.write(text)

    def run_tier(self, script, tier, tiers, *cases):
        env = dict(os.environ, PYTHONPATH=INTEGRATION_DIR + ":" + self.tmp, LM_TIER=tier,
                   LM_TIERS=tiers)
        # The marked cases here touch nothing: no mount namespace, and a lock
        # of their own, not the one the real-kernel suites hold.
        env["LM_TEST_PRIVATE_MOUNTS"] = "1"
        env["LM_REALKERNEL_LOCK"] = os.path.join(self.tmp, "lock")
        env["LM_TEST_MACHINE_ROOT"] = self.machine
        return subprocess.run([sys.executable, os.path.join(self.tmp, script)] + list(cases),
                              env=env, capture_output=True, text=True, timeout=60)

    @property
    def machine(self):
        root = os.path.join(self.tmp, "machine")
        if not os.path.isdir(root):
            for path, value in MACHINE_BEFORE.items():
                os.makedirs(os.path.dirname(root + path), exist_ok=True)
                with open(root + path, "w") as f:
                    f.write(value + "\n")
        return root

    def machine_now(self):
        now = {}
        for path in MACHINE_BEFORE:
            with open(self.machine + path) as f:
                now[path] = f.read().strip()
        return now

    def test_scan_follows_marks_on_classes_mixins_and_methods(self):
        self.assertEqual(lmtiers.tiers(os.path.join(self.tmp, "test_main.py")),
                         ["integration", "realkernel"])
        # A mixin that is no TestCase runs nothing, whatever its marks.
        self.assertEqual(lmtiers.tiers(os.path.join(self.tmp, "test_only.py")), ["integration"])

    def test_main_runs_the_cases_of_its_tier(self):
        r = self.run_tier("test_main.py", "integration", "integration,realkernel")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1..2", r.stdout)
        self.assertIn("test_fake", r.stdout)
        self.assertIn("test_plain", r.stdout)
        self.assertNotIn("test_real_one", r.stdout)
        r = self.run_tier("test_main.py", "realkernel", "integration,realkernel")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1..2", r.stdout)
        self.assertIn("test_real_one", r.stdout)
        self.assertIn("test_loop", r.stdout)

    def test_a_suite_meson_does_not_run_fails_the_file(self):
        r = self.run_tier("test_main.py", "integration", "integration")
        self.assertEqual(r.returncode, 1)
        self.assertIn("Bail out! this file has realkernel cases", r.stdout)

    def test_a_tier_without_cases_fails_the_file(self):
        r = self.run_tier("test_only.py", "realkernel", "integration,realkernel")
        self.assertEqual(r.returncode, 1)
        self.assertIn("Bail out! no realkernel cases here", r.stdout)

    def test_a_value_left_changed_fails_the_file_and_is_put_back(self):
        r = self.run_tier("test_leaves.py", "realkernel", "realkernel", "LeakTest")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("ok 1 __main__.LeakTest.test_leaves_expire_and_bytes", r.stdout)
        self.assertIn("# left changed by this file (put back): "
                      "/proc/sys/vm/dirty_expire_centisecs: 3000 -> 1234", r.stdout)
        # The ratio is written back, not the byte twin the case set.
        self.assertIn("/proc/sys/vm/dirty_bytes: 0 -> 200000000", r.stdout)
        now = self.machine_now()
        self.assertEqual(now["/proc/sys/vm/dirty_expire_centisecs"], "3000")
        self.assertEqual(now["/proc/sys/vm/dirty_ratio"], "20")

    def test_sigterm_reports_the_stopped_case_and_puts_values_back(self):
        env = dict(os.environ, PYTHONPATH=INTEGRATION_DIR + ":" + self.tmp, LM_TIER="realkernel",
                   LM_TIERS="realkernel", LM_TEST_PRIVATE_MOUNTS="1",
                   LM_REALKERNEL_LOCK=os.path.join(self.tmp, "lock"),
                   LM_TEST_MACHINE_ROOT=self.machine)
        p = subprocess.Popen([sys.executable, os.path.join(self.tmp, "test_leaves.py"), "HangTest"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.addCleanup(p.kill)
        started = os.path.join(self.machine, "started")
        deadline = time.monotonic() + 30
        while not os.path.exists(started) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(os.path.exists(started), "the case never started")
        p.terminate()
        out, _ = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 1, out)
        self.assertIn("not ok 1 __main__.HangTest.test_hangs # stopped by SIGTERM", out)
        self.assertIn("/sys/kernel/rcu_expedited: 0 -> 1", out)
        self.assertIn("Bail out! stopped by SIGTERM", out)
        self.assertEqual(self.machine_now(), MACHINE_BEFORE)


if __name__ == "__main__":
    unittest.main()
