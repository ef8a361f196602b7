"""What a training run chose and how it went, typed: :class:`TrainReport` (``emb.report``).

Training decides several things the user may not have: the context mode, the subsampling threshold,
the passes (``epochs="auto"``), how a basket's items are combined, which model completes baskets, which
keys were dropped. Each choice is a :class:`Choice` (its value and the reason), beside the per-epoch
history and the seconds each step took (:class:`Timings`). Front ends read these fields, never the
space's ``meta`` keys.

The saved form stays the manifest's ``meta`` and ``config`` (:meth:`TrainReport.read` names the keys
a report is read from), so every saved space, of this version or an older one, has a report: a key an older
version did not write reads as its documented default.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["Choice", "Timings", "TrainReport"]


@dataclasses.dataclass(frozen=True)
class Choice:
    """A value training chose (or was given) and why.

    Attributes
    ----------
    value : any
        What was used (``"basket"``, ``0.001``, ``10``, ``"mixture"``, ``"itemitem"``).
    reason : str or None
        Why, in a sentence (``"set by the caller"`` when it was given; None when not recorded).
    """

    value: Any
    reason: str | None


@dataclasses.dataclass(frozen=True)
class Timings:
    """Seconds per step of a run (0.0 for a step that did not run or was not recorded).

    Attributes
    ----------
    read : float
        Reading and compiling the input (or finding its corpus in the cache).
    train : float
        The passes, trials included.
    completion : float
        Fitting and choosing the completion model.
    customers, next_basket : float
        Customer vectors and their next-basket weights (a log with customers).
    similar : float
        Choosing how ``similar`` weighs evidence (basket mode).
    """

    read: float = 0.0
    train: float = 0.0
    completion: float = 0.0
    customers: float = 0.0
    next_basket: float = 0.0
    similar: float = 0.0

    @property
    def total(self) -> float:
        """All the steps together."""
        return self.read + self.train + self.completion + self.customers + self.next_basket + self.similar


@dataclasses.dataclass(frozen=True)
class TrainReport:
    """A training run's record: each choice with its reason, the history and the timings.

    Attributes
    ----------
    mode, sample, epochs : Choice
        The context mode, the subsampling threshold and the passes trained.
    basket_rule : Choice
        How :meth:`~likewise.Embeddings.recommend` combines a basket's items (``"mixture"`` or
        ``"product"``).
    completion : Choice
        What completes baskets: ``"itemitem"``, ``"affinity"`` or ``"cosine"``.
    similar : Choice
        How :meth:`~likewise.Embeddings.similar` weighs evidence: the ``shrink`` chosen on held-out
        baskets, or None for plain cosine.
    kept_share : float or None
        The share of tokens subsampling kept.
    dropped : dict or None
        The keys ``min_count`` / ``max_items`` dropped (:class:`likewise.data.vocab.Dropped`'s dict).
    history : tuple of dict
        One :class:`~likewise.training.config.EpochStats` as a dict per pass.
    timings : Timings
    backend : str or None
        ``"cpu"`` or ``"torch"``.
    threads : int or None
    corpus : dict
        ``n_sequences``, ``n_tokens``, ``cut_sequences`` (orders longer than the longest sequence, cut),
        ``max_sequence_length``, ``skipped_rows`` (rows of a log left out by ``on_bad_rows="skip"``,
        by cause: ``{"null 'product_id'": 3}``; empty when none was).
    """

    mode: Choice
    sample: Choice
    epochs: Choice
    basket_rule: Choice
    completion: Choice
    similar: Choice
    kept_share: float | None
    dropped: dict[str, Any] | None
    history: tuple[dict[str, Any], ...]
    timings: Timings
    backend: str | None
    threads: int | None
    corpus: dict[str, Any]

    @property
    def skipped_rows(self) -> dict[str, int]:
        """Rows of the log left out (``on_bad_rows="skip"``), by cause; empty when none was."""
        return dict(self.corpus.get("skipped_rows") or {})

    @classmethod
    def read(
        cls, config: Mapping[str, Any], meta: Mapping[str, Any], basket_rule: str, completion: str
    ) -> TrainReport:
        """The report of a space from its ``config`` and ``meta`` (saved or fresh).

        Parameters
        ----------
        config, meta : mapping
            The space's (``emb.config``, ``emb.meta``).
        basket_rule : str
            How the space combines a basket's items (:attr:`~likewise.Embeddings.basket_rule`).
        completion : str
            What completes the space's baskets (:attr:`~likewise.Embeddings.completion`).
        """
        meta = meta or {}
        evidence = meta.get("similar_evidence")
        evidence = evidence if isinstance(evidence, dict) else {}
        return cls(
            mode=Choice(config.get("mode"), meta.get("mode_reason")),
            sample=Choice(config.get("sample"), meta.get("sample_reason")),
            epochs=Choice(config.get("epochs"), meta.get("epochs_reason")),
            basket_rule=Choice(basket_rule, meta.get("scoring_reason")),
            completion=Choice(completion, meta.get("completion_reason")),
            similar=Choice(evidence.get("shrink"), evidence.get("reason", "plain cosine")),
            kept_share=meta.get("kept_share"),
            dropped=meta.get("dropped"),
            history=tuple(meta.get("history") or ()),
            timings=Timings(
                read=float(meta.get("read_seconds") or 0.0),
                train=float(meta.get("train_seconds") or 0.0),
                completion=float(meta.get("completion_seconds") or 0.0),
                customers=float(meta.get("customer_seconds") or 0.0),
                next_basket=float(meta.get("next_basket_seconds") or 0.0),
                similar=float(evidence.get("seconds") or 0.0),
            ),
            backend=meta.get("backend"),
            threads=meta.get("threads"),
            corpus=dict(meta.get("corpus") or {}),
        )
