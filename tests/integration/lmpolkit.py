"""lmpolkit: polkit for the integration tests, a real polkitd or a fake.
Owns the polkitd side of the private bus; it must never touch the machine's
own polkit setup (actions and rules are bind-mounted in a private mount
namespace that only polkitd sees).
"""

import os
import shutil
import subprocess
import time

from gi.repository import Gio, GLib

SRCDIR = os.environ.get("LM_SRCDIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
POLICY_FILE = os.path.join(SRCDIR, "polkit", "org.laptopmode.LaptopMode1.policy")
GROUP_RULE_TEMPLATE = os.path.join(SRCDIR, "polkit", "laptopmode.rules.in")
POLKITD = "/usr/lib/polkit-1/polkitd"

NAME = "org.freedesktop.PolicyKit1"
AUTHORITY_PATH = "/org/freedesktop/PolicyKit1/Authority"
MOCK_IFACE = "org.freedesktop.DBus.Mock"

# The machine's polkit directories that polkitd reads; inside polkitd's own
# mount namespace each is covered by a folder of the test.
ACTIONS_DIR = "/usr/share/polkit-1/actions"
ETC_RULES_DIR = "/etc/polkit-1/rules.d"
USR_RULES_DIR = "/usr/share/polkit-1/rules.d"
# polkit 126 (Debian 13) reads these too: where they exist, an empty folder
# covers each, so that no rule or action of the machine's is seen.
EXTRA_DIRS = ("/etc/polkit-1/actions", "/run/polkit-1/actions",
              "/usr/local/share/polkit-1/actions", "/run/polkit-1/rules.d",
              "/usr/local/share/polkit-1/rules.d")

# Added to the private bus configuration: polkitd (real or fake, running as
# root or, once it dropped privileges, as polkitd) owns its name, and
# everyone may call it, as on a real system.
BUS_CONFIG = """
  <policy user="root">
    <allow own="org.freedesktop.PolicyKit1"/>
  </policy>
  <policy user="polkitd">
    <allow own="org.freedesktop.PolicyKit1"/>
  </policy>
  <policy context="default">
    <allow send_destination="org.freedesktop.PolicyKit1"/>
  </policy>
  <!-- As polkit's own bus configuration: polkitd asks agents. -->
  <policy user="root">
    <allow send_interface="org.freedesktop.PolicyKit1.AuthenticationAgent"/>
  </policy>
  <policy user="polkitd">
    <allow send_interface="org.freedesktop.PolicyKit1.AuthenticationAgent"/>
  </policy>
"""

# Only root is an administrator: no distribution group (sudo, wheel) turns
# a test user into one by accident.
ADMIN_RULE = """polkit.addAdminRule(function (action, subject) {
    return ["unix-user:0"];
});
"""

# The README's example: a user may switch laptop mode but not configure it.
SWITCH_ONLY_RULE = """polkit.addRule(function (action, subject) {
    if (subject.user == "@USER@") {
        if (action.id == "org.laptopmode.LaptopMode1.switch")
            return polkit.Result.YES;
        if (action.id == "org.laptopmode.LaptopMode1.configure")
            return polkit.Result.NO;
    }
    return polkit.Result.NOT_HANDLED;
});
"""


def available():
    """Why a real polkitd cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root to bind-mount polkit's directories"
    if not os.access(POLKITD, os.X_OK):
        return "polkitd is not installed (%s)" % POLKITD
    for tool in ("unshare", "mount"):
        if shutil.which(tool) is None:
            return "%s is not installed" % tool
    return None


def group_rule(group):
    """The project's example rules file, for @group."""
    with open(GROUP_RULE_TEMPLATE) as f:
        return f.read().replace("@GROUP@", group)


def switch_only_rule(user):
    return SWITCH_ONLY_RULE.replace("@USER@", user)


def connect(address):
    return Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
        Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)


def has_owner(conn, name):
    reply = conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                           "NameHasOwner", GLib.Variant("(s)", (name,)), GLib.VariantType("(b)"),
                           Gio.DBusCallFlags.NONE, -1, None)
    return reply.unpack()[0]


def wait_for_name(conn, proc, log_path, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            with open(log_path) as f:
                raise RuntimeError("polkit exited with %d:\n%s" % (proc.returncode, f.read()))
        if has_owner(conn, NAME):
            return
        time.sleep(0.01)
    raise RuntimeError("polkit did not take %s within %d s" % (NAME, timeout))


class RealPolkit:
    """The real polkitd, seeing only the project's actions and @rules
    (a dict file name -> text) through bind mounts in its own namespace."""

    def __init__(self, tmp, rules=None):
        self.base = os.path.join(tmp, "polkit")
        self.actions = os.path.join(self.base, "actions")
        self.etc_rules = os.path.join(self.base, "etc-rules.d")
        self.usr_rules = os.path.join(self.base, "usr-rules.d")
        for d in (self.base, self.actions, self.etc_rules, self.usr_rules):
            os.makedirs(d)
            # polkitd drops to its own user and must still read these.
            os.chmod(d, 0o755)
        shutil.copy(POLICY_FILE, self.actions)
        self._write(self.usr_rules, "50-default.rules", ADMIN_RULE)
        for name, text in (rules or {}).items():
            self._write(self.etc_rules, name, text)
        self.log = os.path.join(tmp, "polkitd.log")
        self.proc = None

    @staticmethod
    def _write(folder, name, text):
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)

    def start(self, env, address):
        # The shell only mounts (folder, mount point, in pairs) and then
        # becomes polkitd; the paths travel as arguments, never pasted into
        # the script.
        script = ('while [ $# -gt 1 ]; do mount --bind "$1" "$2" || exit 1; shift 2; done; '
                  'exec "$1" --no-debug')
        pairs = [self.actions, ACTIONS_DIR, self.etc_rules, ETC_RULES_DIR, self.usr_rules,
                 USR_RULES_DIR]
        empty = os.path.join(self.base, "empty")
        os.makedirs(empty, exist_ok=True)
        os.chmod(empty, 0o755)
        for d in EXTRA_DIRS:
            if os.path.isdir(d):
                pairs += [empty, d]
        argv = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh"]
        argv += pairs + [POLKITD]
        # G_DEBUG=fatal-criticals is for our code: polkitd 126 logs a GLib
        # critical for each of EXTRA_DIRS that does not exist, and under it
        # would abort at its first check (every answer then a NoReply).
        env = {k: v for k, v in env.items() if k != "G_DEBUG"}
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
        conn = connect(address)
        try:
            wait_for_name(conn, self.proc, self.log)
        finally:
            conn.close_sync(None)
        return self.proc


class MockPolkit:
    """python-dbusmock's polkitd template: answers after a delay we set,
    allowing what we say."""

    def __init__(self, tmp):
        self.log = os.path.join(tmp, "polkit-mock.log")
        self.proc = None
        self.conn = None

    def start(self, env, address):
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system",
                                          "--template", "polkitd"],
                                         env=env, stdout=log, stderr=subprocess.STDOUT)
        self.conn = connect(address)
        wait_for_name(self.conn, self.proc, self.log)
        return self.proc

    def _call(self, method, signature, *args):
        self.conn.call_sync(NAME, AUTHORITY_PATH, MOCK_IFACE, method,
                            GLib.Variant(signature, args) if signature else None, None,
                            Gio.DBusCallFlags.NONE, -1, None)

    def set_delay(self, seconds):
        self._call("SetDelay", "(d)", float(seconds))

    def allow_unknown(self, allow):
        self._call("AllowUnknown", "(b)", allow)

    def set_allowed(self, actions):
        self._call("SetAllowed", "(as)", list(actions))

    def simulate_hang(self, hang):
        """Hold every CheckAuthorization until release_hanging()."""
        self._call("SimulateHang", "(b)", hang)

    def release_hanging(self):
        self._call("ReleaseHangingCalls", None)

    def close(self):
        if self.conn is not None:
            self.conn.close_sync(None)
            self.conn = None
