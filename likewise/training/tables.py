"""A run on packed ids: how it executes (:class:`Run`), the tables, the one backend factory, checkpoints.

:func:`likewise.training.train.train` compiles an input into packed ids and calls :func:`run_tables`;
:func:`train_tables` is the same run for callers that hold ids rather than a corpus (an update). The
kernel (``likewise.kernels``) is pure: it sees arrays and scalars only. This module owns everything
around it: initialisation, the epochs (``epochs="auto"``: trials on a held-out slice), threads,
progress, callbacks and the check that the run did not diverge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .._check import first_nonfinite_row
from .._progress import Progress, progress_of
from ..errors import InputError
from . import distributed
from .auto import (
    plan_epochs,
    resolve_sample,
    split_validation,
    trial_passes,
    validation_queries,
)
from .checkpoint import MUST_MATCH, MUST_MATCH_TORCH, Checkpoints, data_identity
from .config import EpochStats, TrainConfig, neg_group_for, select_backend
from .distributed import Dist
from .loop import EpochLoop, choose_passes, rule_of_one_run
from .passes import Backend

__all__ = ["Run", "Trained", "backend_passes", "run_tables", "train_tables"]


@dataclasses.dataclass(frozen=True)
class Run:
    """How a run executes, as opposed to what it learns (:class:`TrainConfig`): the backend chosen, the
    processes, the torch device, progress, the corpus cache and the checkpoints.

    Parameters
    ----------
    backend : {"cpu", "torch"}
        From :func:`select_backend`.
    dist : Dist
        This process's place in a multi-process run (:func:`likewise.training.distributed.detect`).
    device : torch.device, optional
        The torch backend's device.
    progress : Progress
        A bar, log lines or nothing (:func:`likewise._progress.progress_of`; rank 0 only).
    cache_dir : path, optional
        Where compiled corpora are cached.
    callback : callable, optional
        Called with an :class:`EpochStats` after every epoch.
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
    progress: Progress = Progress("none")
    cache_dir: str | Path | None = None
    callback: Callable[[EpochStats], None] | None = None

    @classmethod
    def of(cls, config: TrainConfig, dist: Dist | None = None, progress: Any = False, **kw: Any) -> Run:
        """Choose the backend (the one place: :func:`select_backend`) and the device for ``config``;
        ``progress`` is one of ``"auto"`` (or None), ``"bar"``, ``"log"``, ``"none"`` or a bool
        (:func:`likewise._progress.progress_of`), shown on rank 0 alone."""
        dist = distributed.detect() if dist is None else dist
        backend = select_backend(config.backend, dist.world)
        device = distributed.torch_device(config.device, dist.local_rank) if backend == "torch" else None
        try:
            show = progress_of(progress, dist.main)
        except ValueError as e:
            raise InputError(str(e)) from None
        return cls(backend, dist, device, progress=show, **kw)


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
    run = Run.of(config, progress=progress, callback=callback)
    if run.dist.active:
        raise InputError(
            f"train_tables runs in one process, but this is rank {run.dist.rank} of {run.dist.world} "
            "(WORLD_SIZE is set): under torchrun use likewise.train, which shards the tables"
        )
    t = run_tables(ids, offsets, counts, config, run, W=W, C=C, neg_types=neg_types)
    return t.W, t.C, t.history


@dataclasses.dataclass(frozen=True)
class Trained:
    """What :func:`run_tables` returns.

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


def run_tables(
    ids: np.ndarray,
    offsets: np.ndarray,
    counts: np.ndarray,
    config: TrainConfig,
    run: Run,
    *,
    W: np.ndarray | None = None,
    C: np.ndarray | None = None,
    neg_types: np.ndarray | None = None,
) -> Trained:
    """:func:`train_tables` for :func:`likewise.training.train.train` too: ``run`` says how
    (:meth:`Run.of`), with its progress and callback."""
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
    progress = run.progress
    backend = backend_passes(
        run, config, keep_prob, neg_cum, int(offsets[-1]), counts, neg_types, (ids, offsets)
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
    loop = EpochLoop(backend.make, config, run.backend, len(counts), notes, run.callback, progress)

    # epochs="auto": plan the passes from the data's size; trials on a held-out slice choose them.
    val, one_run = None, False
    if config.epochs == "auto":
        epochs = plan_epochs(int(offsets[-1]))
        # one trial would choose only the basket rule: at that size the run trains once and chooses the
        # rule on the held-out slice at its end (a resumed run too; one with trials has their outcome).
        # The slice is capped (split_validation: at most 2,000 baskets), so it costs little at any size
        # and the largest logs choose their rule on evidence too.
        one_run = trial_passes(epochs) == [epochs]
        split = None
        if saved is None or one_run:
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
) -> Backend:
    """The backend factory: the :class:`~likewise.training.passes.Backend` of ``run.backend``.

    Parameters
    ----------
    run : Run
        The backend chosen (:meth:`Run.of`), its processes and device; with ``run.progress`` the numba
        kernel says when it compiles.
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
    """
    if run.backend == "torch":
        if neg_types is not None:
            raise InputError("typed negatives run on the numba kernel: use backend='cpu'")
        from .train_torch import torch_passes

        return torch_passes(config, keep_prob, neg_cum, run.dist, run.device)
    from .train_numba import numba_passes

    return numba_passes(config, keep_prob, neg_cum, n_tokens, counts, neg_types, warm_like, run.progress)


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
