"""What a training run is told: :class:`TrainConfig` (validated on construction) and :class:`EpochStats`.

The dataclasses only store and check values; :mod:`likewise.train` runs them, and :mod:`likewise.auto`
resolves the ``"auto"`` values from the data.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ._check import check_int, check_real
from .errors import InputError

__all__ = ["Backend", "EpochStats", "Mode", "TrainConfig", "select_backend"]

Mode = Literal["auto", "sequence", "basket"]
Backend = Literal["auto", "cpu", "torch"]


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
        tokens or more, more for smaller data, at most 50); when that is more than 5, trials of 10,
        20, 40, ... passes (:func:`~likewise.auto.trial_passes`), each decayed to its end, are scored
        by leave-one-out completion (MRR@10, as ``recommend`` ranks) on a held-out slice of the
        sequences (5 %, at least 100 or 10 %, at most 2,000), a longer trial counting only when it
        wins by two standard errors; the best number of passes then trains on all the data, and the
        better basket rule of that trial becomes the space's :attr:`~likewise.Embeddings.basket_rule`.
        The saved config records the passes used, ``meta["epochs_reason"]`` and
        ``meta["scoring_reason"]`` why.
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
        Worker threads. Default: all cores, but no more than one per 50,000 tokens (a small corpus
        trains on one thread: it gains nothing from more, and is then the same from run to run).
        Ignored when ``deterministic``.
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
            check_int(name, getattr(self, name), lo)
        if self.epochs != "auto":
            check_int("epochs", self.epochs, 1, "or 'auto'")
        if self.max_items is not None:
            check_int("max_items", self.max_items, 1, "or None")
        if self.threads is not None:
            check_int("threads", self.threads, 1, "or None (all cores)")
        lr = check_real("lr", self.lr)
        if lr <= 0:
            raise InputError(f"lr == {self.lr!r}, must be > 0")
        min_lr = check_real("min_lr", self.min_lr)
        if not 0 <= min_lr <= lr:
            raise InputError(f"min_lr == {self.min_lr!r}, must be in [0, lr={self.lr}]")
        if self.sample is not None and check_real("sample", self.sample) < 0:
            raise InputError(f"sample == {self.sample!r}, must be >= 0 (0 disables subsampling)")
        check_real("ns_exponent", self.ns_exponent)
        check_int("seed", self.seed, 0)
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
