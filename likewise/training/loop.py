"""The epoch loop every backend runs through, and the trials that choose ``epochs="auto"``.

:func:`likewise.training.train.train` sets a run up (corpus, tables, backend, checkpoints);
:class:`EpochLoop` runs its passes through the :class:`~likewise.training.passes.Passes` protocol,
records the history, writes checkpoints and calls the callback; :func:`choose_passes` runs the trials on
a held-out slice when the number of passes is left to the data.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .._progress import bar as progress_bar
from .._progress import log_line, note, rate
from ..kernels.params import learning_rate
from .auto import clearly_better, trial_passes, validation_completion
from .checkpoint import run_state
from .config import EpochStats, TrainConfig
from .passes import Passes

__all__ = ["EpochLoop", "RunRecord", "choose_passes", "rule_of_one_run"]


@dataclasses.dataclass(frozen=True)
class RunRecord:
    """What a run decided on the way (its checkpoints carry it, so a resumed run decides nothing again).

    Attributes
    ----------
    epochs_reason : str
        Why the run trains the passes it trains.
    basket_scoring, scoring_reason : str, optional
        The rule :meth:`Embeddings.recommend` combines a basket's items by, chosen on the held-out slice
        when there is one, and why.
    validation_mrr : dict, optional
        Per trial (passes), the held-out MRR@10 under each rule.
    validation_rr : list of float, optional
        The chosen rule's held-out reciprocal ranks (for the completion model; not in the space's record).
    validation_leaked : bool
        ``validation_rr`` was scored with tables trained on the held-out baskets too (one run at scale).
    """

    epochs_reason: str = ""
    basket_scoring: str | None = None
    scoring_reason: str | None = None
    validation_mrr: dict[str, dict[str, float]] | None = None
    validation_rr: list[float] | None = None
    validation_leaked: bool = False

    def notes(self) -> dict[str, Any]:
        """The record as a checkpoint's ``state.notes`` (the fields that are set)."""
        out: dict[str, Any] = {"epochs_reason": self.epochs_reason}
        for key in ("basket_scoring", "validation_rr", "scoring_reason", "validation_mrr"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.validation_leaked:
            out["validation_leaked"] = True
        return out

    def with_notes(self, notes: dict[str, Any]) -> RunRecord:
        """This record with a checkpoint's ``state.notes`` over it (a resumed run's)."""
        fields = {f.name for f in dataclasses.fields(self)}
        return dataclasses.replace(self, **{k: v for k, v in notes.items() if k in fields})

    def meta(self) -> dict[str, Any]:
        """What the space records of the run (``meta``): the reasons, the rule and the trials' figures."""
        out: dict[str, Any] = {"epochs_reason": self.epochs_reason}
        for key in ("basket_scoring", "scoring_reason", "validation_mrr"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


@dataclasses.dataclass
class EpochLoop:
    """The epoch loop of one training run over any backend's :class:`~likewise.training.passes.Passes`:
    what stays the same between the trials of ``epochs="auto"`` and the real run.

    Parameters
    ----------
    make : callable
        The backend's :attr:`~likewise.training.passes.Backend.make`.
    config : TrainConfig
        As resolved by the trainer.
    run : Run
        How the run goes (:class:`likewise.training.run.Run`): its backend's name (recorded in
        checkpoints), the callback (after every epoch of a run without ``val``) and the progress (a bar
        per pass, a line per pass or nothing).
    n_rows : int
        Rows of each table.
    """

    make: Callable[..., Passes]
    config: TrainConfig
    run: Any
    n_rows: int

    def passes(
        self,
        ids: np.ndarray,
        offsets: np.ndarray,
        W: np.ndarray,
        C: np.ndarray,
        epochs: int,
        label: str,
        ckpt: Any = None,
        saved: Any = None,
        val: Any = None,
        trial: bool = False,
        record: RunRecord | None = None,
    ) -> tuple[np.ndarray | None, np.ndarray | None, list[dict[str, Any]], Any]:
        """``epochs`` passes over ``ids``, the learning rate decayed over all of them. Returns the
        tables (None on ranks other than 0 of a multi-process run), the history and, with ``val``, the
        reciprocal ranks of held-out completion under each basket rule at the end. With ``ckpt`` a
        checkpoint is written after every pass (and between steps when it is due); ``saved`` is the
        checkpoint to continue from, ``record`` what its checkpoints carry. A ``trial`` does not call the
        callback."""
        config, progress, callback = self.config, self.run.progress, self.run.options.callback
        notes = (record or RunRecord()).notes()
        n_tokens = int(offsets[-1])
        total_words = max(1, n_tokens * epochs)
        passes = self.make(ids, offsets, W, C, total_words)
        history: list[dict[str, Any]] = []
        first, start, partial = 0, 0, {}
        if saved is not None:
            history, first, start, partial = saved.restore(passes)

        def save(epoch: int, step: int, counted: dict[str, float]) -> None:
            state = run_state(
                passes, self.run.backend, config.seed, epoch, step, epochs, history, counted, notes
            )
            ckpt.save(state, *passes.shards(), n_rows=self.n_rows)

        for epoch in range(first, epochs):
            bar = progress_bar(n_tokens, f"{label}{epoch + 1}/{epochs}", "items", enabled=progress)
            resumed = epoch == first and (start or partial)
            t0 = time.perf_counter() - (partial.get("seconds", 0.0) if resumed else 0.0)

            def on_step(step: int, totals: Callable[[], dict[str, float]], epoch=epoch, t0=t0) -> None:
                if ckpt is not None and step < passes.n_steps and ckpt.due():
                    save(epoch, step, dict(totals(), seconds=time.perf_counter() - t0))

            c = passes.epoch(epoch, start if resumed else 0, partial if resumed else {}, bar, on_step)
            stats = EpochStats(
                epoch=epoch + 1,
                epochs=epochs,
                items=int(c["seen"]),
                items_trained=int(c["kept"]),
                pairs=int(c["pairs"]),
                loss=c["loss"] / max(c["pairs"], 1),
                seconds=time.perf_counter() - t0,
                lr=learning_rate(config.lr, config.min_lr, min(epoch + 1, epochs), epochs),
            )
            bar.close()
            log_line(
                f"{label}{epoch + 1}/{epochs}: {stats.items:,} items, {stats.pairs:,} pairs in "
                f"{stats.seconds:.1f} s ({rate(stats.items, stats.seconds, 'items')}, "
                f"{rate(stats.pairs, stats.seconds, 'pairs')}), loss {stats.loss:.4f}",
                progress,
            )
            history.append(dataclasses.asdict(stats))
            if ckpt is not None:
                save(epoch + 1, 0, {})  # before the callback: a callback that kills the run loses nothing
            if callback is not None and not trial:
                callback(stats)
        threads = config.threads  # None: every core, as the passes

        def score(W: np.ndarray, C: np.ndarray) -> dict[str, np.ndarray]:
            return validation_completion(W, C, *val, threads=threads)

        scores = passes.evaluate(score) if val else None
        W, C = passes.tables() or (None, None)
        return W, C, history, scores


def choose_passes(
    loop: EpochLoop, split: tuple, W: np.ndarray, C: np.ndarray, epochs: int, val: tuple, record: RunRecord
) -> tuple[int, RunRecord]:
    """The passes of the real run, chosen by trials, and ``record`` with the basket rule and the trials.

    For 10, 20, 40, ... passes up to the plan ``epochs``, train on the training part of ``split`` from
    the same start with the learning rate decayed to the end, and score held-out completion under each
    basket rule; stop when a longer trial is not clearly better. The real run then trains the best
    number of passes on everything, and recommend() combines a basket's items by the best rule. Only the
    real run is checkpointed: its checkpoints carry the trials' outcome (the record), so a resumed run
    does not try again.
    """
    progress = loop.run.progress
    tr_ids, tr_off = split[0], split[1]
    trials: dict[str, dict[str, float]] = {}
    best: np.ndarray | None = None
    passes, rule = 0, "mixture"
    for n in trial_passes(epochs):
        _, _, _, rr = loop.passes(tr_ids, tr_off, W.copy(), C.copy(), n, f"trial {n}: ", val=val, trial=True)
        trials[str(n)] = {r: float(v.mean()) for r, v in rr.items()}
        if progress:
            shown = ", ".join(f"{r} {m:.4f}" for r, m in trials[str(n)].items())
            note(f"  held-out MRR@10 after {n} passes: {shown}", progress)
        n_rule = _best_rule(rr)  # more passes only if clearly better
        if best is not None and not clearly_better(rr[n_rule], best):
            break
        best, passes, rule = rr[n_rule], n, n_rule
    tried = ", ".join(f"{max(sc.values()):.4f} after {n}" for n, sc in trials.items())
    record = dataclasses.replace(
        record,
        epochs_reason=record.epochs_reason
        + f": {tried} passes (more passes must win by two standard errors); {passes} passes on all the data",
    )
    # the affinity's per-case reciprocal ranks: the completion model is chosen against them
    # (likewise.training.completion); in the record, so a resumed run (which skips the trials) has them too
    return passes, _record_rule(record, trials, passes, rule, best.tolist() if best is not None else None)


def _best_rule(rr: dict[str, np.ndarray]) -> str:
    """The basket rule with the higher held-out MRR (equal: the mixture)."""
    return max(rr, key=lambda r: (rr[r].mean(), r == "mixture"))


def _record_rule(
    record: RunRecord,
    trials: dict[str, dict[str, float]],
    passes: int,
    rule: str,
    rr: list[float] | None,
    why: str = "",
) -> RunRecord:
    """``record`` with the chosen rule, its held-out figures (``trials``: MRR@10 per rule after each
    number of passes scored) and the affinity's reciprocal ranks."""
    others = ", ".join(f"{r} {m:.4f}" for r, m in trials[str(passes)].items() if r != rule)
    return dataclasses.replace(
        record,
        basket_scoring=rule,
        validation_rr=rr,
        scoring_reason=(
            f"held-out MRR@10 after {passes} passes {trials[str(passes)][rule]:.4f} with the {rule}, "
            f"against {others}{why}"
        ),
        validation_mrr=trials,
    )


def rule_of_one_run(record: RunRecord, rr: dict[str, np.ndarray], passes: int) -> RunRecord:
    """``record`` with the basket rule chosen on held-out cases scored with the tables of the only run.

    When the plan is one trial (``trial_passes(planned) == [planned]``: 10 passes or fewer, a corpus of
    about 1.25 M tokens or more), a trial would choose no number of passes, only the rule, and would
    double the training time; the run trains once on all the data instead and the rule is chosen on
    the held-out cases with its tables, which saw those baskets too (both rules alike). The chosen
    rule's ranks are passed on as ``validation_rr`` with ``validation_leaked``: the completion model is
    compared with them (:func:`likewise.training.completion.fit_completion`, which says that the affinity
    was trained on those baskets) instead of scoring the same tables on the same cases again.
    """
    reason = (
        record.epochs_reason + f": {passes} passes on all the data, no trial (one would choose only the rule)"
    )
    trials = {str(passes): {r: float(v.mean()) for r, v in rr.items()}}
    why = " (tables trained on the held-out baskets too: one run at this size)"
    rule = _best_rule(rr)
    record = _record_rule(
        dataclasses.replace(record, epochs_reason=reason), trials, passes, rule, rr[rule].tolist(), why
    )
    return dataclasses.replace(record, validation_leaked=True)
