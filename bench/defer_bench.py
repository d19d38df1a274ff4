#!/usr/bin/python3
"""Maintenance jobs on a timer, at once or deferred: disk spin-ups (issue 37).

Two jobs like Debian's maintenance timers run on an ext4 loop disk: a
tree-reading job (reads every file of a tree of a few hundred small files
that is not in the cache, as updatedb or man-db) and a log-writing job
(appends a few lines to a log and fsyncs, as logrotate), each started by a
timer every --every seconds, half a period apart. Two arms, back to back,
each on a fresh loop disk with laptop-moded (Mode=on, Engine=userspace, as
engine_bench.py): "at once" starts each job when its timer fires;
"deferred" starts `laptop-modectl defer --path MNT --max M -- JOB`. As a
systemd timer does, a timer does not start its job again while the last
one still runs or waits (the service is still active then). Two
workloads, both run: "user" adds engine_bench.py's laptop session (an
editor's swap file, a browser's cache page, a read cluster every 45 s),
which wakes the disk at least once per --max by itself; "nothing" is the
jobs alone. Disk I/O is sampled and counted as in engine_bench.py (its
Workload, Bench and analyse are used here, not copied); a spin-up is
blamed on a job when its I/O began within that job's run (from its first
instruction to its end, plus one 0.1 s sample).

Goal (issue 37): deferred jobs add no spin-up under "user", and at most
one per --max under "nothing". Never run as a timed test.
Usage (root): bench/defer_bench.py [--duration S] [--every T] [--max M] [--only NAME ...] [--smoke]
"""

import os
import sys
import time


# --- the jobs ------------------------------------------------------------------
# A timer runs `defer_bench.py --job tree|log PATH DISK` (deferred:
# laptop-modectl defer execs it). It is dispatched here, before the
# benchmark's own imports, so that a job starts quickly. It prints when it
# starts and ends (CLOCK_MONOTONIC, the clock the benchmark samples by) and,
# at its start, DISK's completed and in-flight I/O: a spin-up the sampler
# sees just after the job started is the job's only if no I/O had completed
# or begun by then (a deferred job starts within milliseconds of the I/O
# that woke the disk, well inside one 0.1 s sample).

def job_tree(root):
    """Reads every file under @root. Their pages are dropped first
    (posix_fadvise DONTNEED: no I/O for clean pages), so each run reads from
    the disk, as a nightly job does after a day of other use."""
    for top, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            fd = os.open(os.path.join(top, name), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                while os.read(fd, 1 << 16):
                    pass
            finally:
                os.close(fd)


def job_log(path):
    """Appends a few lines to the log at @path and fsyncs it."""
    with open(path, "a") as f:
        for i in range(3):
            f.write("%.3f maintenance line %d\n" % (time.monotonic(), i))
        f.flush()
        os.fsync(f.fileno())


def job(kind, where, disk):
    with open("/sys/block/%s/stat" % disk) as f:
        v = f.read().split()
    print("start %.6f %d %d" % (time.monotonic(), int(v[0]) + int(v[4]), int(v[8])), flush=True)
    {"tree": job_tree, "log": job_log}[kind](where)
    print("end %.6f" % time.monotonic(), flush=True)


if __name__ == "__main__" and sys.argv[1:2] == ["--job"]:
    job(*sys.argv[2:5])
    sys.exit(0)

import argparse  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402

import benchlib  # noqa: E402
import engine_bench  # noqa: E402  (sets up lmtest's path and LM_SRCDIR)
from engine_bench import Bench, Workload, analyse  # noqa: E402
import lmtest  # noqa: E402

NS_MARK = "LM_BENCH_DEFER_NAMESPACE"
FLAVOURS = ("user", "nothing")
ARMS = ("at-once", "deferred")
VARIANTS = tuple("%s/%s" % (f, a) for f in FLAVOURS for a in ARMS)
JOBS = ("tree", "log")
TREE_DIRS, TREE_FILES, TREE_FILE_SIZE = 12, 25, 4096  # 300 files of 4 KiB
SAMPLE = 0.1  # engine_bench.Workload.run samples the disk this often
REASON = re.compile(r"^laptop-modectl: (\w+)$")
# --verbose: the daemon's log lines that say what it saw of the disk.
EVENTS = re.compile(r"(\d\d):(\d\d):(\d\d\.\d+): (.*(?:Spin-up of|Disk loop\d+: (?:standby|active)"
                    r"|Flushed|WaitAwake:).*)$")


class JobsWorkload(Workload):
    """engine_bench's workload ("user") or none ("nothing"), plus the two
    jobs on their timers, started at once or through laptop-modectl defer.
    runs: one dict per job started: job, tick (when its timer fired),
    start, end (s since the run's start, None if it did not get there),
    reason (deferred: why the wait ended), rc; skipped: timer ticks while
    the job was still waiting or running, per job."""

    def __init__(self, mount_point, duration, args, user, deferred):
        super().__init__(mount_point, duration)
        self.args = args
        self.user = user
        self.deferred = deferred
        self.env = None  # the daemon's, for laptop-modectl defer
        self.disk = None
        self.tree = os.path.join(mount_point, "tree")
        self.log = os.path.join(mount_point, "log", "maintenance.log")
        self.lock = threading.Lock()
        self.runs = []
        self.live = {}  # job -> (Popen, its run) while it waits or runs
        self.readers = []
        self.skipped = {j: 0 for j in JOBS}
        self.t0 = None
        self.t0_wall = None  # the same moment by the wall clock (the daemon's log)

    def prepare(self):
        if self.user:
            super().prepare()
        for d in range(TREE_DIRS):
            top = os.path.join(self.tree, "d%02d" % d)
            os.makedirs(top)
            for i in range(TREE_FILES):
                with open(os.path.join(top, "f%03d" % i), "wb") as f:
                    f.write(os.urandom(TREE_FILE_SIZE))
        os.makedirs(os.path.dirname(self.log))
        with open(self.log, "w") as f:
            f.write("created\n")
        os.sync()

    def threads(self, t0):
        self.t0 = t0
        self.t0_wall = time.time() - (time.monotonic() - t0)
        # The tree job's timer first, the log job's half a period later.
        mine = [threading.Thread(target=self.timer,
                                 args=(j, self.args.first + k * self.args.every / 2))
                for k, j in enumerate(JOBS)]
        return (super().threads(t0) if self.user else []) + mine

    def timer(self, which, first):
        k = 0
        while True:
            at = self.t0 + first + k * self.args.every
            k += 1
            if at >= self.t0 + self.duration or self.stop.wait(max(0.0, at - time.monotonic())):
                return
            with self.lock:
                if which in self.live:
                    self.skipped[which] += 1
                    continue
            self.launch(which, at - self.t0)

    def launch(self, which, tick):
        argv = [sys.executable, os.path.abspath(__file__), "--job", which,
                self.tree if which == "tree" else self.log, self.disk]
        if self.deferred:
            argv = [lmtest.CTL, "defer", "--verbose", "--path", self.mp,
                    "--max", "%ds" % self.args.max, "--"] + argv
        p = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        run = {"job": which, "tick": tick, "start": None, "end": None, "io": None,
               "reason": None, "rc": None, "stderr": ""}
        with self.lock:
            self.runs.append(run)
            self.live[which] = (p, run)
        reader = threading.Thread(target=self.follow, args=(which, p, run))
        self.readers.append(reader)
        reader.start()

    def follow(self, which, p, run):
        """Notes the job's start and end as it prints them, then its exit."""
        for line in p.stdout:
            words = line.split()
            if words and words[0] in ("start", "end"):
                run[words[0]] = float(words[1]) - self.t0
            if words and words[0] == "start":
                run["io"] = (int(words[2]), int(words[3]))  # completed, in flight
        run["stderr"] = p.stderr.read()
        for line in run["stderr"].splitlines():
            m = REASON.match(line)
            if m:
                run["reason"] = m.group(1)
            elif "not waiting for the disk" in line:
                run["reason"] = "unavailable"
        run["rc"] = p.wait()
        with self.lock:
            self.live.pop(which, None)

    def end_jobs(self):
        """At the end of the run (or on failure): a job still waiting is
        stopped (its defer leaves the daemon's queue), a job running is let
        finish; nothing of theirs outlives the run."""
        with self.lock:
            live = list(self.live.values())
        for p, run in live:
            if run["start"] is None:
                run["left_waiting"] = True
                p.terminate()
        for p, run in live:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for reader in self.readers:
            reader.join()

    def run(self, disk):
        self.disk = disk
        try:
            return super().run(disk)
        finally:
            self.end_jobs()


def spinup_list(changes, duration, idle):
    """The spin-ups analyse() counts: [(when, index into changes)]."""
    out, prev = [], -idle
    for i, t in enumerate(changes):
        if t < duration and t - prev >= idle:
            out.append((t, i))
        prev = t
    return out


def caused_by(run, at, quiet_count, duration):
    """True when the spin-up seen at @at, the first I/O after the disk's
    count stood at @quiet_count, began within @run: the job had started
    with that count and nothing in flight, and had not ended a sample
    before."""
    if run["start"] is None or run["io"] is None or run["start"] > at:
        return False
    end = run["end"] if run["end"] is not None else duration
    return at <= end + SAMPLE + 0.05 and run["io"] == (quiet_count, 0)


class DeferBench(Bench):
    def daemon_config(self, engine):
        # The daemon takes a disk as asleep after SpinUpIdle without I/O:
        # the benchmark's standby timer, so that "awake" means the same to both.
        return super().daemon_config(engine) + "SpinUpIdle=%d\nDeferMaintenance=true\n" % round(
            self.args.idle)

    def run(self, variant):
        flavour, arm = variant.split("/")
        with self.fresh_disk() as stops:
            workload = JobsWorkload(self.mp, self.args.duration, self.args, flavour == "user",
                                    arm == "deferred")
            workload.prepare()
            stops.append(self.start_daemon("userspace", name=variant.replace("/", "-")))
            workload.env = self.env
            self.settle()
            changes = workload.run(os.path.basename(self.device))
        r = self.result(changes, workload)
        if self.args.verbose:
            r["events"] = self.daemon_events(variant.replace("/", "-"), workload.t0_wall)
        return r

    def daemon_events(self, name, t0_wall):
        """[(s since the run's start, line)] of the daemon's log: spin-ups,
        disk states, flushes, waiters (GLib stamps lines with the local time
        of day)."""
        out = []
        midnight = time.mktime(time.localtime(t0_wall)[:3] + (0, 0, 0, 0, 0, -1))
        with open(os.path.join(self.tmp, "daemon-%s.log" % name), errors="replace") as f:
            for line in f:
                m = EVENTS.search(line)
                if m:
                    at = midnight + int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(
                        m.group(3))
                    out.append((at - t0_wall, m.group(4)))
        return out

    def result(self, changes, workload):
        args = self.args
        spinups, asleep, longest = analyse(changes, args.duration, args.idle)
        seen = spinup_list(changes, args.duration, args.idle)
        assert len(seen) == spinups, (seen, spinups)
        times = [t for t, _ in seen]
        ran = [r for r in workload.runs if r["start"] is not None]
        by_jobs = [t for t, i in seen
                   if any(caused_by(r, t, workload.counts[i], args.duration) for r in ran)]
        waits = [r["start"] - r["tick"] for r in ran]
        reasons = {}
        for r in ran:
            reasons[r["reason"] or "-"] = reasons.get(r["reason"] or "-", 0) + 1
        return {"spinups": spinups, "asleep": asleep, "longest": longest, "times": times,
                "by_jobs": by_jobs, "waits": waits, "reasons": reasons, "runs": workload.runs,
                "ran": len(ran),
                "failed": [r for r in ran if r["rc"] != 0 and not r.get("left_waiting")],
                "left_waiting": sum(1 for r in workload.runs if r.get("left_waiting")),
                "skipped": sum(workload.skipped.values()), "changes": changes}


def smoke_check(variant, r):
    """A smoke run judges no numbers, only that the machinery worked: each
    job ran, exited 0, and a deferred one said why its wait ended."""
    if r["failed"]:
        raise RuntimeError("%s: a job failed: %r" % (variant, r["failed"]))
    started = {x["job"] for x in r["runs"] if x["start"] is not None}
    if started != set(JOBS):
        raise RuntimeError("%s: jobs that never ran: %s; runs %r"
                           % (variant, sorted(set(JOBS) - started), r["runs"]))
    if variant.endswith("deferred") and "-" in r["reasons"]:
        raise RuntimeError("%s: a deferred job without a reason: %r" % (variant, r["runs"]))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=None,
                    help="seconds per run (120; 8 with --smoke)")
    ap.add_argument("--every", type=float, default=None,
                    help="each job's timer period T, seconds (45; 3 with --smoke)")
    ap.add_argument("--first", type=float, default=None,
                    help="the tree job's first tick, seconds; the log job's comes T/2 later "
                    "(10; 1 with --smoke)")
    ap.add_argument("--max", type=int, default=None,
                    help="laptop-modectl defer --max M, seconds (60; 2 with --smoke)")
    ap.add_argument("--max-lost-work", type=int, default=30)
    ap.add_argument("--seconds", type=int, default=2, help="LaptopModeSeconds")
    ap.add_argument("--idle", type=float, default=5,
                    help="standby timer, seconds (also the daemon's SpinUpIdle)")
    ap.add_argument("--only", nargs="*", choices=VARIANTS, default=list(VARIANTS))
    ap.add_argument("--verbose", action="store_true",
                    help="print each run's spin-ups and job runs")
    ap.add_argument("--smoke", action="store_true",
                    help="a short run of every variant, reported as TAP (numbers not judged)")
    args = ap.parse_args()
    for name, full, smoke in (("duration", 120, 8), ("every", 45, 3), ("first", 10, 1),
                              ("max", 60, 2)):
        if getattr(args, name) is None:
            setattr(args, name, smoke if args.smoke else full)
    # The engine bench's options this bench does not offer.
    args.fs, args.workload, args.records_dir = "ext4", "session", None
    smoke = benchlib.begin(__file__, "defer_bench", args.smoke, NS_MARK,
                            needs="needs root (loop device, mounts, /proc/sys/vm, BPF)")
    b = DeferBench(args)
    run = (lambda v: smoke_check(v, b.run(v))) if args.smoke else b.run
    results = benchlib.run_variants(smoke, b, args.only, run, args.duration)

    user = Workload("/", args.duration)
    n_ideal, asleep_ideal, clusters = engine_bench.ideal(user, args.max_lost_work, args.seconds,
                                                         args.idle)
    print("kernel %s, loop ext4, %d s per run; tree job (%d files of %d KiB) every %g s from "
          "%g s, log job (3 lines, fsync) every %g s from %g s; deferred: laptop-modectl defer "
          "--max %ds; Mode=on Engine=userspace MaxLostWork=%d s LaptopModeSeconds=%d s; "
          "standby timer and SpinUpIdle %g s"
          % (os.uname().release, args.duration, TREE_DIRS * TREE_FILES, TREE_FILE_SIZE >> 10,
             args.every, args.first, args.every, args.first + args.every / 2, args.max,
             args.max_lost_work, args.seconds, args.idle))
    print("user: engine_bench's workload (%d read clusters; without jobs at best %d spin-ups, "
          "%.0f%% asleep); nothing: the jobs alone (without jobs: 0 spin-ups)"
          % (clusters, n_ideal, asleep_ideal * 100))
    print("%-18s %4s %7s %8s %7s %7s %8s %17s  %s" % (
        "", "runs", "skipped", "spin-ups", "by jobs", "asleep", "longest", "waited med/max",
        "reasons"))
    for variant in args.only:
        r = results.get(variant)
        if r is None:
            print("%-18s not run (see above)" % variant)
            continue
        waited = "-"
        if variant.endswith("deferred") and r["waits"]:
            waited = "%.1f/%.1f s" % (statistics.median(r["waits"]), max(r["waits"]))
        reasons = " ".join("%s %d" % kv for kv in sorted(r["reasons"].items()))
        if r["left_waiting"]:
            reasons += ", %d still waiting at the end" % r["left_waiting"]
        print("%-18s %4d %7d %8d %7d %6.0f%% %7.1fs %17s  %s" % (
            variant, r["ran"], r["skipped"], r["spinups"], len(r["by_jobs"]), r["asleep"] * 100,
            r["longest"], waited, reasons if variant.endswith("deferred") else "-"))
        if args.verbose:
            print("    spin-ups at: %s" % " ".join("%.1f" % t for t in r["times"]))
            print("    by jobs:     %s" % " ".join("%.1f" % t for t in r["by_jobs"]))
            print("    I/O at:      %s" % " ".join("%.1f" % t for t in r["changes"]))
            for at, line in r.get("events", []):
                print("    daemon %6.1f  %s" % (at, line))
            for x in r["runs"]:
                print("    %-4s tick %6.1f  start %6s  end %6s  %s" % (
                    x["job"], x["tick"], "-" if x["start"] is None else "%.1f" % x["start"],
                    "-" if x["end"] is None else "%.1f" % x["end"], x["reason"] or ""))
    if not args.smoke:
        for flavour in FLAVOURS:
            r = results.get(flavour + "/deferred")
            if r is None:
                continue
            if flavour == "user":
                print("goal, user: deferred jobs caused %d spin-ups (goal 0): %s"
                      % (len(r["by_jobs"]), "met" if not r["by_jobs"] else "NOT met"))
            else:
                gaps = [b - a for a, b in zip(r["times"], r["times"][1:])]
                closest = min(gaps) if gaps else None
                # One sample of slack: a spin-up is seen up to 0.1 s late.
                ok = closest is None or closest >= args.max - SAMPLE
                print("goal, nothing: %d spin-ups, the closest two %s apart (goal: at most one "
                      "per %d s): %s" % (r["spinups"], "-" if closest is None else
                                         "%.1f s" % closest, args.max, "met" if ok else "NOT met"))
    smoke.finish()


if __name__ == "__main__":
    main()
