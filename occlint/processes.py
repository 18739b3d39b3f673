"""How occlint starts worker processes: one policy for every pool (inputs, split traces).

Forked on Linux when this process runs no other thread (a fork copies the imported modules:
no new interpreter to start and occlint to import), else spawned: macOS and Windows, where
forking is unsafe or missing, and a program embedding occlint that runs threads, which a
fork could leave holding locks.
"""

from __future__ import annotations

import sys
import threading


def start_method() -> str:
    """``fork`` on Linux in a process without other threads, else ``spawn``."""
    return "fork" if sys.platform == "linux" and threading.active_count() == 1 else "spawn"
