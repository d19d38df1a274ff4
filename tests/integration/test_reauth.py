#!/usr/bin/python3
"""test_reauth: rights that last only as long as they hold, and signals
that count only from their real sender.

A SpinUp subscription is checked again when logind (python-dbusmock) says
a session changed; a real polkitd decides with a rule whose answer the test
flips. Spin-ups come from the block_dump backend reading a fake /dev/kmsg,
as in test_spinup_dbus. A process that is not logind sends logind's
signals, also straight to the daemon's unique name, and is ignored (GLib
before 2.80.1, without Debian's backport of the CVE-2024-34397 fix, would
deliver those to a subscription by well-known name). Attribution=auto and block_dump's note follow
kernel.dmesg_restrict in the fake root. Test users are created here and
removed even on failure.
"""

import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import unittest
import uuid

import lmpolkit
import lmtest
from test_spinup_dbus import LineReader, SpinUpBusTest

LOGIND = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
MOCK_IFACE = "org.freedesktop.DBus.Mock"

# Subscribes, then prints what reaches it: every SpinUp's Comm, and for
# Unsubscribed the reason and what the next two GetSpinUps calls answer.
SUBSCRIBER = r'''
from gi.repository import Gio, GLib
NAME, PATH, IFACE = "org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1", "org.laptopmode.LaptopMode1"
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)

def get_spin_ups():
    try:
        bus.call_sync(NAME, PATH, IFACE, "GetSpinUps", None, None, 0, -1, None)
        return "ok"
    except GLib.Error as e:
        return "%s %s" % (Gio.DBusError.get_remote_error(e), e.message)

def on_signal(conn, sender, path, iface, member, params):
    if member == "SpinUp":
        # Without monitor-all another user's spin-up has no Comm.
        print("SPINUP", params.unpack()[0].get("Comm", "OTHER"), flush=True)
    elif member == "Unsubscribed":
        print("UNSUBSCRIBED", params.unpack()[0], flush=True)
        print("GETSPINUPS", get_spin_ups(), flush=True)
        print("GETSPINUPS", get_spin_ups(), flush=True)

bus.signal_subscribe(None, IFACE, None, PATH, None, 0, on_signal)
bus.call_sync(NAME, PATH, IFACE, "Subscribe", None, None, 0, -1, None)
print("subscribed", flush=True)
GLib.MainLoop().run()
'''

# Sends one of logind's signals as a process that does not own its name:
# to the daemon's unique name (a unicast signal needs no match rule, the
# way GLib before 2.80.1 is fooled) and to everyone. The round trip to the
# bus afterwards means both are routed before it prints "sent".
SPOOFER = r'''
import sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
DBUS = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")
daemon = bus.call_sync(*DBUS, "GetNameOwner", GLib.Variant("(s)", ("org.laptopmode.LaptopMode1",)),
                       None, 0, -1, None).unpack()[0]
signals = {
    "sleep": ("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep",
              GLib.Variant("(b)", (True,))),
    "session": ("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "SessionRemoved",
                GLib.Variant("(so)", ("c1", "/org/freedesktop/login1/session/c1"))),
    "upower": ("/org/freedesktop/UPower", "org.freedesktop.DBus.Properties", "PropertiesChanged",
               GLib.Variant("(sa{sv}as)", ("org.freedesktop.UPower",
                                           {"OnBattery": GLib.Variant("b", sys.argv[2] == "battery")},
                                           []))),
}
path, iface, member, args = signals[sys.argv[1]]
for dest in (daemon, None):
    bus.emit_signal(dest, path, iface, member, args)
bus.call_sync(*DBUS, "GetId", None, None, 0, -1, None)
print("sent", flush=True)
'''

# "fading" may monitor (every user's spin-ups, in full) while the test's
# flag says its session is active (polkit.spawn reads it, so the answer
# changes inside polkitd for real); "steady" may always. Inactive falls
# through to the action's default (auth_admin), as for a real inactive
# session.
RULE = """polkit.addRule(function (action, subject) {
    if (action.id != "org.laptopmode.LaptopMode1.monitor" &&
        action.id != "org.laptopmode.LaptopMode1.monitor-all")
        return polkit.Result.NOT_HANDLED;
    if (subject.user == "@STEADY@")
        return polkit.Result.YES;
    if (subject.user == "@FADING@" &&
        polkit.spawn(["/bin/cat", "@FLAG@"]).trim() == "active")
        return polkit.Result.YES;
    return polkit.Result.NOT_HANDLED;
});
"""

USERS = {}


def setUpModule():
    if not lmtest.is_root():
        raise unittest.SkipTest("the tests switch to other users and need root")
    tag = uuid.uuid4().hex[:8]
    for role in ("fading", "steady"):
        name = "lmr%s%s" % (role[:2], tag)
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        "--no-user-group", "--gid", "nogroup", name],
                       check=True, capture_output=True, timeout=60)
        unittest.addModuleCleanup(subprocess.run, ["userdel", name], capture_output=True)
        USERS[role] = name


class Base(SpinUpBusTest):
    extra_bus_config = lmtest.MOCK_BUS_POLICY
    dmesg_restrict = "1"

    def setUp(self):
        super().setUp()
        if self.dmesg_restrict is not None:
            self.root.write("/proc/sys/kernel/dmesg_restrict", self.dmesg_restrict + "\n")

    def script(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        return path

    def as_user(self, user, argv):
        pw = pwd.getpwnam(user)
        return ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
                "--clear-groups", "--"] + argv

    def mock_call(self, path, method, *args):
        return self.run_as(["gdbus", "call", "--system", "--dest", LOGIND, "--object-path", path,
                            "--method", method] + list(args), check=True)

    def set_flag(self, state):
        with open(self.flag + ".new", "w") as f:
            f.write(state + "\n")
        os.chmod(self.flag + ".new", 0o644)
        os.rename(self.flag + ".new", self.flag)

    def session_inactive(self):
        """What logind does when a session goes to the background."""
        self.mock_call(LOGIND_PATH + "/session/c1", MOCK_IFACE + ".UpdateProperties",
                       "org.freedesktop.login1.Session",
                       "{'Active': <false>, 'State': <'online'>}")

    def spoof(self, what, arg=""):
        script = self.script("spoof.py", SPOOFER)
        r = self.run_as(["/usr/bin/python3", script, what, arg], user=lmtest.UNPRIVILEGED)
        self.assertEqual(r.out.strip(), "sent", r)


# Takes a hold, then prints what reaches it: HoldDropped's cookie and reason.
HOLDER = r'''
from gi.repository import Gio, GLib
NAME, PATH, IFACE = "org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1", "org.laptopmode.LaptopMode1"
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)

def on_signal(conn, sender, path, iface, member, params):
    cookie, reason = params.unpack()
    print("DROPPED", cookie, reason, flush=True)

bus.signal_subscribe(None, IFACE, "HoldDropped", PATH, None, 0, on_signal)
cookie = bus.call_sync(NAME, PATH, IFACE, "Inhibit", GLib.Variant("(ss)", ("backup", "nightly")),
                       None, 0, -1, None).unpack()[0]
print("held", cookie, flush=True)
GLib.MainLoop().run()
'''

# The inhibit action as RULE gives monitor: "fading" while its flag says
# active, "steady" always; else the default (auth_admin_keep: no).
HOLD_RULE = RULE.replace('''    if (action.id != "org.laptopmode.LaptopMode1.monitor" &&
        action.id != "org.laptopmode.LaptopMode1.monitor-all")''',
                         '''    if (action.id != "org.laptopmode.LaptopMode1.inhibit")''')


@unittest.skipUnless(lmpolkit.available() is None, "needs a real polkitd: %s" % lmpolkit.available())
class HoldReauthTest(Base):
    """A hold lasts as long as its reason (issue 48): logind says the
    holder's session went inactive, polkit no longer allows it, and its hold
    is dropped, told by HoldDropped and logged; another's stays."""

    def setUp(self):
        self.flagdir = tempfile.mkdtemp(prefix="lm-reauth-")
        self.addCleanup(shutil.rmtree, self.flagdir, True)
        os.chmod(self.flagdir, 0o755)
        self.flag = os.path.join(self.flagdir, "fading-session")
        self.set_flag("active")
        self.assertNotEqual(HOLD_RULE, RULE)
        self.polkit_rules = {"70-reauth.rules": HOLD_RULE.replace("@STEADY@", USERS["steady"])
                             .replace("@FADING@", USERS["fading"]).replace("@FLAG@", self.flag)}
        super().setUp()
        self.start_mock("logind")
        uid = pwd.getpwnam(USERS["fading"]).pw_uid
        self.mock_call(LOGIND_PATH, MOCK_IFACE + ".AddSession", "c1", "seat0", str(uid),
                       USERS["fading"], "true")
        self.start_daemon()

    def holder(self, user):
        script = self.script("holder.py", HOLDER)
        p = subprocess.Popen(self.as_user(user, ["/usr/bin/python3", script]), env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, text=True)
        self.procs.append(p)
        self.addCleanup(lmtest.close_child, p)
        lines = LineReader(p.stdout)
        first = lines.get(30) or ""
        self.assertTrue(first.startswith("held "), "%s could not hold: %r\n%s"
                        % (user, first, self.daemon_log()))
        return lines, int(first.split()[1])

    def holds(self):
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                        "Inhibitors", "--json=short", check=True)
        return json.loads(r.out)["data"]

    def test_hold_of_a_closed_session_is_dropped(self):
        fading, cookie = self.holder(USERS["fading"])
        steady, _ = self.holder(USERS["steady"])
        self.wait_until(lambda: len(self.holds()) == 2, timeout=10, message="two holds")
        # polkit's answer changes; nothing asks it until logind says so.
        self.set_flag("inactive")
        time.sleep(1)
        self.assertEqual(len(self.holds()), 2)
        self.session_inactive()
        line = fading.get(30)
        self.assertIsNotNone(line, "no HoldDropped\n" + self.daemon_log())
        self.assertTrue(line.startswith("DROPPED %d " % cookie), line)
        self.assertIn("No longer authorized to hold laptop mode off", line)
        self.assertIn("org.laptopmode.LaptopMode1.inhibit", line)
        self.wait_until(lambda: len(self.holds()) == 1, timeout=10, message="one hold left")
        self.assertEqual(self.holds()[0][0], "backup")
        self.assertRegex(self.daemon_log(), r"Dropped the hold of backup \(:[0-9.]+, uid %d"
                         % pwd.getpwnam(USERS["fading"]).pw_uid)
        self.assertEqual(steady.drain(2), [], "the steady holder was told something")
        self.assertEqual(self.stop_daemon(), 0, self.daemon_log())


@unittest.skipUnless(lmpolkit.available() is None, "needs a real polkitd: %s" % lmpolkit.available())
class ReauthTest(Base):

    def setUp(self):
        # The flag lives outside the test's tmp, which does not exist yet
        # when the rules are written.
        self.flagdir = tempfile.mkdtemp(prefix="lm-reauth-")
        self.addCleanup(shutil.rmtree, self.flagdir, True)
        os.chmod(self.flagdir, 0o755)
        self.flag = os.path.join(self.flagdir, "fading-session")
        self.set_flag("active")
        self.polkit_rules = {"70-reauth.rules": RULE.replace("@STEADY@", USERS["steady"])
                             .replace("@FADING@", USERS["fading"]).replace("@FLAG@", self.flag)}
        super().setUp()
        self.start_mock("logind")
        uid = pwd.getpwnam(USERS["fading"]).pw_uid
        self.mock_call(LOGIND_PATH, MOCK_IFACE + ".AddSession", "c1", "seat0", str(uid),
                       USERS["fading"], "true")
        self.start_daemon()

    def subscriber(self, user):
        script = self.script("subscriber.py", SUBSCRIBER)
        p = subprocess.Popen(self.as_user(user, ["/usr/bin/python3", script]), env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, text=True)
        self.procs.append(p)
        self.addCleanup(lmtest.close_child, p)
        lines = LineReader(p.stdout)
        first = lines.get(30)
        self.assertEqual(first, "subscribed\n", "%s could not subscribe: %r\n%s"
                         % (user, first, self.daemon_log()))
        return lines

    def expect(self, lines, prefix, who):
        line = lines.get(20)
        self.assertIsNotNone(line, "%s got nothing, expected %s:\n%s"
                             % (who, prefix, self.daemon_log()))
        self.assertTrue(line.startswith(prefix), "%s got %r, expected %s" % (who, line, prefix))
        return line

    def test_inactive_session_ends_subscription(self):
        fading = self.subscriber(USERS["fading"])
        steady = self.subscriber(USERS["steady"])

        self.kmsg((5.0, "first(101): READ block 8 on sda1"))
        self.assertEqual(self.expect(fading, "SPINUP", "fading"), "SPINUP first\n")
        self.assertEqual(self.expect(steady, "SPINUP", "steady"), "SPINUP first\n")

        # polkit's answer changes, but nothing asks it yet: no polling, and
        # a session change forged by another process does not count.
        self.set_flag("inactive")
        self.spoof("session")
        self.kmsg((10.0, "second(102): READ block 8 on sda1"))
        self.assertEqual(self.expect(steady, "SPINUP", "steady"), "SPINUP second\n")
        self.assertEqual(self.expect(fading, "SPINUP", "fading"), "SPINUP second\n")

        # logind says the session went inactive: checked again, dropped, told.
        self.session_inactive()
        line = self.expect(fading, "UNSUBSCRIBED", "fading")
        self.assertIn("No longer authorized to monitor spin-ups", line)
        self.assertIn("org.laptopmode.LaptopMode1.monitor", line)
        # Its next call learns why, the one after is authorized as usual.
        line = self.expect(fading, "GETSPINUPS", "fading")
        self.assertIn("org.freedesktop.DBus.Error.AccessDenied", line)
        self.assertIn("Subscription ended: No longer authorized", line)
        line = self.expect(fading, "GETSPINUPS", "fading")
        self.assertIn("org.freedesktop.DBus.Error.AccessDenied", line)
        self.assertNotIn("Subscription ended", line)
        self.assertIn("Dropped spin-up subscriber", self.daemon_log())

        self.kmsg((15.0, "third(103): READ block 8 on sda1"))
        self.assertEqual(self.expect(steady, "SPINUP", "steady"), "SPINUP third\n")
        # Sent to every subscriber in one go: had fading still been one, its
        # copy would be here by now.
        self.assertEqual(fading.drain(2), [], "a dropped subscriber still got SpinUp")
        self.assertEqual(self.block_dump(), "1", "monitoring stopped with a subscriber left")
        # A clean exit (under ASan: nothing leaked on the way).
        self.assertEqual(self.stop_daemon(), 0, self.daemon_log())

    def test_still_authorized_stays(self):
        fading = self.subscriber(USERS["fading"])
        # A change that keeps the answer: asked again, still allowed.
        self.session_inactive()
        self.wait_until(lambda: "still authorized" in self.daemon_log(), timeout=30,
                        message="the re-check")
        self.kmsg((5.0, "first(101): READ block 8 on sda1"))
        self.assertEqual(self.expect(fading, "SPINUP", "fading"), "SPINUP first\n")
        self.assertNotIn("Dropped spin-up subscriber", self.daemon_log())
        self.assertEqual(self.stop_daemon(), 0, self.daemon_log())


    def test_polkit_gone_keeps_subscription(self):
        # A re-check polkit cannot answer is asked again later: the
        # subscriber stays (seeing only its own processes meanwhile).
        steady = self.subscriber(USERS["steady"])
        self.kmsg((5.0, "first(101): READ block 8 on sda1"))
        self.assertEqual(self.expect(steady, "SPINUP", "steady"), "SPINUP first\n")
        polkitd = [p for p in self.procs if isinstance(p.args, list) and lmpolkit.POLKITD in p.args]
        self.assertEqual(len(polkitd), 1)
        lmtest.stop_process(polkitd[0])
        self.session_inactive()
        self.wait_for_log("asking again in", timeout=30)
        self.kmsg((10.0, "second(102): READ block 8 on sda1"))
        self.assertEqual(self.expect(steady, "SPINUP", "steady"), "SPINUP OTHER\n")
        self.assertNotIn("Dropped spin-up subscriber", self.daemon_log())
        # polkitd is back: the next retry restores the full view.
        again = lmpolkit.RealPolkit(os.path.join(self.tmp, "again"), self.polkit_rules)
        self.procs.append(again.start(self.env, self.bus_address))
        self.wait_for_log("still authorized (every user's processes)", timeout=40)
        self.kmsg((15.0, "third(103): READ block 8 on sda1"))
        self.assertEqual(self.expect(steady, "SPINUP", "steady"), "SPINUP third\n")
        self.assertEqual(self.stop_daemon(), 0, self.daemon_log())


class SpoofedLogindTest(Base):
    """Only the owner of org.freedesktop.login1 speaks for logind."""

    polkit = None

    def our_lock(self):
        out = self.mock_call(LOGIND_PATH, "org.freedesktop.login1.Manager.ListInhibitors").out
        return "laptop-moded" in out and "delay" in out

    def test_prepare_for_sleep_only_from_owner(self):
        self.start_mock("logind")
        self.start_daemon()
        self.wait_until(self.our_lock, message="the daemon's delay lock")
        self.spoof("sleep")
        # The real one after it: when the daemon has acted on that, it has
        # read the forged ones too, which came first.
        self.mock_call(LOGIND_PATH, MOCK_IFACE + ".EmitSignal", "org.freedesktop.login1.Manager",
                       "PrepareForSleep", "b", "[<true>]")
        self.wait_until(lambda: not self.our_lock(), message="the lock released for sleep")
        self.assertEqual(self.daemon_log().count("going to sleep"), 1, self.daemon_log())

    def test_prepare_for_sleep_spoof_alone(self):
        self.start_mock("logind")
        self.start_daemon()
        self.wait_until(self.our_lock, message="the daemon's delay lock")
        # The bus must really hand the forged signal to the daemon, or this
        # test would prove nothing: a monitor sees it routed there.
        daemon = self.run_as(["gdbus", "call", "--system", "--dest", "org.freedesktop.DBus",
                              "--object-path", "/org/freedesktop/DBus", "--method",
                              "org.freedesktop.DBus.GetNameOwner", lmtest.BUS_NAME],
                             check=True).out.strip().strip("(',)")
        mon = subprocess.Popen(["dbus-monitor", "--address", self.bus_address,
                                "type='signal',member='PrepareForSleep'"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.procs.append(mon)
        self.addCleanup(lmtest.close_child, mon)
        mon_lines = LineReader(mon.stdout)
        # The monitor may still be starting: forge again until it saw one.
        deadline = time.monotonic() + 30
        routed = False
        while not routed:
            self.assertLess(time.monotonic(), deadline,
                            "the forged PrepareForSleep never reached the daemon")
            self.spoof("sleep")
            routed = any("destination=%s " % daemon in line and "member=PrepareForSleep" in line
                         for line in mon_lines.drain(0.5))
        # The daemon answers a call after the forged signals reached it.
        self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Active",
                    check=True)
        self.assertTrue(self.our_lock(), "a forged PrepareForSleep released the lock")
        self.assertNotIn("going to sleep", self.daemon_log())
        self.assertEqual(self.stop_daemon(), 0, self.daemon_log())


class SpoofedUPowerTest(Base):
    """Only the owner of org.freedesktop.UPower says what powers the machine."""

    polkit = None

    def on_battery(self):
        return self.status()["OnBattery"]

    def test_properties_only_from_owner(self):
        self.start_mock("upower", {"OnBattery": False})
        self.start_daemon()
        self.wait_until(lambda: self.status()["PowerSource"] == "upower", message="UPower used")
        # status is answered after the forged signals, which came first.
        self.spoof("upower", "battery")
        self.assertFalse(self.on_battery(), "a forged PropertiesChanged was believed")
        self.run_as(["gdbus", "call", "--system", "--dest", "org.freedesktop.UPower",
                     "--object-path", "/org/freedesktop/UPower", "--method",
                     "org.freedesktop.DBus.Properties.Set", "org.freedesktop.UPower",
                     "OnBattery", "<true>"], check=True)
        self.wait_until(self.on_battery, message="UPower's own change")
        self.spoof("upower", "ac")
        self.assertTrue(self.on_battery(), "a forged PropertiesChanged was believed")


class MatchRuleTest(Base):
    """The daemon asks the bus for logind's and UPower's signals by their
    owners' unique names, never by well-known name: that is what keeps
    forged ones out even where GLib would deliver them (the tests above
    pass on a GLib that filters by itself, this one does not depend on it)."""

    polkit = None

    def test_rules_name_unique_senders(self):
        mon = subprocess.Popen(["dbus-monitor", "--address", self.bus_address,
                                "type='method_call',interface='org.freedesktop.DBus'"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.procs.append(mon)
        self.addCleanup(lmtest.close_child, mon)
        lines = LineReader(mon.stdout)
        seen = []
        deadline = time.monotonic() + 30
        # Ready once it sees a call of ours.
        while not any("member=GetId" in x for x in seen):
            self.assertLess(time.monotonic(), deadline, "dbus-monitor did not start")
            self.run_as(["gdbus", "call", "--system", "--dest", "org.freedesktop.DBus",
                         "--object-path", "/org/freedesktop/DBus", "--method",
                         "org.freedesktop.DBus.GetId"], check=True)
            seen += lines.drain(0.3)
        self.start_mock("logind")
        self.start_mock("upower", {"OnBattery": False})
        self.start_daemon()
        self.wait_until(lambda: self.status()["PowerSource"] == "upower", message="UPower used")
        # Root subscribes (and leaves): the session watcher starts. (Not
        # checked: an old daemon sends root to polkit, absent here; the
        # rules below then tell what is wrong.)
        self.gdbus_call("Subscribe")

        def rules():
            nonlocal seen
            seen += lines.drain(0.2)
            return [x.strip() for x in seen if x.strip().startswith("string \"type='signal'")]

        def have(*parts):
            return lambda: any(all(p in r for p in parts) for r in rules())
        for parts in (("member='PrepareForSleep'",), ("member='PrepareForShutdown'",),
                      ("path='/org/freedesktop/UPower'", "member='PropertiesChanged'")):
            self.wait_until(have(*parts), timeout=20, message="an AddMatch with %s" % (parts,))
        for rule in rules():
            if "login1" in rule or "UPower" in rule:
                self.assertNotRegex(rule, r"sender='org\.freedesktop\.(login1|UPower)'", rule)
        for parts in (("member='SessionNew'",), ("member='SeatRemoved'",),
                      ("interface='org.freedesktop.DBus.Properties'", "member='PropertiesChanged'",
                       "sender=':1.")):
            self.wait_until(have(*parts), timeout=20, message="an AddMatch with %s" % (parts,))
        for rule in rules():
            # The bus's own NameOwnerChanged (the name watches) is no one else's.
            if ("login1" in rule or "UPower" in rule) and "sender='org.freedesktop.DBus'" not in rule:
                self.assertRegex(rule, r"sender=':1\.[0-9]+'", rule)
        self.assertEqual(self.stop_daemon(), 0, self.daemon_log())


class AttributionNoteTest(Base):
    """block_dump shows spin-ups in the kernel log, which every user can read
    unless kernel.dmesg_restrict is 1."""

    polkit = None
    attribution = "auto"

    def get(self, prop):
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, prop,
                        "--json=short", check=True)
        return json.loads(r.out)["data"]

    def check(self, attribution, dmesg_restrict, backend, note):
        self.config_text = None
        with open(self.config, "w") as f:
            f.write("[LaptopMode]\nAttribution=%s\n" % attribution)
        if dmesg_restrict is None:
            if os.path.exists(self.root.file("/proc/sys/kernel/dmesg_restrict")):
                os.unlink(self.root.file("/proc/sys/kernel/dmesg_restrict"))
        else:
            self.root.write("/proc/sys/kernel/dmesg_restrict", dmesg_restrict + "\n")
        self.start_daemon()
        self.assertEqual(self.get("Attribution"), backend)
        got = self.get("AttributionNote")
        if note:
            self.assertIn("dmesg_restrict", got)
            self.assertIn("every user", got)
            self.assertEqual(self.daemon_log().count("every user can read all spin-ups"), 1,
                             self.daemon_log())
        else:
            self.assertEqual(got, "")
            self.assertNotIn("every user can read all spin-ups", self.daemon_log())
        self.assertEqual(self.stop_daemon(), 0)

    def test_auto_restricted_chooses_block_dump(self):
        self.check("auto", "1", "block_dump", False)

    def test_auto_unrestricted_does_not(self):
        self.check("auto", "0", "none", False)
        self.assertIn("kernel.dmesg_restrict is not 1", self.daemon_log())

    def test_auto_without_the_sysctl_does_not(self):
        self.check("auto", None, "none", False)

    def test_forced_unrestricted_says_so(self):
        self.check("block_dump", "0", "block_dump", True)

    def test_forced_restricted_says_nothing(self):
        self.check("block_dump", "1", "block_dump", False)


if __name__ == "__main__":
    lmtest.main()
