"""Query latency of likewise against faiss-cpu in the same run: exact, under concurrent load, batched, ANN.

Usage::

    .venv/bin/pip install -e '.[bench,index]'              # faiss-cpu and hnswlib
    .venv/bin/python bench/query_latency.py                 # 1 M x 100 and 1 M x 64, 16 clients (~12 min)
    .venv/bin/python bench/query_latency.py --items 100000 --seconds 3   # a quick cut

The spaces are clustered random vectors (1 000 Gaussian blobs, as bench/load_service.py), unit rows.
Every section runs likewise and its peer on the same vectors, one after the other, and prints ratios:

1. exact, one client: ``Embeddings.similar(item, k=10)`` (no index; run as the service runs it, under
   ``likewise.query_threads``, the thread policy: one BLAS thread for a single query) against faiss
   ``IndexFlatIP`` (nq=1), on ``--dim`` and on ``--exact-dim`` columns; and likewise with the policy off
   (every product on the default BLAS threads, as before the policy), the "before" column.
2. ``--clients`` threads querying at once for ``--seconds`` each, closed loop (each client sends its next
   query when the last one returns; latency is what the client sees, so p50 ~ clients / throughput):
   likewise exact with and without the policy, faiss flat, likewise with its HNSW index and faiss HNSW
   (faiss with one OpenMP thread per call, as faiss advises for concurrent callers).
3. a batch of ``--batch`` queries: likewise exact with and without the policy, faiss flat (all threads).
4. ANN: recall@10 against exact search and one-thread latency of likewise's HNSW index (hnswlib) and
   faiss ``IndexHNSWFlat``, same M and efConstruction, over a range of ef.

The spaces and both graphs are built once and cached under ``--cache`` (default
``$LIKEWISE_CACHE`` or ``~/.cache/likewise``): a first run builds two 1 M graphs (minutes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

import likewise


def clustered(items: int, dim: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((1000, dim), dtype=np.float32)
    x = centres[rng.integers(0, 1000, items)]
    x += rng.standard_normal((items, dim), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def space(cache: Path, items: int, dim: int):
    """A saved likewise space of ``items`` x ``dim`` unit rows (built once, then loaded)."""
    from likewise import Embeddings, Vocab

    path = cache / f"bench-query-{items}x{dim}"
    if not (path / "manifest.json").is_file():
        vocab = Vocab([f"i{i}" for i in range(items)], counts=np.arange(items, 0, -1, dtype=np.int64))
        Embeddings(clustered(items, dim), vocab).save(path, overwrite=True)
    return Embeddings.load(path, index=False), path


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs) * 1e3, q))


def timed(fn, queries: list[int]) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        out.append(time.perf_counter() - t0)
    return out


def concurrent(fn, n_items: int, clients: int, seconds: float) -> dict:
    """``clients`` threads calling ``fn(item)`` back to back for ``seconds``; all latencies kept."""
    lat: list[list[float]] = [[] for _ in range(clients)]
    start = threading.Barrier(clients + 1)
    stop = [0.0]

    def client(c: int) -> None:
        rng = np.random.default_rng(100 + c)
        start.wait()
        mine = lat[c]
        while time.perf_counter() < stop[0]:
            q = int(rng.integers(n_items))
            t0 = time.perf_counter()
            fn(q)
            mine.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    stop[0] = time.perf_counter() + seconds
    start.wait()
    for t in threads:
        t.join()
    flat = [x for xs in lat for x in xs]
    return {"n": len(flat), "qps": len(flat) / seconds, "p50": pct(flat, 50), "p99": pct(flat, 99)}


_POLICY = [True]


def served(fn, n_queries: int = 1):
    """``fn()`` as the service runs a query: under the BLAS policy for ``n_queries`` (likewise.query_threads),
    which the service applies at its edge; with the policy off, on the default BLAS threads."""
    if not _POLICY[0]:
        return fn()
    with likewise.query_threads(n_queries):
        return fn()


class PolicyOff:
    """Every query on the default BLAS threads (the behaviour before likewise/_threads.py)."""

    def __enter__(self):
        _POLICY[0] = False
        return self

    def __exit__(self, *exc):
        _POLICY[0] = True


def row(name: str, r: dict, ref: dict | None = None) -> str:
    ratio = f"  {r['p50'] / ref['p50']:5.2f}x p50 of likewise" if ref else ""
    return f"  {name:34s} {r['qps']:9,.0f} q/s  p50 {r['p50']:8.2f} ms  p99 {r['p99']:8.2f} ms{ratio}"


def section_exact(emb, normed: np.ndarray, faiss, repeat: int, label: str) -> None:
    rng = np.random.default_rng(1)
    qs = rng.integers(0, len(emb), repeat).tolist()
    keys = emb.keys
    flat = faiss.IndexFlatIP(normed.shape[1])
    flat.add(normed)
    emb.similar(keys[0], k=10)  # the normed copy and first-touch costs are not a query's
    faiss.omp_set_num_threads(1)
    lw = timed(lambda q: served(lambda: emb.similar(keys[q], k=10)), qs)
    with PolicyOff():
        before = timed(lambda q: served(lambda: emb.similar(keys[q], k=10)), qs)
    fs = timed(lambda q: flat.search(normed[q : q + 1], 11), qs)
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    fs_all = timed(lambda q: flat.search(normed[q : q + 1], 11), qs)
    print(f"\n1. exact top-10, one client, {label}, {repeat} queries (p50 / p99 ms)")
    for name, xs in (
        ("likewise similar (1 BLAS thread)", lw),
        ("likewise similar, policy off", before),
        ("faiss IndexFlatIP, 1 thread", fs),
        (f"faiss IndexFlatIP, {os.cpu_count()} threads", fs_all),
    ):
        print(f"  {name:36s} p50 {pct(xs, 50):7.2f}  p99 {pct(xs, 99):7.2f}  ratio to likewise "
              f"{statistics.median(xs) / statistics.median(lw):5.2f}")  # fmt: skip


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--items", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--exact-dim", type=int, default=64, help="second space, for the exact single query")
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--repeat", type=int, default=40, help="single queries per exact measurement")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--m", type=int, default=16)
    p.add_argument("--ef-construction", type=int, default=200, help="likewise index's default")
    p.add_argument("--ef", default="16,32,64,128,256,512", help="ef values of the ANN sweep")
    p.add_argument("--cache", default=None)
    a = p.parse_args()
    try:
        import faiss
    except ImportError:
        sys.exit("faiss-cpu is the peer here: .venv/bin/pip install -e '.[bench]'")
    from likewise.index import IndexParams, build_index

    cache = Path(a.cache or os.environ.get("LIKEWISE_CACHE") or Path.home() / ".cache" / "likewise")
    cache.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    print(f"items {a.items:,}; dims {a.dim} and {a.exact_dim}; cores {os.cpu_count()}; load {load:.1f}")

    # 1. exact, one client, on both widths
    emb64, _ = space(cache, a.items, a.exact_dim)
    section_exact(emb64, emb64.normed, faiss, a.repeat, f"{a.items:,} x {a.exact_dim}")
    del emb64
    emb, path = space(cache, a.items, a.dim)
    normed = emb.normed
    keys = emb.keys
    section_exact(emb, normed, faiss, a.repeat, f"{a.items:,} x {a.dim}")

    # the two graphs (cached)
    params = IndexParams(m=a.m, ef_construction=a.ef_construction, ef_search=64)
    # cached per parameters, beside the space (nothing but its own index is written inside a saved folder)
    hfolder = path.parent / f"{path.name}-hnswlib-m{a.m}-efc{a.ef_construction}"
    if (hfolder / "manifest.json").is_file():
        from likewise.index import HnswIndex

        hnsw = HnswIndex.load(hfolder, verify=False)
        hnsw.warm()
        built = "cached"
    else:
        t0 = time.perf_counter()
        hnsw = build_index(emb, params, recall_queries=0)
        hnsw.save(hfolder, overwrite=True)
        built = f"{time.perf_counter() - t0:.0f} s"
    fpath = path.parent / f"{path.name}-faiss-hnsw-m{a.m}-efc{a.ef_construction}.index"
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    if fpath.is_file():
        fh = faiss.read_index(str(fpath))
        fbuilt = "cached"
    else:
        t0 = time.perf_counter()
        fh = faiss.IndexHNSWFlat(a.dim, a.m, faiss.METRIC_INNER_PRODUCT)
        fh.hnsw.efConstruction = a.ef_construction
        fh.add(normed)
        faiss.write_index(fh, str(fpath))
        fbuilt = f"{time.perf_counter() - t0:.0f} s"
    print(f"\ngraphs, M={a.m} efConstruction={a.ef_construction}: hnswlib {built}, faiss {fbuilt}")

    # 4 first (it picks the ef used under load): recall@10 against exact, one thread, single queries
    rng = np.random.default_rng(2)
    qids = np.sort(rng.choice(a.items, 1000, replace=False))
    flat = faiss.IndexFlatIP(a.dim)
    flat.add(normed)
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    _, truth = flat.search(normed[qids], 11)
    truth = [[t for t in row if t != q][:10] for row, q in zip(truth.tolist(), qids.tolist(), strict=True)]
    faiss.omp_set_num_threads(1)
    print("\n4. ANN recall@10 (1 000 items, itself excluded) and one-thread latency (ms per query)")
    head = ("ef", "likewise recall", "p50", "p99", "faiss recall", "p50", "p99")
    print("  {:>4s}  {:>15s} {:>6s} {:>6s}   {:>12s} {:>6s} {:>6s}".format(*head))
    pick = fpick = None
    for ef in (int(x) for x in a.ef.split(",")):
        hnsw._get_graph().set_ef(ef)
        emb.attach_index(hnsw)
        got, lat = [], []
        for q in qids.tolist():
            t0 = time.perf_counter()
            got.append(emb.similar(keys[q], k=10).ids.tolist())
            lat.append(time.perf_counter() - t0)
        rec = np.mean([len(set(g) & set(t)) / 10 for g, t in zip(got, truth, strict=True)])
        fh.hnsw.efSearch = ef
        fgot, flat_lat = [], []
        for q in qids.tolist():
            t0 = time.perf_counter()
            _, ids = fh.search(normed[q : q + 1], 11)
            flat_lat.append(time.perf_counter() - t0)
            fgot.append([i for i in ids[0].tolist() if i != q][:10])
        frec = np.mean([len(set(g) & set(t)) / 10 for g, t in zip(fgot, truth, strict=True)])
        print(f"  {ef:4d}  {rec:15.4f} {pct(lat, 50):6.3f} {pct(lat, 99):6.3f}   "
              f"{frec:12.4f} {pct(flat_lat, 50):6.3f} {pct(flat_lat, 99):6.3f}")  # fmt: skip
        if pick is None and rec >= 0.95:
            pick = ef
        if fpick is None and frec >= 0.95:
            fpick = ef
    # Under load each library runs at its own first ef with recall@10 >= 0.95 (or the largest swept).
    last = int(a.ef.split(",")[-1])
    for name, got_ef in (("likewise", pick), ("faiss", fpick)):
        reached = f"ef {got_ef}, the first with recall@10 >= 0.95" if got_ef else "none reached 0.95"
        print(f"  ANN under load below, {name}: {reached}" + ("" if got_ef else f"; ef {last}"))
    pick, fpick = pick or last, fpick or last
    hnsw._get_graph().set_ef(pick)
    fh.hnsw.efSearch = fpick

    # 2. concurrent single queries
    print(f"\n2. {a.clients} clients at once, single top-10 queries, {a.seconds:.0f} s each, closed loop")
    emb.attach_index(None)
    faiss.omp_set_num_threads(1)

    def load(fn) -> dict:
        return concurrent(fn, a.items, a.clients, a.seconds)

    exact = load(lambda q: served(lambda: emb.similar(keys[q], k=10)))
    print(row("likewise exact (policy)", exact))
    with PolicyOff():
        print(
            row(
                "likewise exact, policy off",
                load(lambda q: served(lambda: emb.similar(keys[q], k=10))),
                exact,
            )
        )
    print(row("faiss IndexFlatIP, 1 thread/call", load(lambda q: flat.search(normed[q : q + 1], 11)), exact))
    emb.attach_index(hnsw)
    ann = load(lambda q: served(lambda: emb.similar(keys[q], k=10)))
    print(row(f"likewise HNSW index, ef {pick}", ann))
    print(row(f"faiss IndexHNSWFlat, ef {fpick}", load(lambda q: fh.search(normed[q : q + 1], 11)), ann))
    emb.attach_index(None)

    # 3. a batch
    batch = [keys[q] for q in rng.integers(0, a.items, a.batch).tolist()]
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    res = {}
    for name, fn in (
        ("likewise exact (policy)", lambda: served(lambda: emb.similar(batch, k=10), len(batch))),
        ("likewise exact, policy off", lambda: served(lambda: emb.similar(batch, k=10), len(batch))),
        ("faiss IndexFlatIP", lambda: flat.search(normed[[int(k[1:]) for k in batch]], 11)),
    ):
        with PolicyOff() if "off" in name else _null():
            ts = []
            for _ in range(2):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
        res[name] = min(ts)
    print(f"\n3. one batch of {a.batch} queries, all cores, best of 2")
    base = res["likewise exact (policy)"]
    for name, t in res.items():
        print(f"  {name:34s} {t:7.2f} s  {a.batch / t:9,.0f} q/s  time ratio to likewise {t / base:5.2f}")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    return 0


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


if __name__ == "__main__":
    sys.exit(main())
