#!/usr/bin/python3
"""Tier 3: the systemd unit's hardening leaves the daemon its work.

Reads CapabilityBoundingSet=, NoNewPrivileges=, SystemCallFilter=,
TasksMax= and MemoryMax= from data/laptop-moded.service.in, so the unit
and this test cannot drift apart, and runs the real daemon under them
(setpriv; systemd is not needed) on the real /proc/sys/vm (saved and
written back) and a real ext4 loop filesystem in a private mount
namespace: Start must remount it with commit= and write the sysctls, with
the BPF engine where the kernel has BTF, and Stop must restore both
exactly. Dropping a capability the unit keeps must break something; the
daemon's system calls, traced, must all be in the unit's filter; and
systemd-analyze verify must accept the unit without a word.

Leaves no mount, loop device, process or sysctl change behind.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import lmtest
from lmtest import DaemonTestCase, mountinfo, read_real_vm, write_real_vm

UNIT = os.path.join(lmtest.SRCDIR, "data", "laptop-moded.service.in")
REMOUNT_TYPES = ("ext3", "ext4", "reiserfs", "btrfs")
CAP_NUMBERS = {"CAP_SYS_ADMIN": 21, "CAP_SYS_RAWIO": 17, "CAP_SYSLOG": 34, "CAP_BPF": 39,
               "CAP_PERFMON": 38, "CAP_DAC_OVERRIDE": 1, "CAP_NET_ADMIN": 12,
               "CAP_SYS_RESOURCE": 24}


def unit_settings():
    """{key: value} of [Service], last assignment wins (comments dropped)."""
    values = {}
    section = None
    with open(UNIT) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                section = line
                continue
            if section == "[Service]" and "=" in line:
                key, value = line.split("=", 1)
                values[key] = value
    return values


UNIT_SETTINGS = unit_settings()
UNIT_CAPS = UNIT_SETTINGS.get("CapabilityBoundingSet", "").split()


def bounding_set(caps):
    """setpriv's --bounding-set argument for exactly @caps."""
    return "-all" + "".join(",+" + c[len("CAP_"):].lower() for c in caps)


def setpriv(caps):
    argv = ["setpriv"]
    if UNIT_SETTINGS.get("NoNewPrivileges") == "yes":
        argv.append("--no-new-privs")
    return argv + ["--bounding-set", bounding_set(caps), "--"]


def size_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def proc_status(pid):
    with open("/proc/%d/status" % pid) as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


OK, WHY = ((False, "the unit has no CapabilityBoundingSet=") if not UNIT_CAPS else
           lmtest.can_run("root", "namespace", "vm", "loop",
                          tools=("setpriv", "losetup", "mkfs.ext4", "mount")))
HAVE_BTF = os.path.exists("/sys/kernel/btf/vmlinux")


@lmtest.realkernel
@unittest.skipUnless(OK, WHY)
class UnitHardeningTest(DaemonTestCase):
    fake_root = False

    def setUp(self):
        self.machine = read_real_vm()
        self.addCleanup(write_real_vm, self.machine)  # runs last
        theirs = sorted({mp.decode("utf-8", "surrogateescape") for mp, (_, _, t, _) in
                         mountinfo().items() if t in REMOUNT_TYPES})
        self.config_text = "[LaptopMode]\nMode=off\nNoRemount=%s\n" % lmtest.key_file_list(theirs)
        super().setUp()
        self.fs = lmtest.LoopFilesystem(self.tmp, "disk", size_mb=64)
        self.addCleanup(self.fs.cleanup)
        self.mp = os.fsencode(self.fs.mount_point)

    def stop_all(self, daemon_pid=None):
        """SIGTERM to the daemon (under strace: strace's child); its exit status."""
        os.kill(daemon_pid if daemon_pid is not None else self.daemon.pid, signal.SIGTERM)
        return self.daemon.wait(timeout=30)

    def start_and_check(self, wrapper, probe=None):
        """Start/Stop through laptop-modectl; returns the daemon's pid."""
        before = mountinfo()
        self.start_daemon(wrapper=wrapper)
        pid = self.daemon_pid()
        self.ctl_run("start", check=True)
        sb = mountinfo()[self.mp][3].split(",")
        self.assertIn("commit=600", sb, "remounted under the unit's restrictions")
        self.assertEqual(read_real_vm()["dirty_expire_centisecs"], "60000",
                         "sysctls written under the unit's restrictions")
        st = self.status()
        if HAVE_BTF:
            self.assertEqual(st["Engine"], "userspace",
                             "the BPF engine loads under the unit's restrictions:\n"
                             + self.daemon_log())
        if probe is not None:
            probe(pid)
        self.ctl_run("stop", check=True)
        self.assertEqual(mountinfo(), before)
        self.assertEqual(read_real_vm(), self.machine)
        return pid

    def daemon_pid(self):
        return self.daemon.pid

    # --- the unit's own set ---------------------------------------------

    def test_daemon_works_under_the_units_restrictions(self):
        seen = {}

        def probe(pid):
            seen.update(proc_status(pid))
            with open("/proc/%d/maps" % pid) as f:
                seen["asan"] = any("libasan" in line for line in f)

        self.start_and_check(setpriv(UNIT_CAPS), probe)
        want = sum(1 << CAP_NUMBERS[c] for c in UNIT_CAPS)
        self.assertEqual(int(seen["CapBnd"], 16), want, "the bounding set is the unit's")
        self.assertEqual(int(seen["CapEff"], 16), want)
        if UNIT_SETTINGS.get("NoNewPrivileges") == "yes":
            self.assertEqual(seen["NoNewPrivs"].strip(), "1")
        # TasksMax= and MemoryMax= with room: what the daemon used, active.
        self.assertLess(int(seen["Threads"]), int(UNIT_SETTINGS["TasksMax"]) // 2)
        hwm = int(seen["VmHWM"].split()[0]) << 10
        # AddressSanitizer's shadow memory and quarantine are not the
        # daemon's: the peak is judged in the --werror build of the suite.
        if not seen.get("asan"):
            self.assertLess(hwm, size_bytes(UNIT_SETTINGS["MemoryMax"]) // 2,
                            "peak RSS %d KiB against MemoryMax=%s"
                            % (hwm >> 10, UNIT_SETTINGS["MemoryMax"]))
        self.assertEqual(self.stop_all(), 0)
        print("\nunder %s: %s threads, peak RSS %d KiB" % (" ".join(UNIT_CAPS), seen["Threads"],
                                                        hwm >> 10))

    # --- each capability is needed --------------------------------------

    def test_without_cap_sys_admin_no_remount(self):
        self.assertIn("CAP_SYS_ADMIN", UNIT_CAPS)
        before = mountinfo()
        self.start_daemon(wrapper=setpriv([c for c in UNIT_CAPS if c != "CAP_SYS_ADMIN"]))
        r = self.ctl_run("start")
        self.assertNotEqual(r.returncode, 0, r)
        self.assertIn("Operation not permitted", r.err)
        self.assertIn(self.fs.mount_point, r.err)
        self.assertEqual(mountinfo(), before)
        self.assertEqual(read_real_vm(), self.machine, "the failed Start is rolled back")

    def kmsg_opens(self, caps):
        code = "import os; os.close(os.open('/dev/kmsg', os.O_RDONLY | os.O_NONBLOCK))"
        return subprocess.run(setpriv(caps) + ["/usr/bin/python3", "-c", code],
                              capture_output=True, text=True)

    def test_without_cap_syslog_no_kmsg(self):
        self.assertIn("CAP_SYSLOG", UNIT_CAPS)
        with open("/proc/sys/kernel/dmesg_restrict") as f:
            if f.read().strip() != "1":
                self.skipTest("kernel.dmesg_restrict is 0 here: /dev/kmsg needs no capability")
        r = self.kmsg_opens(UNIT_CAPS)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.kmsg_opens([c for c in UNIT_CAPS if c != "CAP_SYSLOG"])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Operation not permitted", r.stderr)

    def test_without_cap_sys_rawio_no_ata(self):
        self.assertIn("CAP_SYS_RAWIO", UNIT_CAPS)
        ata = [d for d in sorted(os.listdir("/sys/block")) if d.startswith("sd") and
               open("/sys/block/%s/device/vendor" % d).read().strip() == "ATA"] \
            if os.path.isdir("/sys/block") else []
        if not ata or shutil.which("hdparm") is None:
            self.skipTest("no ATA disk (and hdparm) here: the qemu guest tier's AHCI disk shows "
                          "SG_IO ATA PASS-THROUGH")
        dev = "/dev/" + ata[0]
        r = subprocess.run(setpriv(UNIT_CAPS) + ["hdparm", "-C", dev], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = subprocess.run(setpriv([c for c in UNIT_CAPS if c != "CAP_SYS_RAWIO"]) +
                           ["hdparm", "-C", dev], capture_output=True, text=True)
        self.assertIn("Operation not permitted", r.stdout + r.stderr)

    # --- the system call filter -----------------------------------------

    def filter_allows(self):
        allowed = set()
        pending = UNIT_SETTINGS["SystemCallFilter"].split()
        self.assertFalse(any(p.startswith("~") for p in pending), "an allow list is expected")
        seen = set()
        while pending:
            item = pending.pop()
            if item in seen:
                continue
            seen.add(item)
            if not item.startswith("@"):
                allowed.add(item)
                continue
            r = subprocess.run(["systemd-analyze", "syscall-filter", item], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            for line in r.stdout.splitlines()[1:]:
                line = line.strip()
                if line and not line.startswith("#"):
                    pending.append(line)
        return allowed

    @unittest.skipUnless(shutil.which("strace") and shutil.which("systemd-analyze"),
                         "needs strace and systemd-analyze")
    def daemon_env(self):
        env = super().daemon_env()
        if self.tracing:
            # LeakSanitizer cannot run under ptrace (strace): it would fail
            # the daemon's exit. Every other test of the build checks leaks.
            env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""),
                                                         "detect_leaks=0"]))
        return env

    tracing = False

    def test_system_calls_within_the_filter(self):
        self.tracing = True
        allowed = self.filter_allows()
        trace = os.path.join(self.tmp, "strace.out")
        self.daemon_pid = self.traced_daemon_pid
        self.start_and_check(setpriv(UNIT_CAPS) + ["strace", "-f", "-qq", "-o", trace, "--"])
        self.assertEqual(self.stop_all(self.traced_daemon_pid()), 0)
        used = set()
        with open(trace) as f:
            for line in f:
                m = re.match(r"^\d+\s+([a-z0-9_]+)\(", line)
                if m:
                    used.add(m.group(1))
        # The trace saw the work: the remount, and BPF where it loads.
        self.assertTrue({"fsconfig", "mount"} & used, sorted(used))
        if HAVE_BTF:
            self.assertIn("bpf", used)
        self.assertFalse(used - allowed, "system calls outside SystemCallFilter=: %s"
                         % " ".join(sorted(used - allowed)))
        print("\n%d distinct system calls, all in the filter" % len(used))

    def traced_daemon_pid(self):
        """strace's child: the daemon, once it has exec'd."""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            for task in os.listdir("/proc/%d/task" % self.daemon.pid):
                with open("/proc/%d/task/%s/children" % (self.daemon.pid, task)) as f:
                    for child in f.read().split():
                        with open("/proc/%s/comm" % child) as c:
                            if c.read().strip() == "laptop-moded":
                                return int(child)
            time.sleep(0.05)
        self.fail("no laptop-moded under strace")

    # --- the unit file itself -------------------------------------------

    @unittest.skipUnless(shutil.which("systemd-analyze"), "needs systemd-analyze (systemd)")
    def test_systemd_analyze_verify(self):
        # The unit as installed, but with ExecStart= at the built daemon:
        # verify insists that the program exists.
        d = tempfile.mkdtemp(prefix="lm-unit-")
        self.addCleanup(shutil.rmtree, d, True)
        with open(UNIT) as f:
            text = f.read()
        text = re.sub(r"(?m)^ExecStart=.*$", "ExecStart=" + lmtest.DAEMON, text)
        unit = os.path.join(d, "laptop-moded.service")
        with open(unit, "w") as f:
            f.write(text)
        r = subprocess.run(["systemd-analyze", "verify", "--man=no", unit], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        # It only warns (exit 0) about unknown keys or groups: none allowed.
        self.assertEqual(r.stderr.strip(), "", "systemd-analyze verify complained")
        self.assertEqual(r.stdout.strip(), "")


if __name__ == "__main__":
    lmtest.main()
