#!/usr/bin/python3
"""Tier 3: this machine's disks (virtio, NVMe, loop) as laptop-moded lists
them: state "unknown", time asleep inferred from I/O, no errors; hot-plug
through uevents. Owns two loop devices, detached afterwards even on failure.
"""

import json
import mmap
import os
import subprocess
import unittest

import lmtest
from lmtest import DaemonTestCase


class LoopDevice:
    def __init__(self, base, name, size_mb=16):
        self.image = os.path.join(base, name + ".img")
        with open(self.image, "wb") as f:
            f.truncate(size_mb << 20)
        self.device = subprocess.run(["losetup", "--find", "--show", self.image], check=True,
                                     capture_output=True, text=True).stdout.strip()
        self.name = os.path.basename(self.device)

    def write(self):
        # O_DIRECT: the write reaches the device now, not at writeback time.
        fd = os.open(self.device, os.O_WRONLY | os.O_DIRECT)
        try:
            buf = mmap.mmap(-1, 4096)
            buf.write(b"x" * 4096)
            os.write(fd, buf)
        finally:
            os.close(fd)

    def detach(self):
        if self.device is not None:
            subprocess.run(["losetup", "-d", self.device], capture_output=True)
            self.device = None


@lmtest.realkernel
@unittest.skipUnless(*lmtest.can_run("root", "loop", tools=("losetup",)))
class RealDisksTest(DaemonTestCase):
    fake_root = False
    config_text = ("[LaptopMode]\nMode=off\nRemount=false\nSpinUpIdle=1\nDiskRecheck=2\n"
                   "Attribution=none\n")

    def setUp(self):
        super().setUp()
        self.loops = []
        self.addCleanup(self.detach_all)
        self.loops.append(LoopDevice(self.tmp, "before"))
        self.start_daemon()

    def detach_all(self):
        for loop in self.loops:
            loop.detach()

    def disks(self):
        return json.loads(self.ctl_run("disks", "--json", check=True).out)

    def test_real_disks(self):
        d = self.disks()
        loop = self.loops[0].name
        self.assertIn(loop, d)
        expected = [n for n in os.listdir("/sys/block") if n.startswith(("vd", "nvme", "sd"))]
        for name in expected:
            self.assertIn(name, d)
        for name, disk in d.items():
            self.assertNotIn("Error", disk, "%s: %r" % (name, disk))
            if not name.startswith(("sd", "hd")):
                self.assertEqual((disk["State"], disk["Inferred"], disk["Ata"]),
                                 ("unknown", True, False), name)
        for name in os.listdir("/sys/block"):
            if name.startswith(("ram", "zram")):
                self.assertNotIn(name, d)
        # The loop device goes quiet, then wakes on a write.
        self.wait_until(lambda: self.disks()[loop]["Asleep"], timeout=10, message="loop quiet")
        self.loops[0].write()
        self.wait_until(lambda: not self.disks()[loop]["Asleep"], timeout=10,
                        message="loop woken by a write")
        disk = self.disks()[loop]
        self.assertGreaterEqual(disk["SpinUps"], 1)
        self.assertGreaterEqual(disk["Transitions"], 2)
        self.assertGreaterEqual(disk["StandbySeconds"], 1)
        # Hot-plug: a loop device bound now is found through the uevent.
        self.loops.append(LoopDevice(self.tmp, "after"))
        late = self.loops[1].name
        self.wait_until(lambda: late in self.disks(), timeout=10, message="hot-plugged loop")
        self.loops[1].detach()
        self.wait_until(lambda: late not in self.disks(), timeout=10, message="loop detached")
        r = self.ctl_run("disks", check=True)
        self.assertIn(loop, r.out)
        self.assertNotIn("CRITICAL", self.daemon_log())
        self.assertNotIn("WARNING", self.daemon_log())


if __name__ == "__main__":
    lmtest.main()
