#!/usr/bin/python3
"""The GNOME Shell extension (client/gnome-shell) in a real gnome-shell.

Run by tests/trixie/inside in the Debian 13 root, where GNOME Shell 48 is
installed beside the gnome-shell-extension-laptop-mode package just built.
Each case starts, as tests/integration/lmtest.py does for every integration
test, a private system bus with the project's policy, the real polkitd and
the real laptop-moded on a fake root; then a session bus and a headless
gnome-shell (Wayland, one virtual monitor, --unsafe-mode so that the test
may use org.gnome.Shell.Eval and Screenshot) running as an unprivileged
user, with the extension enabled in its settings. The shell is looked at
and driven only through Eval and Screenshot.

Prints TAP (one line per case) with --tap; otherwise unittest's output.
LM_GNOME_EXTENSION_DATADIR puts a data directory holding
gnome-shell/extensions/laptop-mode@laptopmode.org (meson install --destdir)
before the installed ones; LM_GNOME_SCREENSHOT copies the screenshot of the
open menu there (docs/gnome-quick-settings.png is one).
"""

import json
import os
import re
import pwd
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

import lmpolkit  # noqa: E402
import lmtest  # noqa: E402
from lmpolkit import Gio, GLib  # noqa: E402
from test_spinup_dbus import MONITOR_RULE, SpinUpBusTest  # noqa: E402
# A session bus anyone may connect to: the shell's user owns it, the test
# (root) calls Eval on it, as test_tray's tray host does.
from test_tray import SESSION_CONFIG  # noqa: E402

UUID = "laptop-mode@laptopmode.org"
SYSTEM_EXTENSION = "/usr/share/gnome-shell/extensions/" + UUID
SHELL_USER = "nobody"
SHELL_NAME = "org.gnome.Shell"
# ExtensionState.ACTIVE in GNOME 48 (ENABLED, the same 1, in 45 to 47).
ACTIVE = 1


# Clutter's warning about a child given a size it cannot take.
ALLOCATE = re.compile(r"tried to allocate a size of (\S+ x \S+)$")

# Evaluated in the shell: the Quick Settings grid's "Laptop Mode" toggle
# and the indicator that holds it (the extension's own objects, found the
# way a user finds them: by the title in the grid).
FIND = """
const qs = Main.panel.statusArea.quickSettings;
const grid = qs.menu._grid;
const toggle = grid.get_children().find(c => c.title === 'Laptop Mode');
const indicator = toggle && qs._indicators.get_children()
    .find(i => i.quickSettingsItems?.includes(toggle));
"""

TOGGLE_STATE = FIND + """
if (!toggle)
    return {found: false};
return {
    found: true, title: toggle.title, subtitle: toggle.subtitle, checked: toggle.checked,
    reactive: toggle.reactive, visible: toggle.visible, mapped: toggle.mapped,
    topBarIcon: !!indicator && indicator.visible && indicator._icon.visible,
    box: toggle.mapped ? [...toggle.get_transformed_position(), ...toggle.get_transformed_size()] : null,
};
"""


def read_png(path):
    """(width, height, channels, rowstride, pixels) of a PNG, by GdkPixbuf
    (gnome-shell's own dependency)."""
    import gi
    gi.require_version("GdkPixbuf", "2.0")
    from gi.repository import GdkPixbuf
    pb = GdkPixbuf.Pixbuf.new_from_file(path)
    return (pb.get_width(), pb.get_height(), pb.get_n_channels(), pb.get_rowstride(),
            pb.get_pixels())


def region(png, box):
    """The RGB bytes of @box (x, y, w, h), row by row."""
    width, height, bpp, stride, pixels = png
    x, y, w, h = (int(round(v)) for v in box)
    x0, x1 = max(0, x), min(width, x + w)
    out = bytearray()
    for row in range(max(0, y), min(height, y + h)):
        line = pixels[row * stride + x0 * bpp:row * stride + x1 * bpp]
        for ch in range(3):
            out += line[ch::bpp]
    return bytes(out)


class ShellCase(lmtest.DaemonTestCase):
    """A daemon on its private system bus, and a gnome-shell beside it."""

    def setUp(self):
        if shutil.which("gnome-shell") is None:
            self.skipTest("gnome-shell is not installed (tests/trixie/inside installs it)")
        super().setUp()
        self.start_daemon()
        self.user = pwd.getpwnam(SHELL_USER)
        self.home = os.path.join(self.tmp, "shell")
        for d in ("", "run", "config/glib-2.0/settings", "cache", "data"):
            path = os.path.join(self.home, d)
            os.makedirs(path, exist_ok=True)
            os.chmod(path, 0o700)
        with open(os.path.join(self.home, "config/glib-2.0/settings/keyfile"), "w") as f:
            f.write("[org/gnome/shell]\nenabled-extensions=['%s']\n"
                    "welcome-dialog-last-shown-version='999'\n" % UUID)
        for top, dirs, files in os.walk(self.home):
            for name in dirs + files + [""]:
                os.chown(os.path.join(top, name), self.user.pw_uid, self.user.pw_gid)
        self.start_session_bus()
        self.start_shell()

    # --- the session ------------------------------------------------------

    def as_user(self):
        return ["setpriv", "--reuid=%d" % self.user.pw_uid, "--regid=%d" % self.user.pw_gid,
                "--clear-groups", "--"]

    def start_session_bus(self):
        socket = os.path.join(self.home, "run", "bus")
        conf = os.path.join(self.tmp, "session.conf")
        with open(conf, "w") as f:
            f.write(SESSION_CONFIG.format(socket=socket))
        os.chmod(conf, 0o644)
        r, w = os.pipe()
        with open(os.path.join(self.tmp, "session-bus.log"), "w") as log:
            p = subprocess.Popen(self.as_user() + ["dbus-daemon", "--config-file=" + conf, "--nofork",
                                                   "--print-address=%d" % w],
                                 pass_fds=(w,), stderr=log)
        os.close(w)
        self.procs.append(p)
        with os.fdopen(r) as f:
            self.session_address = f.readline().strip()
        self.assertTrue(self.session_address.startswith("unix:"), "the session bus did not start")
        self.session = Gio.DBusConnection.new_for_address_sync(
            self.session_address,
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
            None, None)
        self.addCleanup(self.session.close_sync, None)

    def start_shell(self):
        data_dirs = "/usr/local/share:/usr/share"
        if os.environ.get("LM_GNOME_EXTENSION_DATADIR"):
            data_dirs = os.environ["LM_GNOME_EXTENSION_DATADIR"] + ":" + data_dirs
        env = {
            "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": self.home,
            "XDG_RUNTIME_DIR": os.path.join(self.home, "run"),
            "XDG_CONFIG_HOME": os.path.join(self.home, "config"),
            "XDG_CACHE_HOME": os.path.join(self.home, "cache"),
            "XDG_DATA_HOME": os.path.join(self.home, "data"),
            "XDG_DATA_DIRS": data_dirs,
            "GSETTINGS_BACKEND": "keyfile",
            "GNOME_SHELL_SESSION_MODE": "user",
            "DBUS_SESSION_BUS_ADDRESS": self.session_address,
            "DBUS_SYSTEM_BUS_ADDRESS": self.bus_address,
        }
        self.shell_log = os.path.join(self.tmp, "gnome-shell.log")
        with open(self.shell_log, "w") as log:
            self.shell = subprocess.Popen(
                self.as_user() + ["gnome-shell", "--headless", "--wayland", "--no-x11",
                                  "--virtual-monitor", "1280x800", "--wayland-display",
                                  "lm-test-display", "--unsafe-mode"],
                env=env, stdout=log, stderr=subprocess.STDOUT, cwd=self.home)
        self.procs.append(self.shell)
        self.addCleanup(self.print_shell_log_on_failure)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.shell.poll() is not None:
                self.fail("gnome-shell exited with %d:\n%s" % (self.shell.returncode, self.shell_output()))
            try:
                # Up: its start-up animation over (the overview shown).
                if self.eval("return !Main.layoutManager._startingUp;") is True:
                    break
            except GLib.Error:
                pass
            time.sleep(0.2)
        else:
            self.fail("gnome-shell did not start in 90 s:\n" + self.shell_output())
        self.wait_for(lambda: self.extension()["state"] == ACTIVE, "the extension is active",
                      timeout=20, what=self.extension)

    def print_shell_log_on_failure(self):
        outcome = getattr(self, "_outcome", None)
        if outcome is not None and not getattr(outcome, "success", True):
            sys.stderr.write("--- gnome-shell's output ---\n" + self.shell_output()[-6000:] + "\n")

    def shell_output(self):
        with open(self.shell_log, errors="replace") as f:
            return f.read()

    # --- looking at the shell ---------------------------------------------

    def eval(self, body):
        """Runs @body (a function body; may await) in the shell; its return
        value, through JSON."""
        script = "(async () => {\n%s\n})()" % body
        r = self.session.call_sync(SHELL_NAME, "/org/gnome/Shell", "org.gnome.Shell", "Eval",
                                   GLib.Variant("(s)", (script,)), GLib.VariantType("(bs)"),
                                   Gio.DBusCallFlags.NONE, 20000, None)
        ok, text = r.unpack()
        if not ok:
            raise AssertionError("Eval failed: %s" % text)
        return json.loads(text) if text else None

    def extension(self):
        return self.eval("""
const e = Main.extensionManager.lookup('%s');
return e ? {state: e.state, error: e.error ?? '', path: e.path} : {state: null};
""" % UUID)

    def toggle(self):
        return self.eval(TOGGLE_STATE)

    def open_menu(self):
        self.eval("""
Main.panel.statusArea.quickSettings.menu.open(false);
await new Promise(r => setTimeout(r, 700));
""")

    def click(self):
        """What a click on the toggle's left half does: St.Button's
        'clicked', on the button inside the menu toggle."""
        self.eval(FIND + "toggle._box.get_first_child().emit('clicked', 1);")

    def wait_for(self, predicate, message, timeout=10, what=None):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        self.fail("%s: not after %g s (%r)" % (message, timeout, what() if what else None))

    def active(self):
        return self.properties()["Active"]

    def screenshot(self, name):
        path = os.path.join(self.home, "run", name)
        r = self.session.call_sync(SHELL_NAME, "/org/gnome/Shell/Screenshot", "org.gnome.Shell.Screenshot",
                                   "Screenshot", GLib.Variant("(bbs)", (False, False, path)),
                                   GLib.VariantType("(bs)"), Gio.DBusCallFlags.NONE, 20000, None)
        ok, used = r.unpack()
        self.assertTrue(ok, "the shell's Screenshot failed")
        return used

    def extension_lines(self):
        """The shell's output that names the extension: none when nothing
        is wrong. Not counted: Clutter's complaint about the size the Quick
        Settings grid gave its toggles before the virtual monitor had one,
        when the shell's own toggles (status/*.js) got the same size."""
        out = self.shell_output().splitlines()
        shells_own = set()
        for line in out:
            m = ALLOCATE.search(line)
            if m and "Gjs_status_" in line:
                shells_own.add(m.group(1))
        lines = []
        for line in out:
            if UUID in line or "laptop-mode" in line.lower() or "LaptopMode" in line:
                m = ALLOCATE.search(line)
                if not (m and m.group(1) in shells_own):
                    lines.append(line)
        return lines



class GnomeShellTest(ShellCase):
    # The shell's user may switch laptop mode (the README's rule): the
    # toggle's Start and Stop go through the real polkitd.
    polkit_rules = {"50-switch.rules": lmpolkit.switch_only_rule(SHELL_USER)}

    def test_extension_loads_and_the_toggle_is_in_quick_settings(self):
        """the extension loads from its package with no error; the toggle
        "Laptop Mode / Off" is in Quick Settings, mapped and visible; the
        shell's log has no line from the extension"""
        ext = self.extension()
        self.assertEqual(ext["state"], ACTIVE, ext)
        self.assertEqual(ext["error"], "", ext)
        if not os.environ.get("LM_GNOME_EXTENSION_DATADIR"):
            self.assertEqual(ext["path"], SYSTEM_EXTENSION)
        self.open_menu()
        t = self.toggle()
        self.assertTrue(t["found"], "no 'Laptop Mode' toggle in the Quick Settings grid")
        self.assertEqual((t["subtitle"], t["checked"], t["reactive"]), ("Off", False, True), t)
        self.assertTrue(t["visible"] and t["mapped"], t)
        self.assertFalse(t["topBarIcon"], "the top-bar icon shows while laptop mode is off")
        self.assertEqual(self.extension_lines(), [])

    def test_the_toggle_starts_and_stops_laptop_mode(self):
        """a click on the toggle makes the daemon's Active true (Start, through
        polkit, as the shell's user); the toggle turns on, its subtitle "On",
        the top-bar icon appears; a second click stops it"""
        self.open_menu()
        self.click()
        self.wait_for(self.active, "Active after a click on the toggle", what=self.daemon_log)
        self.wait_for(lambda: self.toggle()["checked"], "the toggle on", timeout=2, what=self.toggle)
        t = self.toggle()
        self.assertEqual((t["subtitle"], t["topBarIcon"]), ("On", True), t)
        self.click()
        self.wait_for(lambda: not self.active(), "Active false after a second click")
        self.wait_for(lambda: self.toggle()["subtitle"] == "Off", "the subtitle Off", timeout=2,
                      what=self.toggle)
        self.assertFalse(self.toggle()["topBarIcon"])
        self.assertEqual(self.extension_lines(), [])

    def test_a_configure_from_outside_changes_the_subtitle_within_a_second(self):
        """Configure(Mode=on) and then (Mode=off) by root with gdbus: the
        toggle's subtitle follows within 1 s of the call (from gdbus's start
        to the shell's notify::subtitle, on the one monotonic clock)"""
        for mode, word in (("on", "On"), ("off", "Off")):
            # The shell waits for the subtitle in the background and notes
            # when it changed (GLib's monotonic clock is CLOCK_MONOTONIC).
            self.eval(FIND + """
globalThis.lmSeen = null;
const id = toggle.connect('notify::subtitle', () => {
    if (toggle.subtitle === '%s') {
        globalThis.lmSeen = imports.gi.GLib.get_monotonic_time();
        toggle.disconnect(id);
    }
});
""" % word)
            sent = time.monotonic()
            self.gdbus_call("Configure", "{'Mode': <'%s'>}" % mode, check=True)
            self.wait_for(lambda: self.eval("return globalThis.lmSeen;") is not None,
                          "the subtitle %s" % word, timeout=5, what=self.toggle)
            seen = self.eval("return globalThis.lmSeen;") / 1e6
            print("# Configure Mode=%s: subtitle %r %.0f ms after gdbus started" % (mode, word, (seen - sent) * 1000))
            self.assertLess(seen - sent, 1.0)
            self.assertEqual(self.active(), mode == "on")

    def test_the_daemon_gone_says_unavailable_and_back_when_it_returns(self):
        """SIGTERM to the daemon: the toggle says "Unavailable" and cannot be
        clicked; the daemon started again: "Off" and clickable, in the same
        shell"""
        shell_pid = self.shell.pid
        self.stop_daemon()
        self.wait_for(lambda: self.toggle()["subtitle"] == "Unavailable", "Unavailable", what=self.toggle)
        self.assertFalse(self.toggle()["reactive"])
        self.start_daemon()
        self.wait_for(lambda: self.toggle()["subtitle"] == "Off", "back after the restart", what=self.toggle)
        self.assertTrue(self.toggle()["reactive"])
        self.assertEqual(self.shell.pid, shell_pid)
        self.assertIsNone(self.shell.poll())
        self.assertEqual(self.extension_lines(), [])

    def test_the_screenshot_shows_the_toggle(self):
        """the shell's screenshot with the menu open is not blank, and where
        the toggle is it differs from one with the extension disabled"""
        self.gdbus_call("Configure", "{'Mode': <'on'>}", check=True)
        self.wait_for(lambda: self.toggle()["subtitle"] == "On", "the subtitle On", what=self.toggle)
        # The desktop as after a login: the overview closed, and no banner
        # (the shell's own "Screen Lock disabled", for want of GDM) over it.
        self.eval("""
Main.messageTray.bannerBlocked = true;
Main.messageTray.getSources().forEach(s => s.destroy());
Main.overview.hide();
await new Promise(r => setTimeout(r, 1000));
""")
        self.open_menu()
        box = self.toggle()["box"]
        self.assertIsNotNone(box, "the toggle is not mapped")
        with_ext = read_png(self.screenshot("with.png"))
        width, height, bpp, stride, pixels = with_ext
        colours = {pixels[y * stride + x * bpp:y * stride + x * bpp + 3]
                   for y in range(0, height, 7) for x in range(0, width, 7)}
        self.assertGreater(len(colours), 20, "the screenshot is (nearly) one colour")
        if os.environ.get("LM_GNOME_SCREENSHOT"):
            shutil.copy(os.path.join(self.home, "run", "with.png"), os.environ["LM_GNOME_SCREENSHOT"])
        self.eval("Main.panel.statusArea.quickSettings.menu.close(false);"
                  "Main.extensionManager.disableExtension('%s');" % UUID)
        self.wait_for(lambda: not self.eval(FIND + "return !!toggle;"), "the toggle gone")
        self.open_menu()
        without = read_png(self.screenshot("without.png"))
        self.assertEqual(without[:2], with_ext[:2])
        self.assertNotEqual(region(with_ext, box), region(without, box),
                            "the toggle's place looks the same without the extension")


    def test_the_menu_sets_the_mode_and_says_what_is_refused(self):
        """the menu's "On" item sets the daemon's Mode (SetMode, the switch
        right the shell's user has): Active, and the item checked; a
        MaxLostWork preset (Configure, a right the README's rule withholds)
        changes nothing and says "Not allowed to …" in a notification"""
        self.open_menu()
        items = FIND + """
const labels = toggle.menu._getMenuItems().filter(i => i.label).map(i => i.label.text);
return labels;
"""
        labels = self.eval(items)
        for label in ("Automatic (on while on battery)", "On", "Off"):
            self.assertIn(label, labels)
        self.eval(FIND + """
toggle.menu.open(false);
toggle.menu._getMenuItems().find(i => i.label?.text === 'On').activate(imports.gi.Clutter.get_current_event());
""")
        self.wait_for(lambda: self.properties()["Mode"] == "on", "Mode on from the menu",
                      what=self.properties)
        self.assertTrue(self.active())
        # Ornament.NONE is 0; the checked item has another ornament.
        self.wait_for(lambda: self.eval(FIND + """
const item = label => toggle.menu._getMenuItems().find(i => i.label?.text === label);
return item('On')._ornament !== 0 && item('Off')._ornament === 0;"""), "the On item checked")
        before = self.properties()["MaxLostWork"]
        self.eval(FIND + """
const sub = toggle.menu._getMenuItems().find(i => i.menu && i.menu._getMenuItems);
sub.menu._getMenuItems().find(i => i.label.text.startsWith('1 ')).activate(imports.gi.Clutter.get_current_event());
""")
        notes = lambda: self.eval("""
return Main.messageTray.getSources().flatMap(s => s.notifications)
    .map(n => n.title).filter(t => t.startsWith('Not allowed'));
""")
        self.wait_for(lambda: notes(), "a notification", what=notes)
        self.assertEqual(notes(), ["Not allowed to change how much work a crash may lose"])
        self.assertEqual(self.properties()["MaxLostWork"], before)
        self.assertEqual(self.extension_lines(), [])


class GnomeShellRefusedTest(ShellCase):
    """The shell's user with no polkit rule: polkitd says no."""

    polkit_rules = {}

    def test_a_refused_start_leaves_the_toggle_off_and_says_why(self):
        """without the switch right, a click leaves the daemon and the toggle
        off and shows one notification "Not allowed to …" naming the polkit
        action; the shell's log stays quiet (a refusal is not a fault)"""
        self.open_menu()
        self.click()
        # The shell's own "Screen Lock disabled" is there too.
        notes = lambda: self.eval("""
return Main.messageTray.getSources().flatMap(s => s.notifications)
    .map(n => [n.title, n.body]).filter(([t]) => t.startsWith('Not allowed'));
""")
        self.wait_for(lambda: notes(), "a notification", what=notes)
        time.sleep(0.5)
        (title, body), = notes()
        self.assertEqual(title, "Not allowed to switch laptop mode on")
        self.assertIn("org.laptopmode.LaptopMode1.switch", body)
        self.assertFalse(self.active())
        t = self.toggle()
        self.assertEqual((t["checked"], t["subtitle"], t["reactive"]), (False, "Off", True), t)
        self.assertEqual(self.extension_lines(), [])


class GnomeShellWakersTest(ShellCase, SpinUpBusTest):
    """Spin-ups through the daemon's block_dump backend (a fake /dev/kmsg,
    as test_spinup_dbus feeds it) into its ledger; the shell's user may
    monitor (its own processes in full, others' as another user's)."""

    history = "true"
    polkit_rules = {"50-monitor.rules": MONITOR_RULE.replace("@VIEWER@", SHELL_USER)
                    .replace("@ADMINS@", "root")}

    def setUp(self):
        super().setUp()
        uid = pwd.getpwnam(SHELL_USER).pw_uid
        # Whose each process is: the daemon reads /proc/PID/status, and
        # /proc/PID/stat for the task having been there (since boot).
        for pid, owner in ((201, uid), (202, 0)):
            os.makedirs(self.root.file("/proc/%d" % pid), exist_ok=True)
            self.root.write("/proc/%d/status" % pid, "Name:\tx\nUid:\t%d\t%d\t%d\t%d\n" % ((owner,) * 4))
            self.root.write("/proc/%d/stat" % pid, "%d (x) S 1 %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
                            "0 1000 100 18446744073709551615\n" % (pid, pid, pid))

    def test_the_menu_lists_todays_wakers_as_the_monitor_right_allows(self):
        """three spin-ups of sda today, two by the user's own "smartd" and one
        by root's "cat": the menu says "sda: 3 spin-ups today", "Woken by
        smartd ×2, another user's process ×1" and the last one's explanation
        from the table of causes, never "cat" """
        self.wait_for(lambda: self.block_dump() == "1", "monitoring for SpinUpHistory")
        time.sleep(1.5)  # past SpinUpIdle since the daemon started
        self.kmsg((0.0, "smartd(201): READ block 8 on sda1 (8 sectors)"),
                  (2.0, "cat(202): READ block 16 on sda1"),
                  (4.0, "smartd(201): WRITE block 24 on sda1"))
        self.wait_for(lambda: self.properties()["LedgerSummary"].get("sda", {}).get("SpinUpsToday") == 3,
                      "3 spin-ups of sda in LedgerSummary", what=self.daemon_log)
        # The kernel times of the lines must be past for a page of today.
        time.sleep(4.5)
        self.open_menu()
        # Items and the items of sections (the "Today" lines are one).
        lines = lambda: self.eval(FIND + """
const texts = m => m._getMenuItems().flatMap(i => i.label ? [i.label.text]
    : i._getMenuItems ? texts(i) : []);
return texts(toggle.menu);
""")
        # The toggle's own menu (its arrow): opening it reads the wakers.
        self.eval(FIND + "toggle.menu.open(false);")
        self.wait_for(lambda: any(x.startswith("Woken by") for x in lines()), "a 'Woken by' line",
                      what=lines)
        got = lines()
        self.assertTrue(any(x.startswith("sda: 3 spin-ups today, asleep ") for x in got), got)
        self.assertIn("Woken by smartd ×2, another user's process ×1", got)
        self.assertIn("Last: smartd checking the disk's health now and then.", got)
        self.assertFalse([x for x in got if "cat" in x], got)
        self.assertEqual(self.extension_lines(), [])


class TapResult(unittest.TextTestResult):
    """One TAP line per case, named by its docstring's first line."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.n = 0

    def _line(self, test, status, extra=""):
        self.n += 1
        doc = " ".join((test._testMethodDoc or test._testMethodName).split())
        sys.stdout.write("%s %d - gnome-shell: %s%s\n" % (status, self.n, doc, extra))
        sys.stdout.flush()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(test, "ok")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(test, "not ok")

    def addError(self, test, err):
        super().addError(test, err)
        self._line(test, "not ok")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(test, "ok", " # SKIP " + reason)


if __name__ == "__main__":
    if "--tap" in sys.argv:
        sys.argv.remove("--tap")
        runner = unittest.TextTestRunner(stream=sys.stderr, resultclass=TapResult, verbosity=0)
        prog = unittest.main(testRunner=runner, exit=False)
        sys.exit(0 if prog.result.wasSuccessful() else 1)
    unittest.main()
