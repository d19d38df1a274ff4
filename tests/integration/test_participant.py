#!/usr/bin/python3
"""A participant is one row (issue 27): tests/lm-test-participant.c, linked
into laptop-moded-test only, declares one file under the fake root and its
row, and is journaled, put back at Stop and after kill -9, and listed in
Conflicts, through the same journal helper and registry as the daemon's own."""

import os
import signal

import lmtest
from lmtest import DaemonTestCase

KNOB = "/sys/kernel/lm_test_knob"


class TestParticipantTest(DaemonTestCase):
    daemon_binary = lmtest.TEST_DAEMON
    config_text = "[LaptopMode]\nMode=off\nRemount=false\n"

    def setUp(self):
        super().setUp()
        os.makedirs(os.path.dirname(self.root.file(KNOB)), exist_ok=True)
        self.root.write(KNOB, "normal\n")

    def knob(self):
        return self.root.read(KNOB).strip()

    def state_text(self):
        try:
            with open(self.state_dir + "/state") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def test_start_stop_restores(self):
        self.start_daemon()
        self.ctl_run("start", check=True)
        self.assertEqual(self.knob(), "laptop")
        self.assertIn("[TestKnob]", self.state_text())
        self.ctl_run("stop", check=True)
        self.assertEqual(self.knob(), "normal")
        self.assertNotIn("[TestKnob]", self.state_text())

    def test_kill9_then_restart_restores(self):
        self.start_daemon()
        self.ctl_run("start", check=True)
        self.assertEqual(self.knob(), "laptop")
        self.stop_daemon(signal.SIGKILL)
        self.assertEqual(self.knob(), "laptop")
        self.start_daemon()
        self.wait_for_log("Restoring the test knob")
        self.assertEqual(self.knob(), "normal")

    def test_changed_by_someone_else_is_listed_and_left(self):
        self.start_daemon()
        self.ctl_run("start", check=True)
        self.root.write(KNOB, "foreign\n")
        self.ctl_run("set", "MaxLostWork=300", check=True)
        found = [(c[0], c[2], c[3]) for c in self.status()["Conflicts"]]
        self.assertIn(("test.knob", "laptop", "foreign"), found)
        self.ctl_run("stop", check=True)
        self.assertEqual(self.knob(), "foreign")


if __name__ == "__main__":
    lmtest.main()
