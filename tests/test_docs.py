#!/usr/bin/python3
"""test_docs: the user-facing documents name every member and key there is.

README.md's interface tables against the D-Bus XML, and the settings table
in service/settings/lm-settings.c against laptop-modectl(1)'s `set` list,
laptop-moded.conf(5) and the XML's Configure comment: a property, method,
signal or key added without its line in these fails here (a review found
six such gaps at once); and the one sentence on what is public, the same
in the polkit policy, README and the XML. Reads files only, but for the
benchmarks' --help, which bench/README.md's commands must reach as written.
"""

import os
import re
import stat
import subprocess
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


def bench_commands(text):
    """The bench/NAME.py that @text runs as commands of their own (after
    sudo, env or VAR=value, or first on a line), not through an interpreter."""
    words = list(re.finditer(r"\S+", text))
    run = set()
    for i, m in enumerate(words):
        name = re.fullmatch(r"`?bench/(\w+\.py)`?", m.group(0))
        if name is None:
            continue
        before = words[i - 1].group(0).strip("`") if i > 0 else ""
        first = text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip() == ""
        if first or before in ("sudo", "env") or re.fullmatch(r"[A-Z_]+=\S*", before):
            run.add(name.group(1))
    return run


def bench_scripts():
    """bench/*.py that are programs (benchlib.py is a module)."""
    found = []
    for name in sorted(os.listdir(os.path.join(SRCDIR, "bench"))):
        if name.endswith(".py") and 'if __name__ == "__main__"' in read("bench", name):
            found.append(name)
    return found


def nobody_can_run(path):
    """Whether user nobody reaches and may execute @path (a root's checkout
    under a private home would not let it)."""
    path = os.path.abspath(path)
    mode = os.stat(path).st_mode
    if not (mode & stat.S_IROTH and mode & stat.S_IXOTH):
        return False
    parent = os.path.dirname(path)
    while True:
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
        if parent == os.path.dirname(parent):
            return True
        parent = os.path.dirname(parent)


class BenchTest(unittest.TestCase):
    """bench/README.md's commands work as written: `sudo ... bench/X.py`
    needs X.py's run bit, and --help answers before any root check or
    namespace (issue 38: engine_bench.py had no run bit)."""

    def test_readme_commands_are_executable(self):
        run = bench_commands(read("bench", "README.md"))
        # The parse itself: it still finds the commands the README shows.
        self.assertIn("engine_bench.py", run)
        self.assertLessEqual(set(bench_scripts()), run,
                             "bench/README.md shows how to run every benchmark")
        for name in sorted(run):
            path = os.path.join(SRCDIR, "bench", name)
            self.assertTrue(os.path.exists(path), "bench/README.md runs a missing %s" % name)
            self.assertTrue(os.stat(path).st_mode & stat.S_IXUSR,
                            "bench/README.md runs bench/%s, which has no run bit" % name)

    def test_help_runs_without_root(self):
        """Each benchmark's --help, run as bench/README.md runs it (by its
        path, through its #! line), as nobody where the test is root."""
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        for name in bench_scripts():
            with self.subTest(script=name):
                path = os.path.join(SRCDIR, "bench", name)
                as_nobody = os.geteuid() == 0 and nobody_can_run(path)
                p = subprocess.run([path, "--help"], cwd=SRCDIR, env=env, capture_output=True,
                                   text=True, timeout=60,
                                   **({"user": 65534, "group": 65534, "extra_groups": []}
                                      if as_nobody else {}))
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertTrue(p.stdout.startswith("usage: %s" % name), p.stdout + p.stderr)


# The one sentence of policy on what is public (issue 36).
PUBLIC_SENTENCE = ("Disk wake times and counts are public, as in /proc/diskstats; "
                   "which process woke a disk is monitor's.")


if __name__ == "__main__":
    unittest.main()
