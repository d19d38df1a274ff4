#!/usr/bin/python3
"""The meson suites each integration test file has cases in, for
tests/meson.build: "FILE TIER [TIER]" per file named on the command line.

A case is "realkernel" when its method or its class (or a base class) is
decorated with @lmtest.realkernel, else "integration" (lmtest.tier_of).
Read from the source, never imported: importing a test file at configure
time would run its module-level checks. Base classes are followed into the
sibling files they are imported from. lmtest.main() checks the result at
run time against the cases it finds, so a file this misreads fails its run
instead of losing cases.
"""

import ast
import os
import sys

INTEGRATION = "integration"
REALKERNEL = "realkernel"


def _name(node):
    """The last part of a decorator's or base's name: lmtest.realkernel -> realkernel."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _marked(node):
    return any(_name(d) == REALKERNEL for d in node.decorator_list)


class Module:
    """One parsed test file: its classes and what its names import."""

    def __init__(self, directory, stem, modules):
        self.directory, self.modules = directory, modules
        with open(os.path.join(directory, stem + ".py")) as f:
            tree = ast.parse(f.read())
        self.classes = {}
        self.imported = {}  # name -> (module stem, name there)
        self.module_names = set()  # "import test_x"
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.module_names.add(alias.asname or alias.name)

    def sibling(self, stem):
        if not os.path.exists(os.path.join(self.directory, stem + ".py")):
            return None
        if stem not in self.modules:
            self.modules[stem] = Module(self.directory, stem, self.modules)
        return self.modules[stem]

    def resolve(self, base):
        """(Module, ClassDef) of a base class written in this file, or None
        for one defined elsewhere (unittest, lmtest)."""
        if isinstance(base, ast.Name):
            if base.id in self.classes:
                return self, self.classes[base.id]
            if base.id in self.imported:
                stem, name = self.imported[base.id]
                other = self.sibling(stem)
                if other is not None and name in other.classes:
                    return other, other.classes[name]
        elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
            if base.value.id in self.module_names:
                other = self.sibling(base.value.id)
                if other is not None and base.attr in other.classes:
                    return other, other.classes[base.attr]
        return None


def _walk(module, cls):
    """(marked, test methods {name: marked}, is a TestCase) of @cls with
    everything it inherits, nearest definition first as Python finds it."""
    marked = _marked(cls)
    methods = {}
    testcase = False
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            methods[node.name] = _marked(node)
    for base in cls.bases:
        found = module.resolve(base)
        if found is None:
            testcase = testcase or (_name(base) or "").endswith("TestCase")
            continue
        b_marked, b_methods, b_testcase = _walk(*found)
        marked = marked or b_marked
        testcase = testcase or b_testcase
        for name, m in b_methods.items():
            methods.setdefault(name, m)
    return marked, methods, testcase


def tiers(path):
    """The suites of the cases unittest finds in @path: its own classes and
    the test classes it imports by name."""
    directory, stem = os.path.split(os.path.abspath(path))
    stem = stem[:-3] if stem.endswith(".py") else stem
    modules = {}
    module = modules[stem] = Module(directory, stem, modules)
    found = set()
    for name in list(module.classes) + list(module.imported):
        cls = module.resolve(ast.Name(id=name))
        if cls is None:
            continue
        marked, methods, testcase = _walk(*cls)
        if not testcase:
            continue
        for method_marked in methods.values():
            found.add(REALKERNEL if marked or method_marked else INTEGRATION)
    return [t for t in (INTEGRATION, REALKERNEL) if t in found]


def main(argv):
    for path in argv[1:]:
        print(" ".join([os.path.basename(path)] + tiers(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
