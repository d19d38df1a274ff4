#!/usr/bin/python3
"""Tier 2: SATA link power, runtime PM and NVMe latency tolerance (issue 18).

The real daemon on a private bus against a fake root whose /sys is laid out
as the kernel lays it out: an AHCI controller with a disk on host0, an empty
port at keep_firmware_settings, a USB bridge host without the policy file and
a hot-plug port; an NVMe drive with APST and one without (no
pm_qos_latency_tolerance_us). Start applies, Disks and `laptop-modectl disks`
show it, Stop puts back the originals, kill -9 and a restart put them back,
and a value someone else changed is left alone.
"""

import json
import os
import signal
import unittest

import lmtest
from lmtest import DaemonTestCase, is_root

AHCI = "/sys/devices/pci0000:00/0000:00:1f.2"
HOST0 = AHCI + "/ata1/host0/scsi_host/host0/link_power_management_policy"
HOST1 = AHCI + "/ata2/host1/scsi_host/host1/link_power_management_policy"
HOST3 = AHCI + "/ata4/host3/scsi_host/host3/link_power_management_policy"
SDA = AHCI + "/ata1/host0/target0:0:0/0:0:0:0"
BRIDGE = "/sys/devices/pci0000:00/0000:00:1d.0"
NVME_PCI = BRIDGE + "/0000:3d:00.0"
NVME0 = NVME_PCI + "/nvme/nvme0"
NVME1_PCI = "/sys/devices/pci0000:00/0000:00:1d.4/0000:3e:00.0"
LATENCY = NVME0 + "/power/pm_qos_latency_tolerance_us"

ORIGINALS = {
    HOST0: "max_performance",
    # keep_firmware_settings takes no write: max_performance comes back.
    HOST1: "max_performance",
    HOST3: "max_performance",
    AHCI + "/power/control": "on",
    SDA + "/power/control": "on",
    SDA + "/power/autosuspend_delay_ms": "-1",
    LATENCY: "100000",
    NVME_PCI + "/power/control": "on",
    NVME1_PCI + "/power/control": "auto",
    BRIDGE + "/power/control": "on",
}

# As the kernel has them before the first Start.
BEFORE = dict(ORIGINALS, **{HOST1: "keep_firmware_settings"})

APPLIED = dict(ORIGINALS)
APPLIED.update({
    HOST0: "med_power_with_dipm",
    HOST1: "med_power_with_dipm",
    AHCI + "/power/control": "auto",
    SDA + "/power/control": "auto",
    SDA + "/power/autosuspend_delay_ms": "15000",
    LATENCY: "any",
    NVME_PCI + "/power/control": "auto",
})

CONFIG = """[LaptopMode]
Mode=off
Attribution=none
Remount=false
SpinUpIdle=1
RuntimePMAutosuspendMs=15000
NvmeLatencyToleranceUs=any
"""

STAT = "1 0 0 0 0 0 0 0 0 0 0\n"



def build_sysfs(root):
    """The tree of the C unit test (tests/test-hwpower.c), in the fake root."""
    def put(path, text):
        os.makedirs(os.path.dirname(root.file(path)), exist_ok=True)
        root.write(path, text)

    def link(path, target):
        os.makedirs(os.path.dirname(root.file(path)), exist_ok=True)
        os.symlink(target, root.file(path))

    def pci(dev, depth, control):
        link(dev + "/subsystem", "../" * depth + "bus/pci")
        put(dev + "/power/control", control + "\n")

    os.makedirs(root.file("/sys/bus/pci/devices"))
    pci(AHCI, 3, "on")
    put(HOST0, "max_performance\n")
    put(AHCI + "/ata1/host0/scsi_host/host0/ahci_port_cmd", "400006\n")
    put(HOST1, "keep_firmware_settings\n")
    os.makedirs(root.file(AHCI + "/ata3/host2/scsi_host/host2"))
    put(HOST3, "max_performance\n")
    put(AHCI + "/ata4/host3/scsi_host/host3/ahci_port_cmd", "6c0016\n")
    for i in range(4):
        link("/sys/class/scsi_host/host%d" % i,
             "../../devices/pci0000:00/0000:00:1f.2/ata%d/host%d/scsi_host/host%d" % (i + 1, i, i))
    put(SDA + "/power/control", "on\n")
    put(SDA + "/power/autosuspend_delay_ms", "-1\n")
    put(SDA + "/model", "FAKE SSD\n")
    for name in ("stat", "size", "removable", "queue/rotational", "queue/read_ahead_kb"):
        put(SDA + "/block/sda/" + name, {"stat": STAT, "size": "1000\n"}.get(name, "0\n"))
    link(SDA + "/block/sda/device", "../../../0:0:0:0")
    link("/sys/block/sda", "../devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda")

    pci(BRIDGE, 3, "on")
    pci(NVME_PCI, 4, "on")
    put(LATENCY, "100000\n")
    for name in ("stat", "size"):
        put(NVME0 + "/nvme0n1/" + name, STAT if name == "stat" else "1000\n")
    link(NVME0 + "/nvme0n1/device", "../../nvme0")
    link("/sys/class/nvme/nvme0", "../../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0")
    link("/sys/block/nvme0n1", "../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1")
    pci(NVME1_PCI, 4, "auto")
    os.makedirs(root.file(NVME1_PCI + "/nvme/nvme1/power"))
    for name in ("stat", "size"):
        put(NVME1_PCI + "/nvme/nvme1/nvme1n1/" + name, STAT if name == "stat" else "1000\n")
    link(NVME1_PCI + "/nvme/nvme1/nvme1n1/device", "../../nvme1")
    link("/sys/class/nvme/nvme1", "../../devices/pci0000:00/0000:00:1d.4/0000:3e:00.0/nvme/nvme1")
    link("/sys/block/nvme1n1", "../devices/pci0000:00/0000:00:1d.4/0000:3e:00.0/nvme/nvme1/nvme1n1")



@unittest.skipUnless(is_root(), "needs root: polkitd, and Start as root")
class HwPowerTest(DaemonTestCase):
    config_text = CONFIG

    def setUp(self):
        super().setUp()
        build_sysfs(self.root)
        self.start_daemon()

    def sysfs(self):
        return {path: self.root.read(path) for path in ORIGINALS}

    def wait_sysfs(self, want, what):
        self.wait_until(lambda: self.sysfs() == want, 15,
                        "%s: %r\n%s" % (what, self.sysfs(), self.daemon_log()))

    def disks(self):
        return self.properties()["Disks"]

    def test_start_stop_restores_exactly(self):
        self.assertEqual(self.sysfs(), BEFORE)
        self.ctl_run("start", check=True)
        self.wait_sysfs(APPLIED, "applied after Start")

        def shown():
            d = self.disks()
            return (d.get("sda", {}).get("LinkPolicy") == "med_power_with_dipm"
                    and d.get("nvme0n1", {}).get("NvmeLatencyToleranceUs") == "any")
        self.wait_until(shown, 15, "Disks to show the applied values: %r" % self.disks())
        d = self.disks()
        self.assertEqual(d["sda"]["SataHost"], "host0")
        self.assertEqual(d["sda"]["RuntimePM"], "auto")
        self.assertEqual(d["sda"]["AutosuspendMs"], "15000")
        self.assertEqual(d["sda"]["Controller"], "0000:00:1f.2")
        self.assertEqual(d["sda"]["ControllerRuntimePM"], "auto")
        self.assertEqual(d["nvme0n1"]["Controller"], "0000:3d:00.0")
        self.assertNotIn("NvmeLatencyToleranceUs", d["nvme1n1"])
        self.assertNotIn("SataHost", d["nvme0n1"])
        props = self.properties()
        self.assertEqual(props["SataLinkPolicy"], "med_power_with_dipm")
        self.assertEqual(props["RuntimePM"], True)
        self.assertEqual(props["RuntimePMAutosuspendMs"], 15000)
        self.assertEqual(props["NvmeLatencyToleranceUs"], "any")

        r = self.ctl_run("disks", check=True)
        self.assertIn("host=host0 link=med_power_with_dipm runtime-pm=auto", r.out)
        self.assertIn("nvme-latency-us=any", r.out)
        j = json.loads(self.ctl_run("disks", "--json", check=True).out)
        self.assertEqual(j["sda"]["LinkPolicy"], "med_power_with_dipm")

        self.ctl_run("stop", check=True)
        self.wait_sysfs(ORIGINALS, "originals after Stop")
        self.wait_until(lambda: self.disks()["sda"].get("LinkPolicy") == "max_performance", 15,
                        "Disks to show the originals")

    def test_kill9_then_restart_restores(self):
        self.ctl_run("start", check=True)
        self.wait_sysfs(APPLIED, "applied after Start")
        self.stop_daemon(signal.SIGKILL)
        self.assertEqual(self.sysfs(), APPLIED)
        self.start_daemon()
        self.wait_sysfs(ORIGINALS, "originals after kill -9 and a restart")
        self.wait_for_log("Restoring the hardware power settings")

    def test_someone_else_changed_is_left(self):
        self.ctl_run("start", check=True)
        self.wait_sysfs(APPLIED, "applied after Start")
        # powertop --auto-tune or TLP, while laptop mode is on.
        self.root.write(HOST0, "min_power\n")
        self.root.write(LATENCY, "5000\n")
        self.ctl_run("stop", check=True)
        want = dict(ORIGINALS)
        want.update({HOST0: "min_power", LATENCY: "5000"})
        self.wait_sysfs(want, "theirs left, the rest restored")
        self.wait_for_log("changed to min_power by someone else")
        # Found at the Stop (the daemon looked anyway) and listed, once each.
        conflicts = {what: (expected, found)
                     for what, _, expected, found in self.properties()["Conflicts"]}
        self.assertEqual(conflicts.get("/" + HOST0.lstrip("/")), ("med_power_with_dipm", "min_power"),
                         conflicts)
        self.assertEqual(conflicts.get("/" + LATENCY.lstrip("/")), ("any", "5000"), conflicts)

    def test_configure_and_exclude(self):
        self.ctl_run("start", check=True)
        self.wait_sysfs(APPLIED, "applied after Start")
        # While on: a new policy, and sda excluded (its host and controller
        # go back, host1 on the same controller keeps the new policy).
        self.ctl_run("set", "SataLinkPolicy=min_power",
                     "DiskSettings={'sda': {'Exclude': <true>}}", check=True)
        want = dict(APPLIED)
        want.update({HOST0: "max_performance", HOST1: "min_power",
                     AHCI + "/power/control": "on", SDA + "/power/control": "on",
                     SDA + "/power/autosuspend_delay_ms": "-1"})
        self.wait_sysfs(want, "after Configure")
        self.ctl_run("set", "SataLinkPolicy=keep", "NvmeLatencyToleranceUs=keep", check=True)
        want.update({HOST1: "max_performance", LATENCY: "100000"})
        self.wait_sysfs(want, "after keep")
        self.ctl_run("stop", check=True)
        self.wait_sysfs(ORIGINALS, "originals after Stop")


if __name__ == "__main__":
    lmtest.main()
