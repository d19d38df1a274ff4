#!/usr/bin/python3
"""test_coverage: the coverage table in tests/README.md against the D-Bus
XML and the settings table in service/settings/lm-settings.c.

Fails when a method, signal, property or Configure key has no row, when a
row names a member that no longer exists, and when a named test does not
exist or never mentions the member it is listed for. Reads files only.
"""

import os
import re
import sys
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("LM_SRCDIR", os.path.dirname(HERE))
IFACE = "org.laptopmode.LaptopMode1"
XML = os.path.join(SRCDIR, "dbus", IFACE + ".xml")
SETTINGS = os.path.join(SRCDIR, "service", "settings", "lm-settings.c")
README = os.path.join(SRCDIR, "tests", "README.md")
TESTS = os.path.join(SRCDIR, "tests", "integration")
COLUMNS = ("good path", "bad input", "unauthorized")
REF = re.compile(r"([\w-]+\.py)::(\w+)\.(\w+)")


def interface_members():
    """{(kind, name)} of the interface: method, signal, property."""
    root = ET.parse(XML).getroot()
    iface = [i for i in root.iter("interface") if i.get("name") == IFACE]
    if not iface:
        raise AssertionError("%s declares no interface %s" % (XML, IFACE))
    return {(kind, m.get("name")) for kind in ("method", "signal", "property")
            for m in iface[0].iter(kind)}


def configure_keys():
    """{("key", name)}: the rows of setting_keys[] and DISK_SETTINGS_KEY."""
    with open(SETTINGS) as f:
        text = f.read()
    table = re.search(r"setting_keys\[\]\s*=\s*\{(.*?)\n\};", text, re.S)
    if table is None:
        raise AssertionError("no setting_keys[] table in %s" % SETTINGS)
    keys = set(re.findall(r"\b[A-Z]+_KEY\s*\(\s*\"(\w+)\"", table.group(1)))
    keys |= set(re.findall(r"#define\s+DISK_SETTINGS_KEY\s+\"(\w+)\"", text))
    if not keys:
        raise AssertionError("no keys found in %s's setting_keys[]" % SETTINGS)
    return {("key", k) for k in keys}


def coverage_rows():
    """{(kind, name): {column: cell}} from the table under "## Coverage"."""
    with open(README) as f:
        text = f.read()
    m = re.search(r"^## Coverage\s*$(.*?)(?=^## |\Z)", text, re.S | re.M)
    if m is None:
        raise AssertionError("%s has no \"## Coverage\" section" % README)
    rows, dupes = {}, []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 5 or set(cells[0]) <= {"-"}:
            continue
        if cells[0] == "Member":
            continue
        key = (cells[1], cells[0].strip("`"))
        if key in rows:
            dupes.append(key)
        rows[key] = dict(zip(COLUMNS, cells[2:]))
    if dupes:
        raise AssertionError("rows given twice: %s" % dupes)
    return rows


def block(lines, start):
    """Lines of the def or class at @start, up to its dedent."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (not lines[end].strip()
                                or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    return "\n".join(lines[start:end])


def find_test(file, cls, method):
    """(method source, class source) or an error string."""
    path = os.path.join(TESTS, file)
    if not os.path.exists(path):
        return "no file tests/integration/%s" % file
    with open(path) as f:
        lines = f.read().splitlines()
    starts = [i for i, l in enumerate(lines) if re.match(r"class %s\b" % cls, l)]
    if not starts:
        return "no class %s in %s" % (cls, file)
    cls_src = block(lines, starts[0])
    # Where the class defines it, else a base class or mixin in the file.
    for src_lines, offset in ((cls_src.splitlines(), 0), (lines, 0)):
        defs = [i for i, l in enumerate(src_lines) if re.match(r"\s+def %s\(" % method, l)]
        if defs:
            return block(src_lines, defs[0]), cls_src
    # test_configure_keys.py makes one test_key_<Key> per row of the same
    # settings table this test reads: it exists when the key does.
    generated = re.match(r"test_key_(\w+)$", method)
    if file == "test_configure_keys.py" and generated and ("key", generated.group(1)) in \
            configure_keys():
        return 'check_key ("%s")' % generated.group(1), cls_src
    return "no test %s.%s in %s" % (cls, method, file)


def mentions(kind, name, method_src, cls_src):
    """The test drives @name: it names it (any case: laptop-modectl's
    `start` is Start) in its own code or in its class's (the BAD and VALID
    tables); a property test may instead walk every property of the XML."""
    if re.search(re.escape(name), method_src, re.I) or re.search(re.escape(name), cls_src, re.I):
        return True
    return kind == "property" and "xml_properties(" in method_src


class CoverageTest(unittest.TestCase):
    def setUp(self):
        self.members = interface_members() | configure_keys()
        self.rows = coverage_rows()

    def test_every_member_has_a_row(self):
        missing = sorted(self.members - set(self.rows), key=lambda k: (k[0], k[1]))
        self.assertEqual(missing, [], "members without a row in %s; add:\n%s" % (
            README, "\n".join("| `%s` | %s | gap: … | gap: … | gap: … |" % (n, k)
                              for k, n in missing)))

    def test_no_row_for_a_member_that_is_gone(self):
        stale = sorted(set(self.rows) - self.members)
        self.assertEqual(stale, [], "rows in %s for members that are not in %s or %s"
                         % (README, XML, SETTINGS))

    def test_named_tests_exist_and_drive_the_member(self):
        problems = []
        for (kind, name), cells in sorted(self.rows.items()):
            for column, cell in cells.items():
                where = "%s %s, %s" % (kind, name, column)
                note = re.match(r"(n/a|gap):\s*(.*)", cell)
                refs = REF.findall(cell)
                if note is not None:
                    if not note.group(2).strip():
                        problems.append("%s: \"%s:\" without a reason" % (where, note.group(1)))
                    if note.group(1) == "n/a" and column == "good path":
                        problems.append("%s: every member has a good path" % where)
                elif not refs or REF.sub("", cell).strip(" ,"):
                    problems.append("%s: not a list of file.py::Class.test_name: %r" % (where, cell))
                for file, cls, method in refs:
                    found = find_test(file, cls, method)
                    if isinstance(found, str):
                        problems.append("%s: %s" % (where, found))
                    elif note is None and not mentions(kind, name, *found):
                        problems.append("%s: %s::%s.%s never mentions %s"
                                        % (where, file, cls, method, name))
        # The owed tests, for whoever reads the log (they are not failures).
        for (kind, name), cells in sorted(self.rows.items()):
            for column, cell in cells.items():
                if cell.startswith("gap:"):
                    print("coverage gap: %s %s, %s: %s" % (kind, name, column, cell[4:].strip()))
        self.assertEqual(problems, [], "\n".join(problems))


if __name__ == "__main__":
    sys.exit(0 if unittest.main(verbosity=2, exit=False).result.wasSuccessful() else 1)
