"""A user's program under capture: `kinspect capture -- CMD` (run.py), the sitecustomize every Python
process of the command loads (boot/), the recorder of interpreted launches under TRITON_INTERPRET
(interpret.py) and, after the program, what capture left for later: compiling what ran under the
interpreter (pending.py), deriving stages, merging launch records. kinspect.capture() under the
interpreter is interpreted.py.

It sits above everything it drives: the hooks it installs (kinspect.hooks), the compile-only driver
(kinspect.compile) and the sweep workers that compile (kinspect.diff.sweep)."""
