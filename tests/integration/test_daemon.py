#!/usr/bin/python3
"""Tier 2: the real daemon on a private system bus, against a fake root.

Drives laptop-moded the way users do: laptop-modectl, busctl and gdbus, as
root and as an unprivileged user.
"""

import os
import signal
import unittest

import lmtest
from lmtest import DaemonTestCase, SYSCTL_VM, is_root

LAPTOP_VALUES = {
    "laptop_mode": "2",
    "dirty_writeback_centisecs": "60000",
    "dirty_expire_centisecs": "60000",
    "dirty_ratio": "60",
    "dirty_background_ratio": "1",
}


def needs_root(cls):
    return unittest.skipUnless(is_root(), "needs root: runs clients as another user and uses setpriv")(cls)


@needs_root
class StartStopTest(DaemonTestCase):
    def setUp(self):
        super().setUp()
        self.start_daemon()
        self.original = self.root.vm()

    def assert_applied(self, extra=None):
        vm = self.root.vm()
        expected = dict(LAPTOP_VALUES, **(extra or {}))
        for k, v in expected.items():
            self.assertEqual(vm[k], v, "vm.%s after Start" % k)

    def assert_restored(self):
        self.assertEqual(self.root.vm(), self.original)
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")),
                         "state file left behind after a full restore")

    def test_ctl(self):
        st = self.status()
        self.assertEqual((st["Active"], st["Mode"], st["Engine"], st["Reason"]), (False, "auto", "kernel", "ac"))
        self.ctl_run("start", check=True)
        self.assert_applied()
        st = self.status()
        self.assertEqual((st["Active"], st["Mode"]), (True, "on"))
        self.ctl_run("stop", check=True)
        self.assert_restored()
        self.assertEqual(self.status()["Active"], False)

    def test_sync_narrowed_outside_the_realkernel_tier(self):
        """Stop's sync() reaches the fake root's filesystem alone here:
        this tier runs beside the real-kernel one, whose loop disks a
        machine-wide sync() would flush mid-measurement."""
        self.assertNotEqual(os.environ.get("LM_TIER"), "realkernel")
        self.assertIn("sync() is a syncfs() of %s alone" % self.root.path, self.daemon_log())

    def test_ctl_mode(self):
        self.ctl_run("mode", "on", check=True)
        self.assert_applied()
        self.ctl_run("mode", "off", check=True)
        self.assert_restored()
        r = self.ctl_run("mode", "sideways")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("sideways", r.err)
        self.assertEqual(self.root.vm(), self.original)

    def test_busctl(self):
        self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Start", check=True)
        self.assert_applied()
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Active", check=True)
        self.assertEqual(r.out.strip(), "b true")
        self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "SetMode", "s", "off", check=True)
        self.assert_restored()

    def test_gdbus(self):
        self.gdbus_call("Start", check=True)
        self.assert_applied()
        self.gdbus_call("Stop", check=True)
        self.assert_restored()

    def test_start_twice_keeps_first_originals(self):
        self.ctl_run("start", check=True)
        self.ctl_run("start", check=True)
        self.ctl_run("stop", check=True)
        self.assert_restored()
        # Stop while off is harmless.
        self.ctl_run("stop", check=True)
        self.assert_restored()

    def test_sigterm_restores(self):
        self.ctl_run("start", check=True)
        self.assertEqual(self.stop_daemon(signal.SIGTERM), 0)
        self.assert_restored()

    def test_sigint_restores(self):
        self.ctl_run("start", check=True)
        self.assertEqual(self.stop_daemon(signal.SIGINT), 0)
        self.assert_restored()

    def test_sighup_restores(self):
        # Closing the terminal of scripts/run-service: the system is put back.
        self.ctl_run("start", check=True)
        self.assert_applied()
        self.assertEqual(self.stop_daemon(signal.SIGHUP), 0)
        self.assert_restored()
        self.assertIn("Hangup", self.this_daemon_log())

    def test_sigquit_restores(self):
        # Its default would dump core with the laptop values left in place.
        self.ctl_run("start", check=True)
        self.assert_applied()
        self.assertEqual(self.stop_daemon(signal.SIGQUIT), 0)
        self.assert_restored()

    def test_ignored_signals_change_nothing(self):
        # Each of these would end a daemon that did not handle it; here it is
        # logged and the daemon goes on, laptop mode still on, then stops
        # cleanly. SIGPIPE is ignored without a word.
        self.ctl_run("start", check=True)
        sigs = [signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGPIPE,
                signal.SIGVTALRM, signal.SIGRTMIN + 5]
        for sig in sigs:
            self.daemon.send_signal(sig)
        # Until each handled signal is logged (or the daemon is gone): a
        # fixed wait assumed how fast the ASan build gets to them.
        self.wait_until(lambda: self.daemon.poll() is not None
                        or self.this_daemon_log().count("means nothing to laptop-moded")
                        >= len(sigs) - 1, timeout=20, message="the signals logged")
        self.assertIsNone(self.daemon.poll(), "laptop-moded died:\n" + self.this_daemon_log())
        self.assert_applied()
        self.assertEqual(self.status()["Active"], True)
        log = self.this_daemon_log()
        self.assertEqual(log.count("means nothing to laptop-moded"), len(sigs) - 1, log)
        self.ctl_run("stop", check=True)
        self.assert_restored()
        self.assertEqual(self.stop_daemon(signal.SIGTERM), 0)

    def test_kill9_then_restart_restores(self):
        self.ctl_run("start", check=True)
        self.assert_applied()
        self.stop_daemon(signal.SIGKILL)
        # Nothing ran at the kill: the laptop values are still there.
        self.assert_applied()
        self.assertTrue(os.path.exists(os.path.join(self.state_dir, "state")))
        self.start_daemon()
        self.assert_restored()
        self.assertEqual(self.status()["Active"], False)

    def test_value_changed_by_someone_else_is_left_alone(self):
        self.ctl_run("start", check=True)
        self.root.write("/proc/sys/vm/dirty_ratio", "33\n")
        self.ctl_run("stop", check=True)
        vm = self.root.vm()
        self.assertEqual(vm["dirty_ratio"], "33")
        for k in ("dirty_expire_centisecs", "dirty_writeback_centisecs", "laptop_mode"):
            self.assertEqual(vm[k], self.original[k])

    def test_write_failure_rolls_back(self):
        # A tunable the kernel refuses (here: a directory where a file should
        # be) fails Start, and what was written before it is put back.
        path = self.root.file("/proc/sys/vm/dirty_ratio")
        os.unlink(path)
        os.mkdir(path)
        r = self.ctl_run("start")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("dirty_ratio", r.err)
        for k in ("laptop_mode", "dirty_writeback_centisecs", "dirty_expire_centisecs", "dirty_background_ratio"):
            self.assertEqual(self.root.read("/proc/sys/vm/" + k), self.original[k])
        self.assertEqual(self.status()["Active"], False)
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))

    def test_sync(self):
        self.ctl_run("sync", check=True)

    def test_concurrent_syncs_all_answered(self):
        # 32 at once share one sync() in flight (lm-sync.c); each is answered,
        # and a call that came during them is not kept waiting behind them.
        import subprocess
        argv = ["gdbus", "call", "--system", "--dest", lmtest.BUS_NAME, "--object-path",
                lmtest.OBJECT_PATH, "--method", lmtest.IFACE + ".Sync"]
        procs = [subprocess.Popen(argv, env=self.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(32)]
        results = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
        for out, err, rc in results:
            self.assertEqual(rc, 0, err)
            self.assertEqual(out.strip(), "()")
        self.assertIsNone(self.daemon.poll())
        self.gdbus_call("Sync", check=True)

    def test_laptop_mode_alias(self):
        alias = os.path.join(self.bindir, "laptop_mode")
        os.symlink(self.ctl, alias)
        self.run_as([alias, "start"], check=True)
        self.assert_applied()
        r = self.run_as([alias, "status"], check=True)
        self.assertIn("Laptop mode:         on", r.out)
        self.run_as([alias, "stop"], check=True)
        self.assert_restored()
        r = self.run_as([alias, "set", "MaxLostWork=5"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("laptop_mode start|stop|status", r.err)


@needs_root
class PropertiesChangedTest(DaemonTestCase):
    def test_active_and_mode_signalled(self):
        self.start_daemon()
        # Subscribed before the first call: the watch's match is in force
        # when signal_watch returns.
        w = self.signal_watch(sender=lmtest.BUS_NAME, iface="org.freedesktop.DBus.Properties",
                              member="PropertiesChanged", path=lmtest.OBJECT_PATH)
        self.ctl_run("start", check=True)
        self.ctl_run("stop", check=True)

        def changes(signals):
            return [s[4][1] for s in signals if s[4][0] == lmtest.IFACE]

        def both(signals):
            c = changes(signals)
            return (any(d.get("Active") is True and d.get("Mode") == "on" for d in c)
                    and any(d.get("Active") is False and d.get("Mode") == "off" for d in c))
        self.assertTrue(w.wait(both), "PropertiesChanged for on and off: %r" % changes(w.signals))


def xml_properties():
    """(name, type) of every property the D-Bus XML declares."""
    import xml.etree.ElementTree as ET
    tree = ET.parse(os.path.join(lmtest.SRCDIR, "dbus", "org.laptopmode.LaptopMode1.xml"))
    iface = [i for i in tree.getroot().iter("interface") if i.get("name") == lmtest.IFACE][0]
    return [(p.get("name"), p.get("type")) for p in iface.iter("property")]


@needs_root
class PropertiesTest(DaemonTestCase):
    def test_every_property_public_and_read_only(self):
        """Every property in the XML is readable by anyone, and nobody, not
        even root, can set one: they change through the methods only."""
        self.start_daemon()
        declared = xml_properties()
        self.assertGreater(len(declared), 10)
        code = ("import json, sys\nfrom gi.repository import Gio, GLib\n"
                "bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)\n"
                "r = bus.call_sync('%s', '%s', 'org.freedesktop.DBus.Properties', 'GetAll',"
                " GLib.Variant('(s)', ('%s',)), None, 0, -1, None)\n"
                "print(json.dumps(sorted(r.unpack()[0])))\n"
                % (lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE))
        r = self.run_as(["/usr/bin/python3", "-c", code], user=lmtest.UNPRIVILEGED, check=True)
        import json
        self.assertEqual(json.loads(r.out), sorted(n for n, _ in declared))
        before = self.properties()
        for name, sig in declared:
            with self.subTest(name):
                value = {"s": "'x'", "b": "true", "u": "uint32 1"}.get(sig, "@%s []" % sig)
                if sig.startswith("a{"):
                    value = "@%s {}" % sig
                for user in ("root", lmtest.UNPRIVILEGED):
                    g = self.run_as(["gdbus", "call", "--system", "--dest", lmtest.BUS_NAME,
                                     "--object-path", lmtest.OBJECT_PATH, "--method",
                                     "org.freedesktop.DBus.Properties.Set", lmtest.IFACE, name,
                                     "<%s>" % value], user=user)
                    self.assertNotEqual(g.returncode, 0, g)
                    self.assertIn("org.freedesktop.DBus.Error.", g.err)
                    self.assertIn(name, g.err)
        self.assertEqual(self.properties(), before)


@needs_root
class VersionTest(DaemonTestCase):
    def test_version_is_the_projects(self):
        self.start_daemon()
        want = lmtest.project_version()
        self.assertRegex(want, r"^\d+\.\d+")
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                        "Version", check=True)
        self.assertEqual(r.out.strip(), 's "%s"' % want)
        self.assertEqual(self.properties()["Version"], want)


@needs_root
class ConfigureTest(DaemonTestCase):
    def setUp(self):
        super().setUp()
        self.start_daemon()
        self.original = self.root.vm()

    def configure(self, *busctl_args, user=None):
        n = len(busctl_args) // 2
        return self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Configure",
                           "a{sv}", str(n), *[a for pair in zip(busctl_args[0::2], busctl_args[1::2]) for a in pair],
                           user=user)

    def assert_nothing_changed(self, before_status, before_vm):
        self.assertEqual(self.status(), before_status)
        self.assertEqual(self.root.vm(), before_vm)
        self.assertFalse(os.path.exists(self.config), "config file written after a refused Configure")

    BAD = [
        # (description, busctl a{sv} entries, key the message must name)
        ("unknown key", ["Turbo", "u", "1"], "Turbo"),
        ("wrong type", ["MaxLostWork", "s", "600"], "MaxLostWork"),
        ("wrong int type", ["MaxLostWork", "i", "600"], "MaxLostWork"),
        ("zero lost work", ["MaxLostWork", "u", "0"], "MaxLostWork"),
        ("over a day", ["MaxLostWork", "u", "86401"], "MaxLostWork"),
        ("ratio over 100", ["DirtyRatio", "u", "101"], "DirtyRatio"),
        ("background over dirty", ["DirtyBackgroundRatio", "u", "70"], "DirtyBackgroundRatio"),
        ("background equal dirty", ["DirtyRatio", "u", "10", "DirtyBackgroundRatio", "u", "10"], "DirtyBackgroundRatio"),
        ("bad engine", ["Engine", "s", "turbo"], "Engine"),
        ("bad mode", ["Mode", "s", "sideways"], "Mode"),
        ("zero delay", ["LaptopModeSeconds", "u", "0"], "LaptopModeSeconds"),
        ("one bad among good", ["MaxLostWork", "u", "300", "DirtyRatio", "u", "500"], "DirtyRatio"),
        ("battery level zero", ["LowBatteryPercent", "u", "0"], "LowBatteryPercent"),
        ("battery level 100", ["LowBatteryPercent", "u", "100"], "LowBatteryPercent"),
        ("remount as string", ["Remount", "s", "yes"], "Remount"),
        ("bad attribution", ["Attribution", "s", "crystal-ball"], "Attribution"),
        ("zero spin-up idle", ["SpinUpIdle", "u", "0"], "SpinUpIdle"),
        ("spin-up idle over a day", ["SpinUpIdle", "u", "86401"], "SpinUpIdle"),
        ("history as number", ["SpinUpHistory", "u", "1"], "SpinUpHistory"),
        ("recheck over a day", ["DiskRecheck", "u", "86401"], "DiskRecheck"),
        ("profile as string", ["FollowPowerProfile", "s", "yes"], "FollowPowerProfile"),
        ("defer as number", ["DeferMaintenance", "u", "0"], "DeferMaintenance"),
        ("disk settings as string", ["DiskSettings", "s", "sda"], "DiskSettings"),
    ]

    def check_bad_inputs(self):
        before_status, before_vm = self.status(), self.root.vm()
        for desc, entries, key in self.BAD:
            with self.subTest(desc):
                n = len(entries) // 3
                r = self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                                "Configure", "a{sv}", str(n), *entries)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(key, r.err)
                self.assert_nothing_changed(before_status, before_vm)
                # The same through gdbus shows the registered error name.
                g = self.gdbus_call("Configure", "{%s}" % ", ".join(
                    "'%s': <%s>" % (entries[i], gvariant(entries[i + 1], entries[i + 2]))
                    for i in range(0, len(entries), 3)))
                self.assertNotEqual(g.returncode, 0)
                self.assertIn("org.laptopmode.LaptopMode1.Error.InvalidArgs", g.err)
                self.assertIn(key, g.err)
                self.assert_nothing_changed(before_status, before_vm)

    def test_bad_input_inactive(self):
        self.check_bad_inputs()

    def test_bad_input_active(self):
        self.ctl_run("start", check=True)
        self.check_bad_inputs()

    def test_bad_input_ctl(self):
        for args, key in ((["MaxLostWork=abc"], "MaxLostWork"), (["Bogus=1"], "Bogus"),
                          (["DirtyRatio=0"], "DirtyRatio"), (["noequals"], "KEY=VALUE")):
            r = self.ctl_run("set", *args)
            self.assertNotEqual(r.returncode, 0, args)
            self.assertIn(key, r.err)
            self.assertEqual(len(r.err.strip().splitlines()), 1, r.err)
        self.assertFalse(os.path.exists(self.config))

    def test_empty_configure_refused(self):
        for start in (False, True):
            if start:
                self.ctl_run("start", check=True)
            with self.subTest(active=start):
                before_props, before_vm = self.properties(), self.root.vm()
                self.assertEqual(self.call_error("Configure", "(@a{sv} {},)"),
                                 ("org.laptopmode.LaptopMode1.Error.InvalidArgs", "No settings given"))
                r = self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                                "Configure", "a{sv}", "0")
                self.assertNotEqual(r.returncode, 0)
                self.assertIn("No settings given", r.err)
                self.assertEqual(self.properties(), before_props)
                self.assertEqual(self.root.vm(), before_vm)
                self.assertFalse(os.path.exists(self.config), "config file written by an empty Configure")
                # Refused before polkit is asked: an unprivileged caller gets
                # the same answer, not a denial.
                self.assertEqual(self.call_error("Configure", "(@a{sv} {},)", user=lmtest.UNPRIVILEGED),
                                 ("org.laptopmode.LaptopMode1.Error.InvalidArgs", "No settings given"))
                self.assertEqual(self.properties(), before_props)

    def test_configure_applies_and_persists(self):
        self.ctl_run("start", check=True)
        self.ctl_run("set", "MaxLostWork=300", "DirtyRatio=40", "DirtyBackgroundRatio=5", check=True)
        vm = self.root.vm()
        self.assertEqual(vm["dirty_expire_centisecs"], "30000")
        self.assertEqual(vm["dirty_ratio"], "40")
        self.assertEqual(vm["dirty_background_ratio"], "5")
        st = self.status()
        self.assertEqual((st["MaxLostWork"], st["DirtyRatio"], st["DirtyBackgroundRatio"]), (300, 40, 5))
        with open(self.config) as f:
            text = f.read()
        self.assertRegex(text, r"(?m)^MaxLostWork=300$")
        # The kernel engine's timer is LaptopModeSeconds, written at once.
        self.ctl_run("set", "LaptopModeSeconds=5", check=True)
        self.assertEqual(self.root.vm()["laptop_mode"], "5")
        self.assertEqual(self.status()["LaptopModeSeconds"], 5)
        # Originals still those from before the first Start.
        self.ctl_run("stop", check=True)
        self.assertEqual(self.root.vm(), self.original)
        # Persisted across a restart.
        self.stop_daemon()
        self.start_daemon()
        self.assertEqual(self.status()["MaxLostWork"], 300)

    def test_configure_keeps_comments(self):
        self.stop_daemon()
        with open(self.config, "w") as f:
            f.write("# my comment\n[LaptopMode]\n# lost work\nMaxLostWork=120\n")
        self.start_daemon()
        self.assertEqual(self.status()["MaxLostWork"], 120)
        self.ctl_run("set", "MaxLostWork=90", check=True)
        with open(self.config) as f:
            text = f.read()
        self.assertIn("# my comment", text)
        self.assertIn("# lost work", text)
        self.assertIn("MaxLostWork=90", text)

    def test_configure_mode_persists(self):
        self.ctl_run("set", "Mode=on", check=True)
        self.assertEqual(self.status()["Active"], True)
        self.stop_daemon()
        self.assertEqual(self.root.vm(), self.original)
        self.start_daemon()
        self.assertEqual(self.status()["Active"], True)
        self.assertEqual(self.root.vm()["dirty_ratio"], "60")

    # A valid value for every key of the settings table (lm-settings.c) and
    # DiskSettings, as GVariant text.
    VALID = {
        "Mode": "'on'", "Engine": "'kernel'", "MaxLostWork": "uint32 300",
        "LaptopModeSeconds": "uint32 5", "DirtyRatio": "uint32 40",
        "DirtyBackgroundRatio": "uint32 5", "LowBatteryPercent": "uint32 20",
        "Remount": "false", "RemountTypes": "['ext4']", "NoRemount": "['/srv']",
        "Attribution": "'none'", "SpinUpIdle": "uint32 30", "SpinUpHistory": "true",
        "DiskRecheck": "uint32 60", "FollowPowerProfile": "false",
        "DeferMaintenance": "false", "DiskSettings": "{'ata-X': {'APM': <uint32 128>}}",
    }

    def test_every_key_denied_unprivileged(self):
        """Configure is one polkit action whatever the key: each key, with a
        valid value, is refused to a caller without the right, exactly, and
        changes nothing."""
        before_props, before_vm = self.properties(), self.root.vm()
        for key, value in self.VALID.items():
            with self.subTest(key):
                name, message = self.call_error("Configure", "({'%s': <%s>},)" % (key, value),
                                                user=lmtest.UNPRIVILEGED)
                self.assertEqual(name, "org.freedesktop.DBus.Error.AccessDenied")
                self.assertRegex(message, r"^Not authorized to Configure: polkit action "
                                 r"org\.laptopmode\.LaptopMode1\.configure \S")
                self.assertEqual(self.properties(), before_props)
                self.assertEqual(self.root.vm(), before_vm)
                self.assertFalse(os.path.exists(self.config), "config written by a denied Configure")

    def test_unprivileged_denied(self):
        for user_call in (
            lambda: self.ctl_run("start", user=lmtest.UNPRIVILEGED),
            lambda: self.ctl_run("set", "MaxLostWork=30", user=lmtest.UNPRIVILEGED),
            lambda: self.ctl_run("sync", user=lmtest.UNPRIVILEGED),
            lambda: self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "SetMode", "s", "on",
                                user=lmtest.UNPRIVILEGED),
            lambda: self.gdbus_call("Start", user=lmtest.UNPRIVILEGED),
        ):
            r = user_call()
            self.assertNotEqual(r.returncode, 0, r)
            self.assertRegex(r.err, r"AccessDenied|Not authorized|not authorized|Access denied", r)
        self.assertEqual(self.root.vm(), self.original)
        self.assertFalse(os.path.exists(self.config))
        # Reading is open to everyone.
        r = self.ctl_run("status", user=lmtest.UNPRIVILEGED, check=True)
        self.assertIn("Laptop mode:         off", r.out)
        # And the denial line from laptop-modectl is clear about the action.
        r = self.ctl_run("stop", user=lmtest.UNPRIVILEGED)
        self.assertIn("org.laptopmode.LaptopMode1.switch", r.err)


def gvariant(sig, value):
    if sig == "s":
        return "'%s'" % value
    if sig == "b":
        return value
    if sig == "u":
        return "uint32 %s" % value
    if sig == "i":
        return "int32 %s" % value
    raise ValueError(sig)


@needs_root
class BusPolicyTest(DaemonTestCase):
    def test_unprivileged_cannot_own_name(self):
        self.start_daemon()
        code = ("import gi; from gi.repository import Gio, GLib\n"
                "c = Gio.bus_get_sync(Gio.BusType.SYSTEM)\n"
                "try:\n"
                "  c.call_sync('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',"
                " 'RequestName', GLib.Variant('(su)', ('org.laptopmode.LaptopMode1', 2)), None, 0, -1)\n"
                "  print('OWNED')\n"
                "except GLib.Error as e:\n"
                "  print(e.message)\n")
        r = self.run_as(["/usr/bin/python3", "-c", code], user=lmtest.UNPRIVILEGED)
        self.assertNotIn("OWNED", r.out)
        self.assertIn("AccessDenied", r.out + r.err)


@needs_root
class KernelVariantsTest(DaemonTestCase):
    """The backend and engine follow the (faked) kernel."""

    def run_variant(self, release, vm, bdflush=None):
        self.root = lmtest.FakeRoot(os.path.join(self.tmp, release), release, vm, bdflush)
        self.start_daemon()
        return self.status()

    def test_kernel_6x(self):
        st = self.run_variant("6.18.44-fc-v1147", dict(SYSCTL_VM))
        self.assertEqual((st["Engine"], st["TunablesBackend"]), ("kernel", "sysctl"))

    def test_kernel_2_6_6(self):
        st = self.run_variant("2.6.6", dict(SYSCTL_VM))
        self.assertEqual(st["Engine"], "kernel")

    def test_kernel_7x_is_userspace(self):
        original = dict(SYSCTL_VM)
        st = self.run_variant("7.1.0-rc2", original)
        self.assertEqual((st["Engine"], st["TunablesBackend"]), ("userspace", "sysctl"))
        self.ctl_run("start", check=True)
        vm = self.root.vm()
        # The kernel ignores laptop_mode there: it is left alone.
        self.assertEqual(vm["laptop_mode"], "0")
        self.assertEqual(vm["dirty_expire_centisecs"], "60000")
        self.ctl_run("stop", check=True)
        self.assertEqual(self.root.vm(), original)

    def test_force_engine_on_7x(self):
        self.run_variant("7.0.0", dict(SYSCTL_VM))
        self.ctl_run("set", "Engine=kernel", check=True)
        self.assertEqual(self.status()["Engine"], "kernel")
        self.ctl_run("start", check=True)
        self.assertEqual(self.root.vm()["laptop_mode"], "2")
        # Switching engine while active takes laptop_mode back out.
        self.ctl_run("set", "Engine=userspace", check=True)
        self.assertEqual(self.root.vm()["laptop_mode"], "0")
        self.assertEqual(self.status()["Engine"], "userspace")

    def test_force_kernel_without_laptop_mode_file(self):
        vm = dict(SYSCTL_VM)
        del vm["laptop_mode"]
        st = self.run_variant("6.1.0", vm)
        self.assertEqual(st["Engine"], "userspace")
        r = self.ctl_run("set", "Engine=kernel")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("vm.laptop_mode", r.err)
        self.assertEqual(self.status()["Engine"], "userspace")

    def test_bdflush_2_4(self):
        line = "40 0 0 0 500 3000 60 0 0"
        st = self.run_variant("2.4.37.11", {}, bdflush=line)
        self.assertEqual((st["Engine"], st["TunablesBackend"]), ("bdflush", "bdflush"))
        self.ctl_run("start", check=True)
        self.assertEqual(self.root.read("/proc/sys/vm/bdflush"), "40 0 0 0 60000 60000 60 0 0")
        self.ctl_run("set", "MaxLostWork=120", check=True)
        self.assertEqual(self.root.read("/proc/sys/vm/bdflush"), "40 0 0 0 12000 12000 60 0 0")
        self.ctl_run("stop", check=True)
        self.assertEqual(self.root.read("/proc/sys/vm/bdflush"), line)

    def test_bdflush_kill9(self):
        line = "30\t500\t0\t0\t500\t3000\t60\t20\t0"
        self.run_variant("2.4.20", {}, bdflush=line)
        self.ctl_run("start", check=True)
        self.stop_daemon(signal.SIGKILL)
        self.start_daemon()
        self.assertEqual(self.root.read("/proc/sys/vm/bdflush").split(), line.split())

    def test_no_tunables(self):
        st = self.run_variant("6.18.0", {})
        self.assertEqual((st["Engine"], st["TunablesBackend"]), ("none", "none"))
        r = self.ctl_run("start")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot be done here", r.err)


@needs_root
class StartupConfigTest(DaemonTestCase):
    config_text = "[LaptopMode]\nMaxLostWork=0\n"

    def test_bad_config_refuses_to_start(self):
        p = self.start_daemon(wait=False)
        rc = p.wait(timeout=20)
        self.assertNotEqual(rc, 0)
        log = self.daemon_log()
        self.assertIn("MaxLostWork", log)
        self.assertIn(self.config, log)


@needs_root
class StartupBadValueTypeTest(DaemonTestCase):
    config_text = "[LaptopMode]\nDirtyRatio=sixty\n"

    def test_bad_value(self):
        p = self.start_daemon(wait=False)
        self.assertNotEqual(p.wait(timeout=20), 0)
        self.assertIn("DirtyRatio", self.daemon_log())


@needs_root
class ReplaceTest(DaemonTestCase):
    def test_replace_restores_and_hands_over(self):
        self.start_daemon()
        first = self.daemon
        original = self.root.vm()
        self.ctl_run("start", check=True)
        self.start_daemon(["--replace"], wait=False)
        self.assertEqual(first.wait(timeout=20), 0)
        self.wait_for_name()
        # The old daemon restored on losing the name.
        self.assertEqual(self.root.vm(), original)
        self.assertEqual(self.status()["Active"], False)


if __name__ == "__main__":
    lmtest.main()
