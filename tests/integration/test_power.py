#!/usr/bin/python3
"""Mode auto, low battery, sleep and shutdown, inhibitors (issue: automatic
mode on battery, and nothing lost).

UPower and logind are python-dbusmock stand-ins (the project does not own
them); the power-supply class is a fake sysfs under the fake root, driven by
real kernel-format uevents sent on a netlink socket inside the daemon's own
network namespace (taken from root in a fake root only; with the real root
the daemon takes the kernel's alone, test-uevent.c). The sleep and shutdown tests use a real loop-device
filesystem in a private mount namespace and the loop disk's write counter.
"""

import os
import re
import signal
import subprocess
import time
import unittest

import lmtest
from lmtest import DaemonTestCase, MOCK_BUS_POLICY, is_root

UPOWER = "org.freedesktop.UPower"
DISPLAY = "/org/freedesktop/UPower/devices/DisplayDevice"
LOGIND = "org.freedesktop.login1"

SEND_UEVENT = r"""
import socket, sys
s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)  # NETLINK_KOBJECT_UEVENT
s.bind((0, 0))
dev = sys.argv[1]
msg = ("change@/devices/platform/%s/power_supply/%s\0ACTION=change\0"
       "DEVPATH=/devices/platform/%s/power_supply/%s\0SUBSYSTEM=power_supply\0"
       "POWER_SUPPLY_NAME=%s\0SEQNUM=4242\0" % (dev, dev, dev, dev, dev)).encode()
s.sendto(msg, (0, 1))
"""

COUNT_UEVENTS = r"""
import socket, sys, time
s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)
s.bind((0, 1))
print("ready", flush=True)
end = time.monotonic() + float(sys.argv[1])
n = 0
while True:
    left = end - time.monotonic()
    if left <= 0:
        break
    s.settimeout(left)
    try:
        s.recv(65536)
        n += 1
    except socket.timeout:
        break
print(n)
"""

# Seven OnBattery changes on one connection, sent back to back without
# waiting for each answer: they reach the daemon well inside its settle
# time however slowly a busy machine starts processes.
FLAP = r"""
import sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
loop = GLib.MainLoop()
left = [int(sys.argv[1])]
def done(conn, res):
    conn.call_finish(res)
    left[0] -= 1
    if left[0] == 0:
        loop.quit()
for i in range(left[0]):
    bus.call("org.freedesktop.UPower", "/org/freedesktop/UPower", "org.freedesktop.DBus.Properties",
             "Set", GLib.Variant("(ssv)", ("org.freedesktop.UPower", "OnBattery",
                                           GLib.Variant("b", i % 2 == 0))),
             None, 0, -1, None, done)
loop.run()
"""

SETTLE = 1.0  # LM_POWER_SETTLE_MS in lm-daemon.c


def log_times(log, text):
    """Seconds of the day at which the daemon logged lines containing @text."""
    out = []
    for m in re.finditer(r"(\d\d):(\d\d):(\d\d\.\d+): (.*)", log):
        if text in m.group(4):
            t = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
            out.append(t + 86400 if out and t < out[-1] else t)
    return out


needs_root = unittest.skipUnless(is_root(), "needs root: runs clients as other users, namespaces")


ctx_switches = lmtest.ctx_switches
wait_quiet = lmtest.wait_quiet


class PowerTestCase(DaemonTestCase):
    extra_bus_config = MOCK_BUS_POLICY

    def laptop_values_applied(self):
        return self.root.vm()["dirty_expire_centisecs"] == "60000"


@needs_root
class UPowerTest(PowerTestCase):
    def setUp(self):
        super().setUp()
        self.start_mock("upower", {"OnBattery": False})
        self.start_daemon()
        self.wait_until(lambda: self.status()["PowerSource"] == "upower", message="UPower used")
        self.original = self.root.vm()

    def on_battery(self, yes):
        self.set_upower("/org/freedesktop/UPower", UPOWER, "OnBattery", "<%s>" % ("true" if yes else "false"))

    def warning_level(self, level):
        self.set_upower(DISPLAY, UPOWER + ".Device", "WarningLevel", "<uint32 %d>" % level)

    def test_unplug_and_plug(self):
        st = self.status()
        self.assertEqual((st["Mode"], st["PowerSource"], st["OnBattery"]), ("auto", "upower", False))
        self.wait_state(False, "ac")
        self.on_battery(True)
        self.wait_state(True, "on-battery")
        self.assertTrue(self.laptop_values_applied())
        self.assertTrue(self.status()["OnBattery"])
        self.on_battery(False)
        self.wait_state(False, "ac")
        self.assertEqual(self.root.vm(), self.original)

    def test_low_battery_holds_off_until_charging(self):
        self.on_battery(True)
        self.wait_state(True, "on-battery")
        self.warning_level(3)  # low
        self.wait_state(False, "low-battery")
        self.assertEqual(self.root.vm(), self.original)
        # UPower's level flickering back while still discharging changes nothing.
        self.warning_level(1)
        self.assert_stays(False, "low-battery")
        # Charging clears it; the next unplug turns laptop mode on again.
        self.on_battery(False)
        self.wait_state(False, "ac")
        self.on_battery(True)
        self.wait_state(True, "on-battery")

    def test_manual_mode_wins_over_power(self):
        self.ctl_run("mode", "off", check=True)
        self.on_battery(True)
        self.assert_stays(False, "manual", seconds=2)
        self.ctl_run("mode", "auto", check=True)
        self.wait_state(True, "on-battery")

    def test_flapping_settles(self):
        self.wait_state(False, "ac")
        for attempt in range(3):
            start = len(self.this_daemon_log())
            self.run_as(["/usr/bin/python3", "-c", FLAP, "7"], check=True)  # ends on battery
            self.wait_state(True, "on-battery")
            log = self.this_daemon_log()[start:]
            changes = log_times(log, "Power: ")
            self.assertEqual(len(changes), 7, log)
            gaps = [b - a for a, b in zip(changes, changes[1:])]
            if max(gaps) < SETTLE * 0.8:
                break
            # A machine that stalled the daemon between two changes for the
            # settle time has made the attempt meaningless: again.
            print("attempt %d: changes %s s apart; again" % (attempt + 1, gaps))
            self.on_battery(False)
            self.wait_state(False, "ac")
        else:
            self.fail("in 3 attempts the changes never reached the daemon within %.1f s" % SETTLE)
        # One switch, not seven, and only once the last change had settled:
        # it is logged after it, so no later one can be pending.
        switches = log_times(log, "Laptop mode ")
        self.assertEqual(len(switches), 1, log)
        self.assertIn("Laptop mode on (mode auto, reason on-battery", log)
        self.assertGreaterEqual(switches[0] - changes[-1], SETTLE * 0.9, log)

    def test_upower_leaving_falls_back_to_sysfs(self):
        self.on_battery(True)
        self.wait_state(True, "on-battery")
        mock = [p for p in self.procs if "dbusmock" in " ".join(p.args)][0]
        mock.terminate()
        mock.wait(timeout=10)
        # No power supplies in the fake sysfs: a desktop on AC.
        self.wait_state(False, "ac")
        self.assertEqual(self.status()["PowerSource"], "sysfs")


@needs_root
class SysfsTest(PowerTestCase):
    """No UPower: /sys/class/power_supply and uevents."""

    def setUp(self):
        super().setUp()
        self.supply("AC", type="Mains", online="1")
        self.supply("BAT0", type="Battery", present="1", status="Charging", capacity="80")
        self.supply("hidpp_battery_0", type="Battery", scope="Device", status="Discharging", capacity="3")
        # Its own network namespace: the test's uevents reach it and nothing else.
        self.start_daemon(wrapper=["unshare", "-n", "--"])
        self.original = self.root.vm()

    def uevent(self, device):
        r = subprocess.run(["nsenter", "--net=/proc/%d/ns/net" % self.daemon.pid,
                            "/usr/bin/python3", "-c", SEND_UEVENT, device],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def unplug(self, capacity="80"):
        self.supply("AC", online="0")
        self.supply("BAT0", status="Discharging", capacity=capacity)

    def plug(self):
        self.supply("AC", online="1")
        self.supply("BAT0", status="Charging")

    def test_unplug_plug_by_uevent(self):
        st = self.status()
        self.assertEqual((st["PowerSource"], st["OnBattery"]), ("sysfs", False))
        self.wait_state(False, "ac")
        self.unplug()
        # Without an event nothing is noticed: the daemon does not poll.
        self.assert_stays(False, "ac", seconds=3)
        self.uevent("AC")
        self.wait_state(True, "on-battery")
        self.assertTrue(self.laptop_values_applied())
        self.plug()
        self.uevent("AC")
        self.wait_state(False, "ac")
        self.assertEqual(self.root.vm(), self.original)

    def test_low_battery_percent(self):
        self.unplug(capacity="40")
        self.uevent("BAT0")
        self.wait_state(True, "on-battery")
        self.supply("BAT0", capacity="9")
        self.uevent("BAT0")
        self.wait_state(False, "low-battery")
        # Back above the level but still discharging: stays off.
        self.supply("BAT0", capacity="30")
        self.uevent("BAT0")
        self.assert_stays(False, "low-battery")
        self.plug()
        self.uevent("AC")
        self.wait_state(False, "ac")
        # The level is a setting.
        self.ctl_run("set", "LowBatteryPercent=50", check=True)
        self.unplug(capacity="45")
        self.uevent("AC")
        self.wait_state(False, "low-battery")

    def test_no_wakeups_while_idle(self):
        # Other device events on the machine (a loop device elsewhere) do
        # wake the daemon, once each: count them alongside. Anything else
        # that wakes it on a busy machine is retried (3 times at most).
        for attempt in range(3):
            wait_quiet(self, self.daemon.pid)
            listener = subprocess.Popen(["nsenter", "--net=/proc/%d/ns/net" % self.daemon.pid,
                                         "/usr/bin/python3", "-c", COUNT_UEVENTS, "6"],
                                        stdout=subprocess.PIPE, text=True)
            self.procs.append(listener)
            self.assertEqual(listener.stdout.readline(), "ready\n", "the uevent listener did not start")
            before = ctx_switches(self.daemon.pid)
            out = listener.communicate(timeout=30)[0]
            after = ctx_switches(self.daemon.pid)
            events = int(out.strip())
            # A one-second poll would show at least six.
            if after - before <= 2 + 2 * events:
                return
            print("attempt %d: the daemon woke up %d times in 6 s idle, with %d device events"
                  % (attempt + 1, after - before, events))
        self.fail("the daemon woke up %d times in 6 s idle, with %d device events (3 attempts)"
                  % (after - before, events))


@needs_root
class InhibitTest(PowerTestCase):
    config_text = "[LaptopMode]\nMode=on\n"

    HOLDER = r"""
import signal, sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM)
n = int(sys.argv[1])
for i in range(n):
    try:
        r = bus.call_sync("org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                          "org.laptopmode.LaptopMode1", "Inhibit",
                          GLib.Variant("(ss)", ("backup-%d" % i, "copying files")),
                          GLib.VariantType("(u)"), 0, -1)
        print("cookie", r.unpack()[0], flush=True)
    except GLib.Error as e:
        print("error", e.message, flush=True)
print("ready", flush=True)
signal.pause()  # holds until the test kills it
"""

    def setUp(self):
        super().setUp()
        self.start_daemon()

    def holder(self, n=1):
        p = subprocess.Popen(["/usr/bin/python3", "-c", self.HOLDER, str(n)], env=self.env,
                             stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        lines = []
        for line in p.stdout:
            lines.append(line.strip())
            if line.startswith("ready"):
                break
        return p, lines

    def test_hold_and_holder_exit(self):
        self.wait_state(True, "manual")
        p, lines = self.holder(1)
        self.assertTrue(lines[0].startswith("cookie"), lines)
        self.wait_state(False, "inhibited")
        st = self.status()
        self.assertEqual(st["Inhibitors"], [["backup-0", "copying files", 0]])
        p.kill()
        p.wait()
        self.wait_state(True, "manual")
        self.assertEqual(self.status()["Inhibitors"], [])

    def test_per_client_cap(self):
        p, lines = self.holder(17)
        cookies = [l for l in lines if l.startswith("cookie")]
        errors = [l for l in lines if l.startswith("error")]
        self.assertEqual(len(cookies), 16)
        self.assertEqual(len(errors), 1)
        self.assertIn("at most 16", errors[0])
        self.assertEqual(len(set(cookies)), 16)
        p.kill()
        p.wait()
        self.wait_state(True, "manual")

    def test_bad_arguments(self):
        for app, why, expect in (("", "x", "Application"), ("a" * 65, "x", "Application"),
                                 ("app", "", "Reason"), ("app\x01", "x", "Application"),
                                 ("app", "r" * 257, "Reason"),
                                 # Bidirectional overrides and isolates.
                                 ("app\u202e", "x", "Application"),
                                 ("app", "r\u2067x", "Reason")):
            r = self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                            "Inhibit", "ss", app, why)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(expect, r.err)
        r = self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Release", "u", "12345")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("No hold with cookie 12345", r.err)
        self.wait_state(True, "manual")

    def test_release_own_hold(self):
        """Release by the connection that took the hold ends it at once."""
        self.wait_state(True, "manual")
        code = ("import sys\nfrom gi.repository import Gio, GLib\n"
                "bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)\n"
                "call = lambda m, a, t: bus.call_sync('%s', '%s', '%s', m, a, t, 0, -1, None)\n"
                "c = call('Inhibit', GLib.Variant('(ss)', ('backup', 'copying')), GLib.VariantType('(u)'))\n"
                "print('held', flush=True); sys.stdin.readline()\n"
                "call('Release', GLib.Variant('(u)', c.unpack()), None)\n"
                "print('released', flush=True); sys.stdin.readline()\n"
                % (lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE))
        p = subprocess.Popen(["/usr/bin/python3", "-c", code], env=self.env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.procs.append(p)
        self.addCleanup(p.stdin.close)
        self.assertEqual(p.stdout.readline(), "held\n")
        self.wait_state(False, "inhibited")
        p.stdin.write("\n")
        p.stdin.flush()
        self.assertEqual(p.stdout.readline(), "released\n")
        # Still connected: it is the Release, not a disconnect, that ends it.
        self.wait_state(True, "manual")
        self.assertEqual(self.status()["Inhibitors"], [])
        self.assertIsNone(p.poll())
        p.stdin.write("\n")
        p.stdin.flush()
        self.assertEqual(p.wait(timeout=10), 0)

    def test_release_of_another_clients_hold_refused(self):
        p, lines = self.holder(1)
        cookie = lines[0].split()[1]
        # A hold counts once it has lasted the settle time (1 s).
        self.wait_state(False, "inhibited")
        r = self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Release", "u", cookie)
        self.assertNotEqual(r.returncode, 0)
        self.assert_stays(False, "inhibited", seconds=1)
        p.kill()

    def test_ctl_inhibit_runs_command(self):
        marker = os.path.join(self.tmp, "seen")
        r = self.run_as([self.ctl, "inhibit", "--why", "upgrading packages", "--who", "apt", "--",
                         "sh", "-c", "%s status --json > %s; exit 3" % (self.ctl, marker)])
        self.assertEqual(r.returncode, 3, r)
        import json
        with open(marker) as f:
            seen = json.load(f)
        self.assertEqual((seen["Active"], seen["Reason"]), (False, "inhibited"))
        self.assertEqual(seen["Inhibitors"], [["apt", "upgrading packages", 0]])
        self.wait_state(True, "manual")
        r = self.ctl_run("inhibit")
        self.assertEqual(r.returncode, 2)
        self.assertIn("command", r.err)


@lmtest.realkernel
@unittest.skipUnless(*lmtest.can_run("root", "namespace", "loop"))
class SleepAndShutdownTest(PowerTestCase):
    """Real kernel: dirty data on a loop filesystem reaches the disk before
    logind may suspend, and on SIGTERM."""

    DATA_MB = 64

    def setUp(self):
        super().setUp()
        self.fs = lmtest.LoopFilesystem(self.tmp, "disk", size_mb=160)
        self.addCleanup(self.fs.cleanup)

    def dirty(self):
        subprocess.run(["sync"], check=True)
        before = self.fs.written_sectors()
        with open(os.path.join(self.fs.mount_point, "data"), "wb") as f:
            f.write(os.urandom(self.DATA_MB << 20))
        # The kernel holds it for dirty_expire_centisecs (30 s here at least).
        self.assertLess(self.fs.written_sectors() - before, (self.DATA_MB << 20) // 512 // 2)
        return before

    def logind(self, method, *args):
        return self.run_as(["gdbus", "call", "--system", "--dest", LOGIND, "--object-path",
                            "/org/freedesktop/login1", "--method", method] + list(args), check=True)

    def our_lock(self):
        out = self.logind("org.freedesktop.login1.Manager.ListInhibitors").out
        return "laptop-moded" in out and "delay" in out

    def test_prepare_for_sleep_flushes_before_release(self):
        self.start_mock("logind")
        self.start_daemon()
        self.wait_until(self.our_lock, message="the daemon's delay lock")
        self.assertIn("sleep", self.logind("org.freedesktop.login1.Manager.ListInhibitors").out)
        before = self.dirty()
        self.logind("org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.login1.Manager",
                    "PrepareForSleep", "b", "[<true>]")
        # The moment the lock is gone, the data must already be on the disk.
        deadline = time.monotonic() + 30
        while self.our_lock():
            self.assertLess(time.monotonic(), deadline, "lock never released")
        written = self.fs.written_sectors() - before
        self.assertGreaterEqual(written, (self.DATA_MB << 20) // 512)
        # Resume: the lock is taken again for next time.
        self.logind("org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.login1.Manager",
                    "PrepareForSleep", "b", "[<false>]")
        self.wait_until(self.our_lock, message="the lock taken again after resume")

    def test_sigterm_restores_and_syncs(self):
        self.ctl_env_mode_on = True
        self.start_daemon()
        self.ctl_run("start", check=True)
        original_expire = "1234"
        self.assertEqual(self.root.vm()["dirty_expire_centisecs"], "60000")
        before = self.dirty()
        self.assertEqual(self.stop_daemon(signal.SIGTERM), 0)
        self.assertGreaterEqual(self.fs.written_sectors() - before, (self.DATA_MB << 20) // 512)
        self.assertEqual(self.root.vm()["dirty_expire_centisecs"], original_expire)


if __name__ == "__main__":
    lmtest.main()
