#!/usr/bin/python3
"""What watching costs each I/O: IOPS with no daemon, with the daemon
watching (laptop mode off) and with the user-space engine on, and the BPF
run time per I/O from the kernel's own counters.

A loop disk backed by a file in memory (tmpfs) takes 4 KiB O_DIRECT random
reads from fio (psync, one job) for --seconds per round. Each round runs
the three variants one after the other, in a rotating order, so that a
slow minute of a shared machine falls on all of them; the table gives the
medians over --rounds rounds. With `kernel.bpf_stats_enabled` (set for the
run, restored after) the kernel adds up, per BPF program, how often it ran
and for how long; the run time of laptop-moded's programs over a round,
divided by the I/Os fio issued in it, is the cost per I/O. Every other disk
of the machine is excluded (Exclude=true), so the programs see the loop
disk's I/O and little else; whatever else the machine does meanwhile only
adds to the BPF time, never hides it. Not a timed test.

--workload write measures what dirtying costs instead (who dirtied which
inode is kept per inode): the loop disk gets an ext4 filesystem, and fio
overwrites a 64 MiB file in 4 KiB buffered writes with an fsync every 64,
so that each write dirties a clean page again (writeback_mark_inode_dirty
per write) and writeback runs all the time; the cost is per write.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import lmtest  # noqa: E402
import benchlib  # noqa: E402

NS_MARK = "LM_BENCH_BPF_COST_NAMESPACE"
STATS = "/proc/sys/kernel/bpf_stats_enabled"
VARIANTS = ("none", "watching", "engine")
FLOOR = "floor"


class EmptyProgram:
    """A BPF program that returns at once, on block_bio_queue: what the
    kernel's accounting counts for any program per run (its clock reads
    around the run), the floor under each of laptop-moded's. Loaded with
    the bpf() system call itself, as a raw tracepoint program: two
    instructions, no compiler needed."""
    NR_BPF = {"x86_64": 321, "aarch64": 280}
    PROG_LOAD, RAW_TRACEPOINT_OPEN, PROG_TYPE_RAW_TRACEPOINT = 5, 17, 17

    def __init__(self, tracepoint=b"block_bio_queue"):
        import ctypes
        import struct
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.nr = self.NR_BPF[os.uname().machine]
        insns = ctypes.create_string_buffer(
            struct.pack("<BBhi", 0xb7, 0, 0, 0) + struct.pack("<BBhi", 0x95, 0, 0, 0))
        license = ctypes.create_string_buffer(b"GPL")
        attr = ctypes.create_string_buffer(128)
        struct.pack_into("<IIQQIIQII16s", attr, 0, self.PROG_TYPE_RAW_TRACEPOINT, 2,
                         ctypes.addressof(insns), ctypes.addressof(license), 0, 0, 0, 0, 0,
                         b"lm_bench_empty")
        self.prog_fd = self.bpf(self.PROG_LOAD, attr)
        name = ctypes.create_string_buffer(tracepoint)
        attr = ctypes.create_string_buffer(128)
        struct.pack_into("<QI", attr, 0, ctypes.addressof(name), self.prog_fd)
        self.link_fd = self.bpf(self.RAW_TRACEPOINT_OPEN, attr)
        self.ids = pids_bpf_prog_ids(os.getpid(), only_fd=self.prog_fd)

    def bpf(self, cmd, attr):
        import ctypes
        fd = self.libc.syscall(self.nr, cmd, attr, len(attr))
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, "bpf(%d): %s" % (cmd, os.strerror(err)))
        return fd

    def close(self):
        os.close(self.link_fd)
        os.close(self.prog_fd)


def bpf_programs():
    """{id: (name, run_time_ns, run_cnt)} of every loaded BPF program."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], check=True,
                         capture_output=True, text=True).stdout
    progs = {}
    for p in json.loads(out or "[]"):
        progs[p["id"]] = (p.get("name", ""), p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return progs


def pids_bpf_prog_ids(pid, only_fd=None):
    """Ids of the BPF programs @pid holds open (its fdinfo's prog_id)."""
    ids = set()
    fd_dir = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(fd_dir):
        if only_fd is not None and fd != str(only_fd):
            continue
        try:
            with open(os.path.join(fd_dir, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            continue
    return ids


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="lm-bpf-cost-bench-")
        os.chmod(self.tmp, 0o755)
        self.procs = []
        self.backing = os.path.join(self.tmp, "mem")
        self.device = None
        self.stats_before = None
        os.makedirs(self.backing)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % (args.size_mb + 16),
                        "lm-bench", self.backing], check=True)
        image = os.path.join(self.backing, "disk.img")
        with open(image, "wb") as f:
            f.truncate(args.size_mb << 20)
        # Fill it, so reads copy real pages rather than the zero page.
        subprocess.run(["dd", "if=/dev/urandom", "of=" + image, "bs=1M",
                        "count=%d" % args.size_mb, "conv=notrunc", "status=none"], check=True)
        self.device = subprocess.run(["losetup", "--find", "--show", image], check=True,
                                     capture_output=True, text=True).stdout.strip()
        self.disk = os.path.basename(self.device)
        self.mnt = None
        if args.workload == "write":
            self.mnt = os.path.join(self.tmp, "mnt")
            os.makedirs(self.mnt)
            subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                            self.device], check=True)
            subprocess.run(["mount", "-o", "noatime", self.device, self.mnt], check=True)
        self.excluded = sorted(n for n in os.listdir("/sys/block") if n != self.disk)
        with open(STATS) as f:
            self.stats_before = f.read().strip()
        with open(STATS, "w") as f:
            f.write("1")

    def cleanup(self):
        for p in reversed(self.procs):
            lmtest.stop_process(p)
        self.procs = []
        if self.stats_before is not None:
            with open(STATS, "w") as f:
                f.write(self.stats_before)
        if self.mnt is not None:
            subprocess.run(["umount", self.mnt], capture_output=True)
        if self.device is not None:
            subprocess.run(["losetup", "-d", self.device], capture_output=True)
        subprocess.run(["umount", "-l", self.backing], capture_output=True)
        subprocess.run(["rm", "-rf", self.tmp])

    def start_daemon(self, variant, n):
        run_tmp = os.path.join(self.tmp, "run-%s-%d" % (variant, n))
        os.makedirs(run_tmp)
        os.chmod(run_tmp, 0o755)
        address = lmtest.start_system_bus_with_polkit(run_tmp, self.procs)
        conf = os.path.join(run_tmp, "laptop-moded.conf")
        with open(conf, "w") as f:
            f.write("[LaptopMode]\nMode=%s\nEngine=userspace\nRemount=false\n"
                    % ("on" if variant == "engine" else "off"))
            for name in self.excluded:
                f.write("[Disk %s]\nExclude=true\n" % name)
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address,
                   STATE_DIRECTORY=os.path.join(run_tmp, "state"),
                   LAPTOP_MODED_CONFIG=conf, G_MESSAGES_DEBUG="all")
        env.pop("LAPTOP_MODED_ROOT", None)
        log_path = os.path.join(run_tmp, "daemon.log")
        with open(log_path, "w") as log:
            daemon = subprocess.Popen([self.args.daemon], env=env, stdout=log,
                                      stderr=subprocess.STDOUT)
        self.procs.append(daemon)
        want = "Laptop mode on" if variant == "engine" else "Owning "
        deadline = time.monotonic() + 30
        while True:
            with open(log_path, errors="replace") as f:
                text = f.read()
            if want in text and "attribution backend bpf" in text:
                break
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise RuntimeError("the daemon did not start with bpf (%s):\n%s" % (want, text))
            time.sleep(0.1)
        time.sleep(1)  # the first idle timers and the engine's arming settle
        return daemon

    def fio(self):
        if self.args.workload == "write":
            argv = ["fio", "--name=w", "--filename=" + os.path.join(self.mnt, "file"),
                    "--rw=write", "--bs=4k", "--size=64m", "--fsync=64", "--direct=0"]
        else:
            argv = ["fio", "--name=r", "--filename=" + self.device, "--rw=randread", "--bs=4k",
                    "--direct=1"]
        out = subprocess.run(
            argv + ["--ioengine=psync", "--numjobs=1", "--time_based",
                    "--runtime=%d" % self.args.seconds, "--output-format=json"],
            check=True, capture_output=True, text=True).stdout
        job = json.loads(out)["jobs"][0]["write" if self.args.workload == "write" else "read"]
        return job["iops"], job["total_ios"]

    def round(self, variant, n):
        daemon = None
        empty = None
        if variant == FLOOR:
            empty = EmptyProgram()
        elif variant != "none":
            daemon = self.start_daemon(variant, n)
        try:
            ids = pids_bpf_prog_ids(daemon.pid) if daemon else set()
            if empty is not None:
                ids = empty.ids
            before = bpf_programs()
            iops, ios = self.fio()
            after = bpf_programs()
        finally:
            if empty is not None:
                empty.close()
            if daemon is not None:
                daemon.send_signal(signal.SIGTERM)
                daemon.wait(timeout=30)
                for p in self.procs:
                    lmtest.stop_process(p)
                self.procs = []
        per_prog = {}
        for pid_ in ids:
            if pid_ in before and pid_ in after:
                name = after[pid_][0]
                per_prog[name] = per_prog.get(name, 0) + after[pid_][1] - before[pid_][1]
        ns = {k: v / max(ios, 1) for k, v in per_prog.items() if v > 0}
        return {"iops": iops, "ios": ios, "ns_per_io": sum(ns.values()), "progs": ns}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the three variants (3)")
    ap.add_argument("--seconds", type=int, default=20, help="fio run time per variant (20)")
    ap.add_argument("--size-mb", type=int, default=256, help="loop disk size in memory (256)")
    ap.add_argument("--daemon", default=lmtest.DAEMON, help="the laptop-moded binary")
    ap.add_argument("--floor", action="store_true",
                    help="a fourth variant: no daemon, a program that returns at once on "
                    "block_bio_queue (what the kernel's accounting counts for any program)")
    ap.add_argument("--workload", choices=("read", "write"), default="read",
                    help="4 KiB O_DIRECT random reads of the disk (read), or buffered 4 KiB "
                    "overwrites of a file on ext4 with an fsync every 64 (write)")
    ap.add_argument("--smoke", action="store_true",
                    help="one round of 2 s per variant, as TAP (numbers not judged)")
    args = ap.parse_args()
    if args.smoke:
        args.rounds, args.seconds, args.size_mb = 1, 2, 32
    smoke = benchlib.begin(__file__, "bpf_cost_bench", args.smoke, NS_MARK)
    b = Bench(args)
    variants = VARIANTS + ((FLOOR,) if args.floor else ())
    results = {v: [] for v in variants}
    try:
        for n in range(args.rounds):
            k = n % len(variants)
            order = variants[k:] + variants[:k]
            for v in order:
                r = smoke.case("%s round %d" % (v, n + 1), lambda: b.round(v, n))
                if r is not None:
                    results[v].append(r)
                    print("round %d %s: %.0f IOPS, %.0f ns/IO %s" % (
                        n + 1, v, r["iops"], r["ns_per_io"],
                        {k: round(x) for k, x in r["progs"].items()}),
                        file=sys.stderr, flush=True)
    finally:
        b.cleanup()
    smoke.finish()
    if not results["none"]:
        return
    base = statistics.median(r["iops"] for r in results["none"])
    print("| variant | IOPS (median of %d) | against no daemon | BPF ns per I/O | per program |"
          % args.rounds)
    print("|---|---:|---:|---:|---|")
    for v in variants:
        if not results[v]:
            continue
        iops = statistics.median(r["iops"] for r in results[v])
        ns = statistics.median(r["ns_per_io"] for r in results[v])
        names = sorted({k for r in results[v] for k in r["progs"]})
        progs = ", ".join("`%s` %.0f" % (k, statistics.median(r["progs"].get(k, 0)
                                                                for r in results[v]))
                          for k in names)
        print("| %s | %.0f | %+.1f %% | %.0f | %s |"
              % (v, iops, (iops - base) * 100 / base, ns, progs or "–"))


if __name__ == "__main__":
    main()
