#!/usr/bin/python3
"""Tier 3: passthrough wakers on the real kernel, per backend (bpf,
tracefs). A driver-private request (REQ_OP_DRV_IN) that a process issues
must give a SpinUp naming it with Via "passthrough", though it never
appears as a bio nor in /sys/block/*/stat.

This machine has no SCSI or NVMe disk (and no scsi_debug module), but
virtio-blk sends one such request each time its serial number is read from
sysfs (virtblk_get_id): `cat /sys/block/vdX/serial` after the disk was
quiet for longer than SpinUpIdle. The disk is the machine's own and others
use it, so an attempt whose gap another I/O ended first is made again.
Read from a thread named as a browser's ("Cache2 I/O"), the request names
the process, with the thread as Thread.
"""

import json
import os
import subprocess
import threading
import time

import lmtest
from lmtest import DaemonTestCase
from test_spinup_dbus import LineReader
from test_spinup_realkernel import THREAD_NAME, name_this_thread, own_comm

IDLE = 1
ATTEMPTS = 8


def virtio_disk():
    for name in sorted(os.listdir("/sys/block")):
        if name.startswith("vd") and os.path.exists("/sys/block/%s/serial" % name):
            return name
    return None


@lmtest.realkernel
class RealPassthrough:
    fake_root = False
    backend = None

    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("needs root: BPF and tracefs")
        self.disk = virtio_disk()
        if self.disk is None:
            self.skipTest("no virtio-blk disk: no way to issue a driver-private request here "
                          "(no SCSI/NVMe disk; loop devices take no SG_IO)")
        if self.backend == "bpf" and not os.path.exists("/sys/kernel/btf/vmlinux"):
            self.skipTest("the kernel has no BTF, the bpf backend cannot load")
        self.config_text = ("[LaptopMode]\nMode=off\nAttribution=%s\nSpinUpIdle=%d\n"
                            % (self.backend, IDLE))
        super().setUp()

    def stat(self):
        with open("/sys/block/%s/stat" % self.disk) as f:
            return f.read().split()[:8]

    def wait_quiet(self, timeout=120):
        """Until the disk's counters stood still for longer than SpinUpIdle."""
        quiet = IDLE + 0.3
        last, since = self.stat(), time.monotonic()
        deadline = since + timeout
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self.stat()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return True
        return False

    def passthrough_spinup(self, issue):
        """The SpinUp of the request @issue() makes (it returns the pid
        that must be blamed), tried again while other I/O ends the gap."""
        self.start_daemon()
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                        "Attribution", check=True)
        self.assertEqual(r.out.strip(), 's "%s"' % self.backend, self.daemon_log())
        p = subprocess.Popen([self.ctl, "watch", "--json"], env=self.env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL)
        self.procs.append(p)
        self.addCleanup(lmtest.close_child, p)
        self.assertIn("Watching spin-ups", p.stderr.readline(), self.daemon_log())
        lines = LineReader(p.stdout)
        seen = []
        for attempt in range(ATTEMPTS):
            # cat's own pages in the page cache: its exec must not read
            # the disk before the request does.
            subprocess.run(["cat", "/dev/null"], check=True)
            if not self.wait_quiet():
                continue
            while lines.get(0) is not None:
                pass
            pid = issue()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                line = lines.get(deadline - time.monotonic())
                if line is None:
                    break
                s = json.loads(line)
                if s["Disk"] != self.disk:
                    continue
                seen.append(s)
                if s["Pid"] == pid and s["Via"] == "direct" and s["Operation"] == "read":
                    # cat paged something in from the disk (its binary or
                    # a library evicted meanwhile) before the request: that
                    # read ended the gap first; try again.
                    print("attempt %d: cat read the disk first: %r" % (attempt + 1, s))
                    break
                if s["Pid"] == pid:
                    self.assertEqual((s["Via"], s["Backend"]), ("passthrough", self.backend), s)
                    self.assertEqual(s["SubmitterPid"], pid)
                    if self.backend == "bpf" or "Uid" in s:
                        self.assertEqual(s["Uid"], 0)
                    self.assertLess(abs(s["Time"] / 1e6 - time.time()), 60)
                    print("attempt %d: %r" % (attempt + 1, s))
                    return s
                break  # another I/O ended the gap first: try again
        self.fail("in %d attempts no passthrough SpinUp named pid %d; seen on %s: %r\n%s"
                  % (ATTEMPTS, pid, self.disk, seen, self.daemon_log()))

    def test_serial_read_is_a_passthrough_spinup(self):
        def cat():
            p = subprocess.Popen(["cat", "/sys/block/%s/serial" % self.disk],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            p.wait()
            return p.pid

        s = self.passthrough_spinup(cat)
        self.assertEqual(s["Comm"], "cat", s)
        self.assertNotIn("Thread", s)

    def test_named_thread_is_its_process(self):
        """The same request from a thread named "Cache2 I/O" of this
        process, kept alive until the SpinUp is read (tracefs finds the
        thread's process in /proc)."""
        release = threading.Event()
        threads = []

        def read_serial():
            name_this_thread(THREAD_NAME)
            with open("/sys/block/%s/serial" % self.disk, "rb") as f:
                f.read()
            release.wait(60)

        def issue():
            release.set()  # the previous attempt's thread may go
            release.clear()
            t = threading.Thread(target=read_serial)
            threads.append(t)
            t.start()
            time.sleep(0.2)
            return os.getpid()

        try:
            s = self.passthrough_spinup(issue)
        finally:
            release.set()
            for t in threads:
                t.join(10)
        self.assertEqual((s["Comm"], s.get("Thread"), s["SubmitterComm"]),
                         (own_comm(), THREAD_NAME, THREAD_NAME), s)



class BpfPassthroughTest(RealPassthrough, DaemonTestCase):
    backend = "bpf"


class TracefsPassthroughTest(RealPassthrough, DaemonTestCase):
    backend = "tracefs"


if __name__ == "__main__":
    lmtest.main()
