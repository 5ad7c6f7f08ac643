"""Replay: a captured variant as an input to `bench`, `diff` and `repro`.

A variant `kinspect capture` recorded carries its launches (kinspect.model.Launches). Replay takes
the most frequent one and runs it again: the kernel (kinspect.replay.source: rebuilt from the
source captured with it, or imported from its file), fresh arguments of the captured shapes,
dtypes and strides (kinspect.replay.args), the captured scalars, constexprs, options and grid
(kinspect.replay.spec). `kinspect.replay.compile` compiles such launches again offline, in the
jobs kinspect.replay.sweep makes (diff sweeps, and the compile step of `capture --interpret`;
kinspect.replay.interpreted is kinspect.capture() under the interpreter), `kinspect.replay.launch`
hands one to bench, `kinspect.replay.script` writes it as a standalone script.
"""
