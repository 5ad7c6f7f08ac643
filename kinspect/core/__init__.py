"""Foundations every layer uses: records, errors, environment, attribute patching (patching.py), Ctrl-C,
pools, optional dependencies, registries, kinspect's own cache."""
