"""kinspect: see what your Triton kernels compile to, and why they run as fast as they do.

`import kinspect` is cheap: Triton is imported only when a function that needs it runs.
"""

__version__ = "0.1.0"


def capture(out_dir="kinspect-out", **kwargs):
    """Record every Triton compile inside a `with` block into a kinspect store (see kinspect.hooks)."""
    from kinspect.hooks import capture as _capture

    return _capture(out_dir, **kwargs)


__all__ = ["capture", "__version__"]
