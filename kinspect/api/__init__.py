"""The functions a user or the CLI calls; each CLI command is a thin shell over one of these, and each
returns a typed record (a frozen dataclass) that the views in kinspect.render show.

    stages.py   a stage's text as `show` and `dump --stage` print it
    views.py    what vec-report shows: reports of variants, or the program view; the JSON Schema of --json
    runs.py     diff (variants, two runs, two Tritons), the executor of a sweep, report, bench, interpret, repro
    tuning.py   tune, the tune stored beside a variant, the tunes of a program's kernels
"""

from kinspect.core.errors import KinspectError, UsageError
from kinspect.core.model import Variant, natural  # natural: the order of kinspect ls
from kinspect.files.store import DEFAULT_OUT

# Compiling one variant and retargeting one live below the commands that use them (a sweep's workers,
# diff, passes); the api keeps their names for users and the CLI.
from kinspect.compile.dump import DumpResult, dump
from kinspect.analysis.derived import add_retargets, llir_stage, retargeted
from kinspect.analysis.lookup import find_variant
from kinspect.files.sources import readable
from kinspect.files.readonly import check_output_path, check_store_folder

from kinspect.api.stages import (HIGHLIGHT_MAX_BYTES, annotated_chunks, annotated_stage, shown_chunks,
                                 stage_bytes, stage_chunks, stage_text)
from kinspect.api.tuning import tune, tune_program, tuned
from kinspect.api.views import (Program, ProgramView, VecReport, is_program, json_schema, list_variants,
                                measure_counters, one_rank, program, ranked, record_ceilings, resolve_variants,
                                vec_report, vec_report_of, vec_report_view)
from kinspect.api.runs import (Repro, bench, diff, diff_runs, diff_tritons, interpret, interpret_many,
                               is_run, report, repro)

__all__ = ["add_retargets", "annotated_chunks", "annotated_stage", "bench", "check_output_path", "check_store_folder",
           "DEFAULT_OUT", "diff", "diff_runs", "diff_tritons", "dump", "DumpResult", "find_variant",
           "HIGHLIGHT_MAX_BYTES", "interpret", "interpret_many", "is_program", "is_run", "json_schema",
           "KinspectError", "list_variants", "llir_stage", "measure_counters", "natural", "one_rank", "Program",
           "program", "ProgramView", "ranked", "readable", "record_ceilings", "report", "Repro", "repro",
           "resolve_variants", "retargeted", "shown_chunks", "stage_bytes", "stage_chunks", "stage_text", "tune",
           "tune_program", "tuned", "UsageError", "Variant", "vec_report", "vec_report_of", "vec_report_view",
           "VecReport"]
