#!/usr/bin/python3
"""Tier 2: laptop-modectl report (issue 17) against the real daemon on a
private bus with real polkitd. The ledger file is seeded in the daemon's own
record format (magic, length, CRC32, as test_ledger.py parses it) with a
realistic day of two disks, and with hostile names; the daemon serves it
through GetLedger. Activity records (and so the stock-writeback estimate)
come through --from-json, as older daemons write none. The HTML is also
rendered by Debian's headless Chromium and its DOM checked."""

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
                        or "stock writeback would have made" in text)
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
        table = dom.getElementsByTagName("table")[0]
        self.assertEqual(table.getAttribute("id"), "wakers")
        self.assertIn("How the estimate is made", text)

    def test_bad_arguments(self):
        r = self.ctl_run("report", "--since", "2w")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--since takes 1d, 7d or 30d", r.err)
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
        self.assertEqual([s.get("thread") for s in got["spinups"]],
                         [r.get("Thread") for r in self.recs if r["Kind"] == "spinup"])
        self.env["LC_ALL"] = "C.UTF-8"
        text = self.report()
        self.assertRegex(text, r"firefox-esr +writeback +3 +\(threads: Cache2 I/O, mozStorage #3\)")
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
        self.assertRegex(text, r"stock writeback would have made \d+ spin-ups")

    def test_html_saved(self):
        out = os.path.join(self.tmp, "r.html")
        self.ctl("--html", out)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        check_html(self, text, self.recs)
        self.assertNotIn("no activity recorded", text)


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
