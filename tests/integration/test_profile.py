#!/usr/bin/python3
"""FollowPowerProfile (issue 18): mode auto also turns laptop mode on while
power-profiles-daemon's ActiveProfile is power-saver.

UPower and power-profiles-daemon are python-dbusmock stand-ins (the
power_profiles_daemon template) on the test's private system bus; the
tunables are a fake root's /proc/sys/vm.
"""

import re
import subprocess
import unittest

import lmtest
from lmtest import DaemonTestCase, MOCK_BUS_POLICY, is_root

PPD = "net.hadess.PowerProfiles"
PPD_PATH = "/net/hadess/PowerProfiles"
UPOWER = "org.freedesktop.UPower"

PPD_BUS_POLICY = MOCK_BUS_POLICY + """
  <policy user="root">
    <allow own="net.hadess.PowerProfiles"/>
    <allow send_destination="net.hadess.PowerProfiles"/>
    <allow own="org.freedesktop.UPower.PowerProfiles"/>
    <allow send_destination="org.freedesktop.UPower.PowerProfiles"/>
  </policy>
"""

# Profile changes back to back on one connection, without waiting for each
# answer: they reach the daemon well inside its settle time.
FLAP = r"""
import sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
loop = GLib.MainLoop()
profiles = sys.argv[1:]
left = [len(profiles)]
def done(conn, res):
    conn.call_finish(res)
    left[0] -= 1
    if left[0] == 0:
        loop.quit()
for p in profiles:
    bus.call("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles",
             "org.freedesktop.DBus.Properties", "Set",
             GLib.Variant("(ssv)", ("net.hadess.PowerProfiles", "ActiveProfile",
                                    GLib.Variant("s", p))), None, 0, -1, None, done)
loop.run()
"""

needs_root = unittest.skipUnless(is_root(), "needs root: the mocks own system bus names")


class ProfileBase(DaemonTestCase):
    extra_bus_config = PPD_BUS_POLICY

    def setUp(self):
        super().setUp()
        self.start_mock("upower", {"OnBattery": False})
        self.ppd = self.start_mock("power_profiles_daemon", name=PPD)
        self.start_daemon()
        self.wait_until(lambda: self.status()["PowerSource"] == "upower", message="UPower used")
        self.original = self.root.vm()

    def set_prop(self, dest, path, iface, prop, value):
        self.run_as(["gdbus", "call", "--system", "--dest", dest, "--object-path", path,
                     "--method", "org.freedesktop.DBus.Properties.Set", iface, prop, value],
                    check=True)

    def profile(self, value):
        self.set_prop(PPD, PPD_PATH, PPD, "ActiveProfile", value)

    def on_battery(self, yes):
        self.set_prop(UPOWER, "/org/freedesktop/UPower", UPOWER, "OnBattery",
                      "<%s>" % ("true" if yes else "false"))



@needs_root
class ProfileTest(ProfileBase):
    def test_power_saver_on_ac(self):
        self.wait_state(False, "ac")
        self.assertTrue(self.status()["FollowPowerProfile"])  # the default
        self.profile("<'power-saver'>")
        self.wait_state(True, "power-saver")
        self.assertEqual(self.root.vm()["dirty_expire_centisecs"], "60000")
        r = self.ctl_run("status", check=True)
        self.assertIn("power-saver", r.out)
        self.profile("<'balanced'>")
        self.wait_state(False, "ac")
        self.assertEqual(self.root.vm(), self.original)

    def test_change_is_one_settle(self):
        self.wait_state(False, "ac")
        start = len(self.this_daemon_log())
        self.run_as(["/usr/bin/python3", "-c", FLAP, "power-saver", "balanced", "performance",
                     "power-saver", "balanced", "power-saver"], check=True)
        self.wait_state(True, "power-saver")
        log = self.this_daemon_log()[start:]
        # Each signal seen (the profile word flips power-saver on and off)...
        self.assertGreaterEqual(len(re.findall(r"Power profile: ", log)), 2, log)
        # ...and acted on once: one switch.
        self.assertEqual(len(re.findall(r"Laptop mode (on|off) ", log)), 1, log)
        self.assertIn("Laptop mode on (mode auto, reason power-saver", log)

    def test_battery_wins_and_ppd_vanishing_leaves_power_alone(self):
        self.profile("<'power-saver'>")
        self.wait_state(True, "power-saver")
        self.on_battery(True)
        self.wait_state(True, "on-battery")
        self.ppd.terminate()
        self.ppd.wait(timeout=10)
        self.assert_stays(True, "on-battery")
        self.on_battery(False)
        self.wait_state(False, "ac")
        self.assertEqual(self.root.vm(), self.original)

    def test_ppd_vanishing_on_ac(self):
        self.profile("<'power-saver'>")
        self.wait_state(True, "power-saver")
        self.ppd.terminate()
        self.ppd.wait(timeout=10)
        self.wait_state(False, "ac")
        self.assertEqual(self.root.vm(), self.original)
        # Back on the bus (default profile balanced): still AC, still off.
        self.ppd = self.start_mock("power_profiles_daemon", {"ActiveProfile": "power-saver"},
                                   name=PPD)
        self.wait_state(True, "power-saver")

    def test_newer_name_alone(self):
        """power-profiles-daemon 0.20's name, with the old one gone."""
        new = "org.freedesktop.UPower.PowerProfiles"
        new_path = "/org/freedesktop/UPower/PowerProfiles"
        self.ppd.terminate()
        self.ppd.wait(timeout=10)
        p = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", new, new_path, new],
                             env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)

        def added():
            r = self.run_as(["gdbus", "call", "--system", "--dest", new, "--object-path",
                             new_path, "--method", "org.freedesktop.DBus.Mock.AddProperty", new,
                             "ActiveProfile", "<'balanced'>"])
            return r.returncode == 0
        self.wait_until(added, timeout=15, message="the newer name's mock on the bus")
        self.assert_stays(False, "ac", seconds=1.5)
        self.set_prop(new, new_path, new, "ActiveProfile", "<'power-saver'>")
        self.wait_state(True, "power-saver")
        self.set_prop(new, new_path, new, "ActiveProfile", "<'performance'>")
        self.wait_state(False, "ac")

    def test_hostile_profile_refused(self):
        self.wait_state(False, "ac")
        self.profile("<'%s'>" % ("power-saver" + "x" * 100000))
        self.wait_until(lambda: "bytes (at most 64); ignored" in self.daemon_log(),
                        message="an oversized profile refused")
        self.profile("<uint32 7>")
        self.wait_until(lambda: "of type u, not a string; ignored" in self.daemon_log(),
                        message="a profile of another type refused")
        self.assert_stays(False, "ac", seconds=1.5)
        self.profile("<'power-saver'>")
        self.wait_state(True, "power-saver")


@needs_root
class ProfileIgnoredTest(ProfileBase):
    config_text = "[LaptopMode]\nFollowPowerProfile=false\n"

    def test_follow_false_ignores_profile(self):
        self.wait_state(False, "ac")
        self.assertFalse(self.status()["FollowPowerProfile"])
        self.profile("<'power-saver'>")
        self.wait_until(lambda: "Power profile: power-saver" in self.daemon_log(),
                        message="the profile change seen")
        self.assert_stays(False, "ac")
        self.assertEqual(self.root.vm(), self.original)


if __name__ == "__main__":
    lmtest.main()
