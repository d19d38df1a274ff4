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


class TiersTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="lm-tiers-")
        self.addCleanup(subprocess.run, ["rm", "-rf", self.tmp])
        for name, text in (("sibling.py", SIBLING), ("test_main.py", MAIN),
                           ("test_only.py", ONLY_INTEGRATION)):
            with open(os.path.join(self.tmp, name), "w") as f:
                f.write(text)

    def run_tier(self, script, tier, tiers):
        env = dict(os.environ, PYTHONPATH=INTEGRATION_DIR + ":" + self.tmp, LM_TIER=tier,
                   LM_TIERS=tiers)
        # The marked cases here touch nothing: no mount namespace, and a lock
        # of their own, not the one the real-kernel suites hold.
        env["LM_TEST_PRIVATE_MOUNTS"] = "1"
        env["LM_REALKERNEL_LOCK"] = os.path.join(self.tmp, "lock")
        return subprocess.run([sys.executable, os.path.join(self.tmp, script)], env=env,
                              capture_output=True, text=True, timeout=60)

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


if __name__ == "__main__":
    unittest.main()
