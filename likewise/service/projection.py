"""2-D projections of a model's unit vectors for the explorer's map: PCA, t-SNE (openTSNE) and UMAP
(umap-learn), the last two when their library is installed.

PCA is exact and cheap (one SVD of the sampled items), fitted when a model is loaded; any other item is
placed on its axes. t-SNE (openTSNE, the ``explore`` extra) shows clusters that PCA's two axes fold onto
each other -- on the generated shop's 598 products PCA puts four of eight departments in one blob while
every neighbour list stays inside its department -- at the cost of a few seconds per model: it runs once
per model version (at the server's map size), in the background, reporting its iterations, and is cached.
Jobs run on a :class:`Runner`, a fixed number of threads set at server start (one by default), and a
model has at most one job at a time, whatever its versions: a newer version's job cancels the older
one (before it starts, or at its next progress report). Reloads are made by clients, so without this
bound every version would make a job, and twenty reloads would run twenty t-SNEs at once.
An item outside a t-SNE map has no exact place on it; it is put at the similarity-weighted mean of its
:data:`PLACE_NEIGHBOURS` nearest items on the map, and the page says "placed near its neighbours".

openTSNE was measured against scikit-learn's ``TSNE`` and umap-learn on the generated shop (600 × 100,
``bench/explorer_projection.py``, docs/serve.md): the fastest of the three in each run, and the only one
that reports progress while it runs (``callbacks``). UMAP (umap-learn, the ``umap`` extra) is offered
beside it for those who read UMAP maps: it runs as a t-SNE job does, in the background, once per model
version, but reports no progress until it is done (umap-learn has no callbacks).
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError, shown

__all__ = [
    "NEEDS",
    "PLACE_NEIGHBOURS",
    "PROJECTIONS",
    "Job",
    "Runner",
    "available",
    "compute",
    "pca",
    "place_near",
    "steps",
    "tsne",
    "umap",
]

#: Every projection the API knows; :func:`available` says which can run here.
PROJECTIONS = ("pca", "tsne", "umap")
#: The module each computed projection imports, and the extra that installs it.
NEEDS = {"tsne": ("openTSNE", "explore"), "umap": ("umap", "umap")}
#: Items on the map whose mean places an item outside a t-SNE map.
PLACE_NEIGHBOURS = 10
#: t-SNE's iterations: openTSNE's defaults (early exaggeration, then the main phase).
TSNE_EARLY, TSNE_MAIN = 250, 500
_REPORT_EVERY = 25


def available() -> list[str]:
    """The projections this installation can compute (``tsne`` needs the ``explore`` extra, ``umap`` the
    ``umap`` extra)."""
    return ["pca", *(p for p, (module, _) in NEEDS.items() if _installed(module))]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # a module in sys.modules without a spec (a test's stand-in): there
        return True


def check_projection(name: str) -> str:
    """``name`` if it is a projection this installation can compute; else :class:`InputError` saying why."""
    if name not in PROJECTIONS:
        raise InputError(f"projection == {shown(name)}, must be one of {', '.join(map(repr, PROJECTIONS))}")
    if name not in available():
        module, extra = NEEDS[name]
        library = {"umap": "umap-learn"}.get(module, module)
        raise InputError(
            f"projection {name!r} needs {library}, which is not installed: pip install '.[{extra}]' in the "
            "likewise clone"
        )
    return name


def steps(name: str) -> int:
    """The progress reports' total of projection ``name``'s job (UMAP reports only its end)."""
    return TSNE_EARLY + TSNE_MAIN if name == "tsne" else 1


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


def tsne(
    x: np.ndarray, *, seed: int = 0, progress: Callable[[int, int], bool | None] | None = None
) -> np.ndarray:
    """t-SNE of the unit vectors ``x`` [n, D] (cosine distances; openTSNE with its defaults, one thread).

    Parameters
    ----------
    x : ndarray [n, D]
        Unit vectors, n >= 4.
    seed : int
        openTSNE's ``random_state``: the same vectors and seed give the same map.
    progress : callable, optional
        Called with ``(iterations done, iterations in all)`` every 25 iterations; a true answer stops
        the optimisation there (the job was cancelled).

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
            return bool(progress(min(done[0], total), total))  # True: stop
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


def umap(
    x: np.ndarray, *, seed: int = 0, progress: Callable[[int, int], bool | None] | None = None
) -> np.ndarray:
    """UMAP of the unit vectors ``x`` [n, D] (umap-learn, cosine distances, one thread, ``seed``).

    ``progress`` is called once, ``(1, 1)``, when the map is done (umap-learn reports nothing before).
    Returns ndarray [n, 2], centred, scaled to unit standard deviation, as :func:`tsne`'s.
    """
    import umap as umap_learn

    n = len(x)
    if n < 4:
        raise InputError(f"UMAP needs at least 4 items on the map, got {n}")
    model = umap_learn.UMAP(
        n_components=2, metric="cosine", n_neighbors=min(15, n - 1), random_state=seed, n_jobs=1
    )
    xy = np.asarray(model.fit_transform(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    if progress is not None:
        progress(1, 1)
    xy -= xy.mean(axis=0)
    xy /= xy.std() or 1.0
    return xy


def compute(
    name: str, x: np.ndarray, *, seed: int = 0, progress: Callable[[int, int], bool | None] | None = None
) -> np.ndarray:
    """Projection ``name`` (``"tsne"`` or ``"umap"``) of ``x``: what a background job runs (looked up
    when called, so a test can stand in for either)."""
    fn = {"tsne": tsne, "umap": umap}[name]
    return fn(x, seed=seed, progress=progress)


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
    """One projection computing in the background (on a :class:`Runner`): its progress, then its result,
    its error, or why it was cancelled."""

    name: str
    items: int
    done: int = 0
    total: int = 1
    started: float = field(default_factory=time.time)
    seconds: float | None = None
    result: np.ndarray | None = None
    error: str | None = None
    cancelled: str | None = None
    _future: concurrent.futures.Future | None = field(default=None, repr=False)

    def start(self, fn: Callable[[Callable[[int, int], bool]], np.ndarray], pool: Any) -> Job:
        """Run ``fn(progress)`` on the executor ``pool``; its return value becomes :attr:`result`.

        ``progress(done, total)`` records the progress and answers True once the job is cancelled, so
        ``fn`` stops there."""

        def progress(done: int, total: int) -> bool:
            self.done, self.total = done, total
            return self.cancelled is not None

        def run() -> None:
            t0 = time.perf_counter()
            try:
                result = fn(progress)
                if self.cancelled is None:
                    self.result = result
                    self.done = self.total
            except Exception as e:  # noqa: BLE001 -- reported to the page, which asked for it
                self.error = f"{type(e).__name__}: {e}"
            self.seconds = round(time.perf_counter() - t0, 3)

        self._future = pool.submit(run)
        return self

    def cancel(self, why: str) -> None:
        """Stop the job: never started if it is still queued, else at its next progress report."""
        self.cancelled = why
        if self._future is not None and self._future.cancel():
            self.seconds = 0.0

    def finished(self) -> bool:
        """Whether the job has ended (done, failed or cancelled)."""
        return self._future is None or self._future.done()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (tests and warm-up); True when it has a result or an error."""
        if self._future is not None:
            concurrent.futures.wait([self._future], timeout)
        return self.result is not None or self.error is not None

    def status(self) -> dict:
        """What ``GET /models/{name}/map`` answers while the job runs, or says after it failed or was
        cancelled."""
        state = "done" if self.result is not None else "computing"
        state = "failed" if self.error else ("cancelled" if self.cancelled else state)
        return {
            "projection": self.name,
            "status": state,
            "items": self.items,
            "done": self.done,
            "total": self.total,
            "seconds": round(time.time() - self.started, 1) if self.seconds is None else self.seconds,
            "error": self.error or self.cancelled,
        }


class Runner:
    """Where projection jobs run: ``workers`` threads (set at server start), at most one job per model.

    Parameters
    ----------
    workers : int
        Jobs computing at once, over all models (>= 1).
    """

    def __init__(self, workers: int = 1) -> None:
        if not isinstance(workers, int) or workers < 1:
            raise InputError(f"projection workers == {workers!r}, must be an integer >= 1")
        self.workers = workers
        self._pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="likewise-projection")
        self._live: dict[str, tuple[int, Job]] = {}
        self._lock = threading.Lock()

    def run(
        self, model: str, version: int, job: Job, fn: Callable[[Callable[[int, int], bool]], np.ndarray]
    ) -> Job:
        """Start ``job`` (computing ``fn``) as model ``model``'s one job, for its version ``version``.

        The model's job of an older version is cancelled; a request from a version older than the live
        job's is itself cancelled (that version is no longer served), so no version can start a second.
        """
        with self._lock:
            live = self._live.get(model)
            if live is not None and live[0] > version:
                job.cancel(
                    f"version {version} of model {model!r} was replaced by version {live[0]}: ask again"
                )
                return job
            if live is not None and not live[1].finished():
                live[1].cancel(f"superseded by version {version} of model {model!r}")
            self._live[model] = (version, job)
            return job.start(fn, self._pool)
