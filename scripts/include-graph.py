#!/usr/bin/python3
"""The include graph of src/ and include/, checked against the layering.

Prints the room-to-room arrows with their counts and exits 1 when an arrow
runs up or sideways (a room includes a room of its own rank or above) or when
modules (a header and its .cpp together) include each other in a circle.
Usage: scripts/include-graph.py [--dot] [ROOT]   (ROOT: the repository, default
this script's parent). docs/development.md describes the layers.
"""
import os
import re
import sys

# Lower ranks are included by higher ones, never the reverse. Rooms of one rank
# do not include each other. cli parses and calls; only it includes bench.
RANKS = {
    "core": 0,
    "ukernel": 1, "models": 1,
    "execution": 2,
    "offline": 3, "baselines": 3,
    "space": 4,
    "codegen": 5, "search": 5,
    "tune": 6,
    "library": 7,
    "bench": 8,
    "cli": 9,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"convtune/([a-z_]+)/([a-z_0-9]+)\.h"', re.M)


def modules(root):
    """(room, stem) -> set of (room, stem) it includes, over headers and sources."""
    graph = {}
    for top, room_of in (("include/convtune", None), ("src", None)):
        base = os.path.join(root, top)
        for room in sorted(os.listdir(base)):
            folder = os.path.join(base, room)
            if not os.path.isdir(folder):
                continue
            for name in sorted(os.listdir(folder)):
                stem, ext = os.path.splitext(name)
                if ext not in (".h", ".cpp"):
                    continue
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    text = f.read()
                deps = graph.setdefault((room, stem), set())
                deps.update(m for m in INCLUDE.findall(text) if m != (room, stem))
    return graph


def circles(graph):
    """Every cycle's members, by Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
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
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--dot"]
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    graph = modules(root)
    arrows, bad = {}, []
    for (room, stem), deps in sorted(graph.items()):
        if room not in RANKS:
            bad.append(f"{room}/{stem}: room '{room}' has no rank; add it to RANKS in scripts/include-graph.py")
            continue
        for droom, dstem in sorted(deps):
            if droom == room:
                continue
            arrows[(room, droom)] = arrows.get((room, droom), 0) + 1
            if RANKS.get(droom, 99) >= RANKS[room]:
                bad.append(f"{room}/{stem} includes {droom}/{dstem}.h: an arrow up or sideways "
                           f"({room} {RANKS[room]}, {droom} {RANKS.get(droom, '?')})")
    if "--dot" in sys.argv:
        print("digraph rooms {")
        for (a, b), n in sorted(arrows.items()):
            print(f'  {a} -> {b} [label="{n}"];')
        print("}")
    else:
        for (a, b), n in sorted(arrows.items(), key=lambda x: (-RANKS.get(x[0][0], 0), x[0])):
            print(f"{a} -> {b}  {n}")
    for comp in circles(graph):
        bad.append("a circle of includes: " + " -> ".join(f"{r}/{s}" for r, s in comp))
    for line in bad:
        print("convtune: error: " + line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
