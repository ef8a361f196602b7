"""The trainer: a config dataclass, the one place a backend is chosen, progress and the epoch loop.

The kernel (``likewise.kernels``) is pure: it sees arrays and scalars only. This module owns everything
around it: initialisation, the learning-rate schedule's bookkeeping, threads, progress and callbacks.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ._progress import bar as progress_bar
from .errors import InputError

__all__ = [
    "EpochStats",
    "TrainConfig",
    "infer_mode",
    "kept_share",
    "plan_epochs",
    "resolve_sample",
    "select_backend",
    "train",
    "train_tables",
    "validation_completion",
]

Mode = Literal["auto", "sequence", "basket"]
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
    mode : {"auto", "sequence", "basket"}
        ``sequence``: contexts come from a shrinking window over ordered items (sentences, sessions).
        ``basket``: every item's context is the rest of its basket; order is ignored.
        ``auto`` (default): what the input says (:func:`infer_mode`): a log read by ``basket_col``
        with no ordering column, or in-memory sets, train as baskets; text, ordered logs and lists
        as sequences. The saved config records the mode used and ``meta["mode_reason"]`` why.
    dim : int
        Vector size.
    window : int
        Largest window radius in sequence mode (each position draws a radius in ``1..window``).
    negative : int
        Negative samples per positive pair.
    ns_exponent : float
        Negatives are drawn from unigram counts raised to this power (word2vec: 0.75).
    sample : float, optional
        Frequent-item subsampling threshold (word2vec's ``sample``); 0 disables it. Default (None)
        adapts to the data (:func:`resolve_sample`): 0 in basket mode, where catalogues are small
        enough that every item is "frequent" and subsampling would drop most of what is bought
        together (on the generated shop of ``bench/retail_evidence.py`` basket-completion HR@10 fell
        from 0.590 to 0.569 with 1e-3); in sequence mode word2vec's 1e-3, raised to the mean item
        frequency ``1 / V`` for small vocabularies and further if fewer than half the tokens would
        stay. The saved config records the value used.
    min_count, max_items : int
        Vocabulary trimming, applied when the corpus is compiled.
    epochs : int or "auto"
        Passes over the corpus. ``"auto"`` (default): up to :func:`plan_epochs` passes (5 for 5 M
        tokens or more, more for smaller data, at most 50), stopped early when leave-one-out
        completion (MRR@10, scored as ``recommend`` scores) on a held-out slice of the sequences
        (5 %, at least 100 or 10 %, at most 2,000) has not improved for 3 passes after the fifth;
        then the best number of passes trains on all the data, the learning rate decayed to the end.
        The saved config records the passes used and ``meta["epochs_reason"]`` why.
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

    mode: Mode = "auto"
    dim: int = 100
    window: int = 5
    negative: int = 5
    ns_exponent: float = 0.75
    sample: float | None = None
    min_count: int = 5
    max_items: int | None = None
    epochs: int | Literal["auto"] = "auto"
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
        if self.mode not in ("auto", "sequence", "basket"):
            raise InputError(f"mode == {self.mode!r}, must be 'auto', 'sequence' or 'basket'")
        ints = (
            ("dim", 1),
            ("window", 1),
            ("min_count", 1),
            ("max_context", 1),
            ("neg_group", 1),
            ("negative", 0),
        )
        for name, lo in ints:
            _check_int(name, getattr(self, name), lo)
        if self.epochs != "auto":
            _check_int("epochs", self.epochs, 1, "or 'auto'")
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

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-able dict (stored in the saved space)."""
        return dataclasses.asdict(self)

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


# word2vec's threshold for text; the floor on the share of tokens the default may thin away.
_SAMPLE_TEXT = 1e-3
_MIN_KEPT_SHARE = 0.5


def kept_share(counts: np.ndarray, sample: float) -> float:
    """Expected share of tokens that subsampling at ``sample`` keeps (word2vec's formula)."""
    from .kernels.tables import make_keep_prob

    c = np.asarray(counts, dtype=np.float64)
    total = c.sum()
    if total <= 0 or sample == 0:
        return 1.0
    return float((make_keep_prob(c, sample).astype(np.float64) * c).sum() / total)


def resolve_sample(counts: np.ndarray, sample: float | None, mode: str) -> tuple[float, str]:
    """The subsampling threshold to train with, and why.

    Parameters
    ----------
    counts : ndarray of int, shape (V,)
        Count of each item.
    sample : float or None
        The user's value; None asks for the default.
    mode : {"sequence", "basket"}
        The resolved context mode.

    Returns
    -------
    sample : float
        An explicit ``sample`` as given. Otherwise 0 in basket mode; in sequence mode word2vec's
        1e-3, raised to the mean frequency ``1 / V`` (so an item no more frequent than average is
        never thinned: in a catalogue of 15 items 1e-3 would drop 86 % of the data) and further, by
        bisection, until at least half the tokens stay. Large text vocabularies keep 1e-3.
    reason : str
        One line for the training summary.
    """
    if sample is not None:
        return float(sample), "set by the caller"
    if mode == "basket":
        return 0.0, "off in basket mode, where every item of a basket is context for the rest"
    c = np.asarray(counts, dtype=np.float64)
    c = c[c > 0]
    if len(c) == 0:
        return _SAMPLE_TEXT, "word2vec's default"
    t, reason = _SAMPLE_TEXT, "word2vec's default for text"
    if 1.0 / len(c) > t:
        t = 1.0 / len(c)
        reason = f"1e-3 raised to 1/{len(c):,}, the mean item frequency (a small vocabulary)"
    if kept_share(c, t) < _MIN_KEPT_SHARE:
        lo, hi = t, 1.0
        while kept_share(c, hi) < _MIN_KEPT_SHARE:  # a single item: nothing but 'off' keeps half
            hi *= 2.0
            if hi > 1e6:
                return 0.0, "off: no threshold keeps half the tokens"
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if kept_share(c, mid) >= _MIN_KEPT_SHARE else (mid, hi)
        t = hi
        reason = f"raised to {t:.3g} so that at least half the tokens stay"
    return t, reason


# Epochs "auto": passes planned from the data's size, and the held-out slice that stops them early.
_EPOCHS_AT_SCALE, _EPOCHS_MAX, _SCALE_TOKENS = 5, 50, 5_000_000
_VAL_SHARE, _VAL_MAX_SEQUENCES, _VAL_MIN_SEQUENCES, _VAL_MAX_QUERY_ITEMS = 0.05, 2_000, 40, 20_000
_PATIENCE, _MIN_GAIN = 3, 1e-3


def plan_epochs(n_tokens: int) -> int:
    """Passes that ``epochs="auto"`` plans for a corpus of ``n_tokens``.

    ``5 * sqrt(5e6 / n_tokens)``, within 5..50: word2vec's 5 where data is plentiful (a large text
    corpus), more passes as data gets scarce (a catalogue's baskets), so that the number of updates
    grows with the square root of the data rather than linearly.
    """
    n = max(int(n_tokens), 1)
    return int(min(_EPOCHS_MAX, max(_EPOCHS_AT_SCALE, math.ceil(5 * math.sqrt(_SCALE_TOKENS / n)))))


def _split_validation(
    ids: np.ndarray, offsets: np.ndarray, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Hold out a seeded slice of the sequences with >= 2 items: (train ids, offsets, val ids, offsets)."""
    lengths = np.diff(offsets)
    usable = np.flatnonzero(lengths >= 2)
    n_seq = int(len(offsets) - 1)
    # 5 %, but at least 100 (or 10 %) so a small data set's stopping signal is not noise.
    n_val = min(_VAL_MAX_SEQUENCES, max(n_seq * _VAL_SHARE, min(100, n_seq * 0.1)), len(usable) // 2)
    if len(usable) < _VAL_MIN_SEQUENCES or n_val < 1:
        return None
    rng = np.random.default_rng([seed, 7_919])
    val = np.zeros(len(lengths), dtype=bool)
    val[rng.choice(usable, size=int(n_val), replace=False)] = True
    token_val = np.repeat(val, lengths)

    def pack(mask: np.ndarray, tok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        off = np.zeros(int(mask.sum()) + 1, dtype=np.int64)
        np.cumsum(lengths[mask], out=off[1:])
        return np.ascontiguousarray(ids[tok], dtype=np.int32), off

    tr_ids, tr_off = pack(~val, ~token_val)
    va_ids, va_off = pack(val, token_val)
    return tr_ids, tr_off, va_ids, va_off


def _validation_queries(
    ids: np.ndarray, offsets: np.ndarray, seed: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """Leave-one-out completion cases from held-out sequences: (query ids per case, hidden id per case)."""
    rng = np.random.default_rng([seed, 104_729])
    queries, hidden = [], []
    budget = _VAL_MAX_QUERY_ITEMS
    for s in range(len(offsets) - 1):
        seq = np.asarray(ids[offsets[s] : offsets[s + 1]], dtype=np.int64)
        h = int(rng.integers(len(seq)))
        rest = np.unique(np.delete(seq, h))
        rest = rest[rest != seq[h]]
        if len(rest) == 0:
            continue
        if len(rest) > budget:
            break
        budget -= len(rest)
        queries.append(rest)
        hidden.append(int(seq[h]))
    return queries, np.asarray(hidden, dtype=np.int64)


def validation_completion(
    W: np.ndarray,
    C: np.ndarray,
    bias: np.ndarray,
    queries: Sequence[np.ndarray],
    hidden: np.ndarray,
    k: int = 10,
) -> tuple[float, float]:
    """MRR@k and HR@k of leave-one-out completion, scored as :meth:`Embeddings.recommend` scores.

    The score of item ``j`` for a query basket ``B`` is ``log mean_{i in B} exp(W[i] . C[j]) + bias[j]``
    (skip-gram's estimate of ``log P(j | B)``); the query's own items are excluded.

    Returns
    -------
    mrr, hr : float
    """
    rr = hits = 0.0
    for q, h in zip(queries, hidden.tolist(), strict=True):
        s = W[q].astype(np.float64) @ C.T.astype(np.float64)
        m = s.max(axis=0)
        score = m + np.log(np.exp(s - m).mean(axis=0)) + bias
        score[q] = -np.inf
        rank = int(np.count_nonzero(score > score[h]))  # 0 = best
        if rank < k:
            hits += 1
            rr += 1.0 / (rank + 1)
    n = max(len(hidden), 1)
    return rr / n, hits / n


def infer_mode(data: Any) -> tuple[str, str]:
    """The context mode the input asks for, and why (see :class:`TrainConfig`'s ``mode="auto"``).

    Parameters
    ----------
    data : Corpus, InputSpec, path or iterable
        What :func:`train` was given (a corpus is judged by the description it was compiled from).

    Returns
    -------
    mode : {"sequence", "basket"}
    reason : str
    """
    from .corpus import Corpus
    from .readers import InputSpec

    if isinstance(data, InputSpec):
        desc = {"basket_col": data.basket_col, "order_col": data.order_col, "format": data.format}
    elif isinstance(data, Corpus):
        desc = (getattr(data, "manifest", None) or {}).get("input") or {}
        if desc.get("source") == "sequences" and "mode_hint" in desc:
            return desc["mode_hint"], desc.get("mode_reason", "")
    elif isinstance(data, str | os.PathLike):
        return "sequence", "text input: one ordered sequence per line"
    else:
        return "sequence", "in-memory lists keep their order (pass sets, or mode='basket', for baskets)"
    if desc.get("basket_col") and desc.get("format") != "text":
        if desc.get("order_col"):
            return "sequence", f"a log ordered by {desc['order_col']!r} inside each basket"
        return "basket", f"a log grouped by {desc['basket_col']!r} with no ordering column"
    return "sequence", "text input: one ordered sequence per line"


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


def _lr_at(config: TrainConfig, done: float) -> float:
    """The learning rate after ``done`` (0..1) of the planned work: linear decay from lr to min_lr."""
    return max(config.min_lr, config.lr - (config.lr - config.min_lr) * done)


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
    basket_col: str | None = None,
    item_col: str | None = None,
    order_col: str | None = None,
    callback: Callable[[EpochStats], None] | None = None,
    progress: bool | None = None,
    cache_dir: str | Path | None = None,
    **overrides: Any,
):
    """Train item vectors with skip-gram and negative sampling.

    Parameters
    ----------
    data : Corpus, InputSpec, path, table or iterable of sequences of str
        What to learn from. Paths and specs are compiled (and cached) with
        :func:`likewise.corpus.build_corpus`; iterables are compiled into a temporary folder; a
        pyarrow Table or a pandas / polars DataFrame is a log with one row per (basket, item), read
        through the same reader as a file (``basket_col`` and ``item_col`` name its columns).
    config : TrainConfig, optional
        Hyper-parameters; keyword ``overrides`` replace single fields (``train(data, dim=32)``).
    basket_col, item_col, order_col : str, optional
        The columns of a table, or of a CSV / Parquet / JSONL log given as a path.
    callback : callable, optional
        Called with an :class:`EpochStats` after every epoch.
    progress : bool, optional
        Show a progress bar on stderr; default: only when stderr is a terminal.
    cache_dir : path, optional
        Where compiled corpora are cached.

    Returns
    -------
    Embeddings
        The input vectors, the vocabulary and counts, the config as trained (mode and ``sample``
        resolved), and in ``meta``: per-epoch history, why the mode and ``sample`` were chosen, the
        share of tokens subsampling kept, and the keys ``min_count`` / ``max_items`` dropped.
    """
    from .readers import InputSpec, is_table, write_table

    known = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise InputError(
            f"unknown training parameter {unknown[0]!r}; known parameters: {', '.join(sorted(known))}"
        )
    config = dataclasses.replace(config or TrainConfig(), **overrides).validate()
    with ExitStack() as stack:
        cols = {"basket_col": basket_col, "item_col": item_col, "order_col": order_col}
        if is_table(data):
            if not (basket_col and item_col):
                raise InputError(
                    "training on a table needs basket_col= and item_col= (e.g. 'order_id', 'product')"
                )
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="likewise-table-")))
            path = write_table(data, tmp / "log.parquet", [c for c in cols.values() if c])
            data = InputSpec(paths=(str(path),), format="parquet", **cols)
            cache_dir = tmp / "cache"  # a table has no file to key a cache on: compile it once, here
        elif any(cols.values()):
            if not isinstance(data, str | os.PathLike):
                raise InputError(
                    "basket_col / item_col / order_col name the columns of a table or a log file; "
                    f"got {type(data).__name__}"
                )
            data = InputSpec(paths=(os.fspath(data),), **cols)
        mode_reason = "set by the caller"
        if config.mode == "auto":
            data, first = _peek(data)
            if isinstance(first, set | frozenset):
                mode, mode_reason = "basket", "in-memory sets: each one a basket"
            else:
                mode, mode_reason = infer_mode(data)
            config = dataclasses.replace(config, mode=mode)
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
        return _train_corpus(corpus, config, callback, show, mode_reason)


def _peek(data: Any) -> tuple[Any, Any]:
    """``data`` (re-chained if it is a one-shot iterator) and its first element (None if none)."""
    from .corpus import Corpus
    from .readers import InputSpec

    if isinstance(data, Corpus | InputSpec | str | os.PathLike) or not isinstance(data, Iterable):
        return data, None
    if isinstance(data, list | tuple):
        return data, data[0] if data else None
    it = iter(data)
    try:
        first = next(it)
    except StopIteration:
        return iter(()), None
    return itertools.chain([first], it), first


def _train_corpus(
    corpus: Any,
    config: TrainConfig,
    callback: Callable[[EpochStats], None] | None,
    progress: bool,
    mode_reason: str = "set by the caller",
):
    from .embeddings import Embeddings

    backend = select_backend(config.backend)
    vocab = corpus.vocab
    if len(vocab) == 0:
        raise InputError(
            f"no item occurs at least min_count={config.min_count} times: the vocabulary is empty"
        )
    counts = np.asarray(vocab.counts, dtype=np.int64)
    sample, sample_reason = resolve_sample(counts, config.sample, config.mode)
    config = dataclasses.replace(config, sample=sample)
    t_start = time.perf_counter()
    notes: dict[str, Any] = {}
    W, C, history, threads = _train_tables(
        corpus.ids, corpus.offsets, counts, config, None, None, callback, progress, notes
    )
    config = dataclasses.replace(config, epochs=notes.pop("epochs"))
    meta = {
        "backend": backend,
        "threads": threads,
        "history": history,
        "train_seconds": time.perf_counter() - t_start,
        "corpus": {"n_sequences": corpus.n_sequences, "n_tokens": corpus.n_tokens},
        **run_notes(history, mode_reason, sample_reason, vocab),
        **notes,
    }
    emb = Embeddings(W, vocab, config=config.to_dict(), meta=meta)
    # The output table is kept: W[i] . C[j] estimates how much more often j goes with i than chance,
    # which is what basket completion needs (cosine between input vectors finds substitutes instead).
    emb.attach_context(C)
    return emb


def run_notes(history: list[dict[str, Any]], mode_reason: str, sample_reason: str, vocab: Any) -> dict:
    """What a training summary must say about choices the user may not have made: the ``meta`` keys
    ``mode_reason``, ``sample_reason``, ``kept_share`` (tokens subsampling kept) and ``dropped``."""
    read = sum(h["items"] for h in history)
    kept = sum(h["items_trained"] for h in history)
    dropped = getattr(vocab, "dropped", None)
    return {
        "mode_reason": mode_reason,
        "sample_reason": sample_reason,
        "kept_share": kept / read if read else 1.0,
        "dropped": dropped.to_dict() if dropped is not None else None,
    }


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
    notes: dict[str, Any] | None = None,
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
    notes : dict, optional
        Filled with what the caller should record: ``epochs`` (the passes whose tables are returned,
        which ``epochs="auto"`` decides), ``epochs_reason`` and, when stopped early,
        ``validation_loss`` (one per pass).

    Returns
    -------
    W, C : ndarray of float32, shape (V, dim)
        The trained input and output tables.
    history : list of dict
        One :class:`EpochStats` as a dict per epoch.
    """
    config = config.validate()
    notes = {} if notes is None else notes
    W, C, history, _ = _train_tables(ids, offsets, counts, config, W, C, callback, progress, notes)
    return W, C, history


def _train_tables(ids, offsets, counts, config, W, C, callback, progress, notes):
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
    if config.mode not in ("sequence", "basket"):
        raise InputError(
            f"mode == {config.mode!r}: packed ids need 'sequence' or 'basket' (resolve 'auto' first)"
        )
    keep_prob = kernels.make_keep_prob(counts, resolve_sample(counts, config.sample, config.mode)[0])
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

    # epochs="auto": plan the passes from the data's size; stop on a held-out slice when it pays.
    val = None
    if config.epochs == "auto":
        epochs = plan_epochs(int(offsets[-1]))
        split = _split_validation(ids, offsets, config.seed) if epochs > _EPOCHS_AT_SCALE else None
        if split is not None:
            tr_ids, tr_off, va_ids, va_off = split
            keep = np.asarray(keep_prob, dtype=np.float64)
            bias = config.ns_exponent * np.log(np.maximum(counts, 1)) - np.log(np.maximum(keep, 1e-12))
            val = (bias, *_validation_queries(va_ids, va_off, config.seed))
        notes["epochs_reason"] = f"auto: up to {epochs} passes for {int(offsets[-1]):,} tokens" + (
            f", stopped on MRR@10 of {len(val[2]):,} held-out baskets / sequences" if val else ""
        )
    else:
        epochs = int(config.epochs)
        notes["epochs_reason"] = "set by the caller"

    def run(ids, offsets, W, C, epochs, val, label):
        """``epochs`` passes over ``ids`` (the learning rate decays over all of them); with ``val``,
        stop once held-out MRR@10 has not improved for a few passes. Returns the tables, the history,
        the best pass (0 without ``val``) and the held-out MRR of each pass."""
        best = (-1.0, 0)
        val_history: list[float] = []
        n_tokens = int(offsets[-1])
        total_words = max(1, n_tokens * epochs)
        blocks = _blocks(offsets, _BLOCK_TOKENS)
        history: list[dict[str, Any]] = []
        for epoch in range(epochs):
            bar = progress_bar(n_tokens, f"{label}{epoch + 1}/{epochs}", "items", enabled=progress)
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
                lr_now = max(
                    config.min_lr, config.lr - (config.lr - config.min_lr) * words_before / total_words
                )
                bar.update(int(r[0]), loss=f"{loss / max(pairs, 1):.4f}", lr=f"{lr_now:.4g}")
            progress_end = min(1.0, (epoch + 1) / epochs)
            stats = EpochStats(
                epoch=epoch + 1,
                epochs=epochs,
                items=seen,
                items_trained=kept,
                pairs=pairs,
                loss=loss / max(pairs, 1),
                seconds=time.perf_counter() - t0,
                lr=_lr_at(config, progress_end),
            )
            bar.close()
            history.append(dataclasses.asdict(stats))
            if val is None:
                if callback is not None:
                    callback(stats)
                continue
            mrr, hr = validation_completion(W, C, *val)
            if progress:
                print(f"  held-out MRR@10 {mrr:.4f}, HR@10 {hr:.4f}", file=sys.stderr)
            val_history.append(mrr)
            if mrr > best[0] * (1 + _MIN_GAIN) or epoch + 1 <= _EPOCHS_AT_SCALE:
                best = (mrr, epoch + 1)  # never fewer passes than word2vec's 5
            elif epoch + 1 - best[1] >= _PATIENCE:
                break
        return W, C, history, best, val_history

    if val is None:
        W, C, history, _, _ = run(ids, offsets, W, C, epochs, None, "epoch ")
        notes["epochs"] = len(history)
        return W, C, history, threads
    # The probe finds the number of passes on the training part; the real run then trains that many
    # passes on everything, with the learning rate decayed to the end (a run stopped half-way would
    # keep a learning rate that is still high).
    _, _, _, best, val_history = run(tr_ids, tr_off, W.copy(), C.copy(), epochs, val, "probe ")
    W, C, history, _, _ = run(ids, offsets, W, C, best[1], None, "epoch ")
    notes["epochs_reason"] += (
        f"; best held-out MRR@10 {best[0]:.4f} after pass {best[1]} of {len(val_history)}, "
        f"then {best[1]} passes on all the data"
    )
    notes["validation_mrr"] = val_history
    notes["epochs"] = best[1]
    return W, C, history, threads
