#!/usr/bin/python3
"""A laptop session compressed in time, per laptop-mode engine: disk wake-ups.

Owns everything it creates (a private mount namespace, one loop disk, a
private bus, the daemon, laptop-mode-tools' run-time files) and puts the
machine back as found: /proc/sys/vm is saved first and written back at the
end, even on failure. Samples /sys/block/loopN/stat (a benchmark may poll;
the daemon never does). Never run as a timed test.
Usage (root): bench/engine_bench.py [--duration S] [--fs ext4|xfs|btrfs] [--workload session|sparse]
              [--only NAME ...] [--smoke]
"""

import argparse
import contextlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRCDIR, "tests", "integration"))
os.environ.setdefault("LM_SRCDIR", SRCDIR)
import lmtest  # noqa: E402  (BUS_CONFIG, paths, sysctl helpers)
import benchlib  # noqa: E402

NS_MARK = "LM_BENCH_ENGINE_NAMESPACE"
REMOUNT_TYPES = ("ext3", "ext4", "reiserfs", "btrfs")
# The kernel's own defaults, for the "stock" run whatever this machine has.
STOCK_VM = {"laptop_mode": "0", "dirty_writeback_centisecs": "500",
            "dirty_expire_centisecs": "3000", "dirty_ratio": "20", "dirty_background_ratio": "10"}
MKFS = {"ext4": ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
        "xfs": ["mkfs.xfs", "-q", "-f"], "btrfs": ["mkfs.btrfs", "-q", "-f"]}
VARIANTS = ("stock", "kernel", "userspace", "laptop-mode-tools")


def sh(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, **kw)


def mountinfo_types():
    """{mount point: fstype}, unescaped (a mount point may hold a space)."""
    return {os.fsdecode(mp): v[2] for mp, v in lmtest.mountinfo().items()}


def disk_io(disk):
    """Reads and writes completed on @disk so far."""
    with open("/sys/block/%s/stat" % disk) as f:
        v = f.read().split()
    return int(v[0]) + int(v[4])


class Workload:
    """What an editor and a browser do while someone reads: an editor's
    swap file gets a line every 2 s, a browser updates a 4 KiB page of its
    cache in place every 7 s (neither fsyncs), and every 45 s the user opens something not
    in the cache (two reads 1.5 s apart: one cluster)."""

    EDITOR_EVERY = 2.0
    BROWSER_EVERY = 7.0
    READ_EVERY = 45.0
    READ_FIRST = 20.0

    def __init__(self, mount_point, duration):
        self.mp = mount_point
        self.duration = duration
        self.stop = threading.Event()
        n = self.clusters() * 2
        self.to_read = [os.path.join(mount_point, "doc%02d" % i) for i in range(n)]

    def clusters(self):
        return max(0, math.ceil((self.duration - self.READ_FIRST) / self.READ_EVERY))

    def prepare(self):
        for path in self.to_read:
            with open(path, "wb") as f:
                f.write(os.urandom(512 << 10))
        os.sync()
        for path in self.to_read:
            fd = os.open(path, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)

    def editor(self):
        with open(os.path.join(self.mp, ".notes.txt.swp"), "a") as f:
            while not self.stop.wait(self.EDITOR_EVERY):
                f.write("typed at %.1f\n" % time.monotonic())
                f.flush()

    def browser(self):
        # Updated in place, as a cache or database page: truncating or
        # renaming over the file would make ext4 start writeback at once
        # (auto_da_alloc), which no engine can hold back.
        fd = os.open(os.path.join(self.mp, "cache.db"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            k = 0
            while not self.stop.wait(self.BROWSER_EVERY):
                os.pwrite(fd, os.urandom(4096), (k % 16) * 4096)
                k += 1
        finally:
            os.close(fd)

    def reader(self, t0):
        files = iter(self.to_read)
        k = 0
        while True:
            at = t0 + self.READ_FIRST + k * self.READ_EVERY
            if self.stop.wait(max(0.0, at - time.monotonic())):
                return
            for i in range(2):
                path = next(files, None)
                if path is None:
                    return
                with open(path, "rb") as f:
                    while f.read(1 << 20):
                        pass
                if i == 0 and self.stop.wait(1.5):
                    return
            k += 1

    def threads(self, t0):
        """What runs beside the sampling, from @t0 (monotonic) until stop is
        set (a subclass adds its own)."""
        return [threading.Thread(target=self.editor), threading.Thread(target=self.browser),
                threading.Thread(target=self.reader, args=(t0,))]

    def run(self, disk):
        """The times (s since the start) at which @disk's I/O count changed,
        sampled every 0.1 s. self.counts: the count at the start, then after
        each change (changes[i] went from counts[i] to counts[i + 1])."""
        t0 = time.monotonic()
        threads = self.threads(t0)
        for t in threads:
            t.start()
        last = disk_io(disk)
        changes = []
        self.counts = [last]
        try:
            while True:
                now = time.monotonic() - t0
                if now >= self.duration:
                    break
                time.sleep(0.1)
                v = disk_io(disk)
                if v != last:
                    changes.append(time.monotonic() - t0)
                    self.counts.append(v)
                    last = v
        finally:
            self.stop.set()
            for t in threads:
                t.join()
        return changes



class SparseWorkload(Workload):
    """Another rhythm: a mail or sync client that logs a line every 11 s
    and updates its store every 40 s, and someone opening a document every
    90 s; for the replay's check against a second pattern of writes."""

    EDITOR_EVERY = 11.0
    BROWSER_EVERY = 40.0
    READ_EVERY = 90.0
    READ_FIRST = 30.0


WORKLOADS = {"session": Workload, "sparse": SparseWorkload}

def analyse(changes, duration, idle):
    """Spin-ups (I/O after >= @idle s without any; the disk is taken as
    asleep at the start), share of time asleep with a standby timer of
    @idle s, longest stretch without I/O."""
    spinups, asleep, longest = 0, 0.0, 0.0
    prev = -idle  # asleep when the run starts
    for t in changes + [duration]:
        gap = t - prev
        if t < duration and gap >= idle:
            spinups += 1
        asleep += max(0.0, gap - idle) if prev >= 0 else max(0.0, t)
        longest = max(longest, gap if prev >= 0 else t)
        prev = t
    return spinups, asleep / duration, longest


def ideal(workload, max_lost_work, seconds, idle):
    """The best any engine can do: the disk wakes for each read cluster and
    writes everything then (LaptopModeSeconds later), else once per
    MaxLostWork for the writes; each wake keeps it up for the standby timer."""
    reads = [workload.READ_FIRST + k * workload.READ_EVERY for k in range(workload.clusters())]
    wakes, busy = [], []
    last_flush = 0.0
    for r in reads + [workload.duration]:
        while last_flush + max_lost_work < r:
            last_flush += max_lost_work
            wakes.append(last_flush)
            busy.append(0.2)
        if r < workload.duration:
            wakes.append(r)
            busy.append(1.5 + seconds + 0.2)  # the cluster, the quiet period, the flush
            last_flush = r + 1.5 + seconds
    asleep = 0.0
    prev_end = -idle
    for w, b in zip(wakes, busy):
        asleep += max(0.0, w - (prev_end + idle)) if prev_end >= 0 else w
        prev_end = w + b
    asleep += max(0.0, workload.duration - (prev_end + idle))
    return len(wakes), asleep / workload.duration, len(reads)


# --- NVMe: the same I/O walked through a typical laptop SSD's power table ----
# tests/data/nvme/synthetic-identify-5ps-idlp.bin with the APST table Linux
# builds for it (states 0-2 -> ps3 after 71 ms idle, ps3 -> ps4 after 500 ms):
# (max power W, idle power W, active power W or None, APST idle s, target).
NVME_TABLE = [(7.02, 0.90, 5.20, 0.071, 3), (6.30, 0.90, 4.60, 0.071, 3),
              (3.50, 0.90, 2.90, 0.071, 3), (0.076, 0.045, None, 0.5, 4),
              (0.005, 0.003, None, 0, 0)]


def nvme_walk(changes, duration, table=NVME_TABLE):
    """As common/lm-nvme-residency.c: each second with I/O in ps0 at its
    active power, each idle gap down the APST chain at each state's idle
    power. Returns (share of the run in the deepest state, Wh)."""
    io = sorted({int(t) for t in changes if 0 <= t < duration})
    seconds = [0.0] * len(table)
    wh = [0.0]

    def gap(g):
        state = 0
        for _ in table:
            _, _, _, itpt, target = table[state]
            if itpt == 0 or g < itpt:
                break
            seconds[state] += itpt
            wh[0] += table[state][1] * itpt / 3600
            g -= itpt
            state = target
        seconds[state] += g
        wh[0] += table[state][1] * g / 3600

    idle_from = 0
    for s in io:
        gap(s - idle_from)
        wh[0] += table[0][2] / 3600
        idle_from = s + 1
    gap(max(0, int(duration) - idle_from))
    return seconds[-1] / duration, wh[0]


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="lm-engine-bench-")
        os.chmod(self.tmp, 0o755)
        self.vm = lmtest.read_real_vm()
        self.procs = []
        self.binds = []
        self.estimates = {}  # engine -> stock_estimate() of its run
        self.image = os.path.join(self.tmp, "disk.img")
        self.mp = os.path.join(self.tmp, "disk")
        self.device = None
        self.env = None  # the last daemon's environment (start_daemon)

    # --- the loop disk --------------------------------------------------

    def make_disk(self):
        with open(self.image, "wb") as f:
            f.truncate((320 if self.args.fs == "xfs" else 256) << 20)  # xfs: 300 MB at least
        sh(MKFS[self.args.fs] + [self.image])
        self.device = sh(["losetup", "--find", "--show", self.image], text=True).stdout.strip()
        os.makedirs(self.mp, exist_ok=True)
        sh(["mount", self.device, self.mp])  # default options: the tool under test remounts

    def drop_disk(self):
        if self.device is None:
            return
        if subprocess.run(["umount", self.mp], capture_output=True).returncode:
            subprocess.run(["umount", "-l", self.mp], capture_output=True)
        subprocess.run(["losetup", "-d", self.device], capture_output=True)
        self.device = None
        os.unlink(self.image)

    @contextlib.contextmanager
    def fresh_disk(self):
        """A new loop disk under the kernel's stock writeback. Yields a list
        for the stops of what the run starts on it; those are called, the
        disk dropped and the machine's /proc/sys/vm put back however the
        run ends."""
        lmtest.write_real_vm(STOCK_VM)
        self.make_disk()
        stops = []
        try:
            yield stops
        finally:
            try:
                for stop in reversed(stops):
                    stop()
            finally:
                self.drop_disk()
                lmtest.write_real_vm(self.vm)

    def settle(self, quiet=3.0, timeout=60):
        disk = os.path.basename(self.device)
        last, since = disk_io(disk), time.monotonic()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(0.1)
            v = disk_io(disk)
            if v != last:
                last, since = v, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return

    # --- the tools --------------------------------------------------------

    def daemon_config(self, engine):
        """The daemon's configuration file (a subclass adds its keys)."""
        # Only the benchmark's disk is remounted, as for laptop-mode-tools.
        theirs = sorted(mp for mp, t in mountinfo_types().items()
                        if t in REMOUNT_TYPES and mp != self.mp)
        return ("[LaptopMode]\nMode=on\nEngine=%s\nMaxLostWork=%d\nLaptopModeSeconds=%d\n"
                "NoRemount=%s\n" % (engine, self.args.max_lost_work, self.args.seconds,
                                    "".join(m.replace(";", "\\;") + ";" for m in theirs)))

    def daemon_ready(self, status, log):
        """Has the daemon started (its `status --json` and its log so far)?
        Here: laptop mode is on."""
        return bool(status.get("Active"))

    def start_daemon(self, engine, name=None, estimate=True):
        """Starts the daemon with @engine; its bus, state and log are named
        @name (default: the engine), and self.env is how to call it. Ready
        when daemon_ready() says so; @estimate: the returned stop() first
        asks for the stock estimate of the run (self.estimates[engine])."""
        name = name or engine
        # A directory per run: the bus socket and polkitd's files of the
        # previous run are not in the way. The bus and polkitd go straight
        # into self.procs, so cleanup() stops them even when a later step
        # of this start fails.
        run_tmp = os.path.join(self.tmp, "run-" + name)
        os.makedirs(run_tmp)
        os.chmod(run_tmp, 0o755)
        first = len(self.procs)
        address = lmtest.start_system_bus_with_polkit(run_tmp, self.procs)
        services = self.procs[first:]
        config = os.path.join(self.tmp, "laptop-moded.conf")
        with open(config, "w") as f:
            f.write(self.daemon_config(engine))
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address, LAPTOP_MODED_CONFIG=config,
                   STATE_DIRECTORY=os.path.join(self.tmp, "state-" + name))
        env.pop("LAPTOP_MODED_ROOT", None)
        self.env = env
        log_path = os.path.join(self.tmp, "daemon-%s.log" % name)
        log = open(log_path, "w")
        daemon = subprocess.Popen([lmtest.DAEMON, "--verbose"], env=env, stdout=log,
                                  stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(daemon)
        deadline = time.monotonic() + 15
        while True:
            r = subprocess.run([lmtest.CTL, "status", "--json"], env=env, capture_output=True,
                               text=True)
            with open(log_path, errors="replace") as f:
                if r.returncode == 0 and self.daemon_ready(json.loads(r.stdout), f.read()):
                    break
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise RuntimeError("laptop-moded did not get ready: %s%s"
                                   % (r.stdout, r.stderr))
            time.sleep(0.1)

        def stop():
            try:
                if estimate:
                    self.estimates[engine] = self.stock_estimate(env)
            finally:
                for p in [daemon] + list(reversed(services)):
                    lmtest.stop_process(p)
        return stop

    def stock_estimate(self, env):
        """What `laptop-modectl report` estimates the kernel's stock writeback
        would have cost on the activity this run's ledger recorded: (spin-ups,
        awake seconds), or None when the ledger recorded no activity."""
        disk = os.path.basename(self.device)
        r = subprocess.run([lmtest.CTL, "report", "--json", "--since", "1d", "--disk", disk,
                            "--idle", "%g" % self.args.idle], env=env, capture_output=True,
                           text=True)
        if r.returncode != 0:
            print("laptop-modectl report: %s" % r.stderr.strip(), file=sys.stderr)
            return None
        est = json.loads(r.stdout).get("disks", {}).get(disk, {}).get("stock_estimate")
        if self.args.records_dir:
            # The ledger's records, for replaying again offline:
            # laptop-modectl report --from-json FILE --disk loopN --idle 5.
            rec = subprocess.run([lmtest.CTL, "report", "--json", "--records", "--since", "1d",
                                  "--disk", disk], env=env, capture_output=True, text=True)
            os.makedirs(self.args.records_dir, exist_ok=True)
            name = "%s-%s-%s.json" % (self.args.fs, self.args.workload, disk)
            with open(os.path.join(self.args.records_dir, name), "w") as f:
                f.write(rec.stdout)
        return (est["spinups"], est["awake_s"]) if isinstance(est, dict) else None

    def start_laptop_mode_tools(self):
        lmt = benchlib.laptop_mode_tools()
        with open("/etc/laptop-mode/laptop-mode.conf") as f:
            text = f.read()
        # Only the core module's sysctls and remounts, on exactly our disk;
        # every other module off (they would touch real devices).
        overrides = {
            "ENABLE_LAPTOP_MODE_ON_AC": "1", "ENABLE_AUTO_MODULES": "0",
            "LM_AC_MAX_LOST_WORK_SECONDS": str(self.args.max_lost_work),
            "LM_BATT_MAX_LOST_WORK_SECONDS": str(self.args.max_lost_work),
            "LM_SECONDS_BEFORE_SYNC": str(self.args.seconds),
            "PARTITIONS": '"%s"' % self.mp, "CONTROL_READAHEAD": "0", "CONTROL_NOATIME": "0",
            "CONTROL_HD_IDLE_TIMEOUT": "0", "CONTROL_HD_POWERMGMT": "0",
            "CONTROL_HD_WRITECACHE": "0", "CONTROL_MOUNT_OPTIONS": "1", "VERBOSE_OUTPUT": "0",
        }
        text += "\n# laptop-moded benchmark overrides\n" + "".join(
            "%s=%s\n" % kv for kv in overrides.items())
        conf = os.path.join(self.tmp, "laptop-mode.conf")
        with open(conf, "w") as f:
            f.write(text)
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty, exist_ok=True)
        if not self.binds:
            for src, dst in ((conf, "/etc/laptop-mode/laptop-mode.conf"),
                             (empty, "/etc/laptop-mode/conf.d")):
                sh(["mount", "--bind", src, dst])
                self.binds.append(dst)
            sh(["mount", "-t", "tmpfs", "lm-bench", "/run"])  # /var/run and /var/lock
            self.binds.append("/run")
            os.makedirs("/run/lock")
        sh([lmt, "start"])

        def stop():
            sh([lmt, "stop"])
        return stop

    # --- one run ------------------------------------------------------------

    def run(self, variant):
        with self.fresh_disk() as stops:
            workload = WORKLOADS[self.args.workload](self.mp, self.args.duration)
            workload.prepare()
            if variant in ("kernel", "userspace"):
                stops.append(self.start_daemon(variant))
            elif variant == "laptop-mode-tools":
                stops.append(self.start_laptop_mode_tools())
            vm = lmtest.read_real_vm()
            self.settle()
            changes = workload.run(os.path.basename(self.device))
        return analyse(changes, self.args.duration, self.args.idle), vm, changes

    def cleanup(self):
        for p in reversed(self.procs):
            lmtest.stop_process(p)
        self.drop_disk()
        for b in reversed(self.binds):
            subprocess.run(["umount", "-l", b], capture_output=True)
        lmtest.write_real_vm(self.vm)
        if lmtest.read_real_vm() != self.vm:
            print("WARNING: /proc/sys/vm differs from before: %r" % lmtest.read_real_vm())
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=None,
                    help="seconds per run (180; 6 with --smoke)")
    ap.add_argument("--max-lost-work", type=int, default=30)
    ap.add_argument("--seconds", type=int, default=2, help="LaptopModeSeconds")
    ap.add_argument("--idle", type=float, default=5, help="standby timer, seconds")
    ap.add_argument("--only", nargs="*", choices=VARIANTS, default=list(VARIANTS))
    ap.add_argument("--fs", choices=sorted(MKFS), default="ext4", help="the loop disk's filesystem")
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="session",
                    help="session: writes every 2 and 7 s, reads every 45 s; sparse: every 11 "
                    "and 40 s, reads every 90 s")
    ap.add_argument("--verbose", action="store_true", help="print each run's I/O times")
    ap.add_argument("--records-dir", help="keep each laptop-moded run's ledger records there "
                    "(report --json --records), to replay again with report --from-json")
    ap.add_argument("--smoke", action="store_true",
                    help="a short run of every variant, reported as TAP (numbers not judged)")
    args = ap.parse_args()
    if args.duration is None:
        args.duration = 6 if args.smoke else 180
    smoke = benchlib.begin(__file__, "engine_bench", args.smoke, NS_MARK,
                            needs="needs root (loop device, mounts, /proc/sys/vm, BPF)")
    b = Bench(args)
    results = benchlib.run_variants(smoke, b, args.only, b.run, args.duration)

    w = WORKLOADS[args.workload]("/", args.duration)
    n_ideal, asleep_ideal, clusters = ideal(w, args.max_lost_work, args.seconds, args.idle)
    print("kernel %s, loop %s, %d s: writer every %g s, cache page every %g s, %d read "
          "clusters; MaxLostWork=%d s, LaptopModeSeconds=%d s, standby timer %g s"
          % (os.uname().release, args.fs, args.duration, w.EDITOR_EVERY, w.BROWSER_EVERY, clusters,
             args.max_lost_work, args.seconds, args.idle))
    print("%-20s %9s %8s %13s" % ("", "spin-ups", "asleep", "longest idle"))
    print("%-20s %9d %7.0f%% %13s" % ("ideal", n_ideal, asleep_ideal * 100, "-"))
    for variant in args.only:
        r = results.get(variant)
        if r is None:
            print("%-20s not run (see above)" % variant)
            continue
        (spinups, asleep, longest), vm, changes = r
        print("%-20s %9d %7.0f%% %12.1fs" % (variant, spinups, asleep * 100, longest))
        if variant in b.estimates:
            est = b.estimates[variant]
            print("%-20s %9s %8s   (laptop-modectl report: stock writeback replayed on this "
                  "run's ledger%s)" % ("  stock estimate", "-" if est is None else est[0],
                                      "" if est is None else "%.0f%%" % (
                                          100 - 100 * min(est[1], args.duration) / args.duration),
                                      "" if est is not None else ": no activity recorded"))
        share, wh = nvme_walk(changes, args.duration)
        print("%-20s %8.0f%% in PS4, %.4f Wh   (NVMe: this run's I/O on the hand-made "
              "5-state drive, IDLP/ACTP)" % ("  as NVMe", share * 100, wh))
        if args.verbose:
            print("    vm: %s" % " ".join("%s=%s" % kv for kv in sorted(vm.items())))
            print("    I/O at: %s" % " ".join("%.1f" % t for t in changes))
    smoke.finish()


if __name__ == "__main__":
    main()
