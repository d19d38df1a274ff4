#!/usr/bin/python3
"""Tier 3: the unit behind a spin-up (issue 50), on the real kernel with the
bpf backend. Programs run in a private cgroup v2 tree that stands in for
systemd's (a directory per unit: "writer-a.service", an application's
"app-gnome-tick45-77.scope"), on an ext4 loop disk in the daemon's private
mount namespace.

- A program that dirtied data and exited, its unit's cgroup removed (as
  systemd removes a transient unit's) before the flusher wrote the data:
  the SpinUp names that unit.
- Two programs of one name in two units: each SpinUp names its own, and
  explain keeps them apart.
- Readers on a 5 s and a 45 s period: report's rhythm for each is right,
  and explain names their units.
The cgroup tree, the loop disk and vm.dirty_* are undone on the way out.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import time

import lmtest
from lmtest import DaemonTestCase, write_real_vm
from test_spinup_realkernel import RealSpinUp, uncache


def cgroup2_mount():
    """Where this machine mounts the cgroup v2 tree (also /sys/fs/cgroup/
    unified on a hybrid one), or None."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[:1] == ["cgroup2"] and left.split()[3] == "/":
                return left.split()[4]
    return None


class PrivateUnits:
    """lmtest-units-PID/UNIT under the cgroup v2 mount: a unit's cgroup."""

    def __init__(self):
        mount = cgroup2_mount()
        self.top = os.path.join(mount, "lmtest-units-%d" % os.getpid()) if mount else None
        if self.top:
            os.mkdir(self.top)

    def path(self, unit):
        return os.path.join(self.top, unit)

    def start(self, unit, argv, **kwargs):
        """@argv in @unit's cgroup (without a cgroup v2 mount: where it is) from its first instruction (the child
        moves itself before exec: writing 0 to cgroup.procs is "me")."""
        if self.top is None:
            return subprocess.Popen(argv, **kwargs)
        os.makedirs(self.path(unit), exist_ok=True)
        procs = os.path.join(self.path(unit), "cgroup.procs")

        def enter():
            with open(procs, "w") as f:
                f.write("0")
        return subprocess.Popen(argv, preexec_fn=enter, **kwargs)

    def run(self, unit, argv):
        p = self.start(unit, argv, stdout=subprocess.DEVNULL)
        self_rc = p.wait(timeout=60)
        if self_rc != 0:
            raise RuntimeError("%r in %s exited %d" % (argv, unit, self_rc))
        return p

    def remove(self, unit):
        os.rmdir(self.path(unit))

    def cleanup(self):
        if not self.top or not os.path.isdir(self.top):
            return
        for unit in os.listdir(self.top):
            d = self.path(unit)
            if not os.path.isdir(d):
                continue
            with open(os.path.join(d, "cgroup.procs")) as f:
                for pid in f.read().split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            for _ in range(100):
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    time.sleep(0.05)
        os.rmdir(self.top)


@lmtest.realkernel
class BpfUnitTest(RealSpinUp, DaemonTestCase):
    backend = "bpf"

    def setUp(self):
        super().setUp()
        self.units = PrivateUnits()
        if self.units.top is None:
            self.skipTest("no cgroup v2 mount")
        self.addCleanup(self.units.cleanup)

    def dd(self, unit, name):
        return self.units.run(unit, ["dd", "if=/dev/zero", "of=" + os.path.join(self.fs.mnt, name),
                                     "bs=4k", "count=64", "status=none"])

    def unit_named_after_it_ended(self):
        lines = self.subscribe()
        # The flusher comes 4 s after the data was dirtied: well after the
        # unit's cgroup is gone.
        write_real_vm({"dirty_expire_centisecs": "400", "dirty_writeback_centisecs": "100"})
        self.wait_idle(lines)
        dd = self.dd("writer-a.service", "out-a")
        self.units.remove("writer-a.service")
        removed = time.time()
        s = self.next_loop_spinup(lines, 30)
        self.assertIsNotNone(s, "no SpinUp after the flusher's write\n" + self.daemon_log())
        self.assertEqual((s["Comm"], s["Pid"], s["Via"]), ("dd", dd.pid, "writeback"), s)
        self.assertGreater(s["Time"] / 1e6, removed, "the data was written before the unit ended")
        self.assertEqual(s.get("Unit"), "writer-a.service", s)

    def test_unit_named_after_it_ended(self):
        self.unit_named_after_it_ended()

    # btrfs writes back through its own workers, xfs through its log: the
    # dirtier's cgroup still names the unit.
    def test_unit_named_after_it_ended_btrfs(self):
        self.use_filesystem("btrfs")
        self.unit_named_after_it_ended()

    def test_unit_named_after_it_ended_xfs(self):
        self.use_filesystem("xfs")
        self.unit_named_after_it_ended()

    def test_two_writers_in_one_round(self):
        """Two programs in two units dirty two files, then one flusher pass
        writes both: the SpinUp names one of them, with that one's unit,
        never the other's (the write carries its data)."""
        lines = self.subscribe()
        bindir = os.path.join(self.tmp, "writers")
        os.makedirs(bindir)
        units = {"wa": "wa.service", "wb": "app-gnome-wb-31.scope"}
        for name in units:
            shutil.copy(shutil.which("dd"), os.path.join(bindir, name))
        for attempt in range(3):
            self.wait_idle(lines)
            for name, unit in units.items():
                self.units.run(unit, [os.path.join(bindir, name), "if=/dev/zero",
                                      "of=" + os.path.join(self.fs.mnt, "%s-%d" % (name, attempt)),
                                      "bs=4k", "count=16", "status=none"])
            s = self.next_loop_spinup(lines, 30)
            self.assertIsNotNone(s, "no SpinUp after the flusher's pass\n" + self.daemon_log())
            if s["Via"] == "writeback":
                break
            # The kernel's own write (a journal commit) came first: again.
            print("# retry %d: the first SpinUp was %s's (%s)" % (attempt + 1, s["Comm"], s["Via"]))
        self.assertEqual(s["Via"], "writeback", s)
        self.assertIn(s["Comm"], units, s)
        expected = {"wa": "wa.service", "wb": "wb"}[s["Comm"]]
        self.assertEqual(s.get("Unit"), expected, s)

    def test_two_programs_of_one_name_in_two_units(self):
        lines = self.subscribe()
        got = []
        for unit, f in (("one.service", self.files[0]), ("two.service", self.files[1])):
            self.wait_idle(lines)
            uncache(f)
            cat = self.units.run(unit, ["cat", f])
            s = self.next_loop_spinup(lines)
            self.assertIsNotNone(s, "no SpinUp for cat in %s\n%s" % (unit, self.daemon_log()))
            self.assertEqual((s["Comm"], s["Pid"], s["Via"], s.get("Unit")),
                             ("cat", cat.pid, "direct", unit), s)
            got.append(s)
        for unit, name in (("one.service", "w1"), ("two.service", "w2")):
            self.wait_idle(lines)
            dd = self.dd(unit, name)
            s = self.next_loop_spinup(lines)
            self.assertIsNotNone(s, "no SpinUp for dd in %s\n%s" % (unit, self.daemon_log()))
            self.assertEqual((s["Comm"], s["Pid"], s["Via"], s.get("Unit")),
                             ("dd", dd.pid, "writeback", unit), s)
        out = json.loads(self.ctl_run("explain", self.fs.disk, "--json", check=True).out)
        causes = out["disks"][self.fs.disk]["causes"]
        self.assertEqual(sorted((c["program"], c["unit"], c["spinups"]) for c in causes
                                if c["program"] in ("cat", "dd")),
                         [("cat", "one.service", 1), ("cat", "two.service", 1),
                          ("dd", "one.service", 1), ("dd", "two.service", 1)], causes)
        text = self.ctl_run("spinups", "--by-unit", check=True).out
        self.assertRegex(text, r"\n +2 +one\.service +1 read, 1 write")
        self.assertRegex(text, r"\n +2 +two\.service +1 read, 1 write")

    def test_rhythm_of_two_periods(self):
        """A reader every 5 s and one every 45 s (direct reads: no journal
        or writeback of their own), half a period of the first apart:
        each read is a spin-up of its own (SpinUpIdle 1 s)."""
        # SpinUpIdle 1 s: the reads are 2.5 s apart at the closest, so a
        # program that starts a second late still wakes the disk itself.
        self.config_text = self.config_text.replace("SpinUpIdle=2", "SpinUpIdle=1")
        lines = self.subscribe()
        bindir = os.path.join(self.tmp, "ticks")
        os.makedirs(bindir)
        for name in ("tick5", "tick45"):
            shutil.copy(shutil.which("dd"), os.path.join(bindir, name))
        data = os.path.join(self.fs.mnt, "ticks")
        with open(data, "wb") as f:
            f.write(os.urandom(4 << 20))
        os.sync()
        self.wait_idle(lines)
        t0 = time.monotonic() + 1
        plan = sorted([(k * 5.0, "tick5", "tick5.service") for k in range(19)]
                      + [(2.5 + k * 45.0, "tick45", "app-gnome-tick45-77.scope")
                         for k in range(3)])
        for n, (at, prog, unit) in enumerate(plan):
            time.sleep(max(0.0, t0 + at - time.monotonic()))
            self.units.run(unit, [os.path.join(bindir, prog), "if=" + data, "of=/dev/null",
                                  "bs=4k", "count=1", "skip=%d" % (n * 7 % 1000), "iflag=direct",
                                  "status=none"])
        self.wait_idle(lines, keep=True)
        report = json.loads(self.ctl_run("report", "--json", "--by-unit", "--disk", self.fs.disk,
                                          check=True).out)
        wakers = {w["comm"]: w for w in report["disks"][self.fs.disk]["wakers"]}
        self.assertIn("tick5", wakers, wakers)
        self.assertIn("tick45", wakers, wakers)
        self.assertGreaterEqual(wakers["tick5"]["count"], 15, wakers)
        self.assertEqual(wakers["tick45"]["count"], 3, wakers)
        self.assertRegex(wakers["tick5"]["rhythm"], r"^every (4–)?5(–6)? s$", wakers)
        self.assertRegex(wakers["tick45"]["rhythm"], r"^every (44–)?45(–46)? s$", wakers)
        self.assertEqual((wakers["tick5"]["unit"], wakers["tick45"]["unit"]),
                         ("tick5.service", "tick45"))
        text = self.ctl_run("explain", self.fs.disk, check=True).out
        self.assertRegex(text, r"tick5 \(tick5\.service, its own I/O\): \d+ spin-ups, every")
        self.assertRegex(text, r"tick45 \(tick45, its own I/O\): 3 spin-ups, every (44–)?45")


# The spin-up cases themselves run in test_spinup_realkernel.py.
for _name in [n for n in dir(RealSpinUp) if n.startswith("test_")]:
    setattr(BpfUnitTest, _name, None)


if __name__ == "__main__":
    lmtest.main()
