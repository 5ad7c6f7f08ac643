"""A Triton backend standing in for spine-triton in kinspect's tests (see ../README.md)."""
