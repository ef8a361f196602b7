"""The explorer's second projection: openTSNE (what the server runs) beside scikit-learn's TSNE and UMAP.

Generates the retail shop (``likewise.data.datasets.retail_orders``, 2 000 customers, 600 products), trains it
(basket mode, 100 dims, seed 0), and times, on the products' unit vectors, each library that is installed
(scikit-learn and umap-learn are not in any extra: ``pip install scikit-learn umap-learn`` to compare),
then ``likewise.service.projection.tsne`` on ``--clustered`` random clustered unit vectors (the default
``--map-sample`` is 3 000). Each library runs in a fresh process, so its import is timed too. For each
map it prints the share of items whose 10 nearest on the map are mostly of their own department (PCA
for comparison), a measure of the "blobs" the issue saw. openTSNE is imported inside the call, so its
import is in its fit time::

    .venv/bin/python bench/explorer_projection.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

_RUN = r"""
import json, sys, time
import numpy as np
x = np.load(sys.argv[1]); which = sys.argv[2]
t0 = time.perf_counter()
if which == "openTSNE":
    from likewise.service.projection import tsne
    t1 = time.perf_counter(); xy = tsne(x)
elif which == "scikit-learn":
    from sklearn.manifold import TSNE
    t1 = time.perf_counter(); xy = TSNE(2, init="pca", metric="cosine", random_state=0).fit_transform(x)
elif which == "umap-learn":
    import umap
    t1 = time.perf_counter(); xy = umap.UMAP(metric="cosine", random_state=0).fit_transform(x)
elif which == "pca":
    from likewise.service.projection import pca
    t1 = time.perf_counter(); xy = pca(x)[0]
t2 = time.perf_counter()
np.save(sys.argv[3], xy)
print(json.dumps({"import_s": t1 - t0, "fit_s": t2 - t1}))
"""

_MODULE = {"openTSNE": "openTSNE", "scikit-learn": "sklearn", "umap-learn": "umap", "pca": "numpy"}


def _installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(_MODULE[name]) is not None


def _time(x: np.ndarray, which: str, tmp: Path) -> tuple[dict, np.ndarray]:
    np.save(tmp / "x.npy", x)
    out = subprocess.run(
        [sys.executable, "-c", _RUN, str(tmp / "x.npy"), which, str(tmp / "xy.npy")],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1]), np.load(tmp / "xy.npy")


def _purity(xy: np.ndarray, groups: list[str], k: int = 10) -> float:
    """Share of items whose k nearest on the map are mostly of their own group."""
    d = ((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    near = np.argsort(d, axis=1)[:, :k]
    g = np.asarray(groups)
    return float(np.mean((g[near] == g[:, None]).mean(axis=1) > 0.5))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clustered", type=int, default=3000, help="items of the clustered set (0: skip)")
    args = ap.parse_args()
    import likewise
    from likewise.data.datasets import retail_orders

    data = retail_orders(2000, 600, seed=0)
    emb = likewise.train(data.orders(), mode="basket", dim=100, seed=0, progress=False)
    dept = data.product_labels("department")
    keys = [k for k in emb.keys if k in dept]
    x = np.asarray(emb.normed[[emb.vocab.index[k] for k in keys]], dtype=np.float64)
    groups = [dept[k] for k in keys]
    print(f"shop: {x.shape[0]} products x {x.shape[1]} dims, 8 departments")
    print(f"{'projection':<14}{'import s':>9}{'fit s':>8}{'own-department kNN':>20}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for which in ("pca", "openTSNE", "scikit-learn", "umap-learn"):
            if not _installed(which):
                print(f"{which:<14}  (not installed)")
                continue
            t, xy = _time(x, which, tmp)
            print(f"{which:<14}{t['import_s']:>9.2f}{t['fit_s']:>8.2f}{_purity(xy, groups):>20.3f}")
        if args.clustered and _installed("openTSNE"):
            rng = np.random.default_rng(0)
            centres = rng.standard_normal((50, 64))
            y = centres[rng.integers(0, 50, args.clustered)] + 0.5 * rng.standard_normal((args.clustered, 64))
            y /= np.linalg.norm(y, axis=1, keepdims=True)
            t, _ = _time(y, "openTSNE", tmp)
            print(f"openTSNE on {args.clustered} x 64 clustered: fit {t['fit_s']:.2f} s")


if __name__ == "__main__":
    main()
