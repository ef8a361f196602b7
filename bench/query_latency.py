"""Exact query latency of ``Embeddings.similar`` on a random space (brute force through BLAS).

Usage::

    .venv/bin/python bench/query_latency.py [--items 100000] [--dim 100] [--k 10] [--batch 1000]

Prints the median latency of a single-item query and the time of one batch query (per query too).
The first query's one-off cost (building the normalised table) is reported separately.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from likewise import Embeddings, Vocab


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--items", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=50)
    a = p.parse_args()
    rng = np.random.default_rng(0)
    emb = Embeddings(
        rng.standard_normal((a.items, a.dim), dtype=np.float32), Vocab([f"i{i}" for i in range(a.items)])
    )
    t0 = time.perf_counter()
    emb.similar("i0", k=a.k)
    first = time.perf_counter() - t0
    singles = []
    for q in rng.integers(0, a.items, a.repeat):
        t0 = time.perf_counter()
        emb.similar(f"i{q}", k=a.k)
        singles.append(time.perf_counter() - t0)
    batch = [f"i{q}" for q in rng.integers(0, a.items, a.batch)]
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        emb.similar(batch, k=a.k)
        times.append(time.perf_counter() - t0)
    b = min(times)
    print(f"space: {a.items:,} items x {a.dim} dims, k={a.k}")
    print(f"first query (one-off normalised copy + query): {first * 1e3:.1f} ms")
    print(f"single query, median of {a.repeat}: {statistics.median(singles) * 1e3:.2f} ms")
    print(f"batch of {a.batch:,}, best of 3: {b:.3f} s ({b / a.batch * 1e3:.3f} ms per query)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
