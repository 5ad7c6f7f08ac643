"""Foundations every layer uses: records, errors, environment, Ctrl-C, pools, optional
dependencies, registries, kinspect's own cache."""
