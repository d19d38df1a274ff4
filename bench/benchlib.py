"""What every benchmark in bench/ shares: a private mount namespace whose
processes are all stopped when the benchmark ends, however it ends, and the
TAP report of a --smoke run (one case per variant; numbers not judged).
"""

import os
import signal
import subprocess
import sys
import time
import traceback


def _stop_group(pgid, grace=10.0):
    """SIGTERM every process left in @pgid, then SIGKILL what is still there
    after @grace seconds. True when the group was empty already."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    try:
        os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            os.killpg(pgid, 0)
            time.sleep(0.1)
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return False


def enter_namespace(script, mark):
    """Run @script again (same arguments) in a private mount namespace, in a
    process group of its own, and exit with its status. When it ends, every
    process still in that group (a bus, polkitd, a daemon it could not stop)
    is killed, so a benchmark that fails leaves nothing running. Returns at
    once when already inside (@mark is set)."""
    if os.environ.get(mark) == "1":
        # Inside: SIGTERM unwinds through the benchmark's finally blocks.
        def term(signum, frame):
            raise SystemExit(128 + signum)
        signal.signal(signal.SIGTERM, term)
        return
    # Under meson (LM_REALKERNEL=1) wait for the real-kernel lock the tests
    # take (tests/integration/lmtest.py), held until this process exits.
    if os.environ.get("LM_REALKERNEL") == "1":
        import fcntl
        lock = open("/tmp/lm-realkernel.lock", "a")
        fcntl.flock(lock, fcntl.LOCK_EX)
    env = dict(os.environ, **{mark: "1"})
    child = subprocess.Popen(["unshare", "-m", "--propagation", "private", sys.executable,
                              os.path.abspath(script)] + sys.argv[1:], env=env,
                             start_new_session=True)

    def forward(signum, frame):
        try:
            os.kill(child.pid, signum)
        except ProcessLookupError:
            pass
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, forward)
    while True:
        try:
            rc = child.wait()
            break
        except InterruptedError:
            continue
    if not _stop_group(child.pid):
        print("%s: stopped processes it left running" % os.path.basename(script),
              file=sys.stderr)
        rc = rc or 1
    sys.exit(rc if rc >= 0 else 128 - rc)


def begin(script, name, smoke, mark, needs="run as root"):
    """A benchmark's start: as root only (else every --smoke case is a skip
    saying what it @needs), in a private mount namespace (enter_namespace),
    with its Smoke report, which it returns."""
    if os.geteuid() != 0:
        Smoke(smoke, name).skip_all(needs)
    enter_namespace(script, mark)
    return Smoke(smoke, name)


def run_variants(smoke, bench, variants, run, duration):
    """{variant: run(variant)} for each of @variants, each a --smoke case;
    @bench is cleaned up after the last, or after the one that failed."""
    results = {}
    try:
        for variant in variants:
            print("running %s for %d s ..." % (variant, duration), file=sys.stderr)
            results[variant] = smoke.case(variant, lambda: run(variant))
    finally:
        bench.cleanup()
    return results


class Smoke:
    """--smoke: TAP on the original stdout, one line per case; everything
    else the benchmark prints goes to stderr. Without --smoke, case() runs
    the body and lets its exception through, as before."""

    def __init__(self, enabled, name):
        self.enabled = enabled
        self.name = name
        self.number = 0
        self.failed = 0
        self.tap = None
        if enabled:
            sys.stdout.flush()
            self.tap = os.fdopen(os.dup(1), "w", buffering=1)
            os.dup2(2, 1)
            self.tap.write("TAP version 13\n")

    def _line(self, text):
        self.number += 1
        self.tap.write(text % self.number + "\n")

    def case(self, what, body):
        """Runs body(); returns its value, or None when it skipped (body
        raises Skip) or, in a smoke run, failed."""
        try:
            value = body()
        except Skip as e:
            if self.enabled:
                self._line("ok %%d %s %s # SKIP %s" % (self.name, what, e))
            else:
                print("%s: %s" % (what, e), file=sys.stderr)
            return None
        except Exception:
            if not self.enabled:
                raise
            traceback.print_exc()
            self.failed += 1
            self._line("not ok %%d %s %s" % (self.name, what))
            return None
        if self.enabled:
            self._line("ok %%d %s %s" % (self.name, what))
        return value

    def skip_all(self, reason):
        """No case can run here (not root): the whole benchmark skips."""
        if not self.enabled:
            sys.exit("%s: %s" % (self.name, reason))
        self.tap.write("1..0 # SKIP %s\n" % reason)
        sys.exit(0)

    def finish(self):
        if self.enabled:
            self.tap.write("1..%d\n" % self.number)
            self.tap.flush()
            if self.failed:
                sys.exit(1)


class Skip(Exception):
    """A variant that cannot run on this machine (a tool not installed)."""


LMT_CACHE = "/var/tmp/laptop-moded-bench/laptop-mode-tools"


def laptop_mode_tools():
    """The laptop_mode command to compare against, inside this benchmark's
    private mount namespace. Installed, it is used as it is. Otherwise
    Debian's package is downloaded once (cached in LMT_CACHE) and unpacked,
    never installed: an installed laptop-mode-tools enables services and
    power-event hooks that would change the machine's own settings. Its
    scripts read fixed paths, so its /etc/laptop-mode and
    /usr/share/laptop-mode-tools are laid over the real ones with read-only
    overlays that exist only in this namespace. Raises Skip when the
    archive cannot be reached."""
    import shutil
    installed = shutil.which("laptop_mode")
    if installed is not None:
        return installed
    root = os.path.join(LMT_CACHE, "root")
    command = os.path.join(root, "usr", "sbin", "laptop_mode")
    if not os.path.exists(command):
        os.makedirs(LMT_CACHE, exist_ok=True)
        fetched = subprocess.run(["apt-get", "download", "-q", "laptop-mode-tools"], cwd=LMT_CACHE,
                                 capture_output=True, text=True)
        debs = sorted(f for f in os.listdir(LMT_CACHE) if f.endswith(".deb"))
        if fetched.returncode != 0 or not debs:
            raise Skip("laptop-mode-tools cannot be fetched from the Debian archive: %s"
                       % (fetched.stderr.strip().splitlines() or ["no .deb"])[-1])
        unpacking = root + ".new"
        shutil.rmtree(unpacking, ignore_errors=True)
        subprocess.run(["dpkg-deb", "-x", os.path.join(LMT_CACHE, debs[-1]), unpacking], check=True)
        os.rename(unpacking, root)
    if os.path.isdir("/usr/share/laptop-mode-tools"):
        return command  # laid over already, by an earlier run in this namespace
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    for sub in ("/etc", "/usr/share"):
        # An overlay shows the directory, not what is mounted below it.
        below = [p for p in points if p.startswith(sub + "/")]
        if below:
            raise RuntimeError("cannot lay laptop-mode-tools over %s: %s is mounted below it"
                               % (sub, below[0]))
        # Its files over the real ones; /etc and /usr/share stay readable.
        subprocess.run(["mount", "-t", "overlay", "lm-bench-lmt", "-o",
                        "lowerdir=%s:%s" % (os.path.join(root, sub[1:]), sub), sub], check=True)
    return command
