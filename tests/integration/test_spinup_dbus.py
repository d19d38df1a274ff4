#!/usr/bin/python3
"""Tier 2: SpinUp subscriptions on a private bus, with the block_dump
backend reading a fake /dev/kmsg (a FIFO in the fake root) that the test
writes kernel log records into: who may subscribe, that signals reach only
subscribers, that a subscriber leaving stops monitoring, and that
vm.block_dump is restored, also after a crash.
"""

import json
import os
import pwd
import signal
import subprocess
import time
import unittest
import uuid

import lmpolkit
import lmtest
from lmtest import DaemonTestCase

EAVESDROPPER = r'''
import sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
try:
    bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                  "org.freedesktop.DBus.Monitoring", "BecomeMonitor",
                  GLib.Variant("(asu)", (["type='signal'"], 0)), None, 0, -1, None)
    print("became-monitor", flush=True)
except GLib.Error as e:
    print("monitor-denied", flush=True)
for rule in ("eavesdrop=true,type='signal',member='SpinUp'", "type='signal',member='SpinUp'",
             # The positive control: an ordinary broadcast it must see.
             "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"):
    try:
        bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                      "AddMatch", GLib.Variant("(s)", (rule,)), None, 0, -1, None)
    except GLib.Error as e:
        print("addmatch-failed", e.message, flush=True)
def on_message(conn, msg, incoming):
    if msg.get_member() == "SpinUp":
        print("GOT", msg.get_destination(), flush=True)
    elif msg.get_member() == "PropertiesChanged":
        print("BROADCAST", msg.get_sender(), msg.get_body().unpack()[0], flush=True)
    return msg
bus.add_filter(on_message)
print("ready", flush=True)
GLib.MainLoop().run()
'''


# What a caller without the monitor right is told when it did not allow
# interactive authorization (lm-auth.c: deny()).
DENIED_MONITOR = ("Not authorized to %s: polkit action org.laptopmode.LaptopMode1.monitor needs "
                  "authentication, and the call did not allow interactive authorization (run it "
                  "from a terminal to be asked for a password)")


def kmsg_line(seq, usec, text, level=7):
    return "%d,%d,%d,-;%s\n" % (level, seq, usec, text)


# Kept here too: other test files import it from this one.
LineReader = lmtest.LineReader


class SpinUpBusTest(DaemonTestCase):
    attribution = "block_dump"
    history = "false"

    def setUp(self):
        self.config_text = ("[LaptopMode]\nAttribution=%s\nSpinUpIdle=1\nSpinUpHistory=%s\n"
                            % (self.attribution, self.history))
        super().setUp()
        r = self.root
        r.write("/proc/sys/vm/block_dump", "0\n")
        os.makedirs(r.file("/dev"))
        os.mkfifo(r.file("/dev/kmsg"), 0o600)
        # sysfs as the kernel lays it out: sda1 is a partition of sda.
        os.makedirs(r.file("/sys/devices/virtual/block/sda/sda1"))
        r.write("/sys/devices/virtual/block/sda/sda1/partition", "1\n")
        os.makedirs(r.file("/sys/class/block"))
        os.symlink("../../devices/virtual/block/sda", r.file("/sys/class/block/sda"))
        os.symlink("../../devices/virtual/block/sda/sda1", r.file("/sys/class/block/sda1"))
        self.seq = 0

    def block_dump(self):
        return self.root.read("/proc/sys/vm/block_dump")

    def kmsg(self, *records):
        """Write whole kernel log records into the fake /dev/kmsg; each
        record is (offset in seconds from now, message[, level])."""
        now = int(time.monotonic() * 1e6)
        fd = os.open(self.root.file("/dev/kmsg"), os.O_WRONLY | os.O_NONBLOCK)
        try:
            for rec in records:
                self.seq += 1
                level = rec[2] if len(rec) > 2 else 7
                os.write(fd, kmsg_line(self.seq, now + int(rec[0] * 1e6), rec[1], level).encode())
        finally:
            os.close(fd)

    def watch(self, user=None, json_lines=True):
        argv = [self.ctl, "watch"] + (["--json"] if json_lines else [])
        if user not in (None, "root"):
            pw = pwd.getpwnam(user)
            # The user's groups, as after a login: polkitd 126 judges
            # isInGroup() by the caller's own groups (from the bus), not by
            # the user database as polkitd 122 does.
            argv = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
                    "--init-groups", "--"] + argv
        p = subprocess.Popen(argv, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True)
        self.procs.append(p)
        self.addCleanup(lmtest.close_child, p)
        banner = p.stderr.readline()
        return p, banner, LineReader(p.stdout)

    def subscribed_watch(self):
        p, banner, lines = self.watch()
        self.assertIn("Watching spin-ups", banner, "watch did not subscribe: %r %s"
                      % (banner, self.daemon_log()))
        return p, lines


@unittest.skipUnless(lmtest.is_root(), "the tests switch to another user and need root")
class SubscriptionTest(SpinUpBusTest):

    def test_spinups_reach_subscriber_attributed(self):
        self.start_daemon()
        self.assertEqual(self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH,
                                     lmtest.IFACE, "Attribution", check=True).out.strip(),
                         's "block_dump"')
        # Nobody listens: no monitoring, block_dump untouched.
        self.assertEqual(self.block_dump(), "0")
        w, lines = self.subscribed_watch()
        self.assertEqual(self.block_dump(), "1")

        self.kmsg((5.0, "cat(4242): READ block 8 on sda1 (8 sectors)"),
                  (5.1, "cat(4242): READ block 16 on sda1"),
                  (5.2, "dd(4343): dirtied inode 12 (out.bin) on sda1"),
                  (5.3, "dd(4343): dirtied inode 3 (x) on proc"),
                  (9.0, "kworker/u8:1(99): WRITE block 100 on sda1 (8 sectors)"),
                  (9.2, "jbd2/sda1-8(98): WRITE block 200 on sda1 (8 sectors)"),
                  # Forged by a user process (facility LOG_USER), and garbage.
                  (20.0, "evil(1): READ block 1 on sda", 13),
                  (20.0, "garbage((( on on on"),
                  # A marker that closes the batch: records are read in
                  # order, so what came before it is all the batch gave.
                  (40.0, "marker(7): READ block 1 on sda1"))
        batch = lines.until(lambda x: json.loads(x)["Comm"] == "marker", 20)
        self.assertIsNotNone(batch, "the marker spin-up never came:\n" + self.daemon_log())
        got = [json.loads(line) for line in batch[:-1]]
        self.assertEqual(len(got), 2, got)
        cat, dd = got
        self.assertEqual((cat["Comm"], cat["Pid"], cat["Disk"], cat["Operation"], cat["Via"]),
                         ("cat", 4242, "sda", "read", "direct"))
        self.assertEqual(cat["Backend"], "block_dump")
        self.assertEqual((dd["Comm"], dd["Pid"], dd["Operation"], dd["Via"]),
                         ("dd", 4343, "write", "writeback"))
        self.assertEqual((dd["SubmitterComm"], dd["SubmitterPid"]), ("kworker/u8:1", 99))
        self.assertEqual((dd["Inode"], dd["Path"]), (12, "out.bin"))
        self.assertLess(abs(cat["Time"] / 1e6 - (time.time() + 5)), 5)

        # GetSpinUps over the bus has both, with the fields the signal had.
        r = self.gdbus_call("GetSpinUps", check=True)
        self.assertIn("'Comm': <'cat'>", r.out)
        self.assertIn("'Comm': <'dd'>", r.out)
        # The same two in the history, newest last, with a summary.
        hist = self.ctl_run("spinups", "--json", check=True).out.splitlines()
        self.assertEqual([json.loads(x)["Comm"] for x in hist], ["cat", "dd", "marker"])
        text = self.ctl_run("spinups", check=True).out
        self.assertIn("Spin-ups per process", text)
        self.assertIn("cat[4242]", text)
        self.assertIn("via writeback by kworker/u8:1[99]", text)

        w.terminate()
        w.wait(timeout=10)
        self.wait_until(lambda: self.block_dump() == "0", message="block_dump restored")

    def test_a_configure_keeps_a_subscribers_monitoring(self):
        """A backend that copies every I/O (block_dump, as tracefs) runs
        while anyone reads: a Configure that does not touch attribution (a
        disk's settings, MaxLostWork) leaves it on for the subscriber, and
        spin-ups still reach it."""
        self.start_daemon()
        w, lines = self.subscribed_watch()
        self.assertEqual(self.block_dump(), "1")
        self.ctl_run("set", "MaxLostWork=300", check=True)
        self.ctl_run("set", "DiskSettings={'sda': {'Exclude': <false>}}", check=True)
        self.wait_for_log("Configuration changed")
        time.sleep(0.5)
        self.assertEqual(self.block_dump(), "1", "a Configure stopped the subscriber's monitoring:\n"
                         + self.daemon_log())
        self.assertNotIn("Spin-up monitoring stopped", self.daemon_log())
        self.kmsg((2.0, "after(77): READ block 8 on sda1"))
        got = lines.until(lambda x: json.loads(x)["Comm"] == "after", 20)
        self.assertIsNotNone(got, "no spin-up after the Configure:\n" + self.daemon_log())
        w.terminate()
        w.wait(timeout=10)

    def test_unprivileged_cannot_subscribe_or_eavesdrop(self):
        self.start_daemon()
        user = lmtest.UNPRIVILEGED
        r = self.gdbus_call("Subscribe", user=user)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("AccessDenied", r.err)
        r = self.ctl_run("watch", user=user)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Not authorized", r.err)
        r = self.ctl_run("spinups", user=user)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(self.block_dump(), "0", "a denied Subscribe started monitoring")

        script = os.path.join(self.tmp, "eavesdrop.py")
        with open(script, "w") as f:
            f.write(EAVESDROPPER)
        os.chmod(script, 0o644)
        pw = pwd.getpwnam(user)
        spy = subprocess.Popen(["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
                                "--clear-groups", "--", "/usr/bin/python3", script],
                               env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
        self.procs.append(spy)
        self.addCleanup(lmtest.close_child, spy)
        spy_lines = LineReader(spy.stdout)
        seen = []
        while True:
            line = spy_lines.get(20)
            self.assertIsNotNone(line, "eavesdropper did not start: %r" % seen)
            seen.append(line)
            if line.startswith("ready"):
                break
        self.assertIn("monitor-denied\n", seen)

        w, lines = self.subscribed_watch()
        self.kmsg((5.0, "cat(4242): READ block 8 on sda1"))
        first = lines.get(10)
        self.assertIsNotNone(first, "the root subscriber got no SpinUp:\n" + self.daemon_log())
        self.assertEqual(json.loads(first)["Comm"], "cat")
        # The positive control: the same spy, with the same kind of match,
        # does receive a broadcast sent after the SpinUp (the bus keeps one
        # sender's messages in order), so its silence about SpinUp counts.
        self.ctl_run("start", check=True)
        seen = spy_lines.until(lambda x: x.startswith("BROADCAST") and lmtest.IFACE in x, 20)
        self.assertIsNotNone(seen, "the eavesdropper did not even see PropertiesChanged")
        leaked = [x for x in seen if x.startswith("GOT")]
        self.assertEqual(leaked, [], "an unprivileged eavesdropper saw a SpinUp")

    def test_denied_get_spinups_and_unsubscribe(self):
        self.start_daemon()
        user = lmtest.UNPRIVILEGED
        w, lines = self.subscribed_watch()
        self.kmsg((5.0, "cat(4242): READ block 8 on sda1"))
        self.assertIsNotNone(lines.get(10), "no SpinUp for the root subscriber")
        history = self.call_history()
        self.assertEqual([h["Comm"] for h in history], ["cat"])
        before = self.properties()
        for method in ("GetSpinUps", "Unsubscribe"):
            with self.subTest(method):
                name, message = self.call_error(method, user=user)
                self.assertEqual(name, "org.freedesktop.DBus.Error.AccessDenied")
                self.assertRegex(message, r"^Not authorized to %s: polkit action "
                                 r"org\.laptopmode\.LaptopMode1\.monitor \S" % method)
                self.assertEqual(message, DENIED_MONITOR % method)
                # Nothing changed: monitoring on for root's subscriber, the
                # history kept, the properties as they were.
                self.assertEqual(self.block_dump(), "1")
                self.assertEqual(self.call_history(), history)
                self.assertEqual(self.properties(), before)
        # Root's subscription survived nobody's Unsubscribe: it still gets spin-ups.
        self.kmsg((9.0, "vim(77): READ block 16 on sda1"))
        line = lines.get(10)
        self.assertIsNotNone(line, "root's subscription was dropped by a denied Unsubscribe")
        self.assertEqual(json.loads(line)["Comm"], "vim")

    def call_history(self):
        return [json.loads(x) for x in self.ctl_run("spinups", "--json", check=True).out.splitlines()]

    def test_unsubscribe_stops_monitoring(self):
        """Subscribe and Unsubscribe on one connection: monitoring starts and
        stops with it, while the caller stays on the bus."""
        self.start_daemon()
        code = ("from gi.repository import Gio\n"
                "import sys\n"
                "bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)\n"
                "call = lambda m: bus.call_sync('%s', '%s', '%s', m, None, None, 0, -1, None)\n"
                "call('Subscribe'); print('subscribed', flush=True); sys.stdin.readline()\n"
                "call('Unsubscribe'); print('unsubscribed', flush=True); sys.stdin.readline()\n"
                % (lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE))
        p = subprocess.Popen(["/usr/bin/python3", "-c", code], env=self.env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.procs.append(p)
        self.addCleanup(p.stdin.close)
        self.assertEqual(p.stdout.readline(), "subscribed\n")
        self.assertEqual(self.block_dump(), "1")
        p.stdin.write("\n")
        p.stdin.flush()
        self.assertEqual(p.stdout.readline(), "unsubscribed\n")
        self.assertEqual(self.block_dump(), "0", "Unsubscribe left monitoring on")
        self.assertIsNone(p.poll(), "the caller is still on the bus")
        p.stdin.write("\n")
        p.stdin.flush()
        self.assertEqual(p.wait(timeout=10), 0)

    def test_subscriber_that_exits_is_dropped(self):
        self.start_daemon()
        w, lines = self.subscribed_watch()
        self.assertEqual(self.block_dump(), "1")
        w.send_signal(signal.SIGKILL)
        w.wait(timeout=10)
        self.wait_until(lambda: self.block_dump() == "0", message="monitoring to stop")
        self.assertIn("left the bus", self.daemon_log())
        # A one-shot gdbus call subscribes and leaves at once.
        self.gdbus_call("Subscribe", check=True)
        self.wait_until(lambda: self.block_dump() == "0", message="monitoring to stop again")

    def test_block_dump_restored_after_crash(self):
        self.root.write("/proc/sys/vm/block_dump", "0\n")
        self.start_daemon()
        w, lines = self.subscribed_watch()
        self.assertEqual(self.block_dump(), "1")
        self.stop_daemon(signal.SIGKILL)
        self.assertEqual(self.block_dump(), "1")
        self.start_daemon()
        self.assertEqual(self.block_dump(), "0")

    def test_sigterm_restores_block_dump(self):
        self.start_daemon()
        w, lines = self.subscribed_watch()
        self.assertEqual(self.block_dump(), "1")
        self.assertEqual(self.stop_daemon(signal.SIGTERM), 0)
        self.assertEqual(self.block_dump(), "0")


@unittest.skipUnless(lmtest.is_root(), "the tests switch to another user and need root")
class HistoryTest(SpinUpBusTest):
    history = "true"

    def test_history_without_subscriber(self):
        self.start_daemon()
        self.wait_until(lambda: self.block_dump() == "1", message="monitoring for history")
        self.kmsg((5.0, "vim(77): READ block 8 on sda"))
        self.wait_until(lambda: "vim" in self.ctl_run("spinups").out, message="history")
        self.assertEqual(self.stop_daemon(signal.SIGTERM), 0)
        self.assertEqual(self.block_dump(), "0")


# "viewer" may monitor (its own processes); members of "admins" are also
# granted monitor-all by the project's example rule. "other" only owns
# processes.
MONITOR_RULE = """polkit.addRule(function (action, subject) {
    if (action.id == "org.laptopmode.LaptopMode1.monitor" &&
        (subject.user == "@VIEWER@" || subject.isInGroup("@ADMINS@")))
        return polkit.Result.YES;
    return polkit.Result.NOT_HANDLED;
});
"""


@unittest.skipUnless(lmtest.is_root() and lmpolkit.available() is None,
                     "creates users and runs a real polkitd: needs root")
class PerUserViewTest(SpinUpBusTest):
    """monitor shows a user its own processes in full and everyone else's
    as another user's process (uid only); monitor-all shows everything:
    in SpinUp, GetSpinUps, GetLedger and the CLI."""

    history = "true"

    @classmethod
    def setUpClass(cls):
        tag = uuid.uuid4().hex[:8]
        cls.admins = "lmta" + tag
        subprocess.run(["groupadd", cls.admins], check=True, capture_output=True)
        cls.addClassCleanup(subprocess.run, ["groupdel", cls.admins], capture_output=True)
        cls.users = {}
        for role in ("viewer", "admin", "other"):
            name = "lmv%s%s" % (role[:2], tag)
            argv = ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin",
                    "--no-user-group", "--gid", "nogroup"]
            if role == "admin":
                argv += ["--groups", cls.admins]
            subprocess.run(argv + [name], check=True, capture_output=True)
            cls.addClassCleanup(subprocess.run, ["userdel", name], capture_output=True)
            cls.users[role] = name

    def setUp(self):
        self.polkit_rules = {
            "50-monitor.rules": MONITOR_RULE.replace("@VIEWER@", self.users["viewer"])
                                            .replace("@ADMINS@", self.admins),
            "60-monitor-all.rules": open(os.path.join(lmtest.SRCDIR, "polkit",
                                                      "monitor-all.rules.example"))
                                    .read().replace("@GROUP@", self.admins),
        }
        super().setUp()
        # Whose the processes are: the daemon reads /proc/PID/status, and
        # /proc/PID/stat to know that the task was there when its line was
        # logged (these since boot).
        for pid, role in ((201, "viewer"), (202, "other")):
            self.put_task(pid, self.users[role], 0)
        self.start_daemon()

    def put_task(self, pid, user, start_ticks):
        uid = pwd.getpwnam(user).pw_uid
        os.makedirs(self.root.file("/proc/%d" % pid), exist_ok=True)
        self.root.write("/proc/%d/status" % pid, "Name:\tx\nUid:\t%d\t%d\t%d\t%d\n"
                        % (uid, uid, uid, uid))
        self.root.write("/proc/%d/stat" % pid, "%d (x) S 1 %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
                        "%d 1000 100 18446744073709551615\n" % (pid, pid, pid, start_ticks))

    def test_reused_pid_is_not_the_new_owners(self):
        """block_dump gives a pid and a name; the uid comes from /proc. Here
        another user's program wrote and exited, and its pid now belongs to
        the viewer's process, started after the line: the viewer must see
        another user's process, never the name or path."""
        viewer_uid = pwd.getpwnam(self.users["viewer"]).pw_uid
        _, vbanner, viewer = self.watch(user=self.users["viewer"])
        self.assertIn("Watching spin-ups", vbanner, self.daemon_log())
        _, abanner, admin = self.watch(user=self.users["admin"])
        self.assertIn("Watching spin-ups", abanner, self.daemon_log())
        time.sleep(1.5)  # past SpinUpIdle since the daemon started
        # The viewer's task as pid 203, started 0.2 s ago; the line 0.5 s ago.
        hz = os.sysconf("SC_CLK_TCK")
        self.put_task(203, self.users["viewer"],
                      int((time.clock_gettime(time.CLOCK_BOOTTIME) - 0.2) * hz))
        self.kmsg((-0.5, "secret(203): dirtied inode 12 (diary.txt) on sda1"),
                  (-0.5, "secret(203): READ block 8 on sda1 (8 sectors)"))
        (seen,) = self.spinups(viewer, 1)
        self.assertEqual(seen.get("OtherUser"), True, seen)
        for key in ("Comm", "Pid", "Path", "Thread", "SubmitterComm"):
            self.assertNotIn(key, seen)
        self.assertNotEqual(seen.get("Uid"), viewer_uid)
        (full,) = self.spinups(admin, 1)
        self.assertEqual((full["Comm"], full["Pid"]), ("secret", 203), full)
        self.assertNotEqual(full.get("Uid"), viewer_uid)
        r = self.ctl_run("spinups", "--json", user=self.users["viewer"], check=True)
        self.assertNotIn("secret", r.out)
        self.assertNotIn("diary", r.out)
        # The control: the same pid and line, the task there since boot,
        # is the viewer's own.
        self.put_task(203, self.users["viewer"], 0)
        time.sleep(1.5)
        self.kmsg((0.5, "secret(203): READ block 16 on sda1 (8 sectors)"))
        (own,) = self.spinups(viewer, 1)
        self.assertEqual((own["Comm"], own["Uid"]), ("secret", viewer_uid), own)

    def spinups(self, lines, n):
        got = []
        for _ in range(n):
            line = lines.get(20)
            self.assertIsNotNone(line, "spin-up %d never came:\n%s" % (len(got), self.daemon_log()))
            got.append(json.loads(line))
        return got

    def test_views(self):
        viewer_uid = pwd.getpwnam(self.users["viewer"]).pw_uid
        other_uid = pwd.getpwnam(self.users["other"]).pw_uid
        _, vbanner, viewer = self.watch(user=self.users["viewer"])
        self.assertIn("Watching spin-ups", vbanner, self.daemon_log())
        _, abanner, admin = self.watch(user=self.users["admin"])
        self.assertIn("Watching spin-ups", abanner, self.daemon_log())

        # The other user's program is one the table of causes knows.
        self.kmsg((5.0, "mine(201): READ block 8 on sda1 (8 sectors)"),
                  (10.0, "smartd(202): READ block 16 on sda1"))
        mine, theirs = self.spinups(viewer, 2)
        self.assertEqual((mine["Comm"], mine["Pid"], mine["Uid"]), ("mine", 201, viewer_uid))
        self.assertNotIn("OtherUser", mine)
        # The other user's cat: its uid and the disk, nothing of the process.
        self.assertEqual(theirs["Uid"], other_uid)
        self.assertEqual((theirs["Disk"], theirs["Operation"], theirs["OtherUser"]),
                         ("sda", "read", True))
        for key in ("Comm", "Pid", "Path", "Inode", "Sector", "Thread", "SubmitterPid",
                    "SubmitterComm", "Unit", "Explanation"):
            self.assertNotIn(key, theirs)
        # An unknown program has no explanation.
        self.assertNotIn("Explanation", mine)
        # monitor-all: in full, with the table's explanation (issue 50).
        a_mine, a_theirs = self.spinups(admin, 2)
        self.assertEqual((a_mine["Comm"], a_theirs["Comm"], a_theirs["Pid"]),
                         ("mine", "smartd", 202))
        self.assertNotIn("OtherUser", a_theirs)
        self.assertEqual(a_theirs.get("Explanation"),
                         "smartd checking the disk's health now and then.", a_theirs)
        # The ledger's records too, and as redacted for the viewer.
        full = self.gdbus_call("GetLedger", "0", str(2 ** 63), check=True).out
        self.assertIn("'Explanation': <\"smartd checking the disk's health now and then.\">",
                      full)
        seen = self.gdbus_call("GetLedger", "0", str(2 ** 63), user=self.users["viewer"],
                               check=True).out
        self.assertNotIn("Explanation", seen)

        # The history and the ledger follow the same rule.
        r = self.ctl_run("spinups", "--json", user=self.users["viewer"], check=True)
        hist = [json.loads(x) for x in r.out.splitlines()]
        self.assertEqual([h.get("Comm") for h in hist], ["mine", None])
        r = self.ctl_run("spinups", user=self.users["viewer"], check=True)
        self.assertIn("another user's process uid %d" % other_uid, r.out)
        self.assertNotIn("smartd", r.out)
        r = self.ctl_run("spinups", "--json", user=self.users["admin"], check=True)
        self.assertEqual([json.loads(x)["Comm"] for x in r.out.splitlines()], ["mine", "smartd"])

        def ledger(user):
            r = self.run_as(["gdbus", "call", "--system", "--dest", lmtest.BUS_NAME,
                             "--object-path", lmtest.OBJECT_PATH, "--method",
                             lmtest.IFACE + ".GetLedger", "0", str(2**63 - 1)],
                            user=user, check=True)
            return r.out
        self.wait_until(lambda: "'smartd'" in ledger(self.users["admin"]), timeout=20,
                        message="the spin-ups in the ledger")
        out = ledger(self.users["viewer"])
        self.assertIn("'mine'", out)
        self.assertNotIn("'smartd'", out)
        self.assertIn("'OtherUser': <true>", out)
        # The report reads the same ledger, up to now: the kernel log's
        # time stamps above lie a few seconds ahead.
        while time.time() * 1e6 < theirs["Time"] + 1e6:
            time.sleep(0.2)
        r = self.ctl_run("report", user=self.users["viewer"], check=True)
        self.assertIn("another user's process", r.out)
        self.assertNotRegex(r.out, r"(?m)^\s+smartd\s")
        r = self.ctl_run("report", user=self.users["admin"], check=True)
        self.assertRegex(r.out, r"(?m)^\s+smartd\s")
        # A user with neither gets nothing at all.
        r = self.gdbus_call("GetSpinUps", user=self.users["other"])
        self.assertIn("AccessDenied", r.err)


class NoneTest(SpinUpBusTest):
    attribution = "none"

    def test_subscribe_not_supported(self):
        self.start_daemon()
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                        "Attribution", check=True)
        self.assertEqual(r.out.strip(), 's "none"')
        if not lmtest.is_root():
            self.skipTest("Subscribe needs root until polkit rules are in the tests")
        r = self.ctl_run("watch")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("No spin-up attribution", r.err)


if __name__ == "__main__":
    lmtest.main()
