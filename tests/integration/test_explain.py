#!/usr/bin/python3
"""Tier 2: laptop-modectl explain (issue 50) on recorded ledgers read
through --from-json: one cause of each kind the table of known causes
covers, each named by its entry and explained in a sentence with what would
avoid it; a cause the table does not know says what is known and that there
is no advice; biggest first; the administrator's files under /etc first;
hostile names escaped; bad arguments refused. The daemon's own ledger is
explained in test_report.py (ReportTest.test_explain)."""

import json
import os
import re
import shutil
import subprocess
import unittest

import lmtest
from lmtest import DaemonTestCase
from test_report import encode

US = 1000000
WINDOW = 3000  # seconds of ledger per cause: their spells never overlap
AWAKE = 20     # seconds awake after each spin-up

# (program, how, files, spin-ups, seconds apart (None: irregular), entry)
CAUSES = [
    ("jbd2/sda1-8", "kernel", [], 9, 300, "ext4-journal"),
    ("xfsaild/sda2", "kernel", [], 8, 120, "xfs-log"),
    ("btrfs-transacti", "kernel", [], 7, 200, "btrfs-commit"),
    ("kworker/u8:1", "kernel", ["/home/ann/notes.txt"], 3, None, "atime"),
    ("kswapd0", "kernel", [], 2, None, "swap"),
    ("smartd", "passthrough", [], 4, 600, "smartd"),
    ("udisksd", "passthrough", [], 4, 600, "udisks-smart"),
    ("laptop-moded", "passthrough", [], 1, None, "laptop-moded-smart"),
    ("hdparm", "passthrough", [], 1, None, "hdparm-apm"),
    ("fstrim", "direct", [], 1, None, "fstrim"),
    ("mandb", "direct", ["/var/cache/man/index.db"], 1, None, "man-db"),
    ("updatedb.plocat", "direct", [], 1, None, "updatedb"),
    ("apt-get", "writeback", ["/var/lib/apt/lists/deb.debian.org_Release"], 1, None,
     "apt-daily"),
    ("firefox-esr", "writeback",
     ["/home/ann/.mozilla/firefox/x.default/sessionstore-backups/recovery.jsonlz4"], 10, 60,
     "firefox-session"),
    ("thunderbird", "writeback", ["/home/ann/.thunderbird/y/global-messages-db.sqlite"], 5, 300,
     "mail"),
    ("syncthing", "writeback", ["/home/ann/Sync/.stfolder/index"], 5, 240, "sync-clients"),
    ("systemd-journal", "direct", ["/var/log/journal/abc/system.journal"], 6, 300, "journald"),
    ("cron", "direct", ["/etc/crontab"], 2, None, "cron"),
    ("myapp", "writeback", ["/home/ann/.local/state/myapp/state.json"], 6, 45,
     "periodic-one-file"),
    # The table knows neither: what is known, and no advice.
    ("mystery", "direct", ["/srv/a.db", "/srv/b.db"], 3, None, None),
    ("python3", "writeback", [], 2, None, None),
]
HOSTILE = "evil\x1b[31m\n"


def ledger(now_us, causes=CAUSES, disk="sda", other_user=0):
    """Each cause in a window of its own, one after the other: a spin-up,
    AWAKE s awake, asleep until the next; periodic ones at their period,
    irregular ones at gaps that repeat no interval."""
    recs = []
    t0 = now_us - 23 * 3600 * US
    for i, (comm, via, files, n, period, _) in enumerate(causes):
        start = t0 + i * WINDOW * US
        gaps = [period] * (n - 1) if period else [97 + 211 * k * k for k in range(n - 1)]
        times = [start]
        for g in gaps:
            times.append(times[-1] + g * US)
        for k, t in enumerate(times):
            rec = {"Kind": "spinup", "Disk": disk, "Time": t, "Pid": 100 + i, "Comm": comm,
                   "Uid": 1000, "Via": via, "Flushed": 0}
            if files:
                rec["Path"] = files[k % len(files)]
            recs.append(rec)
            recs.append({"Kind": "awake", "Disk": disk, "Time": t, "End": t + AWAKE * US})
            end = times[k + 1] if k + 1 < len(times) else start + WINDOW * US
            recs.append({"Kind": "asleep", "Disk": disk, "Time": t + AWAKE * US, "End": end})
    for k in range(other_user):
        t = t0 + len(causes) * WINDOW * US + k * 100 * US
        recs.append({"Kind": "spinup", "Disk": disk, "Time": t, "Uid": 1001, "Via": "direct",
                     "OtherUser": True, "Comm": "", "Pid": 0, "Flushed": 0})
        recs.append({"Kind": "awake", "Disk": disk, "Time": t, "End": t + AWAKE * US})
    return recs


def causes_dir():
    """LM_CAUSES_DIR as this build has it (config.h)."""
    with open(os.path.join(lmtest.BUILDDIR, "config.h")) as f:
        m = re.search(r'#define LM_CAUSES_DIR "([^"]+)"', f.read())
    return m.group(1)


class ExplainCase(unittest.TestCase):

    def setUp(self):
        self.tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "lm-explain-%d" % os.getpid())
        os.makedirs(self.tmp, exist_ok=True)
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.env = dict(os.environ, LC_ALL="C.UTF-8", LAPTOP_MODED_CAUSES=lmtest.CAUSES)
        self.env.pop("LAPTOP_MODED_ROOT", None)
        now = int(subprocess.check_output(["date", "+%s"]).strip()) * US - 60 * US
        self.file = self.write(ledger(now))

    def write(self, recs, name="records.json"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            json.dump({"records": recs}, f)
        return path

    def explain(self, *args, rc=0, env=None):
        p = subprocess.run([lmtest.CTL, "explain"] + list(args), env=env or self.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, rc, p.stderr)
        return p

    def causes(self, *args):
        got = json.loads(self.explain("--json", "--from-json", self.file, *args).stdout)
        return got["disks"]["sda"]["causes"]


class ExplainTest(ExplainCase):

    def test_each_known_cause(self):
        got = {c["program"]: c for c in self.causes()}
        self.assertEqual(sorted(got), sorted(c[0] for c in CAUSES))
        for comm, via, files, n, period, entry in CAUSES:
            c = got[comm]
            with self.subTest(comm=comm):
                self.assertEqual(c["cause"], entry)
                self.assertEqual(c["via"], via)
                self.assertEqual(c["spinups"], n)
                self.assertEqual(c["awake_s"], AWAKE * n)
                self.assertEqual(sorted(c["files"]), sorted(set(files)))
                if period is not None:
                    self.assertEqual(c["rhythm"], "every %d %s" % (
                        (period, "s") if period < 120 else (period // 60, "min")))
                elif n >= 3:
                    self.assertEqual(c["rhythm"], "irregular")
                else:
                    self.assertIsNone(c["rhythm"])
                if entry is None:
                    self.assertNotIn("avoid", c)
                else:
                    self.assertGreater(len(c["what"]), 10)
                    self.assertGreater(len(c["avoid"]), 10)
                    self.assertNotIn("{", c["what"] + c["avoid"])

    def test_sentences(self):
        text = self.explain("--from-json", self.file).stdout
        self.assertRegex(text, r"\n *\d+\. jbd2/sda1-8 \(kernel work\): 9 spin-ups, every 5 min, "
                               r"awake 3 min in all\.\n +ext4's journal on sda1 committing")
        self.assertRegex(text, r"smartd \(a command sent to the disk\): 4 spin-ups, every 10 "
                               r"min, awake 80 s in all\.\n +smartd checking the disk's health "
                               r"every 10 min\.\n +To avoid it: Start smartd with \"-n standby\"")
        self.assertIn("myapp writing /home/ann/.local/state/myapp/state.json every 45 s.", text)
        self.assertIn("firefox-esr (its data written back later): 10 spin-ups, every 60 s", text)
        self.assertIn("browser.sessionstore.interval", text)
        self.assertIn("SyncIntervalSec=", text)
        self.assertIn("DeferMaintenance=true", text)
        self.assertIn("-n standby", text)
        # Unknown: what is known, and no advice; never a guess.
        self.assertRegex(text, r"mystery \(its own I/O\): 3 spin-ups, irregular, awake 60 s in "
                               r"all\.\n +mystery \(its own I/O\) touched /srv/a\.db, /srv/b\.db\. "
                               r"Not a known cause: no advice\.\n")
        self.assertRegex(text, r"python3 \(its data written back later\), no file known\. "
                               r"Not a known cause: no advice\.")
        self.assertEqual(text.count("To avoid it:"), len([c for c in CAUSES if c[5]]))

    def test_biggest_first(self):
        order = [c["program"] for c in self.causes()]
        expect = [c[0] for c in sorted(CAUSES, key=lambda c: (-c[3], c[0]))]
        self.assertEqual(order, expect)
        text = self.explain("--from-json", self.file).stdout
        firsts = re.findall(r"\n +1\. (\S+) ", text)
        self.assertEqual(firsts, ["firefox-esr"])

    def test_other_users_and_hostile_names(self):
        now = int(subprocess.check_output(["date", "+%s"]).strip()) * US - 60 * US
        causes = [(HOSTILE, "direct", ["/tmp/\x07bell\n.txt"], 3, 60, "periodic-one-file")]
        path = self.write(ledger(now, causes, other_user=2), "hostile.json")
        text = self.explain("--from-json", path).stdout
        self.assertNotIn("\x1b", text)
        self.assertNotIn("\x07", text)
        # Also where the table's sentence is filled in with them.
        self.assertIn("evil\\x1b[31m\\x0a writing /tmp/\\x07bell\\x0a.txt every 60 s.", text)
        self.assertIn("Another user's process", text)
        got = json.loads(self.explain("--json", "--from-json", path).stdout)["disks"]["sda"]
        self.assertEqual({c["program"]: c["cause"] for c in got["causes"]},
                         {HOSTILE: "periodic-one-file", "another user's process": None})

    def test_disk_argument(self):
        now = int(subprocess.check_output(["date", "+%s"]).strip()) * US - 60 * US
        recs = ledger(now, CAUSES[:2], "sda") + ledger(now, CAUSES[5:6], "sdb")
        path = self.write(recs, "two.json")
        got = json.loads(self.explain("--json", "--from-json", path).stdout)["disks"]
        self.assertEqual(sorted(got), ["sda", "sdb"])
        got = json.loads(self.explain("sdb", "--json", "--from-json", path).stdout)["disks"]
        self.assertEqual([c["program"] for c in got["sdb"]["causes"]], ["smartd"])
        self.assertEqual(sorted(got), ["sdb"])
        text = self.explain("sdc", "--from-json", path).stdout
        self.assertIn("Nothing recorded.", text)

    def test_refused_arguments(self):
        for args in (["sda", "sdb"], ["../sda"], [""], ["--since", "yesterday"],
                     ["--since", "400d"], ["--bogus"]):
            with self.subTest(args=args):
                p = self.explain("--from-json", self.file, *args, rc=2)
                self.assertRegex(p.stderr, r"explain|since|option|disk")
                self.assertEqual(p.stdout, "")
        p = self.explain("--from-json", os.path.join(self.tmp, "missing.json"), rc=1)
        self.assertIn("Could not read the records", p.stderr)
        p = self.explain("--help")
        self.assertIn("Explain what woke the disks", p.stdout)
        self.assertIn("--from-json", p.stdout)

    def test_administrators_table_first(self):
        root = os.path.join(self.tmp, "root")
        d = os.path.join(root, causes_dir().lstrip("/"))
        os.makedirs(d)
        with open(os.path.join(d, "10-site.conf"), "w") as f:
            f.write("# ours\n[smartd]\nPrograms=smartd\nWhat=Our smartd polls {rhythm}.\n"
                    "Avoid=Ask the admins.\n"
                    "[mystery]\nPrograms=mystery\nFiles=/srv/*.db\nWhat=The site's database.\n"
                    "Avoid=Nothing: it must run.\n"
                    "[cron]\nDisabled=true\n"
                    "[broken]\nPrograms=x\nWhat={nope}\nAvoid=y\n")
        env = dict(self.env, LAPTOP_MODED_ROOT=root)
        p = self.explain("--json", "--from-json", self.file, env=env)
        got = {c["program"]: c for c in json.loads(p.stdout)["disks"]["sda"]["causes"]}
        self.assertEqual(got["smartd"]["what"], "Our smartd polls every 10 min.")
        self.assertEqual(got["mystery"]["cause"], "mystery")
        self.assertIsNone(got["cron"]["cause"])
        self.assertEqual(got["jbd2/sda1-8"]["cause"], "ext4-journal")
        # The bad entry is named on stderr; the rest is used.
        self.assertRegex(p.stderr, r"10-site\.conf: \[broken\] ignored: What: a brace")

    def test_deferred_or_not(self):
        """Maintenance jobs: one that waited for a disk awake anyway is said
        to have ridden another's spin-up; one that ran at once is a cause
        of its own, with the advice to defer it."""
        now = int(subprocess.check_output(["date", "+%s"]).strip()) * US - 60 * US
        recs = ledger(now, [("firefox-esr", "writeback", ["/home/a/places.sqlite"], 3, 600,
                             "firefox-places"),
                            ("mandb", "direct", ["/var/cache/man/index.db"], 1, None, "man-db")])
        first = min(r["Time"] for r in recs if r["Kind"] == "spinup")
        recs.append({"Kind": "deferred", "Disk": "sda", "Time": first - 2820 * US, "End": first,
                     "Reason": "awake", "Comm": "mandb", "Unit": "man-db.service", "Pid": 4,
                     "Uid": 0})
        text = self.explain("--from-json", self.write(recs, "deferred.json")).stdout
        self.assertRegex(text, r"Deferred: man-db\.service waited 47 min and ran in "
                               r"firefox-esr's spin-up\.")
        self.assertRegex(text, r"mandb \(its own I/O\): 1 spin-up, awake 20 s in all\.\n +man-db "
                               r"rebuilding its index[^\n]*\n +To avoid it: With "
                               r"DeferMaintenance=true")

    def test_units(self):
        """Two programs of one name in two units are two causes; Units=
        matches the unit; report --by-unit counts per unit too."""
        now = int(subprocess.check_output(["date", "+%s"]).strip()) * US - 60 * US
        recs = ledger(now, [("python3", "direct", [], 4, 60, None),
                            ("python3", "direct", [], 3, 300, None)])
        units = iter(["backup.service"] * 4 + ["firefox"] * 3)
        for r in recs:
            if r["Kind"] == "spinup":
                r["Unit"] = next(units)
        path = self.write(recs, "units.json")
        root = os.path.join(self.tmp, "root-units")
        d = os.path.join(root, causes_dir().lstrip("/"))
        os.makedirs(d)
        with open(os.path.join(d, "site.conf"), "w") as f:
            f.write("[backup]\nUnits=backup.service\nWhat={unit} runs {program} {rhythm}.\n"
                    "Avoid=Run it on AC.\n")
        env = dict(self.env, LAPTOP_MODED_ROOT=root)
        got = json.loads(self.explain("--json", "--from-json", path, env=env).stdout)
        causes = got["disks"]["sda"]["causes"]
        self.assertEqual([(c["program"], c["unit"], c["spinups"], c["cause"]) for c in causes],
                         [("python3", "backup.service", 4, "backup"),
                          ("python3", "firefox", 3, None)])
        self.assertEqual(causes[0]["what"], "backup.service runs python3 every 60 s.")
        text = self.explain("--from-json", path, env=env).stdout
        self.assertIn(" 1. python3 (backup.service, its own I/O): 4 spin-ups, every 60 s", text)
        self.assertIn("python3 of firefox (its own I/O), no file known. Not a known cause", text)
        p = subprocess.run([lmtest.CTL, "report", "--json", "--by-unit", "--from-json", path],
                           env=self.env, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        wakers = json.loads(p.stdout)["disks"]["sda"]["wakers"]
        self.assertEqual(sorted((w["comm"], w["unit"], w["count"]) for w in wakers),
                         [("python3", "backup.service", 4), ("python3", "firefox", 3)])
        p = subprocess.run([lmtest.CTL, "report", "--json", "--from-json", path],
                           env=self.env, capture_output=True, text=True, timeout=60)
        wakers = json.loads(p.stdout)["disks"]["sda"]["wakers"]
        self.assertEqual([(w["comm"], w["count"]) for w in wakers], [("python3", 7)])
        self.assertNotIn("unit", wakers[0])
        # Another user's record names no unit, even where the file has one.
        for r in recs:
            if r["Kind"] == "spinup":
                r["OtherUser"] = True
        path = self.write(recs, "other.json")
        got = json.loads(self.explain("--json", "--from-json", path).stdout)
        self.assertEqual({c["unit"] for c in got["disks"]["sda"]["causes"]}, {None})

    def test_no_table(self):
        env = dict(self.env, LAPTOP_MODED_CAUSES=os.path.join(self.tmp, "none.conf"))
        p = self.explain("--json", "--from-json", self.file, env=env)
        self.assertIn("none.conf", p.stderr)
        got = json.loads(p.stdout)["disks"]["sda"]["causes"]
        self.assertEqual({c["cause"] for c in got}, {None})


@unittest.skipUnless(lmtest.is_root(), "real polkitd and GetLedger's monitor action need root")
class ExplainDaemonTest(DaemonTestCase):
    """explain from the daemon's ledger says, for ext4's journal commits,
    whether laptop mode's commit= applies to that filesystem here and why
    not: the mount from the fake root's mount table, by the device number
    sysfs gives sda1, and the daemon's Remount settings."""

    config_text = "[LaptopMode]\nMode=off\nRemount=false\n"

    def setUp(self):
        super().setUp()
        os.makedirs(self.state_dir)
        now = int(subprocess.check_output(["date", "+%s"]).strip()) * US - 60 * US
        recs = ledger(now, CAUSES[:1], "sda")
        with open(os.path.join(self.state_dir, "ledger"), "wb") as f:
            for r in recs:
                f.write(encode(r))
        os.makedirs(self.root.file("/sys/class/block/sda1"))
        self.root.write("/sys/class/block/sda1/dev", "8:1\n")
        os.makedirs(self.root.file("/proc/self"), exist_ok=True)
        self.root.write("/proc/self/mountinfo",
                        "21 1 8:2 / / rw,relatime - ext4 /dev/sda2 rw\n"
                        "36 21 8:1 /bind /srv/bind rw - ext4 /dev/sda1 rw\n"
                        "37 21 8:1 / /home\\040dir rw,relatime - ext4 /dev/sda1 rw,errors=remount-ro\n")
        self.start_daemon()

    def explain_here(self, *args):
        """explain as run on the fake root's machine (its sysfs and mount table)."""
        p = subprocess.run([lmtest.CTL, "explain"] + list(args),
                           env=dict(self.env, LAPTOP_MODED_ROOT=self.root.path),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_why_commit_does_not_apply(self):
        text = self.explain_here()
        self.assertIn("    Here: sda1 (/home dir) commits every 5 s, the default: laptop mode's "
                      "commit= does not apply: laptop mode is off.\n", text)
        got = json.loads(self.explain_here("--json"))
        (cause,) = got["disks"]["sda"]["causes"]
        self.assertEqual(cause["cause"], "ext4-journal")
        self.assertIn("laptop mode is off", cause["here"])
        # From a file of records: nothing of this machine is said.
        path = os.path.join(self.tmp, "recs.json")
        with open(path, "w") as f:
            f.write(self.ctl_run("report", "--json", "--records", check=True).out)
        text = self.explain_here("--from-json", path)
        self.assertIn("jbd2/sda1-8 (kernel work)", text)
        self.assertNotIn("Here:", text)


if __name__ == "__main__":
    lmtest.main()
