#!/usr/bin/python3
"""Other tools fighting over the same knobs (issue 18): a value laptop mode
applied that another process rewrote is found at a moment the daemon looks
anyway (Configure, Stop), listed in Conflicts with expected vs found, logged
once, and left as the other process wrote it, also after Stop.

Who changed it (issue 50) is in ConflictWriters, status and report: the
program where the bpf object sees writes to sysctls (fentry or kprobes on
the kernel's proc_sys_write), else "unknown" with the power tools installed
("unknown; TLP is installed", shown on the fake root).

ConflictsFakeRootTest runs on a fake root (tier 2); ConflictsRealKernelTest
on this machine's /proc/sys/vm, saved before and written back after.
"""

import json
import os
import re
import shutil
import subprocess
import unittest

import lmtest
from lmtest import DaemonTestCase, read_real_vm, write_real_vm

FOREIGN = "4321"  # what "TLP" writes: neither the original nor ours
LOGGED = "vm.dirty_expire_centisecs was changed by someone else to %s" % FOREIGN


class ConflictsMixin:
    config_text = "[LaptopMode]\nMode=off\nRemount=false\n"

    def vm_path(self):
        raise NotImplementedError

    def other_process_writes(self, value):
        """Another process, as TLP or sysctl -p would, rewrites the value."""
        if self.fake_root is False and shutil.which("sysctl"):
            # Named as a power tool is: the writer the daemon may name.
            tlp = os.path.join(self.tmp, "tlp")
            shutil.copy(shutil.which("sysctl"), tlp)
            argv = [tlp, "-q", "-w", "vm.dirty_expire_centisecs=%s" % value]
        else:
            argv = ["/usr/bin/python3", "-c",
                    "import sys; open(sys.argv[1], 'w').write(sys.argv[2] + '\\n')",
                    self.vm_path(), value]
        subprocess.run(argv, check=True, timeout=30)

    def current(self):
        with open(self.vm_path()) as f:
            return f.read().strip()

    def conflicts(self):
        return [tuple(c) for c in self.status()["Conflicts"]]

    def test_conflict_found_listed_once_and_left_alone(self):
        self.start_daemon()
        self.assertEqual(self.conflicts(), [])
        self.ctl_run("start", check=True)
        self.assertEqual(self.current(), "60000")
        log_start = len(self.this_daemon_log())
        self.other_process_writes(FOREIGN)
        # Nothing polls: no moment to look has come, so nothing is listed.
        self.assertEqual(self.conflicts(), [])

        # A moment the daemon looks anyway: Configure.
        self.ctl_run("set", "MaxLostWork=300", check=True)
        found = self.conflicts()
        self.assertEqual(len(found), 1, found)
        what, when, expected, value = found[0]
        self.assertEqual((what, expected, value), ("vm.dirty_expire_centisecs", "60000", FOREIGN))
        self.assertIsInstance(when, int)
        self.assertGreater(when, 1.6e15)  # µs since the epoch, not seconds
        # Left as the other process wrote it; the rest follows the new setting.
        self.assertEqual(self.current(), FOREIGN)
        r = self.ctl_run("status", check=True)
        self.assertIn("vm.dirty_expire_centisecs is %s, laptop mode set 60000" % FOREIGN, r.out)
        by = self.status()["ConflictWriters"]["vm.dirty_expire_centisecs"]
        self.check_writer(by)
        self.assertIn("written by %s" % by, r.out)
        self.assertIn("written by %s); leaving it" % by, self.this_daemon_log())
        report = self.ctl_run("report", check=True).out
        self.assertIn("vm.dirty_expire_centisecs is %s, laptop mode set 60000" % FOREIGN, report)
        self.assertIn("written by %s" % by, report)
        changed = json.loads(self.ctl_run("report", "--json", check=True).out)["changed_by_others"]
        self.assertEqual([(c["what"], c["set"], c["found"], c["by"]) for c in changed],
                         [("vm.dirty_expire_centisecs", "60000", FOREIGN, by)])

        # Stop looks too: same pair, not logged again; not restored over.
        self.ctl_run("stop", check=True)
        self.assertEqual(self.current(), FOREIGN)
        self.assertEqual([(c[0], c[2], c[3]) for c in self.conflicts()],
                         [("vm.dirty_expire_centisecs", "60000", FOREIGN)])
        self.assertEqual(self.conflicts()[0][1], when)
        log = self.this_daemon_log()[log_start:]
        self.assertEqual(len(re.findall(re.escape(LOGGED), log)), 1, log)

        # The next round of laptop mode starts with an empty list.
        self.ctl_run("start", check=True)
        self.assertEqual(self.conflicts(), [])
        self.ctl_run("stop", check=True)

    def test_own_values_are_no_conflict(self):
        self.start_daemon()
        self.ctl_run("start", check=True)
        self.ctl_run("set", "MaxLostWork=300", check=True)
        self.ctl_run("stop", check=True)
        self.assertEqual(self.conflicts(), [])
        self.assertNotIn("changed by someone else to", self.this_daemon_log())


class ConflictsFakeRootTest(ConflictsMixin, DaemonTestCase):
    def setUp(self):
        super().setUp()
        # TLP is installed; nothing here can see who writes the fake file.
        os.makedirs(self.root.file("/usr/sbin"), exist_ok=True)
        self.root.write("/usr/sbin/tlp", "#!/bin/sh\n")
        os.makedirs(self.root.file("/usr/sbin"), exist_ok=True)
        self.root.write("/usr/sbin/powertop", "#!/bin/sh\n")

    def vm_path(self):
        return self.root.file("/proc/sys/vm/dirty_expire_centisecs")

    def check_writer(self, by):
        self.assertEqual(by, "unknown; TLP and powertop are installed")


@lmtest.realkernel
@unittest.skipUnless(*lmtest.can_run("root", "vm"))
class ConflictsRealKernelTest(ConflictsMixin, DaemonTestCase):
    fake_root = False

    def setUp(self):
        self.machine = read_real_vm()
        # Registered first, so it runs last: after the daemon is gone.
        self.addCleanup(write_real_vm, self.machine)
        super().setUp()

    def vm_path(self):
        return "/proc/sys/vm/dirty_expire_centisecs"

    def check_writer(self, by):
        # Named where the kernel lets the bpf object watch the write: this
        # machine's may refuse both fentry and kprobes, which the daemon says.
        if re.search(r"Writes to sysctls and sysfs watched by (fentry|kprobes)",
                     self.this_daemon_log()):
            self.assertRegex(by, r"^tlp\[\d+\]$")
        else:
            self.assertIn("Writes to sysctls and sysfs not watched", self.this_daemon_log())
            self.assertRegex(by, r"^unknown(; .+ (is|are) installed)?$")


if __name__ == "__main__":
    lmtest.main()
