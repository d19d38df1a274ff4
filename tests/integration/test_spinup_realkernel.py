#!/usr/bin/python3
"""Tier 3: spin-up attribution on the real kernel, per backend (bpf,
tracefs), on an ext4 loop device inside a private mount namespace that the
daemon shares.

The loop disk is left idle past a short SpinUpIdle; then `cat` of an
uncached file must give exactly one SpinUp naming cat, its pid, the loop
disk and read, with further I/O in the busy period giving none; and a
buffered `dd` write left to the flusher must be blamed on dd via writeback,
on ext4, btrfs (a superblock with an anonymous device number) and xfs.
Processes, not threads: a read and a write from a thread named as
Firefox's cache thread ("Cache2 I/O") name the process, with the thread as
Thread, also from a program that exits as soon as its thread has read
(tracefs then reads the line after /proc forgot the thread); fio's
io_uring O_DIRECT reads on btrfs (done by its iou-wrk threads) name fio.
A program whose file name holds forged trace lines forges nothing.
Blame follows the data: three programs dirtying one filesystem in
several orders are each named only for the inode their data is in; a
program that wrote and fsynced is not named for the filesystem's own
writes after (ext4, btrfs, xfs).
Everything is undone on the way out, failures included: the mount, the loop
device, vm.dirty_* (lowered so the flusher comes within a second), tracefs
instances and any tracefs mount.
"""

import ctypes
import itertools
import json
import mmap
import re
import os
import shutil
import signal
import subprocess
import threading
import time

import lmtest
from lmtest import DaemonTestCase, read_real_vm, write_real_vm
from test_spinup_dbus import LineReader

IDLE = 2


def file_sectors(path):
    """[(first, end)] of @path's extents on its disk, in 512-byte sectors
    (filefrag -e; physical blocks of the filesystem's block size)."""
    out = subprocess.run(["filefrag", "-e", "-b512", path], capture_output=True, text=True,
                         check=True).stdout
    spans = []
    for line in out.splitlines():
        m = re.match(r"\s*\d+:\s*\d+\.\.\s*\d+:\s*(\d+)\.\.\s*(\d+):", line)
        if m:
            spans.append((int(m.group(1)), int(m.group(2)) + 1))
    return spans
TRACING = "/sys/kernel/tracing"


def tracefs_mounted():
    with open("/proc/self/mountinfo") as f:
        return any(line.split(" - ")[1].startswith("tracefs ") and line.split()[4] == TRACING
                   for line in f if " - " in line)


def can_run(backend):
    """What the tests of one attribution backend need (the other files' real
    spin-up tests ask this too)."""
    return lmtest.can_run("root", "namespace", "loop", "btf" if backend == "bpf" else "tracefs",
                          tools=("losetup", "mkfs.ext4", "mkfs.btrfs", "mkfs.xfs", "fio",
                                 "mount", "umount", "cat", "dd"))


def direct_read(path, offset):
    """One 4 KiB read of @path that goes to the disk (O_DIRECT), from this
    process: no fork and exec whose cost a busy machine stretches."""
    buf = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT wants
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        os.preadv(fd, [buf], offset)
    finally:
        os.close(fd)
        buf.close()


def uncache(path):
    """Drop @path's clean pages, so the next read goes to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


# How each filesystem is made quiet when nobody uses it: ext4 with inode
# tables and journal initialised by mkfs (no ext4lazyinit writes later);
# noatime everywhere (a read dirties nothing). xfs needs 300 MiB, the image
# is sparse.
FILESYSTEMS = {
    "ext4": (64, ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
             "noatime,noinit_itable"),
    "btrfs": (320, ["mkfs.btrfs", "-q", "-f"], "noatime"),
    "xfs": (320, ["mkfs.xfs", "-q", "-f"], "noatime"),
}


class LoopExt4:
    """A filesystem (ext4 unless told) on a loop device of its own that
    stays quiet when nobody uses it."""

    def __init__(self, base, fstype="ext4"):
        size, mkfs, options = FILESYSTEMS[fstype]
        self.image = os.path.join(base, fstype + ".img")
        self.mnt = os.path.join(base, "mnt-" + fstype)
        self.device = None
        self.mounted = False
        os.makedirs(self.mnt)
        with open(self.image, "wb") as f:
            f.truncate(size << 20)
        subprocess.run(mkfs + [self.image], check=True, capture_output=True)
        self.device = subprocess.run(["losetup", "--find", "--show", self.image], check=True,
                                     capture_output=True, text=True).stdout.strip()
        subprocess.run(["mount", "-o", options, self.device, self.mnt], check=True)
        self.mounted = True

    @property
    def disk(self):
        return os.path.basename(self.device)

    def cleanup(self):
        # Lazily if busy, and by image: a loop left attached made the next
        # tests' disks other numbers, and outlived the run.
        lmtest.release_mounts([self.mnt] if self.mounted else [], [self.image])
        self.mounted = False
        self.device = None


class LoopBtrfsPair:
    """One btrfs over two loop disks, data and metadata mirrored (raid1):
    every write lands on both."""

    def __init__(self, base):
        self.images = [os.path.join(base, "pair%d.img" % i) for i in range(2)]
        self.mnt = os.path.join(base, "mnt-pair")
        self.devices = []
        self.mounted = False
        os.makedirs(self.mnt)
        for image in self.images:
            with open(image, "wb") as f:
                f.truncate(320 << 20)
        subprocess.run(["mkfs.btrfs", "-q", "-f", "-d", "raid1", "-m", "raid1"] + self.images,
                       check=True, capture_output=True)
        for image in self.images:
            self.devices.append(subprocess.run(["losetup", "--find", "--show", image], check=True,
                                               capture_output=True, text=True).stdout.strip())
        subprocess.run(["mount", "-o", "noatime,device=" + self.devices[1], self.devices[0],
                        self.mnt], check=True)
        self.mounted = True

    @property
    def disks(self):
        return [os.path.basename(d) for d in self.devices]

    def cleanup(self):
        lmtest.release_mounts([self.mnt] if self.mounted else [], self.images)
        self.mounted = False
        self.devices = []


PR_SET_NAME = 15
THREAD_NAME = "Cache2 I/O"


def name_this_thread(name):
    """prctl(PR_SET_NAME): the calling thread's own comm, as a browser
    names its I/O threads."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NAME)")


def own_comm():
    with open("/proc/self/comm") as f:
        return f.read().rstrip("\n")


class NamedThread:
    """A thread named THREAD_NAME that runs @work, then stays alive until
    done() (the tracefs backend finds the process of a thread in /proc)."""

    def __init__(self, work):
        self.started = threading.Event()
        self.finished = threading.Event()
        self.release = threading.Event()
        self.error = None
        self.work = work
        self.thread = threading.Thread(target=self.run)
        self.thread.start()
        self.finished.wait(30)

    def run(self):
        try:
            name_this_thread(THREAD_NAME)
            self.work()
        except Exception as e:  # reported by the test, not lost in the thread
            self.error = e
        self.finished.set()
        self.release.wait(60)

    def done(self):
        self.release.set()
        self.thread.join(10)


# A multi-threaded reader: its I/O thread names itself, reads, and the
# program exits at once. Run as a file of its own, so the program's name
# (its comm) is the file's, not the interpreter's.
READER_PROGRAM = """#!/usr/bin/python3
import ctypes, mmap, os, sys, threading

def read():
    if ctypes.CDLL(None).prctl(15, sys.argv[2].encode(), 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_NAME) failed")
    buf = mmap.mmap(-1, 4096)
    fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
    os.preadv(fd, [buf], 0)
    os.close(fd)

t = threading.Thread(target=read)
t.start()
t.join()
"""


@lmtest.realkernel
class RealSpinUp:
    """The tests, run once per backend by the classes below."""

    fake_root = False
    backend = None

    def setUp(self):
        ok, why = can_run(self.backend)
        if not ok:
            self.skipTest(why)
        self.tracefs_before = tracefs_mounted()
        self.machine_vm = read_real_vm()
        # Registered first, so they run last: after the daemon is gone.
        self.addCleanup(write_real_vm, self.machine_vm)
        self.addCleanup(self.check_tracefs_left_as_found)
        self.config_text = ("[LaptopMode]\nMode=off\nAttribution=%s\nSpinUpIdle=%d\n"
                            % (self.backend, IDLE))
        super().setUp()
        self.fs = LoopExt4(self.tmp)
        self.addCleanup(self.fs.cleanup)
        self.files = []
        for name in ("a", "b", "c"):
            path = os.path.join(self.fs.mnt, name)
            with open(path, "wb") as f:
                f.write(os.urandom(256 << 10))
            self.files.append(path)
        os.sync()
        # The flusher comes within a second or two instead of 30 s.
        write_real_vm({"dirty_expire_centisecs": "100", "dirty_writeback_centisecs": "100"})

    def check_tracefs_left_as_found(self):
        self.assertEqual(tracefs_mounted(), self.tracefs_before, "tracefs mount state changed")
        if tracefs_mounted():
            self.assertFalse(os.path.exists(os.path.join(TRACING, "instances", "laptop-moded")),
                             "the daemon left its tracefs instance")

    def subscribe(self):
        self.start_daemon()
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                        "Attribution", check=True)
        self.assertEqual(r.out.strip(), 's "%s"' % self.backend, self.daemon_log())
        p = subprocess.Popen([self.ctl, "watch", "--json"], env=self.env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL)
        self.procs.append(p)
        self.addCleanup(lmtest.close_child, p)
        banner = p.stderr.readline()
        self.assertIn("Watching spin-ups", banner, self.daemon_log())
        return LineReader(p.stdout)

    def daemon_pid(self):
        """The daemon's own pid (self.daemon may be a wrapper's), from the bus."""
        r = self.busctl("call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                        "org.freedesktop.DBus", "GetConnectionUnixProcessID", "s",
                        lmtest.BUS_NAME, check=True)
        pid = int(r.out.split()[1])
        with open("/proc/%d/comm" % pid) as f:
            self.assertTrue(f.read().startswith("laptop-moded"), pid)
        return pid

    def loop_spinups(self, lines, wait):
        got = [json.loads(x) for x in lines.drain(wait)]
        return [g for g in got if g["Disk"] == self.fs.disk]

    def next_loop_spinup(self, lines, timeout=20):
        """The next SpinUp on the loop disk, waited for."""
        deadline = time.monotonic() + timeout
        while True:
            line = lines.get(deadline - time.monotonic())
            if line is None:
                return None
            s = json.loads(line)
            if s["Disk"] == self.fs.disk:
                return s

    def disk_io(self, disk=None):
        with open("/sys/block/%s/stat" % (disk or self.fs.disk)) as f:
            fields = f.read().split()
        return int(fields[0]), int(fields[4])  # reads and writes completed

    def wait_idle(self, lines, timeout=60, keep=False, disks=None):
        """Until the loop disk (or each of @disks) has done no I/O for
        longer than SpinUpIdle (so the next I/O is a spin-up); what arrived
        meanwhile is dropped unless @keep."""
        quiet = IDLE + 0.5
        disks = disks or [self.fs.disk]
        last, since = [self.disk_io(d) for d in disks], time.monotonic()
        deadline = since + timeout
        while time.monotonic() < deadline:
            time.sleep(0.1)
            now = [self.disk_io(d) for d in disks]
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                while not keep and lines.get(0) is not None:
                    pass
                return
        self.fail("the loop disk never went quiet for %.1f s" % quiet)

    def marker(self, lines):
        """A positive control that closes a measurement: after another idle
        period, one read of ours must be a SpinUp of its own. SpinUps come
        in order, so what arrived before it is all the measurement made."""
        self.wait_idle(lines, keep=True)
        direct_read(self.files[2], 0)
        before = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            s = self.next_loop_spinup(lines, deadline - time.monotonic())
            if s is None:
                break
            if s["Pid"] == os.getpid():
                return before
            before.append(s)
        self.fail("the marker read made no SpinUp; before it: %r\n%s" % (before, self.daemon_log()))

    def test_cat_of_uncached_file(self):
        lines = self.subscribe()
        # The gaps between I/Os must stay below SpinUpIdle for the busy
        # period to hold; a machine that stalls us longer than that makes
        # the attempt meaningless, and it is made again (3 at most).
        for attempt in range(3):
            self.wait_idle(lines)
            for f in self.files:
                uncache(f)
            t0 = time.monotonic()
            cat = subprocess.Popen(["cat", self.files[0]], stdout=subprocess.DEVNULL)
            cat.wait()
            # More I/O inside the busy period: another cat, then direct reads
            # a quarter of SpinUpIdle apart, together longer than SpinUpIdle.
            subprocess.run(["cat", self.files[1]], stdout=subprocess.DEVNULL, check=True)
            spans = [time.monotonic() - t0]
            start = time.monotonic()
            for i in range(1, 5):
                time.sleep(IDLE / 4)
                direct_read(self.files[2], i * 4096)
                now = time.monotonic()
                spans.append(now - start)
                start = now
            got = self.marker(lines)
            if max(spans) < IDLE * 0.8:
                break
            print("# retry %d: the machine stalled the test (gaps %s s, SpinUpIdle %d s)"
                  % (attempt + 1, ", ".join("%.2f" % g for g in spans), IDLE))
        else:
            self.fail("in 3 attempts the machine never let the reads come within SpinUpIdle")
        self.assertEqual(len(got), 1, "expected one SpinUp on %s, got %r\n%s"
                         % (self.fs.disk, got, self.daemon_log()))
        s = got[0]
        self.assertEqual((s["Comm"], s["Pid"], s["Disk"], s["Operation"], s["Via"]),
                         ("cat", cat.pid, self.fs.disk, "read", "direct"))
        # bpf reads the uid in the kernel; tracefs events carry none, and
        # /proc/PID is often gone by the time the line is read.
        if self.backend == "bpf" or "Uid" in s:
            self.assertEqual(s["Uid"], 0)
        self.assertEqual(s["Backend"], self.backend)
        self.assertLess(abs(s["Time"] / 1e6 - time.time()), 60)

    def test_buffered_write_blamed_on_writer(self):
        lines = self.subscribe()
        self.wait_idle(lines)
        dd = subprocess.Popen(["dd", "if=/dev/zero", "of=" + os.path.join(self.fs.mnt, "out"),
                               "bs=4k", "count=64", "status=none"])
        dd.wait()
        got = []
        deadline = time.monotonic() + 20
        while not got and time.monotonic() < deadline:
            got = self.loop_spinups(lines, 1)
        self.assertTrue(got, "no SpinUp after the flusher's write\n" + self.daemon_log())
        s = got[0]
        self.assertEqual((s["Comm"], s["Pid"], s["Operation"], s["Via"]),
                         ("dd", dd.pid, "write", "writeback"), s)
        self.assertNotEqual(s["SubmitterComm"], "dd")
        self.assertTrue(s["SubmitterComm"].startswith(("kworker", "jbd2")), s)

    def writeback_blamed_on_dd(self, lines):
        """A buffered dd write on self.fs left to the flusher: the first
        SpinUp names dd, via writeback."""
        self.wait_idle(lines)
        dd = subprocess.Popen(["dd", "if=/dev/zero", "of=" + os.path.join(self.fs.mnt, "out"),
                               "bs=4k", "count=64", "status=none"])
        dd.wait()
        s = self.next_loop_spinup(lines)
        self.assertIsNotNone(s, "no SpinUp after the flusher's write\n" + self.daemon_log())
        self.assertEqual((s["Comm"], s["Pid"], s["Operation"], s["Via"]),
                         ("dd", dd.pid, "write", "writeback"), s)
        self.assertNotIn("Thread", s)
        self.assertTrue(s["SubmitterComm"].startswith(("kworker", "jbd2", "btrfs", "xfs")), s)

    def use_filesystem(self, fstype):
        """self.fs becomes a new loop disk with @fstype, quiet."""
        self.fs = LoopExt4(self.tmp, fstype)
        self.addCleanup(self.fs.cleanup)
        path = os.path.join(self.fs.mnt, "data")
        with open(path, "wb") as f:
            f.write(os.urandom(1 << 20))
        os.sync()
        return path

    def test_btrfs_writeback_blamed_on_writer(self):
        """btrfs's superblock has an anonymous device number, not the
        disk's: the flusher's write is still dd's."""
        self.use_filesystem("btrfs")
        self.writeback_blamed_on_dd(self.subscribe())

    def test_btrfs_over_two_disks_writeback_blamed_on_writer(self):
        """A btrfs mirrored over two disks: the flusher's write wakes both,
        and each spin-up is dd's."""
        pair = LoopBtrfsPair(self.tmp)
        self.addCleanup(pair.cleanup)
        os.sync()
        lines = self.subscribe()
        self.wait_idle(lines, disks=pair.disks)
        dd = subprocess.Popen(["dd", "if=/dev/zero", "of=" + os.path.join(pair.mnt, "out"),
                               "bs=4k", "count=64", "status=none"])
        dd.wait()
        got = {}
        deadline = time.monotonic() + 20
        while len(got) < 2 and time.monotonic() < deadline:
            line = lines.get(deadline - time.monotonic())
            if line is None:
                break
            s = json.loads(line)
            if s["Disk"] in pair.disks and s["Disk"] not in got:
                got[s["Disk"]] = s
        self.assertEqual(sorted(got), sorted(pair.disks), "%r\n%s" % (got, self.daemon_log()))
        for s in got.values():
            self.assertEqual((s["Comm"], s["Pid"], s["Operation"], s["Via"]),
                             ("dd", dd.pid, "write", "writeback"), s)

    def test_xfs_writeback_blamed_on_writer(self):
        self.use_filesystem("xfs")
        self.writeback_blamed_on_dd(self.subscribe())

    def test_named_thread_is_its_process(self):
        """A read, then a write left to the flusher, each from a thread
        named "Cache2 I/O": the SpinUp names the process (its tgid and the
        main thread's name), with the thread as Thread."""
        lines = self.subscribe()
        me = own_comm()
        self.wait_idle(lines)
        reader = NamedThread(lambda: direct_read(self.files[1], 0))
        try:
            self.assertIsNone(reader.error)
            s = self.next_loop_spinup(lines)
        finally:
            reader.done()
        self.assertIsNotNone(s, "no SpinUp for the thread's read\n" + self.daemon_log())
        self.assertEqual((s["Comm"], s["Pid"], s.get("Thread"), s["Operation"], s["Via"]),
                         (me, os.getpid(), THREAD_NAME, "read", "direct"), s)
        self.assertEqual(s["SubmitterComm"], THREAD_NAME)

        self.wait_idle(lines)

        def write():
            with open(os.path.join(self.fs.mnt, "cache-entry"), "wb") as f:
                f.write(os.urandom(64 << 10))

        writer = NamedThread(write)
        try:
            self.assertIsNone(writer.error)
            s = self.next_loop_spinup(lines)
        finally:
            writer.done()
        self.assertIsNotNone(s, "no SpinUp for the thread's write\n" + self.daemon_log())
        self.assertEqual((s["Comm"], s["Pid"], s.get("Thread"), s["Operation"], s["Via"]),
                         (me, os.getpid(), THREAD_NAME, "write", "writeback"), s)

    def test_exited_program_is_named_not_its_thread(self):
        """A program whose I/O thread, named "Cache2 I/O", reads and whose
        process then exits: the SpinUp names the program (its name and
        pid) with the thread as Thread. The daemon is stopped meanwhile,
        so it reads the I/O only once /proc has forgotten the thread and
        its process (tracefs follows them through their task events)."""
        prog = os.path.join(self.tmp, "lm-io-reader")
        with open(prog, "w") as f:
            f.write(READER_PROGRAM)
        os.chmod(prog, 0o755)
        lines = self.subscribe()
        daemon = self.daemon_pid()
        self.wait_idle(lines)
        os.kill(daemon, signal.SIGSTOP)
        self.addCleanup(os.kill, daemon, signal.SIGCONT)
        try:
            reader = subprocess.Popen([prog, self.files[1], THREAD_NAME],
                                      stderr=subprocess.PIPE, text=True)
            _, err = reader.communicate(timeout=60)
            self.assertFalse(os.path.exists("/proc/%d" % reader.pid))
        finally:
            os.kill(daemon, signal.SIGCONT)
        self.assertEqual(reader.returncode, 0, err)
        s = self.next_loop_spinup(lines)
        self.assertIsNotNone(s, "no SpinUp for the reader\n" + self.daemon_log())
        self.assertEqual((s["Comm"], s["Pid"], s.get("Thread"), s["Operation"], s["Via"]),
                         ("lm-io-reader", reader.pid, THREAD_NAME, "read", "direct"), s)
        self.assertEqual(s["SubmitterComm"], THREAD_NAME)

    def test_fio_io_uring_direct_reads_on_btrfs(self):
        """fio reading with io_uring and O_DIRECT on btrfs, its requests
        handed to the ring's worker threads (IOSQE_ASYNC: iou-wrk-N), then
        submitted by an SQ-poll thread (iou-sqp-N): both are fio's."""
        path = self.use_filesystem("btrfs")
        lines = self.subscribe()
        for option, thread in (("--force_async=1", "iou-wrk-"), ("--sqthread_poll=1", "iou-sqp-")):
            self.wait_idle(lines)
            fio = subprocess.run(["fio", "--name=uring", "--filename=" + path,
                                  "--ioengine=io_uring", option, "--direct=1", "--rw=randread",
                                  "--bs=4k", "--size=1M", "--io_size=256k", "--iodepth=4",
                                  "--output-format=terse"],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(fio.returncode, 0, fio.stderr)
            s = self.next_loop_spinup(lines)
            self.assertIsNotNone(s, "no SpinUp for fio's reads\n" + self.daemon_log())
            self.assertEqual((s["Comm"], s["Operation"], s["Via"]), ("fio", "read", "direct"), s)
            self.assertTrue(s.get("Thread", "").startswith(thread), (option, s))

    def test_excluded_disk_is_not_watched(self):
        """Exclude=true: the disk's reads and the flusher's writes make no
        SpinUp (the filter drops them before they reach the daemon); once
        included again through laptop-modectl, a read after an idle gap
        does, which shows that the silence meant something."""
        with open(self.config, "a") as f:
            f.write("[Disk %s]\nExclude=true\n" % self.fs.disk)
        lines = self.subscribe()
        self.wait_for_log("Disks excluded, not watched: %s\n" % self.fs.disk)
        disks = self.properties()["Disks"]
        self.assertTrue(disks[self.fs.disk]["Excluded"], disks[self.fs.disk])
        self.wait_idle(lines)
        reads, writes = self.disk_io()
        uncache(self.files[0])
        subprocess.run(["cat", self.files[0]], stdout=subprocess.DEVNULL, check=True)
        self.wait_idle(lines, keep=True)
        direct_read(self.files[1], 0)
        self.wait_idle(lines, keep=True)
        subprocess.run(["dd", "if=/dev/zero", "of=" + os.path.join(self.fs.mnt, "out"), "bs=4k",
                        "count=64", "status=none"], check=True)
        os.sync()  # the journal commits now, not 5 s after the include
        self.wait_idle(lines, keep=True)
        after = self.disk_io()
        # The disk did wake for each of them: reads and the flusher's writes.
        self.assertGreaterEqual(after[0] - reads, 2, after)
        self.assertGreater(after[1], writes, after)
        included_us = time.time() * 1e6
        r = self.ctl_run("set", "DiskSettings={'%s': {'Exclude': <false>}}" % self.fs.disk)
        self.assertEqual(r.returncode, 0, r.err)
        self.wait_for_log("Disks excluded, not watched: none\n")
        # Once watched, the kernel's own writes (a journal commit) may come
        # before the marker; nothing from the excluded time may.
        got = self.marker(lines)
        early = [g for g in got if g["Time"] < included_us or g["Comm"] in ("cat", "dd")]
        self.assertEqual(early, [], "SpinUps of the excluded disk:\n" + self.daemon_log())
        self.assertFalse(self.properties()["Disks"][self.fs.disk]["Excluded"])

    def test_exclude_while_laptop_mode_is_on(self):
        """Exclude=true set through laptop-modectl while laptop mode is on
        (the path that applies disk policies): the disk's idle timer stops
        with it (no state change is logged for it once excluded, across
        more than SpinUpIdle), and once included again it is watched: a
        read after an idle gap is a SpinUp."""
        self.config_text = self.config_text.replace("Mode=off", "Mode=on\nRemount=false")
        with open(self.config, "w") as f:
            f.write(self.config_text)
        lines = self.subscribe()
        self.wait_for_log("Laptop mode on")
        self.wait_idle(lines)
        # Awake, with its idle timer running, when it is excluded.
        direct_read(self.files[1], 0)
        self.assertIsNotNone(self.next_loop_spinup(lines), "no SpinUp for the read")
        r = self.ctl_run("set", "DiskSettings={'%s': {'Exclude': <true>}}" % self.fs.disk)
        self.assertEqual(r.returncode, 0, r.err)
        log = self.wait_for_log("Disks excluded, not watched: %s\n" % self.fs.disk)
        start = len(log)
        self.assertTrue(self.properties()["Disks"][self.fs.disk]["Excluded"])
        # A read now would have been a SpinUp; excluded, it must not be,
        # and no timer may look at the disk any more.
        uncache(self.files[0])
        subprocess.run(["cat", self.files[0]], stdout=subprocess.DEVNULL, check=True)
        self.wait_idle(lines, keep=True)
        self.wait_idle(lines, keep=True)
        changed = [x for x in self.daemon_log()[start:].splitlines()
                   if "Disk %s:" % self.fs.disk in x or "Spin-up of %s" % self.fs.disk in x]
        self.assertEqual(changed, [], "the excluded disk was still watched")
        included_us = time.time() * 1e6
        r = self.ctl_run("set", "DiskSettings={'%s': {'Exclude': <false>}}" % self.fs.disk)
        self.assertEqual(r.returncode, 0, r.err)
        self.wait_for_log("Disks excluded, not watched: none\n")
        got = self.marker(lines)
        early = [g for g in got if g["Time"] < included_us or g["Comm"] == "cat"]
        self.assertEqual(early, [], "SpinUps of the excluded disk:\n" + self.daemon_log())
        self.assertEqual(self.stop_daemon(), 0)

    # Three programs (dd under other names: the kernel names a task after
    # its file) and how much each writes, in KiB.
    WRITERS = {"wr-a": 8, "wr-b": 64, "wr-c": 256}

    def writer_programs(self, mnt):
        """The writers' programs (off the loop disk) and their files on
        @mnt, written once and synced: an overwrite then allocates nothing
        (ext4, xfs), so the flusher's first write is data. inode → writer."""
        inodes = {}
        for name, kib in self.WRITERS.items():
            program = os.path.join(self.tmp, name)
            if not os.path.exists(program):
                shutil.copy("/bin/dd", program)
            path = os.path.join(mnt, "f-" + name)
            with open(path, "wb") as f:
                f.write(os.urandom(kib << 10))
            inodes[os.stat(path).st_ino] = name
        os.sync()
        return inodes

    def write_as(self, name, mnt):
        # Whole pages: a part of one would have the write read the rest in
        # first, if the page had left the cache, and that read wakes the disk.
        subprocess.run([os.path.join(self.tmp, name), "if=/dev/urandom",
                        "of=" + os.path.join(mnt, "f-" + name), "bs=4k",
                        "count=%d" % (self.WRITERS[name] // 4), "conv=notrunc", "status=none"],
                       check=True)

    def three_writers(self, lines, fstype, mnt, disk):
        """In several orders, the writers dirty their own files 0.3 s apart;
        the flusher then writes them out, oldest first. Every writeback
        SpinUp names the writer of the inode its write carries, and the
        first is the oldest's; never the last to dirty something. btrfs's
        btree (inode 1), written for all three in the flusher's pass, may
        name any of them."""
        inodes = self.writer_programs(mnt)
        # Every order of the three, until three rounds have shown writeback.
        orders = list(itertools.permutations(sorted(self.WRITERS)))
        orders = orders[:1] + orders[-1:] + orders[1:-1]  # a-b-c, c-b-a first
        shown, skipped = 0, []
        for order in orders:
            if shown == 3:
                break
            self.wait_idle(lines, disks=[disk])
            for name in order:
                self.write_as(name, mnt)
                time.sleep(0.3)
            got = [json.loads(x) for x in lines.drain(IDLE + 4)]
            got = [g for g in got if g["Disk"] == disk]
            what = "%s, order %s: %r\n%s" % (fstype, order, got, self.daemon_log())
            # Every writeback SpinUp names the writer of the inode it carries.
            wb = [g for g in got if g["Via"] == "writeback"]
            for g in wb:
                if fstype == "btrfs" and g.get("Inode") == 1:
                    self.assertIn(g["Comm"], self.WRITERS, what)
                    continue
                self.assertIn(g.get("Inode"), inodes, what)
                self.assertEqual(g["Comm"], inodes[g["Inode"]], what)
            # A writer's write() may itself read first (btrfs's metadata,
            # for one): that read wakes the disk, named rightly after the
            # writer, and the writeback then finds the disk awake. Such a
            # round says nothing of which write woke the disk; the next
            # order is tried instead.
            if got and got[0]["Via"] != "writeback" and got[0]["Operation"] == "read":
                self.assertIn(got[0]["Comm"], order, what)
                skipped.append("%s (woken by %s's own read, %s, sector %s)"
                               % ("-".join(order), got[0]["Comm"], got[0]["Via"],
                                  got[0].get("Sector")))
                print("# %s: order %s" % (fstype, skipped[-1]))
                continue
            shown += 1
            self.assertTrue(wb, "no writeback SpinUp: " + what)
            first = wb[0]
            if not (fstype == "btrfs" and first.get("Inode") == 1):
                self.assertEqual(first["Comm"], order[0], what)
        self.assertEqual(shown, 3, "%s: only %d of %d orders showed writeback; the others: %s"
                         % (fstype, shown, len(orders), "; ".join(skipped)))

    def test_three_writers_ext4(self):
        lines = self.subscribe()
        self.three_writers(lines, "ext4", self.fs.mnt, self.fs.disk)

    def test_three_writers_btrfs(self):
        self.use_filesystem("btrfs")
        self.three_writers(self.subscribe(), "btrfs", self.fs.mnt, self.fs.disk)

    def test_three_writers_xfs(self):
        self.use_filesystem("xfs")
        self.three_writers(self.subscribe(), "xfs", self.fs.mnt, self.fs.disk)

    def fsynced_writer_not_blamed_later(self, lines, fstype):
        """A program writes and fsyncs; then nothing is dirtied. The
        filesystem's own writes after (btrfs's transaction commit, xfs's
        log covering, made to come more than SpinUpIdle after the fsync
        here) are the kernel's: there is a later SpinUp (else the check
        would hold for want of one), and none names the program."""
        program = os.path.join(self.tmp, "wr-fsync")
        shutil.copy("/bin/dd", program)
        self.wait_idle(lines)
        subprocess.run([program, "if=/dev/urandom", "of=" + os.path.join(self.fs.mnt, "synced"),
                        "bs=64k", "count=4", "conv=fsync", "status=none"], check=True)
        done_us = time.time() * 1e6
        later = self.spinups_after(lines, done_us, 20)
        print("%s: %d SpinUps after the fsync: %r" % (fstype, len(later), later))
        self.assertNotEqual(later, [], "%s wrote nothing of its own in 20 s after the fsync: "
                            "nothing to blame\n%s" % (fstype, self.daemon_log()))
        self.assertEqual([g for g in later if g.get("Comm") == "wr-fsync"], [],
                         "%r\n%s" % (later, self.daemon_log()))

    def spinups_after(self, lines, after_us, timeout, tail=2):
        """The loop disk's SpinUps after @after_us: up to the first (within
        @timeout seconds) and what comes @tail seconds after it."""
        def later(line):
            g = json.loads(line)
            return g["Disk"] == self.fs.disk and g["Time"] > after_us
        got = lines.until(later, timeout)
        if got is None:
            return []
        return [json.loads(x) for x in got + lines.drain(tail) if later(x)]

    def expire_soon(self):
        """Dirty data expires after 5 s, looked for every second."""
        lmtest.hold_value(self, "/proc/sys/vm/dirty_expire_centisecs", "500")
        lmtest.hold_value(self, "/proc/sys/vm/dirty_writeback_centisecs", "100")

    def test_fsynced_writer_not_blamed_later_ext4(self):
        # ext4's own write after an fsync is the flusher's: the journal's
        # metadata written home (its checkpoint), once expired.
        self.expire_soon()
        self.fsynced_writer_not_blamed_later(self.subscribe(), "ext4")

    def test_flusher_pass_starting_with_nobodys_data_ext4(self):
        """A flusher pass whose first bio carries nobody's data (ext4's
        metadata written home after a journal commit: the block device's
        own pages, dirtied by jbd2) and then a program's file: the spin-up
        is held for the pass's next bios and names that program, via
        writeback, its first sector not the program's. The pass has this
        order when both have expired before it starts: the periodic
        flusher is off while they are dirtied and expire (and the journal
        commits every 30 s only), then turned on, which wakes it."""
        self.expire_soon()
        subprocess.run(["mount", "-o", "remount,commit=30", self.fs.mnt], check=True)
        lines = self.subscribe()
        for name in ("wr-meta", "wr-late"):
            shutil.copy("/bin/dd", os.path.join(self.tmp, name))
        seen = []
        for attempt in range(3):
            self.wait_idle(lines)
            lmtest.hold_value(self, "/proc/sys/vm/dirty_writeback_centisecs", "0")
            meta = os.path.join(self.fs.mnt, "meta-%d" % attempt)
            late = os.path.join(self.fs.mnt, "late-%d" % attempt)
            # A new file, fsynced: its metadata goes through the journal,
            # and the commit leaves the block device's pages dirty.
            subprocess.run([os.path.join(self.tmp, "wr-meta"), "if=/dev/urandom", "of=" + meta,
                            "bs=4k", "count=1", "conv=fsync", "status=none"], check=True)
            time.sleep(0.2)
            subprocess.run([os.path.join(self.tmp, "wr-late"), "if=/dev/urandom", "of=" + late,
                            "bs=64k", "count=4", "status=none"], check=True)
            time.sleep(6)
            done_us = time.time() * 1e6
            with open("/proc/sys/vm/dirty_writeback_centisecs", "w") as f:
                f.write("100")
            later = self.spinups_after(lines, done_us, 10)
            print("# attempt %d: %r; wr-late's sectors %r, inode %d"
                  % (attempt + 1, later, file_sectors(late), os.stat(late).st_ino))
            self.assertEqual([g for g in later if g.get("Comm") == "wr-meta"], [],
                             "the fsynced writer named for the pass after\n" + self.daemon_log())
            if not later:
                continue
            first = later[0]
            ino = os.stat(late).st_ino
            sectors = file_sectors(late)
            seen.append(first)
            if first.get("Comm") == "wr-late" and first.get("Inode") == ino \
                    and not any(a <= first["Sector"] < b for a, b in sectors):
                self.assertEqual(first["Via"], "writeback", first)
                return
        self.fail("no pass began with nobody's data and went on with wr-late's in 3 tries: %r\n%s"
                  % (seen, self.daemon_log()))

    def test_fsynced_writer_not_blamed_later_btrfs(self):
        self.use_filesystem("btrfs")
        # A commit every 4 s: the one after the fsync comes past SpinUpIdle.
        subprocess.run(["mount", "-o", "remount,commit=4", self.fs.mnt], check=True)
        self.fsynced_writer_not_blamed_later(self.subscribe(), "btrfs")

    def test_fsynced_writer_not_blamed_later_xfs(self):
        # xfssyncd covers the log after it has been idle: every 4 s here,
        # past SpinUpIdle, so that each covering write is a spin-up. Set
        # before the mount: the log worker's first run is queued by it.
        lmtest.hold_value(self, "/proc/sys/fs/xfs/xfssyncd_centisecs", "400")
        self.use_filesystem("xfs")
        self.fsynced_writer_not_blamed_later(self.subscribe(), "xfs")

    def test_forged_trace_line_in_a_file_name(self):
        """A program whose file name holds newlines and two whole
        block_bio_queue lines for the loop disk (one stamped now, one far in
        the future) is run: no SpinUp and no history entry come from them,
        and real reads after it (ours, then a cat) are still spin-ups. On
        tracefs, the exec event would print the name raw into trace_pipe;
        on bpf nothing is text, and the same must hold."""
        lines = self.subscribe()
        with open("/sys/block/%s/dev" % self.fs.disk) as f:
            devnum = f.read().strip().replace(":", ",")
        self.wait_idle(lines)
        now = time.monotonic()
        forged = "".join("\n            fake-1       [000] ..... %d.%06d: block_bio_queue: "
                         "%s W 0 + 8 [fake]\n" % (int(ts), int(ts % 1 * 1e6), devnum)
                         for ts in (now + 0.2, 2000000000.0))
        self.assertLess(len(("x" + forged).encode()), 256)
        # Off the loop disk: running it is no I/O there.
        program = os.path.join(self.tmp, "x" + forged)
        shutil.copy("/bin/true", program)
        os.chmod(program, 0o755)
        self.addCleanup(os.unlink, program)
        subprocess.run([program], check=True)
        # Past SpinUpIdle: a forged "write" would have been a spin-up by now.
        time.sleep(IDLE + 1)
        got = self.marker(lines)
        self.assertEqual(got, [], "SpinUps from a forged trace line:\n" + self.daemon_log())
        self.wait_idle(lines)
        uncache(self.files[0])
        subprocess.run(["cat", self.files[0]], stdout=subprocess.DEVNULL, check=True)
        s = self.next_loop_spinup(lines)
        self.assertIsNotNone(s, "the cat after the forged lines made no SpinUp\n" + self.daemon_log())
        self.assertEqual((s["Comm"], s["Operation"]), ("cat", "read"), s)
        hist = [json.loads(x) for x in self.ctl_run("spinups", "--json", check=True).out.splitlines()]
        self.assertEqual([h for h in hist if h.get("Comm") == "fake" or h.get("Pid") == 1], [], hist)
        self.assertIn("cat", [h.get("Comm") for h in hist if h["Disk"] == self.fs.disk])

    def test_history_and_stop(self):
        lines = self.subscribe()
        self.wait_idle(lines)
        uncache(self.files[0])
        subprocess.run(["cat", self.files[0]], stdout=subprocess.DEVNULL, check=True)
        self.assertIsNotNone(self.next_loop_spinup(lines), "no SpinUp for the cat")
        hist = [json.loads(x) for x in self.ctl_run("spinups", "--json", check=True).out.splitlines()]
        self.assertIn(self.fs.disk, [h["Disk"] for h in hist])
        self.assertEqual(self.stop_daemon(), 0)


class BpfSpinUpTest(RealSpinUp, DaemonTestCase):
    backend = "bpf"


class TracefsSpinUpTest(RealSpinUp, DaemonTestCase):
    backend = "tracefs"


if __name__ == "__main__":
    lmtest.main()
