#!/usr/bin/python3
"""Tier 2: the spin-up ledger (issue 17) on a private bus with real polkitd.

Spin-ups come through the block_dump backend from a FIFO standing in for
/dev/kmsg, as in test_spinup_dbus.py. The fake root maps the device number
of the test's state directory to fake disk vdb (through /sys/dev/block), so
the ledger waits for vdb to wake; vdc is another disk. The ledger file is
parsed here independently of the daemon (magic, length, CRC32)."""

import os
import struct
import time
import unittest
import zlib

import lmtest
from lmtest import DaemonTestCase
from test_spinup_dbus import kmsg_line

STAT_FMT = "%d 0 %d 0 %d 0 %d 0 0 0 0 0 0 0 0 0 0\n"
MAX_LOST_WORK = 600


def parse_ledger(data):
    """(kind, disk, comm, via, path) of every valid record in @data."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        if data[pos:pos + 4] != b"LMr1":
            pos += 1
            continue
        length, crc = struct.unpack_from("<II", data, pos + 4)
        payload = data[pos + 12:pos + 12 + length]
        if len(payload) != length or length < 40 or zlib.crc32(payload) != crc:
            pos += 1
            continue
        kind, via, dl, cl, pl, ext = struct.unpack_from("<BBBBHH", payload, 0)
        s = payload[40 + ext:]  # the extension: activity's counts
        out.append((kind, s[:dl].decode(), s[dl:dl + cl].decode(), via,
                    s[dl + cl:dl + cl + pl].decode()))
        pos += 12 + length
    return out


class LedgerTest(DaemonTestCase):
    mode = "on"
    max_lost_work = MAX_LOST_WORK

    def setUp(self):
        self.config_text = ("[LaptopMode]\nMode=%s\nAttribution=block_dump\nSpinUpIdle=1\n"
                            "SpinUpHistory=true\nRemount=false\nMaxLostWork=%d\n"
                            % (self.mode, self.max_lost_work))
        super().setUp()
        r = self.root
        r.write("/proc/sys/vm/block_dump", "0\n")
        os.makedirs(r.file("/dev"))
        os.mkfifo(r.file("/dev/kmsg"), 0o600)
        os.makedirs(r.file("/sys/class/block"))
        os.makedirs(r.file("/sys/block"))
        os.makedirs(r.file("/sys/dev/block"))
        os.makedirs(self.state_dir)
        for name in ("vdb", "vdc"):
            base = "/sys/devices/virtual/block/" + name
            os.makedirs(r.file(base + "/queue"))
            os.makedirs(r.file(base + "/%s1" % name))
            r.write(base + "/%s1/partition" % name, "1\n")
            r.write(base + "/size", "1953525168\n")
            r.write(base + "/removable", "0\n")
            r.write(base + "/queue/rotational", "1\n")
            r.write(base + "/queue/read_ahead_kb", "128\n")
            r.write(base + "/stat", STAT_FMT % (10, 80, 10, 80))
            os.symlink("../devices/virtual/block/" + name, r.file("/sys/block/" + name))
            os.symlink("../../devices/virtual/block/" + name, r.file("/sys/class/block/" + name))
            os.symlink("../../devices/virtual/block/%s/%s1" % (name, name),
                       r.file("/sys/class/block/%s1" % name))
        st = os.stat(self.state_dir)
        os.symlink("../../devices/virtual/block/vdb",
                   r.file("/sys/dev/block/%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))))
        self.ledger = os.path.join(self.state_dir, "ledger")
        self.seq = 0
        self.last_us = 0

    # --- helpers ----------------------------------------------------------

    def kmsg(self, *records):
        """Kernel log records at @offset seconds past now, and always past the
        last ones, so each batch's first I/O follows an idle gap."""
        now = max(int(time.monotonic() * 1e6), self.last_us)
        fd = os.open(self.root.file("/dev/kmsg"), os.O_WRONLY | os.O_NONBLOCK)
        try:
            for offset, text in records:
                self.seq += 1
                self.last_us = max(self.last_us, now + int(offset * 1e6))
                os.write(fd, kmsg_line(self.seq, now + int(offset * 1e6), text).encode())
        finally:
            os.close(fd)

    def file_records(self):
        try:
            with open(self.ledger, "rb") as f:
                return parse_ledger(f.read())
        except FileNotFoundError:
            return []

    def file_stamp(self):
        try:
            st = os.stat(self.ledger)
            return (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            return None

    def get_ledger(self, user=None):
        """GetLedger over everything, as root, as a list of dicts."""
        import gi
        gi.require_version("Gio", "2.0")
        from gi.repository import Gio, GLib
        bus = Gio.DBusConnection.new_for_address_sync(
            self.bus_address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
            | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
        try:
            v = bus.call_sync(lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "GetLedger",
                              GLib.Variant("(tt)", (0, 2**63)), None, 0, 20000, None)
            return v.unpack()[0]
        finally:
            bus.close_sync(None)

    def spinups(self):
        return [r for r in self.get_ledger() if r["Kind"] == "spinup"]

    def standby_count(self, disk):
        return self.daemon_log().count("Disk %s: standby" % disk)

    def wait_asleep(self, disk, after):
        self.wait_until(lambda: self.standby_count(disk) > after, timeout=20,
                        message="%s counted asleep\n%s" % (disk, self.daemon_log()))

    def start(self):
        n = self.standby_count("vdb")
        self.start_daemon()
        self.wait_until(lambda: "Spin-up monitoring started" in self.daemon_log(), timeout=20,
                        message="monitoring\n" + self.daemon_log())
        self.assertIn("Ledger %s waits for disk vdb" % self.ledger, self.daemon_log())
        if self.mode == "on":
            self.wait_until(lambda: "Laptop mode on" in self.daemon_log(), timeout=20,
                            message="laptop mode on\n" + self.daemon_log())
        self.wait_asleep("vdb", n)


@unittest.skipUnless(lmtest.is_root(), "real polkitd and setpriv need root")
class DeferredLedgerTest(LedgerTest):

    def test_spinups_deferred_until_state_disk_wakes(self):
        self.start()
        before = self.file_stamp()
        self.kmsg((5.0, "cat(4242): READ block 8 on vdc1 (8 sectors)"),
                  (5.2, "dd(4343): dirtied inode 12 (out.bin) on vdc1"),
                  (9.0, "kworker/u8:1(99): WRITE block 100 on vdc1 (8 sectors)"))
        self.wait_until(lambda: len(self.spinups()) >= 2, timeout=20,
                        message="two spin-ups in GetLedger\n" + self.daemon_log())
        got = self.spinups()
        self.assertEqual([(s["Disk"], s["Comm"], s["Pid"], s["Via"]) for s in got],
                         [("vdc", "cat", 4242, "direct"), ("vdc", "dd", 4343, "writeback")])
        self.assertEqual(got[1]["Path"], "out.bin")
        self.assertLess(abs(got[0]["Time"] / 1e6 - (time.time() + 5)), 10)
        # vdc went to sleep too: still nothing written while vdb sleeps.
        self.wait_asleep("vdc", 0)
        self.assertEqual(self.file_stamp(), before, "the ledger was written while vdb slept")
        self.assertNotIn("cat", [r[2] for r in self.file_records()])

        # Anyone reads the summary; it names no process.
        user = lmtest.UNPRIVILEGED
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                        "LedgerSummary", user=user, check=True)
        self.assertIn('"vdc"', r.out)
        self.assertIn('"vdc" 3 "SpinUpsToday" u 2 "AsleepShareToday" d', r.out)
        self.assertIn('"LastWake" t', r.out)
        for name in ("cat", "dd", "kworker", "out.bin"):
            self.assertNotIn(name, r.out)
        # ... but not the ledger.
        r = self.gdbus_call("GetLedger", "0", "18446744073709551615", user=user)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("AccessDenied", r.err)

        # vdb wakes (I/O of its own): everything waiting is written now.
        n = self.standby_count("vdb")
        self.kmsg((5.0, "vim(4444): WRITE block 5 on vdb1 (8 sectors)"))
        self.wait_until(lambda: [r[2] for r in self.file_records() if r[0] == 1]
                        == ["cat", "dd", "vim"], timeout=20,
                        message="spin-ups in the file\n" + self.daemon_log())
        kinds = {r[0] for r in self.file_records()}
        self.assertIn(3, kinds, "no awake interval in the file")  # vdc's and vdb's awake spans
        recs = [r for r in self.file_records() if r[0] == 1]
        self.assertEqual([(r[1], r[3], r[4]) for r in recs],
                         [("vdc", 0, ""), ("vdc", 1, "out.bin"), ("vdb", 0, "")])

        # Pending at a clean stop: written then, and read back after a start.
        self.wait_asleep("vdb", n)
        stamp = self.file_stamp()
        self.kmsg((5.0, "less(4545): READ block 9 on vdc1 (8 sectors)"))
        self.wait_until(lambda: "less" in [s["Comm"] for s in self.spinups()], timeout=20,
                        message="less in GetLedger")
        self.assertEqual(self.file_stamp(), stamp)
        self.assertEqual(self.stop_daemon(), 0)
        self.assertIn("less", [r[2] for r in self.file_records()])
        self.start()
        self.assertEqual([s["Comm"] for s in self.spinups()], ["cat", "dd", "vim", "less"])

    def test_kill9_loses_only_what_waited(self):
        self.start()
        n = self.standby_count("vdb")
        self.kmsg((5.0, "cat(4242): READ block 8 on vdc1 (8 sectors)"),
                  (9.0, "vim(4444): WRITE block 5 on vdb1 (8 sectors)"))
        self.wait_until(lambda: [r[2] for r in self.file_records() if r[0] == 1] == ["cat", "vim"],
                        timeout=20, message="written at vdb's wake\n" + self.daemon_log())
        self.wait_asleep("vdb", n)
        stamp = self.file_stamp()
        t_kill = time.time()
        self.kmsg((5.0, "less(4545): READ block 9 on vdc1 (8 sectors)"))
        self.wait_until(lambda: "less" in [s["Comm"] for s in self.spinups()], timeout=20,
                        message="less in GetLedger")
        self.assertEqual(self.file_stamp(), stamp)
        lost = [s for s in self.spinups() if s["Comm"] == "less"][0]
        self.daemon.kill()
        self.daemon.wait(timeout=10)
        # What the man page says is lost: records that waited in memory
        # since vdb last slept (here younger than MaxLostWork); what was
        # written survives.
        self.assertLess(t_kill - lost["Time"] / 1e6, MAX_LOST_WORK)
        self.start()
        self.assertEqual([s["Comm"] for s in self.spinups()], ["cat", "vim"])


@unittest.skipUnless(lmtest.is_root(), "real polkitd needs root")
class MaxLostWorkTest(LedgerTest):
    max_lost_work = 6

    def test_not_written_after_max_lost_work_while_disk_sleeps(self):
        """MaxLostWork passes three times while vdb sleeps: nothing is
        written (that would wake it), LedgerSummary says since when records
        wait, GetLedger and report show them; vdb's wake writes them."""
        self.start()
        stamp = self.file_stamp()
        t0 = time.time()
        self.kmsg((5.0, "cat(4242): READ block 8 on vdc1 (8 sectors)"))
        self.wait_until(lambda: "cat" in [s["Comm"] for s in self.spinups()], timeout=20,
                        message="cat in GetLedger")
        time.sleep(3 * self.max_lost_work + 1)
        self.assertEqual(self.file_stamp(), stamp, "written while vdb slept\n" + self.daemon_log())
        self.assertNotIn("cat", [r[2] for r in self.file_records()])
        self.assertIn("records wait for disk vdb to wake", self.daemon_log())
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                        "LedgerSummary", "--json=short", user=lmtest.UNPRIVILEGED, check=True)
        import json
        summary = json.loads(r.out)["data"]
        since = summary["vdb"]["UnwrittenSince"]["data"]
        self.assertGreaterEqual(since / 1e6, t0 - 1, summary)
        self.assertLessEqual(since / 1e6, time.time(), summary)
        self.assertNotIn("UnwrittenSince", summary.get("vdc", {}))
        rep = self.ctl_run("report", "--since", "1h")
        self.assertEqual(rep.returncode, 0, rep.err)
        self.assertIn("cat", rep.out)
        self.assertRegex(rep.out, r"Records since [0-9-]+ [0-9:]+ wait in memory until vdb is awake")
        # vdb wakes for someone else: written in that spin-up.
        self.kmsg((5.0, "vim(4444): WRITE block 5 on vdb1 (8 sectors)"))
        self.wait_until(lambda: "cat" in [r[2] for r in self.file_records()], timeout=20,
                        message="written at vdb's wake\n" + self.daemon_log())
        self.wait_until(lambda: "UnwrittenSince" not in self.busctl(
            "get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "LedgerSummary",
            check=True).out, timeout=10, message="UnwrittenSince gone once written")


@unittest.skipUnless(lmtest.is_root(), "real polkitd needs root")
class LaptopModeOffTest(LedgerTest):
    mode = "off"

    def test_written_at_once_while_off(self):
        self.start()
        self.kmsg((5.0, "cat(4242): READ block 8 on vdc1 (8 sectors)"))
        self.wait_until(lambda: "cat" in [r[2] for r in self.file_records()], timeout=20,
                        message="written at once\n" + self.daemon_log())


if __name__ == "__main__":
    lmtest.main()
