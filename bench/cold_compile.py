"""Seconds to the first trained space with an empty compile cache: what a change to the kernels costs
a new user, measured per driver.

Each run is a fresh process with a new, empty ``NUMBA_CACHE_DIR`` (every kernel compiles) training the
seed demo's 300 baskets (``demo_baskets(300, seed=1)``, dim 8, one pass):

* **default**: basket mode, then sequence mode, then dim 64 deterministic: the batched driver the
  defaults use (``neg_group`` 4 or 16), in its generic and its dim-specialised forms;
* **per-pair**: ``neg_group=1``, word2vec's per-pair driver (the one typed negatives share).

To compare two versions, run it with each on ``PYTHONPATH``, interleaved, on a quiet machine (a cold
compile varies by about 0.3 s run to run)::

    PYTHONPATH=/path/to/old python bench/cold_compile.py --runs 4
    PYTHONPATH=. python bench/cold_compile.py --runs 4
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import sys, time
t0 = time.perf_counter()
import likewise
from likewise.data.datasets import demo_baskets
b = demo_baskets(300, seed=1)
run = dict(mode="basket", dim=8, epochs=1, min_count=1, progress=False, backend="cpu")
if sys.argv[1] == "default":
    likewise.train(b, **run)
    likewise.train([list(x) for x in b], **{**run, "mode": "sequence"})
    likewise.train(b, **{**run, "dim": 64, "deterministic": True})
else:
    likewise.train(b, **run, neg_group=1)
print(f"{time.perf_counter() - t0:.2f}")
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--which", default="default,per-pair", help="comma-separated: default, per-pair")
    args = p.parse_args(argv)
    import likewise

    print(f"likewise from {os.path.dirname(likewise.__file__)}")
    for which in args.which.split(","):
        seconds = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="likewise-cold-") as d:
                env = dict(os.environ, NUMBA_CACHE_DIR=d, LIKEWISE_CACHE=os.path.join(d, "corpora"))
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, which], env=env, capture_output=True, text=True, check=False
                )
                if out.returncode:
                    sys.exit(out.stderr[-2000:])
                seconds.append(float(out.stdout.split()[-1]))
        runs = ", ".join(f"{s:.2f}" for s in seconds)
        print(f"{which:9s} mean {sum(seconds) / len(seconds):.2f} s  ({runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
