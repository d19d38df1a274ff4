#!/usr/bin/python3
"""Tier 2: no local user can stall or kill the daemon (issue 13).

Oversized calls from an unprivileged user are refused with InvalidArgs
naming the limit, before polkit, without stalling other callers or growing
the daemon; losing the bus restores and fails, a --replace hand-over does
not; holds settle, and one user cannot take every hold. The real daemon,
dbus-daemon and polkitd; the big calls come from Python GDBus (Gio).
"""

import datetime
import json
import os
import re
import subprocess
import time
import unittest

import lmtest
from lmtest import DaemonTestCase, is_root

needs_root = unittest.skipUnless(is_root(), "needs root: runs callers as nobody with setpriv")

# One big call on its own connection, as the unprivileged caller; prints
# the error name and message (cut) and when the call was sent and answered.
BIG_CALL = r"""
import json, sys, time
from gi.repository import Gio, GLib
address, kind = sys.argv[1], sys.argv[2]
flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
         | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
c = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
if kind == "string30":     # one 30 MiB NoRemount entry of control bytes
    value = {"NoRemount": GLib.Variant("as", ["/" + "\x01\x1b" * (15 << 20)])}
elif kind == "list1m":     # a million NoRemount entries
    value = {"NoRemount": GLib.Variant("as", ["/m%d" % i for i in range(1000000)])}
elif kind == "max":        # the largest call within the bounds: 1 MiB, ~4000 values
    disk = {"APM": GLib.Variant("u", 128), "ReadaheadKiB": GLib.Variant("u", 1024),
            "Exclude": GLib.Variant("b", False), "StandbySeconds": GLib.Variant("u", 60),
            "ACStandbySeconds": GLib.Variant("u", 0)}
    value = {"NoRemount": GLib.Variant("as", ["/%03d" % i + "p" * 4091 for i in range(256)]),
             "RemountTypes": GLib.Variant("as", ["ext4"] * 256),
             "DiskSettings": GLib.Variant("a{sa{sv}}", {"disk%02d" % i: disk for i in range(64)})}
elif kind == "bools":      # 1.5 MiB of booleans: GDBus would build 390,000 GVariants
    value = {"Remount": GLib.Variant("ab", [False] * (3 << 17))}
elif kind == "list257":
    value = {"NoRemount": GLib.Variant("as", ["/m%d" % i for i in range(257)])}
elif kind == "path4096":
    value = {"NoRemount": GLib.Variant("as", ["/" + "\x07" * 4095])}
elif kind == "mode1m":     # below the message bound: the per-value bound answers
    value = {"Mode": GLib.Variant("s", "\x1b" * (1 << 20))}
elif kind == "disks65":
    value = {"DiskSettings": GLib.Variant("a{sa{sv}}", {"sd%d" % i: {} for i in range(65)})}
elif kind == "keys33":
    value = {"K%d" % i: GLib.Variant("u", 1) for i in range(33)}
m = Gio.DBusMessage.new_method_call("org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                                    "org.laptopmode.LaptopMode1", "Configure")
m.set_body(GLib.Variant("(a{sv})", (value,)))
print("sending", flush=True)
t0 = time.time()
reply, _ = c.send_message_with_reply_sync(m, Gio.DBusSendMessageFlags.NONE, 120000, None)
t1 = time.time()
body = reply.get_body()
print(json.dumps({"t0": t0, "t1": t1, "error": reply.get_error_name(),
                  "message": body.unpack()[0][:4000] if body is not None else None}))
"""

# Reads a property over and over on its own connection until told to stop
# (stdin closes), while a second connection asks the bus itself (GetId):
# how long the bus alone took at the same moment. Prints both as lists of
# (sent, answered).
READER = r"""
import json, sys, threading, time
from gi.repository import Gio, GLib
flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
         | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
c = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
b = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
bus = []
def ask_bus():
    while not done.is_set():
        t0 = time.time()
        b.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                    "GetId", None, None, 0, 30000, None)
        bus.append((t0, time.time()))
        time.sleep(0.002)
asker = threading.Thread(target=ask_bus)
asker.start()
print("ready", flush=True)
out = []
while not done.is_set():
    t0 = time.time()
    c.call_sync("org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                "org.freedesktop.DBus.Properties", "Get",
                GLib.Variant("(ss)", ("org.laptopmode.LaptopMode1", "Active")), None, 0, 30000, None)
    out.append((t0, time.time()))
    time.sleep(0.002)
asker.join()
print(json.dumps({"daemon": out, "bus": bus}), flush=True)
"""


def daemon_has_asan(pid):
    with open("/proc/%d/maps" % pid) as f:
        return any("libasan" in line for line in f)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


def log_times(log, pattern):
    """Wall-clock times (today, local) of the daemon's log lines matching
    @pattern; GLib writes HH:MM:SS.mmm."""
    today = datetime.date.today()
    times = []
    for m in re.finditer(r"(\d\d):(\d\d):(\d\d)\.(\d\d\d): " + pattern, log):
        h, mi, s, ms = (int(x) for x in m.groups()[:4])
        dt = datetime.datetime(today.year, today.month, today.day, h, mi, s, ms * 1000)
        times.append(dt.timestamp())
    return times


@needs_root
class BigCallTest(DaemonTestCase):
    """Configure as nobody, with arguments far beyond every bound."""

    def setUp(self):
        super().setUp()
        self.start_daemon()
        # Warm up the paths a refusal takes, so the RSS baseline is fair.
        for kind in ("list257", "path4096"):
            self.big_call(kind)
        self.rss_before = rss_kib(self.daemon.pid)

    def big_call(self, kind):
        r = self.run_as(["/usr/bin/python3", "-c", BIG_CALL, self.bus_address, kind],
                        user=lmtest.UNPRIVILEGED)
        self.assertEqual(r.returncode, 0, r)
        return json.loads(r.out.splitlines()[-1])

    def big_call_with_reads(self, kind):
        """The big call while another connection reads a property; returns
        the call's result and the reads as (sent, answered)."""
        reader = subprocess.Popen(
            ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
             "/usr/bin/python3", "-c", READER, self.bus_address],
            env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.procs.append(reader)
        self.assertEqual(reader.stdout.readline().strip(), "ready")
        result = self.big_call(kind)
        out, _ = reader.communicate("", timeout=60)
        return result, json.loads(out)

    def worst_read(self, result, reads):
        """The slowest property read issued while the big call was in
        flight, as the daemon's own share: less the time the bus itself
        stalled meanwhile (dbus-daemon checks a whole message before it
        passes it on, and answered nobody then), and, for a read the bus
        queued behind the big message on the daemon's socket, counted from
        when the daemon had discarded those bytes (its log). Returns that,
        the raw worst and the bus's own worst."""
        daemon = [r for r in reads["daemon"] if r[1] >= result["t0"] and r[0] <= result["t1"]]
        # Too few to judge (the reader was starved of the CPU meanwhile):
        # the caller measures again.
        if len(daemon) < 5:
            return None
        discarded = log_times(self.daemon_log(), r"Refused a \d+-byte call")
        self.assertTrue(discarded, "the daemon did not log the refusal:\n" + self.daemon_log())
        end = max(t for t in discarded if t <= result["t1"] + 1)
        worst = 0.0
        for sent, answered in daemon:
            # GLib's log has millisecond times: allow that much.
            start = max(sent, end + 0.001) if sent <= end + 0.001 <= answered else sent
            stall = max([min(a, answered) - max(s, start) for s, a in reads["bus"]
                         if a > start and s < answered] + [0.0])
            worst = max(worst, answered - start - stall)
        raw = max(a - s for s, a in daemon)
        bus = max([a - s for s, a in reads["bus"] if a >= result["t0"] and s <= result["t1"]]
                  + [0.0])
        return worst, raw, bus

    def assert_prompt_call(self, kind, expected="at most 2097152 bytes"):
        """The big call, refused; every read meanwhile within 50 ms (150 under ASan) of the
        daemon's time. A machine busy with other work can stall any process
        for that long: the measurement is taken up to three times."""
        # The bound is the --werror build's; AddressSanitizer makes the
        # daemon's parse of the refused call several times slower.
        bound = 0.050 if os.environ.get("LM_SANITIZED", "0") == "0" else 0.150
        for attempt in range(3):
            result, reads = self.big_call_with_reads(kind)
            self.assertEqual(result["error"], "org.laptopmode.LaptopMode1.Error.InvalidArgs",
                             result)
            self.assertIn(expected, result["message"])
            self.assertNotIn("\x01", result["message"])
            measured = self.worst_read(result, reads)
            if measured is None:
                print("# retry %d: only %d reads overlapped the %.0f ms call" % (
                    attempt + 1, len([r for r in reads["daemon"] if r[1] >= result["t0"]
                                      and r[0] <= result["t1"]]),
                    (result["t1"] - result["t0"]) * 1e3))
                worst = None
                continue
            worst, raw, bus = measured
            print("%s: call %.0f ms, worst read %.1f ms (%.1f ms with the bus's transfer; the "
                  "bus's own worst %.1f ms)" % (kind, (result["t1"] - result["t0"]) * 1e3,
                                                worst * 1e3, raw * 1e3, bus * 1e3))
            if worst < bound:
                return
        if worst is None:
            self.fail("in 3 attempts too few property reads overlapped the call to judge it")
        self.fail("a property read took %.0f ms of the daemon's during the call (bound %.0f ms)"
                  % (worst * 1e3, bound * 1e3))

    def assert_memory_flat(self):
        after = rss_kib(self.daemon.pid)
        print("VmRSS %d -> %d KiB" % (self.rss_before, after))
        if daemon_has_asan(self.daemon.pid):
            # AddressSanitizer keeps freed memory in quarantine by design
            # (up to 256 MiB), so RSS says nothing there; the --werror
            # build of the same suite judges it.
            print("VmRSS not judged: the daemon runs under AddressSanitizer")
            return
        self.assertLess(after, self.rss_before * 1.10,
                        "VmRSS grew from %d to %d KiB" % (self.rss_before, after))

    def test_30_mib_string(self):
        self.assert_prompt_call("string30")
        self.assert_memory_flat()

    def test_million_entries(self):
        self.assert_prompt_call("list1m")
        self.assert_memory_flat()

    def test_many_small_values(self):
        self.assert_prompt_call("bools", "holds more than 8192 values")
        self.assert_memory_flat()

    def test_bounds_within_a_message(self):
        """Calls small enough to be read are refused by the bound they
        break, named, with at most 64 bytes of the value quoted and escaped,
        before polkit (nobody would get AccessDenied from it)."""
        cases = {
            "list257": "NoRemount lists at most 256 entries, not 257",
            "path4096": "NoRemount entry 1 is 4096 bytes long; an entry is at most 4095 bytes",
            "mode1m": "Mode is 1048576 bytes long; it is at most 64 bytes",
            "disks65": "DiskSettings lists at most 64 disks, not 65",
            "keys33": "Configure takes at most 32 settings in one call, not 33",
        }
        for kind, expected in cases.items():
            result = self.big_call(kind)
            self.assertEqual(result["error"], "org.laptopmode.LaptopMode1.Error.InvalidArgs",
                             (kind, result))
            self.assertIn(expected, result["message"], kind)
            self.assertFalse(re.search(r"[\x00-\x1f\x7f]", result["message"]), result)
            self.assertLess(len(result["message"]), 400, result)
        self.assertEqual(self.daemon.poll(), None)

    def test_bad_mode_quoted_short(self):
        r = self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "SetMode", "s",
                        "\x1b]0;x\x07" + "z" * 5000, user=lmtest.UNPRIVILEGED)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Mode must be", r.err)
        self.assertIn("\\x1b]0;x\\x07", r.err)
        self.assertNotIn("\x1b", r.err)
        self.assertLess(len(r.err), 300, r.err)


@needs_root
class TrustNothingReadBackTest(DaemonTestCase):
    """Issue 24: recovery writes back only what the daemon itself writes,
    from a state directory and file only it could have written."""

    def test_state_naming_core_pattern_is_refused(self):
        self.root.write("/proc/sys/kernel/core_pattern", "core\n")
        original = self.root.vm()
        os.makedirs(self.state_dir, exist_ok=True)
        path = os.path.join(self.state_dir, "state")
        with open(path, "w") as f:
            f.write("[Tunables]\n../kernel/core_pattern=|/tmp/evil %%p\ndirty_ratio=%s\n"
                    % original["dirty_ratio"])
        os.chmod(path, 0o600)
        self.root.write("/proc/sys/vm/dirty_ratio", "60\n")
        self.start_daemon()
        self.assertEqual(self.root.read("/proc/sys/kernel/core_pattern").strip(), "core")
        # The real tunable beside it is restored.
        self.wait_until(lambda: self.root.vm() == original, message="dirty_ratio restored")
        log = self.this_daemon_log()
        self.assertIn("Refusing the saved tunable \u201c../kernel/core_pattern\u201d", log)
        self.assertFalse(os.path.exists(path), log)

    def test_state_directory_writable_by_others_is_refused(self):
        os.makedirs(self.state_dir, exist_ok=True)
        os.chmod(self.state_dir, 0o777)
        self.start_daemon(wait=False)
        rc = self.daemon.wait(timeout=20)
        self.assertNotEqual(rc, 0)
        log = self.this_daemon_log()
        self.assertIn("Refusing directory %s" % self.state_dir, log)
        self.assertIn("0777", log)

    def test_state_file_symlink_is_refused(self):
        os.makedirs(self.state_dir, exist_ok=True)
        decoy = os.path.join(self.tmp, "decoy")
        with open(decoy, "w") as f:
            f.write("[Tunables]\ndirty_ratio=7\n")
        os.symlink(decoy, os.path.join(self.state_dir, "state"))
        original = self.root.vm()
        self.start_daemon()
        self.assertIn("symbolic link", self.this_daemon_log())
        self.assertEqual(self.root.vm(), original)

    def test_forged_name_stays_on_its_line(self):
        # A device's model string is the device's to choose (a USB stick's
        # firmware), and here its name has a newline (a fake root's sysfs):
        # the --verbose log keeps both on the daemon's own line, escaped
        # (lm-log.c).
        r = self.root
        base = "/sys/block/sd\nFORGED name"
        os.makedirs(r.file(base + "/queue"))
        os.makedirs(r.file(base + "/device"))
        r.write(base + "/size", "1953525168\n")
        r.write(base + "/removable", "1\n")
        r.write(base + "/queue/rotational", "1\n")
        r.write(base + "/queue/read_ahead_kb", "128\n")
        r.write(base + "/stat", "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")
        r.write(base + "/device/model", "ab\nFORGED line \x1b[31mred\n")
        self.start_daemon()
        self.wait_until(lambda: "FORGED" in self.this_daemon_log(), message="the disk logged")
        log = self.this_daemon_log()
        for line in log.splitlines():
            self.assertFalse(line.startswith("FORGED"), log)
            self.assertNotIn("\x1b", line)
        self.assertIn("ab FORGED line \\x1b[31mred", log)
        self.assertIn("Disk sd\\x0aFORGED name", log)

@needs_root
class BusLossTest(DaemonTestCase):
    def test_bus_gone_restores_and_fails(self):
        self.start_daemon()
        original = self.root.vm()
        self.ctl_run("start", check=True)
        self.assertEqual(self.root.vm()["dirty_expire_centisecs"], "60000")
        self.bus_proc.kill()
        self.bus_proc.wait()
        rc = self.daemon.wait(timeout=20)
        # 1, not a signal: the name-lost callback after the bus died got a
        # NULL connection, and a GLib critical (fatal in tests) killed it.
        self.assertEqual(rc, 1, "a lost bus must be a failure, for Restart=on-failure, and "
                         "an exit: %s" % self.daemon_log()[-2000:])
        self.assertNotIn("CRITICAL", self.daemon_log())
        self.assertEqual(self.root.vm(), original, self.daemon_log())
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))
        self.assertIn("Lost the bus connection", self.daemon_log())


@needs_root
class HandOverTest(DaemonTestCase):
    def test_replace_exits_0_without_restoring(self):
        self.start_daemon()
        first = self.daemon
        original = self.root.vm()
        self.ctl_run("start", check=True)
        first_log_len = len(self.daemon_log())
        self.start_daemon(["--replace"], wait=False)
        self.assertEqual(first.wait(timeout=20), 0)
        self.wait_for_name()
        log = self.daemon_log()[first_log_len:]
        self.assertIn("Replaced by another laptop-moded", log)
        self.assertNotIn("Restored the original tunables", log)
        # The new owner found the state the old one left, and restored it.
        self.assertIn("The previous run did not restore the system", log)
        self.wait_until(lambda: self.root.vm() == original, message="restored by the new owner")


@needs_root
class PolkitDetailsBoundTest(DaemonTestCase):
    """The largest Configure within the bounds (256 mount points of 4095
    bytes, 1 MiB) goes through, and the polkit rule sees its NoRemount
    detail cut to 256 bytes and an ellipsis."""

    polkit_rules = {"50-details-bound.rules": """polkit.addRule(function (action, subject) {
    if (subject.user == "nobody" && action.id == "org.laptopmode.LaptopMode1.configure") {
        var v = action.lookup("NoRemount");
        if (v && v.length <= 257 && v.charAt(v.length - 1) == "\\u2026")
            return polkit.Result.YES;
        return polkit.Result.NO;
    }
    return polkit.Result.NOT_HANDLED;
});
"""}

    def test_largest_call_allowed_with_short_details(self):
        self.start_daemon()
        r = self.run_as(["/usr/bin/python3", "-c", BIG_CALL, self.bus_address, "max"],
                        user=lmtest.UNPRIVILEGED)
        result = json.loads(r.out.splitlines()[-1])
        self.assertIsNone(result["error"], result)
        no_remount = self.status()["NoRemount"]
        self.assertEqual(len(no_remount), 256)
        self.assertEqual(len(no_remount[255]), 4095)
        self.assertEqual(len(self.status()["DiskSettings"]), 64)


# Takes @n holds on one connection, then either releases them at once
# ("release") or keeps them until stdin closes ("keep").
HOLDER = r"""
import sys
from gi.repository import Gio, GLib
flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
         | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
c = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
n, how = int(sys.argv[2]), sys.argv[3]
cookies = []
for i in range(n):
    try:
        r = c.call_sync("org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                        "org.laptopmode.LaptopMode1", "Inhibit",
                        GLib.Variant("(ss)", ("holder", "test %d" % i)), GLib.VariantType("(u)"),
                        0, -1, None)
        cookies.append(r.unpack()[0])
        print("cookie", flush=True)
    except GLib.Error as e:
        print("error", e.message, flush=True)
if how == "release":
    for cookie in cookies:
        c.call_sync("org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                    "org.laptopmode.LaptopMode1", "Release", GLib.Variant("(u)", (cookie,)),
                    None, 0, -1, None)
print("ready", flush=True)
if how == "keep":
    sys.stdin.read()
"""

# Takes and releases a hold on one connection, without pause, forever.
CHURN = r"""
import sys
from gi.repository import Gio, GLib
flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
         | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
c = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
while True:
    r = c.call_sync("org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                    "org.laptopmode.LaptopMode1", "Inhibit", GLib.Variant("(ss)", ("churn", "x")),
                    GLib.VariantType("(u)"), 0, -1, None)
    c.call_sync("org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                "org.laptopmode.LaptopMode1", "Release", GLib.Variant("(u)", r.unpack()), None, 0,
                -1, None)
"""


# nobody stands for a user whom a rule lets hold (an active session's user
# needs none; one outside a session must authenticate by default).
HOLD_RULE = """polkit.addRule(function (action, subject) {
    if (subject.user == "nobody" && action.id == "org.laptopmode.LaptopMode1.inhibit")
        return polkit.Result.YES;
    return polkit.Result.NOT_HANDLED;
});
"""


@needs_root
class HoldSettleTest(DaemonTestCase):
    config_text = "[LaptopMode]\nMode=on\n"
    polkit_rules = {"50-hold.rules": HOLD_RULE}

    def setUp(self):
        super().setUp()
        self.start_daemon()
        self.wait_until(lambda: self.status()["Active"], message="laptop mode on")

    def holder(self, n, how, user=lmtest.UNPRIVILEGED):
        argv = ["/usr/bin/python3", "-c", HOLDER, self.bus_address, str(n), how]
        if user != "root":
            argv = ["setpriv", "--reuid=%s" % user, "--regid=nogroup", "--clear-groups", "--"] + argv
        p = subprocess.Popen(argv, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
        self.procs.append(p)
        self.addCleanup(p.stdout.close)
        lines = []
        for line in p.stdout:
            lines.append(line.strip())
            if line.startswith("ready"):
                break
        return p, lines

    def offs(self):
        return self.daemon_log().count("Laptop mode off (")

    def test_short_hold_changes_nothing(self):
        applied = self.root.vm()
        for how in ("release", "exit"):
            p, lines = self.holder(1, how)
            self.assertEqual(lines[0], "cookie", lines)
            p.stdin.close()
            p.wait(timeout=20)
        # The Inhibitors property shows holds at once; it is empty again.
        self.wait_until(lambda: self.status()["Inhibitors"] == [], message="holds gone")
        # Past the settle time (1 s) and then some: nothing was switched.
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            st = self.status()
            self.assertEqual((st["Active"], st["Reason"]), (True, "manual"))
            time.sleep(0.2)
        self.assertEqual(self.offs(), 0, self.daemon_log())
        self.assertEqual(self.root.vm(), applied)

    def test_long_hold_takes_effect(self):
        p, lines = self.holder(1, "keep")
        t0 = time.monotonic()
        self.wait_until(lambda: self.status()["Reason"] == "inhibited", timeout=10,
                        message="the hold in effect")
        self.assertGreaterEqual(time.monotonic() - t0, 0.9, "a hold counts after the settle time")
        self.assertFalse(self.status()["Active"])
        p.stdin.close()
        p.wait(timeout=20)
        self.wait_until(lambda: self.status()["Active"], timeout=10, message="on again")
        self.assertEqual(self.offs(), 1)

    def test_churn_cannot_postpone_a_hold(self):
        """Holds taken and dropped without pause by one user do not keep
        another's hold from counting."""
        churn = subprocess.Popen(
            ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
             "/usr/bin/python3", "-c", CHURN, self.bus_address],
            env=self.env, stdout=subprocess.DEVNULL)
        self.procs.append(churn)
        time.sleep(0.5)  # let the churn start: it is the background, not a synchronisation
        p, lines = self.holder(1, "keep", user="root")
        self.wait_until(lambda: self.status()["Reason"] == "inhibited", timeout=15,
                        message="the hold in effect despite the churn")
        churn.kill()
        churn.wait()
        p.stdin.close()

    def test_per_uid_cap(self):
        holders = []
        got = 0
        for i in range(5):
            p, lines = self.holder(16, "keep")
            holders.append(p)
            got += lines.count("cookie")
            errors = [l for l in lines if l.startswith("error")]
            if i < 4:
                self.assertEqual(errors, [])
        self.assertEqual(got, 64)
        self.assertEqual(len(errors), 16)
        self.assertIn("one user may hold at most 64", errors[0])
        # Another user still can.
        p, lines = self.holder(1, "keep", user="root")
        self.assertEqual(lines[0], "cookie", lines)
        self.assertEqual(len(self.status()["Inhibitors"]), 65)
        for h in holders + [p]:
            h.stdin.close()
            h.wait(timeout=20)


if __name__ == "__main__":
    lmtest.main()
