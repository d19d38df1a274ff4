#!/usr/bin/python3
"""Tier 3: a remount sets commit= and nothing else, on the real kernel.

A btrfs whose default subvolume is named `x,suid,dev`, mounted nosuid,nodev
(what udisks does with a user's own disk), and an ext4 mounted
nosuid,nodev,noexec: Start succeeds and each mount's own flags stay exactly
as they were while on and after Stop, through fspick(), and through mount(2)
where a seccomp filter on the daemon refuses fspick(); where mount(2) is
refused too, Start fails naming the mount and nothing changes. And the
filesystems of disks that can be pulled out (as the fake root's sysfs
describes the loop devices: removable media, USB, a SATA hot-plug port under
a stacked device) are not remounted at all.

Owns its loop devices and mounts, in a private mount namespace the daemon
shares; leaves none behind and never changes a filesystem it did not create
(the machine's own are listed in NoRemount). Tunables come from a fake root;
the mount table is the real one (proc/self/mountinfo is a symlink to it).
"""

import os
import signal
import subprocess
import unittest

import lmtest
from lmtest import DaemonTestCase, mountinfo

REMOUNT_TYPES = ("ext3", "ext4", "reiserfs", "btrfs")
SECCOMP = os.path.join(lmtest.BUILDDIR, "tests", "test-remount-seccomp")
HOSTILE_SUBVOL = "x,suid,dev"
PROC_FD = "mount(2) on /proc/self/fd"


def kernel_part(options):
    """The superblock options before btrfs's subvol=, which is written last."""
    return options.split(",subvol=", 1)[0]


def commit_of(options):
    found = [o for o in kernel_part(options).split(",") if o.startswith("commit=")]
    return found[0].split("=", 1)[1] if found else None


OK, WHY = lmtest.can_run("root", "namespace", "loop", built=(SECCOMP,),
                         tools=("losetup", "mkfs.ext4", "mkfs.btrfs", "btrfs", "mount", "umount"))


@lmtest.realkernel
class RemountFlagsBase(DaemonTestCase):
    fake_root = True

    def setUp(self):
        theirs = sorted({mp.decode("utf-8", "surrogateescape") for mp, (_, _, t, _) in
                         mountinfo().items() if t in REMOUNT_TYPES})
        self.config_text = "[LaptopMode]\nNoRemount=%s\n" % lmtest.key_file_list(theirs)
        super().setUp()
        self.mounted = []
        self.images = []
        self.addCleanup(self.cleanup_mounts)
        os.makedirs(self.root.file("/proc/self"))
        os.symlink("/proc/self/mountinfo", self.root.file("/proc/self/mountinfo"))

    def cleanup_mounts(self):
        if getattr(self, "daemon", None) is not None:
            lmtest.stop_process(self.daemon)
        lmtest.release_mounts(self.mounted, self.images)

    def run_ok(self, argv):
        r = subprocess.run(argv, capture_output=True)
        self.assertEqual(r.returncode, 0, "%s: %s" % (argv, r.stderr.decode(errors="replace")))
        return r.stdout.decode()

    def image(self, name, size_mb, fstype):
        image = os.path.join(self.tmp, name + ".img")
        with open(image, "wb") as f:
            f.truncate(size_mb << 20)
        self.images.append(image)
        self.run_ok({"ext4": ["mkfs.ext4", "-q", "-F"],
                     "btrfs": ["mkfs.btrfs", "-q", "-f"]}[fstype] + [image])
        return image

    def mount(self, image, fstype, name, options):
        mp = os.path.join(self.tmp, name)
        os.makedirs(mp, exist_ok=True)
        self.run_ok(["mount", "-t", fstype, "-o", "loop," + options, image, mp])
        self.mounted.append(mp)
        return mp

    def make_ext4(self, name, options):
        return self.mount(self.image(name, 32, "ext4"), "ext4", name, options)

    def make_hostile_btrfs(self, name, options="nosuid,nodev"):
        """A btrfs whose default subvolume is named x,suid,dev: mounted
        without subvol=, mountinfo says subvol=/x,suid,dev."""
        image = self.image(name, 128, "btrfs")
        mp = self.mount(image, "btrfs", name, "rw")
        self.run_ok(["btrfs", "-q", "subvolume", "create", os.path.join(mp, HOSTILE_SUBVOL)])
        self.run_ok(["btrfs", "subvolume", "set-default", os.path.join(mp, HOSTILE_SUBVOL)])
        self.run_ok(["umount", mp])
        self.mounted.remove(mp)
        mp = self.mount(image, "btrfs", name, options)
        self.assertTrue(mountinfo()[os.fsencode(mp)][3].endswith(",subvol=/" + HOSTILE_SUBVOL),
                        mountinfo()[os.fsencode(mp)])
        return mp

    def loop_device(self, image):
        out = self.run_ok(["losetup", "--associated", image])
        return out.split(":")[0].strip()

    def snapshot(self, mps):
        """Per mount point: (mountinfo entry, statvfs f_flag)."""
        table = mountinfo()
        return {mp: (table[os.fsencode(mp)], os.statvfs(mp).f_flag) for mp in mps}

    def assert_commit(self, mps, before, commit):
        now = self.snapshot(mps)
        for mp in mps:
            (dev, vfs, fstype, sb), flags = now[mp]
            (_, vfs0, _, sb0), flags0 = before[mp]
            self.assertEqual(vfs, vfs0, "%s: the mount's own flags must not change" % mp)
            self.assertEqual(flags, flags0, "%s: statvfs flags must not change" % mp)
            self.assertEqual(commit_of(sb), commit, "%s: %s" % (mp, sb))
            # Everything else the superblock shows is as it was.
            rest = [o for o in sb.split(",") if not o.startswith("commit=")]
            rest0 = [o for o in sb0.split(",") if not o.startswith("commit=")]
            self.assertEqual(rest, rest0, mp)


@unittest.skipUnless(OK, WHY)
class RemountFlagsTest(RemountFlagsBase):
    """Through fspick(), as every kernel since 5.2 allows."""
    wrapper = ()
    method = "fspick"

    def test_hostile_subvolume_and_mount_flags(self):
        btrfs = self.make_hostile_btrfs("btrfs")
        ext4 = self.make_ext4("ext4", "nosuid,nodev,noexec")
        # The other per-mount flags mount(2) must be given back.
        atime = self.make_ext4("atime", "noatime,nosymfollow")
        strict = self.make_ext4("strict", "strictatime,nodiratime,lazytime")
        mps = [btrfs, ext4, atime, strict]
        before = self.snapshot(mps)
        table = mountinfo()
        self.assertIn("nosuid", before[btrfs][0][1].split(","))
        self.assertIn("noexec", before[ext4][0][1].split(","))
        self.assertIn("nosymfollow", before[atime][0][1].split(","))
        self.assertNotIn("relatime", before[strict][0][1].split(","))
        self.assertIn("lazytime", before[strict][0][3].split(","))
        self.start_daemon(wrapper=self.wrapper)
        self.ctl_run("start", check=True)
        self.assert_commit(mps, before, "600")
        log = self.this_daemon_log()
        for mp in mps:
            self.assertIn("Remounted %s with commit=600 (through %s)" % (mp, self.method), log)
        st = self.status()
        self.assertEqual(sorted(r["MountPoint"] for r in st["Remounted"]), sorted(mps))

        # A Configure while on changes commit= again, flags still kept.
        self.ctl_run("set", "MaxLostWork=300", check=True)
        self.assert_commit(mps, before, "300")

        self.ctl_run("stop", check=True)
        self.assertEqual(self.snapshot(mps), before)
        self.assertEqual({k: v for k, v in mountinfo().items()}, table)
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))

    def test_commit_set_before_comes_back(self):
        """A commit= of the user's own comes back as it was; one the btrfs
        showed none of goes back to the driver's default (commit=0)."""
        btrfs = self.make_hostile_btrfs("btrfs", "nosuid,nodev,commit=45")
        ext4 = self.make_ext4("ext4", "nosuid,nodev,noexec,commit=17")
        mps = [btrfs, ext4]
        before = self.snapshot(mps)
        self.assertEqual(commit_of(before[btrfs][0][3]), "45")
        self.assertEqual(commit_of(before[ext4][0][3]), "17")
        self.start_daemon(wrapper=self.wrapper)
        self.ctl_run("start", check=True)
        self.assert_commit(mps, before, "600")
        self.stop_daemon()  # SIGTERM restores too
        self.assertEqual(self.snapshot(mps), before)

    def test_kill9_then_restart_restores(self):
        """Crash recovery goes through the same path: commit= alone."""
        btrfs = self.make_hostile_btrfs("btrfs")
        ext4 = self.make_ext4("ext4", "nosuid,nodev,noexec")
        mps = [btrfs, ext4]
        before = self.snapshot(mps)
        self.start_daemon(wrapper=self.wrapper)
        self.ctl_run("start", check=True)
        self.assert_commit(mps, before, "600")
        self.stop_daemon(signal.SIGKILL)
        self.assert_commit(mps, before, "600")
        self.start_daemon(wrapper=self.wrapper)
        self.assertEqual(self.snapshot(mps), before)
        self.assertEqual(self.root.vm(), lmtest.SYSCTL_VM)
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))


@unittest.skipUnless(OK, WHY)
class RemountFlagsSeccompTest(RemountFlagsTest):
    """fspick() refused by a seccomp filter on the daemon: mount(2) with the
    held mount's own flags and commit=N as its only data."""
    wrapper = (SECCOMP, "--")
    method = PROC_FD

    def test_fspick_really_refused(self):
        self.start_daemon(wrapper=self.wrapper)
        ext4 = self.make_ext4("ext4", "nosuid,nodev,noexec")
        self.ctl_run("start", check=True)
        log = self.this_daemon_log()
        self.assertIn("No fspick() here (Operation not permitted)", log)
        self.assertIn("Remounted %s with commit=600 (through %s)" % (ext4, PROC_FD), log)
        self.ctl_run("stop", check=True)


@unittest.skipUnless(OK, WHY)
class RemountRefusedTest(RemountFlagsBase):
    """fspick() and mount(2) both refused: Start fails closed."""

    def test_start_fails_and_nothing_changes(self):
        btrfs = self.make_hostile_btrfs("btrfs")
        ext4 = self.make_ext4("ext4", "nosuid,nodev,noexec")
        mps = [btrfs, ext4]
        before = self.snapshot(mps)
        table = mountinfo()
        self.start_daemon(wrapper=(SECCOMP, "--deny-mount", "--"))
        r = self.ctl_run("start")
        self.assertNotEqual(r.returncode, 0, r)
        self.assertIn("Cannot remount", r.err)
        self.assertTrue(any("%s (" % mp in r.err for mp in mps), r.err)
        self.assertIn("Operation not permitted", r.err)
        self.assertIn("fspick() refused", r.err)
        self.assertIn("mount(2): Operation not permitted", r.err)
        self.assertEqual(self.snapshot(mps), before)
        self.assertEqual(mountinfo(), table)
        self.assertEqual(self.root.vm(), lmtest.SYSCTL_VM, "tunables untouched")
        st = self.status()
        self.assertEqual((st["Active"], st["Remounted"]), (False, []))
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))
        # Still refused, still nothing changed, and the daemon answers.
        r = self.ctl_run("start")
        self.assertNotEqual(r.returncode, 0, r)
        self.assertEqual(mountinfo(), table)
        self.assertEqual(self.stop_daemon(), 0)
        self.assertEqual(mountinfo(), table)
        self.assertEqual(self.root.vm(), lmtest.SYSCTL_VM)


@unittest.skipUnless(OK, WHY)
class RemovableTest(RemountFlagsBase):
    """The fake root's sysfs describes the real loop devices: one fixed, one
    with removable media, one on USB (a btrfs), one stacked on a disk on a
    SATA hot-plug port. Only the fixed one's filesystem is remounted."""

    def link(self, rel, target):
        path = self.root.file(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(self.root.file(target), path)

    def put(self, rel, text):
        path = self.root.file(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text + "\n")

    def block(self, name, devnum, directory, removable="0"):
        """Block device @name (devnum "7:3") at sysfs path @directory."""
        self.put(directory + "/dev", devnum)
        self.put(directory + "/removable", removable)
        self.link("/sys/class/block/" + name, directory)
        self.link("/sys/dev/block/" + devnum, directory)

    def devnum(self, device):
        rdev = os.stat(device).st_rdev
        return "%d:%d" % (os.major(rdev), os.minor(rdev))

    def test_removable_disks_are_not_remounted(self):
        fixed = self.make_ext4("fixed", "nosuid")
        media = self.make_ext4("media", "nosuid,nodev")
        usb_image = self.image("usb", 128, "btrfs")
        usb = self.mount(usb_image, "btrfs", "usb", "nosuid,nodev")
        hotplug = self.make_ext4("hotplug", "nodev")
        loops = {mp: self.loop_device(os.path.join(self.tmp, os.path.basename(mp) + ".img"))
                 for mp in (fixed, media, usb, hotplug)}
        names = {mp: os.path.basename(dev) for mp, dev in loops.items()}

        pci = "/sys/devices/pci0000:00"
        os.makedirs(self.root.file("/sys/bus/usb"))
        self.block(names[fixed], self.devnum(loops[fixed]),
                   "/sys/devices/virtual/block/" + names[fixed])
        self.block(names[media], self.devnum(loops[media]),
                   "/sys/devices/virtual/block/" + names[media], removable="1")
        usb_port = pci + "/0000:00:14.0/usb2/2-1"
        self.link(usb_port + "/subsystem", "/sys/bus/usb")
        self.block(names[usb], self.devnum(loops[usb]),
                   usb_port + "/2-1:1.0/host6/target6:0:0/6:0:0:0/block/" + names[usb])
        self.link("/sys/fs/btrfs/test-fsid/devices/" + names[usb],
                  usb_port + "/2-1:1.0/host6/target6:0:0/6:0:0:0/block/" + names[usb])
        # hotplug's loop device is stacked on sdx, a disk on a hot-plug port.
        upper = "/sys/devices/virtual/block/" + names[hotplug]
        sdx = pci + "/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sdx"
        self.block(names[hotplug], self.devnum(loops[hotplug]), upper)
        self.block("sdx", "8:240", sdx)
        self.link(upper + "/slaves/sdx", sdx)
        self.put("/sys/class/scsi_host/host2/ahci_port_cmd", "640017")

        mps = [fixed, media, usb, hotplug]
        before = self.snapshot(mps)
        table = mountinfo()
        self.start_daemon()
        self.ctl_run("start", check=True)
        now = self.snapshot(mps)
        self.assert_commit([fixed], before, "600")
        for mp in (media, usb, hotplug):
            self.assertEqual(now[mp], before[mp], "%s must be left alone" % mp)
        log = self.this_daemon_log()
        key = {mp: before[mp][0][0] for mp in mps}
        self.assertIn("Not remounting %s (device %s): disk %s is removable or hot-plug: "
                      "it has removable media" % (media, key[media], names[media]), log)
        self.assertIn("Not remounting %s (device %s): disk %s is removable or hot-plug: "
                      "it is on USB" % (usb, key[usb], names[usb]), log)
        self.assertIn("Not remounting %s (device %s): disk sdx is removable or hot-plug: "
                      "it is on a SATA hot-plug or external port (host2)" % (hotplug, key[hotplug]),
                      log)
        self.assertEqual([r["MountPoint"] for r in self.status()["Remounted"]], [fixed])
        self.ctl_run("stop", check=True)
        self.assertEqual(mountinfo(), table)


if __name__ == "__main__":
    lmtest.main()
