#!/usr/bin/env python3
"""No file cycles in the product code (common/, producer/, consumer/); run by tests/style.sh.

A unit is a .c file and the .h of the same name (a header alone is a unit too). Two graphs
between units, each checked on its own:
  include  a file of unit A has #include "b.h" of unit B. Resolved as the build does: the
           file's own folder, then the other folders of its binary, then common/'s. An
           include of a header that declares a function the file defines is not an edge:
           the file implements that header (pull_asks.c implements part of pull.h).
  link     a .c of unit A calls a function a .c of unit B defines. A definition is a name
           at the start of a line followed by "(", its return type on the line above and
           not static (STYLE.md puts the return type on its own line).
  folder   folder A of a top (producer/book) uses folder B of the same top: a unit of A has
           an include or link edge to a unit of B. The layers are libraries that link only
           downward (consumer/CMakeLists.txt), so a folder cycle is a layering fault.
Every cycle is printed with the edges that make it, and fails the check unless all its units
match one entry of tests/filecycles.allow for its graph; an entry that matches no cycle fails
too, so the list only holds cycles that still exist.
"""
import fnmatch
import os
import re
import subprocess
import sys
from collections import deque

TOPS = ("common", "producer", "consumer")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
DEFINITION = re.compile(r"([A-Za-z_]\w*)\(")


def strip(src):
    """The code without comments and string or character literals."""
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    src = re.sub(r'"(\\.|[^"\\\n])*"', '""', src)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", src)


def unit(path):
    return path.rsplit(".", 1)[0]


def load(root):
    out = subprocess.run(["git", "-C", root, "ls-files", *TOPS], capture_output=True, text=True,
                         check=True).stdout.split()
    files = [f for f in out if f.endswith((".c", ".h"))]
    code = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            code[f] = fh.read()
    return files, code


def definitions(files, plain):
    """name -> the unit whose .c defines it (not static)."""
    owner = {}
    for f in files:
        if not f.endswith(".c"):
            continue
        lines = plain[f].split("\n")
        for i in range(1, len(lines)):
            m = DEFINITION.match(lines[i])
            if m and not re.search(r"\bstatic\b", lines[i - 1]) and lines[i - 1].strip() and \
                    not lines[i].rstrip().endswith(";"):
                owner.setdefault(m.group(1), unit(f))
    return owner


def build(files, code):
    plain = {f: strip(t) for f, t in code.items()}
    owner = definitions(files, plain)
    defined_in = {}
    for name, u in owner.items():
        defined_in.setdefault(u, set()).add(name)
    folders = {}
    for f in files:
        folders.setdefault(f.split("/")[0], set()).add(os.path.dirname(f))
    present = set(files)
    graphs = {"include": {}, "link": {}}

    def add(kind, a, b, why):
        if a != b:
            graphs[kind].setdefault(a, {}).setdefault(b, why)

    for f in files:
        here, top = os.path.dirname(f), f.split("/")[0]
        order = [here] + sorted(folders[top] - {here})
        if top != "common":
            order += sorted(folders.get("common", ()))
        mine = defined_in.get(unit(f), set()) if f.endswith(".c") else set()
        for name in INCLUDE.findall(code[f]):
            for folder in order:
                h = os.path.normpath(os.path.join(folder, name))
                if h in present:
                    declared = set(CALL.findall(plain[h]))
                    if not (mine & declared):  # else f implements h
                        add("include", unit(f), unit(h), "includes " + name)
                    break
        if f.endswith(".c"):
            for name in sorted(set(CALL.findall(plain[f]))):
                if name in owner:
                    add("link", unit(f), owner[name], "calls " + name)
    graphs["folder"] = {}
    for kind in ("include", "link"):
        for a, bs in graphs[kind].items():
            for b, why in bs.items():
                fa, fb = os.path.dirname(a), os.path.dirname(b)
                if fa != fb and fa.split("/")[0] == fb.split("/")[0]:
                    add("folder", fa, fb, "%s %s" % (os.path.basename(a), why))
    return graphs


def cycles(graph):
    """The strongly connected parts with more than one unit (Tarjan, iterative)."""
    index, low, on, stack, parts, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, {})))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                part = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    part.append(w)
                    if w == v:
                        break
                if len(part) > 1:
                    parts.append(sorted(part))
    return parts


def shortest_cycle(graph, part):
    """One shortest cycle through the first unit of part, as (unit, why) steps."""
    inside, start = set(part), part[0]
    prev, queue = {start: None}, deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph.get(v, {})):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                path.reverse()
                return [(a, graph[a][b]) for a, b in zip(path, path[1:] + [start])]
            if w in inside and w not in prev:
                prev[w] = v
                queue.append(w)
    return []


def read_allow(path):
    entries = []
    if not os.path.exists(path):
        return entries
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            words = line.split("#", 1)[0].split()
            if words:
                entries.append((n, words[0], words[1:]))
    return entries


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    files, code = load(root)
    graphs = build(files, code)
    allow = read_allow(os.path.join(root, "tests", "filecycles.allow"))
    used, bad = set(), 0
    for kind in ("include", "link", "folder"):
        for part in cycles(graphs[kind]):
            entry = next((e for e in allow if e[1] == kind and
                          all(any(fnmatch.fnmatchcase(u, p) for p in e[2]) for u in part)), None)
            steps = " -> ".join("%s (%s)" % s for s in shortest_cycle(graphs[kind], part))
            if entry:
                used.add(entry[0])
                print("filecycles: known %s cycle (tests/filecycles.allow:%d): %s"
                      % (kind, entry[0], " ".join(part)))
                continue
            bad += 1
            print("filecycles: %s cycle among %s\n    %s -> %s" % (kind, " ".join(part), steps, part[0]),
                  file=sys.stderr)
    for n, kind, _ in allow:
        if n not in used:
            bad += 1
            print("filecycles: tests/filecycles.allow:%d (%s) matches no cycle any more: remove it"
                  % (n, kind), file=sys.stderr)
    units = {unit(f) for f in files}
    print("filecycles: %d units, %d include and %d link edges, %d unexpected"
          % (len(units), sum(map(len, graphs["include"].values())),
             sum(map(len, graphs["link"].values())), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
