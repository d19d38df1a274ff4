#!/usr/bin/python3
"""laptop-modectl measure (issue 40): an A/B run of the battery's discharge
with laptop mode on and off, against the real daemon.

The battery is a stand-in whose discharge follows the daemon's Active
property: a known difference between laptop mode on and off, plus a drift
(which the ABBA order cancels but which widens each arm's spread, so the
interval is wide enough that the checks below hold on every run, not 95 %
of them) and a little jitter. Through UPower (python-dbusmock, EnergyRate
set as the battery would), through a fake /sys/class/power_supply with only
energy_now (in steps) and with current_now and voltage_now. Windows are
of a second or two; the whole file stays under a minute.
"""

import json
import os
import re
import signal
import subprocess
import time
import unittest

from lmtest import CTL, MOCK_BUS_POLICY, SRCDIR, UNPRIVILEGED, DaemonTestCase, is_root

UPOWER = "org.freedesktop.UPower"
DISPLAY = "/org/freedesktop/UPower/devices/DisplayDevice"

# The battery: every TICK s, the discharge for the daemon's Active now.
# argv: upower|energy|current, base W, saving W (off − on), drift W/s,
# jitter W, then for sysfs the battery's directory and energy_now's step (J).
BATTERY = r"""
import os, random, sys, time
from gi.repository import Gio, GLib
kind = sys.argv[1]
base, saving, drift, jitter = map(float, sys.argv[2:6])
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
rng = random.Random(40)
tick = 0.1 if kind == "upower" else 0.02
t0 = last = time.monotonic()
energy_j = 3600.0 * 40  # 40 Wh

def write(name, value):
    d = sys.argv[6]
    with open(os.path.join(d, "." + name), "w") as f:
        f.write("%d\n" % value)
    os.rename(os.path.join(d, "." + name), os.path.join(d, name))

while True:
    r = bus.call_sync("org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                      "org.freedesktop.DBus.Properties", "Get",
                      GLib.Variant("(ss)", ("org.laptopmode.LaptopMode1", "Active")),
                      None, 0, 5000, None)
    active = r.unpack()[0]
    now = time.monotonic()
    watts = base + (0 if active else saving) + drift * (now - t0) + rng.uniform(-jitter, jitter)
    if kind == "upower":
        bus.call_sync("org.freedesktop.UPower", "/org/freedesktop/UPower/devices/DisplayDevice",
                      "org.freedesktop.DBus.Properties", "Set",
                      GLib.Variant("(ssv)", ("org.freedesktop.UPower.Device", "EnergyRate",
                                             GLib.Variant("d", watts))), None, 0, 5000, None)
    elif kind == "energy":
        step = float(sys.argv[7])
        energy_j -= watts * (now - last)
        write("energy_now", int(energy_j // step * step / 3600 * 1e6))
    else:
        write("voltage_now", 12000000)
        write("current_now", int(watts / 12 * 1e6))
    last = now
    time.sleep(tick)
"""


def measure_args(window, windows, discard, *more):
    return ["measure", "--window", window, "--windows", str(windows), "--discard", discard] + \
        list(more)


needs_root = unittest.skipUnless(is_root(), "needs root: a real polkitd, mocks owning system names")


class MeasureTestCase(DaemonTestCase):
    extra_bus_config = MOCK_BUS_POLICY
    config_text = "[LaptopMode]\nMode=auto\nAttribution=none\n"

    def setUp(self):
        super().setUp()
        # laptop-modectl reads /sys through the same fake root as the daemon.
        self.env["LAPTOP_MODED_ROOT"] = self.root.path

    def battery(self, kind, saving, base=8.0, drift=0.0, jitter=0.1, *sysfs):
        """Start the stand-in battery; stopped with the test."""
        p = subprocess.Popen(["/usr/bin/python3", "-c", BATTERY, kind, str(base), str(saving),
                              str(drift), str(jitter)] + [str(a) for a in sysfs], env=self.env)
        self.procs.append(p)
        time.sleep(0.3)
        self.assertIsNone(p.poll(), "the stand-in battery did not start")
        if sysfs:
            # Its first reading written: on a loaded machine its start
            # (Python, GI, the bus) took longer than the sleep, and measure
            # found no energy_now yet (a soak run beside stress-ng).
            first = {"energy": ["energy_now"]}.get(kind, ["voltage_now", "current_now"])
            self.wait_until(lambda: p.poll() is not None or all(
                os.path.exists(os.path.join(str(sysfs[0]), f)) for f in first), timeout=30,
                message="the stand-in battery's first reading in %s" % sysfs[0])
            self.assertIsNone(p.poll(), "the stand-in battery ended")
        return p

    def wait_first_window(self, p):
        """Until the run's first window has begun: its SetMode("on") comes
        after its signal handlers and bus subscriptions, so a signal, a
        closed lid or a charger from now on is seen (a fixed sleep was not
        enough for the ASan build on a slow machine)."""
        self.wait_until(lambda: p.poll() is not None or self.properties()["Mode"] == "on",
                        timeout=30, message="the run's first window (Mode on)")
        self.assertIsNone(p.poll(), "laptop-modectl measure ended before its first window")
        time.sleep(0.3)  # its reply and the progress bar's first line

    def measure_json(self, *args):
        r = self.ctl_run(*(list(args) + ["--json"]))
        self.assertEqual(r.returncode, 0, "%r\n%s" % (r, self.daemon_log()))
        return json.loads(r.out)

    def assert_found(self, result, saving):
        """The injected difference lies within the reported interval, and
        the interval excludes zero (a saving, or a cost, is stated)."""
        self.assertTrue(result["Measurable"], result)
        self.assertFalse(result["Partial"], result)
        self.assertLessEqual(abs(result["DifferenceW"] - saving), result["IntervalW"], result)
        self.assertGreater(result["IntervalW"], 0, result)

    def assert_put_back(self, mode="auto"):
        st = self.status()
        self.assertEqual(st["Mode"], mode, st)
        return st


@needs_root
class UPowerMeasureTest(MeasureTestCase):
    def setUp(self):
        super().setUp()
        self.start_mock("upower", {"OnBattery": True})
        self.set_upower(DISPLAY, UPOWER + ".Device", "IsPresent", "<true>")
        self.set_upower(DISPLAY, UPOWER + ".Device", "Energy", "<40.0>")
        self.start_daemon()
        self.wait_state(True, "on-battery")

    def test_saving_within_interval_saved_and_shown(self):
        self.battery("upower", 2.0, 8.0, 0.05)
        result = self.measure_json(*measure_args("1.2s", 4, "0.3s"))
        self.assert_found(result, 2.0)
        self.assertEqual((result["Source"], result["Setting"]), ("UPower EnergyRate", "LaptopMode"))
        self.assertEqual((result["WindowsA"], result["WindowsB"]), (2, 2))
        # 40 Wh at 8 W against 10 W: an hour more.
        self.assertAlmostEqual(result["BatteryMinutes"], 60.0, delta=30.0)
        self.wait_state(True, "on-battery")
        self.assert_put_back()
        # Kept by the daemon: the property, the state file, the report.
        saved = self.properties()["Measurement"]
        self.assertAlmostEqual(saved["DifferenceW"], result["DifferenceW"], places=6)
        self.assertTrue(os.path.exists(os.path.join(self.state_dir, "measurement")))
        report = self.ctl_run("report", check=True).out
        self.assertRegex(report, r"measured on this laptop on \d{4}-\d\d-\d\d: laptop mode saves "
                                 r"\d+\.\d\d W ± \d+\.\d\d W, about \d+ min of this battery")
        html = os.path.join(self.tmp, "report.html")
        self.ctl_run("report", "--html", html, check=True)
        with open(html) as f:
            self.assertRegex(f.read(), r"Measured on this laptop on [-0-9]+: laptop mode saves ")
        as_json = json.loads(self.ctl_run("report", "--json", check=True).out)
        self.assertEqual(as_json["measurement"], result)
        metrics = self.ctl_run("report", "--openmetrics", check=True).out
        self.assertRegex(metrics, r"laptop_mode_measured_saving_watts [0-9.]+")
        # The same after a restart: the state file, validated.
        self.stop_daemon()
        self.start_daemon()
        self.assertAlmostEqual(self.properties()["Measurement"]["DifferenceW"],
                               result["DifferenceW"], places=6)

    def test_cost_within_interval_text(self):
        self.battery("upower", -2.0, 8.0, 0.05)
        r = self.ctl_run(*measure_args("1.2s", 4, "0.3s"))
        self.assertEqual(r.returncode, 0, r)
        self.assertRegex(r.out, r"Laptop mode costs (\d+\.\d\d) W ± (\d+\.\d\d) W")
        cost, half = map(float, re.search(r"costs (\d+\.\d\d) W ± (\d+\.\d\d) W", r.out).groups())
        self.assertLessEqual(abs(cost - 2.0), half + 0.01, r.out)
        self.assertNotIn("saves", r.out)
        saved = self.properties()["Measurement"]
        self.assertLessEqual(abs(saved["DifferenceW"] + 2.0), saved["IntervalW"], saved)

    def test_zero_difference_not_measurable(self):
        self.battery("upower", 0.0, 8.0, 0.05)
        r = self.ctl_run(*measure_args("1.2s", 4, "0.3s"))
        self.assertEqual(r.returncode, 0, r)
        self.assertIn("No difference measurable in 1 min; run longer", r.out)
        self.assertNotRegex(r.out, r"saves|costs")
        saved = self.properties()["Measurement"]
        self.assertFalse(saved["Measurable"])
        self.assertNotIn("BatteryMinutes", saved)
        report = self.ctl_run("report", check=True).out
        self.assertIn("no difference measurable", report)
        self.assertNotIn("laptop mode saves", report)

    def test_ac_mid_run_stops_puts_back_partial(self):
        self.battery("upower", 2.0)
        p = subprocess.Popen([self.ctl] + measure_args("2s", 8, "0.4s", "--json"), env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        self.wait_first_window(p)
        time.sleep(2.2)  # into the second window
        self.assertIsNone(p.poll())
        self.set_upower("/org/freedesktop/UPower", UPOWER, "OnBattery", "<false>")
        out, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, 0, err)
        result = json.loads(out)
        self.assertTrue(result["Partial"], result)
        self.assertEqual(result["Ended"], "ac")
        self.assertLess(result["Windows"], 8)
        self.assertFalse(result["Measurable"], result)
        st = self.assert_put_back("auto")
        self.wait_state(False, "ac")
        self.assertTrue(self.properties()["Measurement"]["Partial"])
        self.assertIn("partial", self.ctl_run("report", check=True).out.lower())
        # The text says so too (a run refused on AC, now).
        r = self.ctl_run("measure")
        self.assertEqual(r.returncode, 1, r)
        self.assertIn("on battery only", r.err)
        del st

    def test_ctrl_c_and_lid_put_back(self):
        self.battery("upower", 2.0)
        self.ctl_run("mode", "off", check=True)
        # stderr on a terminal: the progress bar; stdout a pipe.
        master, slave = os.openpty()
        p = subprocess.Popen([self.ctl] + measure_args("2s", 8, "0.4s"), env=self.env,
                             stdout=subprocess.PIPE, stderr=slave, text=True)
        os.close(slave)
        self.procs.append(p)
        self.wait_first_window(p)
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=10)
        progress = b""
        try:
            while True:
                chunk = os.read(master, 4096)
                if not chunk:
                    break
                progress += chunk
        except OSError:
            pass  # EIO: the terminal's other end is closed
        os.close(master)
        self.assertEqual(p.returncode, 0, progress)
        self.assertIn("Partial result: the run ended early: interrupted", out)
        self.assertIn("] window 1/8 (laptop mode on)", progress.decode())
        self.assert_put_back("off")
        # A closed lid (UPower's LidIsClosed) ends it as well; no progress
        # bar without a terminal.
        p = subprocess.Popen([self.ctl] + measure_args("2s", 8, "0.4s", "--no-save"),
                             env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        self.procs.append(p)
        self.wait_first_window(p)
        self.set_upower("/org/freedesktop/UPower", UPOWER, "LidIsClosed", "<true>")
        out, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("the lid was closed", out)
        self.assertEqual(err, "")
        self.assert_put_back("off")
        # --no-save: the interrupted run's result is still the one kept.
        self.assertEqual(self.properties()["Measurement"]["Ended"], "interrupted")

    def test_suspend_ends_run(self):
        self.start_mock("logind")
        self.battery("upower", 2.0)
        p = subprocess.Popen([self.ctl] + measure_args("2s", 8, "0.4s", "--json"), env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        self.wait_first_window(p)
        self.run_as(["gdbus", "call", "--system", "--dest", "org.freedesktop.login1",
                     "--object-path", "/org/freedesktop/login1", "--method",
                     "org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.login1.Manager",
                     "PrepareForSleep", "b", "[<true>]"], check=True)
        out, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, 0, err)
        result = json.loads(out)
        self.assertEqual((result["Partial"], result["Ended"]), (True, "suspend"), result)
        self.assert_put_back("auto")

    def test_compare_setting_put_back(self):
        # The battery follows Active, which --compare keeps on: no difference.
        self.battery("upower", 2.0, 8.0, 0.05)
        before = self.properties()["MaxLostWork"]
        result = self.measure_json(*measure_args("1s", 4, "0.3s", "--compare", "maxlostwork=300"))
        self.assertEqual((result["Setting"], result["ArmA"], result["ArmB"]),
                         ("MaxLostWork", "MaxLostWork=300", "MaxLostWork=%d" % before))
        self.assertFalse(result["Measurable"], result)
        self.assertEqual(result["WindowsA"] + result["WindowsB"], 4, result)
        self.assertEqual(self.properties()["MaxLostWork"], before)
        self.assert_put_back("auto")
        r = self.ctl_run("measure", "--compare", "Mode=off")
        self.assertEqual(r.returncode, 2, r)
        r = self.ctl_run("measure", "--compare", "NoSuchKey=1")
        self.assertEqual(r.returncode, 2, r)

    def test_compare_killed_leaves_config_as_it_was(self):
        """--compare's arms are an override tied to the command's
        connection: SIGKILL mid-run, and the daemon drops it; the config
        file is byte for byte as before, the setting back in force."""
        self.battery("upower", 2.0, 8.0, 0.05)
        with open(self.config, "rb") as f:
            config_before = f.read()
        mtime_before = os.stat(self.config).st_mtime_ns
        before = self.properties()["MaxLostWork"]
        self.assertNotEqual(before, 3600)
        p = subprocess.Popen([self.ctl] + measure_args("2s", 8, "0.3s", "--compare",
                                                      "MaxLostWork=3600", "--json"),
                             env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        self.procs.append(p)
        self.wait_first_window(p)
        self.wait_until(lambda: self.properties()["MaxLostWork"] == 3600, timeout=15,
                        message="arm A's MaxLostWork=3600 in force")
        p.kill()
        p.communicate(timeout=10)
        self.wait_until(lambda: self.properties()["MaxLostWork"] == before, timeout=15,
                        message="MaxLostWork back once the killed command's connection closed")
        self.wait_for_log("ended (its connection closed)")
        with open(self.config, "rb") as f:
            self.assertEqual(f.read(), config_before)
        self.assertEqual(os.stat(self.config).st_mtime_ns, mtime_before, "the file was rewritten")
        self.assertNotIn("saved to", self.daemon_log())

    def test_refused_changes_nothing(self):
        # UPower's mock answers root only on this bus: a battery in sysfs.
        self.supply("BAT0", type="Battery", status="Discharging", power_now="8000000")
        r = self.ctl_run(*measure_args("1s", 4, "0.2s"), user=UNPRIVILEGED)
        self.assertEqual(r.returncode, 1, r)
        self.assertIn("switch", r.err)
        self.assertNotIn("put back", r.err)
        self.assert_put_back("auto")
        self.assertEqual(dict(self.properties()["Measurement"]), {})

    def test_save_measurement_bad_input(self):
        for arg, message in (
                ("{'Bogus': <1>}", "Unknown measurement key"),
                ("{'Time': <'now'>}", "takes type x"),
                ("{'Time': <int64 1>, 'Setting': <'%s'>, 'ArmA': <'a'>, 'ArmB': <'b'>, "
                 "'Source': <'s'>, 'Measurable': <false>, 'Partial': <false>, 'Ended': <'done'>}"
                 % ("x" * 200), "at most 128 bytes"),
                ("{'Time': <int64 1>}", "is missing")):
            r = self.gdbus_call("SaveMeasurement", arg)
            self.assertNotEqual(r.returncode, 0, r)
            self.assertIn("InvalidArgs", r.err)
            self.assertIn(message, r.err)

    def test_save_measurement_unauthorized(self):
        good = ("{'Time': <int64 1>, 'Setting': <'LaptopMode'>, 'ArmA': <'a'>, 'ArmB': <'b'>, "
                "'Source': <'s'>, 'Measurable': <false>, 'Partial': <false>, 'Ended': <'done'>}")
        name, message = self.call_error("SaveMeasurement", "(%s,)" % good, user=UNPRIVILEGED)
        self.assertEqual(name, "org.freedesktop.DBus.Error.AccessDenied")
        self.assertRegex(message, r"^Not authorized to SaveMeasurement: polkit action "
                         r"org\.laptopmode\.LaptopMode1\.switch \S")
        self.assertEqual(dict(self.properties()["Measurement"]), {})


@needs_root
class SysfsMeasureTest(MeasureTestCase):
    """No UPower: the batteries in /sys/class/power_supply, read only while
    the run lasts."""

    def setUp(self):
        super().setUp()
        self.supply("AC", type="Mains", online="0")
        self.supply("BAT0", type="Battery", present="1", status="Discharging", capacity="80",
                    voltage_now="12000000")
        self.supply("hidpp_battery_0", type="Battery", scope="Device", status="Discharging",
                    capacity="50", power_now="999000000")
        self.start_daemon(wrapper=["unshare", "-n", "--"])
        self.wait_state(True, "on-battery")

    def test_energy_now_in_steps(self):
        bat = self.root.file("/sys/class/power_supply/BAT0")
        # The steps' moments are known to a reading (50 ms): a drift wide
        # enough that the interval holds that error too, on every run.
        self.battery("energy", 3.0, 8.0, 0.15, 0.1, bat, 0.5)
        result = self.measure_json(*measure_args("1s", 8, "0.25s", "--interval", "0.05s"))
        self.assert_found(result, 3.0)
        self.assertEqual(result["Source"], "sysfs energy_now differences")
        self.assert_put_back()

    def test_current_and_voltage(self):
        bat = self.root.file("/sys/class/power_supply/BAT0")
        self.battery("current", -2.0, 8.0, 0.05, 0.1, bat)
        result = self.measure_json(*measure_args("1.5s", 4, "0.4s", "--interval", "0.1s"))
        self.assert_found(result, -2.0)
        self.assertEqual(result["Source"], "sysfs current_now × voltage_now")
        self.assert_put_back()
        # Charging (AC plugged): seen at the next reading, the run ends.
        p = subprocess.Popen([self.ctl] + measure_args("2s", 8, "0.4s", "--interval", "0.1s",
                                                       "--json"),
                             env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        self.wait_first_window(p)
        self.supply("BAT0", status="Charging")
        out, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(json.loads(out)["Ended"], "ac")
        self.assert_put_back()


class MeasureDocsTest(unittest.TestCase):
    """measure --help and laptop-modectl(1) describe the command."""

    def test_help(self):
        r = subprocess.run([CTL, "measure", "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        for words in ("--window", "--windows", "--duration", "--compare", "--json", "95 %",
                      "EnergyRate", "energy_now", "cannot see"):
            self.assertIn(words, r.stdout)
        r = subprocess.run([CTL, "--help"], capture_output=True, text=True)
        self.assertIn("measure", r.stdout)

    def test_man_page(self):
        with open(os.path.join(SRCDIR, "data", "laptop-modectl.1")) as f:
            text = f.read()
        start = text.index(".BR measure ")
        section = text[start:text.index(".SH", start)]
        for words in ("\\-\\-window", "\\-\\-windows", "\\-\\-compare", "\\-\\-json", "EnergyRate",
                      "energy_now", "run longer", "partial", "cannot see", "95\\ %"):
            self.assertIn(words, section)


if __name__ == "__main__":
    import lmtest
    lmtest.main()
