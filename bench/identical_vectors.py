"""Hashes of the arrays deterministic training writes, one per way into training: a refactor's check.

Each configuration trains with ``deterministic=True`` (one thread, fixed seed) on small generated data
and saves the space; the script prints a SHA-256 per saved array (vectors, context table, item-item
model, customers, next-basket weights). Run it before and after a change to the training path and
compare: ``--write before.json`` on the old code, ``--compare before.json`` on the new one (exit 1 and
the differing arrays when any hash changed). The hashes depend on the machine and the numba version, so
compare runs on one machine only; this is a tool, not a test.

    python bench/identical_vectors.py --write /tmp/before.json
    python bench/identical_vectors.py --compare /tmp/before.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import likewise
from likewise.data.datasets import demo_baskets, retail_orders, write_retail
from likewise.data.eventdata import shop_events, write_shop_events

DET = {"deterministic": True, "seed": 3, "backend": "cpu", "progress": False}
TORCH = {**DET, "backend": "torch", "device": "cpu"}
SMALL = {"dim": 8, "epochs": 2, "min_count": 1, **DET}
LOG = {"basket_col": "order_id", "item_col": "product_id"}
TYPES = "view=product,purchase=product,campaign_open=campaign,article_read=article"


def _hashes(folder: Path) -> dict[str, str]:
    """SHA-256 of every ``.npy`` array of a saved space (the manifest holds timings, so it is left out)."""
    out = {}
    for path in sorted(folder.rglob("*.npy")):
        data = np.load(path, allow_pickle=False)
        out[str(path.relative_to(folder))] = hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest()
    return out


def _configs(tmp: Path) -> dict[str, Callable[[], Any]]:
    shop = write_retail(retail_orders(300, 120, seed=1), tmp / "shop", formats=("parquet", "csv"))
    events = write_shop_events(shop_events(200, 130, seed=2), tmp / "events")
    orders = Path(shop["path"]) / "orders.parquet"
    csv = Path(shop["path"]) / "orders.csv"
    text = tmp / "text.txt"
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(60)]
    text.write_text("\n".join(" ".join(rng.choice(words, 12)) for _ in range(400)) + "\n")
    baskets = demo_baskets(300, seed=1)
    evcsv = Path(events["path"]) / "events.csv"
    items_csv = Path(events["path"]) / "items.csv"

    def matrix() -> Any:
        import scipy.sparse as sp

        m = sp.random(80, 40, density=0.1, random_state=4, format="csr")
        return likewise.train(m, dim=8, epochs=2, user_keys=[f"u{i}" for i in range(80)], **DET)

    def table() -> Any:
        import pyarrow.parquet as pq

        return likewise.train(
            pq.read_table(orders), dim=8, epochs=2, basket_col="order_id", item_col="product_id", **DET
        )

    def cli(*argv: str) -> Any:
        from likewise.cli import main as cli_main

        out = tmp / "cli" / str(len(list((tmp / "cli").glob("*"))) if (tmp / "cli").exists() else 0)
        det = ["--deterministic", "--seed", "3", "--backend", "cpu", "--quiet", "--dim", "8", "--epochs", "2"]
        assert cli_main(["train", *argv, *det, "-o", str(out)]) in (0, None)
        return likewise.load(out)

    def update() -> Any:
        from likewise.retail.update import update as update_space

        first = tmp / "first.parquet"
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        # Split at a time, not a row: an update adds whole, newer orders (it refuses repeated or older ones).
        log = pq.read_table(orders).sort_by([("timestamp", "ascending"), ("order_id", "ascending")])
        cut = log.column("timestamp")[log.num_rows // 2]
        pq.write_table(log.filter(pc.less(log.column("timestamp"), cut)), first)
        pq.write_table(log.filter(pc.greater_equal(log.column("timestamp"), cut)), tmp / "second.parquet")
        emb = likewise.train(
            str(first),
            dim=8,
            epochs=2,
            basket_col="order_id",
            item_col="product_id",
            user_col="customer_id",
            time_col="timestamp",
            **DET,
        )
        return update_space(emb, str(tmp / "second.parquet"))

    return {
        "cli-text": lambda: cli(str(text), "--min-count", "1"),
        "cli-order-log": lambda: cli(
            str(orders), "--basket-col", "order_id", "--item-col", "product_id", "--user-col", "customer_id",
            "--time-col", "timestamp",
        ),
        "update": update,
        "torch-baskets": lambda: likewise.train(
            baskets, mode="basket", dim=8, epochs=2, min_count=1, **TORCH
        ),
        "text-sequence": lambda: likewise.train(str(text), dim=8, epochs=2, min_count=1, **DET),
        "text-simple-tokens": lambda: likewise.train(str(text), dim=8, epochs=1, tokenize="simple", **DET),
        "baskets-in-memory": lambda: likewise.train(baskets, mode="basket", **SMALL),
        "sets-in-memory": lambda: likewise.train([set(b) for b in baskets], **SMALL),
        "log-csv": lambda: likewise.train(str(csv), dim=8, epochs=2, **LOG, **DET),
        "log-auto-epochs": lambda: likewise.train(
            str(orders), dim=8, epochs="auto", basket_col="order_id", item_col="product_id", **DET
        ),
        "table": table,
        "matrix-users": matrix,
        "order-log-customers": lambda: likewise.train(
            str(orders), dim=8, epochs=2, basket_col="order_id", item_col="product_id",
            user_col="customer_id", time_col="timestamp", **DET,
        ),
        "order-log-sessions": lambda: likewise.train(
            str(orders), dim=8, epochs=2, basket_col="order_id", item_col="product_id",
            user_col="customer_id", time_col="timestamp", sessions="30m", mode="sequence", **DET,
        ),
        "typed-log": lambda: likewise.train(
            str(evcsv), dim=8, epochs=2, basket_col="session_id", item_col="item_id", user_col="customer_id",
            type_col="event", type_map=TYPES,
            typed_negatives=True, **DET,
        ),
        "item-attrs": lambda: likewise.train(
            str(orders), dim=8, epochs=2, basket_col="order_id", item_col="product_id",
            user_col="customer_id", item_attrs=str(items_csv), **DET,
        ),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":  # sets of str iterate in hash order: fix it
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", help="save the hashes to this JSON file")
    p.add_argument("--compare", help="compare with hashes saved by --write; exit 1 on a difference")
    p.add_argument("--only", help="comma-separated configuration names")
    args = p.parse_args(argv)
    result: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="likewise-ident-") as tmp_name:
        tmp = Path(tmp_name)
        configs = _configs(tmp)
        names = args.only.split(",") if args.only else list(configs)
        for name in names:
            t0 = time.perf_counter()
            emb = configs[name]()
            emb.save(tmp / "out" / name)
            result[name] = _hashes(tmp / "out" / name)
            why = emb.meta.get("epochs_reason")
            print(f"{name}: {why}; {len(result[name])} arrays, {time.perf_counter() - t0:.1f} s", flush=True)
    if args.write:
        Path(args.write).write_text(json.dumps(result, indent=1, sort_keys=True))
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        bad = []
        for name, arrays in result.items():
            for array in sorted({**before.get(name, {}), **arrays}):
                if before.get(name, {}).get(array) != arrays.get(array):
                    bad.append(f"{name}/{array}")
        print("identical" if not bad else "DIFFERENT: " + ", ".join(bad))
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
