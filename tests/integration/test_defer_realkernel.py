#!/usr/bin/python3
"""Tier 3: laptop-modectl defer on the real kernel (issue 37), with the
bpf backend, on an ext4 loop disk inside the private mount namespace the
daemon shares; UPower (a python-dbusmock) says the machine is on battery.

The loop disk is left idle past SpinUpIdle, until the daemon counts it
asleep; `laptop-modectl defer -- cat FILE`, started in the filesystem's
root (the default --path is the current directory), must wait; another
program's read of an uncached file on that disk wakes it; the deferred cat
runs within 1 s after, and no SpinUp names it: it read while the disk was
awake anyway.
"""

import json
import os
import subprocess
import time

import lmtest
from lmtest import DaemonTestCase, read_real_vm, write_real_vm
from test_spinup_dbus import LineReader
from test_spinup_realkernel import IDLE, LoopExt4, can_run, uncache


@lmtest.realkernel
class DeferRealKernelTest(DaemonTestCase):
    fake_root = False
    extra_bus_config = lmtest.MOCK_BUS_POLICY

    def setUp(self):
        ok, why = can_run("bpf")
        if not ok:
            self.skipTest(why)
        self.machine_vm = read_real_vm()
        # Registered first, so it runs last: after the daemon is gone.
        self.addCleanup(write_real_vm, self.machine_vm)
        self.config_text = ("[LaptopMode]\nMode=on\nRemount=false\nAttribution=bpf\n"
                            "SpinUpIdle=%d\n" % IDLE)
        super().setUp()
        self.fs = LoopExt4(self.tmp)
        self.addCleanup(self.fs.cleanup)
        self.waker_file = os.path.join(self.fs.mnt, "waker")
        self.deferred_file = os.path.join(self.fs.mnt, "deferred")
        with open(self.waker_file, "wb") as f:
            f.write(os.urandom(256 << 10))
        with open(self.deferred_file, "w") as f:
            f.write("deferred content\n" * 1000)
        os.sync()
        self.start_mock("upower", {"OnBattery": True})

    def watch(self):
        p = subprocess.Popen([self.ctl, "watch", "--json"], env=self.env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL)
        self.procs.append(p)
        self.addCleanup(lmtest.close_child, p)
        self.assertIn("Watching spin-ups", p.stderr.readline(), self.daemon_log())
        return LineReader(p.stdout)

    def disk_io(self):
        with open("/sys/block/%s/stat" % self.fs.disk) as f:
            fields = f.read().split()
        return int(fields[0]), int(fields[4])

    def asleep(self):
        return self.properties()["Disks"].get(self.fs.disk, {}).get("Asleep") is True

    def test_defer_rides_another_programs_spin_up(self):
        self.start_daemon()
        self.wait_until(lambda: self.status()["PowerSource"] == "upower", message="UPower used")
        self.wait_until(lambda: self.status()["Active"], message="laptop mode on")
        lines = self.watch()
        uncache(self.waker_file)
        uncache(self.deferred_file)
        self.wait_until(self.asleep, timeout=60,
                        message="the loop disk counted asleep\n" + self.daemon_log())
        lines.drain(0)
        io_before = self.disk_io()

        deferred = subprocess.Popen([self.ctl, "defer", "--", "cat", self.deferred_file],
                                    cwd=self.fs.mnt, env=self.env, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    stdin=subprocess.DEVNULL)
        self.procs.append(deferred)
        out = LineReader(deferred.stdout)
        self.wait_for_log("; 1 waiting")
        # It waits, and costs the disk nothing meanwhile.
        self.assertIsNone(out.get(IDLE + 1), "the deferred cat ran while the disk slept")
        self.assertIsNone(deferred.poll())
        self.assertEqual(self.disk_io(), io_before, "the wait did I/O on the sleeping disk")
        self.assertTrue(self.asleep())

        # Another program reads an uncached file: the disk wakes.
        waker = subprocess.run(["cat", self.waker_file], stdout=subprocess.DEVNULL, check=True)
        woke = time.monotonic()
        line = out.get(10)
        ran_after = time.monotonic() - woke
        self.assertEqual(line, "deferred content\n", self.daemon_log())
        deferred.wait(timeout=10)
        self.assertEqual(deferred.returncode, 0, deferred.stderr.read())
        self.assertEqual(deferred.stderr.read(), "")
        print("the deferred cat printed %.2f s after the other program's read" % ran_after)
        self.assertLess(ran_after, 1.0)

        # The waker's read is the spin-up; the deferred cat (the defer's
        # own pid: it exec'd) is named by none.
        spinups = [json.loads(x) for x in lines.drain(IDLE + 1)]
        on_loop = [s for s in spinups if s["Disk"] == self.fs.disk]
        self.assertTrue(on_loop, "no SpinUp for the other program's read\n" + self.daemon_log())
        self.assertEqual(on_loop[0]["Comm"], "cat", on_loop)
        self.assertNotEqual(on_loop[0]["Pid"], deferred.pid)
        self.assertFalse([s for s in on_loop if s["Pid"] == deferred.pid], on_loop)
        self.assertIn("WaitAwake: a waiter ended (awake)", self.this_daemon_log())
        del waker


if __name__ == "__main__":
    lmtest.main()
