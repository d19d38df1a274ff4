#!/usr/bin/python3
"""The folders are floors: every #include "..." in service/, client/ and
common/, mapped to the folder that holds the header, checked against the
order docs/ARCHITECTURE.md declares once (its ```layers block).

Fails on an include that goes up (or sideways, between two folders of one
floor) and on an include cycle between files (a module is lm-foo.c,
lm-foo.h and lm-foo-private.h), each shown with the file:line that makes
it; and on a header that declares a function or variable a .c file of
another folder defines (a call between folders no include shows). There
is no list of exceptions: the known violations of issue 38 are
all broken. And service/meson.build's service_floors, the folders each
folder's library is built with, are checked against the same order: a
folder declares only folders below it, and every folder it includes.

--graph prints the folder graph and the numbers instead.
"""

import os
import re
import sys

SRC = os.environ.get('LM_SRCDIR') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOTS = ('service', 'client', 'common')

# Headers made at build time, and the folder whose meson.build makes them.
GENERATED = {
    'config.h': 'config',
    'lm-generated.h': 'dbus',
    'lm-sni-generated.h': 'client/tray',
    'lm-attrib-config.h': 'service/bpf',
    'lm-attrib.skel.h': 'service/bpf',
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def floors_from_doc():
    """The ```layers block of docs/ARCHITECTURE.md: one floor a line, bottom
    first; the folders on a line share the floor."""
    text = open(os.path.join(SRC, 'docs', 'ARCHITECTURE.md'), encoding='utf-8').read()
    blocks = re.findall(r'^```layers\n(.*?)^```', text, re.S | re.M)
    if len(blocks) != 1:
        sys.exit('docs/ARCHITECTURE.md: expected one ```layers block, found %d' % len(blocks))
    floor = {}
    for n, line in enumerate(blocks[0].splitlines()):
        line = line.split('#', 1)[0].strip()
        for folder in line.split():
            if folder in floor:
                sys.exit('docs/ARCHITECTURE.md: %s on two floors' % folder)
            floor[folder] = n
    return floor


def sources():
    for root in ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(SRC, root)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(('.c', '.h')):
                    yield os.path.relpath(os.path.join(dirpath, name), SRC)


def module(path):
    folder, name = os.path.split(path)
    stem = re.sub(r'(-private)?\.(c|h)$', '', name)
    stem = stem.replace('.bpf', '')
    return folder + '/' + stem


def scan():
    """Every include between two files: (from file, line, to file or
    generated folder)."""
    files = list(sources())
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)
    includes = []
    problems = []
    for f in files:
        with open(os.path.join(SRC, f), encoding='utf-8', errors='replace') as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                here = os.path.normpath(os.path.join(os.path.dirname(f), name))
                if os.path.exists(os.path.join(SRC, here)):
                    target = here
                elif name in GENERATED:
                    target = None
                elif len(by_name.get(os.path.basename(name), [])) == 1:
                    target = by_name[os.path.basename(name)][0]
                else:
                    problems.append('%s:%d: "%s" is not one file of %s (nor a known generated header)'
                                    % (f, n, name, ', '.join(ROOTS)))
                    continue
                folder = os.path.dirname(target) if target else GENERATED[name]
                includes.append((f, n, target, folder))
    return includes, problems


def sccs(nodes, edges):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(out)


def analyse():
    floor = floors_from_doc()
    includes, problems = scan()
    folder_edges = {}
    module_edges = {}
    where = {}
    for f, n, target, folder in includes:
        src_folder = os.path.dirname(f)
        for fo in (src_folder, folder):
            if fo not in floor:
                problems.append('%s:%d: folder %s is on no floor of docs/ARCHITECTURE.md' % (f, n, fo))
        if folder != src_folder:
            folder_edges.setdefault((src_folder, folder), []).append('%s:%d' % (f, n))
        if target:
            a, b = module(f), module(target)
            if a != b:
                module_edges.setdefault(a, set()).add(b)
                where.setdefault((a, b), []).append('%s:%d' % (f, n))
    violations = {}
    for (a, b), at in sorted(folder_edges.items()):
        if a in floor and b in floor and floor[a] <= floor[b]:
            kind = 'up' if floor[a] < floor[b] else 'sideways'
            violations['%s %s -> %s' % (kind, a, b)] = at
    nodes = set(module_edges) | {b for bs in module_edges.values() for b in bs}
    for comp in sccs(nodes, module_edges):
        members = set(comp)
        at = []
        for a in comp:
            for b in sorted(module_edges.get(a, ())):
                if b in members:
                    at += ['%s -> %s (%s)' % (a, b, w) for w in where[(a, b)]]
        violations['cycle ' + ' '.join(comp)] = at
    folder_nodes = {x for e in folder_edges for x in e}
    folder_adj = {}
    for a, b in folder_edges:
        folder_adj.setdefault(a, set()).add(b)
    folder_cycles = sccs(folder_nodes, folder_adj)
    return floor, folder_edges, violations, folder_cycles, problems


def declared_uses():
    """service/meson.build's service_floors: folder -> the folders it uses."""
    text = open(os.path.join(SRC, 'service', 'meson.build'), encoding='utf-8').read()
    m = re.search(r'^service_floors = \[\n(.*?)^\]', text, re.S | re.M)
    if not m:
        sys.exit('service/meson.build: no service_floors list')
    out = {}
    for name, uses in re.findall(r"\['([\w-]+)',\s*\[([^\]]*)\]\]", m.group(1)):
        out['service/' + name] = [('dbus' if u == 'dbus' else 'service/' + u)
                                  for u in re.findall(r"'([\w-]+)'", uses)]
    return out


def check_meson(floor, folder_edges):
    problems = []
    uses = declared_uses()
    for folder, used in sorted(uses.items()):
        for u in used:
            if u not in floor or folder not in floor or floor[u] >= floor[folder]:
                problems.append('service/meson.build: %s declares %s, not a floor below it'
                                % (folder, u))
    for (a, b), at in sorted(folder_edges.items()):
        if not a.startswith('service/') or b in ('common', 'config'):
            continue
        if a not in uses:
            problems.append('service/meson.build: %s is not in service_floors' % a)
        elif b not in uses[a]:
            problems.append('service/meson.build: %s includes %s (%s) without declaring it'
                            % (a, b, at[0]))
    return sorted(set(problems))


# A header's declaration of a function or variable (lm_*), not static; and
# a definition in a .c file, the project's style: the name at the start of
# its line, or a non-static variable with its initialiser.
DECL = re.compile(r'^(?!static\b|typedef\b|#)(?:extern\s+)?[A-Za-z_][\w\s*]*?\b(lm_\w+)\s*[(;\[]')
DEF_FUNCTION = re.compile(r'^(lm_\w+)\s*\(')
DEF_VARIABLE = re.compile(r'^(?!static\b|extern\b)(?:const\s+)?[A-Z]\w*\s+(?:\*\s*)?(?:const\s+)?(lm_\w+)\s*[=\[]')
COMMENT = re.compile(r'/\*.*?\*/', re.S)


def declared_elsewhere():
    """Headers declaring what a .c file of another folder defines: a call
    between folders that no include shows (the caller includes the
    header of its own folder). One line per declaration."""
    defined, declared = {}, []
    for f in sources():
        with open(os.path.join(SRC, f), encoding='utf-8', errors='replace') as fh:
            text = COMMENT.sub(lambda m: '\n' * m.group(0).count('\n'), fh.read())
        for n, line in enumerate(text.split('\n'), 1):
            if f.endswith('.c'):
                m = DEF_FUNCTION.match(line) or DEF_VARIABLE.match(line)
                if m:
                    defined.setdefault(m.group(1), set()).add(f)
            else:
                m = DECL.match(line)
                if m:
                    declared.append((f, n, m.group(1)))
    out = []
    for header, n, name in declared:
        where = defined.get(name)
        if where and all(os.path.dirname(d) != os.path.dirname(header) for d in where):
            out.append('%s:%d: declares %s, defined in another folder (%s)'
                       % (header, n, name, ', '.join(sorted(where))))
    return out, len(declared)


def main():
    floor, folder_edges, violations, folder_cycles, problems = analyse()
    elsewhere, n_declared = declared_elsewhere()
    service_edges = [e for e in folder_edges if all(x.startswith('service/') for x in e)]
    ups = [v for v in violations if not v.startswith('cycle')]
    cycles = [v for v in violations if v.startswith('cycle')]
    summary = ('%d folder edges (%d within service/), %d up or sideways, %d file cycles, %d folder cycles, '
               '%d of %d declarations defined in another folder'
               % (len(folder_edges), len(service_edges), len(ups), len(cycles), len(folder_cycles),
                  len(elsewhere), n_declared))
    if '--graph' in sys.argv:
        for (a, b), at in sorted(folder_edges.items()):
            print('%-24s -> %-24s %3d  %s' % (a, b, len(at), at[0]))
        for v in sorted(violations):
            print(v)
        for c in folder_cycles:
            print('folder cycle', ' '.join(c))
        print(summary)
        return 0
    failed = list(problems) + check_meson(floor, folder_edges) + elsewhere
    for v in sorted(violations):
        failed.append('%s\n    ' % v + '\n    '.join(violations[v]))
    print(summary)
    if failed:
        print('\n'.join(failed))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
