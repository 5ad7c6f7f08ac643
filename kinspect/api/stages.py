"""A stage's text as the commands show it: whole, in chunks of bounded memory, annotated with the Python
lines that produced it, SASS with its control codes."""

from __future__ import annotations

from pathlib import Path

from kinspect.core.errors import KinspectError, UsageError
from kinspect.core.model import Variant


def stage_text(variant: Variant, stage: str) -> str:
    """A stored stage's text; a binary stage or an unknown name is a clear error."""
    from kinspect.core.errors import NotFound, did_you_mean

    s = variant.stage(stage)
    if s is None:
        refused = next((p for p in variant.problems if p.startswith(f"stage {stage}: ")), None)
        if refused:      # its file leads out of the variant folder (kinspect.files.store.contained)
            raise KinspectError(f"variant {variant.name or variant.kernel}: {refused}")
        names = [x.name for x in variant.stages]
        why = next((n.split(": ", 1)[1] for n in variant.notes if n.startswith(f"{stage} not derived: ")), None)
        if why:  # a stage kinspect derives (SASS from the cubin) failed: say why, not "no such stage"
            from kinspect import backends

            source = next((d.inputs[0] for d in backends.of(variant).derivers if d.stage.name == stage and d.inputs),
                          "binary")
            raise KinspectError(f"no {stage} for '{variant.name or variant.kernel}': {why}; is its {source} "
                                f"truncated or corrupt? Its stages: {', '.join(names)}")
        raise NotFound(f"variant has no stage '{stage}'{did_you_mean(stage, names)}; its stages: {', '.join(names)}")
    if s.binary:
        text_stages = [x.name for x in variant.stages if not x.binary]
        raise UsageError(f"stage '{stage}' is binary; text stages: {', '.join(text_stages)}")
    with _open_stage(variant, s) as f:
        return f.read()


def _open_stage(variant: Variant, s, newline: str | None = None):
    """A stage's file opened as text; one that cannot be opened (gone, unreadable) is one line."""
    from kinspect.files import foreign

    try:
        return foreign.open_text(Path(variant.path, s.file), newline=newline)
    except foreign.Refused as e:
        raise KinspectError(f"variant {variant.name or variant.kernel}: stage {s.name}: "
                            f"{str(e).replace(str(variant.path) + '/', '')}") from None


HIGHLIGHT_MAX_BYTES = 8 << 20   # past this a stage is shown streamed, without colours (pygments holds it all)


def stage_chunks(variant: Variant, stage: str, size: int = 1 << 20):
    """A text stage in chunks of `size` characters: shows a stage of any size in bounded memory.
    Checks as stage_text does (unknown or binary stage) before the first chunk."""
    s = variant.stage(stage)
    if s is None or s.binary:
        stage_text(variant, stage)   # raises the right error
    f = _open_stage(variant, s, newline="")

    def chunks():
        with f:
            yield from iter(lambda: f.read(size), "")

    return chunks()


def stage_bytes(variant: Variant, stage: str) -> int:
    """A stage's size on disk (0 when it has none: the error comes when it is read)."""
    s = variant.stage(stage)
    try:
        return Path(variant.path, s.file).stat().st_size if s is not None else 0
    except OSError:
        return 0


def annotated_stage(variant: Variant, stage: str) -> str:
    """The stage's text with a `;; file:line  code` header wherever the Python line changes."""
    return "".join(annotated_chunks(variant, stage))


def annotated_chunks(variant: Variant, stage: str, size: int = 1 << 20):
    """annotated_stage in chunks of about `size` characters, in memory that does not grow with
    the stage: only the lines where the location changes are kept between the two passes."""
    s = variant.stage(stage)
    if s is None or s.binary:
        stage_text(variant, stage)   # raises the right error, before the first chunk
    return _chunked(_annotated_lines(variant, stage), size)


def _annotated_lines(variant: Variant, stage: str):
    from kinspect import ir
    from kinspect.analysis.stages import open_lines
    from kinspect.analysis.verdicts import Findings
    from kinspect.ir.records import Instruction
    from kinspect.render.report import annotate

    s = variant.stage(stage)
    locs, last = {}, None
    with open_lines(variant, s) as lines:
        for r in ir.parse(s.dialect, lines):
            if isinstance(r, Instruction) and r.loc is not None and (r.loc.file, r.loc.line) != last:
                last = locs[r.line] = (r.loc.file, r.loc.line)
    finder = Findings(variant, None, {}, None)
    with open_lines(variant, s) as lines:
        yield from annotate(lines, locs, finder.code)


def _plain_lines(variant: Variant, stage: str):
    from kinspect.analysis.stages import open_lines

    with open_lines(variant, variant.stage(stage)) as lines:
        yield from lines


def shown_chunks(variant: Variant, stage: str, *, lines: bool = False, raw: bool = False, size: int = 1 << 20):
    """A stage as `kinspect show` prints it, in chunks of about `size` characters (bounded memory):
    the file as stored with `raw`; else with `;; file:line` headers when `lines`, and SASS with
    every instruction's control codes in one notation (kinspect.render.sass_listing)."""
    from kinspect import isa
    from kinspect.render.sass_listing import with_control_codes

    s = variant.stage(stage)
    if s is None or s.binary:
        stage_text(variant, stage)   # raises the right error
    if raw:
        return stage_chunks(variant, stage, size)
    text = _annotated_lines(variant, stage) if lines else _plain_lines(variant, stage)
    spec = isa.find(s.dialect)
    if spec is not None and spec.control_codes:
        text = with_control_codes(text)
    return _chunked(text, size)


def _chunked(lines, size: int):
    chunk, held = [], 0
    for text in lines:
        chunk.append(text)
        held += len(text)
        if held >= size:
            yield "".join(chunk)
            chunk, held = [], 0
    if chunk:
        yield "".join(chunk)
