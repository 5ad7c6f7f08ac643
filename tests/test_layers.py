"""The import graph keeps its layers (STYLE.md, habit 11): views depend on analysis results, never on
the commands that produce them; analysis never on views or commands; and no module imports, even
lazily inside a function, a module that imports it back."""

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "kinspect"

# module prefix -> prefixes it must never import (at module level or inside a function)
FORBIDDEN = {
    "kinspect.render": ("kinspect.api", "kinspect.cli", "kinspect.diff.compare", "kinspect.bench.measure",
                        "kinspect.compile", "kinspect.hooks"),
    "kinspect.analysis": ("kinspect.api", "kinspect.cli", "kinspect.render", "kinspect.diff", "kinspect.bench",
                          "kinspect.compile", "kinspect.hooks"),
    "kinspect.ir": ("kinspect.api", "kinspect.cli", "kinspect.render", "kinspect.diff", "kinspect.analysis",
                    "kinspect.compile", "kinspect.hooks", "kinspect.store"),
    "kinspect.isa": ("kinspect.api", "kinspect.cli", "kinspect.render", "kinspect.diff", "kinspect.analysis",
                     "kinspect.compile", "kinspect.hooks", "kinspect.store"),
    "kinspect.diff": ("kinspect.api", "kinspect.cli", "kinspect.render"),
    "kinspect.hooks": ("kinspect.api", "kinspect.cli", "kinspect.render", "kinspect.diff", "kinspect.analysis"),
    "kinspect.model": ("kinspect.",),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every kinspect module the file imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("kinspect")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kinspect") and not node.level:
            subs = {f"{node.module}.{a.name}" for a in node.names}   # `from kinspect import api`
            found |= subs if node.module == "kinspect" else subs | {node.module}
    return found


def graph() -> dict[str, set[str]]:
    """Module -> the kinspect modules it imports, each with the packages above it (importing
    kinspect.diff.result runs kinspect/diff/__init__.py first)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py") if "boot" not in p.parts}
    out = {}
    for m, p in modules.items():
        deps = set()
        for i in imports(p):
            parts = i.split(".")
            deps |= {".".join(parts[:k]) for k in range(2, len(parts) + 1)}
        out[m] = {d for d in deps if d in modules and d != m and not m.startswith(d + ".")}
    return out


def test_layers_are_kept():
    bad = [f"{m} imports {i}" for m, deps in graph().items() for i in deps
           for prefix, banned in FORBIDDEN.items() if m == prefix or m.startswith(prefix + ".")
           for b in banned if i == b or i.startswith(b if b.endswith(".") else b + ".") or i == b.rstrip(".")]
    assert not bad, "\n".join(sorted(bad))


def test_no_import_circles():
    """No module imports (even lazily, inside a function) a module that imports it back, directly or
    through others; a package's __init__ and its own submodules excepted."""
    g = graph()
    index, low, stack, on, circles = {}, {}, [], set(), []

    def strong(v):          # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                strong(w)
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
                circles.append(sorted(comp))

    for v in list(g):
        if v not in index:
            strong(v)
    assert not circles, f"modules in import circles: {circles}"
