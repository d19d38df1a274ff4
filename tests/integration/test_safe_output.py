#!/usr/bin/python3
"""Tier 3: a process named with terminal escape sequences wakes a real loop
disk; laptop-modectl and laptop-mode-tray must show its name escaped.

A Python child renames itself with prctl(PR_SET_NAME) to a name holding ESC,
BEL and a backslash, then reads an uncached file (whose name holds them
too) on an ext4 loop disk that has gone quiet. The real daemon attributes
the spin-up through BPF (tracefs where BPF cannot load). Then:
`laptop-modectl watch` and `spinups` print it \\xNN-escaped, and nothing
they print holds a raw control byte; their --json output is valid JSON
carrying the real bytes as JSON escapes; the tray's popup (as python-dbusmock's
notification daemon received it), tooltip and menu show it escaped. The
same for a mount point with control bytes in NoRemount, shown by `status`.
Everything is undone on the way out: the loop device, its mount (in a
private mount namespace), the processes.
"""

import json
import os
import re
import subprocess
import time
import unittest

import lmtest
from lmtest import DaemonTestCase, read_real_vm, write_real_vm
from test_spinup_dbus import LineReader
from test_tray import INTERVAL, TrayMixin

# ESC [ 2 J clears the screen, BEL rings; at most 15 bytes (TASK_COMM_LEN).
NAME = b"e\x1b[2J\x07\\z"
SAFE_NAME = "e\\x1b[2J\\x07\\x5cz"
FILE_NAME = b"f\x1b]0;t\x07"
MOUNT_POINT = "/srv/m\x1b[5m\x07"
SAFE_MOUNT_POINT = "/srv/m\\x1b[5m\\x07"

# Renames itself, says its pid, then reads the file once per line on stdin.
CHILD = r'''
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(15, ctypes.c_char_p(bytes.fromhex(sys.argv[1])), 0, 0, 0) != 0:
    sys.exit("prctl: %s" % os.strerror(ctypes.get_errno()))
print(os.getpid(), flush=True)
path = bytes.fromhex(sys.argv[2])
for line in sys.stdin:
    fd = os.open(path, os.O_RDONLY)
    while os.read(fd, 1 << 16):
        pass
    os.close(fd)
    print("read", flush=True)
'''


def raw_controls(data):
    """The control bytes in @data other than the newline that ends lines."""
    return sorted({b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f})


def unsafe_chars(text):
    """Controls but the newline, which the tray's own words use between lines."""
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f]


class ByteLines(LineReader):
    """A LineReader on a binary pipe that also keeps every byte read."""

    def __init__(self, stream):
        self.seen = []
        super().__init__(stream)

    def _run(self, stream):
        for line in stream:
            self.seen.append(line)
            self.q.put(line)

    def all_bytes(self):
        return b"".join(self.seen)


@lmtest.realkernel
@unittest.skipUnless(*lmtest.can_run("root", "namespace"))
class SafeOutputTest(TrayMixin, DaemonTestCase):
    fake_root = False

    def setUp(self):
        import test_spinup_realkernel as rk
        backend = "bpf"
        ok, why = rk.can_run("bpf")
        if not ok:
            ok, why = rk.can_run("tracefs")
            backend = "tracefs"
        if not ok:
            self.skipTest(why)
        self.backend = backend
        self.rk = rk
        self.addCleanup(write_real_vm, read_real_vm())
        self.config_text = ("[LaptopMode]\nMode=off\nRemount=false\nAttribution=%s\n"
                            "SpinUpIdle=%d\nSpinUpHistory=true\n" % (backend, rk.IDLE))
        super().setUp()
        self.fs = rk.LoopExt4(self.tmp)
        self.addCleanup(self.fs.cleanup)
        self.file = os.path.join(os.fsencode(self.fs.mnt), FILE_NAME)
        with open(self.file, "wb") as f:
            f.write(os.urandom(512 << 10))
        os.sync()

    # --- helpers --------------------------------------------------------

    def spawn(self, argv):
        p = subprocess.Popen(argv, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.procs.append(p)
        self.addCleanup(self.close_pipes, p)
        return p

    def close_pipes(self, p):
        if p.poll() is None:
            p.terminate()
            p.wait(timeout=10)
        for s in (p.stdin, p.stdout, p.stderr):
            if s is not None:
                s.close()

    def watch(self, *args):
        p = self.spawn([self.ctl, "watch"] + list(args))
        banner = p.stderr.readline()
        self.assertIn(b"Watching spin-ups", banner, self.daemon_log())
        return ByteLines(p.stdout)

    def loop_asleep(self):
        disks = json.loads(self.ctl_run("disks", "--json", check=True).out)
        return disks.get(self.fs.disk, {}).get("Asleep") is True

    def loop_quiet(self):
        """The disk's own counters unchanged for longer than SpinUpIdle, so
        its next I/O is a spin-up. With bpf the daemon counts a disk that
        was busy at its idle check asleep only when asked or at its next
        spin-up, so Disks may say awake for as long as it stays quiet (the
        ASan run at ade4532 waited 60 s for it); tracefs's state comes from
        the daemon's own idle check, which it is asked for as well."""
        with open("/sys/block/%s/stat" % self.fs.disk) as f:
            v = f.read().split()
        now, io = time.monotonic(), (v[0], v[4])
        if io != getattr(self, "_last_io", None):
            self._last_io, self._quiet_since = io, now
            return False
        return (now - self._quiet_since >= self.rk.IDLE + 0.5
                and (self.backend == "bpf" or self.loop_asleep()))

    def start_child(self):
        script = os.path.join(self.tmp, "renamed.py")
        with open(script, "w") as f:
            f.write(CHILD)
        p = subprocess.Popen(["/usr/bin/python3", script, NAME.hex(), self.file.hex()],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        self.addCleanup(self.close_pipes, p)
        pid = int(p.stdout.readline())
        with open("/proc/%d/comm" % pid, "rb") as f:
            self.assertEqual(f.read().rstrip(b"\n"), NAME, "prctl did not rename the child")
        return p, pid

    def wake_disk(self, child, pid, json_lines):
        """Once the loop disk is quiet, the child reads its uncached file;
        returns the SpinUp blamed on it. Retried a few times: another
        process may wake the disk first on a busy machine, and then the
        child's read is no spin-up."""
        for attempt in range(4):
            self._last_io = None
            self.wait_until(self.loop_quiet, timeout=60, message="the loop disk to go quiet")
            self.rk.uncache(self.file)
            child.stdin.write("go\n")
            child.stdin.flush()
            self.assertEqual(child.stdout.readline(), "read\n")
            for line in json_lines.drain(3 if attempt < 3 else 10):
                s = json.loads(line)
                if s.get("Pid") == pid and s.get("Disk") == self.fs.disk:
                    return s
        self.fail("no SpinUp blamed on the renamed process\n" + self.daemon_log())

    # --- the test -------------------------------------------------------

    def test_escape_sequences_in_names(self):
        self.start_daemon()
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                        "Attribution", check=True)
        self.assertEqual(r.out.strip(), 's "%s"' % self.backend, self.daemon_log())
        self.start_tray()
        self.wait_for(lambda: "Subscribed to spin-ups" in self.tray_log(), "the subscription")
        text_lines = self.watch()
        json_lines = self.watch("--json")
        child, pid = self.start_child()
        shown_before = len(self.notifications())

        spinup = self.wake_disk(child, pid, json_lines)
        # --json: the real bytes, as JSON escapes.
        self.assertEqual(spinup["Comm"], NAME.decode())
        self.assertEqual(spinup["Operation"], "read")
        self.assertEqual(raw_controls(json_lines.all_bytes()), [])
        self.assertIn(b"\\u001b", json_lines.all_bytes())

        # watch: the same spin-up, escaped.
        want = "%s[%d]" % (SAFE_NAME, pid)
        got = None
        while got is None:
            line = text_lines.get(10)
            self.assertIsNotNone(line, "watch printed no line for %s" % want)
            if want.encode() in line:
                got = line.decode()
        self.assertIn(self.fs.disk, got)
        self.assertEqual(raw_controls(text_lines.all_bytes()), [])
        if "Path" in spinup:
            self.assertIn("\\x1b]0;t\\x07", got)

        # spinups: the history and the per-process summary, escaped.
        r = self.run_as_bytes([self.ctl, "spinups"])
        self.assertEqual(r.returncode, 0, r)
        self.assertEqual(raw_controls(r.stdout), [])
        out = r.stdout.decode()
        self.assertGreaterEqual(out.count(want), 2, out)
        self.assertRegex(out, r"\n\s+\d+\s+%s" % re.escape(want))
        r = self.run_as_bytes([self.ctl, "spinups", "--json"])
        self.assertEqual(raw_controls(r.stdout), [])
        history = [json.loads(x) for x in r.stdout.splitlines()]
        self.assertIn((NAME.decode(), pid), [(h["Comm"], h["Pid"]) for h in history])

        # The tray: the popup, the menu and the tooltip, escaped.
        popup = "%s woken by %s (%d): read" % (self.fs.disk, SAFE_NAME, pid)

        def popped_up():
            return any(n[1] == popup or ("%s ×" % SAFE_NAME) in n[1]
                       for n in self.notifications()[shown_before:])
        self.wait_for(popped_up, "a popup naming %s" % popup, timeout=INTERVAL + 15)
        for _, summary, body in self.notifications():
            self.assertEqual(unsafe_chars(summary + body), [], (summary, body))
        labels = list(self.menu_items())
        for label in labels:
            self.assertEqual(unsafe_chars(label), [], label)
        spinup_labels = [lb for lb in labels if "woken by" in lb]
        self.assertTrue(any(lb.endswith(popup) for lb in spinup_labels), spinup_labels)
        tooltip = self.item("ToolTip")[3]
        self.assertEqual(unsafe_chars(tooltip), [], tooltip)
        # The tooltip shows the newest spin-up: ours, unless the menu shows
        # a newer one above it.
        if popup not in tooltip:
            self.assertFalse(spinup_labels[0].endswith(popup), (tooltip, spinup_labels))
        with open(os.path.join(self.tmp, "tray.log"), "rb") as f:
            self.assertEqual(raw_controls(f.read()), [])

    def test_mount_point_in_status(self):
        """NoRemount takes any absolute path; status shows it escaped."""
        self.start_daemon()
        r = self.run_as_bytes([self.ctl, "set", "NoRemount=/home," + MOUNT_POINT])
        self.assertEqual(r.returncode, 0, r)
        r = self.run_as_bytes([self.ctl, "status"])
        self.assertEqual(r.returncode, 0, r)
        self.assertEqual(raw_controls(r.stdout), [])
        self.assertIn(("Never remounted:     /home, %s\n" % SAFE_MOUNT_POINT).encode(), r.stdout)
        r = self.run_as_bytes([self.ctl, "status", "--json"])
        self.assertEqual(raw_controls(r.stdout), [])
        self.assertEqual(json.loads(r.stdout)["NoRemount"], ["/home", MOUNT_POINT])

    def run_as_bytes(self, argv):
        return subprocess.run(argv, env=self.env, capture_output=True, stdin=subprocess.DEVNULL,
                              timeout=60)


if __name__ == "__main__":
    lmtest.main()
