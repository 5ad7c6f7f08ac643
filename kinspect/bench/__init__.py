"""Timing kernels on a device: statistics, the device's measured copy bandwidth, and runtimes of
shipped kernels' variants (used by `kinspect diff` when the variants' target is the device)."""
