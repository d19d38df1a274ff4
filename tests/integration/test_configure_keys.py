#!/usr/bin/python3
"""Tier 2: every Configure key, through laptop-modectl set and through
busctl, against the real daemon on a private bus with a real polkitd.

The keys come from the daemon's own table (the *_KEY ("Name", ...) rows of
service/settings/lm-settings.c, and DiskSettings), so a key added there without a
way to set it from the command line fails here. For each key: the good path
by both clients, with the property of the same name changing; a wrong type,
and an out-of-range value where the key has a range or a list of choices,
each refused with the exact error name and nothing changed; an unprivileged
caller refused, nothing changed.
"""

import os
import re
import unittest

import lmtest
from lmtest import DaemonTestCase, is_root

INVALID_ARGS = "org.laptopmode.LaptopMode1.Error.InvalidArgs"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
SETTINGS_C = os.path.join(lmtest.SRCDIR, "service", "settings", "lm-settings.c")


def settings_table():
    """[(name, kind, params)] from lm-settings.c: kind is UINT, STR, BOOL or
    STRV; params is (min, max) for UINT, the list of choices (or None) for
    STR and STRV."""
    with open(SETTINGS_C) as f:
        text = f.read()
    choices = {}
    for m in re.finditer(r"static const char \*const (\w+)\[\]\s*=\s*\{([^}]*)\}", text):
        choices[m.group(1)] = re.findall(r'"([^"]*)"', m.group(2))
    keys = []
    for m in re.finditer(r'^\s*(UINT|STR|BOOL|STRV)_KEY \("(\w+)",\s*\w+(?:,\s*([^)]*))?\)',
                         text, re.M):
        kind, name, rest = m.group(1), m.group(2), (m.group(3) or "").strip()
        if kind == "UINT":
            lo, hi = (int(x) for x in rest.split(","))
            params = (lo, hi)
        elif kind in ("STR", "STRV"):
            # STRV_KEY (name, field, choices, per-entry byte bound)
            first = rest.split(",")[0].strip()
            params = None if first == "NULL" else choices[first]
        else:
            params = None
        keys.append((name, kind, params))
    if '#define DISK_SETTINGS_KEY "DiskSettings"' in text:
        keys.append(("DiskSettings", "DISKS", None))
    return keys


KEYS = settings_table()


# Configured to the second, so that the first is a change.
STR_VALUES = {
    "Mode": ("on", "off"),
    "Engine": ("userspace", "kernel"),
    # block_dump reads the fake root's /dev/kmsg (a FIFO made in setUp).
    "Attribution": ("block_dump", "none"),
    # No list of choices: "keep", "auto", "any" or microseconds (lm-hwpower.c).
    "NvmeLatencyToleranceUs": ("200000", "any"),
}


def gv_string(s):
    return "'%s'" % s.replace("\\", "\\\\").replace("'", "\\'")


class Case:
    """What to send for one key: good values for the CLI and for busctl
    (different, so each must change the property), the refusals, and how
    the property shows the value."""

    def __init__(self, name, kind, params, current):
        self.name, self.kind, self.params = name, kind, params
        if kind == "UINT":
            lo, hi = params
            # Between the bounds and clear of the other keys' rules
            # (DirtyBackgroundRatio below DirtyRatio, 60 by default).
            a = lo + 1 if current != lo + 1 else lo + 2
            b = a + 1
            self.cli = str(a)
            self.busctl = ["u", str(b)]
            self.want_cli, self.want_busctl = a, b
            self.wrong_type = ("s", str(a), "<%s>" % gv_string(str(a)))
            self.out_of_range = [("u", str(hi + 1), "<uint32 %d>" % (hi + 1))]
            if lo > 0:
                self.out_of_range.append(("u", str(lo - 1), "<uint32 %d>" % (lo - 1)))
        elif kind == "BOOL":
            self.want_cli, self.want_busctl = (not current), current
            self.cli = "true" if self.want_cli else "false"
            self.busctl = ["b", "true" if self.want_busctl else "false"]
            # The shape of the old CLI bug: a boolean sent as a string.
            self.wrong_type = ("s", "true", "<'true'>")
            self.out_of_range = []
        elif kind == "STR":
            # Two values the property shows as they are: Engine and
            # Attribution tell what is in use, and "auto" resolves to one.
            a, b = STR_VALUES.get(name) or [c for c in params if c not in ("auto", current)][:2]
            assert params is None or (a in params and b in params), (name, a, b, params)
            self.want_cli, self.want_busctl = a, b
            self.cli = a
            self.busctl = ["s", b]
            self.wrong_type = ("u", "1", "<uint32 1>")
            self.out_of_range = [("s", "sideways", "<'sideways'>")]
        elif kind == "STRV":
            if params is not None:
                a, b = [params[0]], params[1:3]
            else:
                a, b = ["/srv", "/home"], ["/mnt/x y"]
            self.want_cli, self.want_busctl = a, b
            self.cli = ",".join(a)
            self.busctl = ["as", str(len(b))] + b
            self.wrong_type = ("s", a[0], "<%s>" % gv_string(a[0]))
            bad = "xfs" if params is not None else "relative/path"
            self.out_of_range = [("as", "1", bad, "<[%s]>" % gv_string(bad))]
        elif kind == "DISKS":
            self.want_cli = {"sda": {"APM": 128}}
            self.want_busctl = {"sda": {"APM": 200}, "sdb": {"Exclude": True}}
            self.cli = "{'sda': {'APM': <uint32 128>}}"
            self.busctl = ["a{sa{sv}}", "2", "sda", "1", "APM", "u", "200",
                           "sdb", "1", "Exclude", "b", "true"]
            self.wrong_type = ("s", "sda", "<'sda'>")
            self.out_of_range = [("a{sa{sv}}", "1", "sda", "1", "APM", "u", "256",
                                  "<{'sda': {'APM': <uint32 256>}}>"),
                                 ("a{sa{sv}}", "1", "sda", "1", "APM", "u", "0",
                                  "<{'sda': {'APM': <uint32 0>}}>")]


@unittest.skipUnless(is_root(), "needs root: runs clients as nobody with setpriv, and polkitd")
class ConfigureKeysTest(DaemonTestCase):
    # Mode=off so that "Mode" changes apply without a power source.
    config_text = "[LaptopMode]\nMode=off\nEngine=kernel\nAttribution=none\n"

    def setUp(self):
        super().setUp()
        self.root.write("/proc/sys/vm/block_dump", "0\n")
        os.makedirs(self.root.file("/dev"))
        os.mkfifo(self.root.file("/dev/kmsg"), 0o600)
        self.start_daemon()

    def test_table_is_read(self):
        """The parse above finds every row (14 today, and DiskSettings)."""
        names = [k[0] for k in KEYS]
        self.assertGreaterEqual(len(KEYS), 15, names)
        for must in ("MaxLostWork", "Attribution", "SpinUpIdle", "SpinUpHistory", "DiskRecheck",
                     "DiskSettings", "RemountTypes", "NoRemount", "Engine", "Mode"):
            self.assertIn(must, names)

    def config_bytes(self):
        try:
            with open(self.config, "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def snapshot(self):
        return self.status(), self.config_bytes(), self.root.vm()

    def busctl_configure(self, name, entry, user=None):
        return self.busctl("call", lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE,
                           "Configure", "a{sv}", "1", name, *entry, user=user)

    def assert_refused(self, name, entry, gvariant, error, user=None, named=None):
        """Refused by busctl and by gdbus (which shows the error name),
        and nothing changed: properties, config file, sysctls."""
        before = self.snapshot()
        r = self.busctl_configure(name, entry, user=user)
        self.assertNotEqual(r.returncode, 0, r)
        if error == INVALID_ARGS:
            self.assertIn(named or name, r.err)
        self.assertEqual(self.snapshot(), before, "busctl %r changed something" % (entry,))
        g = self.gdbus_call("Configure", "{'%s': %s}" % (name, gvariant), user=user)
        self.assertNotEqual(g.returncode, 0, g)
        self.assertIn("GDBus.Error:%s:" % error, g.err)
        if error == INVALID_ARGS:
            self.assertIn(named or name, g.err)
        self.assertEqual(self.snapshot(), before, "gdbus %s changed something" % gvariant)

    def check_key(self, name, kind, params):
        current = self.status()[name]
        case = Case(name, kind, params, current)

        # The good path, by the CLI.
        r = self.ctl_run("set", "%s=%s" % (name, case.cli))
        self.assertEqual(r.returncode, 0, "set %s=%s: %r\n%s" % (name, case.cli, r, self.daemon_log()))
        self.assertEqual(r.err, "")
        self.wait_until(lambda: self.status()[name] == case.want_cli, 10,
                        "%s to become %r (is %r)" % (name, case.want_cli, self.status()[name]))
        self.assertIn(name.encode() if kind != "DISKS" else b"[Disk sda]", self.config_bytes())

        # And by busctl.
        r = self.busctl_configure(name, case.busctl)
        self.assertEqual(r.returncode, 0, "busctl %r: %r" % (case.busctl, r))
        self.wait_until(lambda: self.status()[name] == case.want_busctl, 10,
                        "%s to become %r by busctl" % (name, case.want_busctl))

        # A wrong type, and each value out of range: InvalidArgs.
        self.assert_refused(name, case.wrong_type[:-1], case.wrong_type[-1], INVALID_ARGS)
        # A disk's values are named by their own key ("APM for disk sda").
        named = "APM for disk sda" if kind == "DISKS" else name
        for bad in case.out_of_range:
            self.assert_refused(name, bad[:-1], bad[-1], INVALID_ARGS, named=named)
        # The CLI refuses a wrong type itself where the type says so
        # (exit 2, one line, nothing sent), or passes the daemon's InvalidArgs.
        before = self.snapshot()
        wrong_cli = {"UINT": "many", "BOOL": "maybe", "DISKS": "{'sda': 3}"}.get(kind)
        if wrong_cli is not None:
            r = self.ctl_run("set", "%s=%s" % (name, wrong_cli))
            self.assertEqual(r.returncode, 2, r)
            self.assertIn(name, r.err)
            self.assertEqual(len(r.err.strip().splitlines()), 1, r.err)
            self.assertEqual(self.snapshot(), before)
        if case.out_of_range:
            bad = case.out_of_range[0]
            text = {"STRV": bad[2], "DISKS": bad[-1][1:-1]}.get(kind, bad[1])
            r = self.ctl_run("set", "%s=%s" % (name, text))
            self.assertEqual(r.returncode, 1, r)
            self.assertIn(named, r.err)
            self.assertEqual(self.snapshot(), before)

        # An unprivileged caller: AccessDenied, by all three clients.
        r = self.ctl_run("set", "%s=%s" % (name, case.cli), user=lmtest.UNPRIVILEGED)
        self.assertEqual(r.returncode, 1, r)
        self.assertIn("org.laptopmode.LaptopMode1.configure", r.err)
        self.assertEqual(self.snapshot(), before)
        if kind == "UINT":
            good_gv = "<uint32 %s>" % case.cli
        elif kind == "BOOL":
            good_gv = "<%s>" % case.cli
        elif kind == "STR":
            good_gv = "<%s>" % gv_string(case.cli)
        elif kind == "STRV":
            good_gv = "<@as [%s]>" % ", ".join(gv_string(x) for x in case.want_cli)
        else:
            good_gv = "<%s>" % case.cli
        self.assert_refused(name, [case.busctl[0]] + case.busctl[1:], good_gv, ACCESS_DENIED,
                            user=lmtest.UNPRIVILEGED)


def add_key_tests():
    for name, kind, params in KEYS:
        def test(self, name=name, kind=kind, params=params):
            self.check_key(name, kind, params)
        test.__doc__ = "Configure key %s (%s)" % (name, kind)
        setattr(ConfigureKeysTest, "test_key_%s" % name, test)


add_key_tests()

# Issue 24: what Configure accepts comes back byte for byte after a restart.
HOSTILE_PATHS = ["/mnt/a;b", "/mnt/tab\there\t", "/mnt/back\\slash\\", "/mnt/trailing  ",
                 "/mnt/caf\u00e9 \u202e", "/mnt/x\\x41\\s", "/mnt/nl\nand\rcr", "/mnt/\\;;",
                 "/mnt/ in side "]


@unittest.skipUnless(is_root(), "needs root: the daemon owns the name on the system bus")
class HostileRoundTripTest(DaemonTestCase):
    config_text = "[LaptopMode]\nMode=off\nEngine=kernel\nAttribution=none\n"

    def configure(self, settings):
        conn = lmtest.lmpolkit.connect(self.bus_address)
        try:
            conn.call_sync(lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE, "Configure",
                           lmtest.lmpolkit.GLib.Variant("(a{sv})", (settings,)), None, 0, 10000,
                           None)
        finally:
            conn.close_sync(None)

    def restart(self):
        self.assertEqual(self.stop_daemon(), 0)
        self.start_daemon()

    def test_empty_list_and_hostile_paths_survive_a_restart(self):
        V = lmtest.lmpolkit.GLib.Variant
        self.start_daemon()
        self.configure({"RemountTypes": V("as", []), "NoRemount": V("as", HOSTILE_PATHS)})
        self.restart()
        props = self.properties()
        self.assertEqual(props["RemountTypes"], [], "an empty list must stay empty")
        self.assertEqual(props["NoRemount"], HOSTILE_PATHS)
        # Each one alone too (the first and last item of a list are where
        # blanks were lost), and a second restart changes nothing.
        for path in HOSTILE_PATHS:
            with self.subTest(path=path):
                self.configure({"NoRemount": V("as", [path])})
                self.restart()
                self.assertEqual(self.properties()["NoRemount"], [path])
                self.assertEqual(self.properties()["RemountTypes"], [])
        with open(self.config, "rb") as f:
            before = f.read()
        self.restart()
        self.configure({"Mode": V("s", "off")})
        with open(self.config, "rb") as f:
            self.assertEqual(f.read(), before)


if __name__ == "__main__":
    lmtest.main()
