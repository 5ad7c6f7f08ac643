"""Replay: a captured variant as an input to `bench`, `diff` and `repro`.

A variant `kinspect capture` recorded carries its launches (kinspect.core.model.Launches); one `kinspect
dump file.py:k` compiled carries its example launch. Replay takes the most frequent one and runs it
again: the kernel (kinspect.replay.source: rebuilt from the source captured with it, or from its
record's text; never by importing a file a record names), fresh arguments of the captured shapes,
dtypes and strides (kinspect.replay.args), the captured scalars, constexprs, options and grid
(kinspect.replay.spec); `kinspect.replay.script` writes it as a standalone script. This package holds
a captured launch as data, below the hooks that capture it: what uses one sits with its command
(kinspect.compile.replayed gets the kernel back and compiles it again, kinspect.diff.replayed sweeps
it, kinspect.bench.captured hands it to bench, kinspect.program.pending compiles what ran under the
interpreter).
"""
