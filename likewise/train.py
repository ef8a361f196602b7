"""The trainer: a config dataclass, the one place a backend is chosen, progress and the epoch loop.

The kernel (``likewise.kernels``) is pure: it sees arrays and scalars only. This module owns everything
around it: initialisation, the learning-rate schedule's bookkeeping, threads, progress and callbacks.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .errors import InputError

__all__ = ["EpochStats", "TrainConfig", "select_backend", "train", "train_tables"]

Mode = Literal["sequence", "basket"]
Backend = Literal["auto", "cpu", "torch"]

# Work is cut into blocks of about this many tokens: progress is reported between blocks, and the
# block layout (not the thread count) fixes the random streams, so deterministic runs do not depend on it.
_BLOCK_TOKENS = 1 << 20
# Chunks per block and thread: enough to balance hogwild threads, few enough to keep scratch buffers cheap.
_CHUNKS_PER_THREAD = 4
_DETERMINISTIC_CHUNKS = 8


@dataclass
class TrainConfig:
    """Hyper-parameters of skip-gram with negative sampling.

    Parameters
    ----------
    mode : {"sequence", "basket"}
        ``sequence``: contexts come from a shrinking window over ordered items (sentences, sessions).
        ``basket``: every item's context is the rest of its basket; order is ignored.
    dim : int
        Vector size.
    window : int
        Largest window radius in sequence mode (each position draws a radius in ``1..window``).
    negative : int
        Negative samples per positive pair.
    ns_exponent : float
        Negatives are drawn from unigram counts raised to this power (word2vec: 0.75).
    sample : float, optional
        Frequent-item subsampling threshold (word2vec's ``sample``); 0 disables it. Default (None):
        1e-3 in sequence mode (word2vec's default for text) and 0 in basket mode, where catalogues are
        small enough that every item is "frequent" and subsampling would drop most of what is bought
        together (on the generated shop of ``bench/retail_evidence.py`` basket-completion HR@10 fell
        from 0.590 to 0.569 with 1e-3). :attr:`sample_value` is the value used.
    min_count, max_items : int
        Vocabulary trimming, applied when the corpus is compiled.
    epochs : int
        Passes over the corpus.
    lr, min_lr : float
        Learning rate, decayed linearly from ``lr`` to ``min_lr`` over all epochs.
    max_context : int
        Basket mode: contexts per item; larger baskets are sampled so cost stays linear in basket size.
    neg_group : int
        Contexts of one item that share one set of negative samples and train together as small
        matrix products (HogBatch, Ji et al. 2016). 1 is classic word2vec: a fresh set per pair and
        the exact sigmoid (the kernel of :mod:`likewise.kernels.sgns`). Larger is faster at equal
        quality (see ``bench/speed_vs_gensim.py``).
    threads : int, optional
        Worker threads (default: all cores). Ignored when ``deterministic``.
    seed : int
        Seed of every random stream (initial vectors, subsampling, windows, negatives).
    deterministic : bool
        Run on one thread so two runs with the same seed are bit-identical. The multi-threaded mode
        updates shared rows without locks (hogwild) and is not reproducible bit for bit.
    backend : {"auto", "cpu", "torch"}
        Where to train. ``auto`` picks the numba CPU kernel.
    """

    mode: Mode = "sequence"
    dim: int = 100
    window: int = 5
    negative: int = 5
    ns_exponent: float = 0.75
    sample: float | None = None
    min_count: int = 5
    max_items: int | None = None
    epochs: int = 5
    lr: float = 0.025
    min_lr: float = 0.0001
    max_context: int = 50
    neg_group: int = 16
    threads: int | None = None
    seed: int = 1
    deterministic: bool = False
    backend: Backend = "auto"

    def validate(self) -> TrainConfig:
        """Raise :class:`InputError` naming the first bad parameter; return ``self``."""
        if self.mode not in ("sequence", "basket"):
            raise InputError(f"mode == {self.mode!r}, must be 'sequence' or 'basket'")
        ints = (
            ("dim", 1),
            ("window", 1),
            ("epochs", 1),
            ("min_count", 1),
            ("max_context", 1),
            ("neg_group", 1),
            ("negative", 0),
        )
        for name, lo in ints:
            _check_int(name, getattr(self, name), lo)
        if self.max_items is not None:
            _check_int("max_items", self.max_items, 1, "or None")
        if self.threads is not None:
            _check_int("threads", self.threads, 1, "or None (all cores)")
        lr = _check_real("lr", self.lr)
        if lr <= 0:
            raise InputError(f"lr == {self.lr!r}, must be > 0")
        min_lr = _check_real("min_lr", self.min_lr)
        if not 0 <= min_lr <= lr:
            raise InputError(f"min_lr == {self.min_lr!r}, must be in [0, lr={self.lr}]")
        if self.sample is not None and _check_real("sample", self.sample) < 0:
            raise InputError(f"sample == {self.sample!r}, must be >= 0 (0 disables subsampling)")
        _check_real("ns_exponent", self.ns_exponent)
        _check_int("seed", self.seed, 0)
        if self.seed >= 2**63:
            raise InputError(f"seed == {self.seed!r}, must be an integer in [0, 2**63)")
        if not isinstance(self.deterministic, bool | np.bool_):
            raise InputError(f"deterministic == {self.deterministic!r}, must be True or False")
        select_backend(self.backend)
        return self

    @property
    def sample_value(self) -> float:
        """The subsampling threshold used: ``sample``, or the mode's default when it is None."""
        if self.sample is None:
            return 1e-3 if self.mode == "sequence" else 0.0
        return float(self.sample)

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-able dict (stored in the saved space), with ``sample`` resolved."""
        d = dataclasses.asdict(self)
        d["sample"] = self.sample_value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainConfig:
        """Rebuild a config saved by :meth:`to_dict`, ignoring keys this version does not know."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def _check_int(name: str, v: Any, lo: int, more: str = "") -> None:
    if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer) or v < lo:
        tail = f" {more}" if more else ""
        raise InputError(f"{name} == {v!r}, must be an integer >= {lo}{tail}")


def _check_real(name: str, v: Any) -> float:
    if isinstance(v, bool | np.bool_) or not isinstance(v, int | float | np.integer | np.floating):
        raise InputError(f"{name} == {v!r}, must be a number")
    if not math.isfinite(v):
        raise InputError(f"{name} == {v!r}, must be a finite number")
    return float(v)


@dataclass(frozen=True)
class EpochStats:
    """What one epoch did; passed to the ``callback`` of :func:`train`."""

    epoch: int
    epochs: int
    items: int  # items read (before subsampling)
    items_trained: int  # items kept by subsampling
    pairs: int  # (item, context) pairs trained
    loss: float  # mean loss per pair
    seconds: float
    lr: float  # learning rate at the end of the epoch

    @property
    def items_per_s(self) -> float:
        """Items read per second of wall time."""
        return self.items / self.seconds if self.seconds > 0 else float("inf")

    @property
    def pairs_per_s(self) -> float:
        """Pairs trained per second of wall time."""
        return self.pairs / self.seconds if self.seconds > 0 else float("inf")


def select_backend(name: str) -> str:
    """The one place a training backend is chosen.

    Parameters
    ----------
    name : {"auto", "cpu", "torch"}

    Returns
    -------
    str
        ``"cpu"`` (the numba kernel); ``auto`` resolves to it.
    """
    if name in ("auto", "cpu"):
        return "cpu"
    if name == "torch":
        # The PyTorch trainer (GPU / distributed) is planned, not built: say so rather than fall back.
        raise InputError("backend == 'torch' is not available in this version of likewise; use 'cpu'")
    raise InputError(f"backend == {name!r}, must be 'auto', 'cpu' or 'torch'")


class _Progress:
    """A one-line progress bar on stderr (``train`` decides whether it is shown)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._last = 0.0

    def update(
        self, epoch: int, epochs: int, done: int, total: int, t0: float, loss: float, force: bool = False
    ) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._last < 0.2:
            return
        self._last = now
        frac = done / total if total else 1.0
        bar = "#" * int(frac * 24)
        rate = done / max(now - t0, 1e-9)
        sys.stderr.write(
            f"\repoch {epoch}/{epochs} [{bar:<24}] {frac:6.1%} {_si(rate)} items/s loss {loss:.4f} "
        )
        if force:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _si(x: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.2f}{unit}"
    return f"{x:.0f}"


def _as_corpus(
    data: Any, config: TrainConfig, cache_dir: str | Path | None, stack: ExitStack, progress: bool
):
    from .corpus import Corpus, build_corpus, corpus_from_sequences
    from .readers import InputSpec

    if isinstance(data, Corpus):
        return data
    if isinstance(data, InputSpec):
        return build_corpus(
            data,
            min_count=config.min_count,
            max_items=config.max_items,
            cache_dir=cache_dir,
            progress=progress,
        )
    if isinstance(data, str | os.PathLike):
        spec = InputSpec(paths=(str(data),))
        return build_corpus(
            spec,
            min_count=config.min_count,
            max_items=config.max_items,
            cache_dir=cache_dir,
            progress=progress,
        )
    if isinstance(data, Iterable):
        # In-memory sequences are compiled into a folder that lives only as long as training.
        out = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="likewise-corpus-")))
        return corpus_from_sequences(
            data, out / "corpus", min_count=config.min_count, max_items=config.max_items
        )
    raise InputError(
        f"cannot train on {type(data).__name__}: pass a Corpus, an InputSpec, a path, "
        "or an iterable of sequences of item keys"
    )


def _blocks(offsets: np.ndarray, block_tokens: int) -> list[tuple[int, int]]:
    """Cut sequences into consecutive blocks of about ``block_tokens`` tokens."""
    n = len(offsets) - 1
    if n == 0:
        return []
    targets = np.arange(block_tokens, int(offsets[-1]), block_tokens, dtype=np.int64)
    cuts = np.unique(np.searchsorted(offsets, targets, side="left").clip(1, n))
    bounds = [0, *[int(c) for c in cuts if 0 < c < n], n]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def train(
    data: Any,
    config: TrainConfig | None = None,
    *,
    callback: Callable[[EpochStats], None] | None = None,
    progress: bool | None = None,
    cache_dir: str | Path | None = None,
    **overrides: Any,
):
    """Train item vectors with skip-gram and negative sampling.

    Parameters
    ----------
    data : Corpus, InputSpec, path or iterable of sequences of str
        What to learn from. Paths and specs are compiled (and cached) with
        :func:`likewise.corpus.build_corpus`; iterables are compiled into a temporary folder.
    config : TrainConfig, optional
        Hyper-parameters; keyword ``overrides`` replace single fields (``train(data, dim=32)``).
    callback : callable, optional
        Called with an :class:`EpochStats` after every epoch.
    progress : bool, optional
        Show a progress bar on stderr; default: only when stderr is a terminal.
    cache_dir : path, optional
        Where compiled corpora are cached.

    Returns
    -------
    Embeddings
        The input vectors, the vocabulary and counts, the config, and per-epoch history in ``meta``.
    """
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise InputError(
            f"unknown training parameter {unknown[0]!r}; known parameters: {', '.join(sorted(known))}"
        )
    config = dataclasses.replace(config or TrainConfig(), **overrides).validate()
    with ExitStack() as stack:
        show = sys.stderr.isatty() if progress is None else progress
        corpus = _as_corpus(data, config, cache_dir, stack, show)
        if corpus is data:
            # A ready corpus was trimmed when it was compiled: record what it was built with.
            built = (getattr(corpus, "manifest", None) or {}).get("input", {})
            config = dataclasses.replace(
                config,
                min_count=built.get("min_count", config.min_count),
                max_items=built.get("max_items", config.max_items),
            )
        return _train_corpus(corpus, config, callback, show)


def _train_corpus(
    corpus: Any, config: TrainConfig, callback: Callable[[EpochStats], None] | None, progress: bool
):
    from .embeddings import Embeddings

    backend = select_backend(config.backend)
    vocab = corpus.vocab
    if len(vocab) == 0:
        raise InputError(
            f"no item occurs at least min_count={config.min_count} times: the vocabulary is empty"
        )
    t_start = time.perf_counter()
    W, C, history, threads = _train_tables(
        corpus.ids,
        corpus.offsets,
        np.asarray(vocab.counts, dtype=np.int64),
        config,
        None,
        None,
        callback,
        progress,
    )
    meta = {
        "backend": backend,
        "threads": threads,
        "history": history,
        "train_seconds": time.perf_counter() - t_start,
        "corpus": {"n_sequences": corpus.n_sequences, "n_tokens": corpus.n_tokens},
    }
    emb = Embeddings(W, vocab, config=config.to_dict(), meta=meta)
    # The output table is kept: W[i] . C[j] estimates how much more often j goes with i than chance,
    # which is what basket completion needs (cosine between input vectors finds substitutes instead).
    emb.attach_context(C)
    return emb


def train_tables(
    ids: np.ndarray,
    offsets: np.ndarray,
    counts: np.ndarray,
    config: TrainConfig,
    *,
    W: np.ndarray | None = None,
    C: np.ndarray | None = None,
    callback: Callable[[EpochStats], None] | None = None,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
    """Skip-gram with negative sampling on packed ids, from (and into) given tables.

    The loop :func:`train` runs, for callers that hold ids rather than a corpus (order logs, updates).

    Parameters
    ----------
    ids : ndarray of int32, shape (N,)
        All sequences back to back; ids index the rows of the tables.
    offsets : ndarray of int64, shape (S + 1,)
        Sequence ``s`` is ``ids[offsets[s]:offsets[s+1]]``.
    counts : ndarray of int64, shape (V,)
        Count of each id (subsampling and the negative-sampling distribution).
    config : TrainConfig
        Hyper-parameters (``min_count`` and ``max_items`` are not used here).
    W, C : ndarray of float32, shape (V, dim), optional
        Starting input / output tables (copied, never trained in place). Default: word2vec's start,
        small uniform noise for ``W`` and zeros for ``C``, from ``config.seed``.
    callback : callable, optional
        Called with an :class:`EpochStats` after every epoch.
    progress : bool
        Show a progress bar on stderr.

    Returns
    -------
    W, C : ndarray of float32, shape (V, dim)
        The trained input and output tables.
    history : list of dict
        One :class:`EpochStats` as a dict per epoch.
    """
    config = config.validate()
    W, C, history, _ = _train_tables(ids, offsets, counts, config, W, C, callback, progress)
    return W, C, history


def _train_tables(ids, offsets, counts, config, W, C, callback, progress):
    # Deferred import: numba is only loaded when training actually happens.
    from . import kernels

    counts = np.asarray(counts, dtype=np.int64)
    n_items, dim = len(counts), config.dim
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    rng = np.random.default_rng(config.seed)
    if W is None:
        # word2vec's initialisation: input rows small uniform noise, output rows zero.
        W = ((rng.random((n_items, dim), dtype=np.float32) - 0.5) / dim).astype(np.float32)
    if C is None:
        C = np.zeros((n_items, dim), dtype=np.float32)
    W = np.array(W, dtype=np.float32, order="C")  # copies: the caller's tables are never trained in place
    C = np.array(C, dtype=np.float32, order="C")
    if W.shape != (n_items, dim) or C.shape != (n_items, dim):
        raise InputError(
            f"starting tables have shapes {W.shape} and {C.shape}; expected ({n_items}, {dim}) "
            "(one row per counted item, config.dim columns)"
        )
    keep_prob = kernels.make_keep_prob(counts, config.sample_value)
    neg_cum = kernels.make_neg_cum(counts, config.ns_exponent)
    mode = 0 if config.mode == "sequence" else 1

    # neg_group=1 runs word2vec's own algorithm (per-pair updates, exact sigmoid: kernels/sgns.py);
    # larger groups the batched kernel, which takes the group size after max_context.
    classic = config.neg_group == 1
    group_arg: tuple[int, ...] = () if classic else (config.neg_group,)
    if config.deterministic:
        kernel = kernels.train_sgns_block_serial if classic else kernels.train_sgns_batched_block_serial
        threads, n_chunks = 1, _DETERMINISTIC_CHUNKS
    else:
        import numba

        threads = config.threads or numba.config.NUMBA_NUM_THREADS
        threads = min(threads, numba.config.NUMBA_NUM_THREADS)
        numba.set_num_threads(threads)
        kernel = kernels.train_sgns_block if classic else kernels.train_sgns_batched_block
        n_chunks = threads * _CHUNKS_PER_THREAD

    n_tokens = int(offsets[-1])
    total_words = max(1, n_tokens * config.epochs)
    blocks = _blocks(offsets, _BLOCK_TOKENS)
    bar = _Progress(progress)
    history: list[dict[str, Any]] = []
    for epoch in range(config.epochs):
        t0 = time.perf_counter()
        seen = kept = pairs = 0
        loss = 0.0
        # Each epoch gets its own stream family; blocks and chunks derive theirs inside the kernel.
        epoch_seed = (config.seed * 1_000_003 + epoch) % (2**63)
        for s0, s1 in blocks:
            words_before = epoch * n_tokens + int(offsets[s0])
            r = kernel(
                ids,
                offsets,
                s0,
                s1,
                W,
                C,
                keep_prob,
                neg_cum,
                mode,
                config.window,
                config.negative,
                config.max_context,
                *group_arg,
                config.lr,
                config.min_lr,
                words_before,
                total_words,
                epoch_seed,
                n_chunks,
            )
            seen += int(r[0])
            kept += int(r[1])
            pairs += int(r[2])
            loss += float(r[3])
            bar.update(epoch + 1, config.epochs, seen, n_tokens, t0, loss / max(pairs, 1))
        seconds = time.perf_counter() - t0
        progress_end = min(1.0, (epoch + 1) / config.epochs)
        stats = EpochStats(
            epoch=epoch + 1,
            epochs=config.epochs,
            items=seen,
            items_trained=kept,
            pairs=pairs,
            loss=loss / max(pairs, 1),
            seconds=seconds,
            lr=max(config.min_lr, config.lr - (config.lr - config.min_lr) * progress_end),
        )
        bar.update(epoch + 1, config.epochs, seen, n_tokens, t0, stats.loss, force=True)
        history.append(dataclasses.asdict(stats))
        if callback is not None:
            callback(stats)
    return W, C, history, threads
