"""How fast the retail generator writes an order log: ``python bench/retail_generate.py --customers 30000``.

Generates the order lines (numpy, vectorised), then writes Parquet and CSV plus the catalogue, in one
process, and prints lines, seconds per step and peak memory.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchutil import peak_rss_mib

from likewise.data.datasets import retail_orders, write_retail


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--customers", type=int, default=30_000)
    p.add_argument("--products", type=int, default=5_000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    t0 = time.perf_counter()
    data = retail_orders(args.customers, args.products, seed=args.seed)
    t_gen = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t1 = time.perf_counter()
        write_retail(data, Path(tmp) / "shop")
        t_write = time.perf_counter() - t1
        sizes = {f.name: f.stat().st_size for f in (Path(tmp) / "shop").iterdir()}
    print(f"lines      {data.n_lines:,} ({args.customers:,} customers, {args.products:,} products)")
    print(f"generate   {t_gen:.2f} s ({data.n_lines / t_gen:,.0f} lines/s)")
    print(
        f"write      {t_write:.2f} s (parquet {sizes['orders.parquet'] / 2**20:.1f} MiB, "
        f"csv {sizes['orders.csv'] / 2**20:.1f} MiB)"
    )
    print(f"total      {t_gen + t_write:.2f} s, peak RSS {peak_rss_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
