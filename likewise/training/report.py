"""What a training run chose and how it went, typed: :class:`TrainReport` (``emb.report``).

Training decides several things the user may not have: the context mode, the subsampling threshold,
the passes (``epochs="auto"``), how a basket's items are combined, which model completes baskets, which
keys were dropped. Each choice is a :class:`Choice` (its value and the reason), beside the per-epoch
history and the seconds each step took (:class:`Timings`). Front ends read these fields, never the
space's ``meta`` keys.

The saved form is the manifest's ``meta`` (:meth:`TrainReport.to_dict` writes the keys,
:meth:`TrainReport.from_dict` reads them back), so every saved space, of this version or an older one,
has a report: a key an older version did not write reads as its documented default. The space's
``config`` holds what the caller asked (``mode="auto"``); the report what training resolved it to
(``meta["resolved"]``). Older versions saved the resolved values in the config itself, and
:meth:`TrainReport.from_dict` reads them from there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..errors import CorruptModelError
from .config import TrainConfig

__all__ = ["RESOLVED", "Choice", "Timings", "TrainReport"]

#: The :class:`~likewise.training.config.TrainConfig` fields training resolves from the data (``"auto"``
#: or None asked): saved in ``meta["resolved"]``, beside the config as asked.
RESOLVED = ("mode", "sample", "epochs", "min_count", "max_items", "neg_group")

#: ``meta`` keys of each step's seconds (:class:`Timings` field -> key).
_SECONDS = {
    "read": "read_seconds",
    "train": "train_seconds",
    "completion": "completion_seconds",
    "customers": "customer_seconds",
    "next_basket": "next_basket_seconds",
}


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
        ``"product"``; None when training did not choose).
    completion : Choice
        What completes baskets: ``"itemitem"``, ``"affinity"`` or ``"cosine"`` (None when not known).
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
        ``"cpu"`` or ``"torch"`` (the config's ``backend`` is what was asked, ``"auto"`` say).
    threads : int or None
    corpus : dict
        ``n_sequences``, ``n_tokens``, ``cut_sequences`` (orders longer than the longest sequence, cut),
        ``max_sequence_length``, ``skipped_rows`` (rows of a log left out by ``on_bad_rows="skip"``,
        by cause: ``{"null 'product_id'": 3}``; empty when none was).
    min_count, max_items, neg_group : int or None
        The vocabulary threshold and cap, and the contexts sharing negatives, as trained.
    device : str or None
        The torch backend's device (None for the numba kernel).
    world_size : int or None
        Processes of a torch run.
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
    min_count: int | None = None
    max_items: int | None = None
    neg_group: int | None = None
    device: str | None = None
    world_size: int | None = None

    @property
    def skipped_rows(self) -> dict[str, int]:
        """Rows of the log left out (``on_bad_rows="skip"``), by cause; empty when none was."""
        return dict(self.corpus.get("skipped_rows") or {})

    @property
    def resolved(self) -> dict[str, Any]:
        """The config fields training resolved (:data:`RESOLVED`), as trained."""
        return {
            "mode": self.mode.value,
            "sample": self.sample.value,
            "epochs": self.epochs.value,
            "min_count": self.min_count,
            "max_items": self.max_items,
            "neg_group": self.neg_group,
        }

    def trained_config(self, asked: TrainConfig) -> TrainConfig:
        """``asked`` (the saved config) with the values training resolved: the config the tables were
        trained with (what an update continues with)."""
        return dataclasses.replace(asked, **self.resolved)

    def to_dict(self) -> dict[str, Any]:
        """The ``meta`` keys of this report (JSON-able), read back by :meth:`from_dict`.

        ``resolved`` (:data:`RESOLVED`), the reasons (``mode_reason``, ``sample_reason``,
        ``epochs_reason``; ``basket_scoring`` and ``scoring_reason`` when a rule was chosen,
        ``completion_reason`` when one was given), ``backend``, ``threads`` (``device``, ``world_size``
        of a torch run), ``history``, the seconds of each step that ran (``train_seconds``, ...),
        ``corpus``, ``kept_share``, ``dropped``, and ``similar_evidence`` when a ``shrink`` was chosen.
        """
        out: dict[str, Any] = {
            "resolved": self.resolved,
            "backend": self.backend,
            "threads": self.threads,
        }
        if self.backend == "torch" or self.device is not None:
            out |= {"device": self.device, "world_size": self.world_size}
        out["history"] = [dict(h) for h in self.history]
        out |= {
            key: getattr(self.timings, name) for name, key in _SECONDS.items() if getattr(self.timings, name)
        }
        out |= {
            "corpus": dict(self.corpus),
            "mode_reason": self.mode.reason,
            "sample_reason": self.sample.reason,
            "kept_share": self.kept_share,
            "dropped": self.dropped,
            "epochs_reason": self.epochs.reason,
        }
        if self.basket_rule.value is not None:
            out |= {"basket_scoring": self.basket_rule.value, "scoring_reason": self.basket_rule.reason}
        if self.completion.reason is not None:
            out["completion_reason"] = self.completion.reason
        if self.similar.value is not None:
            out["similar_evidence"] = {
                "shrink": self.similar.value,
                "reason": self.similar.reason,
                "seconds": self.timings.similar,
            }
        return out

    @classmethod
    def from_dict(
        cls,
        meta: Mapping[str, Any] | None,
        config: TrainConfig | Mapping[str, Any] | None = None,
        *,
        basket_rule: str | None = None,
        completion: str | None = None,
    ) -> TrainReport:
        """The report a space's ``meta`` holds, written by :meth:`to_dict` of this version or of an older one.

        Parameters
        ----------
        meta : mapping or None
            The space's ``meta`` (``emb.meta``, saved or fresh).
        config : TrainConfig or mapping, optional
            The space's config: a space saved before ``meta["resolved"]`` recorded the resolved values
            in its config, and they are read from there.
        basket_rule, completion : str, optional
            What the space does (:attr:`~likewise.Embeddings.basket_rule`,
            :attr:`~likewise.Embeddings.completion`); default: ``meta["basket_scoring"]``, and None.

        Raises
        ------
        CorruptModelError
            A key holding a value of the wrong kind (``meta['history'] == 3, must be a list``).
        """
        meta = meta or {}
        resolved = meta.get("resolved")
        if resolved is None:  # saved before the config kept what was asked: it holds the values used
            resolved = config.to_dict() if isinstance(config, TrainConfig) else dict(config or {})
        resolved = _of(meta, "resolved", resolved, dict)
        evidence = meta.get("similar_evidence")
        evidence = evidence if isinstance(evidence, dict) else {}
        seconds = {name: _seconds(meta, key) for name, key in _SECONDS.items()}
        history = _of(meta, "history", meta.get("history") or [], list)
        return cls(
            mode=Choice(resolved.get("mode"), meta.get("mode_reason")),
            sample=Choice(resolved.get("sample"), meta.get("sample_reason")),
            epochs=Choice(resolved.get("epochs"), meta.get("epochs_reason")),
            basket_rule=Choice(
                basket_rule if basket_rule is not None else meta.get("basket_scoring"),
                meta.get("scoring_reason"),
            ),
            completion=Choice(completion, meta.get("completion_reason")),
            similar=Choice(evidence.get("shrink"), evidence.get("reason", "plain cosine")),
            kept_share=meta.get("kept_share"),
            dropped=meta.get("dropped"),
            history=tuple(history),
            timings=Timings(**seconds, similar=float(evidence.get("seconds") or 0.0)),
            backend=meta.get("backend"),
            threads=meta.get("threads"),
            corpus=dict(_of(meta, "corpus", meta.get("corpus") or {}, dict)),
            min_count=resolved.get("min_count"),
            max_items=resolved.get("max_items"),
            neg_group=resolved.get("neg_group"),
            device=meta.get("device"),
            world_size=meta.get("world_size"),
        )


def _of(meta: Mapping[str, Any], key: str, value: Any, kind: type) -> Any:
    """``value`` (``meta[key]``) when it is a ``kind``; a damaged manifest is refused in one line."""
    if not isinstance(value, kind):
        raise CorruptModelError(
            f"meta[{key!r}] == {value!r}, must be a JSON {'object' if kind is dict else 'list'}"
        )
    return value


def _seconds(meta: Mapping[str, Any], key: str) -> float:
    """``meta[key]`` as seconds (0.0 when the step did not run or an older version did not record it)."""
    value = meta.get(key) or 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CorruptModelError(f"meta[{key!r}] == {value!r}, must be a number of seconds")
    return float(value)
