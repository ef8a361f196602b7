"""Approximate nearest-neighbour libraries against exact search: build time, recall@10, latency, memory.

Usage::

    .venv/bin/python bench/index_recall.py [--items 200000] [--dim 100] [--libs hnswlib,faiss,usearch]

The space is random but clustered (``--clusters`` Gaussian blobs, as trained item spaces are), so recall
is not flattered by uniform data. The oracle is likewise's exact ``top_k_search`` (BLAS brute force) on
``--queries`` items of the space, the query item itself excluded, as ``Embeddings.similar`` does. Every
library builds an HNSW graph with the same parameters (M, ef_construction) on inner product over unit
vectors, and is queried one item at a time on one thread (what a server request does) at each
``--ef`` value. Memory is the growth of this process's resident set while the index is built (VmRSS).
A library that is not installed is skipped with a note.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time

import numpy as np

from likewise.space.search import normalise_rows, top_k_search


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def clustered(n: int, dim: int, clusters: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim), dtype=np.float32)
    which = rng.integers(0, clusters, n)
    x = centres[which] + noise * rng.standard_normal((n, dim), dtype=np.float32)
    return normalise_rows(x)


class Hnswlib:
    name = "hnswlib"

    def build(self, x, m, efc, threads):
        import hnswlib

        self.idx = hnswlib.Index(space="ip", dim=x.shape[1])
        self.idx.init_index(max_elements=len(x), M=m, ef_construction=efc, random_seed=0)
        self.idx.add_items(x, np.arange(len(x)), num_threads=threads)

    def set_ef(self, ef):
        self.idx.set_ef(ef)

    def query(self, q, k):
        labels, _ = self.idx.knn_query(q, k=k, num_threads=1)
        return labels[0]


class Faiss:
    name = "faiss"

    def build(self, x, m, efc, threads):
        import faiss

        faiss.omp_set_num_threads(threads)
        self.faiss = faiss
        self.idx = faiss.IndexHNSWFlat(x.shape[1], m, faiss.METRIC_INNER_PRODUCT)
        self.idx.hnsw.efConstruction = efc
        self.idx.add(x)
        faiss.omp_set_num_threads(1)

    def set_ef(self, ef):
        self.idx.hnsw.efSearch = ef

    def query(self, q, k):
        _, labels = self.idx.search(q, k)
        return labels[0]


class Usearch:
    name = "usearch"

    def build(self, x, m, efc, threads):
        from usearch.index import Index

        self.idx = Index(ndim=x.shape[1], metric="ip", dtype="f32", connectivity=m, expansion_add=efc)
        self.idx.add(np.arange(len(x)), x, threads=threads)

    def set_ef(self, ef):
        self.idx.expansion_search = ef

    def query(self, q, k):
        return np.asarray(self.idx.search(q[0], k, threads=1).keys)


LIBS = {"hnswlib": Hnswlib, "faiss": Faiss, "usearch": Usearch}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--items", type=int, default=200_000)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--clusters", type=int, default=1000)
    p.add_argument("--noise", type=float, default=1.0, help="blob spread relative to the centres")
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--m", type=int, default=16)
    p.add_argument("--ef-construction", type=int, default=100)
    p.add_argument("--ef", default="32,64,128")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--libs", default="hnswlib,faiss,usearch")
    a = p.parse_args()

    x = clustered(a.items, a.dim, a.clusters, a.noise, seed=0)
    rng = np.random.default_rng(1)
    qids = rng.choice(a.items, a.queries, replace=False).astype(np.int64)
    t0 = time.perf_counter()
    truth, _ = top_k_search(x, x[qids], a.k, np.arange(a.queries), qids)
    exact_ms = (time.perf_counter() - t0) * 1000 / a.queries
    t0 = time.perf_counter()
    for q in qids[:50]:
        top_k_search(x, x[q : q + 1], a.k, np.zeros(1, np.int64), np.array([q]))
    exact_one_ms = (time.perf_counter() - t0) * 1000 / 50
    print(f"space: {a.items:,} x {a.dim} clustered ({a.clusters} blobs), {a.queries} queries, k={a.k}")
    print(f"exact top_k_search: {exact_one_ms:.2f} ms/query one at a time, {exact_ms:.3f} ms/query batched")
    print(f"HNSW M={a.m} ef_construction={a.ef_construction}, build threads={a.threads}, query threads=1\n")
    head = ("library", "build s", "MiB", "ef", "recall@10", "ms/query", "p99 ms")
    print("{:<9} {:>8} {:>6} {:>5} {:>9} {:>9} {:>7}".format(*head))
    for name in a.libs.split(","):
        lib = LIBS[name]()
        gc.collect()
        before = rss_mib()
        t0 = time.perf_counter()
        try:
            lib.build(x, a.m, a.ef_construction, a.threads)
        except ImportError as e:
            print(f"{name:<9} not installed ({e})")
            continue
        build = time.perf_counter() - t0
        mem = rss_mib() - before
        for ef in (int(e) for e in a.ef.split(",")):
            lib.set_ef(ef)
            hits, lat = 0, []
            for row, q in enumerate(qids):
                t0 = time.perf_counter()
                got = lib.query(x[q : q + 1], a.k + 1)
                lat.append(time.perf_counter() - t0)
                got = [g for g in got.tolist() if g != q][: a.k]
                hits += len(set(got) & set(truth[row].tolist()))
            lat_ms = sorted(t * 1000 for t in lat)
            print(
                f"{name:<9} {build:8.1f} {mem:6.0f} {ef:5d} {hits / truth.size:9.4f} "
                f"{statistics.median(lat_ms):9.3f} {lat_ms[int(0.99 * len(lat_ms))]:7.3f}"
            )
        del lib
    return 0


if __name__ == "__main__":
    sys.exit(main())
