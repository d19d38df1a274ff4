#!/usr/bin/python3
"""test_completion: laptop-modectl's bash completion (data/laptop-modectl.bash-completion)
through bash itself: an interactive bash on a pseudo-terminal with
bash-completion loaded, typing TAB; and the completion function called the
way readline calls it, for commands, set keys and their values, disk names.
Its keys are checked against the daemon's settings table."""

import glob
import os
import pty
import re
import select
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "integration"))
import lmtest  # noqa: E402

SRCDIR = os.environ.get("LM_SRCDIR", os.path.dirname(HERE))
BUILDDIR = os.environ.get("LM_BUILDDIR", os.path.join(SRCDIR, "build"))
COMPLETION = os.path.join(SRCDIR, "data", "laptop-modectl.bash-completion")
BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"
CLIENT_DIR = os.path.join(BUILDDIR, "client")


def settings_keys():
    """The Configure keys of the daemon's table (lm-settings.c, wherever
    service/ keeps it) and DiskSettings."""
    paths = glob.glob(os.path.join(SRCDIR, "service", "**", "lm-settings.c"), recursive=True)
    text = open(paths[0]).read()
    table = text[text.index("setting_keys[] = {"):]
    table = table[:table.index("};")]
    return set(re.findall(r'_KEY \("(\w+)"', table)) | {"DiskSettings"}


def complete(line):
    """COMPREPLY for the cursor at the end of LINE, from _laptop_modectl as
    readline would call it (COMP_WORDS split the way bash splits them)."""
    script = r"""
source "$1"
source "$2"
COMP_LINE=$3
COMP_POINT=${#COMP_LINE}
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
# bash splits at COMP_WORDBREAKS; _init_completion -n = joins KEY=VALUE again.
read -ra COMP_WORDS <<<"$(sed -E 's/=/ = /g' <<<"$COMP_LINE")"
[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
[[ $COMP_LINE == *"=" ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_laptop_modectl "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"""
    env = dict(os.environ, PATH=CLIENT_DIR + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash",
                          BASH_COMPLETION, COMPLETION, line],
                         env=env, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError("bash failed: " + out.stderr)
    return [w for w in out.stdout.split("\n") if w]


class TabTest(unittest.TestCase):
    """A real TAB in an interactive bash, as a user types it."""

    def type_and_read(self, typed, want, timeout=30):
        pid, fd = pty.fork()
        if pid == 0:
            os.environ["PATH"] = CLIENT_DIR + ":" + os.environ.get("PATH", "/usr/bin:/bin")
            os.environ["PS1"] = "$ "
            os.environ["TERM"] = "dumb"
            os.environ["INPUTRC"] = "/dev/null"
            os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
        seen = b""
        try:
            os.write(fd, ("source %s; source %s; echo READY\n" % (BASH_COMPLETION, COMPLETION)).encode())
            deadline = time.monotonic() + timeout
            state = 0
            while time.monotonic() < deadline:
                r, _, _ = select.select([fd], [], [], 0.2)
                if r:
                    try:
                        seen += os.read(fd, 4096)
                    except OSError:
                        break
                if state == 0 and b"\nREADY" in seen:
                    seen = b""
                    os.write(fd, typed.encode())
                    state = 1
                elif state == 1 and want.encode() in seen:
                    return seen.decode(errors="replace")
            return seen.decode(errors="replace")
        finally:
            os.write(fd, b"\x15exit\n")
            time.sleep(0.2)
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            os.close(fd)

    def test_tab_completes_set_max_to_maxlostwork(self):
        """`laptop-modectl set Max<TAB>` becomes `laptop-modectl set MaxLostWork=`."""
        seen = self.type_and_read("laptop-modectl set Max\t", "set MaxLostWork=")
        self.assertIn("laptop-modectl set MaxLostWork=", seen)
        # nospace: the cursor stays after "=", ready for the value.
        self.assertNotIn("MaxLostWork= ", seen)

    def test_tab_completes_a_command(self):
        seen = self.type_and_read("laptop-modectl spin\t", "spinups ")
        self.assertIn("laptop-modectl spinups ", seen)


class CompletionTest(unittest.TestCase):
    def test_commands(self):
        self.assertEqual(complete("laptop-modectl s"), ["status", "start", "stop", "set", "sync", "spinups"])
        self.assertEqual(complete("laptop_mode s"), ["status", "start", "stop"])
        self.assertEqual(complete("laptop-modectl mea"), ["measure"])
        self.assertEqual(complete("laptop-modectl measure --win"), ["--window=", "--windows="])

    def test_set_keys_are_the_daemons(self):
        got = {k.rstrip("=") for k in complete("laptop-modectl set ")}
        self.assertEqual(got, settings_keys())

    def test_set_key_prefix(self):
        self.assertEqual(complete("laptop-modectl set Max"), ["MaxLostWork="])
        self.assertEqual(complete("laptop-modectl set Mode=auto Dirty"),
                         ["DirtyRatio=", "DirtyBackgroundRatio="])

    def test_set_values(self):
        self.assertEqual(complete("laptop-modectl set Mode="), ["Mode=off", "Mode=on", "Mode=auto"])
        self.assertEqual(complete("laptop-modectl set Engine=u"), ["Engine=userspace"])
        self.assertEqual(complete("laptop-modectl set Remount=t"), ["Remount=true"])
        self.assertEqual(complete("laptop-modectl set Attribution=b"), ["Attribution=bpf", "Attribution=block_dump"])
        self.assertEqual(complete("laptop-modectl set SataLinkPolicy=med"), ["SataLinkPolicy=med_power_with_dipm",
                                                                             "SataLinkPolicy=medium_power"])
        self.assertEqual(complete("laptop-modectl set MaxLostWork="), [])

    def test_set_list_value_completes_its_last_item(self):
        self.assertEqual(complete("laptop-modectl set RemountTypes=ext4,b"), ["RemountTypes=ext4,btrfs"])

    def test_set_no_remount_offers_mount_points(self):
        self.assertIn("NoRemount=/", complete("laptop-modectl set NoRemount=/"))

    def test_mode(self):
        self.assertEqual(complete("laptop-modectl mode o"), ["on", "off"])

    def test_monitor_offers_disks(self):
        disks = sorted(d for d in os.listdir("/sys/block")
                       if not re.match(r"(loop|ram|zram|dm-|md|sr)", d))
        if not disks:
            self.skipTest("no disk in /sys/block")
        self.assertEqual(sorted(complete("laptop-modectl monitor ")), disks)
        self.assertNotIn("loop0", complete("laptop-modectl monitor loop"))

    def test_options_from_help(self):
        self.assertIn("--json", complete("laptop-modectl disks --j"))
        self.assertIn("--since=", complete("laptop-modectl report --s"))
        self.assertEqual(complete("laptop-modectl report --since 7"), ["7d"])
        self.assertEqual(complete("laptop-modectl report --since=3"), ["--since=30d"])
        self.assertEqual(complete("laptop-modectl report --since 1"), ["12h", "1d"])
        self.assertEqual(complete("laptop-modectl report --since=2"), ["--since=2w"])

    def test_inhibit_completes_the_command(self):
        self.assertIn("--", complete("laptop-modectl inhibit "))
        self.assertIn("true", complete("laptop-modectl inhibit -- tru"))

    def test_defer_completes_its_options_and_the_command(self):
        self.assertIn("--", complete("laptop-modectl defer "))
        self.assertIn("true", complete("laptop-modectl defer --max 4h -- tru"))
        self.assertIn("--max=", complete("laptop-modectl wait-awake --m"))
        self.assertEqual(complete("laptop-modectl defer --max 1"), ["1h", "12h"])


if __name__ == "__main__":
    lmtest.main()
