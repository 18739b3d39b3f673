"""``occlint validate``: run a kernel on this machine's GPU and check the predictions.

Backends: NVIDIA through cuda-python's driver API (:mod:`.cuda`), AMD through the HIP
runtime (:mod:`.hip`, ctypes on libamdhip64; written against the HIP API, not yet run on
AMD hardware). The harness (:mod:`.harness`) is backend-agnostic.
"""
