"""The trainer: a config dataclass, the one place a backend is chosen, progress and the epoch loop.

The kernel (``likewise.kernels``) is pure: it sees arrays and scalars only. This module owns everything
around it: initialisation, the learning-rate schedule's bookkeeping, threads, progress and callbacks.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from .._check import first_nonfinite_row
from ..errors import InputError
from ..space.completion import attach_completion
from ..space.itemtypes import types_of_keys
from . import distributed
from .auto import (
    EPOCHS_AT_SCALE,
    infer_mode,
    kept_share,
    peek,
    plan_epochs,
    resolve_sample,
    split_validation,
    trial_passes,
    validation_completion,
    validation_queries,
)
from .checkpoint import MUST_MATCH, MUST_MATCH_TORCH, Checkpoints, data_identity, lock_folder
from .config import EpochStats, TrainConfig, config_with, min_count_for, neg_group_for, select_backend
from .distributed import Dist
from .loop import EpochLoop, choose_passes, rule_of_one_run
from .passes import Backend

__all__ = [
    "EpochStats",
    "Run",
    "TrainConfig",
    "infer_mode",
    "kept_share",
    "plan_epochs",
    "resolve_sample",
    "select_backend",
    "Trained",
    "backend_passes",
    "train",
    "train_tables",
    "validation_completion",
]


@dataclasses.dataclass(frozen=True)
class Run:
    """How a run executes, as opposed to what it learns (:class:`TrainConfig`): the backend chosen, the
    processes, the torch device and the checkpoints.

    Parameters
    ----------
    backend : {"cpu", "torch"}
        From :func:`select_backend`.
    dist : Dist
        This process's place in a multi-process run (:func:`likewise.training.distributed.detect`).
    device : torch.device, optional
        The torch backend's device.
    checkpoint_dir, checkpoint_every, resume
        As in :func:`train`.
    keys : sequence of str, optional
        The vocabulary's keys, fingerprinted into checkpoints.
    """

    backend: str
    dist: Dist = dataclasses.field(default_factory=Dist)
    device: Any = None
    checkpoint_dir: str | Path | None = None
    checkpoint_every: float | None = None
    resume: bool = False
    keys: Any = None

    @classmethod
    def of(cls, config: TrainConfig, dist: Dist | None = None, **kw: Any) -> Run:
        """Choose the backend (the one place: :func:`select_backend`) and the device for ``config``."""
        dist = distributed.detect() if dist is None else dist
        backend = select_backend(config.backend, dist.world)
        device = distributed.torch_device(config.device, dist.local_rank) if backend == "torch" else None
        return cls(backend, dist, device, **kw)


def _as_corpus(
    data: Any, config: TrainConfig, cache_dir: str | Path | None, stack: ExitStack, progress: bool
):
    from ..data.corpus import Corpus, build_corpus, corpus_from_sequences
    from ..readers import InputSpec, SparseBaskets

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
    if isinstance(data, Iterable | SparseBaskets):
        # In-memory sequences (or a matrix's rows) are compiled into a folder that lives as long as training.
        out = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="likewise-corpus-")))
        return corpus_from_sequences(
            data, out / "corpus", min_count=config.min_count, max_items=config.max_items
        )
    raise InputError(
        f"cannot train on {type(data).__name__}: pass a Corpus, an InputSpec, a path, a scipy.sparse "
        "matrix or an iterable of sequences of item keys"
    )


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
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: float | None = None,
    resume: bool = False,
    **overrides: Any,
):
    """Train item vectors with skip-gram and negative sampling.

    Parameters
    ----------
    data : Corpus, InputSpec, path, table, sparse matrix or iterable of sequences of str
        What to learn from. Paths and specs are compiled (and cached) with
        :func:`likewise.data.corpus.build_corpus`; iterables are compiled into a temporary folder; a
        pyarrow Table or a pandas / polars DataFrame is a log with one row per (basket, item), read
        through the same reader as a file (``basket_col`` and ``item_col`` name its columns); a
        scipy.sparse matrix (or :class:`~likewise.readers.SparseBaskets`) is a basket per row.
    config : TrainConfig, optional
        Hyper-parameters; keyword ``overrides`` replace single fields (``train(data, dim=32)``).
    basket_col, item_col, order_col : str, optional
        The columns of a table, or of a CSV / Parquet / JSONL log given as a path.
    callback : callable, optional
        Called with an :class:`EpochStats` after every epoch (after its checkpoint is written; on every
        rank of a multi-process run, with the counts of all ranks).
    progress : bool, optional
        Show a progress bar on stderr; default: only when stderr is a terminal (rank 0 only).
    cache_dir : path, optional
        Where compiled corpora are cached.
    checkpoint_dir : path, optional
        Keep a checkpoint of the run in ``checkpoint_dir/checkpoint`` (:mod:`likewise.training.checkpoint`),
        written atomically at the end of every epoch. A directory that already holds one is refused
        unless ``resume``.
    checkpoint_every : float, optional
        Also write the checkpoint between blocks (numba) or steps (torch) once this many minutes have
        passed since the last one.
    resume : bool
        Continue from the checkpoint in ``checkpoint_dir`` (start afresh when there is none, so a
        restarted command resumes). It must be of the same corpus, vocabulary and hyper-parameters;
        anything else is refused with a message naming the difference. With ``deterministic=True``
        a resumed run gives the same vectors, bit for bit, as one that was never stopped.

    Returns
    -------
    Embeddings or None
        The input vectors, the vocabulary and counts, the config as trained (mode and ``sample``
        resolved), and in ``meta``: per-epoch history, why the mode and ``sample`` were chosen, the
        share of tokens subsampling kept, the keys ``min_count`` / ``max_items`` dropped, and from a
        matrix its ``matrix`` (:meth:`SparseBaskets.shape_note`). Under ``torchrun`` (``WORLD_SIZE`` >
        1, backend torch) every process trains its shard and rank 0 returns the whole space, the others None.
    """
    from ..readers import InputSpec, SparseBaskets, is_sparse, is_table, sparse_baskets, write_table

    config = config_with(config, overrides)
    data = sparse_baskets(data) if is_sparse(data) else data  # the column numbers as keys
    how = Run.of(config, checkpoint_dir=checkpoint_dir, checkpoint_every=checkpoint_every, resume=resume)
    d = how.dist
    with ExitStack() as stack:
        if how.backend == "torch":
            stack.callback(distributed.end, distributed.start(d, how.device))
        stack.enter_context(lock_folder(checkpoint_dir, d))  # one run at a time per checkpoint directory
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
            data, first = peek(data)
            if isinstance(data, SparseBaskets):
                mode, mode_reason = "basket", "a sparse matrix: each row a basket"
            elif isinstance(first, set | frozenset):
                mode, mode_reason = "basket", "in-memory sets: each one a basket"
            else:
                mode, mode_reason = infer_mode(data)
            config = dataclasses.replace(config, mode=mode)
        config = dataclasses.replace(config, min_count=min_count_for(config))
        show = (sys.stderr.isatty() if progress is None else progress) and d.main
        if d.active and not d.main:  # rank 0 compiles (and caches) the corpus first; the others reuse it
            distributed.barrier(d, "waiting for rank 0 to compile the corpus")
        corpus = _as_corpus(data, config, cache_dir, stack, show)
        if d.active and d.main:
            distributed.barrier(d, "compiling the corpus")
        if corpus is data:
            # A ready corpus was trimmed when it was compiled: record what it was built with.
            built = (getattr(corpus, "manifest", None) or {}).get("input", {})
            config = dataclasses.replace(
                config,
                min_count=built.get("min_count", config.min_count),
                max_items=built.get("max_items", config.max_items),
            )
        keys = getattr(corpus.vocab, "keys", None)
        emb = _train_corpus(corpus, config, callback, show, mode_reason, dataclasses.replace(how, keys=keys))
        if emb is not None and isinstance(data, SparseBaskets):
            emb.meta["matrix"] = data.shape_note()  # how recommend() names a query matrix's columns
        return emb


def _train_corpus(
    corpus: Any,
    config: TrainConfig,
    callback: Callable[[EpochStats], None] | None,
    progress: bool,
    mode_reason: str = "set by the caller",
    run: Run | None = None,
):
    from ..space.embeddings import Embeddings

    run = run or Run.of(config)
    vocab = corpus.vocab
    if len(vocab) == 0:
        raise InputError(
            f"no item occurs at least min_count={config.min_count} times: the vocabulary is empty"
        )
    counts = np.asarray(vocab.counts, dtype=np.int64)
    sample, sample_reason = resolve_sample(counts, config.sample, config.mode)
    config = dataclasses.replace(config, sample=sample, neg_group=neg_group_for(config))
    t_start = time.perf_counter()
    manifest = getattr(corpus, "manifest", None) or {}
    source = manifest.get("input", {})
    typed = bool(source.get("type_col") or source.get("type_cols"))
    types = types_of_keys(vocab.keys, typed=typed, side=bool(source.get("attrs")))
    if config.typed_negatives and types is None:
        raise InputError(
            "typed_negatives needs item types: a typed log (type_col= / type_cols=) or attributes"
        )
    neg_types = types.codes if config.typed_negatives else None
    trained = _train_tables(
        corpus.ids, corpus.offsets, counts, config,
        callback=callback, progress=progress, run=run, neg_types=neg_types,
    )  # fmt: skip
    if trained.W is None:  # a rank other than 0 of a multi-process run: rank 0 holds the space
        return None
    notes = dict(trained.notes)
    history = trained.history
    config = dataclasses.replace(config, epochs=notes.pop("epochs"))
    meta = {
        "backend": run.backend,
        "threads": trained.threads,
        **({"device": str(run.device), "world_size": run.dist.world} if run.backend == "torch" else {}),
        "history": history,
        "train_seconds": time.perf_counter() - t_start,
        "corpus": {
            "n_sequences": corpus.n_sequences,
            "n_tokens": corpus.n_tokens,
            # orders of a log longer than text lines may be, cut into pieces (the summary says so)
            "cut_sequences": int(manifest.get("cut_sequences") or 0),
            "max_sequence_length": manifest.get("max_sequence_length"),
        },
        **run_notes(history, mode_reason, sample_reason, vocab),
        **notes,
    }
    emb = Embeddings(trained.W, vocab, config=config.to_dict(), meta=meta)
    # The output table is kept: W[i] . C[j] estimates how much more often j goes with i than chance,
    # which is what basket completion needs (cosine between input vectors finds substitutes instead).
    emb.attach_context(trained.C)
    if types is not None:  # before the completion model: it chooses per type in a typed space
        emb.attach_types(types)
    attach_completion(emb, corpus.ids, corpus.offsets, config, progress)
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
    run = Run.of(config)
    if run.dist.active:
        raise InputError(
            f"train_tables runs in one process, but this is rank {run.dist.rank} of {run.dist.world} "
            "(WORLD_SIZE is set): under torchrun use likewise.train, which shards the tables"
        )
    t = _train_tables(
        ids, offsets, counts, config, W=W, C=C, callback=callback, progress=progress, run=run,
        neg_types=neg_types,
    )  # fmt: skip
    return t.W, t.C, t.history


@dataclasses.dataclass(frozen=True)
class Trained:
    """What :func:`_train_tables` returns.

    Attributes
    ----------
    W, C : ndarray of float32, shape (V, dim), or None
        The trained tables (None on a rank other than 0 of a multi-process run).
    history : list of dict
        One :class:`EpochStats` as a dict per epoch.
    threads : int
        The threads the backend used.
    notes : dict
        What the caller should record: ``epochs`` (the passes whose tables are returned, which
        ``epochs="auto"`` decides) and ``epochs_reason``; ``basket_scoring`` (the rule
        :meth:`Embeddings.recommend` combines a basket's items by, chosen on the held-out slice when
        there is one) and ``scoring_reason``; with a held-out slice, ``validation_mrr`` (per trial, the
        held-out MRR@10 under each rule) and ``validation_rr``.
    """

    W: np.ndarray | None
    C: np.ndarray | None
    history: list[dict[str, Any]]
    threads: int
    notes: dict[str, Any]


def _train_tables(
    ids: np.ndarray,
    offsets: np.ndarray,
    counts: np.ndarray,
    config: TrainConfig,
    *,
    W: np.ndarray | None = None,
    C: np.ndarray | None = None,
    callback: Callable[[EpochStats], None] | None = None,
    progress: bool = False,
    run: Run | None = None,
    neg_types: np.ndarray | None = None,
) -> Trained:
    """:func:`train_tables` for :func:`train` too: ``run`` says how (default :meth:`Run.of`)."""
    # Deferred import: numba is only loaded when training actually happens.
    from .. import kernels

    counts = np.asarray(counts, dtype=np.int64)
    n_items, dim = len(counts), config.dim
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    for name, given in (("W", W), ("C", C)):
        if given is not None and np.shape(given) != (n_items, dim):
            raise InputError(
                f"starting table {name} has shape {np.shape(given)}; expected ({n_items}, {dim}) "
                "(one row per counted item, config.dim columns)"
            )
    if config.mode not in ("sequence", "basket"):
        raise InputError(
            f"mode == {config.mode!r}: packed ids need 'sequence' or 'basket' (resolve 'auto' first)"
        )
    # neg_group unset: the mode's default (config.NEG_GROUP), resolved once for every backend
    config = dataclasses.replace(config, neg_group=neg_group_for(config))
    keep_prob = kernels.make_keep_prob(counts, resolve_sample(counts, config.sample, config.mode)[0])
    neg_cum = kernels.make_neg_cum(counts, config.ns_exponent)
    run = run or Run.of(config)
    backend = backend_passes(
        run, config, keep_prob, neg_cum, int(offsets[-1]), counts, neg_types, (ids, offsets), progress
    )
    # The tables are allocated after the backend is ready: the numba kernel is compiled and LLVM's pages
    # are handed back first, so they are not in the peak beside the tables.
    rng = np.random.default_rng(config.seed)
    # word2vec's initialisation: input rows small uniform noise, output rows zero; built in place (no
    # temporaries as large as a table). Given tables are copied: the caller's are never trained in place.
    if W is None:
        W = rng.random((n_items, dim), dtype=np.float32)
        W -= 0.5
        W /= dim
    else:
        W = np.array(W, dtype=np.float32, order="C")
    C = np.zeros((n_items, dim), dtype=np.float32) if C is None else np.array(C, dtype=np.float32, order="C")
    ckpt, saved = _checkpoints(run, config, ids, offsets, counts, backend.layout)
    notes: dict[str, Any] = {}  # this run's record, returned (and carried by its checkpoints)
    loop = EpochLoop(backend.make, config, run.backend, len(counts), notes, callback, progress)

    # epochs="auto": plan the passes from the data's size; trials on a held-out slice choose them.
    val, one_run = None, False
    if config.epochs == "auto":
        epochs = plan_epochs(int(offsets[-1]))
        # one trial would choose only the basket rule: at that size the run trains once and chooses the
        # rule on the held-out slice at its end (a resumed run too; one with trials has their outcome)
        one_run = trial_passes(epochs) == [epochs]
        split = None
        if epochs > EPOCHS_AT_SCALE and (saved is None or one_run):
            split = split_validation(ids, offsets, config.seed)
        if split is not None:
            keep = np.asarray(keep_prob, dtype=np.float64)
            bias = config.ns_exponent * np.log(np.maximum(counts, 1)) - np.log(np.maximum(keep, 1e-12))
            val = (bias, *validation_queries(split[2], split[3], config.seed))
        notes["epochs_reason"] = f"auto: up to {epochs} passes for {int(offsets[-1]):,} tokens" + (
            f", chosen on MRR@10 of {len(val[2]):,} held-out baskets / sequences" if val else ""
        )
    else:
        epochs = int(config.epochs)
        notes["epochs_reason"] = "set by the caller"
    if saved is not None:
        notes.update(saved.state["notes"])
        epochs = int(saved.state["epochs"])

    if val is None:
        notes.setdefault("basket_scoring", "mixture")
        notes.setdefault(
            "scoring_reason", "the mixture: no held-out slice to choose on (epochs set, or little data)"
        )
    one_run = one_run and val is not None
    if val is not None and not one_run:
        epochs = choose_passes(loop, split, W, C, epochs, val, progress)
    W, C, history, rr = loop.passes(
        ids, offsets, W, C, epochs, "epoch ", ckpt, saved, val=val if one_run else None
    )
    if one_run and rr is not None:
        rule_of_one_run(notes, rr, epochs)
    notes["epochs"] = len(history)
    _refuse_diverged(W, C, config, len(history))
    return Trained(W, C, history, backend.threads, notes)


def _refuse_diverged(W: np.ndarray | None, C: np.ndarray | None, config: TrainConfig, passes: int) -> None:
    """Raise when training left a table that is not finite: the run diverged, the input is not at fault.

    The kernels stop updating a pair learnt past doubt (``likewise.kernels.SETTLED``), which keeps the
    degenerate cases finite; a learning rate far too large can still overflow.
    """
    for name, table in (("input vectors", W), ("output vectors", C)):
        if table is None:  # a rank other than 0 under torchrun holds no tables: rank 0 checks them
            continue
        row = first_nonfinite_row(table)
        if row is not None:
            raise InputError(
                f"training diverged: row {row} of the {name} is not finite (NaN or infinity) after "
                f"{passes} pass(es) at lr={config.lr:g}; the input is not at fault: train again with a lower "
                f"learning rate (e.g. --lr {config.lr / 4:g})"
            )


def backend_passes(
    run: Run,
    config: TrainConfig,
    keep_prob: np.ndarray,
    neg_cum: np.ndarray,
    n_tokens: int,
    counts: np.ndarray,
    neg_types: np.ndarray | None = None,
    warm_like: tuple[np.ndarray, np.ndarray] | None = None,
    progress: bool = False,
) -> Backend:
    """The backend factory: the :class:`~likewise.training.passes.Backend` of ``run.backend``.

    Parameters
    ----------
    run : Run
        The backend chosen (:meth:`Run.of`), its processes and device.
    config : TrainConfig
        With ``neg_group`` resolved.
    keep_prob, neg_cum : ndarray
        The subsampling and negative-sampling tables (:func:`likewise.kernels.make_keep_prob`,
        :func:`likewise.kernels.make_neg_cum`).
    n_tokens : int
        The corpus's tokens (the numba kernel's default thread count).
    counts : ndarray of int64
        Each id's count.
    neg_types : ndarray of int, optional
        A type code per id: typed negatives (numba only).
    warm_like : (ids, offsets), optional
        The corpus's arrays, for the numba kernel to be compiled before the tables are allocated.
    progress : bool
        Say when a kernel compiles.
    """
    if run.backend == "torch":
        if neg_types is not None:
            raise InputError("typed negatives run on the numba kernel: use backend='cpu'")
        from .train_torch import torch_passes

        return torch_passes(config, keep_prob, neg_cum, run.dist, run.device)
    from .train_numba import numba_passes

    return numba_passes(config, keep_prob, neg_cum, n_tokens, counts, neg_types, warm_like, progress)


def _checkpoints(run: Run, config: TrainConfig, ids, offsets, counts, layout: dict[str, Any]):
    """The run's :class:`Checkpoints` and the checkpoint to resume (each None when not asked for)."""
    if run.checkpoint_dir is None:
        if run.resume or run.checkpoint_every is not None:
            what = "resume=True" if run.resume else f"checkpoint_every={run.checkpoint_every!r}"
            raise InputError(f"{what} needs checkpoint_dir= (--checkpoint-dir DIR): where checkpoints live")
        return None, None
    fields = MUST_MATCH + (MUST_MATCH_TORCH if run.backend == "torch" else ())
    identity = {
        "backend": run.backend,
        "config": {k: getattr(config, k) for k in fields},
        "data": data_identity(ids, offsets, counts, run.keys),
        "layout": layout,
    }
    ckpt = Checkpoints(run.checkpoint_dir, run.checkpoint_every, run.resume, identity, run.dist)
    return ckpt, ckpt.load()
