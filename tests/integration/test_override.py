#!/usr/bin/python3
"""Tier 2: Override (issue 48): settings in force for as long as the
caller's connection lasts, never written to the config file; a Configure
meanwhile goes to the file and stays under the override; one override at a
time; cleared by its owner or by its connection closing, however it ended.
Real daemon, private bus with the project's policy, real polkitd.
"""

import json
import subprocess
import sys
import unittest

import lmtest
from lmtest import UNPRIVILEGED, DaemonTestCase, is_root

BUSY = "org.laptopmode.LaptopMode1.Error.Busy"
INVALID_ARGS = "org.laptopmode.LaptopMode1.Error.InvalidArgs"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"

# A connection that holds an override: argv[1] is the a{sv} text; it prints
# the call's outcome, then on "clear" clears it, on end of input exits.
HOLDER = r"""
import json, sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
def call(text):
    try:
        bus.call_sync("%s", "%s", "%s", "Override", GLib.Variant.parse(None, text, None, None),
                      None, 0, 30000, None)
        return None
    except GLib.Error as e:
        return e.message
print(json.dumps(call(sys.argv[1])), flush=True)
for line in sys.stdin:
    if line.strip() == "clear":
        print(json.dumps(call("(@a{sv} {},)")), flush=True)
""" % (lmtest.BUS_NAME, lmtest.OBJECT_PATH, lmtest.IFACE)


@unittest.skipUnless(is_root(), "needs root: a real polkitd")
class OverrideTest(DaemonTestCase):
    config_text = "[LaptopMode]\nMode=on\nMaxLostWork=600\nAttribution=none\n"

    def setUp(self):
        super().setUp()
        self.start_daemon()

    def holder(self, text):
        p = subprocess.Popen(["/usr/bin/python3", "-c", HOLDER, text], env=self.env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        self.assertIsNone(json.loads(p.stdout.readline()), "the holder's Override failed")
        return p

    def config_bytes(self):
        with open(self.config, "rb") as f:
            return f.read()

    def max_lost_work(self):
        return self.properties()["MaxLostWork"]

    def test_in_force_not_saved_and_gone_with_its_connection(self):
        before = self.config_bytes()
        p = self.holder("({'MaxLostWork': <uint32 1200>},)")
        self.assertEqual(self.max_lost_work(), 1200)
        self.assertEqual(self.config_bytes(), before, "an override was written to the file")
        self.assertIn("Override by", self.daemon_log())
        # Another connection: refused while this one holds it.
        err = self.call_error("Override", "({'MaxLostWork': <uint32 300>},)")
        self.assertEqual(err[0], BUSY, err)
        # Configure meanwhile: the file gets it, the override stays on top.
        self.ctl_run("set", "MaxLostWork=900", check=True)
        self.assertIn(b"MaxLostWork=900", self.config_bytes())
        self.assertEqual(self.max_lost_work(), 1200)
        p.kill()
        p.wait(timeout=10)
        self.wait_until(lambda: self.max_lost_work() == 900, timeout=15,
                        message="the file's MaxLostWork once the holder's connection closed")
        self.wait_for_log("ended (its connection closed)")
        self.assertNotIn(b"1200", self.config_bytes())

    def test_cleared_by_its_owner(self):
        before = self.config_bytes()
        p = self.holder("({'MaxLostWork': <uint32 1800>, 'DirtyRatio': <uint32 30>},)")
        self.assertEqual((self.max_lost_work(), self.properties()["DirtyRatio"]), (1800, 30))
        p.stdin.write("clear\n")
        p.stdin.flush()
        self.assertIsNone(json.loads(p.stdout.readline()))
        self.assertEqual(self.max_lost_work(), 600)
        self.assertIn("cleared by its owner", self.daemon_log())
        self.assertEqual(self.config_bytes(), before)
        # Free again for another connection.
        q = self.holder("({'MaxLostWork': <uint32 60>},)")
        self.assertEqual(self.max_lost_work(), 60)
        q.stdin.close()
        q.wait(timeout=10)
        self.wait_until(lambda: self.max_lost_work() == 600, timeout=15, message="back to 600")

    def test_bad_arguments_and_unprivileged_change_nothing(self):
        before = (self.config_bytes(), self.max_lost_work())
        for args in ("({'Mode': <'off'>},)", "({'Engine': <'kernel'>},)",
                     "({'MaxLostWork': <'600'>},)", "({'NoSuchKey': <uint32 1>},)"):
            err = self.call_error("Override", args)
            self.assertEqual(err[0], INVALID_ARGS, (args, err))
        err = self.call_error("Override", "({'MaxLostWork': <uint32 300>},)", user=UNPRIVILEGED)
        self.assertEqual(err[0], ACCESS_DENIED, err)
        self.assertEqual((self.config_bytes(), self.max_lost_work()), before)
        self.assertNotIn("Override by", self.daemon_log())


if __name__ == "__main__":
    sys.exit(lmtest.main())
