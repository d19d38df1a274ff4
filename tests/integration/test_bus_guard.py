#!/usr/bin/python3
"""test_bus_guard: what any local user can send the daemon's connections,
and D-Bus activation (tier 2: fake root, private bus, real daemon).
Owns two promises of service/daemon/lm-bus.c, main.c and lm-sleep.c: every
connection the daemon keeps is the guarded one, so an undecodable or huge
unicast signal to any of its unique names leaves it up and answering; and
the object is on the bus before the name is, so the call that activates
the daemon is answered, not refused with UnknownObject.
"""

import os
import signal
import sys
import time

from gi.repository import Gio, GLib

import lmtest
from lmtest import DaemonTestCase

# The body test_dbus_fuzz found: dbus-daemon passes it, GLib 2.74 cannot
# decode it and closes the connection that received it.
UNDECODABLE = "([@a{yg} {}, {0x12: '((tod)n)gaiv', 0xb7: ''}],)"
HUGE = 3 << 20  # bytes: above the guard's 2 MiB, below the bus's 32 MiB
LOGIND = "org.freedesktop.login1"


def worker(address, names):
    """Run as the unprivileged user: one undecodable and one huge unicast
    signal to each of @names."""
    conn = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
        | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    for name in names:
        for body in (GLib.Variant.parse(None, UNDECODABLE, None, None),
                     GLib.Variant("(s)", ("x" * HUGE,))):
            msg = Gio.DBusMessage.new_signal("/org/example/Evil", "org.example.Evil", "Boom")
            msg.set_destination(name)
            msg.set_body(body)
            conn.send_message(msg, Gio.DBusSendMessageFlags.NONE)
    conn.flush_sync(None)
    # A round trip: everything sent before it has reached the bus.
    conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                   "GetId", None, None, Gio.DBusCallFlags.NONE, -1, None)
    conn.close_sync(None)


def names_of_pid(address, pid):
    """The unique names on the bus whose connection belongs to @pid."""
    conn = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
        | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    try:
        def bus(method, args, reply):
            return conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", method, args, GLib.VariantType(reply),
                                  Gio.DBusCallFlags.NONE, -1, None).unpack()[0]
        found = []
        for name in bus("ListNames", None, "(as)"):
            if not name.startswith(":"):
                continue
            try:
                if bus("GetConnectionUnixProcessID", GLib.Variant("(s)", (name,)), "(u)") == pid:
                    found.append(name)
            except GLib.Error:
                pass  # gone meanwhile
        return found
    finally:
        conn.close_sync(None)


class UnicastSignalTest(DaemonTestCase):
    """Any user may send a unicast signal (system.conf allows them) to any
    unique name: none of the daemon's may be a connection that such a
    signal can close."""

    extra_bus_config = lmtest.MOCK_BUS_POLICY

    def logind_lock(self):
        r = self.run_as(["gdbus", "call", "--system", "--dest", LOGIND, "--object-path",
                         "/org/freedesktop/login1", "--method",
                         "org.freedesktop.login1.Manager.ListInhibitors"], check=True)
        return "laptop-moded" in r.out and "delay" in r.out

    def test_signals_to_every_name_of_the_daemon(self):
        self.start_mock("logind")
        self.start_daemon()
        # The delay lock is taken (on a connection of its own, lm-sleep.c).
        self.wait_until(self.logind_lock, timeout=15, message="the daemon's delay lock")
        names = names_of_pid(self.bus_address, self.daemon.pid)
        self.assertTrue(names, "the daemon holds no unique name on the bus")
        r = self.run_as(["/usr/bin/python3", os.path.abspath(__file__), "--worker",
                         self.bus_address] + names, user=lmtest.UNPRIVILEGED)
        self.assertEqual(r.returncode, 0, "the worker failed: %r" % r)

        # The guard logs each dropped message once; both reached the daemon.
        def logged():
            if self.daemon.poll() is not None:
                self.fail("the daemon exited (%s) after signals to %s:\n%s"
                          % (self.daemon.returncode, names, self.daemon_log()[-2000:]))
            log = self.daemon_log()
            return "cannot be decoded" in log and "unread" in log
        self.wait_until(logged, timeout=15, message="the daemon logging both signals dropped")
        self.assertIsNone(self.daemon.poll(),
                          "the daemon exited (%s) after signals to %s:\n%s"
                          % (self.daemon.returncode, names, self.daemon_log()[-2000:]))
        st = self.status()
        self.assertEqual(st["Version"], self.ctl_run("--version").out.split()[-1])
        self.ctl_run("sync", check=True)  # a method, root: no polkit round trip
        self.ctl_run("status", user=lmtest.UNPRIVILEGED, check=True)
        # The lock survived, and no connection but the guarded one lasts.
        self.assertTrue(self.logind_lock(), "the delay lock is gone")
        self.wait_until(lambda: len(names_of_pid(self.bus_address, self.daemon.pid)) == 1,
                        timeout=15, message="the daemon holding exactly one connection")
        self.assertNotIn("WARNING", self.daemon_log())
        self.assertEqual(self.stop_daemon(), 0)


# dbus-daemon runs an activation file's Exec= itself when its config names
# no <servicehelper>; a system bus (Debian's system.conf) names
# dbus-daemon-launch-helper, which accepts only files from
# /usr/share/dbus-1/system-services. So this bus is lmtest's system-shaped
# one (type "system", the project's policy) without a <servicehelper>.
ACTIVATION_FILE = """[D-BUS Service]
Name=org.laptopmode.LaptopMode1
Exec={daemon} --verbose
User=root
"""


class ActivationTest(DaemonTestCase):
    """The first call, the one that starts the daemon, is answered."""

    polkit = None

    def start_bus(self):
        servicedir = os.path.join(self.tmp, "services")
        os.makedirs(servicedir)
        with open(os.path.join(servicedir, lmtest.BUS_NAME + ".service"), "w") as f:
            f.write(ACTIVATION_FILE.format(daemon=lmtest.DAEMON))
        # dbus-daemon hands its environment to what it activates.
        saved = dict(os.environ)
        os.environ.update({k: v for k, v in self.daemon_env_for_bus().items()})
        try:
            self.bus_proc, self.bus_address = lmtest.start_private_bus(
                self.tmp, "<servicedir>%s</servicedir>" % servicedir)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        self.procs.append(self.bus_proc)
        self.addCleanup(self.stop_activated)
        self.assertTrue(self.bus_address.startswith("unix:"), "dbus-daemon did not start")

    def daemon_env_for_bus(self):
        env = {"STATE_DIRECTORY": self.state_dir, "LAPTOP_MODED_CONFIG": self.config,
               "G_DEBUG": "fatal-criticals", "LAPTOP_MODED_ROOT": self.root.path}
        return env

    def bus_log(self):
        with open(os.path.join(self.tmp, "bus.log")) as f:
            return f.read()

    def activated_pid(self):
        r = self.run_as(["busctl", "--system", "call", "org.freedesktop.DBus",
                         "/org/freedesktop/DBus", "org.freedesktop.DBus",
                         "GetConnectionUnixProcessID", "s", lmtest.BUS_NAME])
        return int(r.out.split()[1]) if r.returncode == 0 else None

    def stop_activated(self):
        pid = self.activated_pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with open("/proc/%d/stat" % pid) as f:
                    if f.read().split(") ")[-1].startswith("Z"):
                        return
            except FileNotFoundError:
                return
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)

    def assert_not_running(self):
        r = self.run_as(["busctl", "--system", "call", "org.freedesktop.DBus",
                         "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", "s",
                         lmtest.BUS_NAME], check=True)
        self.assertEqual(r.out.strip(), "b false", "laptop-moded runs before the first call")

    def test_first_status_activates(self):
        self.assert_not_running()
        r = self.ctl_run("status", "--json")
        self.assertEqual(r.returncode, 0, "the activating status failed: %r\nbus log:\n%s"
                         % (r, self.bus_log()[-2000:]))
        self.assertIn('"Version"', r.out)
        self.assertIsNotNone(self.activated_pid(), "the daemon is not on the bus")

    def test_first_method_call_activates(self):
        """A method (root's Sync, no polkit): it waits for lm_daemon_start()
        if it comes before GDBus says the name is ours."""
        self.assert_not_running()
        r = self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Sync")
        self.assertEqual(r.returncode, 0, "the activating Sync failed: %r\nbus log:\n%s"
                         % (r, self.bus_log()[-2000:]))
        self.assertIsNotNone(self.activated_pid(), "the daemon is not on the bus")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3:])
        sys.exit(0)
    lmtest.main()
