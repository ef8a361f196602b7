"""Retail evidence on generated data: the model against count baselines, and lookalike precision.

``python bench/retail_evidence.py --customers 2000 --products 600 --seed 5``

* Each customer's last order is held out (customers with >= 2 orders); the model and the baselines see
  only the other orders.
* Basket completion HR@10: one product of each held-out order is hidden, the rest is the query.
* for_customer HR@10: a product of the held-out order the customer had not bought before; the model
  queries with the customer vector, the baselines with the customer's earlier purchases.
* Lookalike precision@100: 50 seeds of one hidden taste (department); the share of the 100 customers
  returned with that taste, averaged over the 8 tastes; chance is the taste's share.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from likewise import retail
from likewise.data.datasets import retail_orders, write_retail


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--customers", type=int, default=2_000)
    p.add_argument("--products", type=int, default=600)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--epochs", type=int, default=10)
    args = p.parse_args()
    data = retail_orders(args.customers, args.products, seed=args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        write_retail(data, Path(tmp) / "shop", formats=("parquet",))
        log = retail.read_order_log(Path(tmp) / "shop" / "orders.parquet", time_col="timestamp")
    train_log, test_log = retail.split_last_order(log)
    t0 = time.perf_counter()
    emb = retail.fit_order_log(
        train_log, dim=args.dim, epochs=args.epochs, min_count=1, sample=0, deterministic=True, seed=1
    )
    secs = time.perf_counter() - t0
    hr = retail.holdout_hit_rates(emb, train_log, test_log, k=10, baselines=("popular", "cocount", "ppmi"))
    print(
        f"{data.n_lines:,} lines, {len(train_log):,} train / {len(test_log):,} held out; "
        f"trained in {secs:.1f} s (dim {args.dim}, {args.epochs} epochs, basket mode)"
    )
    methods = ["popular", "cocount", "ppmi", "likewise"]
    print(f"{'HR@10':<20}" + "".join(f"{m:>10}" for m in methods) + f"{'n':>8}")
    for task in ("complete", "for_customer"):
        row = hr[task]
        print(f"{task:<20}" + "".join(f"{row[m]:>10.3f}" for m in methods) + f"{int(row['n']):>8}")
    print(
        f"likewise / cocount: complete {hr['complete']['likewise'] / hr['complete']['cocount']:.3f}, "
        f"for_customer {hr['for_customer']['likewise'] / hr['for_customer']['cocount']:.3f}"
    )
    tastes = data.customer_tastes()
    for method in ("centroid", "knn"):
        got = retail.lookalike_precision(emb, tastes, n_seeds=50, k=100, method=method)
        print(
            f"lookalike precision@100 ({method}): {got['precision']:.3f} (chance {got['chance']:.3f}, "
            f"{got['labels']} tastes)"
        )


if __name__ == "__main__":
    main()
