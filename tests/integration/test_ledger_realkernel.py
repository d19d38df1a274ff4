#!/usr/bin/python3
"""Tier 3: the spin-up ledger on the real kernel with the bpf backend, on an
ext4 loop disk inside a private mount namespace that the daemon shares.

No subscriber: where the bpf program loads, monitoring runs all the time.
`cat` of an uncached file and a buffered writer left to the flusher must
appear in GetLedger as spin-ups (Via direct and writeback), with activity
records counting the read and the dirtying seconds; the ledger survives a
stop and start, and a kill -9 loses at most what the interface XML says;
and the idle daemon makes no DiskRecheck wake-ups. Everything is undone on
the way out: the mount, the loop device, vm.dirty_*.
"""

import json
import os
import re
import subprocess
import time
import unittest

import lmtest
from lmtest import DaemonTestCase, read_real_vm, write_real_vm
from test_spinup_realkernel import IDLE, LoopExt4, can_run, uncache

# LmReplayFs (common/lm-replay.h): the filesystems an activity's data went to.
FS_EXT4, FS_BTRFS, FS_XFS = 1, 2, 4



@lmtest.realkernel
class LedgerRealKernelTest(DaemonTestCase):
    fake_root = False
    recheck = 5  # DiskRecheck: what would wake an idle daemon every 5 s without bpf

    def setUp(self):
        ok, why = can_run("bpf")
        if not ok:
            self.skipTest(why)
        self.machine_vm = read_real_vm()
        self.addCleanup(write_real_vm, self.machine_vm)
        self.config_text = ("[LaptopMode]\nMode=off\nAttribution=bpf\nSpinUpIdle=%d\n"
                            "DiskRecheck=%d\n" % (IDLE, self.recheck))
        super().setUp()
        self.fs = LoopExt4(self.tmp)
        self.addCleanup(self.fs.cleanup)
        self.file = os.path.join(self.fs.mnt, "a")
        with open(self.file, "wb") as f:
            f.write(os.urandom(256 << 10))
        os.sync()
        # The flusher comes within a second or two instead of 30 s.
        write_real_vm({"dirty_expire_centisecs": "100", "dirty_writeback_centisecs": "100"})

    # --- helpers ---------------------------------------------------------------

    def get_ledger(self):
        import gi
        gi.require_version("Gio", "2.0")
        from gi.repository import Gio, GLib
        bus = Gio.DBusConnection.new_for_address_sync(
            self.bus_address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
            | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
        try:
            v = bus.call_sync(lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "GetLedger",
                              GLib.Variant("(tt)", (0, 2**63)), None, 0, 20000, None)
            return [r for r in v.unpack()[0] if r["Disk"] == self.fs.disk]
        finally:
            bus.close_sync(None)

    def kinds(self, kind):
        return [r for r in self.get_ledger() if r["Kind"] == kind]

    def disk_io(self):
        with open("/sys/block/%s/stat" % self.fs.disk) as f:
            fields = f.read().split()
        return int(fields[0]), int(fields[4])

    def wait_idle(self, timeout=60):
        """Until the loop disk has done no I/O for longer than SpinUpIdle."""
        quiet = IDLE + 0.5
        last, since = self.disk_io(), time.monotonic()
        deadline = since + timeout
        while time.monotonic() < deadline:
            time.sleep(0.1)
            now = self.disk_io()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
        self.fail("the loop disk never went quiet for %.1f s" % quiet)

    def start(self):
        self.start_daemon()
        self.wait_until(lambda: "Spin-up monitoring started (bpf" in self.daemon_log(), timeout=30,
                        message="bpf monitoring without a subscriber\n" + self.daemon_log())
        self.assertIn("always on", self.daemon_log())

    def record_cat_and_writer(self):
        self.wait_idle()
        uncache(self.file)
        cat = subprocess.run(["cat", self.file], stdout=subprocess.DEVNULL, check=True)
        self.assertEqual(cat.returncode, 0)
        self.wait_until(lambda: any(s["Comm"] == "cat" for s in self.kinds("spinup")), timeout=30,
                        message="cat's spin-up in GetLedger\n" + self.daemon_log())
        self.wait_idle()
        dd = subprocess.Popen(["dd", "if=/dev/zero", "of=" + os.path.join(self.fs.mnt, "out"),
                               "bs=4k", "count=64", "status=none"])
        dd.wait()
        self.wait_until(lambda: any(s["Comm"] == "dd" for s in self.kinds("spinup")), timeout=30,
                        message="dd's spin-up in GetLedger\n" + self.daemon_log())
        return dd.pid

    # --- tests -----------------------------------------------------------------

    def test_spinups_and_activity(self):
        self.start()
        dd_pid = self.record_cat_and_writer()
        spinups = self.kinds("spinup")
        cat = [s for s in spinups if s["Comm"] == "cat"][0]
        dd = [s for s in spinups if s["Comm"] == "dd"][0]
        self.assertEqual(cat["Via"], "direct", cat)
        self.assertEqual((dd["Via"], dd["Pid"]), ("writeback", dd_pid), dd)
        self.assertEqual(cat["Flushed"], 0, "laptop mode is off: nothing was held back")
        # Activity: the cat's read second, the dd's dirtying second, each in
        # a record of its own (they are more than SpinUpIdle apart).
        self.wait_until(lambda: any(a["Reads"] >= 1 for a in self.kinds("activity"))
                        and any(a["Dirtied"] >= 1 for a in self.kinds("activity")), timeout=30,
                        message="activity with Reads and Dirtied\n%r\n%s"
                        % (self.get_ledger(), self.daemon_log()))
        acts = self.kinds("activity")
        for a in acts:
            # Filesystems: where its data was dirtied (ext4: 1), and Spells,
            # only then.
            keys = {"Kind", "Disk", "Time", "End", "Reads", "Writes", "Dirtied"}
            self.assertEqual(set(a), keys | ({"Filesystems", "Spells"} if a["Dirtied"] else set()),
                             a)
            if a["Dirtied"]:
                self.assertEqual(a["Filesystems"], FS_EXT4, a)
            self.assertGreater(a["End"], a["Time"])
            span = (a["End"] - a["Time"]) / 1e6
            self.assertLessEqual(max(a["Reads"], a["Writes"], a["Dirtied"]), span + 1, a)
        read = [a for a in acts if a["Reads"] >= 1][0]
        self.assertLessEqual(read["Time"], cat["Time"] + 1e6, (read, cat))
        self.assertGreaterEqual(read["End"], cat["Time"] - 1e6, (read, cat))
        dirty = [a for a in acts if a["Dirtied"] >= 1][-1]
        self.assertLess(dirty["Time"], dd["Time"], "dirtied before the flusher wrote")
        # Ordered by time, and the spin-ups' own order kept.
        times = [r["Time"] for r in self.get_ledger() if r["Kind"] == "spinup"]
        self.assertEqual(times, sorted(times))

    def test_btrfs_dirtying_is_its_disks_activity(self):
        """On btrfs (a superblock with an anonymous device number, not the
        disk's) the dirtying seconds are the loop disk's activity, and the
        flusher's write is dd's spin-up."""
        self.fs = LoopExt4(self.tmp, "btrfs")
        self.addCleanup(self.fs.cleanup)
        os.sync()
        self.start()
        self.wait_idle()
        dd = subprocess.Popen(["dd", "if=/dev/zero", "of=" + os.path.join(self.fs.mnt, "out"),
                               "bs=4k", "count=64", "status=none"])
        dd.wait()
        self.wait_until(lambda: any(a["Dirtied"] >= 1 for a in self.kinds("activity")), timeout=30,
                        message="activity with Dirtied on %s\n%r\n%s"
                        % (self.fs.disk, self.get_ledger(), self.daemon_log()))
        ups = [s for s in self.kinds("spinup") if s["Comm"] == "dd"]
        self.assertTrue(ups, self.get_ledger())
        self.assertEqual((ups[0]["Via"], ups[0]["Pid"]), ("writeback", dd.pid), ups[0])
        # The replay commits it on btrfs's clock: the record says btrfs.
        dirty = [a for a in self.kinds("activity") if a["Dirtied"] >= 1]
        self.assertEqual({a.get("Filesystems") for a in dirty}, {FS_BTRFS}, dirty)

    def test_xfs_dirtying_marks_its_filesystem(self):
        """Data dirtied on xfs: the activity record says xfs, so the
        report's replay uses xfs's log clock, not ext4's journal."""
        self.fs = LoopExt4(self.tmp, "xfs")
        self.addCleanup(self.fs.cleanup)
        os.sync()
        self.start()
        self.wait_idle()
        with open(os.path.join(self.fs.mnt, "out"), "wb") as f:
            f.write(os.urandom(64 << 10))
        self.wait_until(lambda: any(a["Dirtied"] >= 1 for a in self.kinds("activity")), timeout=30,
                        message="activity with Dirtied on %s\n%r\n%s"
                        % (self.fs.disk, self.get_ledger(), self.daemon_log()))
        dirty = [a for a in self.kinds("activity") if a["Dirtied"] >= 1]
        self.assertEqual({a.get("Filesystems") for a in dirty}, {FS_XFS}, dirty)
        # A new file made dirty: a dirty spell began.
        self.assertGreaterEqual(sum(a.get("Spells", 0) for a in dirty), 1, dirty)
        r = self.ctl_run("report", "--json", "--since", "1d", "--disk", self.fs.disk)
        self.assertEqual(r.returncode, 0, r.err)
        disk = json.loads(r.out)["disks"][self.fs.disk]
        self.assertIsNotNone(disk["stock_estimate"], disk)
        self.assertIsNone(disk["stock_estimate_unsure"], disk)

    @unittest.skipUnless(tuple(int(x) for x in os.uname().release.split(".")[:2]) >= (6, 13),
                         "multigrain ctime's tracepoint (ctime_ns_xchg) came in Linux 6.13")
    def test_time_updates_count_on_xfs(self):
        """Writes to a page already dirty change only the file's times, which
        xfs (and btrfs) log in a transaction of their own, never through
        __mark_inode_dirty: each such second still counts as dirtied (the
        ctime tracepoint), so the replay sees the changes xfs's log
        commits; only the first write begins a dirty spell."""
        write_real_vm({"dirty_expire_centisecs": "3000", "dirty_writeback_centisecs": "500"})
        self.fs = LoopExt4(self.tmp, "xfs")
        self.addCleanup(self.fs.cleanup)
        os.sync()
        self.start()
        self.wait_idle()
        with open(os.path.join(self.fs.mnt, "log"), "wb") as f:
            for _ in range(5):
                os.pwrite(f.fileno(), os.urandom(4096), 0)  # the same page each time
                time.sleep(1.1)
        self.wait_until(lambda: self.totals()[0] >= 4, timeout=30,
                        message="4 dirtied seconds on %s\n%r\n%s"
                        % (self.fs.disk, self.get_ledger(), self.daemon_log()))
        dirtied, spells = self.totals()
        self.assertEqual(spells, 1, self.kinds("activity"))

    def totals(self):
        """(dirtied seconds, seconds in which a dirty spell began) over the
        disk's activity records so far; every record with dirtied data
        says its spells."""
        dirty = [a for a in self.kinds("activity") if a["Dirtied"] >= 1]
        self.assertTrue(all("Spells" in a for a in dirty), dirty)
        return sum(a["Dirtied"] for a in dirty), sum(a["Spells"] for a in dirty)

    def test_dirty_spells_one_per_file(self):
        """A clean file made dirty begins a dirty spell (the kernel's
        dirtied_when, from which stock write-back expires it); written
        again while still dirty it begins none; a new file begins its own.
        The replay writes each file back at its own expiry from these."""
        write_real_vm({"dirty_expire_centisecs": "3000", "dirty_writeback_centisecs": "500"})
        self.start()
        for attempt in range(3):
            os.sync()
            self.wait_idle()
            time.sleep(1.5)  # the runs before are over: read below, not merged
            dirtied0, spells0 = self.totals()
            written = self.disk_io()[1]
            with open(self.file, "r+b") as f:
                f.write(os.urandom(4096))      # clean until now: a spell
                f.flush()
                time.sleep(1.5)
                f.write(os.urandom(4096))      # still dirty: no spell
                f.flush()
            time.sleep(1.5)
            with open(os.path.join(self.fs.mnt, "b%d" % attempt), "wb") as f:
                f.write(os.urandom(4096))      # a new file: a spell
            time.sleep(2.5)                    # its second is over, then read
            dirtied, spells = self.totals()
            if self.disk_io()[1] != written:
                print("attempt %d: the disk was written meanwhile (a sync() elsewhere); again"
                      % (attempt + 1))
                continue
            self.assertEqual(dirtied - dirtied0, 3, self.kinds("activity"))
            self.assertEqual(spells - spells0, 2, self.kinds("activity"))
            return
        self.fail("the disk was written during each of 3 attempts: nothing measured")

    def test_report_json_blames_cat_and_writer(self):
        """`laptop-modectl report --json`, as a user runs it: the disk's
        wakers are cat (direct) and dd (writeback), each spin-up is listed
        with its cause, and the counts agree with GetLedger."""
        self.start()
        self.record_cat_and_writer()
        recorded = len(self.kinds("spinup"))
        r = self.ctl_run("report", "--json", "--since", "1d", "--disk", self.fs.disk)
        self.assertEqual(r.returncode, 0, r.err)
        report = json.loads(r.out)
        self.assertEqual(list(report["disks"]), [self.fs.disk], report)
        disk = report["disks"][self.fs.disk]
        wakers = {(w["comm"], w["via"]): w["count"] for w in disk["wakers"]}
        self.assertGreaterEqual(wakers.get(("cat", "direct"), 0), 1, disk["wakers"])
        self.assertGreaterEqual(wakers.get(("dd", "writeback"), 0), 1, disk["wakers"])
        causes = [(s["comm"], s["via"]) for s in disk["spinups"]]
        self.assertIn(("cat", "direct"), causes)
        # Its activity says which filesystem: the estimate assumed nothing.
        self.assertIsNone(disk["stock_estimate_unsure"], disk)
        self.assertIn(("dd", "writeback"), causes)
        times = [s["time_us"] for s in disk["spinups"]]
        self.assertEqual(times, sorted(times))
        # The report was read after the ledger counted them, and nothing
        # else used the disk: at least what GetLedger said then, at most
        # what it says now.
        self.assertGreaterEqual(len(disk["spinups"]), recorded)
        self.assertLessEqual(len(disk["spinups"]), len(self.kinds("spinup")))
        self.assertEqual(sum(disk["spinups_by_hour"]), len(disk["spinups"]))
        self.assertEqual(disk["recorded"]["spinups"], len(disk["spinups"]))

    def test_survives_stop_start_and_kill9(self):
        self.start()
        self.record_cat_and_writer()
        self.wait_until(lambda: any(a["Reads"] >= 1 for a in self.kinds("activity")), timeout=30,
                        message="activity\n" + self.daemon_log())
        before = self.get_ledger()
        self.assertEqual(self.stop_daemon(), 0)
        self.start()
        after = self.get_ledger()
        key = lambda r: (r["Kind"], r["Time"], r.get("Comm"))  # noqa: E731
        # A clean stop writes everything, activity included.
        self.assertEqual({key(r) for r in before if r["Kind"] in ("spinup", "activity")}
                         - {key(r) for r in after}, set())

        # kill -9: laptop mode is off, so records are written at once; what
        # waits in memory is each disk's activity record that may still grow
        # (and what the kernel holds): at most one per disk, the last.
        self.wait_idle()
        uncache(self.file)
        subprocess.run(["cat", self.file], stdout=subprocess.DEVNULL, check=True)
        self.wait_until(lambda: len([s for s in self.kinds("spinup") if s["Comm"] == "cat"]) >= 2,
                        timeout=30, message="second cat spin-up\n" + self.daemon_log())
        self.wait_until(lambda: len([a for a in self.kinds("activity") if a["Reads"] >= 1]) >= 2,
                        timeout=30, message="second read activity\n" + self.daemon_log())
        shown = self.get_ledger()
        self.daemon.kill()
        self.daemon.wait(timeout=10)
        self.start()
        kept = self.get_ledger()
        lost = {key(r) for r in shown} - {key(r) for r in kept}
        lost_kinds = sorted(k for k, _, _ in lost)
        self.assertNotIn("spinup", lost_kinds, "a spin-up written at once was lost")
        self.assertLessEqual(lost_kinds.count("activity"), 1, lost)
        acts = [key(r) for r in shown if r["Kind"] == "activity"]
        for k in lost:
            if k[0] == "activity":
                self.assertEqual(k, acts[-1], "only the last activity record may be lost")

    def test_no_recheck_wakeups_while_idle(self):
        self.start()
        self.assertIn("no periodic re-check", self.daemon_log())
        # Every disk's first idle timer runs SpinUpIdle after the start.
        self.wait_idle()
        time.sleep(IDLE + 1)
        # Without bpf, DiskRecheck=5 would wake the daemon every 5 s per
        # sleeping disk. The machine's own disks may be woken by other
        # programs meanwhile: each such spin-up is logged, and costs the
        # daemon a few wake-ups; nothing else may wake it.
        for attempt in range(3):
            lmtest.wait_quiet(self, self.daemon.pid, quiet=2.0, timeout=60)
            log_before = len(self.daemon_log())
            n0 = lmtest.ctx_switches(self.daemon.pid)
            time.sleep(20)
            n1 = lmtest.ctx_switches(self.daemon.pid)
            log = self.daemon_log()[log_before:]
            events = len(re.findall(r"Spin-up of |Disk \S+: (?:standby|active)|Disk \S+ is gone"
                                    r"|Disk \S+ \(", log))
            if n1 - n0 <= 1 + 4 * events:
                return
            print("attempt %d: %d wake-ups in 20 s with %d logged events"
                  % (attempt + 1, n1 - n0, events))
        self.fail("the idle daemon woke %d times in 20 s with %d logged events:\n%s"
                  % (n1 - n0, events, log))


if __name__ == "__main__":
    lmtest.main()
