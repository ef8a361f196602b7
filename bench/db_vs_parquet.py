"""Training from a PostgreSQL query against training from the same rows in a Parquet file.

Usage::

    .venv/bin/pip install -e '.[dev]'          # adbc-driver-postgresql; pg_ctl/initdb of PostgreSQL
    .venv/bin/python bench/db_vs_parquet.py [--rows 10000000] [--epochs 1] [--out /tmp/likewise-bench]

Writes a seeded order log (``order_id, customer_id, product_id, ordered_at``; ``--rows`` lines, about 5
per order, Zipf-popular products) to Parquet, starts a PostgreSQL server on loopback (as
``tests/test_sources.py`` does: ``pg_ctl``, as the ``postgres`` user under root) and loads the same
rows into a table with ADBC. Then, each in a fresh process with a fresh corpus cache, trains the same
space (``--dim``, ``--epochs``, basket mode, one seed) from the Parquet file and from
``SELECT ... FROM orders``, and prints the wall time of reading (the corpus compiled) and of the whole
run (read + train), the peak RSS, and the ratios query / Parquet. Both runs read through the one log
reader: the query's rows are streamed once into a Parquet copy first, which is the difference measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchutil import peak_rss_mib

ROOT = Path(__file__).resolve().parent.parent
COLS = {"basket_col": "order_id", "item_col": "product_id"}
QUERY = "SELECT order_id, customer_id, product_id, ordered_at FROM orders"


def make_log(path: Path, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    order = np.sort(rng.integers(0, rows // 5, rows))
    table = pa.table(
        {
            "order_id": order,
            "customer_id": order % 200_000,
            "product_id": np.minimum(rng.zipf(1.3, rows), 50_000),
            "ordered_at": pa.array((1_600_000_000 + order * 60) * 1_000_000, pa.timestamp("us")),
        }
    )
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp)
    tmp.replace(path)


def run_one(source: str, args: argparse.Namespace) -> dict:
    from likewise.data.corpus import build_corpus
    from likewise.readers import InputSpec
    from likewise.training.train import TrainConfig, train

    spec = (
        InputSpec(sql=QUERY, uri=args.uri, **COLS) if source == "postgresql" else InputSpec(args.log, **COLS)
    )
    # the vectors alone: the item-item completion fit (EASE) is the same work for both and not reading
    config = TrainConfig(
        dim=args.dim, epochs=args.epochs, mode="basket", seed=1, min_count=1, completion="affinity"
    )
    with tempfile.TemporaryDirectory() as cache:
        t0 = time.perf_counter()
        corpus = build_corpus(spec, min_count=1, cache_dir=cache)
        t1 = time.perf_counter()
        train(corpus, config, progress=False)
        t2 = time.perf_counter()
        return {
            "source": source,
            "read_s": t1 - t0,
            "total_s": t2 - t0,
            "peak_mib": peak_rss_mib(),
            "tokens": corpus.n_tokens,
            "baskets": corpus.n_sequences,
        }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--runs", type=int, default=1, help="pairs of runs; the ratios are of their medians")
    p.add_argument("--out", default="/tmp/likewise-bench")
    p.add_argument("--only", default=None, help=argparse.SUPPRESS)
    p.add_argument("--uri", default=None, help=argparse.SUPPRESS)
    p.add_argument("--log", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.only:
        print(json.dumps(run_one(a.only, a)), flush=True)
        return 0
    sys.path.insert(0, str(ROOT / "tests"))
    from _servers import postgres_missing, postgres_server

    if postgres_missing():
        raise SystemExit(f"db_vs_parquet: {postgres_missing()}")

    log = Path(a.out) / f"orders-{a.rows}.parquet"
    log.parent.mkdir(parents=True, exist_ok=True)
    if not log.exists():
        make_log(log, a.rows)
    print(f"log: {log} ({log.stat().st_size / 2**20:.0f} MiB, {a.rows:,} rows)", flush=True)
    with postgres_server() as uri:
        import adbc_driver_postgresql.dbapi as pg
        import pyarrow.parquet as pq

        t0 = time.perf_counter()
        with pg.connect(uri) as con, con.cursor() as cur:
            cur.adbc_ingest("orders", pq.read_table(log), mode="create")
            con.commit()
        print(f"loaded into PostgreSQL in {time.perf_counter() - t0:.1f} s", flush=True)
        base = [sys.executable, __file__, "--epochs", str(a.epochs), "--dim", str(a.dim)]
        base += ["--uri", uri, "--log", str(log)]
        runs: dict[str, list[dict]] = {"parquet": [], "postgresql": []}
        for i in range(a.runs):  # alternating which goes first, so a busy spell falls on both
            for source in ("parquet", "postgresql")[:: 1 if i % 2 == 0 else -1]:
                out = subprocess.run([*base, "--only", source], capture_output=True, text=True, check=True)
                runs[source].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"{'source':12s} {'read':>9s} {'read+train':>11s} {'peak RSS':>10s}")
    for each in runs.values():
        for r in each:
            print(f"{r['source']:12s} {r['read_s']:7.1f} s {r['total_s']:9.1f} s {r['peak_mib']:6.0f} MiB")
    keys = ("read_s", "total_s", "peak_mib", "tokens", "baskets")
    med = {s: {k: statistics.median(r[k] for r in rs) for k in keys} for s, rs in runs.items()}
    q, f = med["postgresql"], med["parquet"]
    assert q["tokens"] == f["tokens"] and q["baskets"] == f["baskets"], (q, f)
    print(
        f"postgresql / parquet (medians of {a.runs}): read {q['read_s'] / f['read_s']:.2f}x, read+train "
        f"{q['total_s'] / f['total_s']:.2f}x, peak RSS {q['peak_mib'] / f['peak_mib']:.2f}x "
        f"({f['tokens']:,} lines, {f['baskets']:,} baskets, dim {a.dim}, {a.epochs} epoch(s))"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
