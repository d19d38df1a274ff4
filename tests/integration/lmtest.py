"""Test harness for laptop-moded integration tests.

Starts the real parts: a private dbus-daemon configured like the system bus
with the project's own policy file, the real laptop-moded binary (against a
fake root, or the real /proc/sys/vm for real-kernel tests), and runs the
real clients (laptop-modectl, busctl, gdbus) as root or as an unprivileged
user. Everything started is stopped, and every temporary file removed, even
when a test fails.
"""

import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import lmpolkit

SRCDIR = os.environ.get("LM_SRCDIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
# The build scripts/run-tests makes; meson sets LM_BUILDDIR for its own.
BUILDDIR = os.environ.get("LM_BUILDDIR", os.path.join(SRCDIR, "build-tests"))
DAEMON = os.path.join(BUILDDIR, "service", "laptop-moded")
# The same daemon with the scripted fake ATA drive (tests/lm-fake-ata.c).
TEST_DAEMON = os.path.join(BUILDDIR, "tests", "laptop-moded-test")
CTL = os.path.join(BUILDDIR, "client", "laptop-modectl")
POLICY = os.path.join(SRCDIR, "data", "org.laptopmode.LaptopMode1.conf")
# laptop-modectl explain's table of causes: the source's, not whatever an
# install put under the build's prefix.
CAUSES = os.path.join(SRCDIR, "data", "causes.conf")
os.environ.setdefault("LAPTOP_MODED_CAUSES", CAUSES)

BUS_NAME = "org.laptopmode.LaptopMode1"
OBJECT_PATH = "/org/laptopmode/LaptopMode1"
IFACE = "org.laptopmode.LaptopMode1"

UNPRIVILEGED = "nobody"

# A system-bus-like configuration: deny by default, as Debian's system.conf
# does, so the project's policy file is what lets callers in.
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
    <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus" send_member="UpdateActivationEnvironment"/>
  </policy>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
  <include>{policy}</include>
  <!-- Debian's system.conf leaves these at dbus-daemon's built-in values;
       written out so that what a test may send (a 30 MiB call) is visible. -->
  <limit name="max_incoming_bytes">133169152</limit>
  <limit name="max_outgoing_bytes">133169152</limit>
  <limit name="max_message_size">33554432</limit>
{extra}
</busconfig>
"""

# What a 6.x kernel shows in /proc/sys/vm, with deliberately odd values so
# that a restore to defaults instead of originals is caught.
SYSCTL_VM = {
    "laptop_mode": "0",
    "dirty_writeback_centisecs": "500",
    "dirty_expire_centisecs": "1234",
    "dirty_ratio": "17",
    "dirty_background_ratio": "7",
    "dirty_bytes": "0",
    "dirty_background_bytes": "0",
}

# LM_TEST_MACHINE_ROOT: a directory standing for "/" in read_real_vm and
# write_real_vm, for tests of lmtest itself.
MACHINE_ROOT = os.environ.get("LM_TEST_MACHINE_ROOT", "")
VM_KEYS = ["laptop_mode", "dirty_writeback_centisecs", "dirty_expire_centisecs",
           "dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes"]


# Lets root own and call the names that python-dbusmock stands in for.
MOCK_BUS_POLICY = """
  <policy user="root">
    <allow own="org.freedesktop.UPower"/>
    <allow own="org.freedesktop.login1"/>
    <allow send_destination="org.freedesktop.UPower"/>
    <allow send_destination="org.freedesktop.login1"/>
  </policy>
"""


# Set in the environment of a test file re-run in its own mount namespace.
PRIVATE_MOUNTS_MARK = "LM_TEST_PRIVATE_MOUNTS"


def in_private_mounts():
    """Whether this process runs in the private mount namespace main()
    enters for real-kernel cases: only there may a test mount loop disks."""
    return os.environ.get(PRIVATE_MOUNTS_MARK) == "1"


def enter_private_mounts(script, argv=()):
    """Re-run @script in its own mount namespace (once: PRIVATE_MOUNTS_MARK is
    set there), so its loop mounts are invisible to the machine and vanish
    with it. Does nothing when not root or unshare is missing; the cases
    that need it then skip (can_run's "namespace")."""
    import sys
    if in_private_mounts() or os.geteuid() != 0 or shutil.which("unshare") is None:
        return
    env = dict(os.environ, **{PRIVATE_MOUNTS_MARK: "1"})
    try:
        os.execvpe("unshare", ["unshare", "-m", "--propagation", "private", sys.executable,
                               os.path.abspath(script)] + list(argv), env)
    except OSError:
        pass


def key_file_list(items):
    """A GKeyFile string list: ';'-separated, with ';' and '\\' escaped."""
    return "".join(i.replace("\\", "\\\\").replace(";", "\\;") + ";" for i in items)


def close_child(p, timeout=10):
    """Stop a child started with pipes and close them. Stopped before its
    pipes are closed: a reader thread may still hold one."""
    if p.poll() is None:
        p.terminate()
        p.wait(timeout=timeout)
    for f in (p.stdout, p.stderr):
        if f is not None:
            f.close()


def bpf_built():
    """Whether the daemon was built with its BPF programs."""
    conf = os.path.join(BUILDDIR, "service", "bpf", "lm-attrib-config.h")
    try:
        with open(conf) as f:
            return "LM_HAVE_BPF 1" in f.read()
    except FileNotFoundError:
        return False


def can_run(*needs, tools=(), built=()):
    """(True, "") when this machine gives a real-kernel test what it needs,
    else (False, why) for its skip. @needs: "root", "namespace" (main()'s
    private mount namespace), "vm" (a writable /proc/sys/vm), "loop" (a free
    loop device), "btf" (/sys/kernel/btf/vmlinux), "bpf" (the daemon built
    with BPF), "tracefs" (the kernel has it); @tools: commands on PATH;
    @built: files of the build that must be executable."""
    checks = {
        "root": (lambda: os.geteuid() == 0,
                 "needs root: loop devices, mounts, BPF or the real /proc/sys/vm"),
        "namespace": (in_private_mounts,
                      "could not enter a private mount namespace (unshare -m failed)"),
        "vm": (lambda: os.access("/proc/sys/vm/dirty_ratio", os.W_OK),
               "/proc/sys/vm is not writable here (read-only /proc in a container?)"),
        "btf": (lambda: os.path.exists("/sys/kernel/btf/vmlinux"),
                "the kernel has no BTF (/sys/kernel/btf/vmlinux): the BPF programs cannot load"),
        "bpf": (bpf_built, "laptop-moded was built without BPF (clang, bpftool, libbpf)"),
        "tracefs": (lambda: "tracefs" in open("/proc/filesystems").read(),
                    "the kernel has no tracefs"),
    }
    for need in needs:
        if need == "loop":
            continue
        if need not in checks:
            raise ValueError("lmtest.can_run: no check %r" % need)
        ok, why = checks[need]
        if not ok():
            return False, why
    for tool in tools:
        if shutil.which(tool) is None:
            return False, "needs %s" % tool
    for path in built:
        if not os.access(path, os.X_OK):
            return False, "%s is not built" % path
    if "loop" in needs:
        r = subprocess.run(["losetup", "--find"], capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(r.stdout.strip() or "/nonexistent"):
            return False, "no free loop device (%s)" % (r.stderr.strip() or "no /dev/loop*")
    return True, ""


def unescape_mountinfo(field):
    """The kernel writes space, tab, newline and backslash as \\ooo."""
    import re
    return re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), field)


def mountinfo():
    """{mount point (bytes): (major:minor, vfs options, fstype, super options)}"""
    table = {}
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            fields = line.split()
            sep = fields.index(b"-")
            mp = unescape_mountinfo(fields[4])
            table[mp] = (fields[2].decode(), fields[5].decode(), fields[sep + 1].decode(),
                         unescape_mountinfo(fields[sep + 3]).decode("utf-8", "surrogateescape"))
    return table


def stop_process(p, timeout=20):
    """SIGTERM (the daemon restores on it), then SIGKILL if it hangs."""
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def release_mounts(mount_points, images):
    """Unmount (lazily if busy), in reverse order, and detach every loop
    device backed by one of @images: a test's or a benchmark's cleanup."""
    for mp in reversed(mount_points):
        if subprocess.run(["umount", mp], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", mp], capture_output=True)
    for image in images:
        r = subprocess.run(["losetup", "--associated", image], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            subprocess.run(["losetup", "--detach", line.split(":")[0]], capture_output=True)


class LoopFilesystem:
    """An ext4 image on a loop device, mounted; removed by cleanup()."""

    def __init__(self, base, name, size_mb=128, fstype="ext4"):
        self.image = os.path.join(base, name + ".img")
        self.mount_point = os.path.join(base, name)
        self.device = None
        os.makedirs(self.mount_point)
        with open(self.image, "wb") as f:
            f.truncate(size_mb << 20)
        subprocess.run(["mkfs." + fstype, "-q", "-F", self.image], check=True, capture_output=True)
        self.device = subprocess.run(["losetup", "--find", "--show", self.image], check=True,
                                     capture_output=True, text=True).stdout.strip()
        subprocess.run(["mount", self.device, self.mount_point], check=True)

    @property
    def disk(self):
        return os.path.basename(self.device)

    def written_sectors(self):
        """Sectors written to the loop device so far (field 7 of its stat)."""
        with open("/sys/block/%s/stat" % self.disk) as f:
            return int(f.read().split()[6])

    def cleanup(self):
        if self.device is not None:
            subprocess.run(["umount", "-l", self.mount_point], capture_output=True)
            subprocess.run(["losetup", "-d", self.device], capture_output=True)
            self.device = None


def is_root():
    return os.geteuid() == 0


class FakeRoot:
    """A directory that stands in for / (LAPTOP_MODED_ROOT)."""

    def __init__(self, base, release="6.18.0-test", vm=None, bdflush=None):
        self.path = os.path.join(base, "root")
        os.makedirs(os.path.join(self.path, "proc/sys/vm"))
        os.makedirs(os.path.join(self.path, "proc/sys/kernel"))
        self.write("/proc/sys/kernel/osrelease", release + "\n")
        for name, value in (vm if vm is not None else SYSCTL_VM).items():
            self.write("/proc/sys/vm/" + name, value + "\n")
        if bdflush is not None:
            self.write("/proc/sys/vm/bdflush", bdflush + "\n")

    def file(self, system_path):
        return os.path.join(self.path, system_path.lstrip("/"))

    def write(self, system_path, text):
        with open(self.file(system_path), "w") as f:
            f.write(text)

    def read(self, system_path):
        with open(self.file(system_path)) as f:
            return f.read().strip()

    def vm(self):
        d = {}
        for name in os.listdir(self.file("/proc/sys/vm")):
            d[name] = self.read("/proc/sys/vm/" + name)
        return d


def hold_value(case, path, value):
    """@path (a /proc/sys or /sys file) holds @value until @case ends,
    then what it held before."""
    with open(path) as f:
        before = f.read().strip()

    def put_back():
        with open(path, "w") as f:
            f.write(before)
    case.addCleanup(put_back)
    with open(path, "w") as f:
        f.write(value)


def read_real_vm():
    d = {}
    for name in VM_KEYS:
        p = MACHINE_ROOT + "/proc/sys/vm/" + name
        if os.path.exists(p):
            with open(p) as f:
                d[name] = f.read().strip()
    return d


def write_real_vm(values):
    """Write back a saved set of real sysctls; the byte twins win over the
    ratios when non-zero, as the kernel keeps only one of each pair."""
    order = [k for k in VM_KEYS if k in values]
    for name in order:
        v = values[name]
        if name in ("dirty_bytes", "dirty_background_bytes", "dirty_ratio", "dirty_background_ratio") and v == "0":
            continue
        with open(MACHINE_ROOT + "/proc/sys/vm/" + name, "w") as f:
            f.write(v + "\n")


class Result:
    def __init__(self, proc):
        self.returncode = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def __repr__(self):
        return "rc=%d out=%r err=%r" % (self.returncode, self.out, self.err)


def start_private_bus(tmp, extra=""):
    """A dbus-daemon shaped like the system bus, loading the project's policy
    (and letting polkitd own its name); returns (process, address)."""
    socket = os.path.join(tmp, "system_bus_socket")
    conf = os.path.join(tmp, "bus.conf")
    with open(conf, "w") as f:
        f.write(BUS_CONFIG.format(socket=socket, policy=POLICY, extra=lmpolkit.BUS_CONFIG + extra))
    r, w = os.pipe()
    with open(os.path.join(tmp, "bus.log"), "w") as log:
        p = subprocess.Popen(["dbus-daemon", "--config-file=" + conf, "--nofork",
                              "--print-address=%d" % w], pass_fds=(w,), stderr=log)
    os.close(w)
    with os.fdopen(r) as f:
        return p, f.readline().strip()


def start_system_bus_with_polkit(tmp, procs):
    """For scripts outside the test cases (the benchmarks): the private bus
    and a real polkitd seeing the project's actions, which lets root do
    everything. Processes go to @procs, for the caller to stop. Returns the
    bus address."""
    bus, address = start_private_bus(tmp)
    procs.append(bus)
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
    procs.append(lmpolkit.RealPolkit(tmp).start(env, address))
    return address


class DaemonTestCase(unittest.TestCase):
    """Each test gets its own bus, fake root, state and config directory."""

    fake_root = True
    release = "6.18.0-test"
    vm = None
    bdflush = None
    config_text = None
    extra_bus_config = ""
    # polkit on the private bus: "real" (polkitd with the project's actions
    # and polkit_rules, a dict file name -> text), "mock" (python-dbusmock,
    # for timing) or None.
    polkit = "real"
    polkit_rules = None

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="lm-test-")
        os.chmod(self.tmp, 0o755)
        self.procs = []
        self.addCleanup(self._cleanup)

        self.bindir = os.path.join(self.tmp, "bin")
        os.makedirs(self.bindir)
        os.chmod(self.bindir, 0o755)
        # A copy any user can run, wherever the build tree lives.
        self.ctl = os.path.join(self.bindir, "laptop-modectl")
        shutil.copy(CTL, self.ctl)
        os.chmod(self.ctl, 0o755)

        self.root = FakeRoot(self.tmp, self.release, self.vm, self.bdflush) if self.fake_root else None
        self.state_dir = os.path.join(self.tmp, "state")
        self.config = os.path.join(self.tmp, "laptop-moded.conf")
        if self.config_text is not None:
            with open(self.config, "w") as f:
                f.write(self.config_text)

        self.start_bus()
        self.env = dict(os.environ)
        self.env["DBUS_SYSTEM_BUS_ADDRESS"] = self.bus_address
        self.env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        self.start_polkit()

    # --- processes ------------------------------------------------------

    def _cleanup(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start_bus(self):
        self.bus_proc, self.bus_address = start_private_bus(self.tmp, self.extra_bus_config)
        self.procs.append(self.bus_proc)
        self.assertTrue(self.bus_address.startswith("unix:"), "dbus-daemon did not start")

    def start_polkit(self):
        """Without root there is no real polkitd (it needs bind mounts): the
        daemon then refuses every method, which the root-only tests skip."""
        self.polkit_mock = None
        if self.polkit == "real" and lmpolkit.available() is None:
            self.procs.append(lmpolkit.RealPolkit(self.tmp, self.polkit_rules).start(
                self.env, self.bus_address))
        elif self.polkit == "mock":
            self.polkit_mock = lmpolkit.MockPolkit(self.tmp)
            self.addCleanup(self.polkit_mock.close)
            self.procs.append(self.polkit_mock.start(self.env, self.bus_address))

    def daemon_env(self):
        env = dict(self.env)
        env["STATE_DIRECTORY"] = self.state_dir
        env["LAPTOP_MODED_CONFIG"] = self.config
        env["G_DEBUG"] = "fatal-criticals"
        if self.root is not None:
            env["LAPTOP_MODED_ROOT"] = self.root.path
        else:
            env.pop("LAPTOP_MODED_ROOT", None)
        # Outside the real-kernel tier the daemon's sync() is a syncfs() of
        # its fake root: these tiers run beside the real-kernel one, whose
        # loop disks a machine-wide sync() would flush mid-measurement.
        if self.root is not None and os.environ.get("LM_TIER") != "realkernel":
            env["LAPTOP_MODED_SYNC"] = "root"
        else:
            env.pop("LAPTOP_MODED_SYNC", None)
        return env

    def start_daemon(self, args=(), wait=True, wrapper=()):
        """@wrapper runs the daemon through e.g. ["unshare", "-n", "--"].
        LM_TEST_DAEMON_WRAPPER (split like a shell would, never run by one)
        goes in front of it, e.g. "setpriv --bounding-set -all,+sys_admin
        --": the whole tier run with the unit's restrictions."""
        import shlex
        outer = shlex.split(os.environ.get("LM_TEST_DAEMON_WRAPPER", ""))
        log = open(os.path.join(self.tmp, "daemon.log"), "a")
        # Where this daemon's own lines begin (see this_daemon_log).
        self.daemon_log_start = log.tell()
        daemon = getattr(self, "daemon_binary", DAEMON)
        p = subprocess.Popen(outer + list(wrapper) + [daemon, "--verbose"] + list(args),
                             env=self.daemon_env(), stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(p)
        self.daemon = p
        if wait:
            self.wait_for_name()
        return p

    def wait_for_name(self, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                self.fail("laptop-moded exited with %d:\n%s" % (self.daemon.returncode, self.daemon_log()))
            # Ready means the object answers, not merely that the name is owned.
            r = subprocess.run(["gdbus", "call", "--system", "--dest", BUS_NAME, "--object-path",
                                OBJECT_PATH, "--method", "org.freedesktop.DBus.Properties.Get",
                                IFACE, "Version"],
                               env=self.env, capture_output=True, text=True)
            if r.returncode == 0:
                return
            time.sleep(0.05)
        self.fail("laptop-moded did not take its bus name:\n" + self.daemon_log())

    def stop_daemon(self, sig=signal.SIGTERM):
        self.daemon.send_signal(sig)
        rc = self.daemon.wait(timeout=20)
        return rc

    def daemon_log(self):
        try:
            with open(os.path.join(self.tmp, "daemon.log")) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def this_daemon_log(self):
        """Only the lines the daemon started last wrote: a test of a restart
        must not be satisfied by what the previous process logged."""
        return self.daemon_log()[getattr(self, "daemon_log_start", 0):]

    def wait_for_log(self, text, timeout=15, this_daemon=True):
        """Wait until @text appears in the daemon's log; returns the log."""
        got = {}

        def seen():
            got["log"] = self.this_daemon_log() if this_daemon else self.daemon_log()
            return text in got["log"]
        self.wait_until(seen, timeout=timeout, message="%r in the daemon's log" % text)
        return got["log"]

    def properties(self):
        """Every property of the daemon's interface, read over the bus."""
        conn = lmpolkit.connect(self.bus_address)
        try:
            r = conn.call_sync(BUS_NAME, OBJECT_PATH, "org.freedesktop.DBus.Properties", "GetAll",
                               lmpolkit.GLib.Variant("(s)", (IFACE,)), None, 0, 10000, None)
            return r.unpack()[0]
        finally:
            conn.close_sync(None)

    def connection_pid(self, name):
        """The pid behind a connection on the test's system bus."""
        conn = lmpolkit.connect(self.bus_address)
        try:
            r = conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetConnectionUnixProcessID", lmpolkit.GLib.Variant("(s)", (name,)),
                               None, 0, 10000, None)
            return r.unpack()[0]
        finally:
            conn.close_sync(None)

    def call_error(self, method, args=None, user=None):
        """Call @method as @user (root when None) on its own connection and
        return (D-Bus error name, message), or None when it succeeded."""
        code = CALL_ERROR_SCRIPT
        argv = ["/usr/bin/python3", "-c", code, method, args or ""]
        r = self.run_as(argv, user=user)
        self.assertEqual(r.returncode, 0, r)
        result = json.loads(r.out)
        return None if result is None else tuple(result)

    def signal_watch(self, **match):
        w = SignalWatch(self.bus_address, **match)
        self.addCleanup(w.close)
        return w

    def dbus_monitor(self, *rules):
        """dbus-monitor on the test's bus with @rules, returned once the bus
        has made it a monitor (so nothing after this call is missed)."""
        p = subprocess.Popen(["dbus-monitor", "--address", self.bus_address] + list(rules),
                             stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        lines = LineReader(p.stdout)

        def close():
            # Stopped before its pipe is closed: the reader thread holds it.
            stop_process(p)
            p.stdout.close()
        self.addCleanup(close)
        seen = []
        deadline = time.monotonic() + 15
        # BecomeMonitor takes the monitor's unique name away: the bus tells
        # it with NameLost, the first line after it is in place.
        while time.monotonic() < deadline:
            line = lines.get(deadline - time.monotonic())
            if line is None:
                break
            seen.append(line)
            if "member=NameLost" in line:
                return p, lines
        self.fail("dbus-monitor did not become a monitor: %r" % seen)

    # --- clients --------------------------------------------------------

    def run_as(self, argv, user=None, check=None, input=None):
        if user is not None and user != "root":
            pw = pwd.getpwnam(user)
            argv = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
                    "--init-groups", "--"] + argv
        p = subprocess.run(argv, env=self.env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL if input is None else None, input=input,
                           timeout=60)
        res = Result(p)
        if check is True:
            self.assertEqual(res.returncode, 0, "%s failed: %r" % (argv, res))
        return res

    def ctl_run(self, *args, user=None, check=None):
        return self.run_as([self.ctl] + list(args), user=user, check=check)

    def busctl(self, *args, user=None, check=None):
        return self.run_as(["busctl", "--system"] + list(args), user=user, check=check)

    def gdbus_call(self, method, *args, user=None, check=None):
        return self.run_as(["gdbus", "call", "--system", "--dest", BUS_NAME, "--object-path",
                            OBJECT_PATH, "--method", IFACE + "." + method] + list(args),
                           user=user, check=check)

    def start_mock(self, template, parameters=None, name=None):
        """A python-dbusmock stand-in for a service the project does not own
        (UPower, logind), on the test's system bus; needs MOCK_BUS_POLICY."""
        argv = ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", template]
        if parameters is not None:
            argv += ["--parameters", json.dumps(parameters)]
        log = open(os.path.join(self.tmp, "mock-%s.log" % template), "w")
        p = subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(p)
        name = name or {"upower": "org.freedesktop.UPower", "logind": "org.freedesktop.login1",
                        "polkitd": "org.freedesktop.PolicyKit1"}[template]

        def owned():
            r = subprocess.run(["gdbus", "call", "--system", "--dest", "org.freedesktop.DBus",
                                "--object-path", "/org/freedesktop/DBus", "--method",
                                "org.freedesktop.DBus.NameHasOwner", name],
                               env=self.env, capture_output=True, text=True)
            return "true" in r.stdout
        self.wait_until(owned, timeout=15, message="dbusmock %s on the bus" % template)
        return p

    def set_upower(self, path, iface, prop, value):
        """Set a property of the UPower mock (@value in GVariant text, as
        gdbus takes it); dbusmock sends PropertiesChanged."""
        self.run_as(["gdbus", "call", "--system", "--dest", "org.freedesktop.UPower",
                     "--object-path", path, "--method", "org.freedesktop.DBus.Properties.Set",
                     iface, prop, value], check=True)

    def supply(self, name, **attrs):
        """/sys/class/power_supply/@name under the fake root, one file per
        attribute (created or overwritten)."""
        d = self.root.file("/sys/class/power_supply/" + name)
        os.makedirs(d, exist_ok=True)
        for k, v in attrs.items():
            with open(os.path.join(d, k), "w") as f:
                f.write(v + "\n")

    def status(self):
        r = self.ctl_run("status", "--json", check=True)
        return json.loads(r.out)

    def wait_until(self, predicate, timeout=10, message="condition"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        self.fail("timed out waiting for " + message)

    def wait_state(self, active, reason, timeout=8):
        """Until Active and Reason are as given (the log in the failure)."""
        def ok():
            st = self.status()
            return st["Active"] == active and st["Reason"] == reason
        try:
            self.wait_until(ok, timeout=timeout, message="Active=%s Reason=%s" % (active, reason))
        except AssertionError:
            self.fail("wanted Active=%s Reason=%s, have %r\n%s" % (active, reason, self.status(),
                                                                 self.daemon_log()))

    def assert_stays(self, active, reason, seconds=2.5):
        """Active and Reason stay as given for @seconds (a settle that must
        not switch)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            st = self.status()
            self.assertEqual((st["Active"], st["Reason"]), (active, reason), self.daemon_log())
            time.sleep(0.25)


_stopped_by = None  # the signal that stopped the run, for its TAP report


def _interrupted(signum, frame):
    global _stopped_by
    _stopped_by = signal.Signals(signum).name
    raise KeyboardInterrupt(_stopped_by)


class _TapResult(unittest.TestResult):
    """One TAP line per test method on @tap; the usual verbose report and
    every traceback on stderr. A method that never ran because its
    setUpClass or setUpModule skipped or failed is still reported, as a skip
    with that reason or as a failure, so that a case count does not depend
    on where a skip was raised."""

    def __init__(self, tap, ids):
        super().__init__()
        self.tap = tap
        self.ids = ids          # every test id in the suite, in order
        self.reported = set()
        self.number = 0
        self.bad = 0            # "not ok" lines written
        self.fixtures = []      # (scope, "skip"|"fail", message)
        self.current = None

    def _line(self, ok, desc, directive=""):
        self.number += 1
        desc = desc.replace("#", "\\#").replace("\n", " ")
        self.bad += 0 if ok else 1
        self.tap.write("%s %d %s%s\n" % ("ok" if ok else "not ok", self.number, desc, directive))
        self.tap.flush()

    def _say(self, text):
        import sys
        sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def startTest(self, test):
        super().startTest(test)
        self.current = {"ok": True, "skip": None, "xfail": False}
        self._say("%s ..." % test.id())

    def stopTest(self, test):
        super().stopTest(test)
        state, self.current = self.current, None
        tid = test.id()
        self.reported.add(tid)
        if state["skip"] is not None and state["ok"]:
            self._line(True, tid, " # SKIP %s" % (state["skip"] or "no reason given"))
            self._say("%s ... skipped: %s" % (tid, state["skip"]))
        elif _stopped_by is not None:
            self._line(False, tid, " # stopped by %s" % _stopped_by)
        elif state["ok"]:
            self._line(True, tid, " # TODO expected failure" if state["xfail"] else "")
            self._say("%s ... ok" % tid)
        else:
            self._line(False, tid)
            self._say("%s ... FAIL" % tid)

    def _fixture(self, test, kind, message):
        # unittest's _ErrorHolder: "setUpClass (module.Class)" or
        # "setUpModule (module)"; the scope is the part in parentheses.
        desc = test.description
        scope = desc[desc.find("(") + 1:desc.rfind(")")] if "(" in desc else desc
        self.fixtures.append((desc, scope, kind, message))
        self._say("%s: %s" % (desc, "skipped: " + message if kind == "skip" else "ERROR"))

    def _is_holder(self, test):
        return not isinstance(test, unittest.TestCase)

    def addError(self, test, err):
        super().addError(test, err)
        self._say(self._exc_info_to_string(err, test))
        if self._is_holder(test):
            self._fixture(test, "fail", "error in " + test.description)
        elif self.current is not None:
            self.current["ok"] = False

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._say(self._exc_info_to_string(err, test))
        if self.current is not None:
            self.current["ok"] = False

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        if self._is_holder(test):
            self._fixture(test, "skip", reason)
        elif self.current is not None:
            self.current["skip"] = reason

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        if self.current is not None:
            self.current["xfail"] = True

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._say("%s: unexpected success" % test.id())
        if self.current is not None:
            self.current["ok"] = False

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._say(self._exc_info_to_string(err, subtest))
            if self.current is not None and not issubclass(err[0], unittest.SkipTest):
                self.current["ok"] = False

    def finish(self):
        """Report the methods that never ran, then each fixture failure that
        covered none of them, then the plan."""
        used = set()
        for tid in self.ids:
            if tid in self.reported:
                continue
            cover = [f for f in self.fixtures
                     if tid == f[1] or tid.startswith(f[1] + ".")]
            if not cover:
                self._line(False, tid, " # did not run")
                continue
            desc, _scope, kind, message = cover[0]
            used.add(desc)
            if kind == "skip":
                self._line(True, tid, " # SKIP %s" % message)
            else:
                self._line(False, tid, " # %s" % message)
        for desc, _scope, kind, message in self.fixtures:
            if desc not in used and kind == "fail":
                self._line(False, desc)
        self.tap.write("1..%d\n" % self.number)
        self.tap.flush()


class _TapRunner:
    """unittest.main's runner: TAP on the original stdout (what meson reads
    with protocol: 'tap'); stdout is pointed at stderr while the tests run,
    so that nothing a test or its children print can break the stream."""

    def run(self, test, check=None):
        """Runs @test; then @check(), when given, returns problems found
        after the cases (each a TAP comment, and the run fails)."""
        import sys

        def ids(t):
            if isinstance(t, unittest.TestSuite):
                for sub in t:
                    yield from ids(sub)
            else:
                yield t.id()

        sys.stdout.flush()
        tap = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)
        tap.write("TAP version 13\n")
        result = _TapResult(tap, list(ids(test)))
        result.failfast = False
        try:
            test(result)
        except KeyboardInterrupt:
            pass  # stopTest reported the case it stopped (_interrupted)
        result.finish()
        problems = check() if check is not None else []
        for line in problems:
            tap.write("# %s\n" % line)
        self.failed = (result.bad > 0 or not result.wasSuccessful() or bool(problems)
                       or _stopped_by is not None)
        if _stopped_by is not None:
            tap.write("Bail out! stopped by %s\n" % _stopped_by)
        tap.close()
        return result


CALL_ERROR_SCRIPT = r"""
import json, sys
from gi.repository import Gio, GLib
method, args = sys.argv[1], sys.argv[2]
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
try:
    bus.call_sync("%s", "%s", "%s", method,
                  GLib.Variant.parse(None, args, None, None) if args else None,
                  None, 0, 30000, None)
    print("null")
except GLib.Error as e:
    # GDBus writes a remote error as "GDBus.Error:NAME: MESSAGE".
    name, _, message = e.message[len("GDBus.Error:"):].partition(": ")
    print(json.dumps([name, message] if e.message.startswith("GDBus.Error:") else [None, e.message]))
""" % (BUS_NAME, OBJECT_PATH, IFACE)


def project_version():
    """The version meson.build declares: what the daemon must report."""
    import re
    with open(os.path.join(SRCDIR, "meson.build")) as f:
        m = re.search(r"project\(\s*'laptop-moded'.*?version\s*:\s*'([^']+)'", f.read(), re.S)
    return m.group(1)


class LineReader:
    """Lines of a child's stdout, with a timeout."""

    def __init__(self, stream):
        import queue
        import threading
        self._empty = queue.Empty
        self.q = queue.Queue()
        self.t = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self.t.start()

    def _run(self, stream):
        try:
            for line in stream:
                self.q.put(line)
        except ValueError:
            pass  # closed by the test's cleanup

    def get(self, timeout):
        try:
            return self.q.get(timeout=max(timeout, 0))
        except self._empty:
            return None

    def drain(self, wait):
        """Everything that arrives within @wait seconds."""
        out = []
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return out
            line = self.get(left)
            if line is not None:
                out.append(line)

    def until(self, predicate, timeout):
        """Lines up to and including the first for which @predicate holds,
        or None if none came within @timeout seconds."""
        out = []
        deadline = time.monotonic() + timeout
        while True:
            line = self.get(deadline - time.monotonic())
            if line is None:
                return None
            out.append(line)
            if predicate(line):
                return out


class SignalWatch:
    """Signals on the test's bus, recorded from the moment the constructor
    returns: the bus handles one connection's messages in order, so once a
    call made after AddMatch is answered, the match is in force."""

    def __init__(self, address, sender=None, iface=None, member=None, path=None):
        GLib = lmpolkit.GLib
        self.ctx = GLib.MainContext.new()
        self.signals = []  # (sender, path, interface, member, unpacked arguments)
        self.ctx.push_thread_default()
        try:
            self.conn = lmpolkit.connect(address)
            self.conn.signal_subscribe(sender, iface, member, path, None, 0, self._on)
        finally:
            self.ctx.pop_thread_default()
        self.conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                            "GetId", None, None, 0, 10000, None)

    def _on(self, conn, sender, path, iface, member, params):
        self.signals.append((sender, path, iface, member, params.unpack()))

    def pump(self):
        while self.ctx.iteration(False):
            pass
        return self.signals

    def wait(self, predicate, timeout=15):
        """True once @predicate(signals so far) holds, False at the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            if predicate(self.pump()):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def close(self):
        if self.conn is not None:
            self.conn.close_sync(None)
            self.conn = None


def ctx_switches(pid):
    """Wake-ups of all threads of @pid so far: each ends with one voluntary
    context switch when the thread sleeps again. Preemptions (the
    nonvoluntary ones) are left out: a busy machine adds those to a thread
    that was awake anyway."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        total += int(line.split()[1])
        except FileNotFoundError:
            pass  # a thread that just ended
    return total


def wait_quiet(test, pid, quiet=1.0, timeout=30):
    """Until @pid has not woken for @quiet seconds (its start-up is over)."""
    last, since = ctx_switches(pid), time.monotonic()
    deadline = since + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = ctx_switches(pid)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
    test.fail("pid %d never stayed asleep for %.1f s" % (pid, quiet))


# LM_REALKERNEL_LOCK: another lock file, for tests of lmtest itself.
REALKERNEL_LOCK = os.environ.get("LM_REALKERNEL_LOCK", "/tmp/lm-realkernel.lock")

# The meson suites of the Python tests. A case is an integration test (fake
# root, mocks, its own bus) unless it or its class is marked @realkernel.
INTEGRATION = "integration"
REALKERNEL = "realkernel"
TIERS = (INTEGRATION, REALKERNEL)


def realkernel(obj):
    """Class or method decorator: this test uses the machine's own kernel
    (its /proc/sys/vm, loop disks, mounts, BPF). Such cases run in meson's
    realkernel suite, one file at a time under REALKERNEL_LOCK, in a private
    mount namespace. tests/integration/lmtiers.py reads the decorator so
    that meson runs each file in the suites its cases belong to."""
    obj.lm_tier = REALKERNEL
    return obj


def tier_of(test):
    """The suite of one test case: its method's mark, else its class's."""
    method = getattr(type(test), test._testMethodName, None)
    return getattr(method, "lm_tier", None) or getattr(type(test), "lm_tier", INTEGRATION)


def _cases(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _cases(t)
        else:
            yield t


_held = []  # the lock files main() holds until this process exits


def hold_realkernel_lock():
    """Wait for and hold an exclusive lock on REALKERNEL_LOCK until this
    process exits: two suites (two builds, or a suite beside a benchmark)
    never save each other's /proc/sys/vm values as originals."""
    import fcntl
    f = open(REALKERNEL_LOCK, "a")
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


# What else a real-kernel file may change on the machine besides VM_KEYS:
# the grace-period switch the daemon flips around remounts.
RCU_EXPEDITED = "/sys/kernel/rcu_expedited"


def _machine():
    """VM_KEYS and RCU_EXPEDITED as they are now, by path."""
    values = {"/proc/sys/vm/" + k: v for k, v in read_real_vm().items()}
    try:
        with open(MACHINE_ROOT + RCU_EXPEDITED) as f:
            values[RCU_EXPEDITED] = f.read().strip()
    except OSError:
        pass
    return values


def _put_machine_back(before):
    """Writes back @before (from _machine()) where the machine differs now;
    returns what differed, as "path: was -> now" lines."""
    now = _machine()
    changed = ["%s: %s -> %s" % (p, before.get(p), now.get(p))
               for p in sorted(set(before) | set(now)) if before.get(p) != now.get(p)]
    if not changed:
        return []
    try:
        write_real_vm({p[len("/proc/sys/vm/"):]: v for p, v in before.items()
                       if p.startswith("/proc/sys/vm/")})
        if RCU_EXPEDITED in before:
            with open(MACHINE_ROOT + RCU_EXPEDITED, "w") as f:
                f.write(before[RCU_EXPEDITED] + "\n")
    except OSError as e:
        changed.append("could not put the values back: %s" % e)
    return changed


def main():
    """Runs this file's cases of one suite (LM_TIER, which meson sets; every
    case when unset) with a TAP report (one line per test method, skips
    with their reason) on stdout, the verbose log on stderr; arguments name
    cases as unittest's do. Real-kernel cases run in a private mount
    namespace (the file is run again there) under REALKERNEL_LOCK. Exits 1
    when a test failed or errored, or when the file's cases and the suites
    meson runs it in (LM_TIERS) disagree, else 0; meson reports a file whose
    every case skipped as SKIP."""
    import sys
    module = sys.modules["__main__"]
    loader = unittest.defaultTestLoader
    names = sys.argv[1:]
    everything = loader.loadTestsFromNames(names, module) if names else loader.loadTestsFromModule(module)
    cases = list(_cases(everything))
    tier = os.environ.get("LM_TIER")
    registered = os.environ.get("LM_TIERS")
    problem = None
    if tier is not None and tier not in TIERS:
        problem = "LM_TIER=%s is not one of %s" % (tier, ", ".join(TIERS))
    elif registered is not None and not names:
        missing = {tier_of(c) for c in cases} - set(registered.split(","))
        if missing:
            problem = ("this file has %s cases but tests/meson.build runs it only in %s "
                       "(tests/integration/lmtiers.py disagrees with lmtest)"
                       % (", ".join(sorted(missing)), registered))
    selected = [c for c in cases if tier is None or tier_of(c) == tier]
    if problem is None and not selected:
        problem = "no %s cases here (tests/integration/lmtiers.py disagrees with lmtest)" % tier
    if problem is not None:
        print("TAP version 13\nBail out! %s" % problem, flush=True)
        sys.exit(1)
    check = None
    if any(tier_of(c) == REALKERNEL for c in selected):
        enter_private_mounts(sys.argv[0], names)
        _held.append(hold_realkernel_lock())
        # Each test restores what it changed; this catches one that did not
        # (a failure of its own) and still leaves the machine as it was.
        before = _machine()
        check = lambda: ["left changed by this file (put back): " + line  # noqa: E731
                         for line in _put_machine_back(before)]
        # meson's timeout sends SIGTERM: unwind so the values still go back.
        signal.signal(signal.SIGTERM, _interrupted)
    runner = _TapRunner()
    runner.run(unittest.TestSuite(selected), check)
    sys.exit(1 if runner.failed else 0)
