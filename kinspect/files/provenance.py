"""Where an Inductor kernel came from: the ATen ops it fuses and the lines of the model that made it.

Inductor writes both into its output code (the wrapper module of each compiled graph), not into the
kernel's own file. Before each kernel's definition:

    # kernel path: /tmp/ind/pl/cplgvzy....py
    # Topologically Sorted Source Nodes: [view_52, permute_17], Original ATen: [aten.view, aten.t, aten.mm]
    # Source node to ATen node mapping:
    #   view_52 => view_52
    triton_poi_fused_mm_t_0 = async_compile.triton('triton_poi_fused_mm_t_0', '''

and in its `call()` a `triton_poi_fused_mm_t_0.run(...)` per call site. The model's lines come from
the wrapper's line map (PyCodeCache.linemaps, in the process that called torch.compile: the stack
trace of the last FX node before each line of the wrapper), one per call site: the line of the last
op Inductor fused into the kernel. kinspect.hooks.inductor_origins reads them during a capture; this module
parses (pure: text in, records out), and keeps the result per variant (`<variant>/provenance.json`),
validated when read. Paths in it are data: shown, never opened.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass
from pathlib import Path

from kinspect.files import jsonfile

FILE = "provenance.json"
PROVENANCE_VERSION = 1
MAX_FRAMES = 8           # per call site, innermost last
MAX_CALL_SITES = 16      # per kernel: a kernel called once per layer from the same line is one site

# # kernel path: /tmp/ind/pl/cplgvzyhhjp5envfsjagtltjdhjeibwupnvuu63du74bmwwbmuok.py
KERNEL_PATH = re.compile(r"^# kernel path: (?P<path>\S+)\s*$")
# # Topologically Sorted Source Nodes: [linear, h_1], Original ATen: [aten.view, aten.gelu]
ORIGINS = re.compile(r"^\s*# (?:Topologically Sorted|Unsorted) Source Nodes: \[(?P<nodes>.*)\], "
                     r"Original ATen: \[(?P<aten>.*)\]\s*$")
# #   h_1 => add_2, erf, mul_2
MAPPING = re.compile(r"^#   (?P<node>[\w.]+) => (?P<aten>.*)$")
# triton_poi_fused_add_gelu_mul_view_1 = async_compile.triton('triton_poi_fused_add_gelu_mul_view_1', '''
DEFINITION = re.compile(r"^(?P<name>\w+) = async_compile\.triton\('(?P=name)'")
#         triton_poi_fused_add_gelu_mul_view_1.run(primals_3, buf5, buf6, 16384, stream=stream0)
CALL = re.compile(r"^\s+(?P<name>\w+)\.run\(")
#   File "/tmp/model.py", line 13, in forward\n    h = torch.nn.functional.gelu(self.fc(h))
FRAME = re.compile(r'File "(?P<file>[^"\n]+)", line (?P<line>\d+), in (?P<function>[^\n]+)\n(?P<code>[^\n]*)')
# # AOT ID: ['0_forward']
GRAPH = re.compile(r"^# AOT ID: \['(?P<graph>[^']*)'\]")


@dataclass(frozen=True)
class StackFrame:
    file: str
    line: int
    function: str
    code: str

    def describe(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line} {self.function}: {self.code}"


@dataclass(frozen=True)
class InductorCall:
    frames: tuple[StackFrame, ...]      # the stack trace Inductor kept for the call, innermost last
    nodes: tuple[str, ...] = ()         # the source nodes the comment above the call names

    @property
    def line(self) -> StackFrame | None:
        """The model's line: the innermost frame outside torch's own files."""
        ours = [f for f in self.frames if not _in_torch(f.file)]
        return (ours or list(self.frames) or [None])[-1]


@dataclass(frozen=True)
class Origin:
    """What one Inductor kernel was made from."""

    kernel: str
    kernel_path: str                    # the kernel's file, as Inductor named it (the variant's source.file)
    graph: str = ""                     # the compiled graph: "0_forward", "1_backward", ...
    aten: tuple[str, ...] = ()          # Original ATen ops
    nodes: tuple[str, ...] = ()         # source nodes (the FX names the model's ops got)
    mapping: tuple[tuple[str, str], ...] = ()   # source node -> its ATen nodes
    call_sites: tuple[InductorCall, ...] = ()

    @property
    def lines(self) -> list[StackFrame]:
        """The model lines of the call sites, each once, in the order of the calls."""
        seen = {}
        for c in self.call_sites:
            f = c.line
            if f is not None:
                seen.setdefault((f.file, f.line), f)
        return list(seen.values())

    def short(self) -> str:
        """One cell of a table: the first model line, or the ATen ops when no line was kept."""
        lines = self.lines
        if lines:
            more = f" (+{len(lines) - 1})" if len(lines) > 1 else ""
            return f"{os.path.basename(lines[0].file)}:{lines[0].line} {lines[0].function}{more}"
        return ", ".join(a.removeprefix("aten.") for a in self.aten[:3]) + (" …" if len(self.aten) > 3 else "")

    def to_json(self) -> dict:
        return {"version": PROVENANCE_VERSION, "kernel": self.kernel, "kernel_path": self.kernel_path,
                "graph": self.graph, "aten": list(self.aten), "source_nodes": list(self.nodes),
                "mapping": [list(m) for m in self.mapping],
                "call_sites": [{"frames": [vars(f) for f in c.frames], "source_nodes": list(c.nodes)}
                               for c in self.call_sites]}

    @classmethod
    def from_json(cls, d: dict) -> "Origin":
        """A record as written by to_json; anything else is a ValueError (every field is checked)."""
        if not isinstance(d, dict) or d.get("version") != PROVENANCE_VERSION:
            raise ValueError(f"provenance version {d.get('version') if isinstance(d, dict) else None!r}")

        def strings(xs) -> tuple[str, ...]:
            if not isinstance(xs, list) or not all(isinstance(x, str) for x in xs):
                raise ValueError("expected a list of strings")
            return tuple(xs)

        def frame(f) -> StackFrame:
            if not isinstance(f, dict) or type(f.get("line")) is not int:
                raise ValueError("a frame needs file, line, function, code")
            return StackFrame(str(f["file"]), f["line"], str(f["function"]), str(f["code"]))

        sites = d.get("call_sites") or []
        if not isinstance(sites, list):
            raise ValueError("call_sites must be a list")
        mapping = d.get("mapping") or []
        if not all(isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m) for m in mapping):
            raise ValueError("mapping must hold [node, aten] pairs")
        return cls(kernel=str(d["kernel"]), kernel_path=str(d["kernel_path"]), graph=str(d.get("graph", "")),
                   aten=strings(d.get("aten") or []), nodes=strings(d.get("source_nodes") or []),
                   mapping=tuple((a, b) for a, b in mapping),
                   call_sites=tuple(InductorCall(tuple(frame(f) for f in s["frames"][:MAX_FRAMES]),
                                             strings(s.get("source_nodes") or [])) for s in sites[:MAX_CALL_SITES]))


def _in_torch(file: str) -> bool:
    parts = Path(file).parts
    return "torch" in parts and ("site-packages" in parts or "dist-packages" in parts)


# -- parsing the output code -------------------------------------------------------------------------

def parse_output_code(text: str, linemap=None) -> list[Origin]:
    """The Triton kernels an output-code module defines, with their call sites' model lines when
    `linemap` (PyCodeCache.linemaps' entry for the module: (wrapper line numbers, stack traces)) is given."""
    lines = text.splitlines()
    graph = next((m["graph"] for m in map(GRAPH.match, lines[:3]) if m), "")
    found: dict[str, dict] = {}
    pending: dict | None = None
    for line in lines:
        m = KERNEL_PATH.match(line)
        if m:
            pending = {"path": m["path"], "aten": (), "nodes": (), "mapping": []}
            continue
        if pending is None:
            continue
        m = ORIGINS.match(line)
        if m:
            pending["nodes"], pending["aten"] = _names(m["nodes"]), _names(m["aten"])
            continue
        m = MAPPING.match(line)
        if m:
            pending["mapping"].append((m["node"], m["aten"].strip()))
            continue
        m = DEFINITION.match(line)
        if m:
            found[m["name"]] = pending
            pending = None
    sites = _call_sites(lines, set(found), linemap)
    return [Origin(kernel=name, kernel_path=d["path"], graph=graph, aten=d["aten"], nodes=d["nodes"],
                   mapping=tuple(d["mapping"]), call_sites=tuple(sites.get(name, ())[:MAX_CALL_SITES]))
            for name, d in found.items()]


def _names(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def _call_sites(lines: list[str], names: set[str], linemap) -> dict[str, list[InductorCall]]:
    numbers, traces = _unzipped(linemap)
    out: dict[str, list[InductorCall]] = {}
    for i, line in enumerate(lines, 1):
        m = CALL.match(line)
        if not m or m["name"] not in names:
            continue
        above = next((o for o in map(ORIGINS.match, reversed(lines[max(0, i - 4):i - 1])) if o), None)
        frames = ()
        if numbers:
            k = bisect.bisect_right(numbers, i) - 1
            if k >= 0 and isinstance(traces[k], str):
                frames = parse_frames(traces[k])
        site = InductorCall(frames=frames, nodes=_names(above["nodes"]) if above else ())
        if site not in out.setdefault(m["name"], []):
            out[m["name"]].append(site)
    return out


def _unzipped(linemap) -> tuple[list[int], list]:
    """PyCodeCache.linemaps keeps `list(zip(*pairs))`: [(line numbers), (stack traces)], or [] for none."""
    if not linemap or len(linemap) != 2:
        return [], []
    numbers, traces = list(linemap[0]), list(linemap[1])
    if len(numbers) != len(traces) or not all(type(n) is int for n in numbers):
        return [], []
    return numbers, traces


def parse_frames(trace: str) -> tuple[StackFrame, ...]:
    """The frames of an FX node's stack trace (Python's traceback format), innermost last."""
    frames = [StackFrame(m["file"], int(m["line"]), m["function"].strip(), m["code"].strip())
              for m in FRAME.finditer(trace)]
    return tuple(frames[-MAX_FRAMES:])


# -- the file in a variant's folder -------------------------------------------------------------------

def write(folder: str | os.PathLike, origin: Origin) -> Path:
    return jsonfile.write(Path(folder) / FILE, origin.to_json())


def read(folder: str | os.PathLike) -> Origin | None:
    """A variant's provenance, None when it has none or the file is not one this kinspect wrote."""
    return jsonfile.read(Path(folder) / FILE, Origin.from_json)

