"""Incremental update vs full retrain: held-out HR@10 and seconds.

``python bench/retail_update.py --customers 3000 --products 600 --seed 11``

Time splits the generated log: the first 70 % (without 30 products launched later) trains the base
space; the next 20 % is the new log; the last 10 % is held out. Compared on basket completion HR@10
over the held-out orders (one product hidden per order; products a space does not know count as
misses): the base space alone, ``likewise.retail.update.update(base, new log)``, and a full retrain on
base + new log with the same settings. Seconds are wall time of the training step only (log reading
excluded for both); the co-count baseline counts base + new log.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from likewise import retail
from likewise.baselines.counts import fit_baselines
from likewise.data.datasets import retail_orders, write_retail
from likewise.evaluate import EmbeddingRecommender
from likewise.retail.update import update


def hit_rate(emb, test, rng_seed=0, k=10):
    """HR@k of basket completion on ``test`` orders; targets unknown to ``emb`` count as misses."""
    rng = np.random.default_rng(rng_seed)
    keys = np.asarray(test.item_keys, dtype=object)
    ctx, tgt = [], []
    for b in np.unique(test.basket):
        items = list(dict.fromkeys(keys[test.item[test.basket == b]]))
        if len(items) < 2:
            continue
        j = int(rng.integers(len(items)))
        tgt.append(items.pop(j))
        ctx.append(items)
    rec = EmbeddingRecommender(emb)
    index = emb.vocab.index
    ctx_ids = [np.array([index[x] for x in c if x in index], dtype=np.int64) for c in ctx]
    top = rec.recommend_ids(ctx_ids, k)
    tid = np.array([index.get(t, -1) for t in tgt])
    return float(np.mean((top == tid[:, None]).any(axis=1) & (tid >= 0))), ctx_ids, tid


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--customers", type=int, default=3_000)
    p.add_argument("--products", type=int, default=600)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--epochs", type=int, default=10)
    args = p.parse_args()
    data = retail_orders(args.customers, args.products, seed=args.seed)
    launched = np.random.default_rng(0).choice(np.arange(50, args.products * 2 // 3), 30, replace=False)
    t1, t2 = np.quantile(data.timestamp, [0.7, 0.9])
    new = np.isin(data.product_id, launched)
    settings = dict(dim=args.dim, epochs=args.epochs, min_count=1, sample=0, deterministic=True, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_retail(data.subset((data.timestamp < t1) & ~new), tmp / "base", formats=("parquet",))
        write_retail(
            data.subset((data.timestamp >= t1) & (data.timestamp < t2)), tmp / "new", formats=("parquet",)
        )
        write_retail(
            data.subset(((data.timestamp < t1) & ~new) | ((data.timestamp >= t1) & (data.timestamp < t2))),
            tmp / "all",
            formats=("parquet",),
        )
        write_retail(data.subset(data.timestamp >= t2), tmp / "test", formats=("parquet",))
        test = retail.read_order_log(tmp / "test" / "orders.parquet", time_col="timestamp")
        base = retail.train_from_log(tmp / "base" / "orders.parquet", time_col="timestamp", **settings)
        base.save(tmp / "m0")
        t = time.perf_counter()
        upd = update(tmp / "m0", tmp / "new" / "orders.parquet")
        t_upd = upd.meta["update"]["seconds"]
        wall_upd = time.perf_counter() - t
        all_log = retail.read_order_log(tmp / "all" / "orders.parquet", time_col="timestamp")
        t = time.perf_counter()
        full = retail.fit_order_log(all_log, **settings)
        t_full = time.perf_counter() - t
    rows = []
    for name, emb, secs in (
        ("base only", base, base.meta["train_seconds"]),
        ("update", upd, t_upd),
        ("full retrain", full, t_full),
    ):
        hr, ctx, tid = hit_rate(emb, test)
        rows.append((name, hr, secs, len(emb)))
    # co-count on base + new orders, in the full model's ids
    lut = np.array([full.vocab.index.get(k, -1) for k in all_log.item_keys])
    ids, off = retail.log_codes(all_log, lut)
    seqs = [ids[a:b] for a, b in zip(off[:-1], off[1:], strict=True)]
    cc = fit_baselines(seqs, len(full), which=("cocount",))["cocount"]
    _, ctx, tid = hit_rate(full, test)
    hr_cc = float(np.mean((cc.recommend_ids(ctx, 10) == tid[:, None]).any(axis=1) & (tid >= 0)))
    print(
        f"{data.n_lines:,} lines; base {int(np.sum((data.timestamp < t1) & ~new)):,}, new log "
        f"{int(np.sum((data.timestamp >= t1) & (data.timestamp < t2))):,}, held out {len(test):,} lines; "
        f"30 products launched in the new period"
    )
    print(f"{'space':<14}{'HR@10':>8}{'train s':>10}{'products':>10}")
    for name, hr, secs, n in rows:
        print(f"{name:<14}{hr:>8.3f}{secs:>10.2f}{n:>10}")
    print(f"{'cocount':<14}{hr_cc:>8.3f}{'-':>10}{len(full):>10}")
    print(
        f"update / full retrain: HR@10 {rows[1][1] / rows[2][1]:.3f}, seconds {rows[1][2] / rows[2][2]:.3f} "
        f"(update wall time incl. load, read and save: {wall_upd:.2f} s)"
    )


if __name__ == "__main__":
    main()
