#!/usr/bin/python3
"""Tier 2: holds cannot be used to thrash the disk (issue 36).

Who may hold without authenticating (a real polkitd with the project's
actions), and what a loop of holds costs: the real test daemon against a
fake root whose /dev/sda is the scripted fake ATA drive (tests/lm-fake-ata.c),
which logs every command it receives. Real time, real constants: 20 holds
in two minutes.
"""

import os
import time
import unittest

import lmtest
from lmtest import DaemonTestCase
from test_disks import FakeAtaTest

CONFIG = """[LaptopMode]
Mode=on
SpinUpIdle=1
DiskRecheck=2
Attribution=none
Remount=false

[Disk ata-FAKE_DISK_1]
StandbySeconds=20
APM=128

[Disk ata-FAKE_DISK_2]
Exclude=true
"""

# "nobody" stands for the user of the active local session, whom the
# action's defaults let hold without a password: polkitd here sees no
# logind session, so a rule says what allow_active would.
ACTIVE_RULE = """polkit.addRule(function (action, subject) {
    if (subject.user == "nobody" && action.id == "org.laptopmode.LaptopMode1.inhibit")
        return polkit.Result.YES;
    return polkit.Result.NOT_HANDLED;
});
"""

CHECK_POWER_MODE = "sgio E5 00 00"


@unittest.skipUnless(lmtest.is_root(), "needs root: runs callers as nobody with setpriv")
class RefusedTest(DaemonTestCase):
    """Outside an active session no hold without authentication: polkitd
    sees nobody in no session (allow_any) and, with no agent, refuses."""

    config_text = "[LaptopMode]\nMode=on\n"

    def test_nobody_refused(self):
        self.start_daemon()
        self.wait_until(lambda: self.status()["Active"], message="laptop mode on")
        r = self.ctl_run("inhibit", "--why", "loop", "--", "true", user=lmtest.UNPRIVILEGED)
        self.assertEqual(r.returncode, 1, r)
        self.assertIn("org.laptopmode.LaptopMode1.inhibit", r.err)
        r = self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Inhibit",
                        "ss", "loop", "x", user=lmtest.UNPRIVILEGED)
        self.assertNotEqual(r.returncode, 0, r)
        self.assertRegex(r.err + r.out, "(?i)access ?denied")
        st = self.status()
        self.assertEqual((st["Active"], st["Reason"], st["Inhibitors"]), (True, "manual", []))
        self.assertNotIn("holds laptop mode off", self.daemon_log())


@unittest.skipUnless(lmtest.is_root(), "needs root: runs callers as nobody with setpriv")
class ThrashTest(FakeAtaTest):
    config_text = CONFIG
    fake_extra = "APM=254\n"
    polkit_rules = {"50-active.rules": ACTIVE_RULE}

    def polkit_log(self):
        """Its tail: once, under the load of a whole run, polkitd was gone
        in mid-test (the bus no longer knew its name) with nothing kept."""
        try:
            with open(os.path.join(self.tmp, "polkitd.log"), errors="replace") as f:
                return f.read()[-3000:]
        except OSError as e:
            return str(e)

    def offs(self):
        return self.daemon_log().count("Laptop mode off (")

    def ons(self):
        return self.daemon_log().count("Laptop mode on (")

    def test_twenty_holds_in_two_minutes(self):
        # On at start with the drive spinning: its settings went out.
        self.wait_disk("sda", "settings applied", APM=128, StandbyTimer="20 s")
        self.assertIn("sgio EF 05 80", self.commands())
        # Now it sleeps; from here on it may only be asked its power mode.
        self.set_drive("sda", "standby")
        self.wait_disk("sda", "standby", timeout=20, State="standby")
        n = len(self.commands())
        offs0, ons0 = self.offs(), self.ons()

        t0 = time.monotonic()
        for i in range(20):
            delay = t0 + 6 * i - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            r = self.ctl_run("inhibit", "--why", "loop %d" % i, "--who", "looper", "--",
                             "sleep", "2.5", user=lmtest.UNPRIVILEGED)
            self.assertEqual(r.returncode, 0, "%r\npolkitd's log:\n%s" % (r, self.polkit_log()))
        took = time.monotonic() - t0
        self.assertLess(took, 120, "20 holds within two minutes")

        offs, ons = self.offs() - offs0, self.ons() - ons0
        sent = self.commands()[n:]
        print("# 20 holds in %.1f s: %d off, %d on; the standby drive got %d commands: %s"
              % (took, offs, ons, len(sent), sorted(set(sent))))
        self.assertGreaterEqual(offs, 1, "the holds took effect")
        self.assertLessEqual(offs, 3, self.daemon_log()[-6000:])
        self.assertLessEqual(ons, 3)
        self.assertTrue(all(c == CHECK_POWER_MODE for c in sent),
                        "only CHECK POWER MODE to a drive in standby: %r" % sent)
        # The holder was logged once; its repeats summed up, not listed.
        self.assertEqual(self.daemon_log().count("looper (uid "), 1 + self.daemon_log().count(
            "looper (uid 65534) took"), self.daemon_log()[-6000:])
        # Still off: the quiet period after so many holds is minutes.
        st = self.status()
        self.assertEqual((st["Active"], st["Reason"], st["Inhibitors"]),
                         (False, "inhibited", []))

        # Its next I/O wakes it: the originals it slept through go back now.
        self.set_drive("sda", "active")
        self.do_io("sda")
        self.wait_until(lambda: {"sgio EF 05 FE", "sgio E3 00 00"} <= set(self.commands()[n:]),
                        timeout=15, message="originals sent once the disk woke")
        print("# after its I/O: %r" % self.commands()[n + len(sent):])


@unittest.skipUnless(lmtest.is_root(), "needs root")
class WakeApplyTest(FakeAtaTest):
    """Laptop mode turned on while the drive sleeps: nothing is sent until
    its next I/O, then its settings go out."""

    config_text = CONFIG.replace("Mode=on", "Mode=off")
    fake_power = "standby"

    def test_settings_wait_for_the_wake(self):
        self.wait_disk("sda", "standby at start", State="standby")
        n = len(self.commands())
        self.ctl_run("start", check=True)
        time.sleep(3)
        self.assertTrue(self.status()["Active"])
        sent = self.commands()[n:]
        self.assertTrue(all(c == CHECK_POWER_MODE for c in sent), sent)
        self.set_drive("sda", "active")
        self.do_io("sda")
        self.wait_disk("sda", "settings applied after the wake", APM=128, StandbyTimer="20 s")
        after = self.commands()[n:]
        for c in ("sgio E3 00 04", "sgio EF 05 80"):
            self.assertIn(c, after)
        self.assertIn("Disk sda woke: laptop-mode settings sent now", self.daemon_log())


if __name__ == "__main__":
    lmtest.main()
