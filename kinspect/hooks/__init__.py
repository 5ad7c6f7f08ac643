"""The only place kinspect hooks Triton at run time, installed one way (session.py): the compilation
listener (listener.py) and what it writes (record.py), the launch observer (observe.py) and the launch
counts (launches.py) with their device timers (timers.py, cupti.py), triton.autotune's decisions
(autotune.py), autotuners' benchmark launches set apart (tuning.py), Triton's start-up clock (startup.py)
and where Inductor's kernels came from (provenance.py). Every hook is put back when its session closes.
"""
