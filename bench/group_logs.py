"""Group an unsorted transaction log into baskets: likewise's reader vs pyarrow, polars and DuckDB.

Usage::

    .venv/bin/pip install -e '.[bench]'       # polars and duckdb (bench-only dependencies)
    .venv/bin/python bench/group_logs.py [--rows 5000000] [--out /tmp/likewise-bench]

Writes a seeded, unsorted ``order_id,customer_id,product_id,ts`` CSV (cached in ``--out``), then runs
each method in a fresh process and prints wall time and peak RSS. likewise does the whole job (count,
vocabulary, ids, group, write the compiled corpus); the peers only group. Methods whose package is
not installed are skipped with a note.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from benchutil import peak_rss_mib

METHODS = ["likewise", "likewise-32MiB", "pyarrow", "polars", "polars-streaming", "duckdb"]


def make_log(path: Path, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(0)
    order = rng.integers(0, rows // 5, rows)
    table = pa.table(
        {
            "order_id": order,
            "customer_id": order % 200_000,
            "product_id": np.minimum(rng.zipf(1.3, rows), 50_000),
            "ts": rng.integers(1_600_000_000, 1_700_000_000, rows),
        }
    )
    tmp = path.with_suffix(".tmp")
    pcsv.write_csv(table, tmp)
    tmp.replace(path)


def run_one(method: str, path: str) -> str:
    t0 = time.perf_counter()
    if method.startswith("likewise"):
        import shutil
        import tempfile

        from likewise import readers
        from likewise.data.corpus import build_corpus

        if method == "likewise-32MiB":
            readers.log.GROUP_MEMORY_BUDGET = 32 * 2**20  # force many spill files (read in readers.log)
        d = tempfile.mkdtemp()
        spec = readers.InputSpec(path, basket_col="order_id", item_col="product_id", order_col="ts")
        c = build_corpus(spec, cache_dir=d)
        n_b, n_t = c.n_sequences, c.n_tokens
        shutil.rmtree(d)
    elif method == "pyarrow":
        import numpy as np
        import pyarrow.csv as pcsv

        opts = pcsv.ConvertOptions(include_columns=["order_id", "product_id", "ts"])
        t = pcsv.read_csv(path, convert_options=opts).sort_by(
            [("order_id", "ascending"), ("ts", "ascending")]
        )
        b = t.column("order_id").to_numpy()
        n_b, n_t = int(np.count_nonzero(np.r_[True, b[1:] != b[:-1]])), t.num_rows
    elif method.startswith("polars"):
        import polars as pl

        q = pl.scan_csv(path).group_by("order_id").agg(pl.col("product_id").sort_by("ts"))
        out = q.collect(engine="streaming") if method == "polars-streaming" else q.collect()
        n_b, n_t = out.height, int(out["product_id"].list.len().sum())
    elif method == "duckdb":
        import duckdb
        import pyarrow.compute as pc

        sql = (
            "SELECT order_id, list(product_id ORDER BY ts) AS items "
            f"FROM read_csv('{path}') GROUP BY order_id"
        )
        out = duckdb.connect().sql(sql).to_arrow_table()
        n_b, n_t = out.num_rows, pc.sum(pc.list_value_length(out.column("items"))).as_py()
    else:
        raise SystemExit(f"unknown method {method!r}")
    secs = time.perf_counter() - t0
    return f"{method:18s} {secs:7.2f} s {peak_rss_mib():8.0f} MiB   {n_b:,} baskets, {n_t:,} rows"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=5_000_000)
    p.add_argument("--out", default="/tmp/likewise-bench")
    p.add_argument("--only", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    log = Path(a.out) / f"log-{a.rows}.csv"
    if a.only:
        print(run_one(a.only, str(log)), flush=True)
        return 0
    log.parent.mkdir(parents=True, exist_ok=True)
    if not log.exists():
        make_log(log, a.rows)
    print(f"log: {log} ({log.stat().st_size / 2**20:.0f} MiB, {a.rows:,} rows, unsorted)")
    print(f"{'method':18s} {'wall':>9s} {'peak RSS':>12s}")
    for m in METHODS:
        mod = {"likewise-32MiB": "likewise", "polars-streaming": "polars"}.get(m, m)
        probe = subprocess.run([sys.executable, "-c", f"import {mod}"], capture_output=True)
        if probe.returncode != 0:
            print(f"{m:18s} skipped: {mod} is not installed (pip install -e '.[bench]')")
            continue
        r = subprocess.run([sys.executable, __file__, "--rows", str(a.rows), "--out", a.out, "--only", m])
        if r.returncode != 0:
            print(f"{m:18s} failed with status {r.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
