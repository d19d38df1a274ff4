#!/usr/bin/python3
"""Tier 2: disks (issue 9): power state, accounting, standby timer and APM.

The real daemon against a fake root whose /dev/sda is a scripted fake ATA
drive (the format is documented in service/disks/lm-sgio.c): the test sets what
the drive answers and reads the commands it received from /dev/sda.log.
The machine's own disks are test_disks_realkernel.py's.
"""

import json
import os
import re
import signal
import struct
import subprocess
import time
import zlib

import lmtest
from lmtest import DaemonTestCase

FAKE_HEADER = "# laptop-moded fake ATA device\n[FakeAta]\n"
STAT_FMT = "%d 0 %d 0 %d 0 %d 0 0 0 0 0 0 0 0 0 0\n"

CONFIG = """[LaptopMode]
Mode=off
SpinUpIdle=1
DiskRecheck=2
Attribution=none
Remount=false

[Disk ata-FAKE_DISK_1]
StandbySeconds=20
APM=128
ReadaheadKiB=4096

[Disk ata-FAKE_DISK_2]
Exclude=true
APM=1
"""


class FakeAtaTest(DaemonTestCase):
    # Only the test build of the daemon talks to the fake drive.
    daemon_binary = lmtest.TEST_DAEMON
    config_text = CONFIG
    fake_power = "active"
    fake_extra = "APM=254\n"

    def setUp(self):
        super().setUp()
        r = self.root
        self.io = {"sda": 100, "sdb": 50, "vda": 10}
        for name, model in (("sda", "FAKE DISK 1"), ("sdb", "FAKE DISK 2"), ("vda", "")):
            base = "/sys/block/" + name
            os.makedirs(r.file(base + "/queue"))
            os.makedirs(r.file(base + "/device"))
            r.write(base + "/size", "1953525168\n")
            r.write(base + "/removable", "0\n")
            r.write(base + "/queue/rotational", "1\n" if name != "vda" else "0\n")
            r.write(base + "/queue/read_ahead_kb", "128\n")
            if model:
                r.write(base + "/device/model", model + "\n")
            self.write_stat(name)
        # Not disks: an unbound loop device and a RAM disk.
        for name in ("loop0", "ram0"):
            os.makedirs(r.file("/sys/block/%s/queue" % name))
            r.write("/sys/block/%s/size" % name, "0\n")
            r.write("/sys/block/%s/stat" % name, STAT_FMT % (0, 0, 0, 0))
        os.makedirs(r.file("/dev/disk/by-id"))
        os.symlink("../../sda", r.file("/dev/disk/by-id/ata-FAKE_DISK_1"))
        os.symlink("../../sda", r.file("/dev/disk/by-id/wwn-0x5000000000000001"))
        os.symlink("../../sdb", r.file("/dev/disk/by-id/ata-FAKE_DISK_2"))
        self.set_drive("sda", self.fake_power, self.fake_extra)
        self.set_drive("sdb", "active", "APM=254\n")
        self.prepare_root()
        self.start_daemon()

    def prepare_root(self):
        pass

    # --- the fake drive -------------------------------------------------

    def write_stat(self, name):
        n = self.io[name]
        self.root.write("/sys/block/%s/stat" % name, STAT_FMT % (n, n * 8, n, n * 8))

    def do_io(self, name):
        self.io[name] += 1
        self.write_stat(name)

    def set_drive(self, name, power, extra=None):
        if extra is None:
            with open(self.root.file("/dev/" + name)) as f:
                extra = "".join(l for l in f if not l.startswith(("#", "[", "Power=")))
        self.root.write("/dev/" + name, FAKE_HEADER + "Power=%s\n" % power + extra)

    def commands(self, name="sda"):
        try:
            with open(self.root.file("/dev/%s.log" % name)) as f:
                return [l.strip() for l in f]
        except FileNotFoundError:
            return []

    # --- the daemon's view -----------------------------------------------

    def disks(self):
        return json.loads(self.ctl_run("disks", "--json", check=True).out)

    def wait_disk(self, name, message, timeout=15, **want):
        def ok():
            d = self.disks().get(name, {})
            return all(d.get(k) == v for k, v in want.items())
        try:
            self.wait_until(ok, timeout=timeout, message=message)
        except AssertionError:
            self.fail("%s: %r\n%s" % (message, self.disks().get(name), self.daemon_log()))
        return self.disks()[name]


def wear_record(disk, time_us, load_cycles):
    """A wear record (kind 5) as lm_ledger_record_encode() writes it: the
    fixed part, a 16-byte extension (load cycles, start/stop, power cycles,
    power-on hours; 0xFFFFFFFF: not reported), then the disk name."""
    ext = struct.pack("<IIII", load_cycles, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
    payload = struct.pack("<BBBBHHqqIqI", 5, 0, len(disk), 0, 0, len(ext), time_us, time_us, 0,
                          -1, 0) + ext + disk.encode()
    return b"LMr1" + struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


class FakeAtaSmartTest(FakeAtaTest):
    """SMART wear of a spinning disk: read only after I/O was seen, only
    after CHECK POWER MODE said it is awake, at most hourly; a load-cycle
    rate that reaches the rating within five years is logged once."""
    fake_extra = "APM=254\nSmart=4:1021;9:17520;12:990;193:120000\n"
    days_ago = 10
    old_cycles = 116000  # 400 a day: 180,000 more in 450 days

    def prepare_root(self):
        os.makedirs(self.state_dir)
        with open(os.path.join(self.state_dir, "ledger"), "wb") as f:
            f.write(wear_record("sda", int((time.time() - self.days_ago * 86400) * 1e6),
                                self.old_cycles))

    def smart_commands(self):
        return [c for c in self.commands() if c.split()[1] == "B0"]

    def test_read_after_io_while_active(self):
        self.wait_until(lambda: len(self.commands()) >= 2, message="the quiet checks")
        self.assertEqual(self.smart_commands(), [], "no SMART before the disk did I/O")
        self.do_io("sda")
        self.wait_disk("sda", "the SMART read", LoadCycles=120000)
        log = self.commands()
        first = log.index("sgio B0 D0 01")
        self.assertEqual(log[first - 1], "sgio E5 00 00", "CHECK POWER MODE right before: %r" % log)
        d = self.disks()["sda"]
        self.assertEqual((d["StartStopCount"], d["PowerCycles"], d["PowerOnHours"]),
                         (1021, 990, 17520))
        self.assertEqual(d["LoadCycleRating"], 300000)
        # (120,000 - 116,000) / 10 days, a few seconds more than 10 days.
        self.assertAlmostEqual(d["LoadCyclesPerDay"], 400, delta=0.1)
        self.assertAlmostEqual(d["LoadCycleDaysLeft"], 450, delta=0.2)
        self.assertTrue(d["LoadCycleWarning"])
        # More I/O within the hour: no second read; the warning stays one line.
        for _ in range(3):
            self.do_io("sda")
            time.sleep(1.2)
        self.wait_until(lambda: len(self.commands()) > len(log), message="a later look")
        self.assertEqual(len(self.smart_commands()), 1, self.commands())
        self.assertEqual(self.daemon_log().count("parks its heads 400 times a day"), 1,
                         self.daemon_log())
        self.assertIn("A higher APM level", self.daemon_log())
        self.assertIn("laptop-moded changes nothing by itself", self.daemon_log())
        # The day's value went to the ledger (one record a day), beside the old one.
        with open(os.path.join(self.state_dir, "ledger"), "rb") as f:
            data = f.read()
        kinds = [data[i + 12] for i in range(len(data) - 12) if data[i:i + 4] == b"LMr1"]
        self.assertEqual(kinds.count(5), 2, kinds)
        r = self.ctl_run("disks", check=True)
        self.assertRegex(r.out, r"load cycles 120000, 400\.0/day over 10\.0 days")
        self.assertIn("rating 300000 in 450 days", r.out)
        # The report and its metrics say the same, from the same reading.
        w = json.loads(self.ctl_run("report", "--json", check=True).out)["disks"]["sda"]["wear"]
        self.assertEqual((w["load_cycles"], w["load_cycle_rating"], w["warning"]),
                         (120000, 300000, True))
        self.assertAlmostEqual(w["load_cycles_per_day"], 400, delta=0.1)
        self.assertIn("SMART attribute 193", w["source"])
        text = self.ctl_run("report", check=True).out
        self.assertRegex(text, r"load cycles 120000 \(SMART 193\), 400\.0 a day: rating 300000 in "
                               r"450 days \(within five years")
        m = self.ctl_run("report", "--openmetrics", check=True).out
        self.assertIn('laptop_mode_load_cycles{disk="sda"} 120000.0\n', m)
        self.assertRegex(m, r'laptop_mode_load_cycles_per_day\{disk="sda"\} 400\.0\n')

    def test_no_smart_to_a_standby_drive(self):
        self.set_drive("sda", "standby")
        self.do_io("sda")
        # The daemon looks (CHECK POWER MODE), hears standby, sends nothing else.
        self.wait_until(lambda: len(self.commands()) >= 3, message="checks after the I/O")
        time.sleep(2)
        self.assertEqual(self.smart_commands(), [], self.commands())
        self.assertTrue(all(c == "sgio E5 00 00" for c in self.commands()), self.commands())
        self.assertNotIn("LoadCycles", self.disks()["sda"])
        # Awake again and busy: asked again at once (a standby answer does not
        # count as the hour's read), and read.
        self.set_drive("sda", "active")
        self.do_io("sda")
        self.wait_disk("sda", "the SMART read once awake", LoadCycles=120000)
        self.assertEqual(len(self.smart_commands()), 1, self.commands())


class FakeAtaSmartHealthyTest(FakeAtaSmartTest):
    """40 load cycles a day: 4,500 days to the rating, no warning."""
    old_cycles = 119600

    def test_read_after_io_while_active(self):
        self.do_io("sda")
        self.wait_disk("sda", "the SMART read", LoadCycles=120000)
        d = self.disks()["sda"]
        self.assertAlmostEqual(d["LoadCyclesPerDay"], 40, delta=0.1)
        self.assertFalse(d["LoadCycleWarning"])
        self.assertNotIn("parks its heads", self.daemon_log())

    test_no_smart_to_a_standby_drive = None


class FakeAtaSmartRatingTest(FakeAtaSmartTest):
    """The same 400 cycles a day against LoadCycleRating=1000000 from the
    disk's section: 2,200 days left, past five years, no warning."""
    config_text = CONFIG.replace("ReadaheadKiB=4096\n", "ReadaheadKiB=4096\nLoadCycleRating=1000000\n")

    def test_read_after_io_while_active(self):
        self.assertIn("LoadCycleRating=1000000", self.config_text)
        self.do_io("sda")
        self.wait_disk("sda", "the SMART read", LoadCycles=120000)
        d = self.disks()["sda"]
        self.assertEqual(d["LoadCycleRating"], 1000000)
        self.assertAlmostEqual(d["LoadCycleDaysLeft"], 2200, delta=1)
        self.assertFalse(d["LoadCycleWarning"])
        self.assertNotIn("parks its heads", self.daemon_log())

    test_no_smart_to_a_standby_drive = None


class FakeAtaAccountingTest(FakeAtaTest):
    def test_listing(self):
        d = self.disks()
        self.assertEqual(sorted(d), ["sda", "sdb", "vda"], "loop0 and ram0 are not disks")
        sda = d["sda"]
        self.assertEqual(sda["Id"], "ata-FAKE_DISK_1", "ata- wins over wwn-")
        self.assertEqual((sda["Model"], sda["Rotational"], sda["Removable"], sda["Ata"]),
                         ("FAKE DISK 1", True, False, True))
        self.assertEqual(sda["State"], "active")
        self.assertEqual(d["vda"]["Id"], "vda", "no by-id link: the kernel name")
        self.assertEqual((d["vda"]["State"], d["vda"]["Inferred"]), ("unknown", True))
        self.assertEqual((d["sdb"]["Excluded"], d["sdb"]["State"]), (True, "unknown"))
        r = self.ctl_run("disks", check=True)
        self.assertIn("FAKE DISK 1", r.out)
        self.assertIn("excluded", r.out)
        self.assertEqual(self.commands("sdb"), [], "an excluded disk is never sent a command")

    def test_transitions_and_spinups(self):
        self.wait_disk("sda", "first quiet check", State="active")
        # Quiet, still spinning: CHECK POWER MODE says active.
        self.wait_until(lambda: len(self.commands()) >= 2, message="the quiet check")
        self.assertTrue(all(c == "sgio E5 00 00" for c in self.commands()), self.commands())
        # The drive's own timer spins it down; the daemon sees it at its next look.
        self.set_drive("sda", "standby")
        t_standby = time.monotonic()
        sda = self.wait_disk("sda", "standby", State="standby", Asleep=True)
        self.assertEqual((sda["Transitions"], sda["SpinUps"]), (1, 0))
        # Standby time to account (the StandbySeconds checks below), and
        # an absence watched over more than one DiskRecheck period: asleep
        # and quiet, no command at all, only sysfs is read.
        time.sleep(3)
        n = len(self.commands())
        time.sleep(2.5)
        self.assertEqual(len(self.commands()), n, "a sleeping disk is not sent commands")
        # I/O wakes it; the counters show it at the next look.
        self.set_drive("sda", "active")
        self.do_io("sda")
        sda = self.wait_disk("sda", "spin-up", State="active", Asleep=False)
        slept = time.monotonic() - t_standby
        self.assertEqual((sda["Transitions"], sda["SpinUps"]), (2, 1))
        self.assertGreater(sda["SpinUpsPerHour"], 0)
        self.assertGreaterEqual(sda["StandbySeconds"], 4)
        self.assertLessEqual(sda["StandbySeconds"], slept + 1)
        self.assertGreaterEqual(sda["ActiveSeconds"], 1)
        # Never a once-a-second loop: a handful of commands in all.
        self.assertLess(len(self.commands()), 10, self.commands())
        # Non-ATA disks: quiet means asleep, inferred.
        vda = self.wait_disk("vda", "vda quiet", Asleep=True)
        self.assertEqual(vda["State"], "unknown")
        self.do_io("vda")
        vda = self.wait_disk("vda", "vda busy", Asleep=False)
        self.assertEqual(vda["SpinUps"], 1)
        self.assertEqual(self.commands("sdb"), [])

    def test_monitor(self):
        self.wait_until(lambda: len(self.commands()) >= 2, message="the quiet check")
        p = subprocess.Popen([self.ctl, "monitor", "sda"], env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        lines = lmtest.LineReader(p.stdout)
        # Printed once its proxy (and so its PropertiesChanged match) exists.
        self.assertIsNotNone(lines.until(lambda x: x.startswith("Monitoring sda"), 15),
                             "monitor did not start")
        self.set_drive("sda", "standby")
        self.wait_disk("sda", "standby", State="standby")
        self.assertIsNotNone(lines.until(lambda x: "sda  standby" in x, 15), "no standby line")
        time.sleep(2)  # standby time for the summary to show
        self.set_drive("sda", "active")
        self.do_io("sda")
        self.wait_disk("sda", "spin-up", State="active")
        self.assertIsNotNone(lines.until(lambda x: "sda  active" in x, 15), "no active line")
        p.send_signal(signal.SIGINT)
        summary = lines.until(lambda x: "monitored for" in x, 15)
        self.assertIsNotNone(summary, "no summary after Ctrl+C")
        self.assertEqual(p.wait(timeout=10), 0, p.stderr.read())
        self.assertRegex(summary[-1], r"active .*\(\d+\.\d %\), standby .*\(\d+\.\d %\), 1 spin-ups")
        p.stderr.close()
        p.stdout.close()
        r = self.ctl_run("monitor", "nosuchdisk")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("nosuchdisk", r.err)


class FakeAtaAttributionTest(FakeAtaTest):
    """A spin-up seen by attribution (block_dump from a fake /dev/kmsg)
    wakes the disk's accounting at once, long before the slow re-check."""
    config_text = CONFIG.replace("DiskRecheck=2", "DiskRecheck=600").replace(
        "Attribution=none", "Attribution=block_dump\nSpinUpHistory=true")
    fake_power = "standby"

    def prepare_root(self):
        r = self.root
        r.write("/proc/sys/vm/block_dump", "0\n")
        os.mkfifo(r.file("/dev/kmsg"), 0o600)
        os.makedirs(r.file("/sys/block/sda/sda1"))
        r.write("/sys/block/sda/sda1/partition", "1\n")
        os.makedirs(r.file("/sys/class/block"))
        os.symlink("../../block/sda", r.file("/sys/class/block/sda"))
        os.symlink("../../block/sda/sda1", r.file("/sys/class/block/sda1"))

    def test_spinup_from_attribution(self):
        sda = self.wait_disk("sda", "standby at start", State="standby", Asleep=True)
        self.assertEqual(sda["SpinUps"], 0)
        self.wait_until(lambda: self.root.read("/proc/sys/vm/block_dump") == "1",
                        message="block_dump on")
        self.set_drive("sda", "active")
        # Stamped past SpinUpIdle after now, as the kernel would stamp a
        # record that came after a quiet while: no waiting needed.
        now = int((time.monotonic() + 2) * 1e6)
        fd = os.open(self.root.file("/dev/kmsg"), os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, ("7,1,%d,-;cat(4242): READ block 8 on sda1 (8 sectors)\n" % now).encode())
        os.close(fd)
        sda = self.wait_disk("sda", "woken by attribution", timeout=5, State="active",
                             Asleep=False)
        self.assertEqual((sda["SpinUps"], sda["Transitions"]), (1, 1))
        self.assertIn("Spin-up of sda by cat[4242]", self.daemon_log())


class FakeAtaOwnSpinUpTest(FakeAtaTest):
    """The daemon's own commands are spin-ups too (issue 35): a drive that
    said "active" to CHECK POWER MODE but is in standby when the SMART read
    or the IDLE (standby timer) arrives spins up for it; the SpinUp names
    laptop-moded and the command, and a program's read right after it is
    not taken for the spin-up (block_dump from a fake /dev/kmsg)."""
    config_text = CONFIG.replace("Attribution=none", "Attribution=block_dump\nSpinUpHistory=true")
    fake_extra = "APM=254\nSmart=4:1021;9:17520;12:990;193:120000\nSpinUpMs=1300\n"

    prepare_root = FakeAtaAttributionTest.prepare_root

    def kmsg(self, *records):
        now = time.monotonic()
        fd = os.open(self.root.file("/dev/kmsg"), os.O_WRONLY | os.O_NONBLOCK)
        try:
            for i, (offset, text) in enumerate(records):
                os.write(fd, ("7,%d,%d,-;%s\n" % (100 + i + len(self.spinups()), (now + offset) * 1e6,
                                                   text)).encode())
        finally:
            os.close(fd)

    def spinups(self):
        return [json.loads(x) for x in self.ctl_run("spinups", "--json", check=True).out.splitlines()]

    def own_then_cat(self, command):
        def own():
            return [s for s in self.spinups() if s["Comm"] == "laptop-moded"]
        try:
            self.wait_until(lambda: own(), timeout=15, message="the daemon's own spin-up")
        except AssertionError:
            self.fail("no spin-up of laptop-moded: %r\n%s" % (self.commands(), self.daemon_log()))
        mine = own()
        self.assertEqual(len(mine), 1, mine)
        s = mine[0]
        self.assertEqual((s["Disk"], s["Pid"], s["Via"], s["Note"], s["SubmitterComm"]),
                         ("sda", self.daemon.pid, "passthrough", command, "laptop-moded"))
        self.assertNotIn("Inode", s)
        self.assertRegex(self.ctl_run("spinups", check=True).out,
                         r"sda +read +laptop-moded\[%d\] uid 0 via passthrough: %s\n"
                         % (self.daemon.pid, re.escape(command)))
        # The next program's read, a moment later: the disk is spinning
        # already (the daemon's command woke it), so it is no spin-up; a
        # read after a quiet while is.
        self.kmsg((0.3, "cat(4242): READ block 8 on sda1 (8 sectors)"),
                  (5.0, "marker(7): READ block 1 on sda1"))
        self.wait_until(lambda: any(x["Comm"] == "marker" for x in self.spinups()),
                        message="the marker's spin-up")
        comms = [x["Comm"] for x in self.spinups()]
        self.assertNotIn("cat", comms, "the read after the daemon's wake was blamed: %r" % comms)
        self.assertEqual(comms, ["laptop-moded", "marker"])
        return s

    def test_smart_read_after_a_spin_down(self):
        self.wait_until(lambda: self.root.read("/proc/sys/vm/block_dump") == "1",
                        message="block_dump on")
        # Its timer runs out between the daemon's CHECK POWER MODE (which
        # says active) and the SMART read, which spins it up.
        self.set_drive("sda", "active", self.fake_extra + "StandbyBefore=B0\n")
        self.do_io("sda")
        s = self.own_then_cat("SMART READ DATA")
        log = self.commands()
        i = log.index("sgio B0 D0 01")
        self.assertEqual(log[i - 1], "sgio E5 00 00", "CHECK POWER MODE right before: %r" % log)
        self.assertIn("laptop-moded's own SMART READ DATA woke it", self.daemon_log())
        d = self.disks()["sda"]
        self.assertGreaterEqual(d["SpinUps"], 1)
        self.assertEqual(d["LoadCycles"], 120000)
        self.assertLess(abs(s["Time"] / 1e6 - time.time()), 30)

    def test_idle_to_a_drive_in_standby(self):
        self.wait_until(lambda: self.root.read("/proc/sys/vm/block_dump") == "1",
                        message="block_dump on")
        self.set_drive("sda", "active", self.fake_extra + "StandbyBefore=E3\n")
        self.ctl_run("start", check=True)
        self.own_then_cat("IDLE (standby timer)")
        self.wait_disk("sda", "settings applied", StandbyTimer="20 s", APM=128)
        log = self.commands()
        i = log.index("sgio E3 00 04")
        self.assertEqual(log[i - 1], "sgio E5 00 00", log)

    def test_check_power_mode_is_invisible(self):
        """A drive that answers everything at once is never a spin-up of
        the daemon's: not its CHECK POWER MODE, nor its SMART read, nor
        its IDLE and SET FEATURES."""
        self.wait_until(lambda: self.root.read("/proc/sys/vm/block_dump") == "1",
                        message="block_dump on")
        self.do_io("sda")
        self.wait_disk("sda", "the SMART read", LoadCycles=120000)
        self.ctl_run("start", check=True)
        self.wait_disk("sda", "settings applied", StandbyTimer="20 s", APM=128)
        self.kmsg((5.0, "marker(7): READ block 1 on sda1"))
        self.wait_until(lambda: any(x["Comm"] == "marker" for x in self.spinups()),
                        message="the marker's spin-up")
        self.assertEqual([x["Comm"] for x in self.spinups()], ["marker"])


class FakeAtaOldDriveTest(FakeAtaTest):
    """An ATA-1 drive behind an old driver: no SG_IO, aborts 0xE5."""
    fake_power = "standby"
    fake_extra = "Interface=drive_cmd\nAbortCheckPowerMode=true\n"

    def test_retry_and_fallback(self):
        sda = self.wait_disk("sda", "standby", State="standby")
        self.assertTrue(sda["Ata"])
        self.assertEqual(self.commands()[:2], ["drive_cmd E5 00 00", "drive_cmd 98 00 00"])


class FakeAtaApplyTest(FakeAtaTest):
    def test_apply_and_restore(self):
        self.ctl_run("start", check=True)
        sda = self.wait_disk("sda", "settings applied", StandbyTimer="20 s", APM=128)
        self.assertEqual(sda["ReadaheadKiB"], 4096)
        self.assertEqual(self.root.read("/sys/block/sda/queue/read_ahead_kb"), "4096")
        cmds = self.commands()
        # IDENTIFY for the APM level to restore, then IDLE with timer 4
        # (20 s) and SET FEATURES APM 128.
        for c in ("sgio EC 00 01", "sgio E3 00 04", "sgio EF 05 80"):
            self.assertIn(c, cmds)
        self.assertLess(cmds.index("sgio EC 00 01"), cmds.index("sgio EF 05 80"))
        with open(os.path.join(self.state_dir, "state")) as f:
            state = f.read()
        self.assertIn("ata-FAKE_DISK_1.APM=254", state)
        self.assertIn("ata-FAKE_DISK_1.ReadaheadKiB=128", state)
        n = len(cmds)
        self.ctl_run("stop", check=True)
        after = self.commands()[n:]
        self.assertIn("sgio EF 05 FE", after, "APM 254 as IDENTIFY said")
        self.assertIn("sgio E3 00 00", after, "the ACStandbySeconds default: timer off")
        self.assertEqual(self.root.read("/sys/block/sda/queue/read_ahead_kb"), "128")
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))
        self.assertEqual(self.commands("sdb"), [], "excluded: not even restored")
        self.assertEqual(self.commands("vda"), [])

    def test_crash_recovery(self):
        self.ctl_run("start", check=True)
        self.wait_disk("sda", "settings applied", APM=128)
        self.daemon.send_signal(signal.SIGKILL)
        self.daemon.wait()
        n = len(self.commands())
        self.start_daemon()
        self.wait_until(lambda: "sgio EF 05 FE" in self.commands()[n:], message="APM restored")
        self.assertIn("sgio E3 00 00", self.commands()[n:])
        self.assertEqual(self.root.read("/sys/block/sda/queue/read_ahead_kb"), "128")

    def test_sigterm_restores(self):
        self.ctl_run("start", check=True)
        self.wait_disk("sda", "settings applied", APM=128)
        n = len(self.commands())
        self.assertEqual(self.stop_daemon(), 0)
        self.assertIn("sgio EF 05 FE", self.commands()[n:])

    def test_configure(self):
        r = self.gdbus_call("Configure", "{'DiskSettings': <{'ata-FAKE_DISK_1': {'StandbySeconds': <uint32 7>}}>}")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("StandbySeconds for disk ata-FAKE_DISK_1", r.err)
        self.assertIn("multiple of 5", r.err)
        r = self.gdbus_call("Configure", "{'DiskSettings': <{'ata-FAKE_DISK_1': {'Speed': <uint32 7>}}>}")
        self.assertIn("Unknown disk setting", r.err)
        r = self.gdbus_call("Configure", "{'DiskSettings': <{'bad id': {'APM': <uint32 7>}}>}")
        self.assertIn("is not valid", r.err)
        self.ctl_run("start", check=True)
        self.wait_disk("sda", "settings applied", APM=128)
        n = len(self.commands())
        self.gdbus_call("Configure", "{'DiskSettings': <{'ata-FAKE_DISK_1': {'APM': <uint32 1>, "
                        "'StandbySeconds': <uint32 1800>}}>}", check=True)
        self.wait_disk("sda", "new settings", APM=1, StandbyTimer="30 min")
        after = self.commands()[n:]
        # The old settings went back first, then the new ones: IDLE 241 = 30 min.
        self.assertIn("sgio EF 05 FE", after)
        self.assertIn("sgio E3 00 F1", after)
        self.assertIn("sgio EF 05 01", after)
        with open(self.config) as f:
            conf = f.read()
        self.assertIn("[Disk ata-FAKE_DISK_1]", conf)
        self.assertIn("StandbySeconds=1800", conf)
        self.assertNotIn("ReadaheadKiB=4096", conf, "the whole entry was replaced")
        st = self.status()
        self.assertEqual(st["DiskSettings"]["ata-FAKE_DISK_1"], {"APM": 1, "StandbySeconds": 1800})
        self.assertEqual(st["DiskSettings"]["ata-FAKE_DISK_2"], {"APM": 1, "Exclude": True})
        self.assertEqual(self.commands("sdb"), [])


class FakeAtaBadConfigTest(DaemonTestCase):
    config_text = "[Disk ata-X]\nAPM=0\n"

    def test_bad_config(self):
        p = self.start_daemon(wait=False)
        p.wait(timeout=15)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("APM for disk ata-X", self.daemon_log())
        self.assertIn("from 1 to 255", self.daemon_log())


if __name__ == "__main__":
    lmtest.main()
