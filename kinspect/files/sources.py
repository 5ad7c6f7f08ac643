"""Read variants from folders kinspect did not write: Triton cache dirs and TRITON_KERNEL_DUMP dirs,
as well as kinspect stores, and from traces (kinspect.files.traces). Strictly read-only: nothing here opens a
file for writing.

Each layout is a reader with `matches(path)` and `read(path) -> list[Variant]`; `discover` tries
them in order. A foreign variant's `path` is the folder its stage files are in. A layout reads a
whole folder of entries or one entry named by its own folder: a Triton cache or one of its
`<hash>` folders, a dump folder or one of its `<hash>` folders.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kinspect import backends

from kinspect.files import foreign, traces
from kinspect.core.errors import NotFound, UsageError
from kinspect.core.model import StageFile, Target, Variant
from kinspect.files.store import DEFAULT_OUT, Outside, contained, is_store, read_records, unfinished

# Triton's <kernel>.json is a few KB; a bigger one is not metadata (and is not read into memory)
MAX_METADATA_BYTES = 16 << 20


@dataclass(frozen=True)
class Listing:
    path: Path
    kind: str                 # "kinspect store", "Triton cache", "Triton dump"
    variants: list[Variant]
    warnings: list[str]


def default_dir() -> Path:
    """What to read when no folder is named: ./kinspect-out when present; else the folder a spine-triton
    run dumps into (SPINE_TRITON_DUMP_PATH, set on the board to see its stages), when it holds a dump
    in either of spine-triton's layouts (3.6.0+spacemit.a5's flat `<k>_tt.mlir, <k>_linalg.mlir, ...`,
    or later releases' `<k>/<k>.ttir, .linalgdir, .ll, .s`); else Triton's cache (TRITON_CACHE_DIR or
    ~/.triton/cache), which holds every backend's kernels, spine-triton's and triton-cpu's included."""
    if is_store(Path(DEFAULT_OUT)):
        return Path(DEFAULT_OUT)
    dump = os.environ.get("SPINE_TRITON_DUMP_PATH")
    if dump and Path(dump).is_dir() and (is_spine_dump(Path(dump)) or is_triton_dump(Path(dump))):
        return Path(dump)
    return triton_cache_dir()


# The user's TRITON_CACHE_DIR ("" when unset) while a kinspect command points Triton elsewhere
USER_CACHE_ENV = "KINSPECT_USER_TRITON_CACHE_DIR"
# Triton's settings that write a compile's files somewhere (or read replacements from there): off for
# kinspect's own compiles, which must never land in the user's dump folder (Triton keys it by source
# hash only, so a compile for another target overwrites the user's files there); the user's values
# are kept in USER_DUMP_ENV (JSON) and given back to a command kinspect runs for the user.
DUMP_SETTINGS = ("TRITON_KERNEL_DUMP", "TRITON_DUMP_DIR", "TRITON_KERNEL_OVERRIDE", "TRITON_OVERRIDE_DIR")
USER_DUMP_ENV = "KINSPECT_USER_TRITON_DUMP"


def triton_cache_dir() -> Path:
    """The user's Triton cache: TRITON_CACHE_DIR as the user set it, else TRITON_HOME/.triton/cache."""
    env = os.environ.get(USER_CACHE_ENV, os.environ.get("TRITON_CACHE_DIR"))
    if env:
        return Path(env)
    home = os.environ.get("TRITON_HOME", os.path.expanduser("~"))
    return Path(home) / ".triton" / "cache"


def users_dump_settings(env=os.environ) -> dict[str, str]:
    """Triton's dump settings (DUMP_SETTINGS) in `env` as the user set them, also while a kinspect command
    has turned them off for its own compiles (triton_files_elsewhere keeps them in USER_DUMP_ENV)."""
    saved = env.get(USER_DUMP_ENV)
    if saved is None:
        return {k: env[k] for k in DUMP_SETTINGS if k in env}
    try:
        dump = json.loads(saved)
    except ValueError:
        return {}
    if not isinstance(dump, dict):
        return {}
    return {k: v for k, v in dump.items() if k in DUMP_SETTINGS and isinstance(v, str)}


@contextlib.contextmanager
def triton_files_elsewhere():
    """For the length of a kinspect command, Triton's own files for this process go to kinspect's
    cache: the first use of a GPU driver builds its helpers (cuda_utils, launchers) into
    TRITON_CACHE_DIR, which must stay the user's untouched. Reading still finds the user's cache
    (triton_cache_dir), and `capture` gives it back to the command it runs. Restored on exit."""
    from kinspect.core.cache import cache_dir
    from kinspect.core.environ import patched

    user = os.environ.get(USER_CACHE_ENV, os.environ.get("TRITON_CACHE_DIR", ""))
    dump = os.environ.get(USER_DUMP_ENV) or json.dumps({k: os.environ[k] for k in DUMP_SETTINGS if k in os.environ})
    with patched({USER_CACHE_ENV: user, "TRITON_CACHE_DIR": str(cache_dir() / "triton-runtime"),
                  USER_DUMP_ENV: dump, **{k: None for k in DUMP_SETTINGS}}):
        yield


def users_environment(env: dict) -> dict:
    """`env` with TRITON_CACHE_DIR as the user had it (for a command kinspect runs for the user)."""
    env = dict(env)
    if USER_DUMP_ENV in env:
        env.update(users_dump_settings(env))
        env.pop(USER_DUMP_ENV)
    user = env.pop(USER_CACHE_ENV, None)
    if user is not None:
        if user:
            env["TRITON_CACHE_DIR"] = user
        else:
            env.pop("TRITON_CACHE_DIR", None)
    return env


def _stage_files(folder: Path, name: str, target: Target, names: dict[str, str] | None = None
                 ) -> tuple[tuple[StageFile, ...], list[str]]:
    """The stage files of one kernel in a folder: `<name>.<stage>` files, or the given
    {file name: stage name} for layouts with other naming; and a line for each file left out (a
    link out of the folder: kinspect.files.store.contained)."""
    if names is None:
        prefix = name + "."
        names = {p.name: p.name[len(prefix):] for p in folder.iterdir()
                 if p.name.startswith(prefix) and not p.name.startswith("__grp__")}
    backend = backends.for_target(target.backend, names.values())
    stages, problems = [], []
    for fname, stage in sorted(names.items()):
        kind = backend.stage_kind(stage)
        try:
            p = contained(folder, fname)
            size = foreign.vet(p, binary=kind.binary).st_size
        except (Outside, foreign.Refused) as e:
            problems.append(f"stage {stage}: {str(e).replace(str(folder) + '/', '')}; not read")
            continue
        stages.append(StageFile(name=stage, file=fname, bytes=size, lines=None,
                                dialect=backends.dialect_of(kind, backend, target.arch, p), binary=kind.binary))
    stages.sort(key=lambda s: (backend.stage_kind(s.name).order, s.name))
    return tuple(stages), problems


def _foreign(name: str, folder: Path, target: Target, origin: str, meta: dict, notes=(),
             names: dict[str, str] | None = None, label: str | None = None) -> Variant:
    from kinspect.files.metadata import checked_options

    stages, problems = _stage_files(folder, name, target, names)
    options, wrong = checked_options(meta)
    backend = backends.for_target(target.backend, [s.name for s in stages])
    hash_ = meta.get("hash")
    version = meta.get("triton_version")
    return Variant(kernel=name, hash=hash_ if isinstance(hash_, str) and len(hash_) < 200 else folder.name,
                   target=target, offline=False, signature={}, constexprs={}, attributes={},
                   options=options, stages=stages, times=None, cache_hit=True,
                   triton_version=version if isinstance(version, str) and len(version) < 100 else "",
                   origin=origin, notes=tuple(notes) + tuple(wrong),
                   name=label or folder.name, path=str(folder), problems=tuple(problems),
                   backend=backend.name if backend.name != target.backend else "")


# -- Triton cache: <cache>/<hash>/{__grp__<name>.json, <name>.json, <name>.<stage>} ---------------

def entry_folders(root: Path, warnings: list | None = None) -> list[Path]:
    """The sub-folders of a cache or dump folder that are entries: a link whose target lies outside
    `root` is refused (one line in `warnings`), so what is listed, shown or put in a report is what the
    folder holds, never a folder elsewhere it points at."""
    out = []
    for p in sorted(root.iterdir()):
        try:
            if not p.is_dir():
                continue
        except OSError:
            continue
        if p.is_symlink() and not foreign.inside(root, p):
            if warnings is not None:
                warnings.append(f"{p.name}: a link to a folder outside '{root}'; not read")
            continue
        out.append(p)
    return out


def _cache_kernel_folders(root: Path, warnings: list | None = None):
    """(folder, kernel) of every cache entry: the root's `<hash>` folders, or the root when it is one."""
    entries = [root] if any(root.glob("__grp__*.json")) else entry_folders(root, warnings)
    for folder in entries:
        for grp in sorted(folder.glob("__grp__*.json")):
            yield folder, grp.name[len("__grp__"):-len(".json")]


def is_triton_cache(root: Path) -> bool:
    return any(True for _ in _cache_kernel_folders(root))


def read_triton_cache(root: Path) -> tuple[list[Variant], list[str]]:
    from kinspect.files.metadata import target_of

    variants, warnings = [], []
    for folder, name in _cache_kernel_folders(root, warnings):
        meta_path = folder / f"{name}.json"
        try:
            contained(folder, meta_path.name)
        except Outside as e:
            warnings.append(f"{folder.name}: metadata {e}; skipped")
            continue
        try:
            meta = json.loads(foreign.read_text(meta_path, max_bytes=MAX_METADATA_BYTES))
        except foreign.Refused as e:
            warnings.append(f"{folder.name}: metadata {str(e).replace(str(folder) + '/', '')}; skipped")
            continue
        except (OSError, ValueError, RecursionError) as e:
            warnings.append(f"{folder.name}: unreadable metadata {meta_path.name} ({e.__class__.__name__}); skipped")
            continue
        if not isinstance(meta, dict) or "target" not in meta:
            continue  # a cached launcher or autotune result, not a kernel
        try:
            target = target_of(meta)
        except (ValueError, TypeError, KeyError, IndexError, OverflowError) as e:
            warnings.append(f"{folder.name}: metadata {meta_path.name} names no readable target "
                            f"({e.__class__.__name__}: {e}); skipped")
            continue
        variants.append(_foreign(name, folder, target, "triton-cache", meta))
    return variants, warnings


# -- TRITON_KERNEL_DUMP: <dump>/<source hash>/<name>.<stage>, targets overwrite each other ---------

def _dump_stages() -> set[str]:
    """The stage files a dump folder holds, every backend's (kinspect.backends: dump_stages)."""
    return {stage for b in backends.all_backends() for stage in b.dump_stages}


def _entry_stages() -> set[str]:
    """Stages only Triton names so: a folder with one of these files in it is one dump entry (the flat
    spine-triton dump's `k_.ll`, `k.s` are not, and stay with their own reader)."""
    return _dump_stages() - {"ll", "s", "asm"}


def _stage_names(folder: Path, stages: set[str]) -> set[str]:
    return {p.name.rsplit(".", 1)[0] for p in folder.iterdir()
            if p.name.rsplit(".", 1)[-1] in stages and not _is_dir(p)}


def _is_dir(p: Path) -> bool:
    try:
        return p.is_dir()
    except OSError:
        return False


def _dump_kernel_folders(root: Path, warnings: list | None = None):
    """(folder, kernel) of every dump entry: the root's `<hash>` folders, or the root when it is one."""
    entries = [root] if _stage_names(root, _entry_stages()) else entry_folders(root, warnings)
    stages = _dump_stages()
    for folder in entries:
        for name in sorted(_stage_names(folder, stages)):
            yield folder, name


def is_triton_dump(root: Path) -> bool:
    return any(True for _ in _dump_kernel_folders(root))


def _dump_target(folder: Path, name: str, module: dict) -> tuple[Target, list[str]]:
    """The target of a dump entry: from the stage a GPU backend states its arch in (PTX's `.target`,
    AMDGCN's `.amdgcn_target`), else from its TTGIR's `ttg.target` (`module`: the TTGIR's module
    attributes), else a CPU target from its IR or assembly. Which backend a file says made the entry
    is the backends' own data (kinspect.backends: dump_marks, arch_in)."""
    notes = []
    marks = {e for b in backends.all_backends() for e in b.dump_marks}
    present = {e for e in marks if (folder / f"{name}.{e}").is_file()}
    gpus = [b for b in backends.all_backends() if b.gpu and present.intersection(b.dump_marks)]
    if len(gpus) > 1:
        notes.append(f"this dump folder holds {' and '.join(b.name for b in gpus)} files of one kernel: Triton keys "
                     f"dump folders by source hash only, so targets overwrite each other's ttir/ttgir/llir here")
    stated = module.get("ttg.target", "")
    stated = stated if isinstance(stated, str) else ""
    for b in gpus:
        for dialect, pattern in b.arch_in:
            path = folder / f"{name}.{dialect}"
            if path.is_file() and (arch := _first_match(path, pattern)):
                return Target(b.target_name, arch, b.warp_size), notes
    if ":" in stated:
        backend, arch = stated.split(":", 1)
        warp = module.get("ttg.threads-per-warp", 0)
        return Target(backend, arch, warp if isinstance(warp, int) and 0 < warp <= 1024 else 0), notes
    if gpus:
        return Target(gpus[0].target_name, "?", gpus[0].warp_size), notes
    if any(present.intersection(b.dump_marks) for b in backends.all_backends() if not b.gpu):
        return cpu_target([folder / f"{name}.{e}" for e in ("llir", "ll", "asm", "s")]), notes
    return Target("unknown", "?"), notes


# TTGIR module attributes -> the Triton metadata keys they state (a dump folder has no metadata)
TTGIR_OPTIONS = {"ttg.num-warps": "num_warps", "ttg.num-ctas": "num_ctas", "ttg.shared": "shared",
                 "triton_gpu.num-warps": "num_warps", "triton_gpu.num-ctas": "num_ctas",
                 "triton_gpu.shared": "shared"}
# module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.shared = 49152 : i32, ttg.target = "cuda:90"}
TTGIR_ATTRIBUTE_RE = re.compile(r'(?<![\w.-])"?(?P<key>[\w.-]+)"?\s*=\s*(?:(?P<int>-?\d+)\s*:\s*i\d+|"(?P<str>[^"]*)")')


def ttgir_module(path: Path) -> dict:
    """The module attributes a TTGIR states ({"ttg.num-warps": 4, "ttg.target": "cuda:90", ...}), read
    from its `module attributes {...}` line near the top; {} when there is none."""
    if not path.is_file():
        return {}
    for line in _head(path, 400):
        if line.lstrip().startswith("module attributes"):
            head = line.split("{", 1)[1] if "{" in line else ""
            return {m["key"]: int(m["int"]) if m["int"] is not None else m["str"]
                    for m in TTGIR_ATTRIBUTE_RE.finditer(head)}
    return {}


def cpu_target(files: list[Path]) -> Target:
    """cpu:<arch> from the first LLVM IR triple or assembly ISA found in these files; cpu:? if none."""
    from kinspect.isa.detect import isa_of_asm, isa_of_triple, triple_of

    for path in files:
        if not path.is_file():
            continue
        head = _head(path, 2000)
        triple = triple_of(head)
        isa = isa_of_triple(triple) if triple else None
        if isa is None and path.suffix in (".s", ".asm"):
            isa = isa_of_asm(head)
        if isa:
            return Target("cpu", cpu_arch(isa))
    return Target("cpu", "?")


def _first_match(path: Path, pattern: re.Pattern, limit: int = 2000) -> str | None:
    for line in _head(path, limit):
        m = pattern.search(line)
        if m:
            return m.group(1)
    return None


def read_triton_dump(root: Path) -> tuple[list[Variant], list[str]]:
    """Every kernel of a dump folder (or of one `<hash>` folder of it). A dump has no metadata: the
    options its TTGIR states (num_warps, num_ctas, shared) stand in for it. An empty stage file
    is left out, with a warning; a kernel with no file left is skipped."""
    variants, warnings = [], []
    for folder, name in _dump_kernel_folders(root, warnings):
        module = ttgir_module(folder / f"{name}.ttgir")
        target, notes = _dump_target(folder, name, module)
        warnings += [f"{folder.name}: {n}" for n in notes]
        names = {}
        for p in sorted(folder.glob(f"{glob.escape(name)}.*")):
            stage = p.name[len(name) + 1:]
            if "." in stage or _is_dir(p) and not p.is_symlink():
                if "." not in stage:
                    warnings.append(f"{folder.name}: stage {stage}: a directory, not a file; not read")
                continue
            try:
                empty = p.is_file() and not p.stat().st_size
            except OSError:
                empty = False
            if empty:
                warnings.append(f"{p}: empty (0 bytes): left out; was it cut off while being written?")
            else:
                names[p.name] = stage   # a link, FIFO or device is refused with a line by _stage_files
        if not names:
            continue
        meta = {key: module[attr] for attr, key in TTGIR_OPTIONS.items() if attr in module}
        variants.append(_foreign(name, folder, target, "triton-dump", meta, notes, names=names))
    return variants, warnings


# -- spine-triton SPINE_TRITON_DUMP_PATH: <dump>/<k>_tt.mlir, <k>_linalg.mlir, <k>_ll.mlir, <k>_.ll,
#    <k>_.o, <k>_.so (and <k>.s in recent versions), several kernels side by side ------------------

SPINE_SUFFIXES = (("_tt.mlir", "ttir"), ("_linalg.mlir", "linalgdir"), ("_ll.mlir", "llmlir"),
                  ("_ll.ir", "llir"), ("_.ll", "llir"), ("_.o", "o"), ("_.so", "so"))


def _spine_kernels(root: Path) -> dict[str, dict[str, str]]:
    """kernel -> {file name: stage}, for files named as spine-triton's dump names them."""
    kernels: dict[str, dict[str, str]] = {}
    files = sorted(p.name for p in root.iterdir() if p.is_file())
    for fname in files:
        for suffix, stage in SPINE_SUFFIXES:
            if fname.endswith(suffix) and len(fname) > len(suffix):
                kernels.setdefault(fname[: -len(suffix)], {})[fname] = stage
                break
    for k in kernels:
        if f"{k}.s" in files:
            kernels[k][f"{k}.s"] = "s"
    # a kernel needs its IR: a stray "x_.o" alone is not a spine-triton dump
    return {k: v for k, v in kernels.items() if {"ttir", "linalgdir", "llir"} & set(v.values())}


def is_spine_dump(root: Path) -> bool:
    return bool(_spine_kernels(root))


def read_spine_dump(root: Path) -> tuple[list[Variant], list[str]]:
    variants = []
    for kernel, names in sorted(_spine_kernels(root).items()):
        target = cpu_target([root / f for f, st in names.items() if st in ("llir", "s")])
        if target.arch == "?":
            target = Target("cpu", "riscv64")  # spine-triton compiles for SpacemiT's RISC-V cores only
        variants.append(_foreign(kernel, root, target, "spine-dump", {}, names=names, label=kernel))
    return variants, []


# -- triton-shared TRITON_SHARED_DUMP_PATH: tt.mlir, ttshared.mlir, ll.mlir, ll.ir (one kernel) ------

SHARED_FILES = {"tt.mlir": "ttir", "ttshared.mlir": "ttsharedir", "ll.mlir": "llmlir", "ll.ir": "llir"}
KERNEL_NAME_RES = (re.compile(r"^define\b[^@]*@\"?([\w.$]+)"), re.compile(r"tt\.func\s+(?:public\s+)?@([\w.$]+)"))


def is_shared_dump(root: Path) -> bool:
    return (root / "ttshared.mlir").is_file() or (
        (root / "tt.mlir").is_file() and (root / "ll.ir").is_file())


def read_shared_dump(root: Path) -> tuple[list[Variant], list[str]]:
    names = {f: stage for f, stage in SHARED_FILES.items() if (root / f).is_file()}
    # other LLVM IR files beside them (ll.opt.O2.ir): kept as extra stages, named by their file
    for p in sorted(root.glob("*.ir")):
        if p.name not in names:
            names[p.name] = p.name
    kernel = _kernel_name([root / f for f in ("ll.ir", "tt.mlir") if f in names]) or root.name
    target = cpu_target([root / "ll.ir"])
    return [_foreign(kernel, root, target, "triton-shared-dump", {}, names=names, label=root.name)], []


def _kernel_name(files: list[Path]) -> str | None:
    for path in files:
        for line in _head(path, 5000):
            for pattern in KERNEL_NAME_RES:
                m = pattern.search(line)
                if m:
                    return m.group(1)
    return None


def read_store(root: Path) -> tuple[list[Variant], list[str]]:
    problems: list[str] = []
    variants = list(read_records(root, problems))
    return variants, problems + unfinished(root)


# -- traces: tritonparse's and Triton's structured logging (kinspect.files.traces) -------------------------

def read_trace(root: Path) -> tuple[list[Variant], list[str]]:
    """Every compilation event of a trace as a read-only variant, its stages in kinspect's cache."""
    import dataclasses

    from kinspect.files.metadata import target_of
    from kinspect.files.store import variant_name

    entries, warnings = traces.read(root)
    variants = []
    for e in entries:
        try:
            target = target_of(e.metadata)
        except (ValueError, TypeError, KeyError, IndexError):
            target = Target("unknown", "?")
        v = _foreign(e.kernel, Path(e.folder), target, "trace", e.metadata, e.notes, names=e.files)
        constexprs, attributes = _specialization(e)
        v = dataclasses.replace(v, times=e.times, source=e.source, launches=e.launches, constexprs=constexprs,
                                attributes=attributes, cache_hit=bool(e.metadata.get("cache_hit")),
                                trace=e.file or str(root), trace_event=e.event)
        variants.append(dataclasses.replace(v, name=variant_name(v)))
    return variants, warnings


def _specialization(e) -> tuple[dict, dict]:
    """(constexprs, attributes) by parameter name: Triton's metadata keys them by argument index
    (`src_constants {"(6,)": 64}`, `src_attrs {"(0,)": [["tt.divisibility", 16]]}`), the names come
    from the kernel's source the trace carries."""
    params = traces.parameters(e.source)

    def name(key: str) -> tuple[str, bool]:
        m = re.fullmatch(r"\((\d+),?\)", str(key).replace(" ", ""))
        i = int(m.group(1)) if m else -1
        return (params[i] if 0 <= i < len(params) else (str(key), True))

    constexprs, attributes = {}, {}
    consts = e.metadata.get("src_constants")
    scalar = (lambda x: x is None or isinstance(x, (bool, int, float, str)) and len(str(x)) < 200)
    for key, value in (consts.items() if isinstance(consts, dict) else ()):
        if not scalar(value):
            continue
        arg, declared = name(key)
        if declared:
            constexprs[arg] = value
        else:
            attributes.setdefault(arg, {})["constant"] = value
    attrs = e.metadata.get("src_attrs")
    for key, pairs in (attrs.items() if isinstance(attrs, dict) else ()):
        for pair in pairs if isinstance(pairs, list) else ():
            if isinstance(pair, list) and len(pair) == 2 and scalar(pair[1]):
                attributes.setdefault(name(key)[0], {})[str(pair[0])] = pair[1]
    return constexprs, attributes


@dataclass(frozen=True)
class FolderLayout:
    kind: str
    matches: Callable[[Path], bool]
    read: Callable[[Path], tuple[list[Variant], list[str]]]
    files: bool = False          # it reads a file too, not only a folder


LAYOUTS = (
    FolderLayout("kinspect store", is_store, read_store),
    FolderLayout("Triton cache", is_triton_cache, read_triton_cache),
    FolderLayout("Triton dump", is_triton_dump, read_triton_dump),
    FolderLayout("spine-triton dump", is_spine_dump, read_spine_dump),
    FolderLayout("triton-shared dump", is_shared_dump, read_shared_dump),
    FolderLayout("trace", traces.is_trace, read_trace, files=True),
)


# -- a single stage file ---------------------------------------------------------------------------

# A lone file of CPU assembly: its ISA is told by its text (kinspect.isa.detect)
ASM_EXTENSIONS = (".s", ".asm", ".S")


def file_dialect(suffix: str) -> str | None:
    """The dialect a lone stage file's suffix says ("asm": CPU assembly of an ISA its text tells), or None."""
    from kinspect import isa

    if suffix in ASM_EXTENSIONS:
        return "asm"
    spec = isa.of_extension(suffix)
    return spec.name if spec else None


def cpu_arch(isa_name: str) -> str:
    """The arch of a CPU target whose assembly is in this ISA (riscv -> riscv64); the name itself when
    no registered ISA has it."""
    from kinspect import isa

    spec = isa.find(isa_name)
    return spec.arches[0] if spec is not None and spec.arches else isa_name


COMBINED_MARK = "//===--"  # triton-cpu test dumps: "//===--LLVM IR---...", then "//===--ASM---..."


def section_name(line: str) -> str | None:
    """The section a marker line of a triton-cpu combined file opens (`LLVM IR`, `ASM`); None for other lines."""
    return line[len(COMBINED_MARK):].split("-", 1)[0].strip() if line.startswith(COMBINED_MARK) else None


def section_lines(lines, name: str):
    """The lines of section `name` of a triton-cpu combined file, as they stream by (its marker line left out)."""
    inside = False
    for line in lines:
        opened = section_name(line)
        if opened is not None:
            inside = opened == name
            continue
        if inside:
            yield line


def sections(text: str) -> dict[str, str]:
    """Every section of a triton-cpu combined file, by name, each without its marker line."""
    out: dict[str, list[str]] = {}
    name = None
    for line in text.splitlines(keepends=True):
        opened = section_name(line)
        if opened is not None:
            name = opened
            out[name] = []
        elif name is not None:
            out[name].append(line)
    return {k: "".join(v) for k, v in out.items()}


def _head(path: Path, n: int = 4000) -> list[str]:
    """The first lines of a foreign text file; none where it is no file to read (kinspect.files.foreign:
    a FIFO, a device, binary, too big), which the stage's own listing says."""
    try:
        return foreign.head(path, n)
    except foreign.Refused:
        return []


def read_file(path: Path) -> Variant:
    """A one-file variant: a .ttir/.ttgir/.ll/.llir/.ptx/.sass/.amdgcn/.s/.asm stage on its own."""
    from kinspect.core.errors import UsageError
    from kinspect.isa.detect import isa_of_asm, isa_of_triple, triple_of

    dialect = file_dialect(path.suffix)
    if dialect is None:
        from kinspect.isa import all_isas

        known = {*ASM_EXTENSIONS, *(x for spec in all_isas() for x in spec.extensions)}
        raise UsageError(f"'{path.name}': unknown stage file type; give one of {', '.join(sorted(known))}")
    try:
        st = foreign.check(path)
    except foreign.Refused as e:
        raise UsageError(f"{e}; give a stage file") from None
    if st.st_size == 0:
        raise UsageError(f"'{path}' is empty (0 bytes); give a complete stage file (was it cut off while being written?)")
    if foreign.is_binary(path):
        raise UsageError(f"'{path}' is binary, not {path.suffix} text; give a text stage (for a cubin, "
                         f"disassemble it first: nvdisasm -c -g -gi)")
    head = _head(path)
    triple = triple_of(head)
    stages: list[StageFile] = []
    size = st.st_size
    if head and head[0].startswith(COMBINED_MARK):
        isa = isa_of_triple(triple) or isa_of_asm(head) or "unknown"
        stages = [StageFile("llir", path.name, size, None, "llvm", section="LLVM IR"),
                  StageFile("asm", path.name, size, None, isa, section="ASM")]
        target = Target("cpu", cpu_arch(isa))
    elif dialect == "asm":
        isa = isa_of_asm(head) or "unknown"
        stages = [StageFile("asm", path.name, size, None, isa)]
        target = Target("cpu", cpu_arch(isa))
    else:
        stages = [StageFile(path.suffix.lstrip(".") or dialect, path.name, size, None, dialect)]
        target = _target_of_text(dialect, head, triple)
    kernel = (_kernel_name([path]) if dialect in ("llvm", "mlir") else None) or path.stem
    return Variant(kernel=kernel, hash="", target=target, offline=True, signature={}, constexprs={},
                   attributes={}, options={}, stages=tuple(stages), times=None, cache_hit=False,
                   triton_version="", origin="file", name=path.name, path=str(path.parent))


def _target_of_text(dialect: str, head: list[str], triple: str) -> Target:
    """A lone stage file's target: the GPU backend whose stages are in its dialect (with the arch its
    text states, kinspect.backends: arch_in) or whose LLVM IR its triple names, else a CPU target."""
    from kinspect.isa.detect import isa_of_triple

    for b in backends.all_backends():
        if not b.gpu:
            continue
        if dialect in b.own_dialects():
            pattern = dict(b.arch_in).get(dialect)
            arch = next((m.group(1) for m in map(pattern.search, head) if m), "?") if pattern else "?"
            return Target(b.target_name, arch, b.warp_size)
        if b.ir_triples and triple.startswith(b.ir_triples):
            return Target(b.target_name, "?", b.warp_size)
    isa = isa_of_triple(triple)
    return Target("cpu", cpu_arch(isa)) if isa else Target("unknown", "?")


# Archives a user may name instead of the folder packed in them.
ARCHIVE_SUFFIXES = (".tgz", ".tar.gz", ".tar", ".tar.xz", ".tar.bz2", ".zip")


def not_readable(path: Path) -> str | None:
    """Why `path` (which exists) is no input of its own, where it is one of the common mistakes: an
    archive, an empty folder, a folder of archives. None otherwise."""
    unpack = "mkdir -p /tmp/k && tar xf '{}' -C /tmp/k && kinspect ls /tmp/k"
    if path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES):
        return f"'{path}' is an archive; unpack it and name the folder: {unpack.format(path)}"
    if not path.is_dir():
        return None
    entries = list(path.iterdir())
    if not entries:
        return f"'{path}' is an empty folder; give a kinspect store, a Triton cache or a dump folder"
    archives = sorted(p.name for p in entries if p.name.lower().endswith(ARCHIVE_SUFFIXES))
    if archives and not any(p.is_dir() or p.suffix in (".json", ".ttir", ".ptx", ".llir", ".ll", ".sass")
                            for p in entries):
        return (f"'{path}' holds archives ({', '.join(archives)}), not variants; unpack one and name its folder: "
                f"{unpack.format(path / archives[0])}")
    return None


def readable(listing, *, announce: bool = True):
    """The listing, or a KinspectError when it holds nothing readable: no kernels at all, or kernels
    none of which could be read (every record or metadata file corrupt, a trace cut off before its
    first event): an empty report would hide that. With `announce`, what could not be read of the
    rest is said as warnings (kinspect.core.errors.warn), one line each."""
    from kinspect.core.errors import KinspectError, warn

    if listing.kind == "empty":
        why = not_readable(Path(listing.path))
        if why:
            raise KinspectError(why)
        raise KinspectError(f"nothing to read in '{listing.path}': it is not a kinspect store or variant folder, a "
                            f"Triton cache (or one of its entries), a TRITON_KERNEL_DUMP folder (or one of its "
                            f"folders), a trace or a stage file")
    if not listing.variants and listing.warnings:
        more = f" (and {len(listing.warnings) - 1} more)" if len(listing.warnings) > 1 else ""
        fix = ("is the trace complete?" if listing.kind == "trace"
               else "recompile the kernel or remove that folder")
        raise KinspectError(f"no variant in '{listing.path}' could be read: "
                            f"{listing.warnings[0].removesuffix('; skipped')}{more}; {fix} (kinspect ls {listing.path})")
    if announce:
        for line in listing.warnings:
            warn(line)
    return listing


MAX_VARIANTS_ENV = "KINSPECT_MAX_VARIANTS"
DEFAULT_MAX_VARIANTS = 50


def max_variants() -> int:
    """How many variants of a Triton cache or dump folder the analysing commands (vec-report, report, diff)
    take (KINSPECT_MAX_VARIANTS): a cache of thousands of entries would take hours. A kinspect store or
    a trace is a captured program and is read whole."""
    try:
        n = int(os.environ.get(MAX_VARIANTS_ENV) or DEFAULT_MAX_VARIANTS)
    except ValueError:
        n = DEFAULT_MAX_VARIANTS
    return n if n > 0 else DEFAULT_MAX_VARIANTS


# What a captured program is: every variant of it belongs in its program view (a torch.compile'd Llama on
# two ranks stores 118), so only folders that gather whatever ran on the machine are cut to the newest.
WHOLE = ("kinspect store", "trace")


def at_most(listing) -> list[Variant]:
    """The listing's variants, or, for a Triton cache or dump folder (everything the machine ever compiled),
    its newest max_variants() of them (by their folder's time), saying so."""
    from kinspect.core.errors import warn

    cap = max_variants()
    if len(listing.variants) <= cap or listing.kind in WHOLE:
        return listing.variants

    def when(v: Variant) -> float:
        try:
            return os.stat(v.path).st_mtime
        except (OSError, ValueError):
            return 0.0

    newest = sorted(listing.variants, key=when, reverse=True)[:cap]
    warn(f"'{listing.path}' holds {len(listing.variants):,} variants; this takes the {cap} newest (set "
         f"{MAX_VARIANTS_ENV} for more, or name one entry's folder; kinspect ls {listing.path} lists them all)")
    keep = {id(v) for v in newest}
    return [v for v in listing.variants if id(v) in keep]


def discover(path: str | Path | None = None) -> Listing:
    root = Path(path) if path is not None else default_dir()
    if not root.exists():
        raise NotFound(f"no such file or folder: '{root}'; give a kinspect store, a Triton cache or a dump folder")
    for layout in LAYOUTS:
        if (root.is_dir() or layout.files) and layout.matches(root):
            variants, warnings = layout.read(root)
            warnings += [f"variant {v.name or v.kernel}: {p}" for v in variants for p in v.problems]
            return Listing(root, layout.kind, variants, warnings)
    if not root.is_dir():
        why = not_readable(root)
        if why:
            raise UsageError(why)
        return Listing(root, "stage file", [read_file(root)], [])
    return Listing(root, "empty", [], [f"no kinspect store, Triton cache or dump folder found in '{root}'"])
