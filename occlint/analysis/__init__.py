"""Analysis: occupancy and launch facts of kernels, launch groups and launch sites."""
