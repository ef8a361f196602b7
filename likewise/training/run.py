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
from .auto import TrainPlan, plan_training, trial_passes
from .checkpoint import MUST_MATCH, MUST_MATCH_TORCH, Checkpoints, data_identity
from .config import EpochStats, TrainConfig, select_backend
from .distributed import Dist
from .loop import EpochLoop, RunRecord, choose_passes, rule_of_one_run
from .passes import Backend

__all__ = ["Run", "RunOptions", "RunRecord", "Trained", "backend_passes", "run_tables", "train_tables"]


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """How a run goes, as the caller asks it (``likewise.train(data, run=RunOptions(...))``): what it
    learns is :class:`TrainConfig`, how the input is read :class:`likewise.readers.ReadOptions`.

    Parameters
    ----------
    callback : callable, optional
        Called with an :class:`EpochStats` after every epoch.
    progress : {"auto", "bar", "log", "none"}, bool or None
        ``"auto"`` (or None, the default): a bar when stderr is a terminal, otherwise a line per phase
        and per pass through the ``likewise`` logger; ``"bar"``; ``"log"`` (the lines, on stderr when
        logging is not set up to show them); ``"none"`` (:func:`likewise._progress.progress_of`).
    cache_dir : path, optional
        Where compiled corpora are cached.
    checkpoint_dir : path, optional
        A checkpoint of the run kept in ``checkpoint_dir/checkpoint``, written atomically after every
        epoch; a directory that holds one is refused unless ``resume``.
    checkpoint_every : float, optional
        Minutes between checkpoints inside an epoch.
    resume : bool
        Continue from the checkpoint, bit for bit with ``deterministic=True``; refused with the
        difference named when the corpus, vocabulary or hyper-parameters differ.
    """

    callback: Callable[[EpochStats], None] | None = None
    progress: Any = None
    cache_dir: str | Path | None = None
    checkpoint_dir: str | Path | None = None
    checkpoint_every: float | None = None
    resume: bool = False


@dataclasses.dataclass(frozen=True)
class Run:
    """How a run executes, as opposed to what it learns (:class:`TrainConfig`): the backend chosen, the
    processes, the torch device, the progress shown and the caller's :class:`RunOptions`.

    Parameters
    ----------
    backend : {"cpu", "torch"}
        From :func:`select_backend`.
    dist : Dist
        This process's place in a multi-process run (:func:`likewise.training.distributed.detect`).
    device : torch.device, optional
        The torch backend's device.
    options : RunOptions
        The callback, the corpus cache and the checkpoints, as asked.
    keys : sequence of str, optional
        The vocabulary's keys, fingerprinted into checkpoints.
    progress : Progress
        A bar, log lines or nothing (:func:`likewise._progress.progress_of` of ``options.progress``;
        rank 0 only).
    """

    backend: str
    dist: Dist = dataclasses.field(default_factory=Dist)
    device: Any = None
    options: RunOptions = RunOptions()
    keys: Any = None
    progress: Progress = Progress("none")

    @classmethod
    def of(cls, config: TrainConfig, options: RunOptions | None = None, dist: Dist | None = None) -> Run:
        """Choose the backend (the one place: :func:`select_backend`) and the device for ``config``, and
        the progress ``options.progress`` asks for (shown on rank 0 alone)."""
        options = RunOptions(progress=False) if options is None else options
        dist = distributed.detect() if dist is None else dist
        backend = select_backend(config.backend, dist.world)
        device = distributed.torch_device(config.device, dist.local_rank) if backend == "torch" else None
        try:
            show = progress_of(options.progress, dist.main)
        except ValueError as e:
            raise InputError(str(e)) from None
        return cls(backend, dist, device, options, progress=show)


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
        classic per-pair kernel, :mod:`likewise.kernels.typed_negatives`; ``neg_group`` is then not used).

    Returns
    -------
    W, C : ndarray of float32, shape (V, dim)
        The trained input and output tables.
    history : list of dict
        One :class:`EpochStats` as a dict per epoch.
    """
    config = config.validate()
    run = Run.of(config, RunOptions(callback=callback, progress=progress))
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
    record : RunRecord
        What the run decided: why its passes (``epochs="auto"`` decides them; ``len(history)`` is what
        was trained), the basket rule :meth:`Embeddings.recommend` combines a basket's items by and why,
        and with a held-out slice the trials' figures and the chosen rule's ranks.
    """

    W: np.ndarray | None
    C: np.ndarray | None
    history: list[dict[str, Any]]
    threads: int
    record: RunRecord


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
    plan: TrainPlan | None = None,
) -> Trained:
    """:func:`train_tables` for :func:`likewise.training.train.train` too: ``run`` says how
    (:meth:`Run.of`), with its progress and callback; ``plan`` is what was resolved for the run
    (:func:`likewise.training.auto.plan_training`; resolved here for ids alone when not given)."""
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
    if plan is None:
        plan = plan_training(config, ids, offsets, counts, backend=run.backend)
    config = plan.resolved(config)  # neg_group and sample resolved once, for every backend
    keep_prob = kernels.make_keep_prob(counts, plan.sample)
    neg_cum = kernels.make_neg_cum(counts, config.ns_exponent)
    backend = backend_passes(
        run, config, keep_prob, neg_cum, int(offsets[-1]), counts, neg_types, (ids, offsets)
    )
    # The tables are allocated after the backend is ready: the numba kernel is compiled and LLVM's pages
    # are handed back first, so they are not in the peak beside the tables.
    W, C = _start_tables(config, n_items, W, C)
    ckpt, saved = _checkpoints(run, config, ids, offsets, counts, backend.layout)
    loop = EpochLoop(backend.make, config, run, len(counts))
    W, C, history, record = _epochs(loop, plan, ids, offsets, W, C, keep_prob, counts, ckpt, saved)
    _refuse_diverged(W, C, config, len(history))
    return Trained(W, C, history, backend.threads, record)


def _start_tables(
    config: TrainConfig, n_items: int, W: np.ndarray | None, C: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """word2vec's initialisation: input rows small uniform noise, output rows zero; built in place (no
    temporaries as large as a table). Given tables are copied: the caller's are never trained in place."""
    dim = config.dim
    rng = np.random.default_rng(config.seed)
    if W is None:
        W = rng.random((n_items, dim), dtype=np.float32)
        W -= 0.5
        W /= dim
    else:
        W = np.array(W, dtype=np.float32, order="C")
    C = np.zeros((n_items, dim), dtype=np.float32) if C is None else np.array(C, dtype=np.float32, order="C")
    return W, C


def _epochs(
    loop: EpochLoop,
    plan: TrainPlan,
    ids: np.ndarray,
    offsets: np.ndarray,
    W: np.ndarray,
    C: np.ndarray,
    keep_prob: np.ndarray,
    counts: np.ndarray,
    ckpt: Any,
    saved: Any,
) -> tuple[np.ndarray | None, np.ndarray | None, list[dict[str, Any]], RunRecord]:
    """The run's passes (``epochs="auto"``: trials on the held-out slice choose them) and its record."""
    config, epochs = loop.config, plan.epochs
    val, one_run, held = None, False, None
    if plan.epochs_auto:
        # one trial would choose only the basket rule: at that size the run trains once and chooses the
        # rule on the held-out slice at its end (a resumed run too; one with trials has their outcome).
        # The slice is capped (hold_out: at most 2,000 baskets), so it costs little at any size and the
        # largest logs choose their rule on evidence too.
        one_run = trial_passes(epochs) == [epochs]
        if saved is None or one_run:
            held = plan.held_out
        if held is not None:
            keep = np.asarray(keep_prob, dtype=np.float64)
            bias = config.ns_exponent * np.log(np.maximum(counts, 1)) - np.log(np.maximum(keep, 1e-12))
            val = (bias, held.queries, held.hidden)
        record = RunRecord(
            f"auto: up to {epochs} passes for {int(offsets[-1]):,} tokens"
            + (f", chosen on MRR@10 of {len(val[2]):,} held-out baskets / sequences" if val else "")
        )
    else:
        record = RunRecord("set by the caller")
    if saved is not None:
        record = record.with_notes(saved.state["notes"])
        epochs = int(saved.state["epochs"])
    if val is None:
        record = dataclasses.replace(
            record,
            basket_scoring=record.basket_scoring or "mixture",
            scoring_reason=record.scoring_reason
            or "the mixture: no held-out slice to choose on (epochs set, or little data)",
        )
    one_run = one_run and val is not None
    if val is not None and not one_run:
        split = (*held.training(ids, offsets), held.ids, held.offsets)
        epochs, record = choose_passes(loop, split, W, C, epochs, val, record)
        del split
    W, C, history, rr = loop.passes(
        ids, offsets, W, C, epochs, "epoch ", ckpt, saved, val=val if one_run else None, record=record
    )
    if one_run and rr is not None:
        record = rule_of_one_run(record, rr, epochs)
    return W, C, history, record


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
    o = run.options
    if o.checkpoint_dir is None:
        if o.resume or o.checkpoint_every is not None:
            what = "resume=True" if o.resume else f"checkpoint_every={o.checkpoint_every!r}"
            raise InputError(f"{what} needs checkpoint_dir= (--checkpoint-dir DIR): where checkpoints live")
        return None, None
    fields = MUST_MATCH + (MUST_MATCH_TORCH if run.backend == "torch" else ())
    identity = {
        "backend": run.backend,
        "config": {k: getattr(config, k) for k in fields},
        "data": data_identity(ids, offsets, counts, run.keys),
        "layout": layout,
    }
    ckpt = Checkpoints(o.checkpoint_dir, o.checkpoint_every, o.resume, identity, run.dist)
    return ckpt, ckpt.load()
