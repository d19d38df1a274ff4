#!/usr/bin/python3
"""test_no_test_code: the daemon binary that `meson install` (and so the
package) ships holds no test code: `strings` of it shows none of the
scripted fake ATA drive's text, which only laptop-moded-test carries.

Reads the build tree only; checks the unstripped binary, whose strings are
a superset of the stripped one's dh_strip packages.
"""

import json
import os
import shutil
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("LM_SRCDIR", os.path.dirname(HERE))
BUILDDIR = os.environ.get("LM_BUILDDIR", os.path.join(SRCDIR, "build-tests"))

# Text only tests/lm-fake-ata.c and lm-fake-nvme.c have: its magic line, key-file group and
# keys, its command log, its function names.
NEEDLES = ("laptop-moded fake ATA device", "FakeAta", "AbortCheckPowerMode", "IdentifyLength",
           "SmartPage", "lm_fake_ata", "fake_execute", "%s %02X %02X %02X",
           "laptop-moded fake NVMe controller", "FakeNvme", "lm_fake_nvme")


def strings(path):
    out = subprocess.run(["strings", "-a", path], check=True, capture_output=True, text=True)
    return out.stdout


class NoTestCodeTest(unittest.TestCase):
    def setUp(self):
        if shutil.which("strings") is None:
            self.fail("strings (binutils) is needed for this check")
        out = subprocess.run(["meson", "introspect", "--installed", BUILDDIR], check=True,
                             capture_output=True, text=True)
        self.installed = json.loads(out.stdout)

    def test_installed_daemon_has_no_fake_drive(self):
        daemons = [src for src, dest in self.installed.items()
                   if os.path.basename(dest) == "laptop-moded"]
        self.assertEqual(len(daemons), 1, self.installed)
        text = strings(daemons[0])
        for needle in NEEDLES:
            self.assertNotIn(needle, text, "%s ships test code" % daemons[0])

    def test_test_daemon_is_not_installed_and_has_it(self):
        # The needles are real: the test variant carries every one of them.
        self.assertFalse([d for d in self.installed.values() if "laptop-moded-test" in d])
        text = strings(os.path.join(BUILDDIR, "tests", "laptop-moded-test"))
        for needle in NEEDLES:
            self.assertIn(needle, text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
