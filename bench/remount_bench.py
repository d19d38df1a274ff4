#!/usr/bin/python3
"""Start/Stop with 20 ext4 loop mounts: laptop-moded against laptop-mode-tools.

Owns everything it creates (a private mount namespace, loop devices, mounts,
a private bus, the daemon) and puts the machine back as found: /proc/sys/vm
is saved and written back, laptop-mode-tools' run-time files and config
overrides live only in the namespace. Never run as a timed test.
Usage (root): bench/remount_bench.py [--mounts N] [--runs N] [--lmt-runs N] [--smoke]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRCDIR, "tests", "integration"))
os.environ.setdefault("LM_SRCDIR", SRCDIR)
import lmtest  # noqa: E402  (BUS_CONFIG, paths, sysctl helpers)
import benchlib  # noqa: E402

NS_MARK = "LM_BENCH_NAMESPACE"
REMOUNT_TYPES = ("ext3", "ext4", "reiserfs", "btrfs")
ALL_VM = ["laptop_mode", "dirty_writeback_centisecs", "dirty_expire_centisecs", "dirty_ratio",
          "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes"]


def sh(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, **kw)


def mountinfo():
    """{mount point: (vfs options, fstype, super options)}, from lmtest's parser."""
    return {os.fsdecode(mp): (v[1], v[2], v[3]) for mp, v in lmtest.mountinfo().items()}


def timed(argv, env=None):
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError("%s failed: %s%s" % (argv, r.stdout, r.stderr))
    return dt


def ms(values):
    return "%.1f ms (min %.1f, max %.1f)" % (statistics.median(values) * 1000, min(values) * 1000,
                                             max(values) * 1000)


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="lm-bench-")
        os.chmod(self.tmp, 0o755)
        self.mounts = []
        self.images = []
        self.procs = []
        self.vm = lmtest.read_real_vm()

    # --- setup and teardown ------------------------------------------

    def make_mounts(self):
        for i in range(self.args.mounts):
            image = os.path.join(self.tmp, "fs%02d.img" % i)
            mp = os.path.join(self.tmp, "mnt", "%02d" % i)
            os.makedirs(mp)
            with open(image, "wb") as f:
                f.truncate(16 << 20)
            self.images.append(image)
            sh(["mkfs.ext4", "-q", "-F", image])
            # Half with options of their own, to be kept.
            opts = "loop" + (",noatime,commit=17" if i % 2 else "")
            sh(["mount", "-t", "ext4", "-o", opts, image, mp])
            self.mounts.append(mp)

    def cleanup(self):
        for p in reversed(self.procs):
            lmtest.stop_process(p)
        lmtest.release_mounts(self.mounts, self.images)
        lmtest.write_real_vm(self.vm)
        if lmtest.read_real_vm() != self.vm:
            print("WARNING: /proc/sys/vm differs from before: %r" % lmtest.read_real_vm())
        shutil.rmtree(self.tmp, ignore_errors=True)

    def ours(self):
        return {mp: mountinfo()[mp] for mp in self.mounts}

    def check_applied(self, seconds):
        for mp, (_, _, sb) in self.ours().items():
            if "commit=%d" % seconds not in sb.split(","):
                raise RuntimeError("%s has %s, not commit=%d" % (mp, sb, seconds))

    # --- laptop-moded ------------------------------------------------

    def bench_laptop_moded(self):
        services = []
        address = lmtest.start_system_bus_with_polkit(self.tmp, services)
        self.procs.extend(services)
        # The machine's own journaled filesystems are opted out: only the
        # benchmark's mounts are remounted, as for laptop-mode-tools.
        theirs = sorted({mp for mp, (_, t, _) in mountinfo().items()
                         if t in REMOUNT_TYPES and mp not in self.mounts})
        config = os.path.join(self.tmp, "laptop-moded.conf")
        with open(config, "w") as f:
            f.write("[LaptopMode]\nMaxLostWork=600\nNoRemount=%s\n"
                    % "".join(m.replace(";", "\\;") + ";" for m in theirs))
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address,
                   STATE_DIRECTORY=os.path.join(self.tmp, "state"), LAPTOP_MODED_CONFIG=config)
        env.pop("LAPTOP_MODED_ROOT", None)  # the real /proc/sys/vm, like laptop-mode-tools
        daemon = subprocess.Popen([lmtest.DAEMON], env=env, stdout=subprocess.DEVNULL,
                                  stderr=open(os.path.join(self.tmp, "daemon.log"), "w"))
        self.procs.append(daemon)
        deadline = time.monotonic() + 15
        while subprocess.run([lmtest.CTL, "status"], env=env, capture_output=True).returncode:
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise RuntimeError("laptop-moded did not start")
            time.sleep(0.05)

        before = self.ours()
        starts, stops = [], []
        for _ in range(self.args.runs):
            starts.append(timed([lmtest.CTL, "start"], env))
            self.check_applied(600)
            stops.append(timed([lmtest.CTL, "stop"], env))
            if self.ours() != before:
                raise RuntimeError("laptop-moded did not restore the mounts exactly")
        daemon.terminate()
        daemon.wait(timeout=20)
        for p in reversed(services):
            p.terminate()
            p.wait()
        return starts, stops

    # --- laptop-mode-tools -------------------------------------------

    def bench_laptop_mode_tools(self):
        lmt = benchlib.laptop_mode_tools()
        # Only the core module's sysctls and remounts, on exactly our mounts;
        # every other module off (they would touch real devices). The
        # overrides and its run-time files exist only in this namespace.
        with open("/etc/laptop-mode/laptop-mode.conf") as f:
            text = f.read()
        overrides = {
            "ENABLE_LAPTOP_MODE_ON_AC": "1", "ENABLE_AUTO_MODULES": "0",
            "LM_AC_MAX_LOST_WORK_SECONDS": "600", "LM_BATT_MAX_LOST_WORK_SECONDS": "600",
            "PARTITIONS": '"%s"' % " ".join(self.mounts), "CONTROL_READAHEAD": "0",
            "CONTROL_NOATIME": "0", "CONTROL_HD_IDLE_TIMEOUT": "0", "CONTROL_HD_POWERMGMT": "0",
            "CONTROL_HD_WRITECACHE": "0", "CONTROL_MOUNT_OPTIONS": "1", "VERBOSE_OUTPUT": "0",
        }
        text += "\n# laptop-moded benchmark overrides\n" + "".join(
            "%s=%s\n" % kv for kv in overrides.items())
        conf = os.path.join(self.tmp, "laptop-mode.conf")
        with open(conf, "w") as f:
            f.write(text)
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        sh(["mount", "--bind", conf, "/etc/laptop-mode/laptop-mode.conf"])
        self.mounts.append("/etc/laptop-mode/laptop-mode.conf")
        sh(["mount", "--bind", empty, "/etc/laptop-mode/conf.d"])
        self.mounts.append("/etc/laptop-mode/conf.d")
        sh(["mount", "-t", "tmpfs", "lm-bench", "/run"])  # /var/run and /var/lock
        self.mounts.append("/run")
        os.makedirs("/run/lock")

        before = {mp: mountinfo()[mp] for mp in self.mounts[:self.args.mounts]}
        starts, stops = [], []
        for _ in range(self.args.lmt_runs):
            starts.append(timed([lmt, "start"]))
            for mp in before:
                if "commit=600" not in mountinfo()[mp][2].split(","):
                    raise RuntimeError("laptop-mode-tools did not remount %s" % mp)
            stops.append(timed([lmt, "stop"]))
        after = {mp: mountinfo()[mp] for mp in before}
        if after != before:
            changed = [mp for mp in before if after[mp] != before[mp]]
            print("note: laptop-mode-tools left %d mounts with other options than before, e.g. "
                  "%s: %s -> %s" % (len(changed), changed[0], before[changed[0]][2],
                                    after[changed[0]][2]))
        return starts, stops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mounts", type=int, default=20)
    ap.add_argument("--runs", type=int, default=20, help="laptop-moded start/stop pairs")
    ap.add_argument("--lmt-runs", type=int, default=5, help="laptop-mode-tools start/stop pairs")
    ap.add_argument("--smoke", action="store_true",
                    help="3 mounts, 2 and 1 runs, reported as TAP (numbers not judged)")
    args = ap.parse_args()
    if args.smoke:
        args.mounts, args.runs, args.lmt_runs = 3, 2, 1
    smoke = benchlib.begin(__file__, "remount_bench", args.smoke, NS_MARK,
                            needs="needs root (loop devices, mounts, /proc/sys/vm)")

    b = Bench(args)
    try:
        b.make_mounts()
        ours = smoke.case("laptop-moded", b.bench_laptop_moded)
        theirs = smoke.case("laptop-mode-tools", b.bench_laptop_mode_tools)
    finally:
        b.cleanup()
    if args.smoke:
        smoke.finish()
        return

    print("%d ext4 loop mounts, kernel %s" % (args.mounts, os.uname().release))
    print("laptop-moded       start: %s   stop: %s   (%d runs, laptop-modectl wall time)"
          % (ms(ours[0]), ms(ours[1]), args.runs))
    if theirs is None:
        print("laptop-mode-tools  could not be run (see above)")
        return
    print("laptop-mode-tools  start: %s   stop: %s   (%d runs, laptop_mode wall time)"
          % (ms(theirs[0]), ms(theirs[1]), args.lmt_runs))
    print("ratio (laptop-mode-tools / laptop-moded, medians): start %.0fx, stop %.0fx"
          % (statistics.median(theirs[0]) / statistics.median(ours[0]),
             statistics.median(theirs[1]) / statistics.median(ours[1])))


if __name__ == "__main__":
    main()
