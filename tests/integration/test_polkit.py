#!/usr/bin/python3
"""test_polkit: who may do what, decided by a real polkitd.
Owns the authorization tests: test users and a group are created here and
removed even on failure; it must never change the machine's polkit setup.

polkitd runs in its own mount namespace seeing only the project's actions
and the rules written by each test (see lmpolkit). Clients run as real
users through setpriv, the way a person or a script would call.
"""

import os
import pwd
import re
import subprocess
import time
import unittest
import uuid

import lmpolkit
import lmtest
from lmtest import DaemonTestCase

ACTIONS = {
    # action: (allow_any, allow_inactive, allow_active), as polkitd reads them
    "org.laptopmode.LaptopMode1.switch": ("auth_admin_keep", "auth_admin_keep", "yes"),
    "org.laptopmode.LaptopMode1.configure": ("auth_admin_keep", "auth_admin_keep", "auth_admin_keep"),
    "org.laptopmode.LaptopMode1.monitor": ("auth_admin", "auth_admin", "yes"),
    "org.laptopmode.LaptopMode1.inhibit": ("yes", "yes", "yes"),
}

# Every method that changes something, with the laptop-modectl command that
# calls it, its action, and how to see that it took effect.
METHODS = {
    "Start": (["start"], "switch"),
    "Stop": (["stop"], "switch"),
    "SetMode": (["mode", "on"], "switch"),
    "Sync": (["sync"], "switch"),
    "Configure": (["set", "MaxLostWork=300"], "configure"),
}

USERS = {}  # role -> user name, filled by setUpModule
GROUP = None


def run(argv):
    subprocess.run(argv, check=True, capture_output=True, timeout=60)


def setUpModule():
    global GROUP
    why = lmpolkit.available()
    if why is not None:
        raise unittest.SkipTest(why)
    # Unique names, so that a test run never meets a real account, and a
    # leftover from a killed run never meets this one.
    tag = uuid.uuid4().hex[:8]
    GROUP = "lmtg" + tag
    run(["groupadd", GROUP])
    unittest.addModuleCleanup(subprocess.run, ["groupdel", GROUP], capture_output=True)
    for role, groups in (("plain", []), ("member", [GROUP]), ("switcher", [])):
        name = "lmt%s%s" % (role[:2], tag)
        argv = ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--no-user-group",
                "--gid", "nogroup"]
        if groups:
            argv += ["--groups", ",".join(groups)]
        run(argv + [name])
        # Registered after groupdel, so it runs before it: the group must
        # lose its members first.
        unittest.addModuleCleanup(subprocess.run, ["userdel", name], capture_output=True)
        USERS[role] = name


class PolkitTestCase(DaemonTestCase):
    """The daemon with a real polkitd that knows the project's group rule
    (for GROUP) and the README's switch-but-not-configure rule."""

    def setUp(self):
        self.polkit_rules = {
            "50-laptopmode.rules": lmpolkit.group_rule(GROUP),
            "60-switcher.rules": lmpolkit.switch_only_rule(USERS["switcher"]),
        }
        self.polkit_rules.update(self.extra_rules())
        super().setUp()
        self.start_daemon()

    def extra_rules(self):
        return {}

    def snapshot(self):
        config = None
        if os.path.exists(self.config):
            with open(self.config) as f:
                config = f.read()
        return (self.status(), self.root.vm(), config)

    def assert_denied(self, r, action):
        self.assertNotEqual(r.returncode, 0, r)
        lines = r.err.strip().splitlines()
        self.assertEqual(len(lines), 1, "a denial is one line: %r" % r.err)
        self.assertIn("org.laptopmode.LaptopMode1." + action, lines[0])
        self.assertIn("group “%s”" % "laptopmode", lines[0])


class PolicyFileTest(PolkitTestCase):
    def test_polkitd_reads_the_actions(self):
        for action, (any_, inactive, active) in ACTIONS.items():
            r = self.run_as(["pkaction", "--verbose", "--action-id", action], check=True)
            self.assertRegex(r.out, r"implicit any:\s+%s\n" % any_, action)
            self.assertRegex(r.out, r"implicit inactive:\s+%s\n" % inactive, action)
            self.assertRegex(r.out, r"implicit active:\s+%s\n" % active, action)


class MatrixTest(PolkitTestCase):
    """Every method, as each kind of user."""

    def prepare(self, method):
        # Stop and Sync must have something to refuse or do: laptop mode on.
        if method in ("Stop", "Sync"):
            self.ctl_run("start", check=True)
        else:
            self.ctl_run("stop", check=True)

    def assert_effect(self, method):
        st = self.status()
        if method in ("Start", "SetMode"):
            self.assertEqual((st["Active"], st["Mode"]), (True, "on"))
        elif method == "Stop":
            self.assertEqual((st["Active"], st["Mode"]), (False, "off"))
        elif method == "Configure":
            self.assertEqual(st["MaxLostWork"], 300)
            with open(self.config) as f:
                self.assertRegex(f.read(), r"(?m)^MaxLostWork=300$")

    def check(self, user, allowed_actions):
        for method, (args, action) in METHODS.items():
            with self.subTest(user=user, method=method):
                self.prepare(method)
                before = self.snapshot()
                r = self.ctl_run(*args, user=user)
                if action in allowed_actions:
                    self.assertEqual(r.returncode, 0, r)
                    self.assert_effect(method)
                else:
                    self.assert_denied(r, action)
                    self.assertEqual(self.snapshot(), before, "a denied %s changed something" % method)
                # Configure persists; start each method from the defaults.
                if os.path.exists(self.config):
                    os.unlink(self.config)

    def test_root_allowed(self):
        self.check("root", {"switch", "configure"})

    def test_user_without_rule_denied(self):
        self.check(USERS["plain"], set())

    def test_group_member_allowed(self):
        self.check(USERS["member"], {"switch", "configure"})

    def test_switch_but_not_configure(self):
        self.check(USERS["switcher"], {"switch"})

    def test_denial_error_name(self):
        # Scripts see the standard error name, with the action in the text.
        r = self.gdbus_call("SetMode", "on", user=USERS["plain"])
        self.assertIn("org.freedesktop.DBus.Error.AccessDenied", r.err)
        self.assertIn("org.laptopmode.LaptopMode1.switch", r.err)
        r = self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Configure",
                        "a{sv}", "1", "MaxLostWork", "u", "300", user=USERS["switcher"])
        self.assertNotEqual(r.returncode, 0)
        self.assertFalse(os.path.exists(self.config))

    def test_invalid_arguments_before_authorization(self):
        # A bad argument is the same error for everyone: no polkit question
        # is asked, so a denied user learns nothing else and waits for nothing.
        for user in ("root", USERS["plain"]):
            r = self.gdbus_call("SetMode", "sideways", user=user)
            self.assertIn("org.laptopmode.LaptopMode1.Error.InvalidArgs", r.err)
            r = self.ctl_run("set", "DirtyRatio=500", user=user)
            self.assertIn("DirtyRatio", r.err)
            self.assertNotIn("polkit", r.err)


class DetailsTest(PolkitTestCase):
    """Rules can decide on the details the daemon passes."""

    def extra_rules(self):
        plain = USERS["plain"]
        return {"70-details.rules": """polkit.addRule(function (action, subject) {
    if (subject.user != "%s")
        return polkit.Result.NOT_HANDLED;
    // May turn laptop mode off, never on.
    if (action.id == "org.laptopmode.LaptopMode1.switch" && action.lookup("mode") == "off")
        return polkit.Result.YES;
    // May change how much work a crash may lose, and only to 10 minutes or less.
    if (action.id == "org.laptopmode.LaptopMode1.configure" &&
        action.lookup("keys") == "MaxLostWork" && parseInt(action.lookup("MaxLostWork")) <= 600)
        return polkit.Result.YES;
    return polkit.Result.NOT_HANDLED;
});
""" % plain}

    def test_mode_detail(self):
        user = USERS["plain"]
        self.assert_denied(self.ctl_run("start", user=user), "switch")
        self.assert_denied(self.ctl_run("mode", "on", user=user), "switch")
        self.ctl_run("start", check=True)
        self.ctl_run("mode", "off", user=user, check=True)
        self.assertEqual(self.status()["Active"], False)
        self.ctl_run("start", check=True)
        self.ctl_run("stop", user=user, check=True)
        self.assertEqual(self.status()["Active"], False)

    def test_configure_keys_and_values(self):
        user = USERS["plain"]
        self.ctl_run("set", "MaxLostWork=300", user=user, check=True)
        self.assertEqual(self.status()["MaxLostWork"], 300)
        self.assert_denied(self.ctl_run("set", "MaxLostWork=900", user=user), "configure")
        self.assert_denied(self.ctl_run("set", "MaxLostWork=60", "DirtyRatio=40", user=user),
                           "configure")
        self.assertEqual(self.status()["MaxLostWork"], 300)


class InteractiveTest(PolkitTestCase):
    """The caller's ALLOW_INTERACTIVE_AUTHORIZATION reaches polkitd."""

    def check_flags(self):
        mon, lines = self.dbus_monitor(
            "type='method_call',interface='org.freedesktop.PolicyKit1.Authority',"
            "member='CheckAuthorization'")
        user = USERS["plain"]
        for flag in ("yes", "no"):
            r = self.busctl("--allow-interactive-authorization=" + flag, "call", lmtest.BUS_NAME,
                            lmtest.OBJECT_PATH, lmtest.IFACE, "SetMode", "s", "on", user=user)
            self.assertNotEqual(r.returncode, 0)
        # Both questions were answered, so both were seen: read until the
        # second one's flags have been printed.
        out = ""
        pattern = r'"org\.laptopmode\.LaptopMode1\.switch"\s+array \[.*?\]\s+uint32 (\d+)'
        while len(re.findall(pattern, out, re.S)) < 2:
            line = lines.get(15)
            self.assertIsNotNone(line, "dbus-monitor showed fewer than two CheckAuthorization: %s" % out)
            out += line
        return re.findall(pattern, out, re.S)

    def test_flag_passed_to_polkit(self):
        # polkit's ALLOW_USER_INTERACTION is 1.
        self.assertEqual(self.check_flags(), ["1", "0"])

    def test_no_agent_message(self):
        # No agent runs in the test: the refusal says so rather than
        # blaming a missing flag.
        r = self.busctl("--allow-interactive-authorization=yes", "call", lmtest.BUS_NAME,
                        lmtest.OBJECT_PATH, lmtest.IFACE, "Start", user=USERS["plain"])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no polkit authentication agent", self.daemon_log())


class BusPolicyForUsersTest(PolkitTestCase):
    """The bus lets everyone call and read; the daemon decides."""

    def test_user_reads_and_calls(self):
        user = USERS["plain"]
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Active",
                        user=user, check=True)
        self.assertEqual(r.out.strip(), "b false")
        r = self.run_as(["gdbus", "introspect", "--system", "--dest", lmtest.BUS_NAME,
                         "--object-path", lmtest.OBJECT_PATH], user=user, check=True)
        self.assertIn("Configure", r.out)
        # The call reaches the daemon (its answer names the polkit action),
        # it is not stopped by the bus.
        r = self.gdbus_call("Start", user=user)
        self.assertIn("polkit action org.laptopmode.LaptopMode1.switch", r.err)

    def test_user_cannot_own_name(self):
        code = ("from gi.repository import Gio, GLib\n"
                "c = Gio.bus_get_sync(Gio.BusType.SYSTEM)\n"
                "try:\n"
                "  c.call_sync('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',"
                " 'RequestName', GLib.Variant('(su)', ('%s', 2)), None, 0, -1)\n"
                "  print('OWNED')\n"
                "except GLib.Error as e:\n"
                "  print(e.message)\n" % lmtest.BUS_NAME)
        for user in (USERS["plain"], USERS["member"]):
            r = self.run_as(["/usr/bin/python3", "-c", code], user=user)
            self.assertNotIn("OWNED", r.out)
            self.assertIn("AccessDenied", r.out + r.err)


class SlowPolkitTest(DaemonTestCase):
    """A slow polkit holds up only the call that waits for it."""

    polkit = "mock"
    # Long enough that a busy machine's slow busctl start still returns
    # well inside it: what is checked is the order, not a speed.
    DELAY = 6

    def test_property_read_while_check_pending(self):
        self.start_daemon()
        self.polkit_mock.allow_unknown(True)
        self.polkit_mock.set_delay(self.DELAY)
        mon, lines = self.dbus_monitor("type='method_call',member='CheckAuthorization'")
        started = time.monotonic()
        # Not as root: root's calls never wait for polkit.
        pw = pwd.getpwnam(USERS["plain"])
        slow = subprocess.Popen(["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
                                 "--clear-groups", "--", "busctl", "--system", "call",
                                 lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Start"],
                                env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(slow)
        self.assertIsNotNone(lines.until(lambda x: "member=CheckAuthorization" in x, 15),
                             "the daemon never asked polkit")
        self.assertIsNone(slow.poll(), "Start returned before polkit answered")
        t = time.monotonic()
        r = self.busctl("get-property", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Mode",
                        user=USERS["plain"], check=True)
        read_time = time.monotonic() - t
        self.assertLess(read_time, self.DELAY, "a property read waited for polkit")
        self.assertRegex(r.out, r'^s "\w+"')
        self.assertIsNone(slow.poll(), "the read should have come back while Start waited")
        out, err = slow.communicate(timeout=30)
        self.assertEqual(slow.returncode, 0, err)
        self.assertGreaterEqual(time.monotonic() - started, self.DELAY)
        self.assertEqual(self.status()["Active"], True)

    def test_denied_by_polkit_mock(self):
        # Deny by default: the mock allows nothing unless told.
        self.start_daemon()
        r = self.ctl_run("start", user=USERS["plain"])
        self.assertIn("org.laptopmode.LaptopMode1.switch", r.err)
        self.assertEqual(self.status()["Active"], False)


class NoPolkitTest(DaemonTestCase):
    """Without polkitd every method is refused at once, with the reason."""

    polkit = None

    def test_refused_quickly(self):
        self.start_daemon()
        t = time.monotonic()
        r = self.ctl_run("start", user=USERS["plain"])
        self.assertLess(time.monotonic() - t, 5)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is polkitd running?", r.err)
        self.assertEqual(len(r.err.strip().splitlines()), 1, r.err)
        self.assertEqual(self.status()["Active"], False)

    def test_root_needs_no_polkit(self):
        # uid 0 is allowed by the daemon itself, as systemd's services do:
        # no polkitd on the bus, and root still switches and configures.
        self.start_daemon()
        self.ctl_run("start", check=True)
        self.assertEqual(self.status()["Active"], True)
        self.ctl_run("set", "MaxLostWork=300", check=True)
        self.assertEqual(self.status()["MaxLostWork"], 300)
        self.ctl_run("stop", check=True)
        self.assertEqual(self.status()["Active"], False)
        self.assertNotIn("Cannot authorize", self.daemon_log())


if __name__ == "__main__":
    lmtest.main()
