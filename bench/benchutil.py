"""Helpers shared by the benchmark scripts (run as ``python bench/NAME.py``, so this is importable)."""

from __future__ import annotations

import resource


def peak_rss_mib() -> float:
    """Peak resident memory of this process (VmHWM: unlike ru_maxrss it is not inherited across exec)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
