#!/usr/bin/env python3
"""The README's test command's time (issue 31 item 5): wall and CPU seconds of
``python3 -m pytest`` (pytest-xdist on every core, as pyproject's addopts say) in this
checkout, with the machine's load average before and after.

    python3 benchmarks/suite_time.py [-- PYTEST ARGS]

CPU seconds are the process and the workers it waited for (``os.wait4``): the figure to
compare on a shared machine, where the wall time follows the other work. Prints JSON;
docs/performance.md quotes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    before = os.getloadavg()
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    print(json.dumps({"wall_s": round(wall, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
                      "exit": os.waitstatus_to_exitcode(status), "cores": os.cpu_count(),
                      "load_before": [round(x, 2) for x in before],
                      "load_after": [round(x, 2) for x in os.getloadavg()]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
