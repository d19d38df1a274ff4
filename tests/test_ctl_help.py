#!/usr/bin/python3
"""test_ctl_help: `laptop-modectl --help` as the built binary prints it.

Every command of the table in client/ctl/laptop-modectl.c is listed once,
its summary in the same column as every other's, counted in characters:
printf's %-Ns counts bytes, so the lines with "…" (three bytes, one
character) came out two columns short (issue 38). A command too long for
the column has its summary on the next line, at that column; no line is
wider than 80 columns. The same as `laptop_mode`, with its three commands.
"""

import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "integration"))
import lmtest  # noqa: E402

WIDTH = 80


def command_table():
    """(name, args, summary, historical) of each row of the command table."""
    with open(os.path.join(lmtest.SRCDIR, "client", "ctl", "laptop-modectl.c"),
              encoding="utf-8") as f:
        text = f.read()
    table = text[text.index("commands[] = {"):]
    table = table[:table.index("};")]
    rows = re.findall(r'\{\s*"([\w-]+)",\s*"([^"]*)",\s*"([^"]*)",\s*\w+\s*(,\s*(\w+)\s*)?\}',
                      table)
    return [(name, args, summary, flags == "LM_CTL_COMMAND_HISTORICAL")
            for name, args, summary, _, flags in rows]


def usage(argv0):
    """The Commands: block of `argv0 --help`, line by line."""
    p = subprocess.run([argv0, "--help"], executable=lmtest.CTL, capture_output=True,
                       text=True, encoding="utf-8", timeout=30,
                       env=dict(os.environ, LC_ALL="C.UTF-8"))
    if p.returncode != 0:
        raise AssertionError("%s --help exited %d: %s" % (argv0, p.returncode, p.stderr))
    lines = p.stdout.split("\n")
    start = lines.index("Commands:") + 1
    return lines[start:lines.index("", start)], p.stdout


class HelpTest(unittest.TestCase):
    def check(self, argv0, commands):
        block, text = usage(argv0)
        columns = {}
        seen = 0
        for name, args, summary, _ in commands:
            left = "  " + name + args
            at = [i for i, line in enumerate(block) if line == left or line.startswith(left + " ")]
            self.assertEqual(len(at), 1, "%r once in:\n%s" % (left, "\n".join(block)))
            line = block[at[0]]
            if line == left:
                # Its summary on a line of its own, below.
                line = block[at[0] + 1]
                self.assertEqual(line.strip(), summary)
                seen += 1
            else:
                self.assertEqual(line[len(left):].strip(), summary, line)
            seen += 1
            # Python counts characters, as a terminal shows them here.
            columns[name] = line.index(summary)
        self.assertEqual(seen, len(block), "lines that are no command's:\n%s" % "\n".join(block))
        self.assertEqual(len(set(columns.values())), 1,
                         "summaries start in different columns: %s" % columns)
        for line in text.split("\n"):
            self.assertLessEqual(len(line), WIDTH, "wider than %d columns: %r" % (WIDTH, line))

    def test_commands_aligned(self):
        commands = command_table()
        self.assertGreater(len(commands), 10)
        # The case issue 38 saw: arguments with "…", which printf padded short.
        self.assertTrue(any("…" in args for _, args, _, _ in commands))
        self.check("laptop-modectl", commands)

    def test_historical_commands_aligned(self):
        self.check("laptop_mode", [c for c in command_table() if c[3]])


if __name__ == "__main__":
    lmtest.main()
