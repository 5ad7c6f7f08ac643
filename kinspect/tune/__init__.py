"""`kinspect tune`: turn a finding into a measured fix.

    heuristic.py   what Inductor's decorator says of a kernel (pure: the source text in, records out)
    space.py       the candidates: the knobs each finding kind names, within what the kernel accepts;
                   the grid each candidate launches with
    inductor.py    the configs Inductor's own heuristics (and max_autotune) would try for the kernel
    run.py         the GPU side: replay, check against the original, time (the seam tests replace)
    search.py      compile in parallel, prune by resources, measure round by round within a budget
    result.py      what a tune found, stored beside the variant and read back for `report`
"""
