"""The one way into training: an input resolved, compiled, trained, and the steps after training.

:func:`train` takes the reading options (:class:`likewise.readers.ReadOptions`), how the run goes
(:class:`RunOptions`) and the hyper-parameters (:class:`TrainConfig`) whole, or their fields as keywords
(:func:`likewise.training.config.sort_options`); :func:`fit` resolves the input
(:func:`likewise.readers.resolve_input`, the one place that decides what an input is), infers the mode,
compiles the corpus, resolves every other ``auto`` once (:func:`likewise.training.auto.plan_training`),
trains the tables (:func:`likewise.training.run.run_tables`), fits the
completion model and runs the caller's steps (customer vectors: :func:`likewise.retail.fit.after_training`).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from .._progress import log_line, rate
from ..errors import InputError
from ..space.itemtypes import types_of_keys
from . import distributed
from .auto import (
    TrainPlan,
    infer_mode,
    kept_share,
    peek,
    plan_epochs,
    plan_training,
    resolve_sample,
    validation_completion,
)
from .checkpoint import lock_folder
from .completion import attach_completion
from .config import EpochStats, TrainConfig, min_count_for, select_backend, sort_options
from .evidence import attach_evidence
from .loop import RunRecord
from .report import Choice, Timings, TrainReport
from .run import Run, RunOptions, Trained, backend_passes, run_tables, train_tables

__all__ = [
    "EpochStats",
    "RUN_OPTIONS",
    "Run",
    "RunOptions",
    "RunRecord",
    "Step",
    "TrainConfig",
    "Trained",
    "backend_passes",
    "fit",
    "infer_mode",
    "kept_share",
    "plan_epochs",
    "resolve_sample",
    "select_backend",
    "TrainPlan",
    "gensim_data",
    "plan_training",
    "train",
    "train_tables",
    "validation_completion",
]


#: A step after training: called with the space, the compiled corpus (still open) and the input.
Step = Callable[[Any, Any, Any], None]

#: The fields of :class:`RunOptions`: keywords of :func:`train` that say how the run goes, not what it learns.
RUN_OPTIONS = tuple(f.name for f in dataclasses.fields(RunOptions))
#: gensim's names for the training data, accepted as ``data``.
GENSIM_DATA = ("sentences", "corpus_iterable", "corpus_file")


def train(
    data: Any = None,
    config: TrainConfig | None = None,
    *,
    read: Any = None,
    run: RunOptions | None = None,
    steps: Sequence[Step] = (),
    **keywords: Any,
):
    """Train item vectors with skip-gram and negative sampling.

    Parameters
    ----------
    data : path, paths, InputSpec, table, sparse matrix, Corpus or iterable of sequences of str
        What to learn from, decided by :func:`likewise.readers.resolve_input`: paths and specs are
        compiled (and cached) with :func:`likewise.data.corpus.build_corpus`; iterables are compiled
        into a temporary folder; a pyarrow Table or a pandas / polars DataFrame is a log with one row
        per (basket, item), read through the same reader as a file (``basket_col`` and ``item_col``
        name its columns); a scipy.sparse matrix (or :class:`~likewise.readers.SparseBaskets`) is a
        basket per row. gensim's ``sentences=``, ``corpus_iterable=`` and ``corpus_file=`` are
        accepted in its place.
    config : TrainConfig, optional
        Hyper-parameters; keyword options that are fields of it replace single fields
        (``train(data, dim=32)``).
    read : ReadOptions, optional
        How to read the input (:class:`likewise.readers.ReadOptions`: ``basket_col``, ``item_col``,
        ``order_col``, ``user_col``, ``time_col``, ``sessions``, ``tokenize``, ``on_bad_rows``,
        ``na_values``, ...).
    run : RunOptions, optional
        How the run goes (:class:`RunOptions`: ``callback``, ``progress``, ``cache_dir``,
        ``checkpoint_dir``, ``checkpoint_every``, ``resume``).
    steps : sequence of callables, optional
        Run after training, in order, with ``(emb, corpus, resolved input)`` while the compiled corpus
        is open (customer vectors: :func:`likewise.retail.fit.after_training`).
    **keywords
        Single fields of ``read``, ``run`` or ``config``, each put into the one whose field it names
        (:func:`likewise.training.config.sort_options`); a field set both ways is refused.

    Returns
    -------
    Embeddings or None
        The input vectors, the vocabulary and counts, the config as asked (``mode="auto"``), and in
        ``meta``: the values training resolved, the history per pass, why the mode and ``sample`` were
        chosen, the share of tokens subsampling kept, the keys ``min_count`` / ``max_items`` dropped, and
        from a matrix its ``matrix`` (:meth:`SparseBaskets.shape_note`); ``emb.report`` types them
        (:class:`likewise.training.report.TrainReport`). Under ``torchrun`` (``WORLD_SIZE`` >
        1, backend torch) every process trains its shard and rank 0 returns the whole space, the others None.
    """
    from ..readers.resolve import ReadOptions

    data = gensim_data(data, keywords)
    config, o = sort_options(keywords, config, {"read": (ReadOptions, read), "run": (RunOptions, run)})
    return fit(data, o["read"], config, Run.of(config, o["run"]), steps)


def gensim_data(data: Any, keywords: dict[str, Any]) -> Any:
    """``data``, or what gensim's ``sentences=`` / ``corpus_iterable=`` / ``corpus_file=`` gave (popped
    from ``keywords``)."""
    given = {k: keywords.pop(k) for k in GENSIM_DATA if k in keywords}
    if len(given) + (data is not None) > 1:
        names = (["data"] if data is not None else []) + [f"{k}=" for k in given]
        raise InputError(f"the training data is given twice ({' and '.join(names)}): give it once")
    if given:
        data = next(iter(given.values()))
    if data is None:
        raise InputError(
            "train needs data: sequences, a path, a table or a user × item matrix, likewise.train(data, ...)"
        )
    return data


def fit(data: Any, read: Any, config: TrainConfig, run: Run, steps: Sequence[Step] = ()):
    """The one training: resolve the input, compile it, train, fit the completion model, run ``steps``.

    Parameters
    ----------
    data : any
        What :func:`likewise.readers.resolve_input` takes.
    read : ReadOptions
        How to read it.
    config : TrainConfig
        Validated; ``mode="auto"`` and ``min_count`` are resolved here.
    run : Run
        How the run goes (:meth:`Run.of`).
    steps : sequence of callables
        After training and the completion model: ``step(emb, corpus, resolved)``.

    Returns
    -------
    Embeddings or None
        None on a rank other than 0 of a multi-process run.
    """
    from ..readers.resolve import resolve_input

    t0 = time.perf_counter()
    asked = config  # the space keeps what was asked; its report what training resolved
    d = run.dist
    with ExitStack() as stack:
        if run.backend == "torch":
            stack.callback(distributed.end, distributed.start(d, run.device))
        stack.enter_context(
            lock_folder(run.options.checkpoint_dir, d)
        )  # one run at a time per checkpoint directory
        source = resolve_input(data, read, stack)
        config, mode_reason, source = _mode(config, source)
        config = dataclasses.replace(config, min_count=min_count_for(config))
        if d.active and not d.main:  # rank 0 compiles (and caches) the corpus first; the others reuse it
            distributed.barrier(d, "waiting for rank 0 to compile the corpus")
        with source.messages():  # a table in memory: its own rows named, not its Parquet copy's
            corpus = _as_corpus(source, config, run, stack)
        if d.active and d.main:
            distributed.barrier(d, "compiling the corpus")
        if corpus is source.data:
            # A ready corpus was trimmed when it was compiled: record what it was built with.
            built = (getattr(corpus, "manifest", None) or {}).get("input", {})
            config = dataclasses.replace(
                config,
                min_count=built.get("min_count", config.min_count),
                max_items=built.get("max_items", config.max_items),
            )
        read_seconds = time.perf_counter() - t0  # reading and compiling the input (or its cached corpus)
        n_tokens = int(corpus.offsets[-1])
        log_line(
            f"input: {n_tokens:,} tokens in {len(corpus.offsets) - 1:,} sequences, {len(corpus.vocab):,} "
            f"{corpus.vocab.what}s, read in {read_seconds:.1f} s ({rate(n_tokens, read_seconds, 'tokens')})",
            run.progress,
        )
        t_train = time.perf_counter()
        plan, types = _plan(corpus, config, mode_reason, run.backend)  # every auto of the run, once
        keys = getattr(corpus.vocab, "keys", None)
        emb, config, record = _train_corpus(
            corpus, config, plan, types, dataclasses.replace(run, keys=keys), asked
        )
        if emb is None:  # a rank other than 0 of a multi-process run: rank 0 holds the space
            return None
        passes = emb.meta.get("history", [])
        dt = time.perf_counter() - t_train
        log_line(
            f"training: {len(passes)} passes over {n_tokens:,} tokens in {dt:.1f} s "
            f"({rate(n_tokens * len(passes), dt, 'tokens')})",
            run.progress,
        )
        emb.meta["read_seconds"] = read_seconds
        if source.matrix is not None:
            emb.meta["matrix"] = source.matrix.shape_note()  # how recommend() names a query matrix's columns
        # the steps after training: the completion model, then the caller's (customers, their next basket)
        t_after = time.perf_counter()
        attach_completion(emb, corpus.ids, corpus.offsets, config, run.progress, plan, record)
        attach_evidence(
            emb, corpus.ids, corpus.offsets, config, plan.held_out
        )  # how similar() weighs evidence
        for step in steps:
            step(emb, corpus, source)
        dt = time.perf_counter() - t_after
        what = emb.report.completion.value + (", customers" if emb.customers is not None else "")
        log_line(
            f"after training ({what}): {dt:.1f} s; all done in {time.perf_counter() - t0:.1f} s", run.progress
        )
        return emb


def _mode(config: TrainConfig, source: Any) -> tuple[TrainConfig, str, Any]:
    """``config`` with ``mode="auto"`` resolved, why, and ``source`` (an iterator re-chained)."""
    from ..readers import SparseBaskets

    if config.mode != "auto":
        return config, "set by the caller", source
    data, first = peek(source.data)
    if isinstance(data, SparseBaskets):
        mode, reason = "basket", "a sparse matrix: each row a basket"
    elif isinstance(first, set | frozenset):
        mode, reason = "basket", "in-memory sets: each one a basket"
    else:
        mode, reason = infer_mode(data)
    return dataclasses.replace(config, mode=mode), reason, dataclasses.replace(source, data=data)


def _as_corpus(source: Any, config: TrainConfig, run: Run, stack: ExitStack):
    """The compiled corpus of a resolved input: built (or found in the cache), or the one given."""
    from ..data.corpus import Corpus, build_corpus, corpus_from_sequences
    from ..readers import InputSpec

    data = source.data
    if isinstance(data, InputSpec):
        return build_corpus(
            data,
            min_count=config.min_count,
            max_items=config.max_items,
            cache_dir=source.cache_dir if source.cache_dir is not None else run.options.cache_dir,
            what=source.options.what,
            progress=run.progress,
        )
    if isinstance(data, Corpus):
        return data
    # In-memory sequences (or a matrix's rows) are compiled into a folder that lives as long as training.
    out = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="likewise-corpus-")))
    return corpus_from_sequences(data, out / "corpus", min_count=config.min_count, max_items=config.max_items)


def _plan(corpus: Any, config: TrainConfig, mode_reason: str, backend: str) -> tuple[TrainPlan, Any]:
    """The run's :class:`~likewise.training.auto.TrainPlan` on a compiled corpus (``sample``,
    ``neg_group``, the passes and the held-out baskets, resolved once) and the vocabulary's item types
    (None: untyped)."""
    vocab = corpus.vocab
    if len(vocab) == 0:
        raise InputError(
            f"no item occurs at least min_count={config.min_count} times: the vocabulary is empty"
        )
    source = ((getattr(corpus, "manifest", None) or {}).get("input")) or {}
    typed = bool(source.get("type_col") or source.get("type_cols"))
    types = types_of_keys(vocab.keys, typed=typed, side=bool(source.get("attrs")))
    if config.typed_negatives and types is None:
        raise InputError(
            "typed_negatives needs item types: a typed log (type_col= / type_cols=) or attributes"
        )
    visible = types.mask() if types is not None and types.hidden else None  # tokens never answer
    counts = np.asarray(vocab.counts, dtype=np.int64)
    plan = plan_training(
        config, corpus.ids, corpus.offsets, counts, mode_reason=mode_reason, backend=backend, after=True,
        visible=visible,
    )  # fmt: skip
    return plan, types


def _train_corpus(
    corpus: Any, config: TrainConfig, plan: TrainPlan, types: Any, run: Run, asked: TrainConfig | None = None
) -> tuple[Any, TrainConfig, RunRecord]:
    """The space trained on a compiled corpus as ``plan`` says, the config as trained (``sample``,
    ``epochs`` resolved) and the run's record (the held-out ranks of its basket rule and whether they
    leaked go to the completion model). The space keeps ``asked`` (default: ``config``) as its config and
    the resolved values in its report."""
    from ..space.embeddings import Embeddings

    vocab = corpus.vocab
    counts = np.asarray(vocab.counts, dtype=np.int64)
    config = plan.resolved(config)
    t_start = time.perf_counter()
    manifest = getattr(corpus, "manifest", None) or {}
    source = manifest.get("input", {})
    neg_types = types.codes if config.typed_negatives else None
    trained = run_tables(corpus.ids, corpus.offsets, counts, config, run, neg_types=neg_types, plan=plan)
    if trained.W is None:  # a rank other than 0 of a multi-process run: rank 0 holds the space
        return None, config, trained.record
    history = trained.history
    config = dataclasses.replace(config, epochs=len(history))
    seconds = time.perf_counter() - t_start
    chosen = run_notes(history, plan.mode_reason, plan.sample_reason, vocab)
    torch = run.backend == "torch"
    rec = trained.record
    report = TrainReport(
        mode=Choice(config.mode, plan.mode_reason),
        sample=Choice(config.sample, plan.sample_reason),
        epochs=Choice(config.epochs, rec.epochs_reason),
        basket_rule=Choice(rec.basket_scoring, rec.scoring_reason),
        completion=Choice(None, None),  # chosen by the step after training (attach_completion)
        similar=Choice(None, None),  # likewise (attach_evidence)
        kept_share=chosen["kept_share"],
        dropped=chosen["dropped"],
        history=tuple(history),
        timings=Timings(train=seconds),
        backend=run.backend,
        threads=trained.threads,
        corpus={
            "n_sequences": corpus.n_sequences,
            "n_tokens": corpus.n_tokens,
            # orders of a log longer than text lines may be, cut into pieces (the summary says so)
            "cut_sequences": int(manifest.get("cut_sequences") or 0),
            "max_sequence_length": manifest.get("max_sequence_length"),
            # rows of a log left out (on_bad_rows="skip"), by cause
            "skipped_rows": dict(source.get("skipped_rows") or {}),
        },
        min_count=config.min_count,
        max_items=config.max_items,
        neg_group=config.neg_group,
        device=str(run.device) if torch else None,
        world_size=run.dist.world if torch else None,
    )
    # the trials' scores beside the report (the reasons and the rule are in it)
    trials = {"validation_mrr": rec.validation_mrr} if rec.validation_mrr is not None else {}
    meta = {**report.to_dict(), **trials}
    emb = Embeddings(trained.W, vocab, config=asked or config, meta=meta)
    # The output table is kept: W[i] . C[j] estimates how much more often j goes with i than chance,
    # which is what basket completion needs (cosine between input vectors finds substitutes instead).
    emb.attach_context(trained.C)
    if types is not None:  # before the completion model: it chooses per type in a typed space
        emb.attach_types(types)
    return emb, config, trained.record


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
