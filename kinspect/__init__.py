"""kinspect: see what your Triton kernels compile to, and why they run as fast as they do.

`import kinspect` is cheap: Triton is imported only when a function that needs it runs.
"""

__version__ = "0.1.0"


def capture(out_dir=None, *, target=None, **kwargs):
    """Record every Triton compile inside a `with` block into a kinspect store (see kinspect.hooks.session), by
    default ./kinspect-out (kinspect.files.store.DEFAULT_OUT).
    Under TRITON_INTERPRET the interpreted launches are recorded instead and, when the block ends,
    compiled for `target` (default cuda:90; see kinspect.program.interpreted_capture)."""
    from kinspect.program import interpreted_capture as interpreted
    from kinspect.files.store import DEFAULT_OUT

    out_dir = DEFAULT_OUT if out_dir is None else out_dir

    if kwargs.get("launches", True) and interpreted.interpreting():
        return interpreted.record_interpreted(out_dir, target)
    from kinspect.hooks.session import recording

    return recording(out_dir, **kwargs)


__all__ = ["capture", "__version__"]
