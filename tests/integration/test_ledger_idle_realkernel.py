#!/usr/bin/python3
"""Tier 3: the daemon never wakes the disk it protects (issue 46).

The state directory sits on a loop disk of its own (ext4, then btrfs),
inside a private mount namespace the daemon shares; laptop mode is on with
the user-space engine, MaxLostWork and SpinUpIdle short (the engine's own
flush, LaptopModeSeconds after a wake, comes before the disk counts
asleep), and a second loop
disk is read now and then, so the ledger always has records waiting. Over
five MaxLostWork periods the state disk's own counters
(/sys/block/loopN/stat: reads, sectors read and written) must not move and
no SpinUp of it is recorded: nothing from laptop-moded, nor from writeback
of its files. (A cache flush without data is not counted: any process's
sync() sends one to every disk.) A read of the
state disk by another program then writes what waited, in that spin-up,
and the disk stays quiet afterwards (nothing left for writeback). With a
ledger whose oldest record is 31 days old, the compaction waits for that
spin-up too, and the ledger reads back whole after a restart.
Everything is undone on the way out: mounts, loop devices, vm.dirty_*.
"""

import os
import struct
import subprocess
import time
import zlib

import lmtest
from lmtest import DaemonTestCase, read_real_vm, write_real_vm
from test_ledger import LedgerTest, parse_ledger
from test_spinup_realkernel import LoopExt4, can_run, uncache

MAX_LOST_WORK = 5
IDLE = 3
PERIODS = 5
DAY_US = 24 * 3600 * 10**6


def encode_record(kind, disk, t_us, end_us):
    """One ledger record (lm-ledger-record.c's framing): magic, length,
    CRC32 of the payload; a payload of 40 fixed bytes and the disk name."""
    name = disk.encode()
    payload = struct.pack("<BBBBHHQQIQI", kind, 0, len(name), 0, 0, 0, t_us, end_us, 0,
                          2**64 - 1, 0) + name
    return b"LMr1" + struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


def disk_io(disk):
    """(reads, sectors read, writes, sectors written) completed on @disk."""
    with open("/sys/block/%s/stat" % disk) as f:
        fields = [int(x) for x in f.read().split()]
    return fields[0], fields[2], fields[4], fields[6]


def disk_data(disk):
    """What carries data to or from @disk: reads, sectors read, sectors
    written. A write without sectors is a cache flush, which any process's
    sync() sends to every disk (update-initramfs in the guest's image, a
    build beside the suite): it carries nothing of laptop-moded's files."""
    reads, read_sectors, _, written_sectors = disk_io(disk)
    return reads, read_sectors, written_sectors


@lmtest.realkernel
class LedgerIdleTest(DaemonTestCase):
    fake_root = False

    def setUp(self):
        ok, why = can_run("bpf")
        if not ok:
            self.skipTest(why)
        self.machine_vm = read_real_vm()
        self.addCleanup(write_real_vm, self.machine_vm)
        self.config_text = ("[LaptopMode]\nMode=on\nEngine=userspace\nAttribution=bpf\n"
                            "MaxLostWork=%d\nLaptopModeSeconds=1\nSpinUpIdle=%d\n"
                            % (MAX_LOST_WORK, IDLE))
        super().setUp()

    def make_disks(self, fstype):
        """The state disk (@fstype) and another ext4 disk to keep the
        ledger busy."""
        self.fs = LoopExt4(self.tmp, fstype)
        self.addCleanup(self.fs.cleanup)
        other_base = os.path.join(self.tmp, "other")
        os.makedirs(other_base)
        self.other = LoopExt4(other_base, "ext4")
        self.addCleanup(self.other.cleanup)
        # Cleanups run last registered first: the daemon stops (and puts
        # back what it changed, the disk controllers' power/control among
        # them) while its state directory is still mounted, with time for
        # a slow ASan stop, instead of being killed after 10 s by the
        # generic cleanup once the loop disks are gone.
        self.addCleanup(lambda: getattr(self, "daemon", None) is not None
                        and lmtest.stop_process(self.daemon, timeout=60))
        self.state_dir = os.path.join(self.fs.mnt, "state")
        os.makedirs(self.state_dir, mode=0o700)
        self.ledger = os.path.join(self.state_dir, "ledger")
        self.wake_file = os.path.join(self.fs.mnt, "wake")
        self.other_file = os.path.join(self.other.mnt, "a")
        for path in (self.wake_file, self.other_file):
            with open(path, "wb") as f:
                f.write(os.urandom(256 << 10))
        os.sync()

    # The ledger file's records, parsed in the test (none before its first write).
    file_records = LedgerTest.file_records

    def standby_count(self):
        return self.daemon_log().count("Disk %s: standby" % self.fs.disk)

    def summary_unwritten(self):
        import json
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                        "LedgerSummary", "--json=short", check=True)
        entry = json.loads(r.out)["data"].get(self.fs.disk, {})
        return entry.get("UnwrittenSince", {}).get("data", 0)

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
            records = v.unpack()[0]
        finally:
            bus.close_sync(None)
        # GetLedger gives the first 250; these runs make fewer.
        self.assertLess(len(records), 250)
        return records

    def start(self):
        n = self.standby_count()
        self.start_daemon()
        self.wait_until(lambda: self.status()["Active"], timeout=30,
                        message="laptop mode on\n" + self.daemon_log())
        self.assertIn("Ledger %s waits for disk %s" % (self.ledger, self.fs.disk),
                      self.daemon_log())
        # What the start itself wrote (the restore journal: a transition,
        # durable before the change) is on the disk before the watch.
        subprocess.run(["sync", "-f", self.state_dir], check=True)
        self.wait_until(lambda: self.standby_count() > n, timeout=60,
                        message="%s counted asleep\n%s" % (self.fs.disk, self.daemon_log()))

    def wait_disk_quiet(self, quiet, timeout=90):
        """Until the state disk has moved no data for @quiet seconds."""
        last, since = disk_data(self.fs.disk), time.monotonic()
        deadline = since + timeout
        while time.monotonic() < deadline:
            time.sleep(0.2)
            now = disk_data(self.fs.disk)
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
        self.fail("%s never went quiet for %d s\n%s" % (self.fs.disk, quiet, self.daemon_log()))

    def read_other(self):
        uncache(self.other_file)
        subprocess.run(["cat", self.other_file], stdout=subprocess.DEVNULL, check=True)

    def watch_quiet(self, periods, poke_other):
        """The state disk's counters over @periods MaxLostWork periods, the
        other disk read every 4 s when @poke_other: they must not move."""
        before = disk_data(self.fs.disk)
        flushes = disk_io(self.fs.disk)[2]
        log_from = len(self.daemon_log())
        t0 = time.time()
        end = time.monotonic() + periods * MAX_LOST_WORK
        while time.monotonic() < end:
            if poke_other:
                self.read_other()
            time.sleep(min(4, max(0, end - time.monotonic())))
        after = disk_data(self.fs.disk)
        log = self.daemon_log()[log_from:]
        self.assertEqual(after, before,
                         "the state disk %s did I/O while it slept (reads, sectors read, sectors "
                         "written):\n%s" % (self.fs.disk, log))
        print("%s: %d cache flushes (writes without data) in the watch"
              % (self.fs.disk, disk_io(self.fs.disk)[2] - flushes))
        self.assertNotIn("Spin-up of %s" % self.fs.disk, log)
        ups = [r for r in self.get_ledger() if r["Kind"] == "spinup"
               and r["Disk"] == self.fs.disk and r["Time"] >= t0 * 1e6]
        self.assertEqual(ups, [], log)
        return log

    def wake_by_another_program(self):
        uncache(self.wake_file)
        subprocess.run(["cat", self.wake_file], stdout=subprocess.DEVNULL, check=True)
        self.wait_until(lambda: self.summary_unwritten() == 0, timeout=30,
                        message="the waiting records written at the wake\n" + self.daemon_log())

    def check_idle(self, fstype):
        self.make_disks(fstype)
        self.start()
        log = self.watch_quiet(PERIODS, poke_other=True)
        self.assertIn("records wait for disk %s to wake" % self.fs.disk, log)
        # Waiting, and shown: GetLedger has the other disk's spin-ups, the
        # summary says since when they wait, the file does not have them.
        cats = [r for r in self.get_ledger() if r["Kind"] == "spinup"
                and r["Disk"] == self.other.disk and r["Comm"] == "cat"]
        self.assertGreaterEqual(len(cats), PERIODS, self.daemon_log())
        self.assertGreater(self.summary_unwritten(), 0)
        self.assertNotIn("cat", [r[2] for r in self.file_records() if r[1] == self.other.disk])
        # Another program wakes it: written in that spin-up...
        self.wake_by_another_program()
        written = [r for r in self.file_records() if r[1] == self.other.disk and r[2] == "cat"]
        self.assertGreaterEqual(len(written), len(cats))
        # ... and nothing of it is left for writeback to bring later. The
        # disk's own counters say when it went quiet: with the kernel
        # reporting spin-ups, the daemon counts it asleep only when asked.
        self.wait_disk_quiet(IDLE + 1)
        self.watch_quiet(2, poke_other=False)

    def test_idle_state_disk_ext4(self):
        self.check_idle("ext4")

    def test_idle_state_disk_btrfs(self):
        self.check_idle("btrfs")

    def test_month_old_ledger_compacts_in_another_programs_spinup(self):
        self.make_disks("ext4")
        now = int(time.time() * 1e6)
        # The oldest becomes due for compaction (a day past 30 days) 20 s
        # from now: after the start, before the watch ends.
        ends = [now - 31 * DAY_US + 20 * 10**6, now - DAY_US * 61 // 2, now - DAY_US * 59 // 2,
                now - 29 * DAY_US]
        with open(self.ledger, "wb") as f:
            f.write(b"".join(encode_record(2, "old", e - 10**6, e) for e in ends))
        os.chmod(self.ledger, 0o600)
        os.sync()
        self.start()
        ino = os.stat(self.ledger).st_ino
        log = self.watch_quiet(PERIODS, poke_other=True)
        self.assertGreater(time.time() * 1e6, ends[0] + 31 * DAY_US, "the watch ended too soon")
        self.assertEqual(os.stat(self.ledger).st_ino, ino, "compacted while the disk slept")
        self.assertNotIn("Ledger compacted", log)
        shown = self.get_ledger()
        self.assertEqual(len([r for r in shown if r["Disk"] == "old"]), 4, shown)
        self.wake_by_another_program()
        self.assertNotEqual(os.stat(self.ledger).st_ino, ino, "not compacted at the wake")
        self.assertEqual(self.daemon_log().count("Ledger compacted"), 1, self.daemon_log())
        # Reads back whole after a restart: what was shown, but for the two
        # records older than 30 days.
        self.assertEqual(self.stop_daemon(), 0)
        with open(self.ledger, "rb") as f:
            kept = parse_ledger(f.read())
        self.assertEqual(len([r for r in kept if r[1] == "old"]), 2, kept)
        self.start()
        key = lambda r: (r["Kind"], r["Disk"], r["Time"], r.get("Comm"))  # noqa: E731
        after = {key(r) for r in self.get_ledger()}
        expected = {key(r) for r in shown if r["Disk"] != "old"}
        self.assertEqual(expected - after, set(), "records shown before the compaction are lost")
        self.assertEqual(len([k for k in after if k[1] == "old"]), 2)

if __name__ == "__main__":
    lmtest.main()
