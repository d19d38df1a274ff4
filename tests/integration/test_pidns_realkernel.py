#!/usr/bin/python3
"""Tier 3: the BPF programs in a child pid namespace (a container,
`unshare -p`). The whole test, daemon included, runs under
`unshare -m -p -f --mount-proc`: its pids, getpid() and the flush threads'
gettid() are that namespace's, while the kernel's plain
bpf_get_current_pid_tgid() gives the initial namespace's. A SpinUp's Pid
must be the pid seen in the namespace (cat's, the test's own), a buffered
write must be blamed on its writer there, and the user-space engine must
flush a read disk without its own flush arming the disk again.
Reuses the tests of test_spinup_realkernel.py and test_engine.py.
"""

import os
import shutil
import sys

import lmtest

PIDNS_MARK = "LM_TEST_PIDNS_NAMESPACE"
PROC_PID_INIT_INO = 0xEFFFFFFC


def enter_pid_namespace():
    """Re-run this file as pid 1 of a new pid namespace with its own /proc
    and a private mount namespace (once: PIDNS_MARK; lmtest's mark keeps
    main() from entering a mount namespace of its own)."""
    if os.environ.get(PIDNS_MARK) == "1" or os.geteuid() != 0 or shutil.which("unshare") is None:
        return
    env = dict(os.environ, **{m: "1" for m in (PIDNS_MARK, lmtest.PRIVATE_MOUNTS_MARK)})
    try:
        os.execvpe("unshare", ["unshare", "-m", "-p", "-f", "--mount-proc", "--propagation",
                               "private", sys.executable, os.path.abspath(__file__)]
                   + sys.argv[1:], env)
    except OSError:
        pass


enter_pid_namespace()

import test_engine  # noqa: E402 (after the namespace is entered)
import test_spinup_realkernel  # noqa: E402
from lmtest import DaemonTestCase  # noqa: E402


def in_child_pid_namespace():
    try:
        return os.stat("/proc/self/ns/pid").st_ino != PROC_PID_INIT_INO
    except OSError:
        return False


def skip_unless_in_pid_namespace(test):
    if os.environ.get(PIDNS_MARK) != "1" or not in_child_pid_namespace():
        test.skipTest("could not enter a child pid namespace (unshare -p -f --mount-proc failed)")


class PidNamespaceSpinUpTest(test_spinup_realkernel.RealSpinUp, DaemonTestCase):
    """Pid checks: test_cat_of_uncached_file compares Pid with cat's pid
    and (its marker) the test's own; the buffered write its dirtier's."""

    backend = "bpf"
    keep = ("test_cat_of_uncached_file", "test_buffered_write_blamed_on_writer")

    def setUp(self):
        skip_unless_in_pid_namespace(self)
        super().setUp()


for _name in dir(test_spinup_realkernel.RealSpinUp):
    if _name.startswith("test_") and _name not in PidNamespaceSpinUpTest.keep:
        setattr(PidNamespaceSpinUpTest, _name, None)


class PidNamespaceEngineTest(test_engine.EngineTestCase):
    """The flush threads register their gettid() (this namespace's); were
    the program to compare the initial namespace's, the engine's own flush
    would arm the disk again."""

    def setUp(self):
        skip_unless_in_pid_namespace(self)
        super().setUp()
        test_engine.write_real_vm({"laptop_mode": "0"})

    test_userspace_engine_flushes_the_read_disk_only = \
        test_engine.FlushTest.test_userspace_engine_flushes_the_read_disk_only
    test_no_wakeups_while_disks_idle = test_engine.IdleCostTest.test_no_wakeups_while_disks_idle


if __name__ == "__main__":
    lmtest.main()
