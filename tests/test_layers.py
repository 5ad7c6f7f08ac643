"""The import graph keeps its layers (STYLE.md, habit 11), between packages and between modules, imports
inside functions counted: every package of kinspect has a row in LAYERS saying what it may import, the
rows themselves form no loop, and docs/architecture.md shows this very table (`python -m tests.test_layers`
prints it). Views depend on analysis results, never on the commands that produce them; analysis never on
views or commands; a parser or an ISA table never on anything above them."""

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "kinspect"
KERNELS = ROOT / "kernels"          # installed as kinspect.kernels (pyproject.toml: package-dir)
DOC = ROOT / "docs" / "architecture.md"

# package (kinspect's first level: kinspect/hooks/run.py is "hooks", kinspect/files/sources.py is "sources")
# -> (what it is, the packages it may import), bottom layer first
LAYERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "core": ("foundations: frozen records (model), errors, environment, attribute patching, Ctrl-C, pools, optional "
             "dependencies, registries, kinspect's own cache", ()),
    # what kinspect knows: dialects, their parsers, Triton's backends
    "isa": ("the dialect registry: one spec per ISA/IR beside its opcode table; what an instruction is (ops)",
            ("core",)),
    "ir": ("one pure parser per dialect: text in, records out", ("core", "isa")),
    "backends": ("the backend registry: one module per Triton backend; resources and occupancy; CPU retargeting "
                 "(llvmlite); launching a compiled kernel directly", ("core", "ir", "isa")),
    # what is on disk
    "files": ("kinspect's store and its side files (counters, provenance, ceilings, GPU time); Triton's caches, "
              "dump folders and traces, read-only", ("backends", "core", "isa")),
    # from stages to figures and verdicts
    "analysis": ("metrics, resources, verdicts and the one record per variant; derived stages; a variant found by "
                 "what a user types", ("backends", "core", "files", "ir", "isa")),
    # Triton at run time
    "kernels": ("the kernels kinspect ships", ("backends", "core")),
    "replay": ("a captured launch as data: its spec, arguments, kernel source, a repro script",
               ("backends", "core", "files")),
    "hooks": ("the only place that hooks Triton, installed one way (session): listener, launch counts and "
              "timers, autotuner; always restores",
              ("backends", "core", "files", "replay")),
    "compile": ("compiling a variant through the JIT, for any target, recorded by the hooks",
                ("analysis", "backends", "core", "files", "hooks", "kernels", "replay")),
    # what the commands run
    "bench": ("timing on the device; a captured launch as bench's input",
              ("analysis", "backends", "compile", "core", "files", "hooks", "kernels", "replay")),
    "diff": ("sweeps in worker processes, the table of their records, stage diffs",
             ("analysis", "backends", "bench", "compile", "core", "files", "isa", "kernels", "replay")),
    "program": ("a user's program under capture, and what capture finishes after it",
                ("backends", "compile", "core", "diff", "files", "hooks", "replay")),
    "tune": ("candidates from findings, compiled by the sweep, replayed on the captured launch, timed",
             ("analysis", "bench", "compile", "core", "diff", "files", "hooks", "replay")),
    # views, and the front doors
    "render": ("views: terminal, HTML, plots, lexers; they read results, never make them",
               ("analysis", "bench", "core", "diff", "files", "ir", "isa", "tune")),
    "api": ("the functions a user or the CLI calls",
            ("analysis", "backends", "bench", "compile", "core", "diff", "files", "ir", "isa", "kernels", "program",
             "render", "replay", "tune")),
    "cli": ("click: each command a thin shell over api; a command line checked from text before any work",
            ("analysis", "api", "backends", "compile", "core", "files", "kernels", "program", "render")),
    "__main__": ("python -m kinspect", ("cli",)),
}
# The package itself (kinspect/__init__.py: kinspect.capture, __version__) is the public front door, above
# everything; a submodule may read its constants (`from kinspect import __version__`), which import nothing.
FRONT = "kinspect"


def modules() -> dict[str, Path]:
    found = {}
    for base, name in ((PACKAGE, "kinspect"), (KERNELS, "kinspect.kernels")):
        for p in base.rglob("*.py"):
            parts = p.relative_to(base).with_suffix("").parts
            found[".".join((name, *(parts[:-1] if parts[-1] == "__init__" else parts)))] = p
    return found


def imports(module: str, path: Path, known: dict) -> set[str]:
    """Every kinspect module `module` imports, anywhere in it (inside functions too), each with the packages
    above it (importing kinspect.diff.result runs kinspect/diff/__init__.py first)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
        for name in names:
            if name == FRONT or name.startswith(FRONT + "."):
                parts = name.split(".")
                found |= {".".join(parts[:k]) for k in range(2, len(parts) + 1)} & set(known)
    return found


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else FRONT


def graph() -> dict[str, set[str]]:
    """Module -> the kinspect modules it imports (a package's own __init__ and its submodules excepted)."""
    known = modules()
    return {m: {d for d in imports(m, p, known) if d != m and not m.startswith(d + ".")} for m, p in known.items()}


def package_edges() -> dict[tuple[str, str], str]:
    """(package, package it imports) -> one module that does it."""
    edges = {}
    for m, deps in graph().items():
        for d in deps:
            if room(m) != room(d):
                edges.setdefault((room(m), room(d)), f"{m} imports {d}")
    return edges


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one node (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def strong(v):
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
                found.append(sorted(comp))

    for v in list(g):
        if v not in index:
            strong(v)
    return found


def test_every_package_has_a_row():
    rooms = {room(m) for m in modules()} - {FRONT}
    assert not rooms - set(LAYERS), f"packages with no row in LAYERS: {sorted(rooms - set(LAYERS))}"
    assert not set(LAYERS) - rooms, f"rows for packages that are gone: {sorted(set(LAYERS) - rooms)}"
    unknown = {d for _, allowed in LAYERS.values() for d in allowed} - set(LAYERS)
    assert not unknown, f"LAYERS allows packages it has no row for: {sorted(unknown)}"


def test_packages_import_only_what_their_row_allows():
    bad = [f"{a} -> {b} ({why})" for (a, b), why in package_edges().items()
           if a != FRONT and b != FRONT and b not in LAYERS[a][1]]
    front = [why for (a, b), why in package_edges().items() if b == FRONT]
    assert not bad, "\n".join(sorted(bad))
    assert not front, f"only the package's constants are read from kinspect itself: {front}"


def test_the_layers_form_no_loop():
    """Neither the table nor the code: a package never imports, even lazily inside a function, a package
    that imports it back (pkgcycles.py in the shared tools finds the same)."""
    assert circles({a: set(allowed) for a, (_, allowed) in LAYERS.items()}) == []
    actual: dict[str, set[str]] = {}
    for a, b in package_edges():
        actual.setdefault(a, set()).add(b)
    assert circles(actual) == []


def test_no_import_circles_between_modules():
    """No module imports (even lazily, inside a function) a module that imports it back, directly or
    through others; a package's __init__ and its own submodules excepted."""
    assert circles(graph()) == [], "modules in import circles"


def table() -> str:
    """LAYERS as the markdown table docs/architecture.md shows."""
    rows = ["| package | what it is | may import |", "| --- | --- | --- |"]
    for name, (what, allowed) in LAYERS.items():
        rows.append(f"| `{name}` | {what} | {', '.join(allowed) or '—'} |")
    return "\n".join(rows)


def test_the_architecture_page_shows_this_table():
    text = DOC.read_text()
    start, end = text.index("<!-- layers -->\n") + len("<!-- layers -->\n"), text.index("<!-- /layers -->")
    assert text[start:end].strip() == table(), "docs/architecture.md: paste the output of python -m tests.test_layers"


if __name__ == "__main__":
    print(table())
