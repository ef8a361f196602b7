"""Hyper-parameter search within a time budget, scored on a held-out split beside the count baselines.

:func:`tune` splits the input as ``likewise split`` does (:func:`likewise.evaluate.split_sequences`: a
seeded share of the baskets / sequences, one item of each hidden), trains on the train part with the
library defaults first and then with seeded random settings until the budget is spent, scores each
trial by leave-one-out completion (HR@k, NDCG@k, MRR@k, scored as ``recommend`` scores, by
:func:`likewise.evaluate.ranking_metrics`) and fits the count baselines of :mod:`likewise.baselines.counts`
on the same split (:func:`likewise.evaluate.holdout_report`).

Why random search: with seven parameters of which two or three matter for a given data set, random
points cover each important axis far better than a grid of the same size (Bergstra & Bengio 2012), and
every trial is independent, so the search can stop whenever the budget is spent. Why these parameters:
Caselles-Dupré, Lesaint & Royo-Letelier (2018, "Word2vec applied to recommendation: hyperparameters
matter") found that on item data the negative-sampling exponent, the subsampling threshold and the
window (for sessions) move recommendation quality far more than their text defaults suggest; ranges
are in :data:`SPACE`.

The first trial passes no hyper-parameter (the library defaults, whatever they are in this version),
and the best trial is the one with the highest HR@k (then NDCG@k, then the earlier trial), so the
result is never worse than the defaults on the held-out metric. The saved model is the best trial's
own model, trained on the train part only (the held-out cases never reached it); its config holds the
settings it was trained with and ``meta["tune"]`` the search.

The budget is kept: a trial is started only when it is expected to end within it. Its duration is
estimated from the trials before it (:func:`expected_seconds`: their seconds per unit of work, the
slowest rate, times the new trial's work, passes x dimensions x (negatives + 1), x window for
sequences); when the next trial would end past the budget the search stops there and says so
(``stopped``). The count baselines are scored once after the search, outside the budget.

Reproducibility: the candidate settings come from one seeded generator, so two runs with the same seed
try the same settings in the same order; with ``deterministic=True`` each trial's model (and so its
score) is bit-identical too. How many trials fit in the budget depends on the machine: give
``max_trials`` for a run that is reproducible end to end.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from .._budget import expected_seconds, parse_budget
from .._check import check_int
from ..errors import InputError
from ..space.search import BASKET_RULES

__all__ = [
    "SPACE",
    "TuneOptions",
    "TuneResult",
    "Trial",
    "expected_seconds",
    "parse_budget",
    "sample_params",
    "tune",
]

# name -> (low, high, scale); "log" draws log-uniformly, "linear" uniformly; ints are rounded.
SPACE: dict[str, tuple[float, float, str]] = {
    "dim": (16, 256, "log"),
    "epochs": (5, 50, "log"),
    "window": (2, 20, "log"),  # sequence mode only: baskets have no window
    "negative": (2, 20, "log"),
    "ns_exponent": (-0.5, 1.0, "linear"),  # < 0 favours rare items as negatives (Caselles-Dupré et al.)
    "sample": (1e-5, 1e-2, "log"),  # or 0 (off), with probability SAMPLE_OFF
    "lr": (0.005, 0.1, "log"),
}
SAMPLE_OFF = 0.5
_INTS = ("dim", "epochs", "window", "negative")
_SHOWN = ("dim", "epochs", "window", "negative", "ns_exponent", "sample", "lr")


def sample_params(rng: np.random.Generator, mode: str, n_items: int | None = None) -> dict[str, Any]:
    """One random point of :data:`SPACE` (``window`` only in sequence mode).

    Parameters
    ----------
    rng : numpy.random.Generator
    mode : {"basket", "sequence"}
    n_items : int, optional
        Distinct items of the training data. A subsampling threshold below ``1 / n_items`` thins even
        an item of average frequency (every item is "frequent"), which measured trials showed only hurts
        (docs/tune.md), so ``sample`` is drawn from ``max(1e-5, 1 / n_items) .. 1e-2`` (or off).

    Returns
    -------
    dict
        Keyword arguments for :func:`likewise.training.train.train`.
    """
    out: dict[str, Any] = {}
    for name, (lo, hi, scale) in SPACE.items():
        if name == "window" and mode != "sequence":
            continue
        u = rng.random()
        if name == "sample":
            off = rng.random() < SAMPLE_OFF
            lo = max(lo, 1.0 / n_items) if n_items else lo
            off = off or lo >= hi  # a catalogue of fewer than 100 items: off is the only sensible value
            out[name] = 0.0 if off else float(math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo))))
            continue
        if scale == "log":
            v = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
        else:
            v = lo + u * (hi - lo)
        out[name] = int(round(v)) if name in _INTS else round(float(v), 4)
    out["lr"] = float(f"{out['lr']:.3g}")
    if out["sample"]:
        out["sample"] = float(f"{out['sample']:.3g}")
    return out


@dataclass(frozen=True)
class Trial:
    """One trained and scored setting.

    Attributes
    ----------
    number : int
        0 is the default trial.
    params : dict
        What was passed to :func:`likewise.training.train.train` (empty for the default trial).
    settings : dict
        The values the model was trained with (``dim``, ``epochs``, ``window``, ``negative``,
        ``ns_exponent``, ``sample``, ``lr``), defaults resolved.
    hr, ndcg, mrr, coverage : float
        Held-out metrics at ``k``.
    seconds : float
        Training and scoring time.
    """

    number: int
    params: dict[str, Any]
    settings: dict[str, Any]
    hr: float
    ndcg: float
    mrr: float
    coverage: float
    seconds: float

    @property
    def name(self) -> str:
        """``"default"`` or ``"trial N"``."""
        return "default" if self.number == 0 else f"trial {self.number}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able."""
        return {
            "number": self.number,
            "name": self.name,
            "params": dict(self.params),
            "settings": dict(self.settings),
            "hr": self.hr,
            "ndcg": self.ndcg,
            "mrr": self.mrr,
            "coverage": self.coverage,
            "seconds": self.seconds,
        }


@dataclass
class TuneResult:
    """What :func:`tune` found.

    Attributes
    ----------
    trials : list of Trial
        In the order they ran; ``trials[0]`` is the default trial.
    best : Trial
    embeddings : Embeddings
        The best trial's model (trained on the train part), with ``meta["tune"]``.
    baselines : dict
        Baseline name -> held-out metrics (``hr``, ``ndcg``, ``mrr``, ``coverage``), same split and
        vocabulary; ``ppmi-svd`` has the best trial's dimension.
    k, seed, budget_s, elapsed_s : number
    mode : {"basket", "sequence"}
    n_train, n_test : int
        Training sequences, and held-out cases scored.
    stopped : str
        Why the search ended.
    """

    trials: list[Trial]
    best: Trial
    embeddings: Any
    baselines: dict[str, dict[str, float]]
    k: int
    seed: int
    budget_s: float
    elapsed_s: float
    mode: str
    n_train: int
    n_test: int
    stopped: str
    split: Any = field(default=None, repr=False)

    @property
    def default(self) -> Trial:
        """The default trial."""
        return self.trials[0]

    def leaderboard(self) -> list[dict[str, Any]]:
        """Trials and baselines in one list, best HR@k first (then NDCG@k; the earlier trial on ties).

        Each row: ``{"rank", "name", "kind": "trial" | "baseline", "hr", "ndcg", "mrr", "coverage",
        "settings" (trials; empty for baselines), "seconds" (trials; None for baselines)}``.
        """
        rows: list[dict[str, Any]] = []
        for t in self.trials:
            rows.append(
                {
                    "name": t.name,
                    "kind": "trial",
                    "number": t.number,
                    "hr": t.hr,
                    "ndcg": t.ndcg,
                    "mrr": t.mrr,
                    "coverage": t.coverage,
                    "settings": dict(t.settings),
                    "seconds": t.seconds,
                }
            )
        for i, (name, m) in enumerate(self.baselines.items()):
            rows.append(
                {
                    "name": name,
                    "kind": "baseline",
                    "number": len(self.trials) + i,
                    "hr": m["hr"],
                    "ndcg": m["ndcg"],
                    "mrr": m["mrr"],
                    "coverage": m["coverage"],
                    "settings": {},
                    "seconds": None,
                }
            )
        rows.sort(key=lambda r: (-r["hr"], -r["ndcg"], r["number"]))
        for rank, r in enumerate(rows, 1):
            r["rank"] = rank
            del r["number"]
        return rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary: the search, the best trial, every trial and the leaderboard."""
        return {
            "k": self.k,
            "seed": self.seed,
            "budget_s": self.budget_s,
            "elapsed_s": self.elapsed_s,
            "stopped": self.stopped,
            "mode": self.mode,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "best": self.best.to_dict(),
            "default": self.default.to_dict(),
            "trials": [t.to_dict() for t in self.trials],
            "baselines": {n: dict(m) for n, m in self.baselines.items()},
            "leaderboard": self.leaderboard(),
        }


def _read_sequences(data: Any, cache_dir: str | os.PathLike | None) -> tuple[list[list[str]], str]:
    """Key sequences of ``data`` and the mode it asks for (as ``likewise split`` reads it)."""
    from ..data.corpus import Corpus, build_corpus
    from ..readers import InputSpec
    from .auto import infer_mode

    if isinstance(data, str | os.PathLike):
        data = InputSpec(paths=(os.fspath(data),))
    if isinstance(data, InputSpec | Corpus):
        mode, _ = infer_mode(data)
        corpus = data if isinstance(data, Corpus) else build_corpus(data, min_count=1, cache_dir=cache_dir)
        keys = np.array(corpus.vocab.keys, dtype=object)
        toks = keys[np.asarray(corpus.ids)]
        off = np.asarray(corpus.offsets).tolist()
        return [toks[a:b].tolist() for a, b in zip(off[:-1], off[1:], strict=True)], mode
    if isinstance(data, Iterable) and not isinstance(data, str | bytes):
        seqs = list(data)
        is_sets = bool(seqs) and all(isinstance(s, set | frozenset) for s in seqs)
        return [list(s) for s in seqs], "basket" if is_sets else "sequence"
    raise InputError(
        f"cannot tune on {type(data).__name__}: pass an InputSpec, a path, a Split, "
        "or an iterable of sequences of item keys"
    )


def _best_rule(emb: Any, contexts: Any, targets: Any, k: int) -> tuple[dict[str, Any], str | None]:
    """Held-out metrics of ``emb`` under its better basket rule, and that rule (None: cosine only).

    A trial with a set number of passes keeps the mixture (no held-out slice inside training chose),
    so the search scores both rules on its split, like every other setting, and the space keeps the
    better one (equal: the space's own).
    """
    from .. import evaluate as ev

    def score(scoring: str) -> dict[str, Any]:
        rec = ev.EmbeddingRecommender(emb, scoring=scoring)
        return ev.ranking_metrics(rec, contexts, targets, k=k, n_items=len(emb))

    if emb.context is None:
        return score("auto"), None
    own = emb.basket_rule
    order = [own, *(r for r in BASKET_RULES if r != own)]
    scored = {r: score(r) for r in order}
    rule = max(order, key=lambda r: (scored[r]["hr"], scored[r]["ndcg"]))  # ties: the first, the space's
    if rule != own:
        emb.meta["basket_scoring"] = rule
        emb.meta["scoring_reason"] = (
            f"tune: HR@{k} {scored[rule]['hr']:.4f} with the {rule} on the search's held-out split, "
            f"against {scored[own]['hr']:.4f} with the {own}"
        )
    return scored[rule], rule


def _settings(emb: Any) -> dict[str, Any]:
    """The searched values a model was trained with (no window in basket mode: baskets have none)."""
    config = emb.report.trained_config(emb.config)  # "auto" and None as training resolved them
    return {n: getattr(config, n) for n in _SHOWN if not (n == "window" and config.mode == "basket")}


class _Reporter:
    """A tqdm bar over trials when tqdm is importable; else one line per trial on stderr."""

    def __init__(self, enabled: bool, total: int | None) -> None:
        self.enabled = enabled
        self._bar = None
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=total, desc="tune", unit="trial", file=sys.stderr, dynamic_ncols=True)

    def trial(self, t: Trial, best: Trial, k: int) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix({f"HR@{k}": f"{t.hr:.4f}", "best": f"{best.hr:.4f}"}, refresh=False)
            self._bar.update(1)
            return
        s = " ".join(f"{n}={v}" for n, v in t.settings.items() if v is not None)
        sys.stderr.write(
            f"tune: {t.name}: HR@{k} {t.hr:.4f} NDCG@{k} {t.ndcg:.4f} ({t.seconds:.1f}s) {s}; "
            f"best {best.name} {best.hr:.4f}\n"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


@dataclass(frozen=True)
class TuneOptions:
    """The settings of :func:`tune` (all but the data and the callback), checked when built.

    :func:`tune` takes them as an object (``tune(data, TuneOptions(budget_s="10m"))``) or as keywords
    (``tune(data, budget_s="10m")``), or both (the keywords replace the object's fields).

    Parameters
    ----------
    budget_s : float or str
        Wall-clock budget in seconds, or a duration for :func:`parse_budget` (``"10m"``). Counted from
        the call; a trial is started only when it is expected to end within it
        (:func:`expected_seconds`), and the default trial always runs. The baselines are scored after
        the search.
    seed : int
        Seeds the split, the search and every trial's training.
    k : int
        List length of the metrics (HR@k decides).
    mode : {"auto", "basket", "sequence"}
        How to split and train; ``auto``: what the input says (:func:`likewise.training.train.infer_mode`;
        in-memory sets are baskets, lists sequences; a Split keeps its own mode).
    test_fraction : float
        Share of the eligible sequences held out, in (0, 1).
    max_trials : int, optional
        Stop after this many trials (the default trial included), even with budget left.
    min_count, max_items : int, optional
        Vocabulary trimming, the same for every trial (default: the library's).
    threads : int, optional
        Training threads (default: all cores).
    deterministic : bool
        One thread, bit-identical trials (see the module docstring).
    baselines : sequence of str
        Count baselines to score on the same split (:data:`likewise.baselines.counts.BASELINES`).
    cache_dir : path, optional
        Where compiled corpora of file inputs are cached.
    progress : bool, optional
        A bar over trials (tqdm) or one line per trial on stderr; default: when stderr is a terminal.
    """

    budget_s: float | str = 600.0
    seed: int = 0
    k: int = 10
    mode: str = "auto"
    test_fraction: float = 0.2
    max_trials: int | None = None
    min_count: int | None = None
    max_items: int | None = None
    threads: int | None = None
    deterministic: bool = False
    baselines: Sequence[str] = ("popular", "cocount", "ppmi", "ppmi-svd")
    cache_dir: str | os.PathLike | None = None
    progress: bool | None = None

    def __post_init__(self) -> None:
        parse_budget(self.budget_s)
        check_int("seed", self.seed, 0)
        check_int("k", self.k, 1)
        if self.max_trials is not None:
            check_int("max_trials", self.max_trials, 1, "or None")
        if self.mode not in ("auto", "basket", "sequence"):
            raise InputError(f"mode == {self.mode!r}, must be 'auto', 'basket' or 'sequence'")

    @classmethod
    def of(cls, options: TuneOptions | None, settings: dict[str, Any]) -> TuneOptions:
        """``options`` (default: the defaults) with the keyword ``settings`` of :func:`tune` in place."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(settings) - names)
        if unknown:
            raise TypeError(f"tune() got an unexpected keyword argument {unknown[0]!r}")
        if options is not None and not isinstance(options, TuneOptions):
            raise InputError(f"options must be a TuneOptions or None, got {type(options).__name__}")
        return replace(options or cls(), **settings) if settings else options or cls()


def tune(
    data: Any,
    options: TuneOptions | None = None,
    *,
    callback: Callable[[Trial], None] | None = None,
    **settings: Any,
) -> TuneResult:
    """Search training settings within a time budget; score each on a held-out split.

    Parameters
    ----------
    data : InputSpec, path, Split, or iterable of sequences of str
        What to learn from. A :class:`likewise.evaluate.Split` (e.g. from ``load_split``) is used as it
        is; anything else is read and split with :func:`likewise.evaluate.split_sequences`.
    options : TuneOptions, optional
        The settings (budget, seed, k, mode, split, trials, vocabulary, threads, baselines, cache,
        progress); default: :class:`TuneOptions`'s defaults.
    callback : callable, optional
        Called with each :class:`Trial` as it finishes.
    **settings
        Any field of :class:`TuneOptions` as a keyword (``budget_s="10m"``, ``seed=1``, ``k=20``,
        ``max_trials=5`` ...), replacing that field of ``options``.

    Returns
    -------
    TuneResult
    """
    from .. import evaluate as ev
    from ..space.embeddings import Embeddings

    t0 = time.perf_counter()
    opts = TuneOptions.of(options, settings)
    budget, seed, k = parse_budget(opts.budget_s), opts.seed, opts.k
    split = _split_of(data, opts.mode, opts.test_fraction, seed, opts.cache_dir)
    # The search is over the vectors' settings, which the item-item model (EASE) does not depend on: its
    # trials are scored by the affinity and train none (likewise.training.completion); the best space
    # completes by its affinity (`likewise train` with the chosen settings fits the item-item model
    # beside them).
    fixed: dict[str, Any] = {
        "mode": split.mode,
        "seed": seed,
        "deterministic": opts.deterministic,
        "completion": "affinity",
    }
    for name, v in (("min_count", opts.min_count), ("max_items", opts.max_items), ("threads", opts.threads)):
        if v is not None:
            fixed[name] = v
    train_part = [s for s in split.train if s]
    search = _Search(split, train_part, fixed, k, budget, opts.max_trials, t0)
    progress = sys.stderr.isatty() if opts.progress is None else bool(opts.progress)
    trials, best_trial, best_emb = search.run(
        np.random.default_rng([seed, 0x7E5E]), _Reporter(progress, opts.max_trials), callback
    )

    report = ev.holdout_report(best_emb, split, k=k, baselines=tuple(opts.baselines), seed=seed)
    base = {
        name: {mm: float(row[mm]) for mm in ("hr", "ndcg", "mrr", "coverage")}
        for name, row in report["rows"].items()
        if name not in ("model", "model-cosine")
    }
    elapsed = time.perf_counter() - t0
    meta = {**best_emb.meta, "tune": _tune_record(best_trial, trials, k, budget, seed, split, base)}
    final = Embeddings(best_emb.vectors, best_emb.vocab, config=best_emb.config, meta=meta)
    if best_emb.context is not None:
        final.attach_context(best_emb.context)
    return TuneResult(
        trials=trials,
        best=best_trial,
        embeddings=final,
        baselines=base,
        k=k,
        seed=seed,
        budget_s=budget,
        elapsed_s=elapsed,
        mode=split.mode,
        n_train=len(train_part),
        n_test=search.n_test,
        stopped=search.stopped,
        split=split,
    )


def _split_of(data: Any, mode: str, test_fraction: float, seed: int, cache_dir: Any) -> Any:
    """The held-out split :func:`tune` scores on: ``data`` itself when it is one, else made from it."""
    from .. import evaluate as ev

    if isinstance(data, ev.Split):
        if mode != "auto" and mode != data.mode:
            raise InputError(f"mode == {mode!r}, but the split was made in {data.mode!r} mode")
        return data
    seqs, inferred = _read_sequences(data, cache_dir)
    return ev.split_sequences(
        seqs, mode=inferred if mode == "auto" else mode, test_fraction=test_fraction, seed=seed
    )  # type: ignore[arg-type]


class _Search:
    """The trial loop of :func:`tune`: the default settings first, then random ones while the budget holds."""

    def __init__(
        self,
        split: Any,
        train_part: list[list[str]],
        fixed: dict[str, Any],
        k: int,
        budget: float,
        max_trials: int | None,
        t0: float,
    ) -> None:
        self.split, self.train_part, self.fixed, self.k = split, train_part, fixed, k
        self.budget, self.max_trials, self.t0 = budget, max_trials, t0
        self.n_items = len({x for s in train_part for x in s})
        self.n_test = 0
        self.stopped = "budget spent"

    def _next_params(self, rng: np.random.Generator, trials: list[Trial]) -> dict[str, Any] | None:
        """The next trial's settings, or None (with ``self.stopped`` saying why) when the search ends."""
        number = len(trials)
        if number == 0:
            return {}
        if self.max_trials is not None and number >= self.max_trials:
            self.stopped = f"max_trials={self.max_trials} reached"
            return None
        if time.perf_counter() - self.t0 >= self.budget:
            return None
        params = sample_params(rng, self.split.mode, self.n_items)
        now, guess = time.perf_counter() - self.t0, expected_seconds(trials, params, self.split.mode)
        if now + guess > self.budget:  # never start a trial that would end past the budget
            self.stopped = (
                f"budget: the next trial, expected to take {guess:.1f} s, would end at "
                f"{now + guess:.1f} s, past the {self.budget:g} s budget; not started"
            )
            return None
        return params

    def _trial(self, number: int, params: dict[str, Any]) -> tuple[Trial, Any]:
        """Train with ``params`` on the train part and score it on the held-out cases."""
        from .. import evaluate as ev
        from .train import train

        start = time.perf_counter()
        emb = train(self.train_part, **self.fixed, **params, progress=False)
        contexts, targets, _ = ev.holdout_cases(emb.vocab.index, self.split)
        if len(targets) == 0:
            raise InputError(
                "no held-out case has its hidden item and a visible item in the trained vocabulary "
                f"(min_count={emb.report.min_count!r}: lower it)"
            )
        self.n_test = len(targets)
        m, rule = _best_rule(emb, contexts, targets, self.k)
        settings = {**_settings(emb), "basket_rule": rule}
        hr, ndcg, mrr, cov = m["hr"], m["ndcg"], m["mrr"], m["coverage"]
        return Trial(number, params, settings, hr, ndcg, mrr, cov, time.perf_counter() - start), emb

    def run(
        self, rng: np.random.Generator, reporter: Any, callback: Callable[[Trial], None] | None
    ) -> tuple[list[Trial], Trial, Any]:
        """Every trial, the best one and its space."""
        trials: list[Trial] = []
        best_trial: Trial | None = None
        best_emb = None
        try:
            while (params := self._next_params(rng, trials)) is not None:
                trial, emb = self._trial(len(trials), params)
                trials.append(trial)
                if best_trial is None or (trial.hr, trial.ndcg) > (best_trial.hr, best_trial.ndcg):
                    best_trial, best_emb = trial, emb
                reporter.trial(trial, best_trial, self.k)
                if callback is not None:
                    callback(trial)
        finally:
            reporter.close()
        if best_trial is None or best_emb is None:  # pragma: no cover - the default trial always runs
            raise InputError("no trial ran")
        return trials, best_trial, best_emb


def _tune_record(
    best: Trial, trials: list[Trial], k: int, budget: float, seed: int, split: Any, base: dict[str, Any]
) -> dict[str, Any]:
    """What the tuned space's ``meta["tune"]`` records of the search."""
    return {
        "trial": best.number,
        "params": best.params,
        "settings": best.settings,
        "k": k,
        "hr": best.hr,
        "ndcg": best.ndcg,
        "default_hr": trials[0].hr,
        "default_ndcg": trials[0].ndcg,
        "trials": len(trials),
        "budget_s": budget,
        "seed": seed,
        "split": {"mode": split.mode, "seed": split.seed, "test_fraction": split.test_fraction},
        "trained_on": "the train part of the split (held-out cases excluded)",
        "baselines_hr": {n: v["hr"] for n, v in base.items()},
    }
