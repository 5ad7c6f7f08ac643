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
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py") if "boot" not in p.parts}
    return {m: {i for i in imports(p) if i in modules} for m, p in modules.items()}


def test_layers_are_kept():
    bad = [f"{m} imports {i}" for m, deps in graph().items() for i in deps
           for prefix, banned in FORBIDDEN.items() if m == prefix or m.startswith(prefix + ".")
           for b in banned if i == b or i.startswith(b if b.endswith(".") else b + ".") or i == b.rstrip(".")]
    assert not bad, "\n".join(sorted(bad))


def test_no_import_circles_between_packages():
    """Modules of different packages never import each other back, directly or through others
    (a package and its own submodules may: `kinspect.backends` loads `kinspect.backends.cuda`)."""
    g = graph()

    def package(m: str) -> str:
        return ".".join(m.split(".")[:2])

    pg: dict[str, set[str]] = {}
    for m, deps in g.items():
        pg.setdefault(package(m), set()).update(package(d) for d in deps if package(d) != package(m))
    # strongly connected packages, Tarjan-free: a package that reaches itself again
    circles = []
    for start in pg:
        seen, todo = set(), list(pg[start])
        while todo:
            p = todo.pop()
            if p == start:
                circles.append(start)
                break
            if p not in seen:
                seen.add(p)
                todo += pg.get(p, ())
    assert not circles, f"packages in an import circle: {sorted(circles)}"
