#!/usr/bin/python3
"""test_docs: the user-facing documents name every member and key there is.

README.md's interface tables against the D-Bus XML, and the settings table
in service/settings/lm-settings.c against laptop-modectl(1)'s `set` list,
laptop-moded.conf(5) and the XML's Configure comment: a property, method,
signal or key added without its line in these fails here (a review found
six such gaps at once); and the one sentence on what is public, the same
in the polkit policy, README and the XML. Reads files only.
"""

import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_coverage  # noqa: E402  (interface_members, configure_keys)

SRCDIR = test_coverage.SRCDIR


def read(*parts):
    with open(os.path.join(SRCDIR, *parts)) as f:
        return f.read()


def groff_text(text):
    """The words of a man page without its requests and font escapes."""
    text = re.sub(r"\\f[BIRP]", "", text)
    text = re.sub(r"^\.[A-Z]{1,2} ?", "", text, flags=re.M)
    return text.replace('"', "").replace("\\-", "-")


def section(text, start, end):
    m = re.search(re.escape(start) + r"(.*?)" + end, text, re.S)
    if m is None:
        raise AssertionError("no %r ... %r block" % (start, end))
    return m.group(1)


class DocsTest(unittest.TestCase):
    def setUp(self):
        self.members = test_coverage.interface_members()
        self.keys = {name for _kind, name in test_coverage.configure_keys()}

    def test_readme_tables_name_every_member(self):
        readme = read("README.md")
        missing = []
        for kind, name in sorted(self.members):
            if kind == "property":
                pattern = r"^\| `%s` \|" % name
            elif kind == "method":
                pattern = r"^\| [^|]*`%s\(" % name
            else:
                pattern = r"^\| signal `%s\(" % name
            if not re.search(pattern, readme, re.M):
                missing.append("%s %s" % (kind, name))
        self.assertEqual(missing, [], "README.md's interface tables lack these")

    def test_laptop_modectl_set_lists_every_key(self):
        page = groff_text(read("data", "laptop-modectl.1"))
        keys_block = section(page, "Keys:", r"see\s")
        listed = set(re.findall(r"\b([A-Z]\w+)\b", keys_block))
        self.assertEqual(sorted(self.keys - listed), [],
                         "laptop-modectl(1)'s set list lacks these keys")
        self.assertEqual(sorted(listed - self.keys), [],
                         "laptop-modectl(1)'s set list names keys the daemon does not have")

    def test_conf_page_documents_every_file_key(self):
        page = groff_text(read("data", "laptop-moded.conf.5"))
        # DiskSettings is a D-Bus key only: the file has [Disk ID] sections.
        missing = [k for k in sorted(self.keys - {"DiskSettings"})
                   if not re.search(r"^%s=" % k, page, re.M)]
        self.assertEqual(missing, [], "laptop-moded.conf(5) has no entry for these keys")

    def test_configure_comment_names_every_key(self):
        comments = re.findall(r"<!--(.*?)-->", read("dbus", test_coverage.IFACE + ".xml"), re.S)
        configure = [c for c in comments if c.strip().startswith("Configure:")]
        self.assertEqual(len(configure), 1, "one Configure comment in the XML")
        missing = [k for k in sorted(self.keys) if not re.search(r"\b%s\b" % k, configure[0])]
        self.assertEqual(missing, [], "the XML's Configure comment lacks these keys")

    def test_one_sentence_on_what_is_public(self):
        """The policy file, README and the XML say the same about what the
        public properties (LedgerSummary, Disks) show and monitor guards."""
        def words(text):
            return " ".join(text.replace("`", "").split())
        for parts in [("README.md",), ("dbus", test_coverage.IFACE + ".xml"),
                      ("polkit", test_coverage.IFACE + ".policy")]:
            self.assertIn(words(PUBLIC_SENTENCE), words(read(*parts)),
                          "%s lacks the sentence on what is public" % os.path.join(*parts))


# The one sentence of policy on what is public (issue 36).
PUBLIC_SENTENCE = ("Disk wake times and counts are public, as in /proc/diskstats; "
                   "which process woke a disk is monitor's.")


if __name__ == "__main__":
    unittest.main()
