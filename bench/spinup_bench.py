#!/usr/bin/python3
"""Spin-up attribution under an I/O storm: what it costs the attributing
process, per laptop-moded backend and for bpftrace and trace-cmd doing the
same job (idle-gap test per disk, last dirtier per disk).

A loop device (256 MiB, direct I/O to its backing file) is left idle past
the idle time, then `dd` reads it with N 512-byte O_DIRECT reads. For each
contender the script records the contender's CPU time (utime+stime of all
its threads and children) and its wake-ups (voluntary context switches of
all its threads) over the storm, next to the storm's own CPU time, and how
many spin-ups it reported for the loop disk (1 is right: the storm's first
read).

Runs as root in its own mount namespace (tracefs, if mounted for bpftrace
and trace-cmd, goes away with it); the loop device is detached and every
process stopped, also on failure. Not a timed test.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import lmtest  # noqa: E402
import benchlib  # noqa: E402

IDLE = 2
NS_MARK = "LM_BENCH_SPINUP_NAMESPACE"

BPFTRACE = r"""
tracepoint:writeback:writeback_mark_inode_dirty /!(curtask->flags & 0x00200000)/ {
  @dirtier[args->name] = comm;
}
tracepoint:block:block_bio_queue /args->nr_sector > 0/ {
  $gap = nsecs - @last[args->dev];
  @last[args->dev] = nsecs;
  if ($gap > %d) {
    printf("spinup dev=%%d %%s %%d\n", args->dev, comm, pid);
  }
}
"""


def task_stats(pids):
    """(cpu seconds, {tid: voluntary context switches}) over @pids' threads;
    per thread, as threads come and go (GLib's worker threads)."""
    hz = os.sysconf("SC_CLK_TCK")
    cpu = 0
    vol = {}
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu += int(fields[11]) + int(fields[12])
            for tid in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches:"):
                            vol[tid] = int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError):
            pass
    return cpu / hz, vol


def descendants(pid):
    out = [pid]
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(d))
            except (FileNotFoundError, ProcessLookupError):
                pass
    i = 0
    while i < len(out):
        out += children.get(out[i], [])
        i += 1
    return out


def storm(device, reads):
    t0 = time.monotonic()
    p = subprocess.Popen(["dd", "if=" + device, "of=/dev/null", "bs=512", "count=%d" % reads,
                          "iflag=direct", "status=none"])
    _, status, ru = os.wait4(p.pid, 0)
    assert status == 0, "dd failed"
    return ru.ru_utime + ru.ru_stime, time.monotonic() - t0


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="lm-bench-")
        os.chmod(self.tmp, 0o755)
        self.procs = []
        self.device = None
        self.mounted_tracefs = False

    def cleanup(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.device:
            subprocess.run(["losetup", "-d", self.device])
        if self.mounted_tracefs:
            subprocess.run(["umount", "/sys/kernel/tracing"])
        shutil.rmtree(self.tmp, ignore_errors=True)

    def setup(self):
        image = os.path.join(self.tmp, "disk.img")
        with open(image, "wb") as f:
            f.truncate(256 << 20)
        self.device = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", image],
                                     check=True, capture_output=True, text=True).stdout.strip()
        self.disk = os.path.basename(self.device)
        with open("/sys/block/%s/dev" % self.disk) as f:
            major, minor = map(int, f.read().split(":"))
        self.kdev = (major << 20) | minor
        if not os.path.ismount("/sys/kernel/tracing"):
            subprocess.run(["mount", "-t", "tracefs", "tracefs", "/sys/kernel/tracing"], check=True)
            self.mounted_tracefs = True

    def start_bus(self, name):
        # A directory per run (the bus socket and polkitd's files of the
        # previous one); the processes go straight into self.procs, so
        # cleanup() stops them even when polkitd fails to start.
        run_tmp = os.path.join(self.tmp, "run-" + name)
        os.makedirs(run_tmp)
        os.chmod(run_tmp, 0o755)
        first = len(self.procs)
        address = lmtest.start_system_bus_with_polkit(run_tmp, self.procs)
        return self.procs[first:], address

    def run_daemon(self, backend):
        services, address = self.start_bus(backend)
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address,
                   STATE_DIRECTORY=os.path.join(self.tmp, "state-" + backend),
                   LAPTOP_MODED_CONFIG=os.path.join(self.tmp, backend + ".conf"))
        env.pop("LAPTOP_MODED_ROOT", None)
        with open(env["LAPTOP_MODED_CONFIG"], "w") as f:
            f.write("[LaptopMode]\nMode=off\nAttribution=%s\nSpinUpIdle=%d\n" % (backend, IDLE))
        log = open(os.path.join(self.tmp, backend + ".log"), "w")
        daemon = subprocess.Popen([lmtest.DAEMON], env=env, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(daemon)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            r = subprocess.run(["gdbus", "call", "--system", "--dest", lmtest.BUS_NAME,
                                "--object-path", lmtest.OBJECT_PATH, "--method",
                                "org.freedesktop.DBus.Properties.Get", lmtest.IFACE,
                                "Attribution"], env=env, capture_output=True, text=True)
            if r.returncode == 0:
                break
            time.sleep(0.05)
        watch = subprocess.Popen([lmtest.CTL, "watch", "--json"], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.procs.append(watch)
        banner = watch.stderr.readline()
        assert "Watching" in banner, banner
        result = self.measure([daemon.pid])
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)
        watch.wait(timeout=20)
        out = watch.stdout.read()
        spinups = [json.loads(x) for x in out.splitlines() if x.strip()]
        result["spinups"] = sum(1 for s in spinups if s["Disk"] == self.disk)
        for p in reversed(services):
            lmtest.stop_process(p)
        return result

    def run_bpftrace(self):
        script = BPFTRACE % (IDLE * 1000000000)
        p = subprocess.Popen(["bpftrace", "-e", script], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        self.procs.append(p)
        # bpftrace may warn first (RLIMIT_MEMLOCK, which this kernel does not need).
        while True:
            line = p.stdout.readline()
            assert line, "bpftrace did not start"
            if line.startswith("Attaching"):
                break
        result = self.measure([p.pid])
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
        result["spinups"] = sum(1 for x in out.splitlines()
                                if x.startswith("spinup dev=%d " % self.kdev))
        return result

    def run_trace_cmd(self):
        # trace-cmd hands every event to user space; the attribution would
        # be a filter on its output, counted here as it reads its output.
        p = subprocess.Popen(["trace-cmd", "stream", "-e", "block:block_bio_queue",
                              "-e", "writeback:writeback_mark_inode_dirty"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        time.sleep(2)
        if p.poll() is not None:
            raise benchlib.Skip("trace-cmd stream exited with %d (it writes "
                                "kernel.ftrace_enabled, which some kernels and containers "
                                "refuse); not measured" % p.returncode)
        pids = descendants(p.pid)
        sink = subprocess.Popen(["cat"], stdin=p.stdout, stdout=subprocess.DEVNULL)
        self.procs.append(sink)
        result = self.measure(pids)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
        sink.wait(timeout=30)
        result["spinups"] = None
        return result

    def measure(self, pids):
        time.sleep(IDLE + 1)
        cpu0, vol0 = task_stats(pids)
        storm_cpu, wall = storm(self.device, self.args.reads)
        time.sleep(0.5)
        cpu1, vol1 = task_stats(pids)
        wakeups = sum(n - vol0.get(tid, 0) for tid, n in vol1.items())
        return {"cpu": cpu1 - cpu0, "wakeups": wakeups, "storm_cpu": storm_cpu, "wall": wall}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reads", type=int, default=500000)
    ap.add_argument("--only", nargs="*", default=["bpf", "tracefs", "bpftrace", "trace-cmd"])
    ap.add_argument("--smoke", action="store_true",
                    help="2000 reads per contender, reported as TAP (numbers not judged)")
    args = ap.parse_args()
    if args.smoke and args.reads == ap.get_default("reads"):
        args.reads = 2000
    smoke = benchlib.begin(__file__, "spinup_bench", args.smoke, NS_MARK)

    def contender(name):
        if name in ("bpf", "tracefs"):
            return b.run_daemon(name)
        if shutil.which(name) is None:
            raise benchlib.Skip("%s is not installed" % name)
        return b.run_bpftrace() if name == "bpftrace" else b.run_trace_cmd()

    b = Bench(args)
    rows = []
    try:
        b.setup()
        for name in args.only:
            r = smoke.case(name, lambda: contender(name))
            if r is None:
                continue
            if name in ("bpf", "tracefs"):
                name = "laptop-moded " + name
            rows.append((name, r))
            print("%-22s %s" % (name, r), file=sys.stderr, flush=True)
    finally:
        b.cleanup()
    smoke.finish()
    print("| contender | CPU time | % of workload CPU | wake-ups | spin-ups reported | "
          "workload CPU | workload wall |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        print("| %s | %.3f s | %.2f %% | %d | %s | %.2f s | %.2f s |"
              % (name, r["cpu"], 100 * r["cpu"] / r["storm_cpu"], r["wakeups"],
                 "-" if r["spinups"] is None else r["spinups"], r["storm_cpu"], r["wall"]))


if __name__ == "__main__":
    main()
