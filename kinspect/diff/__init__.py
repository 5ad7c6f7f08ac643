"""Sweeps and diffs of variants.

- compare.py: the command: compile a sweep or collect saved variants, tabulate, diff one stage
- result.py: what it returns (DiffResult), the record the views read
- sweep.py, worker.py, configs.py: compiling a sweep's variants in parallel processes
- table.py: one row of metrics per variant; textdiff.py, normalize.py: the stage diff;
  correlation.py: which metrics move with the runtime
- programs.py: two runs of a program (stores, traces) kernel by kernel; matching.py: which kernel of one run
  is which of the other; story.py: a kernel's change in words; tritons.py: one kernel under two Tritons

Nothing is imported here: the views import result.py without pulling in the command.
"""
