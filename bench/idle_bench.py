#!/usr/bin/python3
"""The daemon idle: how often it wakes with nothing to do, laptop mode off
and on, no subscriber.

laptop-moded runs on a private bus (with polkitd) against this machine's
real disks and /proc/sys/vm (Mode=on writes the dirty sysctls, restored at
its stop; Remount=false, so no filesystem of the machine is touched). After
its start-up has settled (every disk's first idle timer has run), the
script sums, over --duration seconds, the voluntary and nonvoluntary
context switches of every thread of the daemon (/proc/PID/task/*/status):
each wake-up of a thread, for a timer, a file descriptor or a signal, ends
in one. It also counts what the daemon logged meanwhile (spin-ups, disk
state changes, ledger writes): on a shared machine another program's I/O
wakes a disk now and then, and that wake-up is the daemon's job, not idle
cost. So by default the daemon watches one disk that is really idle: an
ext4 loop disk of the script's own, mounted and left alone, with every
other disk of the machine given Exclude=true (not watched: the BPF filters
drop their I/O in the kernel). --all-disks watches the machine's disks
instead. With the loop disk, the daemon's state directory (its ledger and
restore journal) sits on it, as /var/lib usually sits on the disk laptop
mode keeps asleep, and the script counts that disk's spin-ups and the I/O
it did over the idle time (/sys/block/loopN/stat), as spin-ups per hour:
the daemon must not wake the disk it protects (issue 46). --max-lost-work
shortens MaxLostWork so that an hour's worth of its periods fits in a
shorter run. Not a timed test; `perf` is not needed.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import lmtest  # noqa: E402
import benchlib  # noqa: E402
from test_spinup_realkernel import LoopExt4  # noqa: E402

NS_MARK = "LM_BENCH_IDLE_NAMESPACE"
EVENTS = re.compile(r"Spin-up of |Disk \S+: (standby|active)|Ledger: wrote|Disk \S+ armed"
                    r"|Flushed \d+ filesystems")


def disk_io(disk):
    """(reads, writes) completed on @disk: /sys/block/DISK/stat's 1st and 5th."""
    with open("/sys/block/%s/stat" % disk) as f:
        fields = f.read().split()
    return int(fields[0]), int(fields[4])


def switches(pid):
    """{tid: voluntary + nonvoluntary context switches} of @pid's threads."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        n = 0
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        n += int(line.split()[1])
        except FileNotFoundError:
            continue  # a thread that just ended
        out[tid] = n
    return out


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="lm-idle-bench-")
        os.chmod(self.tmp, 0o755)
        self.procs = []
        self.fs = None
        self.excluded = []
        if not args.all_disks:
            self.fs = LoopExt4(self.tmp)
            self.excluded = sorted(n for n in os.listdir("/sys/block") if n != self.fs.disk)

    def cleanup(self):
        for p in reversed(self.procs):
            lmtest.stop_process(p)
        if self.fs is not None:
            self.fs.cleanup()
        subprocess.run(["rm", "-rf", self.tmp])

    def run(self, mode):
        run_tmp = os.path.join(self.tmp, "run-" + mode)
        os.makedirs(run_tmp)
        os.chmod(run_tmp, 0o755)
        first = len(self.procs)
        address = lmtest.start_system_bus_with_polkit(run_tmp, self.procs)
        services = self.procs[first:]
        # On the watched loop disk when there is one (made 0700, the
        # daemon's own, as systemd's StateDirectory= is).
        state_base = self.fs.mnt if self.fs is not None else self.tmp
        state_dir = os.path.join(state_base, "state-" + mode)
        os.makedirs(state_dir, mode=0o700)
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address,
                   STATE_DIRECTORY=state_dir,
                   LAPTOP_MODED_CONFIG=os.path.join(self.tmp, mode + ".conf"),
                   G_MESSAGES_DEBUG="all")
        env.pop("LAPTOP_MODED_ROOT", None)
        with open(env["LAPTOP_MODED_CONFIG"], "w") as f:
            f.write("[LaptopMode]\nMode=%s\nRemount=false\nSpinUpIdle=%d\nMaxLostWork=%d\n"
                    % (mode, self.args.idle, self.args.max_lost_work))
            for name in self.excluded:
                f.write("[Disk %s]\nExclude=true\n" % name)
        log_path = os.path.join(self.tmp, mode + ".log")
        log = open(log_path, "w")
        daemon = subprocess.Popen([self.args.daemon], env=env, stdout=log,
                                  stderr=subprocess.STDOUT)
        self.procs.append(daemon)

        def text():
            with open(log_path, errors="replace") as f:
                return f.read()
        deadline = time.monotonic() + 30
        want = "Laptop mode on" if mode == "on" else "Owning "
        while want not in text():
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise RuntimeError("the daemon did not start (%s):\n%s" % (want, text()))
            time.sleep(0.1)
        # Start-up: every disk's first idle timer, and the engine's load.
        time.sleep(self.args.idle + 3)
        listed = set(re.findall(r"Disk (\S+) \(", text()))
        line = re.search(r"Disks excluded, not watched: (.*)", text())
        excluded = set() if line is None or line.group(1) == "none" else set(line.group(1).split(", "))
        if self.fs is not None and (self.fs.disk in excluded or not listed - excluded
                                    or line is None):
            raise RuntimeError("the daemon did not exclude the other disks:\n" + text())
        # What the start wrote (the restore journal: durable before the
        # change it guards) is on the disk before the idle time begins.
        if self.fs is not None:
            subprocess.run(["sync", "-f", state_dir], check=True)
            # That sync is a write: the engine's flush follows it
            # (LaptopModeSeconds, 2 by default), then the disk goes quiet.
            time.sleep(self.args.idle + 5)
        start_log = len(text())
        io_before = disk_io(self.fs.disk) if self.fs is not None else None
        before = switches(daemon.pid)
        t0 = time.monotonic()
        time.sleep(self.args.duration)
        after = switches(daemon.pid)
        wall = time.monotonic() - t0
        io_after = disk_io(self.fs.disk) if self.fs is not None else None
        window = text()[start_log:]
        state_spinups = (len(re.findall(r"Spin-up of %s " % re.escape(self.fs.disk), window))
                         if self.fs is not None else None)
        events = len(EVENTS.findall(window))
        wakeups = sum(n - before.get(tid, 0) for tid, n in after.items())
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)
        for p in reversed(services):
            lmtest.stop_process(p)
        backend = re.search(r"Spin-up attribution backend (\S+)", text())
        return {"mode": mode, "seconds": wall, "switches": wakeups,
                "state_spinups": state_spinups,
                "state_io": (None if io_before is None
                             else tuple(a - b for a, b in zip(io_after, io_before))),
                "per_min": wakeups * 60 / wall, "events": events,
                "backend": backend.group(1) if backend else "none",
                "event_driven": "no periodic re-check" in text(),
                "watched": ", ".join(sorted(listed - excluded)) or "none",
                "log": [line for line in window.splitlines() if EVENTS.search(line)]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=600, help="seconds idle per mode (600)")
    ap.add_argument("--idle", type=int, default=20, help="SpinUpIdle (20, the default)")
    ap.add_argument("--modes", nargs="*", default=["off", "on"])
    ap.add_argument("--max-lost-work", type=int, default=600, help="MaxLostWork (600, the default)")
    ap.add_argument("--daemon", default=lmtest.DAEMON, help="the laptop-moded binary")
    ap.add_argument("--all-disks", action="store_true",
                    help="watch the machine's disks instead of an idle loop disk of its own")
    ap.add_argument("--smoke", action="store_true",
                    help="5 s per mode with SpinUpIdle=2, as TAP (numbers not judged)")
    ap.add_argument("--verbose", action="store_true", help="print the logged events")
    args = ap.parse_args()
    if args.smoke:
        args.duration, args.idle, args.max_lost_work = 5, 2, 2
    smoke = benchlib.begin(__file__, "idle_bench", args.smoke, NS_MARK)
    b = Bench(args)
    rows = []
    try:
        for mode in args.modes:
            r = smoke.case("mode " + mode, lambda: b.run(mode))
            if r is not None:
                rows.append(r)
                print("mode %s: %s" % (mode, {k: v for k, v in r.items() if k != "log"}),
                      file=sys.stderr, flush=True)
                if args.verbose:
                    print("\n".join(r["log"]), file=sys.stderr)
    finally:
        b.cleanup()
    smoke.finish()
    print("| laptop mode | backend | watched | idle | context switches | per minute | logged events "
          "| state disk: spin-ups (per hour) | state disk: reads, writes |")
    print("|---|---|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        state = ("%d (%.1f)" % (r["state_spinups"], r["state_spinups"] * 3600 / r["seconds"])
                 if r["state_spinups"] is not None else "n/a")
        print("| %s | %s%s | %s | %.0f s | %d | %.2f | %d | %s | %s |"
              % (r["mode"], r["backend"], " (event-driven)" if r["event_driven"] else "",
                 r["watched"], r["seconds"], r["switches"], r["per_min"], r["events"], state,
                 "%d, %d" % r["state_io"] if r["state_io"] is not None else "n/a"))


if __name__ == "__main__":
    main()
