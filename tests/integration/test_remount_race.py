#!/usr/bin/python3
"""Tier 3: a mount point replaced between reading the mount table and the
remount is never followed, and never remounts the other filesystem.

Drives the daemon's remount transaction (lm-remount.c, lm-mountfd.c) through
tests/test-remount-race, which is built with its own copy of those files and
a hook that pauses in the race window; the daemon's library has no hook.
While it is paused the test unmounts the mount point and puts a symlink to
another filesystem (or another filesystem) in its place, then lets it go on.
Each case runs through fspick() and through the fallback of older kernels
(component-by-component open, mount(2) on /proc/self/fd/N).

Owns its loop devices and mounts, in a private mount namespace; leaves no
mount, loop device or file behind, and never changes a filesystem it did not
create (the machine's own are listed in NoRemount).
"""

import os
import shutil
import subprocess
import tempfile
import unittest

import lmtest
from lmtest import mountinfo

REMOUNT_TYPES = ("ext3", "ext4", "reiserfs", "btrfs")
HELPER = os.path.join(lmtest.BUILDDIR, "tests", "test-remount-race")
# Terminal escapes and a bell in a mount point's name: logged escaped.
HOSTILE = b"victim-\x1b[31m-\x07"
HOSTILE_SHOWN = "victim-\\x1b[31m-\\x07"


def mount_ids():
    """{mount point (bytes): mount id}, the ids the daemon compares."""
    ids = {}
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            fields = line.split()
            ids[lmtest.unescape_mountinfo(fields[4])] = int(fields[0])
    return ids


def with_commit(options, value):
    return {o for o in options.split(",") if not o.startswith("commit=")} | {"commit=%s" % value}


OK, WHY = lmtest.can_run("root", "namespace", "loop", built=(HELPER,),
                         tools=("losetup", "mkfs.ext4", "mount", "umount"))


@lmtest.realkernel
@unittest.skipUnless(OK, WHY)
class RaceTest(unittest.TestCase):
    fallback = False

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="lm-race-")
        self.base = os.fsencode(self.tmp)
        self.mounted = []
        self.images = []
        self.addCleanup(self.cleanup)
        self.theirs = sorted({mp.decode("utf-8", "surrogateescape") for mp, (_, _, t, _) in
                              mountinfo().items() if t in REMOUNT_TYPES})
        # Mount points the daemon must never remount (the user said so):
        # where the symlinks of the races point.
        self.opted_out = []
        self.config = os.path.join(self.tmp, "laptop-moded.conf")
        self.state = os.path.join(self.tmp, "state")

    def cleanup(self):
        # Whatever is still mounted under our directory, innermost first.
        ours = [mp for mp in mountinfo() if mp.startswith(self.base + b"/")]
        lmtest.release_mounts(sorted(set(self.mounted) | set(ours), key=len), self.images)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_ok(self, argv):
        r = subprocess.run(argv, capture_output=True)
        self.assertEqual(r.returncode, 0, "%s: %s" % (argv, r.stderr.decode(errors="replace")))

    def make(self, rel, options=""):
        """An ext4 loop filesystem mounted at self.base/@rel (bytes)."""
        mp = os.path.join(self.base, rel)
        os.makedirs(mp, exist_ok=True)
        image = os.path.join(self.tmp, "fs%d.img" % len(self.images))
        with open(image, "wb") as f:
            f.truncate(32 << 20)
        self.images.append(image)
        self.run_ok(["mkfs.ext4", "-q", "-F", image])
        self.run_ok(["mount", "-t", "ext4", "-o", "loop" + ("," + options if options else ""),
                     image, mp])
        self.mounted.append(mp)
        return mp

    def helper(self, op, pause=None, on_pause=None):
        """Run the transaction; returns (last line of stdout, stderr bytes)."""
        no_remount = self.theirs + [os.fsdecode(mp) for mp in self.opted_out]
        with open(self.config, "w") as f:
            f.write("[LaptopMode]\nNoRemount=%s\n" % lmtest.key_file_list(no_remount))
        argv = [HELPER] + (["--fallback"] if self.fallback else [])
        argv += (["--pause", pause] if pause else []) + [self.state, self.config, op]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        paused = False
        try:
            if pause is not None:
                line = p.stdout.readline().decode()
                self.assertEqual(line.strip(), "PAUSED " + pause,
                                 "the helper did not reach the window")
                paused = True
                on_pause()
                p.stdin.write(b"go\n")
                p.stdin.flush()
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 0, err.decode(errors="replace"))
        self.assertEqual(paused, pause is not None)
        lines = out.decode().strip().splitlines()
        return (lines[-1] if lines else ""), err

    def assert_logged_escaped(self, err):
        self.assertIn(b"Not remounting", err)
        self.assertIn(HOSTILE_SHOWN.encode(), err)
        self.assertNotIn(b"\x1b", err, "a raw control byte reached the log")
        self.assertNotIn(b"\x07", err, "a raw control byte reached the log")

    def assert_no_record(self):
        if os.path.exists(self.state):
            with open(self.state, "rb") as f:
                text = f.read()
            self.assertNotIn(b"victim", text, "the replaced mount point is still recorded")

    # --- the race at apply ----------------------------------------------

    def test_final_component_replaced_by_symlink(self):
        victim = self.make(HOSTILE)
        other = self.make(b"other", "commit=17")
        self.opted_out.append(other)
        bystander = self.make(b"bystander")
        before = mountinfo()

        def swap():
            self.run_ok(["umount", victim])
            os.rmdir(victim)
            os.symlink(other, victim)

        result, err = self.helper("apply", "apply", swap)
        self.assertEqual(result, "OK", err)
        now = mountinfo()
        self.assertEqual(now[other], before[other], "the symlink's target must not be remounted")
        self.assertEqual(set(now[bystander][3].split(",")), with_commit(before[bystander][3], 600),
                         "the untouched mount point is still remounted")
        self.assert_logged_escaped(err)
        self.assert_no_record()

        result, err = self.helper("restore")
        self.assertEqual(result, "OK", err)
        now = mountinfo()
        self.assertEqual(now[bystander], before[bystander])
        self.assertEqual(now[other], before[other])
        self.assertFalse(os.path.exists(self.state))

    def test_middle_component_replaced_by_symlink(self):
        # The mount point itself is a real directory again after the swap:
        # only a walk that follows no symlink on the way refuses it.
        victim = self.make(os.path.join(b"d", HOSTILE))
        other = self.make(os.path.join(b"e", HOSTILE), "commit=17")
        self.opted_out.append(other)
        before = mountinfo()

        def swap():
            self.run_ok(["umount", victim])
            os.rename(os.path.join(self.base, b"d"), os.path.join(self.base, b"d.gone"))
            os.symlink(os.path.join(self.base, b"e"), os.path.join(self.base, b"d"))

        result, err = self.helper("apply", "apply", swap)
        self.assertEqual(result, "OK", err)
        self.assertEqual(mountinfo()[other], before[other],
                         "the filesystem behind the symlinked directory must not be remounted")
        self.assert_logged_escaped(err)
        self.assertIn(b"symbolic link", err)
        self.assert_no_record()

    def newcomer_image(self):
        image = os.path.join(self.tmp, "newcomer%d.img" % len(self.images))
        with open(image, "wb") as f:
            f.truncate(32 << 20)
        self.images.append(image)
        self.run_ok(["mkfs.ext4", "-q", "-F", image])
        return image

    def test_same_path_other_disk(self):
        # Unmounted, and another disk mounted on the same directory: the new
        # mount usually even gets the old mount id back (ids are reused at
        # once), so the device in the table is what tells them apart.
        victim = self.make(HOSTILE)
        old_id = mount_ids()[victim]
        image = self.newcomer_image()
        newcomer = {}

        def swap():
            # Its own loop device, attached before the victim's is freed.
            device = subprocess.run(["losetup", "--find", "--show", image], check=True,
                                    capture_output=True, text=True).stdout.strip()
            self.run_ok(["umount", victim])
            self.run_ok(["mount", "-t", "ext4", "-o", "commit=17", device, victim])
            newcomer["options"] = mountinfo()[victim]
            newcomer["id"] = mount_ids()[victim]

        result, err = self.helper("apply", "apply", swap)
        self.assertEqual(result, "OK", err)
        self.assertEqual(mountinfo()[victim], newcomer["options"],
                         "the other disk on the same path must not be remounted")
        self.assert_logged_escaped(err)
        if newcomer["id"] == old_id:
            self.assertIn(b"not device", err, "a reused mount id is caught by the device")
        else:
            self.assertIn(b"leads to mount %d now" % newcomer["id"], err)
        self.assert_no_record()

    def test_same_path_same_device_number(self):
        # The one case the table cannot tell apart: another filesystem on
        # the same device number (the freed loop device, a new disk as the
        # same sdb1), same type, same directory, and the old mount id. It is
        # then what is mounted there, and is handled as such: its own
        # options are saved first and come back exactly. When the id was
        # not reused, it is skipped like any other replaced mount point.
        victim = self.make(HOSTILE)
        old = mountinfo()[victim]
        old_id = mount_ids()[victim]
        image = self.newcomer_image()
        newcomer = {}

        def swap():
            self.run_ok(["umount", victim])
            self.run_ok(["mount", "-t", "ext4", "-o", "loop,commit=17", image, victim])
            newcomer["options"] = mountinfo()[victim]
            newcomer["id"] = mount_ids()[victim]

        result, err = self.helper("apply", "apply", swap)
        self.assertEqual(result, "OK", err)
        if newcomer["options"][0] != old[0] or newcomer["id"] != old_id:
            self.assertEqual(mountinfo()[victim], newcomer["options"])
            self.assert_logged_escaped(err)
            self.assert_no_record()
            return
        self.assertEqual(set(mountinfo()[victim][3].split(",")),
                         with_commit(newcomer["options"][3], 600))
        with open(self.state, "rb") as f:
            self.assertIn(b"commit=17", f.read(), "the newcomer's own original is saved")
        result, err = self.helper("restore")
        self.assertEqual(result, "OK", err)
        self.assertEqual(mountinfo()[victim], newcomer["options"])

    # --- the race at restore --------------------------------------------

    def test_restore_through_replaced_mount_point(self):
        victim = self.make(HOSTILE, "noatime")
        other = self.make(b"other", "commit=17")
        self.opted_out.append(other)
        before = mountinfo()
        result, err = self.helper("apply")
        self.assertEqual(result, "OK", err)
        self.assertIn("commit=600", mountinfo()[victim][3].split(","))
        moved = os.path.join(self.base, b"moved")
        os.makedirs(moved)

        def swap():
            # Moved away (still mounted), a symlink to another one in its place.
            self.run_ok(["mount", "--move", victim, moved])
            self.mounted.append(moved)
            os.rmdir(victim)
            os.symlink(other, victim)

        result, err = self.helper("restore", "restore", swap)
        self.assertTrue(result.startswith("ERROR "), result)
        self.assertIn("changed while being restored", result)
        self.assertIn(HOSTILE_SHOWN, result)
        self.assertEqual(mountinfo()[other], before[other], "the symlink's target is left alone")
        self.assertIn("commit=600", mountinfo()[moved][3].split(","))
        self.assert_logged_escaped(err)

        # The record was kept: the next restore finds the filesystem where
        # it is mounted now, through a path that checks, and puts it back.
        result, err = self.helper("restore")
        self.assertEqual(result, "OK", err)
        self.assertEqual(mountinfo()[moved][3], before[victim][3])
        self.assertEqual(mountinfo()[moved][1], before[victim][1])
        self.assertEqual(mountinfo()[other], before[other])
        self.assertFalse(os.path.exists(self.state))

    # --- no race: the held path keeps the transaction exact ---------------

    def test_exact_apply_and_restore(self):
        mps = [self.make(b"plain", "nosuid,nodev"), self.make(b"c17", "commit=17"),
               self.make(b"noatime", "noatime,data=ordered"),
               self.make(b"sp ace,comma-\xc3\xa9-\xff")]
        before = mountinfo()
        result, err = self.helper("apply")
        self.assertEqual(result, "OK", err)
        after = mountinfo()
        for mp in mps:
            self.assertEqual(after[mp][1], before[mp][1], "%r: mount flags must not change" % mp)
            self.assertEqual(set(after[mp][3].split(",")), with_commit(before[mp][3], 600), mp)
        method = b"mount(2) on /proc/self/fd" if self.fallback else b"fspick"
        self.assertNotIn(b"Not remounting", err)
        self.assertEqual(err.count(b"(through %s)" % method), len(mps), err)
        result, err = self.helper("restore")
        self.assertEqual(result, "OK", err)
        self.assertEqual(err.count(b"(through %s)" % method), len(mps), err)
        self.assertEqual(mountinfo(), before)
        self.assertFalse(os.path.exists(self.state))


class RaceFallbackTest(RaceTest):
    """The same, the way kernels before 5.6 (no openat2) and 5.2 (no
    fspick) take it."""
    fallback = True


if __name__ == "__main__":
    lmtest.main()
