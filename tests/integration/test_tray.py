#!/usr/bin/python3
"""Tier 2 (and 3 for one real spin-up): laptop-mode-tray against the real
laptop-moded on the private system bus, on a private session bus of its own
with a fake org.kde.StatusNotifierWatcher (a small Gio service below) and
python-dbusmock's notification daemon.

Owns the tray's behaviour as a desktop sees it: registration, icon, tooltip,
clicks, menu events, notifications, restarts of the daemon and the tray
host. Never fakes laptop-moded: every state and spin-up comes from the real
daemon (block_dump records through a fake /dev/kmsg, or a real loop disk).
"""

import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import time
import unittest

from gi.repository import Gio, GLib

import lmtest
from lmtest import DaemonTestCase, ctx_switches, wait_quiet
# Modules, not classes: their tests must not run again here.
import test_disks
import test_report
from test_spinup_dbus import LineReader, SpinUpBusTest

TRAY = os.path.join(lmtest.BUILDDIR, "client", "laptop-mode-tray")
ITEM_IFACE = "org.kde.StatusNotifierItem"
ITEM_PATH = "/StatusNotifierItem"
MENU_IFACE = "com.canonical.dbusmenu"
MENU_PATH = "/MenuBar"
INTERVAL = 3

SESSION_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <!-- The tray may run as another user than the test (nobody). -->
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

# The tray host's side of the protocol, as small as it can be: it records
# who registered, so a test can see registrations and re-registrations.
WATCHER = r'''
from gi.repository import Gio, GLib
XML = """<node><interface name="org.kde.StatusNotifierWatcher">
  <method name="RegisterStatusNotifierItem"><arg name="service" type="s" direction="in"/></method>
  <method name="RegisterStatusNotifierHost"><arg name="service" type="s" direction="in"/></method>
  <signal name="StatusNotifierItemRegistered"><arg type="s"/></signal>
</interface></node>"""

def on_call(conn, sender, path, iface, name, params, invocation):
    if name == "RegisterStatusNotifierItem":
        service = params.unpack()[0]
        print("REGISTERED", service, sender, flush=True)
        conn.emit_signal(None, path, iface, "StatusNotifierItemRegistered",
                         GLib.Variant("(s)", (service,)))
    invocation.return_value(None)

bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
info = Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0]
bus.register_object("/StatusNotifierWatcher", info, on_call, None, None)
Gio.bus_own_name_on_connection(bus, "org.kde.StatusNotifierWatcher", 0,
                               lambda c, n: print("READY", flush=True), None)
GLib.MainLoop().run()
'''


class TrayMixin:
    """A session bus, a tray host, a notification server and the tray, on
    top of a DaemonTestCase's system bus and daemon."""

    tray_user = None
    tray_args = ()
    # Where the tray is copied to run (the test's bin, beside laptop-modectl,
    # when None), and what its environment adds.
    tray_dir = None
    tray_env = {}

    def setUp(self):
        if not os.path.exists(TRAY):
            self.skipTest("laptop-mode-tray was not built (needs libdbusmenu-glib and libnotify)")
        super().setUp()
        self.start_session_bus()
        self.session = Gio.DBusConnection.new_for_address_sync(
            self.session_address,
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
            | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
        self.addCleanup(self.session.close_sync, None)
        self.item_signals = []
        self.session.signal_subscribe(None, ITEM_IFACE, None, ITEM_PATH, None, 0,
                                      self._on_item_signal)
        self.start_watcher()
        self.start_notifications()
        self.tray = None

    def _on_item_signal(self, conn, sender, path, iface, member, params):
        self.item_signals.append((member, params.unpack()))

    # --- the session --------------------------------------------------------

    def start_session_bus(self):
        socket = os.path.join(self.tmp, "session_bus_socket")
        conf = os.path.join(self.tmp, "session.conf")
        with open(conf, "w") as f:
            f.write(SESSION_CONFIG.format(socket=socket))
        r, w = os.pipe()
        with open(os.path.join(self.tmp, "session-bus.log"), "w") as log:
            p = subprocess.Popen(["dbus-daemon", "--config-file=" + conf, "--nofork",
                                  "--print-address=%d" % w], pass_fds=(w,), stderr=log)
        os.close(w)
        self.procs.append(p)
        with os.fdopen(r) as f:
            self.session_address = f.readline().strip()
        self.assertTrue(self.session_address.startswith("unix:"), "session bus did not start")
        # An unprivileged tray must reach the socket.
        os.chmod(socket, 0o777)
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.session_address

    def start_watcher(self):
        script = os.path.join(self.tmp, "watcher.py")
        with open(script, "w") as f:
            f.write(WATCHER)
        p = subprocess.Popen(["/usr/bin/python3", script], env=self.env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        self.procs.append(p)
        self.addCleanup(lmtest.close_child, p)
        self.watcher = p
        self.watcher_lines = LineReader(p.stdout)
        line = self.watcher_lines.get(15)
        self.assertEqual(line, "READY\n", "the fake watcher did not start")

    def stop_watcher(self):
        self.watcher.terminate()
        self.watcher.wait(timeout=10)

    def wait_registration(self, timeout=10):
        """The next item the watcher saw registering, or None."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.watcher_lines.get(deadline - time.monotonic())
            if line is not None and line.startswith("REGISTERED"):
                return line.split()[1]
        return None

    def start_notifications(self):
        log = open(os.path.join(self.tmp, "notifications.log"), "w")
        p = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--session", "--template",
                              "notification_daemon"], env=self.env, stdout=log,
                             stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(p)
        self.wait_for(lambda: self.name_has_owner("org.freedesktop.Notifications"),
                      "the notification daemon")

    def notifications(self):
        """Every Notify call so far: (replaces_id, summary, body)."""
        r = self.session.call_sync("org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                                   "org.freedesktop.DBus.Mock", "GetCalls", None, None, 0, 5000,
                                   None)
        return [(args[1], args[3], args[4]) for _, name, args in r.unpack()[0]
                if name == "Notify"]

    def name_has_owner(self, name):
        r = self.session.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                   "org.freedesktop.DBus", "NameHasOwner",
                                   GLib.Variant("(s)", (name,)), None, 0, 5000, None)
        return r.unpack()[0]

    # --- the tray ---------------------------------------------------------

    def start_tray(self):
        exe = os.path.join(self.tray_dir or self.bindir, "laptop-mode-tray")
        shutil.copy(TRAY, exe)
        os.chmod(exe, 0o755)
        config = os.path.join(self.tmp, "config")
        os.makedirs(config, exist_ok=True)
        os.chmod(config, 0o777)
        env = dict(self.env, XDG_CONFIG_HOME=config, G_DEBUG="fatal-criticals", **self.tray_env)
        argv = [exe, "--verbose", "--notify-interval", str(INTERVAL)] + list(self.tray_args)
        if self.tray_user is not None:
            pw = pwd.getpwnam(self.tray_user)
            argv = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
                    "--clear-groups", "--"] + argv
        log = open(os.path.join(self.tmp, "tray.log"), "a")
        p = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        log.close()
        self.procs.append(p)
        self.tray = p
        # setpriv execs, so the pid is the tray's, as is the name.
        self.item_name = "org.kde.StatusNotifierItem-%d-1" % p.pid
        self.assertEqual(self.wait_registration(), self.item_name,
                         "the item did not register:\n" + self.tray_log())
        return p

    def tray_log(self):
        try:
            with open(os.path.join(self.tmp, "tray.log")) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def item(self, prop):
        r = self.session.call_sync(self.item_name, ITEM_PATH, "org.freedesktop.DBus.Properties",
                                   "Get", GLib.Variant("(ss)", (ITEM_IFACE, prop)), None, 0, 5000,
                                   None)
        return r.unpack()[0]

    def activate(self):
        self.session.call_sync(self.item_name, ITEM_PATH, ITEM_IFACE, "Activate",
                               GLib.Variant("(ii)", (0, 0)), None, 0, 5000, None)

    def menu_items(self):
        """label → (id, properties) for every item of the menu."""
        r = self.session.call_sync(self.item_name, MENU_PATH, MENU_IFACE, "GetLayout",
                                   GLib.Variant("(iias)", (0, -1, [])), None, 0, 5000, None)
        items = {}

        def walk(node):
            ident, props, children = node
            if "label" in props:
                items[props["label"]] = (ident, props)
            for child in children:
                walk(child)
        walk(r.unpack()[1])
        return items

    def click(self, label):
        ident = self.menu_items()[label][0]
        self.session.call_sync(self.item_name, MENU_PATH, MENU_IFACE, "Event",
                               GLib.Variant("(isvu)", (ident, "clicked", GLib.Variant("s", ""), 0)),
                               None, 0, 5000, None)

    def wait_for(self, predicate, message, timeout=10):
        """Like wait_until, but lets this process's bus signals in."""
        ctx = GLib.MainContext.default()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while ctx.iteration(False):
                pass
            if predicate():
                return
            time.sleep(0.05)
        try:
            shown = self.notifications()
        except GLib.Error:
            shown = "(no notification daemon)"
        self.fail("timed out waiting for %s\nnotifications: %r\ntray log:\n%s\ndaemon log:\n%s"
                  % (message, shown, self.tray_log(), self.daemon_log()))

    def wait_icon(self, name):
        self.wait_for(lambda: self.item("IconName") == name, "IconName %s" % name)


@unittest.skipUnless(lmtest.is_root(), "Start, Stop and SetMode need root until polkit is wired in")
class TrayTest(TrayMixin, DaemonTestCase):
    config_text = "[LaptopMode]\nMode=off\nAttribution=none\n"

    def test_item_follows_daemon(self):
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.assertEqual(self.item("Status"), "Passive")
        self.assertEqual(self.item("Menu"), MENU_PATH)
        self.assertFalse(self.item("ItemIsMenu"))
        title, desc = self.item("ToolTip")[2:]
        self.assertEqual(title, "Laptop mode is off")
        self.assertIn("Mode: off", desc)
        self.assertIn("Max lost work: 10 min", desc)

        # A change made elsewhere shows, announced with New* signals.
        del self.item_signals[:]
        self.ctl_run("start", check=True)
        self.wait_icon("laptop-mode-on")
        self.assertEqual(self.item("Status"), "Active")
        self.assertEqual(self.item("ToolTip")[2], "Laptop mode is on")
        self.wait_for(lambda: {"NewIcon", "NewToolTip", "NewStatus"}
                      <= {m for m, _ in self.item_signals}, "New* signals")
        self.assertIn(("NewStatus", ("Active",)), self.item_signals)

        # A click toggles, both ways.
        self.activate()
        self.wait_for(lambda: self.status()["Active"] is False, "Activate to stop")
        self.wait_icon("laptop-mode-off")
        self.activate()
        self.wait_for(lambda: self.status()["Active"] is True, "Activate to start")
        self.wait_icon("laptop-mode-on")

        # The Mode radio items call SetMode, and follow the daemon.
        self.click("_Auto (on while on battery)")
        self.wait_for(lambda: self.status()["Mode"] == "auto", "SetMode auto")
        self.wait_for(lambda: self.menu_items()["_Auto (on while on battery)"][1]
                      .get("toggle-state") == 1, "the Auto item checked")
        self.click("O_ff")
        self.wait_for(lambda: self.status()["Mode"] == "off", "SetMode off")
        self.wait_icon("laptop-mode-off")
        items = self.menu_items()
        self.assertEqual(items["O_ff"][1].get("toggle-state"), 1)
        self.assertEqual(items["_On"][1].get("toggle-state"), 0)
        self.assertEqual(items["_Laptop mode"][1].get("toggle-state"), 0)
        # Nothing was refused, so nothing popped up.
        self.assertEqual(self.notifications(), [])

    def test_daemon_restart(self):
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.assertEqual(self.stop_daemon(), 0)
        self.wait_icon("laptop-mode-unavailable")
        self.assertEqual(self.item("ToolTip")[2], "Laptop mode unavailable")
        self.assertEqual(self.menu_items()["_Mode"][1].get("enabled"), False)
        # A click meanwhile is explained, not lost silently.
        self.activate()
        self.wait_for(lambda: len(self.notifications()) == 1, "an 'unavailable' notification")
        self.assertIn("unavailable", self.notifications()[0][1])
        self.start_daemon()
        self.wait_icon("laptop-mode-off")
        self.activate()
        self.wait_for(lambda: self.status()["Active"] is True, "Activate after the restart")
        self.wait_icon("laptop-mode-on")
        self.assertIsNone(self.tray.poll())

    def test_idle_tray_sleeps(self):
        """Nothing happening means no wake-ups: no timers, no polling."""
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        # A wake-up of the tray ends in a voluntary context switch; what a
        # busy machine adds (preemptions) is not counted, and a window that
        # something else disturbed is measured again, 3 times at most.
        for attempt in range(3):
            wait_quiet(self, self.tray.pid)
            before = ctx_switches(self.tray.pid)
            time.sleep(5)  # the measurement itself: 5 s of nothing happening
            woke = ctx_switches(self.tray.pid) - before
            if woke <= 1:
                return
            print("attempt %d: the idle tray woke %d times in 5 s" % (attempt + 1, woke))
        self.fail("the idle tray woke %d times in 5 s (3 attempts)" % woke)

    def test_watcher_restart(self):
        self.start_daemon()
        self.start_tray()
        self.stop_watcher()
        self.start_watcher()
        self.assertEqual(self.wait_registration(), self.item_name,
                         "the item did not register again")
        # Once.
        self.assertIsNone(self.wait_registration(1))
        self.assertEqual(self.item("IconName"), "laptop-mode-off")


@unittest.skipUnless(lmtest.is_root(), "the tray runs as another user, which needs root")
class DeniedTest(TrayMixin, DaemonTestCase):
    """nobody has no polkit rule: the tray as nobody is refused switching
    and watching, and says which right is missing, once for the
    subscription."""

    tray_user = lmtest.UNPRIVILEGED
    config_text = "[LaptopMode]\nMode=off\nAttribution=block_dump\n"

    def setUp(self):
        super().setUp()
        os.makedirs(self.root.file("/dev"))
        os.mkfifo(self.root.file("/dev/kmsg"), 0o600)
        self.root.write("/proc/sys/vm/block_dump", "0\n")

    def monitor_notes(self):
        return [n for n in self.notifications() if "org.laptopmode.LaptopMode1.monitor" in n[2]]

    def test_denied_actions_explained(self):
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.wait_for(lambda: len(self.monitor_notes()) == 1, "the denied subscription explained")
        self.assertEqual(self.monitor_notes()[0][1], "Not allowed to watch disk spin-ups")

        self.activate()
        self.wait_for(lambda: any("org.laptopmode.LaptopMode1.switch" in n[2]
                                  for n in self.notifications()), "the denied Start explained")
        self.assertFalse(self.status()["Active"])
        self.assertIn("Not allowed to switch laptop mode on", [n[1] for n in self.notifications()])

        # A new daemon is subscribed to again, and refuses again, silently.
        self.assertEqual(self.stop_daemon(), 0)
        self.wait_icon("laptop-mode-unavailable")
        self.start_daemon()
        self.wait_icon("laptop-mode-off")
        # The new daemon's own log shows the tray's Subscribe, refused.
        log = self.wait_for_log("Denied Subscribe to ")
        sender = re.search(r"Denied Subscribe to (:\d+\.\d+)", log).group(1)
        self.assertEqual(self.connection_pid(sender), self.tray.pid)
        # A denied Start after it is explained again; the subscription is not.
        self.activate()
        self.wait_for(lambda: len(self.notifications()) == 3, "the second denied Start explained")
        self.assertEqual(len(self.monitor_notes()), 1, self.notifications())
        self.assertIsNone(self.tray.poll())


@unittest.skipUnless(lmtest.is_root(), "Subscribe needs root until polkit is wired in")
class BurstTest(TrayMixin, SpinUpBusTest):
    """Spin-ups from the real daemon's block_dump backend, fed kernel log
    records through a fake /dev/kmsg."""

    def test_burst_is_summed_up(self):
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.wait_for(lambda: self.block_dump() == "1", "the tray's subscription")
        # Five wake-ups, each after more than SpinUpIdle (1 s) of quiet,
        # all arriving at once.
        self.kmsg((5.0, "cron(11): READ block 8 on sda1"),
                  (7.0, "firefox(1234): READ block 16 on sda1"),
                  (9.0, "cron(12): READ block 24 on sda1"),
                  (11.0, "firefox(1234): READ block 32 on sda1"),
                  (13.0, "cron(13): READ block 40 on sda1"))
        self.wait_for(lambda: len(self.notifications()) >= 1, "the first popup")
        first = self.notifications()[0]
        self.assertEqual(first[:2], (0, "sda woken by cron (11): read"))
        self.wait_for(lambda: len(self.notifications()) >= 2, "the summary", timeout=INTERVAL + 5)
        summary = self.notifications()[1]
        self.assertEqual(summary[1], "5 spin-ups: cron ×3, firefox ×2")
        self.assertIn("Latest: sda woken by cron (13): read", summary[2])
        # It replaces the first popup instead of stacking another.
        self.assertNotEqual(summary[0], 0)
        # And the burst is over: nothing more pops up. An absence can only
        # be watched for: one whole interval, the next moment a popup is due.
        time.sleep(INTERVAL + 1)
        self.assertEqual(len(self.notifications()), 2, self.notifications())
        # The tooltip and the menu show the last ones.
        self.assertIn("Last spin-up: ", self.item("ToolTip")[3])
        self.assertIn("sda woken by cron (13): read", self.item("ToolTip")[3])
        labels = [lb for lb in self.menu_items() if "woken by" in lb]
        self.assertEqual(len(labels), 5, labels)
        self.assertTrue(labels[0].endswith("sda woken by cron (13): read"), labels)

        # Unchecked: unsubscribed (monitoring stops), and remembered.
        self.click("_Notify me of spin-ups")
        self.wait_for(lambda: self.block_dump() == "0", "the tray to unsubscribe")
        with open(os.path.join(self.tmp, "config", "laptop-mode-tray", "settings.ini")) as f:
            self.assertIn("NotifySpinUps=false", f.read())

    def test_resubscribes_after_daemon_restart(self):
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.wait_for(lambda: self.block_dump() == "1", "the tray's subscription")
        self.assertEqual(self.stop_daemon(), 0)
        self.wait_icon("laptop-mode-unavailable")
        self.assertEqual(self.block_dump(), "0", "the stopped daemon left block_dump on")
        self.start_daemon()
        # Shown by the new daemon, not by anything the first one wrote: its
        # log names the subscriber, which is the tray's connection, and it
        # has started monitoring for it.
        log = self.wait_for_log("Spin-up subscriber ")
        sender = re.search(r"Spin-up subscriber (:\d+\.\d+)", log).group(1)
        self.assertEqual(self.connection_pid(sender), self.tray.pid)
        self.wait_for(lambda: self.block_dump() == "1", "the new daemon monitoring for the tray")
        self.kmsg((5.0, "cron(11): READ block 8 on sda1"))
        self.wait_for(lambda: len(self.notifications()) >= 1, "a popup from the new daemon")
        self.assertEqual(self.notifications()[0][1], "sda woken by cron (11): read")


REPORT_ITEM = "Open _today's report"


def today_words(summary, disk):
    """What the tooltip says of @disk from LedgerSummary, without names."""
    d = summary[disk]
    n = d["SpinUpsToday"]
    # lround(), as the tray rounds: halves away from zero.
    share = int(min(max(d["AsleepShareToday"], 0.0), 1.0) * 100 + 0.5)
    return "%s: %d spin-up%s today, asleep %d %%" % (disk, n, "" if n == 1 else "s", share)


class TodayMixin:
    """Spin-ups through the fake /dev/kmsg into the real daemon's ledger,
    and a dbus-monitor counting GetLedgerPage calls and LedgerSummary changes."""

    def setUp(self):
        super().setUp()
        self.last_us = 0
        self.monitor, self.monitor_lines = self.dbus_monitor(
            "type='method_call',member='GetLedgerPage'",
            "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'")
        self.monitor_text = ""

    def kmsg(self, *records):
        # Always past the last batch, so that each batch's first I/O follows
        # an idle gap however fast the test is.
        now = max(int(time.monotonic() * 1e6), self.last_us)
        shifted = []
        for offset, text in records:
            self.last_us = max(self.last_us, now + int(offset * 1e6))
            shifted.append((offset + (now - int(time.monotonic() * 1e6)) / 1e6, text))
        super().kmsg(*shifted)

    def tooltip_line(self, disk):
        for line in self.item("ToolTip")[3].split("\n"):
            if line.startswith(disk + ": "):
                return line
        return None

    def summary(self):
        return self.properties()["LedgerSummary"]

    def bus_counts(self):
        """(GetLedgerPage calls, PropertiesChanged with LedgerSummary) seen so far."""
        self.monitor_text += "".join(self.monitor_lines.drain(0.2))
        messages = re.split(r"^(?=signal |method call )", self.monitor_text, flags=re.M)
        calls = sum(1 for m in messages if m.startswith("method call") and "member=GetLedger" in m)
        changes = sum(1 for m in messages if m.startswith("signal") and '"LedgerSummary"' in m)
        return calls, changes


@unittest.skipUnless(lmtest.is_root(), "Subscribe needs root until polkit is wired in")
class TodayTooltipTest(TodayMixin, TrayMixin, SpinUpBusTest):
    """A user with the monitor right sees who woke each disk most today."""

    def wait_tooltip(self, disk, waker):
        def shown():
            want = today_words(self.summary(), disk) + ", most by " + waker
            got["line"] = self.tooltip_line(disk)
            return got["line"] == want
        got = {}
        self.wait_for(shown, "the tooltip naming %s for %s (last: %r)" % (waker, disk, got))

    def test_top_waker_in_tooltip(self):
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.wait_for(lambda: self.block_dump() == "1", "the tray's subscription")
        self.kmsg((5.0, "cron(11): READ block 8 on sda1"),
                  (7.0, "firefox(1234): READ block 16 on sda1"),
                  (9.0, "cron(12): READ block 24 on sda1"))
        self.wait_for(lambda: self.summary().get("sda", {}).get("SpinUpsToday") == 3,
                      "3 spin-ups of sda in LedgerSummary")
        self.wait_tooltip("sda", "cron")
        self.assertEqual(self.tooltip_line("sda").split(",")[0], "sda: 3 spin-ups today")

        # More of firefox: the tray asks again because LedgerSummary changed.
        self.kmsg((5.0, "firefox(1234): READ block 32 on sda1"),
                  (7.0, "firefox(1235): WRITE block 40 on sda1"))
        self.wait_for(lambda: self.summary()["sda"]["SpinUpsToday"] == 5,
                      "5 spin-ups of sda in LedgerSummary")
        self.wait_tooltip("sda", "firefox")

        # Asked when the summary changed, never more: one call for the right
        # becoming known, then at most one per change.
        calls, changes = self.bus_counts()
        self.assertGreaterEqual(changes, 2)
        self.assertGreaterEqual(calls, 2)
        self.assertLessEqual(calls, changes + 1, self.monitor_text)
        # The menu item for the report is there and may be clicked.
        self.assertIs(self.menu_items()[REPORT_ITEM][1].get("enabled", True), True)

    def test_thread_named_wakers_are_their_program(self):
        """Spin-ups by a browser's named threads ("Cache2 I/O", "DOM
        Worker": block_dump prints the thread's name and id) are the
        browser's: the daemon finds each thread's process in /proc, the
        ledger keeps the program with the thread beside it, and both the
        tooltip and laptop-modectl report name the program. By thread, each
        would have one spin-up to cron's two."""
        for pid in (1301, 1302, 1234):
            os.makedirs(self.root.file("/proc/%d" % pid))
        for tid, thread in ((1301, "Cache2 I/O"), (1302, "DOM Worker")):
            self.root.write("/proc/%d/comm" % tid, thread + "\n")
            self.root.write("/proc/%d/status" % tid,
                            "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t1234\n"
                            "Ngid:\t0\nPid:\t%d\n" % (thread, tid))
        self.root.write("/proc/1234/comm", "firefox-esr\n")
        # Started at boot: there when the kernel logged the lines below.
        for pid in (1301, 1302, 1234):
            self.root.write("/proc/%d/stat" % pid, "%d (x) S 1 1234 1234 0 -1 0 0 0 0 0 0 0 0 0 20 0 "
                            "1 0 0 1000 100 18446744073709551615\n" % pid)
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.wait_for(lambda: self.block_dump() == "1", "the tray's subscription")
        self.kmsg((1.5, "cron(11): READ block 8 on sda1"),
                  (3.0, "Cache2 I/O(1301): READ block 16 on sda1"),
                  (4.5, "cron(12): READ block 24 on sda1"),
                  (6.0, "DOM Worker(1302): READ block 32 on sda1"),
                  (7.5, "Cache2 I/O(1301): READ block 40 on sda1"))
        last = time.time() + 7.5
        self.wait_for(lambda: self.summary().get("sda", {}).get("SpinUpsToday") == 5,
                      "5 spin-ups of sda in LedgerSummary")
        self.wait_tooltip("sda", "firefox-esr")
        # The report ends now: the records' kernel times must be past.
        time.sleep(max(0, last + 1 - time.time()))
        report = json.loads(self.ctl_run("report", "--json", check=True).out)
        wakers = report["disks"]["sda"]["wakers"]
        self.assertEqual([(w["comm"], w["count"], w["threads"]) for w in wakers],
                         [("firefox-esr", 3, ["Cache2 I/O", "DOM Worker"]), ("cron", 2, [])])
        ups = report["disks"]["sda"]["spinups"]
        self.assertEqual([(u["comm"], u.get("thread")) for u in ups],
                         [("cron", None), ("firefox-esr", "Cache2 I/O"), ("cron", None),
                          ("firefox-esr", "DOM Worker"), ("firefox-esr", "Cache2 I/O")])
        text = self.ctl_run("report", check=True).out
        # Its rhythm (three spin-ups 1.5 to 3 s apart: timing decides which
        # words) sits between the count and the threads.
        self.assertRegex(text, r"firefox-esr +direct +3, (irregular|every [0-9–]+ s) +\(threads: "
                               r"Cache2 I/O, DOM Worker\)")
        self.assertNotRegex(text, r"\n +(Cache2 I/O|DOM Worker) ")


@unittest.skipUnless(lmtest.is_root(), "the tray runs as another user, which needs root")
class TodayWithoutNamesTest(TodayMixin, TrayMixin, SpinUpBusTest):
    """nobody may not monitor: the tooltip counts spin-ups and names no
    process, and the tray never asks for the ledger."""

    tray_user = lmtest.UNPRIVILEGED
    # Spin-ups are recorded without a subscriber (nobody's is refused).
    history = "true"

    def test_counts_without_names(self):
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        # The tray learnt it may not monitor (its GetSpinUps was refused).
        log = self.wait_for_log("Denied GetSpinUps to ")
        sender = re.search(r"Denied GetSpinUps to (:\d+\.\d+)", log).group(1)
        self.assertEqual(self.connection_pid(sender), self.tray.pid)
        self.wait_for(lambda: self.block_dump() == "1", "monitoring for SpinUpHistory")
        self.kmsg((5.0, "secret-app(11): READ block 8 on sda1"),
                  (7.0, "secret-app(12): READ block 16 on sda1"))
        self.wait_for(lambda: self.summary().get("sda", {}).get("SpinUpsToday") == 2,
                      "2 spin-ups of sda in LedgerSummary")
        self.wait_for(lambda: self.tooltip_line("sda") == today_words(self.summary(), "sda"),
                      "the tooltip counting sda's spin-ups")
        self.assertEqual(self.tooltip_line("sda").split(",")[0], "sda: 2 spin-ups today")
        self.assertNotIn("secret-app", self.item("ToolTip")[3])
        self.assertNotIn("most by", self.item("ToolTip")[3])
        calls, changes = self.bus_counts()
        self.assertGreaterEqual(changes, 1)
        self.assertEqual(calls, 0, "the tray asked for the ledger without the right:\n"
                         + self.monitor_text)
        self.assertNotIn("Denied GetLedger", self.daemon_log())


BROWSER = r'''
import json, os, sys, urllib.parse
record, uri = sys.argv[1], sys.argv[2]
path = urllib.parse.unquote(urllib.parse.urlparse(uri).path) if "://" in uri else uri
st = os.lstat(path)
with open(path, "rb") as f:
    head = f.read(4096).decode("utf-8", "replace")
with open(record, "a") as f:
    f.write(json.dumps({"argv": sys.argv[2:], "mode": st.st_mode, "uid": st.st_uid,
                        "head": head}) + "\n")
'''


@unittest.skipUnless(lmtest.is_root(), "the tray runs as root to need no polkit rule")
class ReportTest(TrayMixin, DaemonTestCase):
    """"Open today's report": laptop-modectl writes it into
    $XDG_RUNTIME_DIR, and the desktop's default text/html handler, found by
    GIO in a test XDG data directory, is started with it. The handler is a
    stand-in that records what it was given."""

    config_text = "[LaptopMode]\nMode=off\nAttribution=none\n"

    def setUp(self):
        super().setUp()
        self.run_dir = os.path.join(self.tmp, "run")
        os.makedirs(self.run_dir, mode=0o700)
        self.report = os.path.join(self.run_dir, "laptop-moded-report.html")
        data = os.path.join(self.tmp, "data")
        apps = os.path.join(data, "applications")
        os.makedirs(apps)
        # Only the machine's MIME database, none of its applications: the
        # stand-in is the one handler there is.
        sysdata = os.path.join(self.tmp, "sysdata")
        os.makedirs(sysdata)
        os.symlink("/usr/share/mime", os.path.join(sysdata, "mime"))
        self.record = os.path.join(self.tmp, "browser.log")
        browser = os.path.join(self.tmp, "browser.py")
        with open(browser, "w") as f:
            f.write(BROWSER)
        self.desktop = os.path.join(apps, "lm-test-browser.desktop")
        with open(self.desktop, "w") as f:
            f.write("[Desktop Entry]\nType=Application\nName=Test browser\n"
                    "Exec=/usr/bin/python3 %s %s %%u\nMimeType=text/html;\nNoDisplay=true\n"
                    % (browser, self.record))
        self.config_dir = os.path.join(self.tmp, "config")
        os.makedirs(self.config_dir)
        self.mimeapps = os.path.join(self.config_dir, "mimeapps.list")
        with open(self.mimeapps, "w") as f:
            f.write("[Default Applications]\ntext/html=lm-test-browser.desktop\n")
        self.tray_env = {"XDG_RUNTIME_DIR": self.run_dir, "XDG_DATA_HOME": data,
                         "XDG_DATA_DIRS": sysdata}

    def require_report_command(self):
        r = subprocess.run([self.ctl, "report", "--help"], env=self.env, capture_output=True,
                           text=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0 and "unknown command" in r.stderr:
            self.skipTest("laptop-modectl has no report command")

    def browser_runs(self):
        try:
            with open(self.record) as f:
                return [json.loads(line) for line in f]
        except FileNotFoundError:
            return []

    def problems(self, summary):
        return [n for n in self.notifications() if n[1] == summary]

    def click_report(self):
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.wait_for(lambda: self.menu_items()[REPORT_ITEM][1].get("enabled", True) is True,
                      "the report item enabled")
        self.click(REPORT_ITEM)

    def wait_item_back(self):
        # Enabled again, with its label: the tray is done with this report.
        self.wait_for(lambda: REPORT_ITEM in self.menu_items()
                      and self.menu_items()[REPORT_ITEM][1].get("enabled", True) is True,
                      "the report item back")

    def test_report_opens_in_browser(self):
        self.require_report_command()
        # A stale report, readable by others: replaced, and made private.
        with open(self.report, "w") as f:
            f.write("stale")
        os.chmod(self.report, 0o644)
        self.click_report()
        # Done either way: the stand-in started, or a problem popped up.
        self.wait_for(lambda: self.browser_runs() or self.problems("Could not write today's report")
                      or self.problems("Could not open today's report"),
                      "the browser stand-in started", timeout=60)
        self.assertEqual([n for n in self.notifications() if "report" in n[1]], [])
        run = self.browser_runs()[0]
        # %u: GIO hands a local file over as its path or its URI.
        self.assertEqual(len(run["argv"]), 1, run)
        self.assertIn(run["argv"][0], (self.report, "file://" + self.report))
        # Private already when the browser read it, and still.
        self.assertTrue(stat.S_ISREG(run["mode"]))
        self.assertEqual(stat.S_IMODE(run["mode"]), 0o600)
        self.assertEqual(run["uid"], os.getuid())
        st = os.lstat(self.report)
        self.assertTrue(stat.S_ISREG(st.st_mode))
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o600)
        self.assertNotIn("stale", run["head"])
        self.assertRegex(run["head"].lower(), r"<(!doctype )?html")
        self.wait_item_back()
        self.assertEqual([n for n in self.notifications() if "report" in n[1]], [])
        self.assertEqual(len(self.browser_runs()), 1)

    def test_no_browser_explained(self):
        self.require_report_command()
        os.unlink(self.desktop)
        os.unlink(self.mimeapps)
        self.click_report()
        self.wait_for(lambda: self.problems("Could not open today's report"),
                      "the missing browser explained", timeout=60)
        self.assertIn(self.report, self.problems("Could not open today's report")[0][2])
        # The report is there, private, for another try.
        self.assertEqual(stat.S_IMODE(os.lstat(self.report).st_mode), 0o600)
        self.wait_item_back()

    def test_symlink_refused(self):
        """A link planted in the report's place is not followed."""
        target = os.path.join(self.tmp, "elsewhere")
        os.symlink(target, self.report)
        self.click_report()
        self.wait_for(lambda: self.problems("Could not write today's report"),
                      "the refusal explained")
        body = self.problems("Could not write today's report")[0][2]
        self.assertIn("Cannot open " + self.report, body)
        self.assertFalse(os.path.lexists(target))
        self.assertTrue(os.path.islink(self.report))
        self.assertEqual(self.browser_runs(), [])
        self.wait_item_back()

    def test_ctl_missing_explained(self):
        """A tray alone, with no laptop-modectl beside it or on PATH."""
        self.tray_dir = os.path.join(self.tmp, "tray-only")
        os.makedirs(self.tray_dir)
        os.chmod(self.tray_dir, 0o755)
        self.tray_env = dict(self.tray_env, PATH="/usr/bin:/bin")
        self.assertIsNone(shutil.which("laptop-modectl", path="/usr/bin:/bin"))
        self.click_report()
        self.wait_for(lambda: self.problems("Could not write today's report"),
                      "the missing laptop-modectl explained")
        body = self.problems("Could not write today's report")[0][2]
        self.assertIn("laptop-modectl is neither next to laptop-mode-tray (%s/laptop-mode-tray) "
                      "nor on PATH" % self.tray_dir, body)
        self.assertEqual(self.browser_runs(), [])
        self.wait_item_back()


@lmtest.realkernel
@unittest.skipUnless(*lmtest.can_run("root", "namespace"))
class RealSpinUpTest(TrayMixin, DaemonTestCase):
    """A cat of an uncached file on an idle loop disk, seen by the real
    kernel's tracepoints, pops up naming cat."""

    fake_root = False

    def setUp(self):
        import test_spinup_realkernel as rk
        ok, why = rk.can_run("bpf")
        backend = "bpf"
        if not ok:
            ok, why = rk.can_run("tracefs")
            backend = "tracefs"
        if not ok:
            self.skipTest(why)
        self.config_text = ("[LaptopMode]\nMode=off\nAttribution=%s\nSpinUpIdle=%d\n"
                            % (backend, rk.IDLE))
        self.idle = rk.IDLE
        self.uncache = rk.uncache
        super().setUp()
        self.fs = rk.LoopExt4(self.tmp)
        self.addCleanup(self.fs.cleanup)
        self.file = os.path.join(self.fs.mnt, "a")
        with open(self.file, "wb") as f:
            f.write(os.urandom(256 << 10))
        os.sync()

    def wait_disk_quiet(self, quiet, timeout=60):
        def io():
            with open("/sys/block/%s/stat" % self.fs.disk) as f:
                fields = f.read().split()
            return fields[0], fields[4]
        last, since = io(), time.monotonic()
        while time.monotonic() < since + timeout:
            time.sleep(0.1)
            now = io()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
        self.fail("the loop disk never went quiet")

    def test_real_spin_up_notified(self):
        self.start_daemon()
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.wait_for(lambda: "Subscribed to spin-ups" in self.tray_log(), "the subscription")
        # Past the idle time: the loop disk quiet for longer than SpinUpIdle.
        # Popups of what the set-up woke do not match the one looked for.
        self.wait_disk_quiet(self.idle + 0.5)
        before = len(self.notifications())
        self.uncache(self.file)
        cat = subprocess.Popen(["cat", self.file], stdout=subprocess.DEVNULL)
        cat.wait()
        want = "%s woken by cat (%d): read" % (self.fs.disk, cat.pid)

        def popped_up():
            # Alone, or summed up with what the rest of a busy machine woke
            # in the same interval: cat may wake the system disk too, for
            # its own binary, and then counts twice.
            return any(n[1] == want or re.search(r"spin-ups: .*\bcat ×\d+", n[1])
                       for n in self.notifications()[before:])
        self.wait_for(popped_up, "a popup naming cat", timeout=15)
        # The exact disk and pid are in the menu either way.
        self.assertTrue(any(lb.endswith(want) for lb in self.menu_items()), self.menu_items())


class WearNotificationTest(TrayMixin, test_disks.FakeAtaSmartTest):
    """A spinning disk parking 400 times a day (the fake drive's SMART and
    the ledger's reading ten days ago): one notification saying what
    helps, however often Disks changes afterwards."""
    test_read_after_io_while_active = None
    test_no_smart_to_a_standby_drive = None

    def wear_notes(self):
        return [n for n in self.notifications() if "wears out its heads" in n[1]]

    def test_one_wear_notification(self):
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.assertEqual(self.wear_notes(), [])
        self.do_io("sda")
        self.wait_for(lambda: self.wear_notes(), "the wear notification", timeout=20)
        summary, body = self.wear_notes()[0][1:]
        self.assertEqual(summary, "sda wears out its heads")
        self.assertIn("400 times a day", body)
        self.assertIn("rating of 300000 load cycles in 1.2 years", body)
        self.assertIn("APM", body)
        # Disks keeps changing (state changes, more I/O): no second one.
        for _ in range(3):
            self.do_io("sda")
            time.sleep(1.5)
        self.set_drive("sda", "standby")
        self.wait_disk("sda", "standby seen", State="standby")
        time.sleep(2)
        self.assertEqual(len(self.wear_notes()), 1, self.notifications())


class NvmeTooltipTest(TrayMixin, test_report.NvmeSummaryTest):
    """An NVMe-only laptop (the fake controller with the hand-made 5-state
    table): the tooltip says about how long today the drive sat in its
    deepest state, with laptop mode and under stock writeback, and the
    energy, estimated."""

    def test_deep_idle_and_energy(self):
        self.start_tray()
        self.wait_icon("laptop-mode-off")
        self.root.write(test_report.NVME_DEV + "/nvme0n1/stat", "%d 0 %d 0 %d 0 %d 0 0 0 0 0 0 0 0 0 0\n"
                        % (30, 30, 30, 30))
        # Every figure on the line is the replay's estimate, and says so.
        pattern = re.compile(r"^nvme0n1: PS4 about (\d+) % of today, estimated \(stock writeback "
                             r"about (\d+) %\), about ([0-9.]+) Wh against ([0-9.]+) Wh, from the "
                             r"drive(?:'|&apos;)s IDLP/ACTP(?: \(less sure: (.+)\))?$", re.M)
        got = {}

        def shown():
            got["tip"] = self.item("ToolTip")[3]
            return pattern.search(got["tip"]) is not None
        try:
            self.wait_for(shown, "the NVMe line in the tooltip", timeout=25)
        except AssertionError:
            print("# tooltip %r\n# LedgerSummary %r" % (got.get("tip"),
                                                       self.properties()["LedgerSummary"]))
            raise
        m = pattern.search(got["tip"])
        self.assertGreater(int(m.group(1)), int(m.group(2)))
        # Two minutes: a fraction of a watt-hour, four digits; less with laptop mode.
        self.assertLess(float(m.group(3)), float(m.group(4)))
        self.assertGreater(float(m.group(3)), 0)
        # The ledger's activity records here are of the shape before their
        # filesystems were kept: the replay took them as ext4's and says so.
        self.assertIsNotNone(m.group(5), got["tip"])
        self.assertIn("not recorded", m.group(5))


if __name__ == "__main__":
    lmtest.main()
