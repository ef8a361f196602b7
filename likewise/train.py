"""The trainer: a config dataclass, the one place a backend is chosen, progress and the epoch loop.

The kernel (``likewise.kernels``) is pure: it sees arrays and scalars only. This module owns everything
around it: initialisation, the learning-rate schedule's bookkeeping, threads, progress and callbacks.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from ._progress import bar as progress_bar
from .auto import (
    EPOCHS_AT_SCALE,
    clearly_better,
    infer_mode,
    kept_share,
    plan_epochs,
    resolve_sample,
    split_validation,
    trial_passes,
    validation_completion,
    validation_queries,
)
from .config import EpochStats, TrainConfig, select_backend
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

# Work is cut into blocks of about this many tokens: progress is reported between blocks, and the
# block layout (not the thread count) fixes the random streams, so deterministic runs do not depend on it.
_BLOCK_TOKENS = 1 << 20
# Chunks per block and thread: enough to balance hogwild threads, few enough to keep scratch buffers cheap.
_CHUNKS_PER_THREAD = 4
_DETERMINISTIC_CHUNKS = 8
_TOKENS_PER_THREAD = 50_000


def _auto_threads(ids: np.ndarray) -> int:
    """Threads worth using by default: one per ``_TOKENS_PER_THREAD`` tokens, at least one."""
    return max(1, len(ids) // _TOKENS_PER_THREAD)


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
    neg_types: np.ndarray | None = None,
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
        which ``epochs="auto"`` decides) and ``epochs_reason``; ``basket_scoring`` (the rule
        :meth:`Embeddings.recommend` combines a basket's items by, chosen on the held-out slice when
        there is one) and ``scoring_reason``; with a held-out slice, ``validation_mrr`` (per rule, one
        value per pass of the probe).
    neg_types : ndarray of int, shape (V,), optional
        A type code per id: draw each pair's negatives from the type of the item it predicts (the
        classic per-pair kernel, :mod:`likewise.kernels.typed`; ``neg_group`` is then not used).

    Returns
    -------
    W, C : ndarray of float32, shape (V, dim)
        The trained input and output tables.
    history : list of dict
        One :class:`EpochStats` as a dict per epoch.
    """
    config = config.validate()
    notes = {} if notes is None else notes
    W, C, history, _ = _train_tables(ids, offsets, counts, config, W, C, callback, progress, notes, neg_types)
    return W, C, history


def _train_tables(ids, offsets, counts, config, W, C, callback, progress, notes, neg_types=None):
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
        # A small corpus gains nothing from more threads (a pass takes milliseconds) and its few rows
        # collide under hogwild, so by default it trains on one (and is then the same run to run).
        threads = min(threads, numba.config.NUMBA_NUM_THREADS, config.threads or _auto_threads(ids))
        numba.set_num_threads(threads)
        kernel = kernels.train_sgns_block if classic else kernels.train_sgns_batched_block
        n_chunks = threads * _CHUNKS_PER_THREAD
    if neg_types is not None:  # typed negatives: the per-pair kernel, drawing from the centre's type
        kernel = kernels.typed_kernel(counts, neg_types, config.ns_exponent, serial=config.deterministic)
        group_arg = ()

    # epochs="auto": plan the passes from the data's size; stop on a held-out slice when it pays.
    val = None
    if config.epochs == "auto":
        epochs = plan_epochs(int(offsets[-1]))
        split = split_validation(ids, offsets, config.seed) if epochs > EPOCHS_AT_SCALE else None
        if split is not None:
            tr_ids, tr_off, va_ids, va_off = split
            keep = np.asarray(keep_prob, dtype=np.float64)
            bias = config.ns_exponent * np.log(np.maximum(counts, 1)) - np.log(np.maximum(keep, 1e-12))
            val = (bias, *validation_queries(va_ids, va_off, config.seed))
        notes["epochs_reason"] = f"auto: up to {epochs} passes for {int(offsets[-1]):,} tokens" + (
            f", chosen on MRR@10 of {len(val[2]):,} held-out baskets / sequences" if val else ""
        )
    else:
        epochs = int(config.epochs)
        notes["epochs_reason"] = "set by the caller"

    def run(ids, offsets, W, C, epochs, label):
        """``epochs`` passes over ``ids``, the learning rate decayed over all of them."""
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
            if callback is not None and not label.startswith("trial"):
                callback(stats)
        return W, C, history

    if val is None:
        W, C, history = run(ids, offsets, W, C, epochs, "epoch ")
        notes["epochs"] = len(history)
        notes["basket_scoring"] = "mixture"
        notes["scoring_reason"] = "the mixture: no held-out slice to choose on (epochs set, or little data)"
        return W, C, history, threads
    # The trials: for 10, 20, 40, ... passes up to the plan, train on the training part from the same
    # start with the learning rate decayed to the end, and score held-out completion under each basket
    # rule; stop when a longer trial no longer pays. The real run then trains the best number of
    # passes on everything, and recommend() combines a basket's items by the best rule.
    trials: dict[str, dict[str, float]] = {}
    best: np.ndarray | None = None
    passes, rule = 0, "mixture"
    for n in trial_passes(epochs):
        Wt, Ct, _ = run(tr_ids, tr_off, W.copy(), C.copy(), n, f"trial {n}: ")
        rr = validation_completion(Wt, Ct, *val)
        trials[str(n)] = {r: float(v.mean()) for r, v in rr.items()}
        if progress:
            shown = ", ".join(f"{r} {m:.4f}" for r, m in trials[str(n)].items())
            print(f"  held-out MRR@10 after {n} passes: {shown}", file=sys.stderr)
        # the better rule of this trial (equal: the mixture); more passes only if clearly better
        n_rule = max(rr, key=lambda r: rr[r].mean())
        if best is not None and not clearly_better(rr[n_rule], best):
            break
        best, passes, rule = rr[n_rule], n, n_rule
    W, C, history = run(ids, offsets, W, C, passes, "epoch ")
    tried = ", ".join(f"{max(sc.values()):.4f} after {n}" for n, sc in trials.items())
    notes["epochs_reason"] += (
        f": {tried} passes (more passes must win by two standard errors); {passes} passes on all the data"
    )
    others = ", ".join(f"{r} {m:.4f}" for r, m in trials[str(passes)].items() if r != rule)
    notes["basket_scoring"] = rule
    notes["scoring_reason"] = (
        f"held-out MRR@10 after {passes} passes {trials[str(passes)][rule]:.4f} with the {rule}, "
        f"against {others}"
    )
    notes["validation_mrr"] = trials
    notes["epochs"] = passes
    return W, C, history, threads
