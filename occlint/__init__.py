"""occlint: static occupancy and launch-advice linter for AMD and NVIDIA GPU kernels."""

__version__ = "0.1.0"
