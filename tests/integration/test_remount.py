#!/usr/bin/python3
"""Tier 3: remounts of real loop-device filesystems, with the real daemon.

Owns its loop devices and mounts, all inside a private mount namespace that
the daemon shares; it must leave no mount, loop device or file behind, and
never change a filesystem it did not create (the machine's own are listed
in NoRemount). The tunables come from a fake root; the mount table is the
real one, through the fake root's proc/self/mountinfo symlink.
"""

import os
import re
import shutil
import signal
import subprocess
import unittest

import lmtest
from lmtest import DaemonTestCase, mountinfo

REMOUNT_TYPES = ("ext3", "ext4", "reiserfs", "btrfs")


def lm_escape(raw):
    """What the daemon shows for a mount point: UTF-8 kept; other bytes,
    control characters and the backslash as \\xNN (lm_remount_escape)."""
    out = []
    for ch in raw.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append("\\x%02x" % (o - 0xDC00))
        elif o < 0x20 or o == 0x7F or ch == "\\":
            out.append("\\x%02x" % o)
        else:
            out.append(ch)
    return "".join(out)


def _unpercent(raw):
    """lm-state's key and lm-journal's value encoding: %XX for a byte."""
    return re.sub(rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), raw)


def _key_file_value(raw):
    """GKeyFile's string escapes that a state file may hold."""
    return re.sub(rb"\\(.)", lambda m: {b"s": b" ", b"\\": b"\\"}.get(m.group(1), m.group(0)), raw)


def parse_key_file(data):
    """A state file as {group: {key bytes: value bytes}}, decoded; raw for
    the groups the test does not rewrite (kept as they are)."""
    groups, group = {}, None
    for line in data.split(b"\n"):
        if line.startswith(b"[") and line.endswith(b"]"):
            group = line[1:-1].decode()
            groups[group] = {}
        elif group is not None and b"=" in line:
            k, v = line.split(b"=", 1)
            if group.startswith("Remount"):
                groups[group][_unpercent(k)] = _unpercent(_key_file_value(v))
            else:
                groups[group][k] = v
    return groups


def write_key_file(groups):
    out = []
    for group, entries in groups.items():
        out.append(b"[" + group.encode() + b"]")
        for k, v in entries.items():
            if group.startswith("Remounts"):
                v = v.replace(b"\\", b"\\\\")
            out.append(k + b"=" + v)
        out.append(b"")
    return b"\n".join(out)


def options_set(options):
    return set(options.split(","))


def with_commit(options, value):
    return {o for o in options.split(",") if not o.startswith("commit=")} | {"commit=%s" % value}


# Its mounts and the daemon's remounts of them stay invisible to the rest of
# the machine (superblock options are still global: only our own filesystems).
OK, WHY = lmtest.can_run("root", "namespace", "loop", tools=("losetup", "mkfs.ext4", "mount", "umount"))


class Filesystem:
    def __init__(self, name, fstype, mount_point, options="", size_mb=32, bind_of=None):
        self.name = name
        self.fstype = fstype
        self.mount_point = mount_point  # bytes
        self.options = options
        self.size_mb = size_mb
        self.bind_of = bind_of
        self.image = None


@lmtest.realkernel
@unittest.skipUnless(OK, WHY)
class RemountTest(DaemonTestCase):
    fake_root = True

    def setUp(self):
        # The machine's own journaled filesystems are opted out, so the test
        # changes nothing but the filesystems it creates.
        theirs = sorted({mp.decode("utf-8", "surrogateescape") for mp, (_, _, t, _) in
                         mountinfo().items() if t in REMOUNT_TYPES})
        self.config_text = "[LaptopMode]\nNoRemount=%s\n" % lmtest.key_file_list(theirs)
        super().setUp()
        self.mounted = []  # mount points (bytes), in mount order
        self.images = []
        self.addCleanup(self.cleanup_mounts)
        # Tunables are fake; the mount table is the real one (see lm-remount.h).
        os.makedirs(self.root.file("/proc/self"))
        os.symlink("/proc/self/mountinfo", self.root.file("/proc/self/mountinfo"))

    # --- filesystems ----------------------------------------------------

    def cleanup_mounts(self):
        # Stop the daemon first (it restores on SIGTERM), then unmount in
        # reverse order and detach every loop device on our images.
        if getattr(self, "daemon", None) is not None:
            lmtest.stop_process(self.daemon)
        lmtest.release_mounts(self.mounted, self.images)
        for image in self.images:
            try:
                os.unlink(image)
            except FileNotFoundError:
                pass

    def have(self, fstype):
        return shutil.which("mkfs." + fstype) is not None

    def make(self, fs):
        mp = os.path.join(os.fsencode(self.tmp), fs.mount_point)
        os.makedirs(mp, exist_ok=True)
        if fs.bind_of is not None:
            self.run_ok(["mount", "--bind", fs.bind_of, mp])
        else:
            image = os.path.join(self.tmp, fs.name + ".img")
            with open(image, "wb") as f:
                f.truncate(fs.size_mb << 20)
            self.images.append(image)
            mkfs = {"ext4": ["mkfs.ext4", "-q", "-F"], "btrfs": ["mkfs.btrfs", "-q", "-f"],
                    "xfs": ["mkfs.xfs", "-q", "-f"]}[fs.fstype]
            self.run_ok(mkfs + [image])
            opts = "loop" + ("," + fs.options if fs.options else "")
            self.run_ok(["mount", "-t", fs.fstype, "-o", opts, image, mp])
        self.mounted.append(mp)
        return mp

    def run_ok(self, argv):
        r = subprocess.run(argv, capture_output=True)
        self.assertEqual(r.returncode, 0, "%s: %s" % (argv, r.stderr.decode(errors="replace")))

    def standard_set(self):
        """The issue's mix: odd bytes in a name, read-only, a bind mount,
        commit=17 already, noatime,data=ordered, btrfs, xfs."""
        odd = b"sp ace,comma-\xc3\xa9-\xff"
        fss = [
            Filesystem("plain", "ext4", b"plain", "nosuid,nodev"),
            Filesystem("odd", "ext4", odd),
            Filesystem("ro", "ext4", b"readonly", "ro"),
            Filesystem("bind", "ext4", b"bind-of-plain", bind_of=os.path.join(os.fsencode(self.tmp), b"plain")),
            Filesystem("c17", "ext4", b"commit17", "commit=17"),
            Filesystem("noatime", "ext4", b"noatime", "noatime,data=ordered"),
        ]
        if self.have("btrfs"):
            fss.append(Filesystem("btrfs", "btrfs", b"btrfs", size_mb=128))
        if self.have("xfs"):
            fss.append(Filesystem("xfs", "xfs", b"xfs", size_mb=320))
        return {fs.name: (fs, self.make(fs)) for fs in fss}

    def options_of(self, mp):
        return mountinfo()[mp]

    # --- tests ----------------------------------------------------------

    def test_start_stop_restores_exactly(self):
        fss = self.standard_set()
        before = mountinfo()
        self.start_daemon()
        self.ctl_run("start", check=True)
        after = mountinfo()

        changed = {"plain", "odd", "bind", "c17", "noatime", "btrfs"}
        for name, (fs, mp) in fss.items():
            dev, vfs, fstype, sb = after[mp]
            self.assertEqual(vfs, before[mp][1], "%s: mount flags must not change" % name)
            if name in changed:
                self.assertEqual(options_set(sb), with_commit(before[mp][3], 600),
                                 "%s: commit=600 with every other option kept" % name)
            else:
                self.assertEqual(sb, before[mp][3], "%s must be left alone" % name)
        # Nothing else on the machine changed.
        ours = {mp for _, mp in fss.values()}
        self.assertEqual({k: v for k, v in after.items() if k not in ours},
                         {k: v for k, v in before.items() if k not in ours})

        st = self.status()
        shown = {mp for mp, _ in ((r["MountPoint"], r["Options"]) for r in st["Remounted"])}
        base = os.fsencode(self.tmp)
        expect = {lm_escape(os.path.join(base, n)) for n in
                  [b"plain", b"sp ace,comma-\xc3\xa9-\xff", b"commit17", b"noatime"] +
                  ([b"btrfs"] if "btrfs" in fss else [])}
        self.assertEqual(shown, expect, "one entry per filesystem, the bind mount not again")
        for r in st["Remounted"]:
            if r["MountPoint"].endswith("commit17"):
                self.assertIn("commit=17", r["Options"].split(","))
        text = self.ctl_run("status", check=True).out
        self.assertIn("Remounted:", text)
        self.assertIn(lm_escape(os.path.join(base, b"sp ace,comma-\xc3\xa9-\xff")), text)

        self.ctl_run("stop", check=True)
        self.assertEqual(mountinfo(), before)
        self.assertEqual(self.status()["Remounted"], [])
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))

    def test_kill9_then_restart_restores(self):
        fss = self.standard_set()
        before = mountinfo()
        self.start_daemon()
        self.gdbus_call("Start", check=True)
        self.assertIn("commit=600", self.options_of(fss["plain"][1])[3])
        self.stop_daemon(signal.SIGKILL)
        self.assertIn("commit=600", self.options_of(fss["plain"][1])[3])
        with open(os.path.join(self.state_dir, "state")) as f:
            self.assertIn("[Remount]", f.read())
        self.start_daemon()
        self.assertEqual(mountinfo(), before)
        self.assertEqual(self.root.vm(), lmtest.SYSCTL_VM)
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))

    def test_kill9_with_pre_journal_state_file_restores(self):
        """A state file in the layout from before remounts went through the
        journal (groups Remounts, RemountsOriginal, RemountsApplied, values
        \\xNN-escaped), as a crashed older daemon leaves it, is restored."""
        self.standard_set()
        before = mountinfo()
        self.start_daemon()
        self.gdbus_call("Start", check=True)
        self.stop_daemon(signal.SIGKILL)
        path = os.path.join(self.state_dir, "state")
        with open(path, "rb") as f:
            groups = parse_key_file(f.read())
        records = groups.pop("Remount")
        applied = groups.pop("RemountApplied", {})
        self.assertTrue(records)
        old = {"Remounts": {}, "RemountsOriginal": {}, "RemountsApplied": {}}
        for key, original in records.items():
            dev, target = key.split(b" ", 1)
            old["Remounts"][dev] = lm_escape(target).encode()
            old["RemountsOriginal"][dev] = lm_escape(original).encode()
            if key in applied:
                old["RemountsApplied"][dev] = lm_escape(applied[key]).encode()
        groups.update(old)
        with open(path, "wb") as f:
            f.write(write_key_file(groups))
        self.start_daemon()
        self.assertEqual(mountinfo(), before)
        self.assertFalse(os.path.exists(path))

    def test_sigterm_restores(self):
        self.standard_set()
        before = mountinfo()
        self.start_daemon()
        self.ctl_run("start", check=True)
        self.assertNotEqual(mountinfo(), before)
        self.assertEqual(self.stop_daemon(signal.SIGTERM), 0)
        self.assertEqual(mountinfo(), before)

    def loop_device(self, mp):
        """The loop device under mount point @mp (bytes)."""
        r = subprocess.run(["findmnt", "--noheadings", "--output", "SOURCE", "--mountpoint",
                            os.fsdecode(mp)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

    def test_kernel_refusal_on_third_of_five_rolls_back(self):
        mps = [self.make(Filesystem("f%d" % i, "ext4", b"five-%d" % i, "commit=%d" % (10 + i)
                                    if i % 2 else "")) for i in range(1, 6)]
        # The kernel itself refuses the third: a frozen filesystem cannot be
        # reconfigured (reconfigure_super() answers EBUSY), through
        # fspick()/fsconfig() as through mount(2).
        os.sync()
        self.run_ok(["fsfreeze", "--freeze", mps[2]])
        self.addCleanup(subprocess.run, ["fsfreeze", "--unfreeze", mps[2]], capture_output=True)
        before = mountinfo()
        r = subprocess.run(["mount", "-o", "remount,commit=600", mps[2]], capture_output=True)
        self.assertNotEqual(r.returncode, 0, "the kernel accepted the remount: nothing to test")
        self.assertEqual(mountinfo(), before)
        self.start_daemon()
        r = self.ctl_run("start")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(os.fsdecode(mps[2]), r.err)
        self.assertIn("busy", r.err)
        self.assertEqual(mountinfo(), before, "the others are put back exactly, nothing else changed")
        self.assertEqual(self.root.vm(), lmtest.SYSCTL_VM, "tunables untouched")
        st = self.status()
        self.assertEqual((st["Active"], st["Remounted"]), (False, []))
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))
        # The remounts run side by side, so the other four were really
        # changed, and then put back; only the third is named.
        log = self.daemon_log()
        for i, mp in enumerate(mps):
            if i != 2:
                self.assertIn("Remounted %s with commit=600 " % os.fsdecode(mp), log)
                self.assertNotIn(os.fsdecode(mp) + " ", r.err)
        self.assertNotIn("Remounted %s " % os.fsdecode(mps[2]), log)
        # Once the filesystem is thawed, Start works on all five.
        self.run_ok(["fsfreeze", "--unfreeze", mps[2]])
        self.ctl_run("start", check=True)
        for mp in mps:
            self.assertIn("commit=600", self.options_of(mp)[3].split(","))
        self.ctl_run("stop", check=True)
        self.assertEqual(mountinfo(), before)

    def test_configure_types_and_opt_out(self):
        fss = self.standard_set()
        before = mountinfo()
        self.start_daemon()
        self.ctl_run("start", check=True)
        r = self.ctl_run("set", "RemountTypes=ext4,xfs")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("xfs", r.err)
        if "btrfs" in fss:
            self.ctl_run("set", "RemountTypes=ext4", check=True)
            self.assertEqual(self.options_of(fss["btrfs"][1]), before[fss["btrfs"][1]])
            self.assertIn("commit=600", self.options_of(fss["plain"][1])[3])
            self.assertEqual(self.status()["RemountTypes"], ["ext4"])
        noatime = fss["noatime"][1]
        no_remount = self.status()["NoRemount"] + [os.fsdecode(noatime)]
        self.ctl_run("set", "NoRemount=" + ",".join(no_remount), check=True)
        self.assertEqual(self.options_of(noatime), before[noatime])
        self.ctl_run("set", "MaxLostWork=300", check=True)
        self.assertIn("commit=300", self.options_of(fss["plain"][1])[3].split(","))
        self.ctl_run("set", "Remount=false", check=True)
        self.assertEqual(mountinfo(), before)
        with open(self.config) as f:
            conf = f.read()
        self.assertIn("Remount=false", conf)
        self.assertIn("RemountTypes=ext4;", conf)
        self.ctl_run("stop", check=True)
        self.assertEqual(mountinfo(), before)

    def test_not_fighting_others(self):
        a = self.make(Filesystem("a", "ext4", b"a"))
        b = self.make(Filesystem("b", "ext4", b"b"))
        c = self.make(Filesystem("c", "ext4", b"c"))
        before = mountinfo()
        self.start_daemon()
        self.ctl_run("start", check=True)
        self.run_ok(["mount", "-o", "remount,commit=30", a])  # someone else
        self.run_ok(["umount", b])  # vanished
        self.mounted.remove(b)
        self.ctl_run("stop", check=True)
        self.assertIn("commit=30", self.options_of(a)[3].split(","))
        self.assertEqual(self.options_of(c), before[c])
        log = self.daemon_log()
        self.assertIn("remounted by someone else", log)
        self.assertIn("no longer mounted", log)
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "state")))



def meminfo_dirty():
    """Bytes the whole machine has dirty in the page cache."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("Dirty:"):
                return int(line.split()[1]) << 10
    raise AssertionError("no Dirty in /proc/meminfo")


@lmtest.realkernel
@unittest.skipUnless(OK, WHY)
class SyncTest(DaemonTestCase):
    """Sync puts a real filesystem's dirty data on its disk."""

    fake_root = True
    config_text = "[LaptopMode]\nMode=off\nRemount=false\n"
    DATA = 64 << 20

    def setUp(self):
        super().setUp()
        self.fs = lmtest.LoopFilesystem(self.tmp, "disk", size_mb=160)
        self.addCleanup(self.fs.cleanup)

    def dirty_file(self, name):
        """Write DATA bytes that stay dirty; False if something wrote them
        out meanwhile (another program's sync() on this shared machine)."""
        os.sync()
        self.written = self.fs.written_sectors()
        dirty = meminfo_dirty()
        with open(os.path.join(self.fs.mount_point, name), "wb") as f:
            f.write(os.urandom(self.DATA))
        # The kernel holds it for dirty_expire_centisecs (30 s at least).
        self.before = meminfo_dirty()
        return (self.before - dirty > self.DATA // 2
                and self.fs.written_sectors() - self.written < self.DATA // 512 // 2)

    def test_sync_writes_dirty_data(self):
        self.start_daemon()
        for attempt in range(3):
            if self.dirty_file("data%d" % attempt):
                break
            print("attempt %d: the data was written before Sync was called; again" % (attempt + 1))
        else:
            self.fail("in 3 attempts the test's data never stayed dirty until Sync")
        self.gdbus_call("Sync", check=True)
        # When Sync answers, the data is on the loop disk, and no longer dirty.
        self.assertGreaterEqual(self.fs.written_sectors() - self.written, self.DATA // 512)
        dropped = self.before - meminfo_dirty()
        self.assertGreater(dropped, self.DATA * 3 // 4,
                           "Dirty fell by %d KiB only, the file is %d KiB" % (dropped >> 10, self.DATA >> 10))

    def test_sync_unauthorized(self):
        self.start_daemon()
        name, message = self.call_error("Sync", user=lmtest.UNPRIVILEGED)
        self.assertEqual(name, "org.freedesktop.DBus.Error.AccessDenied")
        self.assertRegex(message, r"^Not authorized to Sync: polkit action "
                         r"org\.laptopmode\.LaptopMode1\.switch \S")


if __name__ == "__main__":
    lmtest.main()
