"""Why the seed demo trains with negative=2 for 15 epochs: wrong top-3 neighbours across settings.

Usage::

    .venv/bin/python bench/demo_sweep.py [--seeds 12] [--negative 1,2,5] [--epochs 8,15,20,30]

For each setting, trains the demo (400 baskets, dim 8, basket mode, deterministic) on each seed and
counts, over all 15 products, the top-3 neighbours from another department.
"""

from __future__ import annotations

import argparse
import sys

from likewise.data.datasets import demo_baskets, demo_labels
from likewise.training.train import train


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=12)
    p.add_argument("--negative", default="1,2,5")
    p.add_argument("--epochs", default="8,15,20,30")
    a = p.parse_args()
    labels = demo_labels()
    print(f"{'negative':>8} {'epochs':>6}  wrong top-3 neighbours over 15 products x {a.seeds} seeds")
    for neg in map(int, a.negative.split(",")):
        for epochs in map(int, a.epochs.split(",")):
            wrong = 0
            for seed in range(a.seeds):
                emb = train(
                    demo_baskets(400, seed=seed),
                    mode="basket",
                    dim=8,
                    negative=neg,
                    sample=0.0,
                    min_count=1,
                    epochs=epochs,
                    lr=0.025,
                    seed=seed,
                    deterministic=True,
                )
                res = emb.similar(list(emb.keys), k=3)
                wrong += sum(
                    labels[x] != labels[q] for q, row in zip(emb.keys, res.keys, strict=True) for x in row
                )
            print(f"{neg:>8} {epochs:>6}  {wrong}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
