"""A small kernel package: kernels import their helpers relatively."""

from .activations import bias_act_kernel  # noqa: F401
