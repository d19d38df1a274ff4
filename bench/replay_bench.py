#!/usr/bin/python3
"""The report's stock estimate against measurement, per filesystem (issue 49).

Each workload of engine_bench.py runs on a fresh loop disk of each
filesystem with the kernel's stock writeback (vm.laptop_mode=0, 30 s
expiry, 5 s flusher), while laptop-moded runs beside it with Mode=off: it
changes nothing and records the run's activity in its ledger, as it does
all the time. The disk's I/O is sampled (engine_bench.Workload.run) and
counted as there (engine_bench.analyse); then `laptop-modectl report
--since START --until END --idle 5 --json` replays the same run's records
over the same window (common/lm-replay.c). One run gives both sides, so
run-to-run noise is out of the comparison; what differs is the model.
Target: spin-ups within 20 %, asleep within 5 points.

--records-dir DIR keeps each run's records and measurement
(FS-WORKLOAD.json); --offline DIR replays them again with the current
laptop-modectl, without a disk or root (to check a change of the model
against the same runs). Never run as a timed test.
Usage (root): bench/replay_bench.py [--duration S] [--fs FS ...] [--workload W ...]
              [--records-dir DIR | --offline DIR] [--smoke]
"""

import argparse
import datetime
import glob
import json
import os
import subprocess
import sys
import time

import engine_bench  # noqa: E402  (sets up lmtest's path and LM_SRCDIR)
from engine_bench import Bench, WORKLOADS, STOCK_VM, analyse  # noqa: E402
import benchlib  # noqa: E402
import lmtest  # noqa: E402

NS_MARK = "LM_BENCH_REPLAY_NAMESPACE"
SPINUPS_WITHIN = 0.20  # the targets
ASLEEP_WITHIN = 5.0    # points


def local(t):
    """@t (seconds since the epoch) as --since/--until take it."""
    return datetime.datetime.fromtimestamp(t).strftime("%Y-%m-%dT%H:%M:%S")


def replay(disk, since, until, idle, env=None, from_json=None):
    """(spin-ups, asleep share, why unsure or None) of the report's stock
    estimate for @disk over [@since, @until) (whole seconds), from the
    daemon (@env) or a saved records file."""
    argv = [lmtest.CTL, "report", "--json", "--disk", disk, "--idle", "%d" % idle,
            "--since", local(since), "--until", local(until)]
    if from_json:
        argv += ["--from-json", from_json]
    r = subprocess.run(argv, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("laptop-modectl report: %s" % r.stderr.strip())
    d = json.loads(r.stdout).get("disks", {}).get(disk, {})
    est = d.get("stock_estimate")
    if not isinstance(est, dict):
        raise RuntimeError("no activity recorded on %s" % disk)
    return est["spinups"], 1 - min(est["awake_s"], until - since) / (until - since), \
        d.get("stock_estimate_unsure")


def judged(measured, replayed):
    """Within the targets? (spin-up error in %, asleep error in points)."""
    (m_n, m_asleep), (r_n, r_asleep) = measured, replayed
    err_n = 100.0 * (r_n - m_n) / m_n if m_n else (0.0 if r_n == 0 else 100.0)
    err_asleep = 100.0 * (r_asleep - m_asleep)
    ok = abs(err_n) <= SPINUPS_WITHIN * 100 and abs(err_asleep) <= ASLEEP_WITHIN
    return err_n, err_asleep, ok


class ReplayBench(Bench):
    def daemon_config(self, engine):
        # Off: the stock policy stays; the ledger records all the same.
        return "[LaptopMode]\nMode=off\n"

    def daemon_ready(self, status, log):
        return "Spin-up monitoring started (bpf" in log

    def run(self, variant):
        fs, workload_name = variant.split("/")
        self.args.fs = fs
        with self.fresh_disk() as stops:
            workload = WORKLOADS[workload_name](self.mp, self.args.duration)
            workload.prepare()
            stops.append(self.start_daemon("recorder", name=variant.replace("/", "-"),
                                           estimate=False))
            vm = lmtest.read_real_vm()
            if any(vm.get(k) != v for k, v in STOCK_VM.items()):
                raise RuntimeError("laptop-moded with Mode=off changed /proc/sys/vm: %r" % vm)
            self.settle()
            disk = os.path.basename(self.device)
            # The window in whole seconds, as the replay counts: the run is
            # sampled from the first whole second on.
            since = int(time.time()) + 1
            time.sleep(max(0.0, since - time.time()))
            changes = workload.run(disk)
            until = since + int(self.args.duration)
            measured = analyse(changes, self.args.duration, self.args.idle)[:2]
            if self.args.records_dir:
                self.keep(variant, disk, since, until, changes)
            # While the daemon that recorded the run still answers.
            return measured, replay(disk, since, until, int(self.args.idle), env=self.env)

    def keep(self, variant, disk, since, until, changes):
        rec = subprocess.run([lmtest.CTL, "report", "--json", "--records", "--disk", disk,
                              "--since", local(since - 60)], env=self.env, capture_output=True,
                             text=True, check=True)
        os.makedirs(self.args.records_dir, exist_ok=True)
        with open(os.path.join(self.args.records_dir, variant.replace("/", "-") + ".json"),
                  "w") as f:
            json.dump({"variant": variant, "disk": disk, "since": since, "until": until,
                       "idle": self.args.idle, "duration": self.args.duration,
                       "changes": changes, "kernel": os.uname().release,
                       "records": json.loads(rec.stdout)}, f)


def offline(directory):
    """The saved runs replayed again with this tree's laptop-modectl."""
    results = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as f:
            run = json.load(f)
        measured = analyse(run["changes"], run["duration"], run["idle"])[:2]
        records = path + ".records"
        with open(records, "w") as f:
            json.dump(run["records"], f)
        try:
            results[run["variant"]] = (measured, replay(run["disk"], run["since"], run["until"],
                                                        int(run["idle"]), from_json=records))
        finally:
            os.unlink(records)
    return results


def table(results, runs):
    print("stock writeback measured, and replayed from the same run's ledger (%s); "
          "target: spin-ups within %d %%, asleep within %g points"
          % (runs, SPINUPS_WITHIN * 100, ASLEEP_WITHIN))
    print("%-16s %9s %7s %10s %7s %8s %8s  %s"
          % ("", "measured", "asleep", "estimate", "asleep", "spin-ups", "asleep", ""))
    bad = 0
    for variant, r in results.items():
        if r is None:
            print("%-16s not run (see above)" % variant)
            bad += 1
            continue
        measured, (r_n, r_asleep, unsure) = r
        err_n, err_asleep, ok = judged(measured, (r_n, r_asleep))
        bad += not ok
        print("%-16s %9d %6.0f%% %10d %6.0f%% %+7.0f%% %+7.0fpt  %s%s"
              % (variant, measured[0], measured[1] * 100, r_n, r_asleep * 100, err_n, err_asleep,
                 "within" if ok else "OUTSIDE", "" if unsure is None else " (unsure: %s)" % unsure))
    print("%d of %d within the targets" % (len(results) - bad, len(results)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=None,
                    help="seconds per run (180; 8 with --smoke)")
    ap.add_argument("--idle", type=float, default=5, help="standby timer, seconds")
    ap.add_argument("--fs", nargs="+", choices=sorted(engine_bench.MKFS),
                    default=None, help="filesystems (all; ext4 with --smoke)")
    ap.add_argument("--workload", nargs="+", choices=sorted(WORKLOADS), default=None,
                    help="workloads (all; session with --smoke)")
    ap.add_argument("--records-dir", help="keep each run's records and measurement there")
    ap.add_argument("--offline", metavar="DIR",
                    help="replay the runs kept in DIR with this laptop-modectl; no disk, no root")
    ap.add_argument("--smoke", action="store_true",
                    help="one short run (ext4, session), reported as TAP (numbers not judged)")
    args = ap.parse_args()
    if args.offline:
        results = offline(args.offline)
        if not results:
            sys.exit("replay_bench: no runs kept in %s" % args.offline)
        table(results, "runs kept in %s" % args.offline)
        return
    if args.duration is None:
        args.duration = 8 if args.smoke else 180
    fss = args.fs or (["ext4"] if args.smoke else sorted(engine_bench.MKFS))
    workloads = args.workload or (["session"] if args.smoke else sorted(WORKLOADS))
    # What engine_bench's Bench reads of its own options.
    args.max_lost_work, args.seconds, args.workload = 30, 2, None
    smoke = benchlib.begin(__file__, "replay_bench", args.smoke, NS_MARK,
                           needs="needs root (loop device, mounts, /proc/sys/vm, BPF)")
    b = ReplayBench(args)
    variants = ["%s/%s" % (fs, w) for w in workloads for fs in fss]
    results = benchlib.run_variants(smoke, b, variants, b.run, args.duration)
    print("kernel %s" % os.uname().release)
    table(results, "%g s per run, standby timer %g s" % (args.duration, args.idle))
    smoke.finish()


if __name__ == "__main__":
    main()
