#!/usr/bin/python3
"""Tier 3: the real daemon on the real /proc/sys/vm of this machine.

The machine's values are saved before each test and written back after it,
whatever happens; the tests themselves set odd values first so that a
restore to defaults instead of to the originals cannot pass.
"""

import os
import signal
import subprocess
import unittest

import lmtest
from lmtest import DaemonTestCase, read_real_vm, write_real_vm


ok, why = lmtest.can_run("root", "vm")


@lmtest.realkernel
@unittest.skipUnless(ok, why)
class RealKernelTunablesTest(DaemonTestCase):
    fake_root = False
    # The machine's own filesystems are not this test's to remount
    # (test_remount.py does remounts, on loop devices of its own).
    config_text = "[LaptopMode]\nMode=off\nRemount=false\n"

    ODD = {
        "dirty_ratio": "17",
        "dirty_background_ratio": "7",
        "dirty_expire_centisecs": "1234",
        "dirty_writeback_centisecs": "499",
        "laptop_mode": "0",
    }

    def setUp(self):
        self.machine = read_real_vm()
        # Registered first, so it runs last: after the daemon is gone.
        self.addCleanup(write_real_vm, self.machine)
        super().setUp()

    def set_odd(self, values):
        write_real_vm(values)
        now = read_real_vm()
        for k, v in values.items():
            self.assertEqual(now[k], v, "could not set vm.%s for the test" % k)
        return now

    def expected_engine(self):
        with open("/proc/sys/kernel/osrelease") as f:
            major = int(f.read().split(".")[0])
        # auto prefers the user-space engine wherever its BPF program loads.
        if os.path.exists("/sys/kernel/btf/vmlinux"):
            return "userspace"
        return "kernel" if major < 7 and os.path.exists("/proc/sys/vm/laptop_mode") else "userspace"

    def test_start_stop_restores_exactly(self):
        before = self.set_odd(self.ODD)
        self.start_daemon()
        st = self.status()
        self.assertEqual(st["Engine"], self.expected_engine())
        self.ctl_run("start", check=True)
        now = read_real_vm()
        self.assertEqual(now["dirty_expire_centisecs"], "60000")
        self.assertEqual(now["dirty_writeback_centisecs"], "60000")
        self.assertEqual(now["dirty_ratio"], "60")
        # The user-space engine keeps background writeback off until near dirty_ratio.
        self.assertEqual(now["dirty_background_ratio"], "1" if st["Engine"] == "kernel" else "54")
        if st["Engine"] == "kernel":
            self.assertEqual(now["laptop_mode"], "2")
        self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Stop", check=True)
        self.assertEqual(read_real_vm(), before)

    def test_kill9_then_restart_restores(self):
        before = self.set_odd(self.ODD)
        self.start_daemon()
        self.gdbus_call("Start", check=True)
        self.assertEqual(read_real_vm()["dirty_ratio"], "60")
        self.stop_daemon(signal.SIGKILL)
        self.assertEqual(read_real_vm()["dirty_ratio"], "60")
        self.start_daemon()
        self.assertEqual(read_real_vm(), before)

    def test_sigterm_restores(self):
        before = self.set_odd(self.ODD)
        self.start_daemon()
        self.ctl_run("start", check=True)
        self.assertEqual(self.stop_daemon(signal.SIGTERM), 0)
        self.assertEqual(read_real_vm(), before)

    def test_dirty_bytes_originals(self):
        # A machine tuned in bytes: the kernel shows the ratios as 0 then, and
        # writing a ratio clears the bytes. Stop must bring the bytes back.
        before = self.set_odd({"dirty_expire_centisecs": "1234",
                               "dirty_bytes": "123456789", "dirty_background_bytes": "12345678"})
        self.assertEqual(before["dirty_ratio"], "0")
        self.start_daemon()
        self.ctl_run("start", check=True)
        now = read_real_vm()
        self.assertEqual((now["dirty_ratio"], now["dirty_bytes"]), ("60", "0"))
        self.ctl_run("stop", check=True)
        self.assertEqual(read_real_vm(), before)

    def test_kernel_refusal_rolls_back(self):
        """A real refusal: the last sysctl Start writes is made read-only by
        a bind mount in this test's own mount namespace (the machine's
        /proc/sys/vm is untouched outside it); every value written before
        it goes back to what it was."""
        if not lmtest.in_private_mounts():
            self.fail("not in a private mount namespace: unshare -m failed")
        # The last in lm-tunables-sysctl.c's plan: laptop_mode, writeback,
        # expire and dirty_ratio are written before it is refused.
        target = "/proc/sys/vm/dirty_background_ratio"
        before = self.set_odd(self.ODD)
        r = subprocess.run(["mount", "--bind", target, target], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.addCleanup(subprocess.run, ["umount", target], capture_output=True)
        r = subprocess.run(["mount", "-o", "remount,bind,ro", target], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with self.assertRaises(OSError, msg="the read-only bind mount did not stop a write"):
            with open(target, "w") as f:
                f.write(before["dirty_background_ratio"] + "\n")
        self.start_daemon()
        r = self.ctl_run("start")
        self.assertNotEqual(r.returncode, 0, r)
        self.assertIn("dirty_background_ratio", r.err)
        self.assertIn("Read-only file system", r.err)
        self.assertEqual(read_real_vm(), before, "the values written before the refusal were put back")
        self.assertEqual(self.status()["Active"], False)
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))


if __name__ == "__main__":
    lmtest.main()
