#!/usr/bin/python3
"""Tier 2: laptop-modectl report (issue 17) against the real daemon on a
private bus with real polkitd. The ledger file is seeded in the daemon's own
record format (magic, length, CRC32, as test_ledger.py parses it) with a
realistic day of two disks, and with hostile names; the daemon serves it
through GetLedger. Activity records (and so the stock-writeback estimate)
come through --from-json, as older daemons write none. The HTML is also
rendered by Debian's headless Chromium and its DOM checked."""

import datetime
import json
import os
import re
import shutil
import struct
import subprocess
import time
import unittest
import xml.dom.minidom
import zlib
import zoneinfo

import lmtest
from lmtest import DaemonTestCase
import report_data

KINDS = {"spinup": 1, "asleep": 2, "awake": 3, "activity": 4}
VIAS = {"direct": 0, "writeback": 1, "kernel": 2}
HOSTILE_COMM = "<b>\x1b[31m\"&'"
HOSTILE_PATH = "/tmp/<script>alert(1)</script>\x07\n.txt"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-z_]+="(?:[^"\\\n]|\\[\\"n])*",?)*)\} (\d+)$')
LABEL = re.compile(r'([a-z_]+)="((?:[^"\\\n]|\\[\\"n])*)"')


def encode(rec):
    """One record as lm_ledger_record_encode() writes it. Activity records
    carry a 12-byte extension (reads, writes, dirtied) that a daemon from
    before them skips as a record it cannot read; a spin-up's extension is
    its thread's name, where it has one."""
    disk, comm = rec["Disk"].encode(), rec.get("Comm", "").encode()
    path = rec.get("Path", "").encode()
    end = rec.get("End", rec["Time"])
    ext = b""
    if rec["Kind"] == "activity":
        ext = struct.pack("<III", rec["Reads"], rec["Writes"], rec["Dirtied"])
    elif rec["Kind"] == "spinup":
        ext = rec.get("Thread", "").encode()
    payload = struct.pack("<BBBBHHqqIqI", KINDS[rec["Kind"]], VIAS.get(rec.get("Via"), 0),
                          len(disk), len(comm), len(path), len(ext), rec["Time"], end,
                          rec.get("Pid", 0), rec.get("Uid", -1), rec.get("Flushed", 0))
    payload += ext + disk + comm + path
    return b"LMr1" + struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


def day(hostile=False):
    """A realistic day ending a minute ago (inside any --since 1d asked later)."""
    now = int(time.time() * 1e6) - 60 * 1000000
    recs = report_data.realistic_day(now, "sda", hostile=hostile)
    recs += report_data.realistic_day(now, "sdb", seed=3)
    return recs


def parse_metrics(self, text):
    """(name, labels, value) of each sample; checks the exposition format."""
    lines = text.split("\n")
    self.assertEqual(lines[-2:], ["# EOF", ""], "ends with # EOF and a newline")
    typed, samples = {}, []
    for line in lines[:-2]:
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            typed[name] = kind
            continue
        m = SAMPLE.match(line)
        self.assertIsNotNone(m, "not a sample line: %r" % line)
        self.assertIn(m.group(1), typed, "sample before its # TYPE")
        labels = {k: v.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
                  for k, v in LABEL.findall(m.group(2))}
        samples.append((m.group(1), labels, int(m.group(3))))
    for name, kind in typed.items():
        self.assertEqual(kind, "counter")
        self.assertTrue(name.endswith("_total"), name)
    return samples


def check_html(self, text, recs):
    """Well-formed (it parses as XML), self-contained, one timeline and
    chart per disk, a mark per spin-up."""
    dom = xml.dom.minidom.parseString(text.encode())
    self.assertEqual(dom.getElementsByTagName("script"), [])
    for needle in ("http://", "https://", "url(", "@import", "<script", "src="):
        self.assertNotIn(needle, text)
    svgs = dom.getElementsByTagName("svg")
    classes = [s.getAttribute("class") for s in svgs]
    disks = sorted({r["Disk"] for r in recs})
    self.assertEqual(classes.count("timeline"), len(disks))
    self.assertEqual(classes.count("chart"), len(disks))
    marks = [g for g in dom.getElementsByTagName("g") if g.getAttribute("class") == "spinup"]
    self.assertEqual(len(marks), len([r for r in recs if r["Kind"] == "spinup"]))
    return dom


def check_labels(self, dom):
    """The timelines' labels, in order; no two on one row overlap, their
    width taken as 5.5 px a character (9 px text)."""
    labels, rows = [], {}
    for g in dom.getElementsByTagName("g"):
        if g.getAttribute("class") != "spinup":
            continue
        for t in g.getElementsByTagName("text"):
            text = "".join(n.data for n in t.childNodes)
            x, y = float(t.getAttribute("x")), t.getAttribute("y")
            svg = g.parentNode.getAttribute("id")
            for x0, x1, other in rows.get((svg, y), []):
                self.assertFalse(x < x1 and x0 < x + len(text) * 5.5,
                                 "%r at %.1f overlaps %r at %.1f" % (text, x, other, x0))
            rows.setdefault((svg, y), []).append((x, x + len(text) * 5.5, text))
            labels.append(text)
    return labels


class ReportDaemonTest(DaemonTestCase):
    hostile = False

    def setUp(self):
        super().setUp()
        os.makedirs(self.state_dir)
        self.recs = day(self.hostile)
        with open(os.path.join(self.state_dir, "ledger"), "wb") as f:
            for r in self.recs:
                f.write(encode(r))
        self.start_daemon()

    def spinups(self, disk):
        return [r for r in self.recs if r["Kind"] == "spinup" and r["Disk"] == disk]

    def report(self, *args, env=None):
        r = self.run_as([self.ctl, "report"] + list(args), check=True)
        return r.out


@unittest.skipUnless(lmtest.is_root(), "real polkitd and GetLedger's monitor action need root")
class ReportTest(ReportDaemonTest):

    def test_explain(self):
        """laptop-modectl explain reads the daemon's ledger as report does:
        each program and how is one cause, its count the spin-ups served,
        and the known ones are named by the shipped table."""
        got = json.loads(self.ctl_run("explain", "--json", check=True).out)
        self.assertEqual(sorted(got["disks"]), ["sda", "sdb"])
        for name, d in got["disks"].items():
            counts = {}
            for r in self.spinups(name):
                counts[(r["Comm"], r["Via"])] = counts.get((r["Comm"], r["Via"]), 0) + 1
            self.assertEqual({(c["program"], c["via"]): c["spinups"] for c in d["causes"]}, counts)
            causes = {c["program"]: c["cause"] for c in d["causes"]}
            self.assertEqual(causes.get("jbd2/sda1-8", "ext4-journal"), "ext4-journal")
            self.assertEqual(causes.get("updatedb.plocat", "updatedb"), "updatedb")
            self.assertIsNone(causes.get("cat"))
            awake = [c["awake_s"] for c in d["causes"]]
            self.assertEqual(awake, sorted(awake, reverse=True))
        text = self.ctl_run("explain", "sda", check=True).out
        self.assertRegex(text, r"\n *1\. \S+ \(")
        self.assertIn("To avoid it:", text)
        self.assertNotIn("sdb:", text)

    def test_json(self):
        got = json.loads(self.report("--json"))
        self.assertEqual(sorted(got["disks"]), ["sda", "sdb"])
        for name, d in got["disks"].items():
            ups = self.spinups(name)
            self.assertEqual(d["recorded"]["spinups"], len(ups))
            self.assertEqual(len(d["spinups"]), len(ups))
            self.assertEqual(sum(d["spinups_by_hour"]), len(ups))
            counts = {}
            for r in ups:
                counts[(r["Comm"], r["Via"])] = counts.get((r["Comm"], r["Via"]), 0) + 1
            self.assertEqual({(w["comm"], w["via"]): w["count"] for w in d["wakers"]}, counts)
            self.assertEqual(d["wakers"][0]["count"], max(counts.values()))
            awake = sum((r["End"] - r["Time"]) // 1000000 for r in self.recs
                        if r["Kind"] == "awake" and r["Disk"] == name)
            self.assertEqual(d["awake_s"], awake)
            self.assertEqual(d["recorded"]["awake_s"], awake)
        # The estimate is the replay of the activity records the daemon
        # serves: none from a daemon before them (no estimate, not zero),
        # else the same as the client computes from those records.
        served = json.loads(self.report("--json", "--records"))
        activity = [r for r in served["records"] if r["Kind"] == "activity"]
        for name, d in got["disks"].items():
            if not activity:
                self.assertIsNone(d["stock_estimate"])
                continue
            self.assertIsNotNone(d["stock_estimate"])
            self.assertGreater(d["stock_estimate"]["spinups"], d["recorded"]["spinups"])
        if activity:
            path = os.path.join(self.tmp, "served.json")
            with open(path, "w") as f:
                json.dump(served, f)
            again = json.loads(self.report("--json", "--from-json", path))
            for name, d in got["disks"].items():
                self.assertEqual(again["disks"][name]["stock_estimate"], d["stock_estimate"])
        one = json.loads(self.report("--json", "--disk", "sdb"))
        self.assertEqual(list(one["disks"]), ["sdb"])

    def test_terminal(self):
        self.env["LC_ALL"] = "C.UTF-8"
        text = self.report()
        self.assertIn("sda: %d spin-ups" % len(self.spinups("sda")), text)
        self.assertIn("sdb: %d spin-ups" % len(self.spinups("sdb")), text)
        self.assertIn("█", text)
        self.assertIn("░", text)
        self.assertRegex(text, r"firefox +writeback +\d+")
        self.assertTrue("no activity recorded, no estimate" in text
                        or "stock writeback, estimated: about" in text)
        self.env["LC_ALL"] = "C"
        text = self.run_as([self.ctl, "report"], check=True).out
        self.assertTrue(all(ord(c) < 128 for c in text), "ASCII where the locale is not UTF-8")
        self.assertRegex(text, r"\|[#.+ ]{48}\|")

    def test_openmetrics(self):
        samples = parse_metrics(self, self.report("--openmetrics"))
        names = {s[0] for s in samples}
        self.assertEqual(names, {"laptop_mode_spinups_total", "laptop_mode_asleep_seconds_total",
                                 "laptop_mode_awake_seconds_total"})
        for disk in ("sda", "sdb"):
            ups = [s for s in samples if s[0] == "laptop_mode_spinups_total"
                   and s[1]["disk"] == disk]
            self.assertEqual(sum(s[2] for s in ups), len(self.spinups(disk)))
            self.assertLessEqual(len(ups), 9, "top wakers and other only")
            for s in ups:
                self.assertEqual(set(s[1]), {"disk", "comm", "via"})
            awake = [s for s in samples if s[0] == "laptop_mode_awake_seconds_total"
                     and s[1] == {"disk": disk}]
            self.assertEqual(len(awake), 1)

    def test_html(self):
        out = os.path.join(self.tmp, "report.html")
        # An older report readable by all is replaced by one only its owner reads.
        with open(out, "w") as f:
            f.write("old")
        os.chmod(out, 0o644)
        self.report("--html", out)
        self.assertEqual(os.stat(out).st_mode & 0o777, 0o600)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        dom = check_html(self, text, [r for r in self.recs if r["Kind"] != "activity"])
        tables = [t.getAttribute("id") or t.getAttribute("class")
                  for t in dom.getElementsByTagName("table")]
        # Each disk's causes beside its timeline, then the wakers.
        self.assertEqual(tables[:3], ["causes", "causes", "wakers"])
        self.assertIn("How the estimate is made", text)

    def test_bad_arguments(self):
        r = self.ctl_run("report", "--since", "2x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--since takes an age (12h, 7d, 2w) or a date", r.err)
        r = self.ctl_run("report", "--json", "--openmetrics")
        self.assertEqual(r.returncode, 2)


@unittest.skipUnless(lmtest.is_root(), "real polkitd and GetLedger's monitor action need root")
class HostileReportTest(ReportDaemonTest):
    """Control bytes and markup in process and file names break no format."""
    hostile = True

    def test_every_format(self):
        self.assertTrue(any(r.get("Comm") == HOSTILE_COMM for r in self.recs))
        self.env["LC_ALL"] = "C.UTF-8"
        text = self.report()
        self.assertNotIn("\x1b", text)
        self.assertNotIn("\x07", text)
        self.assertIn("\\x1b[31m", text)
        got = json.loads(self.report("--json"))
        self.assertIn(HOSTILE_COMM, [w["comm"] for w in got["disks"]["sda"]["wakers"]])
        self.assertIn(HOSTILE_PATH, [s.get("path") for s in got["disks"]["sda"]["spinups"]])
        metrics = self.report("--openmetrics")
        self.assertNotIn("\x1b", metrics)
        samples = parse_metrics(self, metrics)
        self.assertIn("<b>\\x1b[31m\"&'", [s[1].get("comm") for s in samples])
        out = os.path.join(self.tmp, "hostile.html")
        self.report("--html", out)
        with open(out, encoding="utf-8") as f:
            html = f.read()
        check_html(self, html, [r for r in self.recs if r["Kind"] != "activity"])
        self.assertNotIn("<b>", html)
        self.assertNotIn("\x1b", html)
        self.assertIn("&lt;script&gt;", html)


def threaded_day():
    """Spin-ups by programs' named threads, as the daemon records them: the
    program in Comm, the thread beside it."""
    now = int(time.time() * 1e6) - 60 * 1000000
    wakers = [("firefox-esr", "Cache2 I/O", "writeback"), ("firefox-esr", "DOM Worker", "direct"),
              ("thunderbird", "IMAP", "writeback"), ("firefox-esr", "Cache2 I/O", "writeback"),
              ("cron", "", "direct"), ("firefox-esr", "mozStorage #3", "writeback"),
              ("fio", "iou-wrk-3147", "direct"), ("firefox-esr", "DOM Worker", "direct")]
    recs = []
    for i, (comm, thread, via) in enumerate(wakers):
        t = now - (len(wakers) - i) * 600 * 1000000
        recs.append({"Kind": "asleep", "Disk": "sda", "Time": t - 500 * 1000000, "End": t})
        rec = {"Kind": "spinup", "Disk": "sda", "Time": t, "Pid": 4000 + i, "Comm": comm,
               "Uid": 1000, "Via": via, "Flushed": 0}
        if thread:
            rec["Thread"] = thread
        recs.append(rec)
        recs.append({"Kind": "awake", "Disk": "sda", "Time": t, "End": t + 60 * 1000000})
    return recs


@unittest.skipUnless(lmtest.is_root(), "real polkitd and GetLedger's monitor action need root")
class ThreadedReportTest(ReportDaemonTest):
    """A ledger whose spin-ups name programs' threads: the daemon serves
    the thread as Thread, and the report's wakers are the programs, each
    with the threads that did it as a detail; no thread is a waker."""

    def setUp(self):
        DaemonTestCase.setUp(self)
        os.makedirs(self.state_dir)
        self.recs = threaded_day()
        with open(os.path.join(self.state_dir, "ledger"), "wb") as f:
            for r in self.recs:
                f.write(encode(r))
        self.start_daemon()

    def test_wakers_are_programs(self):
        served = json.loads(self.report("--json", "--records"))["records"]
        self.assertEqual([(r["Comm"], r.get("Thread")) for r in served if r["Kind"] == "spinup"],
                         [(r["Comm"], r.get("Thread")) for r in self.recs
                          if r["Kind"] == "spinup"])
        got = json.loads(self.report("--json"))["disks"]["sda"]
        self.assertEqual([(w["comm"], w["via"], w["count"], w["threads"]) for w in got["wakers"]],
                         [("firefox-esr", "writeback", 3, ["Cache2 I/O", "mozStorage #3"]),
                          ("firefox-esr", "direct", 2, ["DOM Worker"]),
                          ("cron", "direct", 1, []), ("fio", "direct", 1, ["iou-wrk-3147"]),
                          ("thunderbird", "writeback", 1, ["IMAP"])])
        # Rhythm: three spin-ups 30 and 20 min apart are irregular; fewer
        # than three have none (lm-rhythm.c; its own cases in test-rhythm.c).
        self.assertEqual([(w["comm"], w["via"], w["rhythm"]) for w in got["wakers"]][:2],
                         [("firefox-esr", "writeback", "irregular"),
                          ("firefox-esr", "direct", None)])
        self.assertEqual([s.get("thread") for s in got["spinups"]],
                         [r.get("Thread") for r in self.recs if r["Kind"] == "spinup"])
        self.env["LC_ALL"] = "C.UTF-8"
        text = self.report()
        self.assertRegex(text, r"firefox-esr +writeback +3, irregular +\(threads: Cache2 I/O, "
                               r"mozStorage #3\)")
        self.assertNotRegex(text, r"\n  (Cache2 I/O|DOM Worker|IMAP|iou-wrk-3147) ")
        samples = parse_metrics(self, self.report("--openmetrics"))
        comms = {s[1]["comm"] for s in samples if s[0] == "laptop_mode_spinups_total"}
        self.assertEqual(comms, {"firefox-esr", "thunderbird", "cron", "fio"})
        out = os.path.join(self.tmp, "threads.html")
        self.report("--html", out)
        with open(out, encoding="utf-8") as f:
            html = f.read()
        check_html(self, html, self.recs)
        self.assertIn("<td>firefox-esr <span class=\"threads\">(threads: Cache2 I/O, "
                      "mozStorage #3)</span></td>", html)
        self.assertIn("firefox-esr, thread DOM Worker (direct)", html)


class RecordsFileCase(unittest.TestCase):
    """A day of records with activity in a JSON file, for --from-json."""

    def setUp(self):
        self.tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "lm-report-%d" % os.getpid())
        os.makedirs(self.tmp, exist_ok=True)
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.recs = day()
        self.file = os.path.join(self.tmp, "records.json")
        with open(self.file, "w") as f:
            json.dump(self.recs, f)

    def ctl(self, *args):
        p = subprocess.run([lmtest.CTL, "report", "--from-json", self.file] + list(args),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout



class ReportEstimateTest(RecordsFileCase):
    """The estimate from activity records, read from a JSON file (no daemon)."""

    def test_json_estimate(self):
        got = json.loads(self.ctl("--json", "--idle", "5"))
        for name, d in got["disks"].items():
            est = d["stock_estimate"]
            self.assertIsNotNone(est)
            self.assertEqual(d["idle_s"], 5)
            # Each dirtying while asleep is a writeback and a journal commit
            # 25 s or more apart: stock writeback wakes the disk far more.
            self.assertGreater(est["spinups"], d["recorded"]["spinups"])
            self.assertGreater(est["awake_s"], 0)
        text = self.ctl()
        self.assertRegex(text, r"stock writeback, estimated: about \d+ spin-ups")

    def test_html_saved(self):
        out = os.path.join(self.tmp, "r.html")
        self.ctl("--html", out)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        dom = check_html(self, text, self.recs)
        self.assertNotIn("no activity recorded", text)
        # Why each disk woke, from the table of known causes (issue 50).
        self.assertEqual(text.count("<h3>Why it woke</h3>"), 2)
        self.assertRegex(text, r"<tr><td>firefox</td><td>its data written back later</td>"
                               r"<td class=\"n\">\d+</td><td>[^<]*</td><td class=\"n\">\d+ s</td>"
                               r"<td>Firefox writing its history, cookies or cache\.<br/>"
                               r"<em>To avoid it:</em> ")
        self.assertIn("<td>Not a known cause: no advice.</td>", text)
        check_labels(self, dom)

    def test_html_labels_collapse(self):
        """Ten spin-ups of updatedb within ten minutes and two of cron
        amid them: one label "updatedb.plocat ×10"; no two labels overlap
        (at 5.5 px a character of 9 px text)."""
        now = int(time.time() * 1e6) - 60 * 1000000
        start = now - 20 * 3600 * 1000000
        recs = []
        for k in range(10):
            t = start + k * 60 * 1000000
            recs += [{"Kind": "spinup", "Disk": "sda", "Time": t, "Pid": 300 + k,
                      "Comm": "updatedb.plocat", "Uid": 0, "Via": "direct", "Flushed": 0},
                     {"Kind": "awake", "Disk": "sda", "Time": t, "End": t + 20 * 1000000}]
        for k in range(2):
            t = start + (3 * 3600 + k * 30) * 1000000
            recs.append({"Kind": "spinup", "Disk": "sda", "Time": t, "Pid": 99,
                         "Comm": "cron", "Uid": 0, "Via": "direct", "Flushed": 0})
        path = os.path.join(self.tmp, "cluster.json")
        with open(path, "w") as f:
            json.dump(recs, f)
        out = os.path.join(self.tmp, "cluster.html")
        p = subprocess.run([lmtest.CTL, "report", "--from-json", path, "--html", out],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        dom = check_html(self, text, recs)
        labels = check_labels(self, dom)
        self.assertEqual(labels, ["updatedb.plocat ×10", "cron ×2"])


class ReportSinceTest(RecordsFileCase):
    """--since as people type it (issue 38): hours, days, weeks, a local
    date (from its midnight) or date and time; the rest refused with 2. The
    range is read back from --json's since_us and until_us."""

    # +05:30 all year: a local midnight that is no UTC midnight.
    ZONE = "Asia/Kolkata"

    def run_report(self, since, zone=None):
        env = dict(os.environ, **({"TZ": zone} if zone else {}))
        return subprocess.run([lmtest.CTL, "report", "--from-json", self.file, "--json",
                               "--since", since], env=env, capture_output=True, text=True,
                              timeout=60)

    def span(self, since, zone=None):
        p = self.run_report(since, zone)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = json.loads(p.stdout)
        return got["since_us"], got["until_us"], got

    def zone(self):
        try:
            return zoneinfo.ZoneInfo(self.ZONE)
        except zoneinfo.ZoneInfoNotFoundError:
            self.skipTest("no tzdata for %s" % self.ZONE)

    def test_ages(self):
        for since, hours in (("12h", 12), ("1d", 24), ("7d", 7 * 24), ("2w", 14 * 24),
                             ("30d", 30 * 24), ("366d", 366 * 24)):
            since_us, until_us, got = self.span(since)
            self.assertEqual(until_us - since_us, hours * 3600 * 10**6, since)
        # The day of records (ending a minute ago) is in the last 12 hours' report too.
        self.assertEqual(set(self.span("12h")[2]["disks"]), {"sda", "sdb"})

    def test_dates(self):
        zone = self.zone()
        yesterday = datetime.datetime.now(zone).date() - datetime.timedelta(days=1)
        for since, at in ((yesterday.isoformat(), datetime.time()),
                          (yesterday.isoformat() + "T08:30", datetime.time(8, 30)),
                          (yesterday.isoformat() + " 08:30:15", datetime.time(8, 30, 15))):
            since_us, until_us, _ = self.span(since, self.ZONE)
            local = datetime.datetime.combine(yesterday, at, zone)
            self.assertEqual(since_us, int(local.timestamp()) * 10**6, since)
            self.assertGreater(until_us, since_us)

    def test_refused(self):
        today = datetime.date.today()
        tomorrow = (today + datetime.timedelta(days=1)).isoformat()
        too_old = (today - datetime.timedelta(days=368)).isoformat()
        for since, words in (("2x", "takes an age (12h, 7d, 2w) or a date"),
                             ("-2d", "takes an age (12h, 7d, 2w) or a date"),
                             ("2026-02-30", "takes an age (12h, 7d, 2w) or a date"),
                             ("0h", "takes an age above zero"),
                             ("367d", "goes back at most 366 days"),
                             ("99999999999999999999999h", "goes back at most 366 days"),
                             (too_old, "goes back at most 366 days"),
                             (tomorrow, "takes a time in the past")):
            p = self.run_report(since)
            self.assertEqual(p.returncode, 2, since)
            self.assertIn("--since %s" % words, p.stderr)
            self.assertEqual(p.stdout, "")


NVME_DATA = os.path.join(lmtest.SRCDIR, "tests", "data", "nvme")
NVME_DEV = "/sys/devices/virtual/lm-test/nvme0"
NVME_STAT = "%d 0 %d 0 %d 0 %d 0 0 0 0 0 0 0 0 0 0\n"


def fake_nvme(root, identify, apst=True):
    """/sys/block/nvme0n1 under the fake root, its controller nvme0, and
    /dev/nvme0 as the scripted fake controller (tests/lm-fake-nvme.c)
    answering with the hand-made recordings in tests/data/nvme."""
    os.makedirs(root.file(NVME_DEV + "/nvme0n1/queue"))
    root.write(NVME_DEV + "/dev", "259:0\n")
    for name, text in (("size", "1000215216\n"), ("removable", "0\n"),
                       ("queue/rotational", "0\n"), ("queue/read_ahead_kb", "128\n"),
                       ("stat", NVME_STAT % (10, 10, 10, 10))):
        root.write(NVME_DEV + "/nvme0n1/" + name, text)
    os.symlink("../../nvme0", root.file(NVME_DEV + "/nvme0n1/device"))
    os.makedirs(root.file("/sys/block"), exist_ok=True)
    os.symlink("../devices/virtual/lm-test/nvme0/nvme0n1", root.file("/sys/block/nvme0n1"))
    os.makedirs(root.file("/dev"), exist_ok=True)
    text = "# laptop-moded fake NVMe controller\n[FakeNvme]\nIdentify=%s\nPowerState=0\n" % (
        os.path.join(NVME_DATA, identify))
    if apst:
        text += "Apst=%s\nApstEnabled=true\n" % os.path.join(NVME_DATA, "synthetic-apst-table.bin")
    root.write("/dev/nvme0", text)


@unittest.skipUnless(lmtest.is_root(), "real polkitd and GetLedger's monitor action need root")
class NvmeReportTest(DaemonTestCase):
    """The report's deep-idle time and energy for a fake NVMe controller with
    the hand-made 5-state table (IDLP/ACTP reported), against a hand
    calculation."""
    daemon_binary = lmtest.TEST_DAEMON
    config_text = "[LaptopMode]\nMode=off\nSpinUpIdle=1\nAttribution=none\nRemount=false\n"
    identify = "synthetic-identify-5ps-idlp.bin"
    apst = True
    with_logind = False
    watched_past_start = 30

    def setUp(self):
        super().setUp()
        fake_nvme(self.root, self.identify, self.apst)
        os.makedirs(self.state_dir)
        # Three activity runs, two hours ago, on a 60 s boundary (so the
        # 5 s writeback ticks fall where the calculation below says).
        self.t0 = (int(time.time()) - 7200) // 60 * 60
        us = 1000000
        runs = ((0, 1, 0, 0), (600, 0, 0, 1), (3000, 0, 1, 0))  # (at, reads, writes, dirtied)
        if getattr(self, "t0_override", False):
            self.t0 = int(time.time()) - self.offset
            runs = ((0, 1, 0, 0), (10, 0, 0, 1))
        with open(os.path.join(self.state_dir, "ledger"), "wb") as f:
            # The disk was watched from t0 on, to a little past the daemon's
            # start: no time with the daemon stopped, which the estimates
            # leave out.
            f.write(encode({"Kind": "awake", "Disk": "nvme0n1", "Time": self.t0 * us,
                            "End": (int(time.time()) + self.watched_past_start) * us}))
            for at, reads, writes, dirtied in runs:
                f.write(encode({"Kind": "activity", "Disk": "nvme0n1", "Time": (self.t0 + at) * us,
                                "End": (self.t0 + at + 1) * us, "Reads": reads, "Writes": writes,
                                "Dirtied": dirtied}))
        if self.with_logind:
            self.start_mock("logind")
        self.start_daemon()
        # The daemon reads the controller only after it sees I/O.
        self.root.write(NVME_DEV + "/nvme0n1/stat", NVME_STAT % (20, 20, 20, 20))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            disks = self.properties()["Disks"]
            if "NvmePowerStates" in disks.get("nvme0n1", {}):
                break
            time.sleep(0.2)
        else:
            self.fail("the fake controller was never read: %r\n%s" % (disks, self.daemon_log()))

    def test_deep_idle_and_energy(self):
        got = json.loads(self.run_as([self.ctl, "report", "--json"], check=True).out)
        n = got["disks"]["nvme0n1"]["nvme"]
        self.assertEqual(n["apst"], "enabled")
        self.assertEqual(n["deepest_state"], 4)
        until_s = got["until_us"] // 1000000
        window = until_s - self.t0
        self.assertEqual(n["window_s"], window)
        # APST: ps0 -> ps3 after 71 ms idle, ps3 -> ps4 after 500 ms. I/O
        # seconds with laptop mode: t0 (the read), t0 + 1200 (the dirtied
        # data, MaxLostWork 600 s after it: no read came to flush it
        # LaptopModeSeconds after), t0 + 3000
        # (the write): 3 I/O seconds and 3 idle gaps. Under stock writeback:
        # t0, t0 + 605 (journal commit), t0 + 630 (writeback at expiry),
        # t0 + 635 (the commit of the blocks it allocated), t0 + 3000: 5
        # and 5.
        for policy, ios in (("laptop_mode_estimate", 3), ("stock_estimate", 5)):
            r = n[policy]
            want = {0: ios * 0.071, 1: 0, 2: 0, 3: ios * 0.5, 4: window - ios - ios * 0.571}
            for st in r["deep_idle"]:
                self.assertAlmostEqual(st["seconds"], want[st["state"]], places=6, msg=policy)
                self.assertAlmostEqual(st["share"], want[st["state"]] / window, places=9)
            self.assertEqual(r["active_s"], ios)
            # ACTP 5.20 W for I/O seconds; IDLP 0.90, 0.045, 0.003 W idle.
            wh = (ios * 5.20 + want[0] * 0.90 + want[3] * 0.045 + want[4] * 0.003) / 3600
            self.assertAlmostEqual(r["energy_wh"], wh, places=9, msg=policy)
            self.assertEqual(r["energy_source"], "idlp_actp")
        self.assertIn("maximum power is an upper bound", n["limits"])
        self.assertIn("estimates from a replay", n["limits"])
        self.assertNotIn("laptop_mode", n)
        text = self.run_as([self.ctl, "report"], check=True).out
        self.assertRegex(text, r"PS4 \(deepest\), estimated: about \d+ % of the watched time with "
                               r"laptop mode")
        self.assertIn("IDLP/ACTP", text)
        metrics = self.run_as([self.ctl, "report", "--openmetrics"], check=True).out
        self.assertRegex(metrics, r'laptop_mode_nvme_energy_wh_estimate\{disk="nvme0n1",'
                                  r'policy="stock",source="idlp_actp"\} [0-9.]+\n')
        self.assertIn('laptop_mode_nvme_state_seconds_estimate{disk="nvme0n1",'
                      'policy="laptop_mode",state="ps4"}', metrics)
        self.assertNotIn("laptop_mode_nvme_energy_wh{", metrics)
        # --html: a bar per policy beside the timeline, a segment for I/O and per state.
        out = os.path.join(self.tmp, "nvme.html")
        self.run_as([self.ctl, "report", "--html", out], check=True)
        with open(out, encoding="utf-8") as f:
            dom = xml.dom.minidom.parseString(f.read().encode())
        bars = [s for s in dom.getElementsByTagName("svg") if s.getAttribute("class") == "nvme"]
        self.assertEqual(len(bars), 1)
        titles = [t.firstChild.data for t in bars[0].getElementsByTagName("title")]
        self.assertEqual(len(titles), 2 * (1 + 5), titles)
        self.assertIn("PS4 idle", titles[5])


@unittest.skipUnless(lmtest.is_root(), "real polkitd and GetLedger's monitor action need root")
class NvmeSummaryTest(NvmeReportTest):
    """LedgerSummary carries today's deep-idle shares and energy for the
    NVMe disk (what the tray's tooltip shows); the activity is two minutes
    old, so it is today's."""
    offset = 120

    def setUp(self):
        self.t0_override = True
        super().setUp()

    def test_deep_idle_and_energy(self):
        # Another I/O: the disk wakes and sleeps again, and the summary is
        # published with the table the daemon has read by now.
        self.root.write(NVME_DEV + "/nvme0n1/stat", NVME_STAT % (30, 30, 30, 30))

        def summary():
            return self.properties()["LedgerSummary"].get("nvme0n1", {})
        self.wait_until(lambda: "DeepIdleShareTodayEstimate" in summary(), timeout=20,
                        message="the NVMe keys in LedgerSummary")
        s = summary()
        self.assertEqual((s["Apst"], s["DeepestState"], s["EnergySource"]),
                         ("enabled", 4, "idlp_actp"))
        # One read 120 s ago and a dirtied second flushed (stock) or held
        # (laptop mode, MaxLostWork 600 s): the stock replay has more I/O.
        self.assertGreater(s["DeepIdleShareTodayEstimate"], s["DeepIdleShareStockTodayEstimate"])
        self.assertGreater(s["DeepIdleShareTodayEstimate"], 0.9)
        self.assertLess(s["EnergyWhTodayEstimate"], s["EnergyWhStockTodayEstimate"])
        # At most (now - t0) s at 5.20 W: a bound, as the window ends when it was published.
        self.assertLess(s["EnergyWhTodayEstimate"], (time.time() - self.t0 + 5) * 5.20 / 3600)
        # The older unsuffixed keys stay, with the same values, for older clients.
        for old in ("DeepIdleShareToday", "DeepIdleShareStockToday", "EnergyWhToday",
                    "EnergyWhStockToday"):
            self.assertEqual(s[old], s[old + "Estimate"], old)
        # The ledger watched all of it: the estimate covers t0 to now.
        self.assertGreaterEqual(s["EstimatedSeconds"], 110)


@unittest.skipUnless(lmtest.is_root(), "real polkitd and GetLedger's monitor action need root")
class NvmeSuspendSummaryTest(NvmeSummaryTest):
    """A suspend is no deep idle: python-dbusmock's logind sends
    PrepareForSleep, the machine "sleeps" 6 s, and LedgerSummary's
    estimates and the report's leave those seconds out."""
    extra_bus_config = lmtest.MOCK_BUS_POLICY
    with_logind = True
    watched_past_start = 0

    def prepare_for_sleep(self, start):
        self.run_as(["gdbus", "call", "--system", "--dest", "org.freedesktop.login1",
                     "--object-path", "/org/freedesktop/login1", "--method",
                     "org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.login1.Manager",
                     "PrepareForSleep", "b", "[<%s>]" % ("true" if start else "false")],
                    check=True)

    def test_deep_idle_and_energy(self):
        self.root.write(NVME_DEV + "/nvme0n1/stat", NVME_STAT % (30, 30, 30, 30))

        def summary():
            return self.properties()["LedgerSummary"].get("nvme0n1", {})
        self.wait_until(lambda: "EstimatedSeconds" in summary(), timeout=20,
                        message="the NVMe keys in LedgerSummary")
        before = summary()["EstimatedSeconds"]
        self.prepare_for_sleep(True)
        time.sleep(6)
        self.prepare_for_sleep(False)
        time.sleep(2)
        # The ledger's intervals stop at the suspend and start again at the
        # resume: the report walks t0 to now less the 6 s (whole seconds: at
        # least 5) and the moment between the fake ledger's end and the
        # daemon's start.
        got = json.loads(self.run_as([self.ctl, "report", "--json"], check=True).out)
        window = got["until_us"] // 1000000 - self.t0
        n = got["disks"]["nvme0n1"]["nvme"]
        self.assertLessEqual(n["window_s"], window - 5, n)
        self.assertGreaterEqual(n["window_s"], window - 6 - 10, n)
        # The summary, published at the resume, counts no suspended second.
        s = summary()
        self.assertLessEqual(s["EstimatedSeconds"], time.time() - self.t0, s)
        self.assertGreaterEqual(s["EstimatedSeconds"], before)
        self.assertGreater(s["DeepIdleShareTodayEstimate"], s["DeepIdleShareStockTodayEstimate"])


class NvmeNoApstReportTest(NvmeReportTest):
    """The same drive with APST refused (as qemu's): the report says so and
    what it costs; everything idle stays in ps0, at maximum power."""
    identify = "synthetic-identify-5ps.bin"
    apst = False

    def test_deep_idle_and_energy(self):
        got = json.loads(self.run_as([self.ctl, "report", "--json"], check=True).out)
        n = got["disks"]["nvme0n1"]["nvme"]
        self.assertEqual(n["apst"], "disabled")
        window = got["until_us"] // 1000000 - self.t0
        r = n["laptop_mode_estimate"]
        self.assertAlmostEqual(r["deep_idle"][0]["seconds"], window - 3, places=6)
        self.assertEqual(r["energy_source"], "max_power")
        self.assertAlmostEqual(r["energy_wh"], window * 7.02 / 3600, places=9)
        # Idle at (at most) ps0's 7.02 W instead of ps4's, which reports no
        # IDLP: at least 0 W. An upper bound: no maximum power subtracted.
        self.assertNotIn("no_apst_cost_wh", n)
        self.assertAlmostEqual(n["no_apst_cost_wh_upper_bound_estimate"],
                               (window - 3) * 7.02 / 3600, places=9)
        text = self.run_as([self.ctl, "report"], check=True).out
        self.assertIn("APST disabled: the drive stays in PS0 whenever idle; estimated at most ", text)
        self.assertIn("(an upper bound)", text)


class NvmeQemuReportTest(NvmeReportTest):
    """qemu 7.2's recorded controller (one 25 W state, APSTA 0): APST absent,
    nothing deeper to go to; what tests/guest/check-nvme checks on the real
    emulated drive."""
    identify = "qemu-7.2-identify-ctrl.bin"
    apst = False

    def test_deep_idle_and_energy(self):
        got = json.loads(self.run_as([self.ctl, "report", "--json"], check=True).out)
        n = got["disks"]["nvme0n1"]["nvme"]
        self.assertEqual((n["apst"], n["deepest_state"], n["no_apst_cost_wh_upper_bound_estimate"]),
                         ("absent", 0, None))
        window = got["until_us"] // 1000000 - self.t0
        self.assertAlmostEqual(n["laptop_mode_estimate"]["energy_wh"], window * 25.0 / 3600,
                               places=9)
        self.assertEqual(n["laptop_mode_estimate"]["energy_source"], "max_power")
        text = self.run_as([self.ctl, "report", "--disk", "nvme0n1"], check=True).out
        self.assertIn("APST absent: the drive stays in PS0 whenever idle (it has no "
                      "non-operational state to go to)", text)
        self.assertIn("from each state's maximum power: an upper bound", text)


def chromium():
    return shutil.which("chromium")


@unittest.skipUnless(chromium(), "chromium is not installed (scripts/install-deps installs it)")
class ReportChromiumTest(RecordsFileCase):
    """Debian's headless Chromium renders the report; its DOM keeps the
    timeline, the chart and the table."""

    def test_rendered_dom(self):
        out = os.path.join(self.tmp, "r.html")
        self.ctl("--html", out)
        env = dict(os.environ, HOME=self.tmp)
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        p = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                            "--user-data-dir=" + os.path.join(self.tmp, "profile"),
                            "--dump-dom", "file://" + out],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        dom = p.stdout
        self.assertRegex(dom, r'<svg class="timeline" id="timeline-0"')
        self.assertRegex(dom, r'<rect class="band asleep"')
        self.assertRegex(dom, r'<rect class="band awake"')
        self.assertRegex(dom, r'<g class="spinup"><title>[^<]*</title><line [^>]*></line>'
                              r'<circle [^>]*></circle><text [^>]*>firefox</text></g>')
        self.assertEqual(dom.count('<svg class="chart"'), 2)
        self.assertEqual(dom.count('<g class="bar">'), 48)
        self.assertRegex(dom, r'<table class="wakers" id="wakers">')
        self.assertRegex(dom, r"<tr><td>sda</td><td>firefox</td><td>writeback</td>"
                              r'<td class="n">\d+</td>')
        self.assertIn("What laptop mode saved", dom)


if __name__ == "__main__":
    lmtest.main()
