"""The architecture as data: which package sits on which layer, and the import graph checked against it.

A module may import its own layer and those below, never above; and no two modules import each other,
directly or round about (a cycle), whether at the top of a file or inside a function. The test suite
holds the whole tree to this (tests/test_layers.py); `python -m decathlon.layers` prints what breaks it.
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
# Lowest first. The package's own __init__ is the verifiers entry point (`vf-eval decathlon`), on top.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("decathlon.errors",),
    ("decathlon.tape",),
    ("decathlon.contract",),
    ("decathlon.emulators", "decathlon.standins"),
    ("decathlon.sandbox",),
    ("decathlon.checkout", "decathlon.recordings"),
    ("decathlon.backends",),
    ("decathlon.core",),
    ("decathlon.training", "decathlon.reports", "decathlon.conformance"),
    ("decathlon.cli", "decathlon.__main__", "decathlon.layers", "decathlon"),
)


def layer_of(module: str) -> int:
    best, level = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, level = len(p), i
    if level < 0:
        raise ValueError(f"{module} is on no layer of decathlon.layers.LAYERS")
    return level


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by name (the HTTP shim's site folder is not a package of ours: it is
    put on the path of the processes it records)."""
    found = {}
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        if "site" in parts and "http" in parts:
            continue
        found[".".join(parts)] = f
    return found


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int


def imports(name: str, path: Path, known: dict[str, Path]) -> list[Edge]:
    """What `name` imports of the package, wherever in the file (a function's own imports count too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            # `from pkg import mod` names a module; `from mod import name` the module itself
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name and t.startswith("decathlon"):
                out.append(Edge(name, t, node.lineno))
    return out


def graph(root: Path = ROOT) -> list[Edge]:
    known = modules(root)
    return [e for name, path in sorted(known.items()) for e in imports(name, path, known)]


def upward(edges: list[Edge]) -> list[Edge]:
    return [e for e in edges if layer_of(e.target) > layer_of(e.source) and not e.source.startswith(e.target + ".")]


def cycles(edges: list[Edge]) -> list[list[str]]:
    """Each strongly connected group of more than one module (Tarjan's algorithm, iterative)."""
    succ: dict[str, list[str]] = {}
    for e in edges:
        succ.setdefault(e.source, []).append(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(succ):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on.add(node)
            kids = succ.get(node, [])
            if i < len(kids):
                work.append((node, i + 1))
                kid = kids[i]
                if kid not in index:
                    work.append((kid, 0))
                elif kid in on:
                    low[node] = min(low[node], index[kid])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    group.append(top)
                    if top == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(found)


def main() -> int:
    edges = graph()
    bad = upward(edges)
    for e in bad:
        print(f"{e.source}:{e.line} imports {e.target}, a higher layer")
    groups = cycles(edges)
    for g in groups:
        print("import cycle: " + " → ".join(g))
    return 1 if bad or groups else 0


if __name__ == "__main__":
    sys.exit(main())
