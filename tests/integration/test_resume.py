#!/usr/bin/env python3
"""Tier 2: after a resume from suspend the per-disk settings are sent again.

Many drives forget their standby timer and APM level across suspend. The
real daemon against a fake root whose /dev/sda is the scripted fake ATA
drive of test_disks.py (it logs every command it receives), with a
python-dbusmock logind on the test's system bus sending PrepareForSleep.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import lmtest  # noqa: E402
from lmtest import MOCK_BUS_POLICY  # noqa: E402
from test_disks import FakeAtaTest  # noqa: E402

LOGIND = "org.freedesktop.login1"
TIMER_20S = "sgio E3 00 04"  # IDLE with the standby timer at 20 s
APM_128 = "sgio EF 05 80"    # SET FEATURES: APM level 128


class ResumeTest(FakeAtaTest):
    extra_bus_config = MOCK_BUS_POLICY

    def prepare_root(self):
        self.start_mock("logind")

    def prepare_for_sleep(self, start):
        self.run_as(["gdbus", "call", "--system", "--dest", LOGIND, "--object-path",
                     "/org/freedesktop/login1", "--method",
                     "org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.login1.Manager",
                     "PrepareForSleep", "b", "[<%s>]" % ("true" if start else "false")],
                    check=True)

    def test_settings_sent_again_after_resume(self):
        self.ctl_run("start", check=True)
        self.wait_disk("sda", "settings applied", StandbyTimer="20 s", APM=128)
        self.wait_until(lambda: self.sent(TIMER_20S) == 1 and self.sent(APM_128) == 1,
                        message="standby timer and APM sent once by Start")
        n = len(self.commands())
        self.prepare_for_sleep(True)
        self.prepare_for_sleep(False)
        self.wait_until(lambda: self.sent(TIMER_20S) == 2 and self.sent(APM_128) == 2,
                        message="standby timer and APM sent again after resume")
        self.wait_until(lambda: "sent again after resume" in self.daemon_log(),
                        message="the daemon's log line")
        # Only those: the originals are not read again, nothing is restored.
        again = self.commands()[n:]
        self.assertNotIn("sgio EC 00 01", again, "no IDENTIFY: the original is saved already")
        self.assertNotIn("sgio EF 05 FE", again, "nothing restored")
        self.assertEqual(self.commands("sdb"), [], "an excluded disk is never sent a command")
        # Still in force, and Stop restores as usual.
        self.ctl_run("stop", check=True)
        self.assertIn("sgio EF 05 FE", self.commands()[n:])

    def test_resume_sends_the_disks_counts_again(self):
        """Suspended time is in neither ActiveSeconds nor StandbySeconds (the
        daemon counts on CLOCK_MONOTONIC, which stands still while
        suspended); a reader adds "now - CountedUntil" for the current state
        (laptop-modectl disks), so the counts are sent again at the resume,
        with CountedUntil then; Since stays when the state last changed."""
        before = self.wait_disk("sda", "sda is known")
        self.assertLessEqual(before["Since"], before["CountedUntil"], before)
        time.sleep(1.5)
        resumed_us = time.time() * 1e6
        self.prepare_for_sleep(True)
        self.prepare_for_sleep(False)
        self.wait_until(lambda: self.disks()["sda"]["CountedUntil"] >= resumed_us - 100000,
                        message="the counts sent again at the resume")
        after = self.disks()["sda"]
        self.assertEqual(after["Since"], before["Since"], after)
        # Counted up to the resume, on the monotonic clock: nothing lost.
        self.assertGreaterEqual(after["ActiveSeconds"] + after["StandbySeconds"],
                                before["ActiveSeconds"] + before["StandbySeconds"] + 1, after)

    def test_nothing_sent_when_off(self):
        self.wait_until(lambda: "laptop-moded" in self.logind_inhibitors(),
                        message="the daemon's delay lock")
        n = len(self.commands())
        self.prepare_for_sleep(True)
        self.wait_until(lambda: "laptop-moded" not in self.logind_inhibitors(),
                        message="the lock released for the suspend")
        self.prepare_for_sleep(False)
        # The lock is taken again after resume: the daemon has seen it.
        self.wait_until(lambda: "laptop-moded" in self.logind_inhibitors(),
                        message="the lock taken again after resume")
        self.assertNotIn(TIMER_20S, self.commands()[n:])
        self.assertNotIn(APM_128, self.commands()[n:])
        self.assertNotIn("sent again after resume", self.daemon_log())

    def sent(self, command):
        return self.commands().count(command)

    def logind_inhibitors(self):
        return self.run_as(["gdbus", "call", "--system", "--dest", LOGIND, "--object-path",
                            "/org/freedesktop/login1", "--method",
                            "org.freedesktop.login1.Manager.ListInhibitors"], check=True).out


if __name__ == "__main__":
    lmtest.main()
