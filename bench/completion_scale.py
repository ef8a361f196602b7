"""Completion at every catalogue size: default training on 10 k to 1 M items, peak memory and latency.

``python bench/completion_scale.py --items 10000,100000`` (``--items 1000000`` for the largest row; each
size runs in its own process, so each peak is that size's alone).

For each catalogue size a generated basket set (``--baskets-per-item`` baskets per item, at least 50,000:
items in groups of 50, Zipf popularity over the whole catalogue, a basket of 2 to 8 items drawn mostly
from one group) is trained twice with the defaults, ``likewise.train(baskets, mode="basket",
seed=1)``: once as is (the item-item model fitted beside the vectors, over the most frequent
``completion_max_items`` items when the catalogue is larger, and a tail of the other items seen
``completion_min_count`` times or more, at most 65,536) and once with ``completion="affinity"``
(no item-item model), so the item-item model's share of time and memory is the difference. Printed per
size: wall time of training, peak RSS of the process (``VmHWM``), which completion training kept and
why, the saved model's bytes of item-item weights, and the p50 / p99 latency of a single completion
(``recommend([item], k=10)``, 300 random items of the catalogue, one thread after a warm-up).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np


def baskets(n_items: int, n_baskets: int, seed: int = 0) -> list[set[str]]:
    """Grouped Zipf baskets (see the module docstring)."""
    rng = np.random.default_rng(seed)
    group = 50
    pop = 1.0 / rng.permutation(np.arange(1, n_items + 1)) ** 0.9
    cdf = np.cumsum(pop)
    sizes = rng.integers(2, 9, size=n_baskets)
    anchor = np.minimum(np.searchsorted(cdf, rng.random(n_baskets) * cdf[-1]), n_items - 1)
    out = []
    for b in range(n_baskets):
        g = int(anchor[b]) // group
        lo = g * group
        n = int(sizes[b])
        inside = lo + rng.integers(0, min(group, n_items - lo), size=n)
        noise = rng.random(n) < 0.2
        inside[noise] = np.minimum(np.searchsorted(cdf, rng.random(int(noise.sum())) * cdf[-1]), n_items - 1)
        out.append({f"i{x}" for x in inside.tolist()} | {f"i{int(anchor[b])}"})
    return out


def peak_rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def one(n_items: int, per_item: int, completion: str) -> dict:
    """Train and query one size in this process; returns the figures."""
    import likewise

    data = baskets(n_items, max(50_000, per_item * n_items))
    t0 = time.perf_counter()
    emb = likewise.train(data, mode="basket", seed=1, completion=completion)
    secs = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    keys = emb.keys
    picks = rng.integers(len(keys), size=320)
    lat = []
    for j, i in enumerate(picks.tolist()):
        t = time.perf_counter()
        emb.recommend([keys[i]], k=10)
        if j >= 20:  # the first calls warm caches (normed table, BLAS)
            lat.append(time.perf_counter() - t)
    model = emb.itemitem
    return {
        "items": n_items,
        "vocab": len(emb),
        "baskets": len(data),
        "completion": emb.completion,
        "reason": emb.meta.get("completion_reason"),
        "train_s": secs,
        "peak_rss_mib": peak_rss_mib(),
        "itemitem_bytes": model.nbytes if model is not None else 0,
        "p50_ms": float(np.percentile(lat, 50) * 1e3),
        "p99_ms": float(np.percentile(lat, 99) * 1e3),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--items", default="10000,100000", help="comma-separated catalogue sizes")
    p.add_argument("--baskets-per-item", type=int, default=5)
    p.add_argument(
        "--completions",
        default="auto,affinity",
        help="auto: the default; affinity: without the item-item model",
    )
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)  # "items,completion": the child
    a = p.parse_args()
    if a.one:
        n, completion = a.one.split(",")
        print(json.dumps(one(int(n), a.baskets_per_item, completion)))
        return 0
    print(
        f"{'items':>9} {'completion':>11} {'train s':>8} {'peak MiB':>9} {'weights MiB':>12} "
        f"{'p50 ms':>7} {'p99 ms':>7}"
    )
    for n in (int(x) for x in a.items.split(",")):
        for completion in a.completions.split(","):
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    f"{n},{completion}",
                    "--baskets-per-item",
                    str(a.baskets_per_item),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{n:>9,} {r['completion']:>11} {r['train_s']:>8.1f} {r['peak_rss_mib']:>9.0f} "
                f"{r['itemitem_bytes'] / 2**20:>12.1f} {r['p50_ms']:>7.2f} {r['p99_ms']:>7.2f}",
                flush=True,
            )
            if completion == "auto":
                print(f"{'':>9}   {r['reason']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
