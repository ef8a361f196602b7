"""2-D projections of a model's unit vectors for the explorer's map: PCA, and t-SNE when openTSNE is there.

PCA is exact and cheap (one SVD of the sampled items), fitted when a model is loaded; any other item is
placed on its axes. t-SNE (openTSNE, the ``explore`` extra) shows clusters that PCA's two axes fold onto
each other -- on the generated shop's 598 products PCA puts four of eight departments in one blob while
every neighbour list stays inside its department -- at the cost of a few seconds per model: it runs once
per model version (at the server's map size), in a background thread that reports its iterations, and
is cached.
An item outside a t-SNE map has no exact place on it; it is put at the similarity-weighted mean of its
:data:`PLACE_NEIGHBOURS` nearest items on the map, and the page says "placed near its neighbours".

openTSNE was measured against scikit-learn's ``TSNE`` and umap-learn on the generated shop (600 × 100,
``bench/explorer_projection.py``, docs/serve.md): the fastest of the three in each run, and the only one
that reports progress while it runs (``callbacks``).
"""

from __future__ import annotations

import importlib.util
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

__all__ = ["PLACE_NEIGHBOURS", "PROJECTIONS", "Job", "available", "pca", "place_near", "tsne"]

#: Every projection the API knows; :func:`available` says which can run here.
PROJECTIONS = ("pca", "tsne")
#: Items on the map whose mean places an item outside a t-SNE map.
PLACE_NEIGHBOURS = 10
#: t-SNE's iterations: openTSNE's defaults (early exaggeration, then the main phase).
TSNE_EARLY, TSNE_MAIN = 250, 500
_REPORT_EVERY = 25


def available() -> list[str]:
    """The projections this installation can compute (``tsne`` needs the ``explore`` extra)."""
    out = ["pca"]
    if importlib.util.find_spec("openTSNE") is not None:
        out.append("tsne")
    return out


def check_projection(name: str) -> str:
    """``name`` if it is a projection this installation can compute; else :class:`InputError` saying why."""
    if name not in PROJECTIONS:
        raise InputError(f"projection == {name!r}, must be one of {', '.join(map(repr, PROJECTIONS))}")
    if name not in available():
        raise InputError(
            f"projection {name!r} needs openTSNE, which is not installed: pip install 'likewise[explore]'"
        )
    return name


def pca(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first two principal axes of ``x`` [n, D].

    Returns
    -------
    xy : ndarray [n, 2]
        ``x`` on the axes.
    mean : ndarray [D]
    axes : ndarray [2, D]
        Each axis's sign is fixed (its largest loading positive) so maps are stable across runs; a 1-D
        space gets a zero second axis.
    """
    mean = x.mean(axis=0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    axes = vt[:2]
    axes = axes * np.sign(axes[np.arange(len(axes)), np.abs(axes).argmax(axis=1)])[:, None]
    if len(axes) < 2:
        axes = np.vstack([axes, np.zeros((2 - len(axes), x.shape[1]))])
    return (x - mean) @ axes.T, mean, axes


def tsne(x: np.ndarray, *, seed: int = 0, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """t-SNE of the unit vectors ``x`` [n, D] (cosine distances; openTSNE with its defaults, one thread).

    Parameters
    ----------
    x : ndarray [n, D]
        Unit vectors, n >= 4.
    seed : int
        openTSNE's ``random_state``: the same vectors and seed give the same map.
    progress : callable, optional
        Called with ``(iterations done, iterations in all)`` every 25 iterations.

    Returns
    -------
    ndarray [n, 2], centred, scaled to unit standard deviation (PCA maps are about that size too)
    """
    import openTSNE

    n = len(x)
    if n < 4:
        raise InputError(f"t-SNE needs at least 4 items on the map, got {n}")
    total = TSNE_EARLY + TSNE_MAIN
    done = [0]

    def report(iteration: int, error: float, embedding: object) -> bool:
        done[0] += _REPORT_EVERY
        if progress is not None:
            progress(min(done[0], total), total)
        return False  # go on

    model = openTSNE.TSNE(
        2,
        perplexity=min(30.0, max(1.0, (n - 1) / 3.0)),
        metric="cosine",
        random_state=seed,
        n_jobs=1,
        negative_gradient_method="bh" if n < 10_000 else "fft",
        early_exaggeration_iter=TSNE_EARLY,
        n_iter=TSNE_MAIN,
        callbacks=report,
        callbacks_every_iters=_REPORT_EVERY,
        verbose=False,
    )
    xy = np.asarray(model.fit(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    xy -= xy.mean(axis=0)
    xy /= xy.std() or 1.0
    return xy


def place_near(on_map: np.ndarray, xy: np.ndarray, x: np.ndarray, k: int = PLACE_NEIGHBOURS) -> np.ndarray:
    """Coordinates [m, 2] for unit vectors ``x`` [m, D]: the similarity-weighted mean of the map
    coordinates ``xy`` of their ``k`` most cosine-similar rows of ``on_map`` [n, D] (unit vectors)."""
    sims = np.asarray(x, dtype=np.float64) @ np.asarray(on_map, dtype=np.float64).T
    k = min(k, sims.shape[1])
    top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    w = np.maximum(np.take_along_axis(sims, top, axis=1), 1e-6)
    return (w[:, :, None] * xy[top]).sum(axis=1) / w.sum(axis=1, keepdims=True)


@dataclass
class Job:
    """One projection computing in a background thread: its progress, then its result or its error."""

    name: str
    items: int
    done: int = 0
    total: int = 1
    started: float = field(default_factory=time.time)
    seconds: float | None = None
    result: np.ndarray | None = None
    error: str | None = None
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self, fn: Callable[[Callable[[int, int], None]], np.ndarray]) -> Job:
        """Run ``fn(progress)`` in a daemon thread; its return value becomes :attr:`result`."""

        def progress(done: int, total: int) -> None:
            self.done, self.total = done, total

        def run() -> None:
            t0 = time.perf_counter()
            try:
                self.result = fn(progress)
                self.done = self.total
            except Exception as e:  # noqa: BLE001 -- reported to the page, which asked for it
                self.error = f"{type(e).__name__}: {e}"
            self.seconds = round(time.perf_counter() - t0, 3)

        self._thread = threading.Thread(target=run, name=f"likewise-{self.name}", daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (tests and warm-up); True when it has."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.result is not None or self.error is not None

    def status(self) -> dict:
        """What ``GET /models/{name}/map`` answers while the job runs, or says after it failed."""
        return {
            "projection": self.name,
            "status": "failed" if self.error else ("done" if self.result is not None else "computing"),
            "items": self.items,
            "done": self.done,
            "total": self.total,
            "seconds": round(time.time() - self.started, 1) if self.seconds is None else self.seconds,
            "error": self.error,
        }
