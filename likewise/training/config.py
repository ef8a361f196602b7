"""What a training run is told: :class:`TrainConfig` (validated on construction) and :class:`EpochStats`.

The dataclasses only store and check values; :mod:`likewise.training.train` runs them, and
:mod:`likewise.training.auto` resolves the ``"auto"`` values from the data.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .._check import check_int, check_real
from ..errors import InputError, MissingDependencyError

__all__ = [
    "MIN_COUNT",
    "NEG_GROUP",
    "Backend",
    "EpochStats",
    "GENSIM_NAMES",
    "Mode",
    "TableDtype",
    "TrainConfig",
    "check_device",
    "config_with",
    "min_count_for",
    "neg_group_for",
    "select_backend",
    "sort_options",
]

Mode = Literal["auto", "sequence", "basket"]
Backend = Literal["auto", "cpu", "torch"]
TableDtype = Literal["float32", "bfloat16"]
Completion = Literal["auto", "itemitem", "affinity"]

#: ``neg_group`` by mode when the config leaves it None (measured in docs/speed.md).
NEG_GROUP = {"sequence": 16, "basket": 4}

#: ``min_count`` by mode when the config leaves it None. Text keeps word2vec's 5 (rare tokens are
#: mostly typos and names, and cost memory); a catalogue's rare products are real products that
#: shoppers buy and ask about, and the item-item completion learns them from a few baskets: on the
#: Debian dependency baskets 5 dropped 83 % of the packages and 15 % of the held-out completions
#: could not be answered (HR@10 0.579 against 0.608 with 1; README "Defaults").
MIN_COUNT = {"sequence": 5, "basket": 1}

#: gensim's ``Word2Vec`` arguments that likewise names differently or does not offer: name -> (likewise's
#: name or None, a note). A training call given one says what to write instead, in one line.
#: ``min_count``, ``window``, ``negative``, ``sample``, ``ns_exponent``, ``seed`` and ``epochs`` are
#: the same in both and need no entry.
GENSIM_NAMES: dict[str, tuple[str | None, str]] = {
    "vector_size": ("dim", ""),
    "size": ("dim", ""),  # gensim 3
    "alpha": ("lr", ""),
    "min_alpha": ("min_lr", ""),
    "workers": ("threads", ""),
    "iter": ("epochs", ""),  # gensim 3
    "max_final_vocab": ("max_items", ""),
    "max_vocab_size": ("max_items", "the closest: the max_items most frequent items are kept"),
    "sg": (None, "likewise trains skip-gram only; drop sg="),
    "hs": (
        None,
        "hierarchical softmax is not offered; likewise uses negative sampling (negative=); drop hs=",
    ),
    "cbow_mean": (None, "CBOW is not offered, likewise trains skip-gram; drop cbow_mean="),
    "null_word": (None, "CBOW is not offered, likewise trains skip-gram; drop null_word="),
    "callbacks": (None, "likewise.train takes callback=, a function called with each epoch's EpochStats"),
    "compute_loss": (None, "the loss is always kept (EpochStats.loss, meta['history']); drop compute_loss="),
    "trim_rule": (None, "not offered; min_count= and max_items= trim the vocabulary"),
    "sorted_vocab": (None, "the vocabulary is always sorted by descending count; drop sorted_vocab="),
    "shrink_windows": (None, "windows always shrink (a radius drawn in 1..window); drop shrink_windows="),
    "hashfxn": (None, "every random stream comes from seed=; drop hashfxn="),
    "batch_words": (None, "drop batch_words= (the torch backend's step size is batch_tokens=)"),
    "comment": (None, "drop comment= (notes go in emb.meta, which is saved with the space)"),
}


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of skip-gram with negative sampling.

    Frozen and checked on construction (:meth:`validate`): ``TrainConfig(dim=-1)`` raises
    :class:`InputError` naming ``dim``; a changed copy is ``dataclasses.replace(config, dim=32)``, checked
    the same way.

    Parameters
    ----------
    mode : {"auto", "sequence", "basket"}
        ``sequence``: contexts come from a shrinking window over ordered items (sentences, sessions).
        ``basket``: every item's context is the rest of its basket; order is ignored.
        ``auto`` (default): what the input says (:func:`infer_mode`): a log read by ``basket_col``
        with no ordering column, or in-memory sets, train as baskets; text, ordered logs and lists
        as sequences. The saved config keeps what was asked; the space's report the mode used and why.
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
        stay. The space's report records the value used (``emb.report.sample``).
    min_count : int, optional
        Items seen fewer times are dropped when the corpus is compiled (and reported). Default
        (None): :data:`MIN_COUNT` of the mode, word2vec's 5 for sequences (text) and 1 for baskets,
        where every product bought is a product a user may ask about. The space's report records
        the value used (``emb.report.min_count``).
    max_items : int, optional
        Keep only the ``max_items`` most frequent items.
    epochs : int or "auto"
        Passes over the corpus. ``"auto"`` (default): up to :func:`plan_epochs` passes (5 for 5 M
        tokens or more, more for smaller data, at most 50); when that is more than 5, trials of 10,
        20, 40, ... passes (:func:`~likewise.training.auto.trial_passes`), each decayed to its end, are scored
        by leave-one-out completion (MRR@10, as ``recommend`` ranks) on a held-out slice of the
        sequences (5 %, at least 100 or 10 %, at most 2,000), a longer trial counting only when it
        wins by two standard errors; the best number of passes then trains on all the data, and the
        better basket rule of that trial becomes the space's :attr:`~likewise.Embeddings.basket_rule`.
        When the plan is 10 passes or fewer (about 1.25 M tokens or more) one trial would choose only
        the rule: the run trains once on all the data and the rule is chosen on the held-out slice
        with its tables (which saw those sequences too).
        The space's report (:class:`~likewise.training.report.TrainReport`) records the passes used and
        why, and why the basket rule was chosen.
    lr, min_lr : float
        Learning rate, decayed linearly from ``lr`` to ``min_lr`` over all epochs.
    max_context : int
        Basket mode: contexts per item; larger baskets are sampled so cost stays linear in basket size.
        16: a large basket (a weekly shop) then trains each of its items on 16 of the others drawn
        afresh every pass, not on all of them every pass, so its many weak pairs do not outweigh
        the small baskets' pairs. On Dunnhumby's Complete Journey 16 gives the products' kNN-10
        category agreement 0.486 against 0.441 with 50, and passes of 13 s against 37 s, with next
        basket and completion the same (``bench/supermarket.py``); on the Debian debtags it lowers the
        facet agreement by about 0.008 (``bench/defaults_vs_baselines.py``, seeds 1-4).
    neg_group : int, optional
        Contexts of one item that share one set of negative samples and train together as small
        matrix products (HogBatch, Ji et al. 2016). 1 is classic word2vec: a fresh set per pair and
        the exact sigmoid (the kernel of :mod:`likewise.kernels.sgns`). Larger is faster. Default
        (None): :data:`NEG_GROUP` of the mode, 16 for sequences and 4 for baskets, where sharing a
        set among all of a basket's items cost kNN purity (``bench/speed_vs_gensim.py``).
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
        Where to train (:func:`select_backend`). ``cpu``: the numba kernels. ``torch``: minibatch SGNS
        in PyTorch (``pip install '.[torch]'``), on a GPU or the CPU, and the only backend that
        runs under ``torchrun`` on several processes. ``auto`` (default): torch when it is installed
        and a CUDA GPU is present or the run has several processes, else the numba kernel.
    device : str
        Torch backend: ``"auto"`` (CUDA when present; under ``torchrun`` the GPU of ``LOCAL_RANK``),
        ``"cpu"``, ``"cuda"`` or ``"cuda:N"``. Ignored by the numba kernel.
    batch_tokens : int
        Torch backend: corpus tokens per training step, all processes together (whole sequences, so a
        step can be larger; smaller for a small corpus, so that a pass has at least 16 steps). Every
        pair of a step is computed from the tables as they were at its start, then all updates are
        added at once; the same ``batch_tokens`` and ``seed`` give the same vectors on 1 or N
        processes. Larger steps use a GPU better but update frequent items in bigger
        jumps (``docs/scale.md`` has the measurements).
    max_row_updates : int
        Torch backend: a row that takes more than this many pair updates in one step moves by this many
        times their mean instead of their sum (0: no cap). A step's updates are summed without the
        feedback a one-at-a-time trainer gets, so without a cap the rows of frequent items overshoot
        and diverge at large steps (text, ``batch_tokens=8192``: NaN after two epochs; with the cap
        the runs stayed finite). Rows under the cap get exactly the summed update.
    table_dtype : {"float32", "bfloat16"}
        Torch backend: how the two tables are stored. ``bfloat16`` halves their memory; updates are
        computed in float32 and rounded stochastically, so small steps are not lost.
    completion : {"auto", "itemitem", "affinity"}
        Basket mode: what completes a basket (``recommend``, ``complete``, ``also-bought``;
        :mod:`likewise.training.completion`). ``auto`` (default): an item-item model (EASE, its penalty
        chosen on the held-out slice) is fitted beside the vectors and kept when it completes the
        held-out baskets at least as well as the space's affinity.
        ``itemitem`` keeps it whatever the comparison; ``affinity`` does not fit it. The vectors answer
        every other query (similar items, customers, maps, campaigns, placed products) either way.
    completion_max_items : int
        Rows of the exact item-item fit: it needs ``16 * m**2`` bytes (8,192 rows: 1 GiB, about 25 s per
        penalty on 2 cores); a larger catalogue is fitted on its most frequent ``completion_max_items``
        items (the head).
    completion_min_count : int
        Products outside the head seen this many times or more get item-item weights too (the tail:
        each regressed on the head, see :func:`likewise.space.itemitem.tail_weights`), so completion
        covers every product with evidence; a basket of only rarer products is completed by the
        affinity. 0: the head alone.
    typed_negatives : bool
        In a typed space (a typed log, or item attributes), draw each pair's negatives from the type of
        the item it predicts, so a product is told apart from other products rather than from campaigns.
    """

    mode: Mode = "auto"
    dim: int = 100
    window: int = 5
    negative: int = 5
    ns_exponent: float = 0.75
    sample: float | None = None
    min_count: int | None = None
    max_items: int | None = None
    epochs: int | Literal["auto"] = "auto"
    lr: float = 0.025
    min_lr: float = 0.0001
    max_context: int = 16
    neg_group: int | None = None
    threads: int | None = None
    seed: int = 1
    deterministic: bool = False
    backend: Backend = "auto"
    device: str = "auto"
    batch_tokens: int = 8192
    max_row_updates: int = 64
    table_dtype: TableDtype = "float32"
    completion: Completion = "auto"
    completion_max_items: int = 8_192
    completion_min_count: int = 5
    typed_negatives: bool = False

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> TrainConfig:
        """Raise :class:`InputError` naming the first bad parameter; return ``self``."""
        if self.mode not in ("auto", "sequence", "basket"):
            raise InputError(f"mode == {self.mode!r}, must be 'auto', 'sequence' or 'basket'")
        ints = (
            ("dim", 1),
            ("window", 1),
            ("max_context", 1),
            ("negative", 0),
            ("batch_tokens", 1),
            ("max_row_updates", 0),
        )
        for name, lo in ints:
            check_int(name, getattr(self, name), lo)
        if self.epochs != "auto":
            check_int("epochs", self.epochs, 1, "or 'auto'")
        if self.min_count is not None:
            check_int("min_count", self.min_count, 1, "or None (by mode)")
        if self.max_items is not None:
            check_int("max_items", self.max_items, 1, "or None")
        if self.neg_group is not None:
            check_int("neg_group", self.neg_group, 1, "or None (by mode)")
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
        for flag in ("deterministic", "typed_negatives"):
            if not isinstance(getattr(self, flag), bool | np.bool_):
                raise InputError(f"{flag} == {getattr(self, flag)!r}, must be True or False")
        if self.backend not in ("auto", "cpu", "torch"):
            raise InputError(f"backend == {self.backend!r}, must be 'auto', 'cpu' or 'torch'")
        check_device(self.device)
        if self.table_dtype not in ("float32", "bfloat16"):
            raise InputError(f"table_dtype == {self.table_dtype!r}, must be 'float32' or 'bfloat16'")
        if self.table_dtype != "float32" and self.backend == "cpu":
            raise InputError(
                f"table_dtype == {self.table_dtype!r} needs backend='torch' (the numba kernel trains float32)"
            )
        if self.completion not in ("auto", "itemitem", "affinity"):
            raise InputError(f"completion == {self.completion!r}, must be 'auto', 'itemitem' or 'affinity'")
        check_int("completion_max_items", self.completion_max_items, 2)
        check_int("completion_min_count", self.completion_min_count, 0)
        return self

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-able dict (the saved space's ``config``: what the caller asked, its
        ``"auto"`` values unresolved; what training resolved them to is in its report)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TrainConfig:
        """The config saved by :meth:`to_dict` of this version or an older one, checked.

        Keys this version does not know are ignored: older versions wrote ``"model"`` (always
        ``"sgns"``), and a later field the code dropped reads as nothing. A field an older version did
        not write takes its default.

        Raises
        ------
        InputError
            ``d`` is not a mapping, or a value is out of range (``saved config: dim == -1, must be >= 1``).
        """
        if not isinstance(d, Mapping):
            raise InputError(f"a saved training config must be a JSON object, got {type(d).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        try:
            return cls(**{k: v for k, v in d.items() if k in names})
        except InputError as e:
            raise InputError(f"saved config: {e}") from None


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


_DEVICE = re.compile(r"(auto|cpu|cuda(:[0-9]+)?)")


def config_with(config: TrainConfig | None, overrides: Mapping[str, Any]) -> TrainConfig:
    """``config`` (default: ``TrainConfig()``) with keyword ``overrides`` replacing single fields, validated.

    The one check of the keyword arguments a training call passes on (``train(data, dim=32)``).

    Parameters
    ----------
    config : TrainConfig or None
    overrides : mapping of str to value
        Field names of :class:`TrainConfig` and their values.

    Returns
    -------
    TrainConfig
        A new config; ``config`` is not modified.

    Raises
    ------
    InputError
        A name that is not a field: gensim's names (:data:`GENSIM_NAMES`) get a one-line hint each
        (``vector_size is gensim's name: use dim=8``), any other name the list of known ones; or a
        bad value (:meth:`TrainConfig.validate`).
    """
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        lines = [_gensim_hint(name, overrides[name]) for name in unknown if name in GENSIM_NAMES]
        others = [name for name in unknown if name not in GENSIM_NAMES]
        if others:
            lines.append(
                f"unknown training parameter {others[0]!r}; known parameters: {', '.join(sorted(known))}"
            )
        raise InputError("; ".join(lines))
    return dataclasses.replace(config or TrainConfig(), **overrides).validate()


def _gensim_hint(name: str, value: Any) -> str:
    """``vector_size is gensim's name: use dim=8``: what to write instead of one of :data:`GENSIM_NAMES`."""
    ours, note = GENSIM_NAMES[name]
    if ours is None:
        return f"{name} is gensim's name: {note}"
    return f"{name} is gensim's name: use {ours}={value!r}" + (f" ({note})" if note else "")


def _default_of(f: dataclasses.Field) -> Any:
    """A dataclass field's default (its factory's value; a required field has none: a fresh object)."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return object()  # never equal to a value: a required field is always set


def sort_options(
    keywords: Mapping[str, Any], config: TrainConfig | None, objects: Mapping[str, tuple[type, Any]]
) -> tuple[TrainConfig, dict[str, Any]]:
    """The option objects of a training call, each keyword put into the one whose field it names.

    The one place a front end's keywords are sorted (``likewise.train(data, dim=8, user_col="c",
    progress="none")``); the objects then travel whole.

    Parameters
    ----------
    keywords : mapping of str to value
        The call's keywords.
    config : TrainConfig or None
        The hyper-parameters given whole; keywords that are its fields replace single fields
        (:func:`config_with`).
    objects : mapping of str to (class, object or None)
        The other option objects by their keyword (``{"read": (ReadOptions, read), "run": (RunOptions,
        run)}``): a dataclass, and the object given whole (None: built from the keywords alone).

    Returns
    -------
    config : TrainConfig
        Validated.
    built : dict
        Each object of ``objects`` by its keyword, with its keywords in it.

    Raises
    ------
    InputError
        An object of the wrong class; a keyword that is also set in the object given (both named); a
        keyword that names no field of any (the closest name offered; gensim's names get their hint).
    """
    import difflib

    rest = dict(keywords)
    built: dict[str, Any] = {}
    names = {f.name for f in dataclasses.fields(TrainConfig)}
    for slot, (cls, given) in objects.items():
        fields = {f.name: f for f in dataclasses.fields(cls)}
        names |= set(fields)
        mine = {k: rest.pop(k) for k in list(rest) if k in fields}
        if given is None:
            built[slot] = cls(**mine)
            continue
        if not isinstance(given, cls):
            raise InputError(f"{slot}= takes a {cls.__name__}, not {type(given).__name__}: {given!r}")
        for name in mine:
            value, default = getattr(given, name), _default_of(fields[name])
            if (value is not None) if default is None else (value != default):
                raise InputError(
                    f"{name}={mine[name]!r} is given twice: as a keyword and as "
                    f"{slot}={cls.__name__}({name}={value!r}); give it once"
                )
        built[slot] = dataclasses.replace(given, **mine) if mine else given
    unknown = sorted(set(rest) - names)
    if unknown:
        lines = [_gensim_hint(name, rest[name]) for name in unknown if name in GENSIM_NAMES]
        others = [name for name in unknown if name not in GENSIM_NAMES]
        if others:
            close = difflib.get_close_matches(others[0], sorted(names), n=1)
            hint = (
                f"did you mean {close[0]}=?"
                if close
                else "see the fields of "
                + ", ".join(["TrainConfig", *(cls.__name__ for cls, _ in objects.values())])
            )
            lines.append(f"unknown training parameter {others[0]!r} ({hint})")
        raise InputError("; ".join(lines))
    return config_with(config, rest), built


def min_count_for(config: TrainConfig) -> int:
    """``config.min_count``, or the default of its mode (:data:`MIN_COUNT`) when it is None.

    Parameters
    ----------
    config : TrainConfig
        With ``mode`` resolved to "sequence" or "basket" when ``min_count`` is None.

    Returns
    -------
    int
        The vocabulary threshold to compile the corpus with.
    """
    if config.min_count is not None:
        return int(config.min_count)
    if config.mode not in MIN_COUNT:
        raise InputError(
            f"mode == {config.mode!r}: min_count=None needs 'sequence' or 'basket' (resolve 'auto')"
        )
    return MIN_COUNT[config.mode]


def neg_group_for(config: TrainConfig) -> int:
    """``config.neg_group``, or the default of its mode (:data:`NEG_GROUP`) when it is None.

    Parameters
    ----------
    config : TrainConfig
        With ``mode`` resolved to "sequence" or "basket" when ``neg_group`` is None.

    Returns
    -------
    int
    """
    if config.neg_group is not None:
        return int(config.neg_group)
    if config.mode not in NEG_GROUP:
        raise InputError(
            f"mode == {config.mode!r}: neg_group=None needs 'sequence' or 'basket' (resolve 'auto')"
        )
    return NEG_GROUP[config.mode]


def check_device(device: object) -> str:
    """``device`` if it names a torch device likewise trains on; raises :class:`InputError` otherwise."""
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise InputError(f"device == {device!r}, must be 'auto', 'cpu', 'cuda' or 'cuda:N'")
    return device


def _torch_installed() -> bool:
    return importlib.util.find_spec("torch") is not None


def _cuda_present() -> bool:
    """True when torch sees a CUDA GPU; torch is imported only when the machine shows an NVIDIA driver,
    so choosing the backend on a machine without one costs nothing."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return False
    if not (os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidia0")):
        return False
    import torch

    return bool(torch.cuda.is_available())


def select_backend(name: str, world_size: int = 1) -> str:
    """The one place a training backend is chosen.

    Parameters
    ----------
    name : {"auto", "cpu", "torch"}
    world_size : int
        Processes of the run (``WORLD_SIZE`` under ``torchrun``; see :mod:`likewise.training.distributed`).

    Returns
    -------
    str
        ``"cpu"`` (the numba kernel) or ``"torch"``. ``auto`` is torch when torch is installed and either
        a CUDA GPU is present or the run has several processes; otherwise cpu.

    Raises
    ------
    InputError
        An unknown name, or ``cpu`` asked for in a run of several processes (the numba kernel trains
        in one process: each would train alone and they would overwrite one another's output).
    MissingDependencyError
        ``torch`` asked for (or needed by a run of several processes) and torch is not installed.
    """
    if name not in ("auto", "cpu", "torch"):
        raise InputError(f"backend == {name!r}, must be 'auto', 'cpu' or 'torch'")
    if name == "cpu":
        if world_size > 1:
            raise InputError(
                f"backend == 'cpu' in a run of {world_size} processes: the numba kernel trains in one "
                "process; use backend 'torch' (--backend torch) under torchrun"
            )
        return "cpu"
    if name == "torch" or world_size > 1:
        if not _torch_installed():
            raise MissingDependencyError("torch", "torch", "the torch training backend")
        return "torch"
    return "torch" if _torch_installed() and _cuda_present() else "cpu"
