#!/usr/bin/python3
"""Tier 2: no user slows the daemon down through reads (issue 36).

GetLedger and GetLedgerPage on a full 30-day ledger (made here at the
format's 2 MiB bound, in the fake root's state directory) from 8 loops of
several callers, while another connection reads a property: every read is
answered within 100 ms, and callers past their budget get
Error.LimitExceeded saying whose budget and when to try again. Then 2,000
Subscribe callers from 10 users: 16 per user and 128 in all, the rest
refused with Error.LimitExceeded, and the daemon's own watches still work
(python-dbusmock's UPower restarted, its OnBattery seen). The real daemon,
dbus-daemon with the project's policy (and the system bus's own limit of
match rules) and polkitd."""

import json
import os
import struct
import subprocess
import time
import unittest
import zlib

import lmtest
from test_hardening import READER
from test_ledger import LedgerTest

LIMIT_EXCEEDED = "org.laptopmode.LaptopMode1.Error.LimitExceeded"
LEDGER_MAX_BYTES = 2 * 1024 * 1024
DAY_US = 24 * 3600 * 10**6

# Users a polkit rule lets monitor (monitor and monitor-all); root needs none.
USERS = ["daemon", "bin", "sys", "games", "man", "lp", "mail", "news", "nobody"]
MONITOR_RULE = """
polkit.addRule(function(action, subject) {
    var users = %s;
    if (action.id.indexOf("org.laptopmode.LaptopMode1.monitor") == 0
        && users.indexOf(subject.user) >= 0)
        return polkit.Result.YES;
});
""" % json.dumps(USERS)


def encode(kind, disk, t, end, comm="", path="", pid=0, uid=-1, via=0, ext=b""):
    """One ledger record as service/ledger/lm-ledger-record.c writes it."""
    d, c, p = disk.encode(), comm.encode(), path.encode()
    payload = struct.pack("<BBBBHHqqIqI", kind, via, len(d), len(c), len(p), len(ext), t, end,
                          pid, uid, 0) + ext + d + c + p
    return b"LMr1" + struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


def full_ledger(now_us):
    """30 days of a busy laptop's two disks, up to the 2 MiB bound: spin-ups
    with their blame, the asleep and awake intervals between them and
    activity runs. Returns (bytes, records)."""
    out, n = bytearray(), 0
    step = 60 * 10**6
    t = now_us - 30 * DAY_US + step
    i = 0
    while True:
        disk = "vdc" if i % 3 else "vdb"
        recs = [
            encode(2, disk, t - step, t - 20 * 10**6),  # asleep
            encode(1, disk, t, t, comm="firefox" if i % 2 else "cron", pid=4000 + i % 50,
                   uid=1000 if i % 2 else 0, via=i % 3, path="places.sqlite-wal-%d" % (i % 7)),
            encode(4, disk, t, t + 10**6, ext=struct.pack("<III", 1, 0, 1)),  # activity
            encode(3, disk, t, t + 5 * 10**6),  # awake
        ]
        size = sum(len(r) for r in recs)
        if len(out) + size > LEDGER_MAX_BYTES or t + step >= now_us:
            return bytes(out), n
        for r in recs:
            out += r
        n += len(recs)
        i += 1
        t += (30 * DAY_US) // 9000


# Calls GetLedger and reads every page of GetLedgerPage over and over on
# its own connection until stdin closes; prints what came back: pages,
# records, and each error name with one message.
LOOP = r"""
import json, sys, threading
from gi.repository import Gio, GLib
flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
         | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
c = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
out = {"pages": 0, "records": 0, "full_reads": 0, "errors": {}}
def call(method, args, sig):
    try:
        r = c.call_sync("org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                        "org.laptopmode.LaptopMode1", method, GLib.Variant(sig, args), None, 0,
                        30000, None)
        out["pages"] += 1
        return r.unpack()
    except GLib.Error as e:
        name = Gio.DBusError.get_remote_error(e) or str(e)
        message = e.message.split(name + ": ", 1)[-1]  # without GDBus.Error:NAME
        out["errors"].setdefault(name, [0, message])[0] += 1
        return None
print("ready", flush=True)
while not done.is_set():
    r = call("GetLedger", (0, 2**63 - 1), "(tt)")
    if r is not None:
        out["records"] += len(r[0])
    cursor, n = "", 0
    while not done.is_set():
        r = call("GetLedgerPage", (0, 2**63 - 1, cursor, 1000), "(ttsu)")
        if r is None:
            break
        n += len(r[0])
        cursor = r[1]
        if cursor == "":
            out["full_reads"] += 1
            break
    out["records"] += n
print(json.dumps(out))
"""

# Opens argv[2] connections as one user and calls GetLedgerPage from them in
# turn, as fast as they are answered, until the first refusal or argv[3]
# seconds; with argv[4], then does the same at once from a fresh connection.
# Prints each drain's answered calls, its refusal, when it started and
# ended and when its last call was sent (seconds since the first). The answers are not unpacked: the
# caller's own work would slow the drain.
DRAIN = r"""
import json, sys, time
from gi.repository import Gio, GLib
flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
         | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
t0 = time.monotonic()
def drain(n):
    conns = [Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
             for _ in range(n)]
    out = {"calls": 0, "error": None, "message": "", "started": time.monotonic() - t0}
    while time.monotonic() - t0 < float(sys.argv[3]):
        out["sent"] = time.monotonic() - t0  # the last call's, the refused one at the end
        try:
            conns[out["calls"] % n].call_sync(
                "org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                "org.laptopmode.LaptopMode1", "GetLedgerPage",
                GLib.Variant("(ttsu)", (0, 2**63 - 1, "", 1000)), None, 0, 30000, None)
            out["calls"] += 1
        except GLib.Error as e:
            out["error"] = Gio.DBusError.get_remote_error(e) or str(e)
            out["message"] = e.message.split(out["error"] + ": ", 1)[-1]
            break
    out["ended"] = time.monotonic() - t0
    return out
results = [drain(int(sys.argv[2]))]
if len(sys.argv) > 4:
    results.append(drain(1))
print(json.dumps(results))
"""
BUDGET_MESSAGE = r"used up by this (user|connection): \d+ every 60 s; try again in \d+ s"

# The control: what the machine itself does to a program at the daemon's
# priority. Sleeps 10 ms over and over until stdin closes and prints each
# wake-up's lateness ([wall-clock time, seconds late], JSON): on a loaded
# machine (a soak beside stress-ng) the daemon waits that long for a core
# too, whatever it does.
CONTROL = r"""
import json, sys, threading, time
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
late = []
print("ready", flush=True)
while not done.is_set():
    t = time.monotonic()
    time.sleep(0.01)
    late.append((time.time(), time.monotonic() - t - 0.01))
print(json.dumps(late))
"""


@unittest.skipUnless(lmtest.is_root(), "real polkitd and setpriv need root")
class LedgerLoadTest(LedgerTest):
    """8 loops of GetLedger and GetLedgerPage on a full ledger."""

    mode = "off"
    polkit_rules = {"50-monitor.rules": MONITOR_RULE}

    def setUp(self):
        super().setUp()
        self.now_us = int(time.time() * 1e6)
        data, self.n_records = full_ledger(self.now_us)
        with open(self.ledger, "wb") as f:
            f.write(data)
        self.ledger_bytes = len(data)

    def start_loop(self, user):
        argv = ["/usr/bin/python3", "-c", LOOP, self.bus_address]
        if user != "root":
            argv = ["setpriv", "--reuid=" + user, "--regid=nogroup", "--clear-groups", "--"] + argv
        p = subprocess.Popen(argv, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
        self.procs.append(p)
        self.assertEqual(p.stdout.readline().strip(), "ready")
        return p

    def test_property_answers_under_eight_loops(self):
        self.start()
        self.assertGreater(self.ledger_bytes, LEDGER_MAX_BYTES - 1024)
        self.assertIn("Ledger %s: %d records, 0 bytes skipped" % (self.ledger, self.n_records),
                      self.daemon_log())
        print("ledger: %d bytes, %d records over 30 days" % (self.ledger_bytes, self.n_records))

        # The reader is the instrument: at nice -10, so that what it times
        # is the daemon's answer, not its own turn for the CPU among eight
        # busy loops (Python's threads also wait for each other's GIL).
        reader = subprocess.Popen(
            ["nice", "-n", "-10", "setpriv", "--reuid=nobody", "--regid=nogroup",
             "--clear-groups", "--", "/usr/bin/python3", "-c", READER, self.bus_address],
            env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.procs.append(reader)
        self.assertEqual(reader.stdout.readline().strip(), "ready")
        control = subprocess.Popen(["/usr/bin/python3", "-c", CONTROL], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)
        self.procs.append(control)
        self.assertEqual(control.stdout.readline().strip(), "ready")
        # Four callers as root (one user: one budget shared), two each as
        # two users the rule lets monitor.
        users = ["root"] * 4 + ["nobody", "nobody", "daemon", "daemon"]
        loops = [self.start_loop(u) for u in users]
        t0 = time.time()
        time.sleep(30)
        results = []
        for p in loops:
            out, _ = p.communicate("", timeout=60)
            results.append(json.loads(out.strip().splitlines()[-1]))
        t1 = time.time()
        out, _ = reader.communicate("", timeout=60)
        reads = json.loads(out)
        out, _ = control.communicate("", timeout=60)
        machine = max([late for when, late in json.loads(out) if t0 <= when <= t1] + [0.0])

        daemon = [(s, a) for s, a in reads["daemon"] if s >= t0 and a <= t1]
        self.assertGreater(len(daemon), 100, "too few property reads during the loops")
        raw = max(a - s for s, a in daemon)
        bus = max([a - s for s, a in reads["bus"] if s >= t0 and a <= t1] + [0.0])
        # The daemon's own share of each read, as test_hardening counts it:
        # less the time the bus itself did not answer anyone meanwhile (it
        # carries the pages; on a loaded machine it stalls on its own).
        worst = 0.0
        for sent, answered in daemon:
            stall = max([min(a, answered) - max(s, sent) for s, a in reads["bus"]
                         if a > sent and s < answered] + [0.0])
            worst = max(worst, answered - sent - stall)
        lats = sorted(a - s for s, a in daemon)
        print("property reads: median %.1f ms, 99th percentile %.1f ms, the 5 slowest %s"
              % (lats[len(lats) // 2] * 1e3, lats[int(len(lats) * 0.99)] * 1e3,
                 ", ".join("%.0f ms" % (x * 1e3) for x in lats[-5:])))
        pages = sum(r["pages"] for r in results)
        records = sum(r["records"] for r in results)
        errors = {}
        for r in results:
            for name, (count, message) in r["errors"].items():
                errors.setdefault(name, [0, set()])
                errors[name][0] += count
                errors[name][1].add(message.split(": ")[0] if "try again" not in message
                                    else message.split(" s;")[0].rsplit(" ", 1)[0])
        print("%d property reads in %.0f s, worst %.1f ms of the daemon's (%.1f ms with the "
              "bus's; the bus's own worst %.1f ms); %d pages, %d records, %d full reads; "
              "errors %r"
              % (len(daemon), t1 - t0, worst * 1e3, raw * 1e3, bus * 1e3, pages, records,
                 sum(r["full_reads"] for r in results),
                 {k: v[0] for k, v in errors.items()}))
        for r in results:
            print("  loop: %r" % r)
        # The bound is the --werror build's; AddressSanitizer alone makes the
        # daemon several times slower (the ASan build: 450 ms once, beside
        # the real-kernel suite), so there it only shows no stall of seconds.
        # Beyond it, what the machine made the control wait, twice: a reply
        # waits for a core in the daemon and again in the bus (in the Debian
        # 13 root during soaks beside stress-ng: 161 ms against 100, then
        # 186 ms with the control 83 ms late). A main loop held by ledger
        # work is the daemon's own and shows on top.
        bound = 0.100 if os.environ.get("LM_SANITIZED", "0") == "0" else 1.0
        print("the control's worst wake-up: %.1f ms late" % (machine * 1e3))
        machine *= 2
        self.assertLess(worst, bound + machine,
                        "a property read took %.0f ms under the loops (bound %.0f ms and the "
                        "machine's own %.0f ms)" % (worst * 1e3, bound * 1e3, machine * 1e3))
        # Every caller was answered along (none starved), until its budget ran out.
        for user, r in zip(users, results):
            self.assertGreaterEqual(r["pages"], 5, "%s was hardly answered: %r" % (user, r))
        # Refusals, if any, are budget refusals that say whose and when to
        # come back. Whether the loops reach a budget in 30 s depends on the
        # machine's speed (the ASan build on a slow one did not); the
        # refusals themselves are shown by test_budget_says_whose_and_when.
        self.assertLessEqual(set(errors), {LIMIT_EXCEEDED}, errors)
        for m in [m for r in results for n, (c, m) in r["errors"].items()]:
            self.assertRegex(m, BUDGET_MESSAGE)
        # The daemon did not re-read the file: a page is served from memory.
        self.assertEqual(self.daemon_log().count("records, 0 bytes skipped"), 1)

    def drain(self, user, connections, then_fresh=False):
        argv = ["setpriv", "--reuid=" + user, "--regid=nogroup", "--clear-groups", "--",
                "/usr/bin/python3", "-c", DRAIN, self.bus_address, str(connections), "120"]
        out = subprocess.run(argv + (["fresh"] if then_fresh else []), env=self.env,
                             stdout=subprocess.PIPE, text=True, timeout=180, check=True).stdout
        results = json.loads(out.strip().splitlines()[-1])
        for r in results:
            print("%s, %d connection(s): %d pages answered in %.1f s, then %s: %s"
                  % (user, connections, r["calls"], r["ended"] - r["started"], r["error"],
                     r["message"]))
            connections = 1
        return results

    def assert_drained(self, r, whose, capacity, refill_s):
        """Refused with @whose budget of @capacity used up: what was
        answered is at least that, and at most that and what refilled
        meanwhile and the one call let through with a little left (the
        bound follows the machine's speed: a slow drain is refilled more)."""
        page = 260  # a page is 250 records, and a call costs 10 more
        self.assertEqual(r["error"], LIMIT_EXCEEDED, r)
        self.assertRegex(r["message"], "^GetLedger's budget of records used up by this %s: "
                                       "%d every 60 s; try again in \\d+ s" % (whose, capacity))
        self.assertGreaterEqual(r["calls"] * page, capacity, r)
        refilled = capacity * (r["ended"] - r["started"]) / refill_s
        self.assertLessEqual(r["calls"] * page, capacity + refilled + page, r)
        # Refused with less than one call's cost owed: back within a second
        # (a budget refills 750 or 1,000 records a second).
        self.assertRegex(r["message"], "try again in 1 s$")

    def test_budget_says_whose_and_when(self):
        """Callers read pages as fast as they are answered: one connection
        is refused when its own budget is used up, two connections of one
        user when the user's is, each saying whose budget and when to try
        again; a fresh connection of that user is then refused by the
        user's budget, and another user is answered."""
        self.start()
        # One connection: its budget (45,000) runs out before the user's
        # (60,000; both refill over 60 s).
        self.assert_drained(self.drain("bin", 1)[0], "connection", 45000, 60)
        # Two connections of one user: each spends half, so the user's
        # budget runs out first, at any speed.
        first, fresh = self.drain("daemon", 2, then_fresh=True)
        self.assert_drained(first, "user", 60000, 60)
        # A fresh connection, its own budget whole, gets only what the
        # user's refilled since the refusal (made after its call was sent).
        self.assertEqual(fresh["error"], LIMIT_EXCEEDED, fresh)
        self.assertRegex(fresh["message"], "used up by this user: 60000 every 60 s; "
                                           "try again in 1 s$")
        refilled = 60000 * (fresh["ended"] - first["sent"]) / 60
        self.assertLessEqual(fresh["calls"] * 260, refilled + 260, (first, fresh))
        # Another user has a whole budget of its own.
        self.assert_drained(self.drain("nobody", 1)[0], "connection", 45000, 60)

    def test_bounds_refused_before_polkit(self):
        """limit 0, over 1000, a bogus and an oversized cursor: InvalidArgs,
        even for a user without the monitor right (before polkit)."""
        self.start()
        def args(since, until, cursor, limit):
            return "(uint64 %d, uint64 %d, %s, uint32 %d)" % (since, until, json.dumps(cursor),
                                                              limit)
        cases = [(0, 100, "", 0, "limit: 1 to 1000 records, not 0"),
                 (0, 100, "", 1001, "limit: 1 to 1000 records, not 1001"),
                 (0, 100, "", 2**32 - 1, "limit: 1 to 1000 records, not 4294967295"),
                 (0, 100, "deadbeef.12", 10, "cursor: stale"),
                 (0, 100, "bogus", 10, "is not a cursor GetLedgerPage returned"),
                 (0, 100, "9" * 65, 10, "cursor: at most 64 bytes")]
        for user in ("root", "www-data"):
            for since, until, cursor, limit, text in cases:
                err = self.call_error("GetLedgerPage", args(since, until, cursor, limit),
                                      user=user)
                self.assertIsNotNone(err, (user, cursor, limit))
                self.assertEqual(err[0], "org.laptopmode.LaptopMode1.Error.InvalidArgs",
                                 (user, err))
                self.assertIn(text, err[1])
        # Within the bounds, a user without the right is refused by polkit;
        # root reads a page and the cursor of the next.
        err = self.call_error("GetLedgerPage", args(0, 2**63 - 1, "", 10), user="www-data")
        self.assertEqual(err[0], "org.freedesktop.DBus.Error.AccessDenied", err)
        self.assertIsNone(self.call_error("GetLedgerPage", args(0, 2**63 - 1, "", 10)))



# Opens N connections and calls Subscribe on each, at most 4 in flight (a
# Busy answer, too many checks waiting for polkit, is asked again); prints
# the count of each answer with one message, then keeps the connections
# until stdin closes.
SUBSCRIBERS = r"""
import json, sys, threading
from gi.repository import Gio, GLib
flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
         | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
n = int(sys.argv[2])
conns = [Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None) for _ in range(n)]
loop = GLib.MainLoop()
out, todo, left = {}, list(range(n)), [n]
def ask(i):
    conns[i].call("org.laptopmode.LaptopMode1", "/org/laptopmode/LaptopMode1",
                  "org.laptopmode.LaptopMode1", "Subscribe", None, None, 0, 60000, None, done, i)
def done(conn, res, i):
    try:
        conn.call_finish(res)
        name, message = "ok", ""
    except GLib.Error as e:
        name = Gio.DBusError.get_remote_error(e) or str(e)
        message = e.message.split(name + ": ", 1)[-1]  # without GDBus.Error:NAME
    if name.endswith(".Error.Busy"):
        ask(i)
        return
    out.setdefault(name, [0, []])
    out[name][0] += 1
    if message not in out[name][1]:
        out[name][1].append(message)
    left[0] -= 1
    if todo:
        ask(todo.pop())
    elif left[0] == 0:
        loop.quit()
for _ in range(min(4, n)):
    ask(todo.pop())
loop.run()
print(json.dumps(out), flush=True)
sys.stdin.read()
"""


@unittest.skipUnless(lmtest.is_root(), "real polkitd and setpriv need root")
class SubscribeCapTest(LedgerTest):
    """2,000 Subscribe callers: capped, and the daemon still sees UPower."""

    mode = "auto"
    polkit_rules = {"50-monitor.rules": MONITOR_RULE}
    # The bus's own limits for the callers (many connections of one user);
    # its limit of match rules per connection stays the system bus's (512).
    extra_bus_config = lmtest.MOCK_BUS_POLICY + """
  <limit name="max_connections_per_user">4096</limit>
  <limit name="max_completed_connections">4096</limit>
"""

    def subscribers(self, user, n):
        argv = ["/usr/bin/python3", "-c", SUBSCRIBERS, self.bus_address, str(n)]
        if user != "root":
            argv = ["setpriv", "--reuid=" + user, "--regid=nogroup", "--clear-groups", "--"] + argv
        p = subprocess.Popen(argv, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
        self.procs.append(p)
        return p

    def upower(self, on_battery):
        return self.start_mock("upower", {"OnBattery": on_battery})

    def test_two_thousand_subscribers(self):
        mock = self.upower(False)
        self.start()
        self.wait_until(lambda: self.status()["PowerSource"] == "upower", message="UPower used")

        # Root and 9 users, 200 connections each: 10 users could take 160
        # places at 16 each, there are 128.
        users = ["root"] + USERS
        t0 = time.monotonic()
        procs = [self.subscribers(u, 200) for u in users]
        results = {}
        for u, p in zip(users, procs):
            line = p.stdout.readline()
            self.assertTrue(line, "%s's subscribers printed nothing" % u)
            results[u] = json.loads(line)
        took = time.monotonic() - t0
        ok = {u: r.get("ok", [0])[0] for u, r in results.items()}
        print("2000 Subscribe calls in %.1f s: subscribed %r" % (took, ok))
        for u, r in results.items():
            print("  %s: %r" % (u, {k: (v[0], v[1][:2]) for k, v in r.items()}))
        self.assertEqual(sum(ok.values()), 128, results)
        self.assertTrue(all(n <= 16 for n in ok.values()), ok)
        names = {name for r in results.values() for name in r}
        self.assertEqual(names, {"ok", LIMIT_EXCEEDED}, results)
        messages = {m for r in results.values() for m in r.get(LIMIT_EXCEEDED, [0, []])[1]}
        self.assertIn("Too many spin-up subscribers: one user may have at most 16 connections "
                      "subscribed; unsubscribe one first", messages)
        self.assertIn("Too many spin-up subscribers: at most 128 in all; try again when one "
                      "unsubscribes or leaves the bus", messages)
        self.assertEqual(sum(r.get(LIMIT_EXCEEDED, [0])[0] for r in results.values()),
                         2000 - 128)

        # The daemon's own watches still work: UPower restarted (a new
        # unique name, whose signals the daemon must add a match for) is
        # followed, and its changes reach the daemon's properties.
        mock.terminate()
        mock.wait(timeout=10)
        self.wait_until(lambda: self.status()["PowerSource"] == "sysfs",
                        message="UPower's leaving seen\n" + self.daemon_log())
        mock = self.upower(True)
        self.wait_until(lambda: self.status()["PowerSource"] == "upower"
                        and self.status()["OnBattery"] is True, timeout=15,
                        message="the restarted UPower seen\n" + self.daemon_log())
        self.run_as(["gdbus", "call", "--system", "--dest", "org.freedesktop.UPower",
                     "--object-path", "/org/freedesktop/UPower", "--method",
                     "org.freedesktop.DBus.Properties.Set", "org.freedesktop.UPower", "OnBattery",
                     "<false>"], check=True)
        self.wait_until(lambda: self.status()["OnBattery"] is False, timeout=15,
                        message="OnBattery from the restarted UPower\n" + self.daemon_log())

        # The subscribers leave: their places are free again.
        for p in procs:
            p.communicate("", timeout=60)
        self.wait_until(lambda: self.call_error("Subscribe") is None, timeout=20,
                        message="a place free again")
        # No warning but the fake root's (block_dump with dmesg_restrict 0).
        warnings = [line for line in self.daemon_log().splitlines()
                    if "WARNING" in line and "dmesg_restrict" not in line]
        self.assertEqual(warnings, [])

if __name__ == "__main__":
    lmtest.main()
