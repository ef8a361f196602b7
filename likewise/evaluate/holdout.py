"""Is the space any good? Word benchmarks, held-out recommendation, labels -- beside the baselines.

* :func:`evaluate_analogies` -- ``questions-words.txt`` analogies, per section, 3CosAdd or 3CosMul, batched
  matrix products; with 3CosAdd the counts equal gensim's ``evaluate_word_analogies``.
* :func:`evaluate_pairs` -- WordSim-353 / SimLex-999 pairs: Spearman, Pearson and the out-of-vocabulary
  share, equal to gensim's ``evaluate_word_pairs``.
* :func:`split_sequences` / :func:`save_split` / :func:`load_split` -- a reproducible train/test split,
  and :func:`holdout_report`, which scores the model and the baselines of :mod:`likewise.baselines` on
  its test part with :func:`ranking_metrics` (HR@K, NDCG@K, MRR, coverage).
* :func:`evaluate_labels` -- kNN majority-label accuracy and per-label purity; :func:`label_purity`.

Split folder format (version 1)
-------------------------------
``train.txt``
    One training sequence per line, item keys separated by one space -- or by the input's ``delimiter``
    when one was given (then ``likewise train train.txt --delimiter D`` reads it).
``test.tsv``
    A header line ``context<TAB>target``, then one test case per line: the visible items (separated as in
    ``train.txt``, in their original order) and the hidden item.
``split.json``
    ``{"format": "likewise.split", "version": 1, "mode", "seed", "test_fraction", "delimiter", "n_train",
    "n_test", "n_short", "input", "files": {name: {"sha256", "bytes"}}}``.

A key that could not be read back -- one holding whitespace (or, with a delimiter, the delimiter, a tab
or a line break), or an empty one -- is refused when the split is written. Numpy only.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .._fileio import file_sha256
from ..baselines import BASELINES, Recommender, VectorRecommender, fit_baselines
from ..embeddings import Embeddings
from ..errors import CorruptModelError, InputError
from ..search import normalise_rows, top_k_search

__all__ = [
    "METRICS",
    "EmbeddingRecommender",
    "Split",
    "evaluate_analogies",
    "evaluate_labels",
    "evaluate_pairs",
    "heldout_loss",
    "holdout_cases",
    "holdout_report",
    "label_purity",
    "load_split",
    "ranking_metrics",
    "read_labels",
    "save_split",
    "split_sequences",
    "winners",
]

METRICS = ("hr", "ndcg", "mrr", "coverage")
SPLIT_FORMAT = "likewise.split"
SPLIT_VERSION = 1


# --------------------------------------------------------------------------------------------------------
# Labels
# --------------------------------------------------------------------------------------------------------


def label_purity(
    emb: Embeddings, labels: Mapping[str, str], k: int = 10, items: Sequence[str] | None = None
) -> float:
    """Mean share of each item's ``k`` nearest neighbours that carry the item's own label.

    Parameters
    ----------
    emb : Embeddings
        The space to judge.
    labels : mapping of str to str
        Item key -> label (e.g. department, planted group). Every queried item and neighbour needs one.
    k : int
        Neighbours per item.
    items : sequence of str, optional
        Items to query (default: all of ``emb``'s items).

    Returns
    -------
    float
        In ``[0, 1]``; chance level is about the share of the largest label.
    """
    queries = list(emb.keys if items is None else items)
    if not queries:
        raise InputError("label_purity needs at least one item to query")
    missing = next((q for q in queries if q not in labels), None)
    if missing is not None:
        raise InputError(f"item {missing!r} has no label: every queried item needs one")
    # restrict=len(emb) searches every item exactly, even when an approximate index is attached.
    res = emb.similar(queries, k=k, restrict=len(emb))
    own = np.array([labels[q] for q in queries], dtype=object)
    try:
        nb = np.array([[labels[x] for x in row] for row in res.keys], dtype=object)
    except KeyError as e:
        raise InputError(f"neighbour {e.args[0]!r} has no label: every item needs one") from None
    return float((nb == own[:, None]).mean())


def evaluate_labels(emb: Embeddings, labels: Mapping[str, str], k: int = 10) -> dict[str, Any]:
    """kNN majority-label accuracy and label purity over the labelled items of the space.

    Each labelled item of ``emb`` queries its ``k`` nearest labelled items (unlabelled items are not
    candidates). Its predicted label is the most common label among them, a tie going to the label of
    the nearer neighbour. Purity is the share of neighbours with the item's own label.

    Returns
    -------
    dict
        ``{"k", "n", "n_unknown", "accuracy", "purity", "per_label": {label: {"n", "accuracy",
        "purity"}}}``; ``n_unknown`` counts labelled keys absent from the space.
    """
    known = [key for key in labels if key in emb.vocab]
    if len(known) < 2:
        raise InputError(f"only {len(known)} labelled item(s) are in the space: need at least 2")
    ids = np.array(sorted(emb.vocab.id(key) for key in known), dtype=np.int64)
    keys = [emb.keys[i] for i in ids.tolist()]
    res = emb.similar(ids.tolist(), k=k, restrict=ids)
    per: dict[str, list[tuple[bool, float]]] = {}
    for key, row in zip(keys, res.keys, strict=True):
        own = labels[key]
        nb = [labels[x] for x in row]
        tally = Counter(nb)
        best = max(tally.values())
        predicted = next(lab for lab in nb if tally[lab] == best)  # nearest among the tied labels
        per.setdefault(own, []).append((predicted == own, sum(x == own for x in nb) / len(nb)))
    all_hits = [h for v in per.values() for h in v]
    return {
        "k": int(res.ids.shape[1]),
        "n": len(all_hits),
        "n_unknown": len(labels) - len(known),
        "accuracy": float(np.mean([a for a, _ in all_hits])),
        "purity": float(np.mean([p for _, p in all_hits])),
        "per_label": {
            lab: {
                "n": len(v),
                "accuracy": float(np.mean([a for a, _ in v])),
                "purity": float(np.mean([p for _, p in v])),
            }
            for lab, v in sorted(per.items())
        },
    }


def read_labels(path: str | os.PathLike) -> dict[str, str]:
    """Read ``item<TAB>label`` lines (blank lines and ``#`` comments skipped)."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise InputError(f"{str(path)!r} line {no}: expected 'item<TAB>label', got {line[:80]!r}")
            out[parts[0]] = parts[1]
    if not out:
        raise InputError(f"labels file {str(path)!r} holds no 'item<TAB>label' line")
    return out


# --------------------------------------------------------------------------------------------------------
# Word benchmarks (gensim semantics)
# --------------------------------------------------------------------------------------------------------


def _ok_vocab(emb: Embeddings, restrict: int | None, case_insensitive: bool) -> dict[str, int]:
    """Key -> id over the first ``restrict`` keys; uppercased keys map to their first (most frequent) id."""
    keys = emb.keys[:restrict] if restrict else emb.keys
    out: dict[str, int] = {}
    for i, key in enumerate(keys):
        out.setdefault(key.upper() if case_insensitive else key, i)
    return out


def _check_restrict(restrict: Any) -> int | None:
    if restrict is not None and (not isinstance(restrict, int | np.integer) or restrict < 1):
        raise InputError(f"restrict == {restrict!r}, must be an int >= 1 or None")
    return None if restrict is None else int(restrict)


def evaluate_analogies(
    emb: Embeddings,
    path: str | os.PathLike,
    *,
    restrict: int | None = 300_000,
    case_insensitive: bool = True,
    method: Literal["add", "mul"] = "add",
    dummy4unknown: bool = False,
) -> dict[str, Any]:
    """Accuracy on ``a b c d`` analogy questions ("a is to b as c is to d"), per section.

    Semantics follow gensim's ``KeyedVectors.evaluate_word_analogies`` so the numbers can be compared:
    a line ``: name`` starts a section; a line that does not split into four words is skipped; a question
    with a word outside the first ``restrict`` keys is out of vocabulary (skipped, or counted wrong with
    ``dummy4unknown``); with ``case_insensitive`` words are compared uppercased and an uppercased word
    stands for its most frequent case variant. The answer is the best of the top 5 candidates (``a``,
    ``b``, ``c`` excluded) whose word is not ``a``, ``b`` or ``c`` up to case.

    Parameters
    ----------
    emb : Embeddings
    path : path
        The questions file (``questions-words.txt`` format, UTF-8).
    restrict : int or None
        Only the ``restrict`` most frequent keys are candidates and known words (gensim: 300,000).
    case_insensitive : bool
    method : {"add", "mul"}
        3CosAdd (gensim's) or 3CosMul (scored as :meth:`Embeddings.analogy` does).
    dummy4unknown : bool
        Count out-of-vocabulary questions as wrong instead of skipping them.

    Returns
    -------
    dict
        ``{"method", "restrict", "case_insensitive", "sections": [{"section", "correct", "total",
        "accuracy"}], "total": {...same...}, "questions", "oov", "oov_ratio"}``; ``oov_ratio`` is a share in
        [0, 1] of the valid questions (gensim logs it as a percentage); the accuracy of an empty section is 0.
    """
    if method not in ("add", "mul"):
        raise InputError(f"method == {method!r}, must be 'add' or 'mul'")
    restrict = _check_restrict(restrict)
    ok = _ok_vocab(emb, restrict, case_insensitive)
    names: list[str] = []
    sec_of: list[int] = []
    abc: list[tuple[int, int, int]] = []
    expected: list[str] = []
    ignore: list[tuple[str, str, str]] = []
    dummy_wrong: Counter[int] = Counter()
    n_questions = oov = 0
    with open(path, "rb") as f:
        for line_no, raw in enumerate(f):
            line = raw.decode("utf-8")
            if line.startswith(": "):
                names.append(line.lstrip(": ").strip())
                continue
            if not names:
                raise InputError(f"{str(path)!r}: missing section header before line #{line_no}")
            words = line.split()
            if len(words) != 4:
                continue
            if case_insensitive:
                words = [w.upper() for w in words]
            n_questions += 1
            if any(w not in ok for w in words):
                oov += 1
                if dummy4unknown:
                    dummy_wrong[len(names) - 1] += 1
                continue
            a, b, c, d = words
            abc.append((ok[a], ok[b], ok[c]))
            expected.append(d)
            ignore.append((a, b, c))
            sec_of.append(len(names) - 1)
    correct = np.zeros(len(abc), dtype=bool)
    if abc:
        idx = np.asarray(abc, dtype=np.int64)
        normed = emb.normed
        table = normed[:restrict] if restrict else normed
        n = len(idx)
        step = 8192  # bounded query block; top_k_search blocks the score matrix itself
        keys = emb.keys
        for s in range(0, n, step):
            ia, ib, ic = (idx[s : s + step, j] for j in range(3))
            if method == "add":
                queries = normalise_rows(normed[ib] - normed[ia] + normed[ic])
            else:
                queries = np.stack([normed[ia], normed[ib], normed[ic]], axis=1)
            m = len(ia)
            rows, _ = top_k_search(
                table,
                queries,
                5,
                np.tile(np.arange(m), 3),
                np.concatenate([ia, ib, ic]),
                method="dot" if method == "add" else "cosmul",
            )
            for r, cand in enumerate(rows.tolist()):
                q = s + r
                predicted = None
                for j in cand:
                    predicted = keys[j].upper() if case_insensitive else keys[j]
                    if predicted in ok and predicted not in ignore[q]:
                        break
                correct[q] = predicted == expected[q]
    sec_arr = np.asarray(sec_of, dtype=np.int64)
    sections = []
    for si, name in enumerate(names):
        mask = sec_arr == si
        c = int(correct[mask].sum())
        t = int(mask.sum()) + dummy_wrong[si]
        sections.append({"section": name, "correct": c, "total": t, "accuracy": c / t if t else 0.0})
    tc = int(correct.sum())
    tt = len(abc) + sum(dummy_wrong.values())
    return {
        "method": method,
        "restrict": restrict,
        "case_insensitive": case_insensitive,
        "sections": sections,
        "total": {
            "section": "Total accuracy",
            "correct": tc,
            "total": tt,
            "accuracy": tc / tt if tt else 0.0,
        },
        "questions": n_questions,
        "oov": oov,
        "oov_ratio": oov / n_questions if n_questions else 0.0,
    }


def _rank_average(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (as ``scipy.stats.rankdata``)."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    ends = np.r_[starts[1:], len(xs)]
    avg = (starts + ends + 1) / 2.0  # mean of the 1-based ranks start+1 .. end
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.repeat(avg, ends - starts)
    return ranks


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    x = x - x.mean()
    y = y - y.mean()
    den = math.sqrt(float(x @ x) * float(y @ y))
    return float(x @ y) / den if den else float("nan")


def evaluate_pairs(
    emb: Embeddings,
    path: str | os.PathLike,
    *,
    delimiter: str = "\t",
    restrict: int | None = 300_000,
    case_insensitive: bool = True,
    dummy4unknown: bool = False,
) -> dict[str, Any]:
    """Correlation of cosine similarities with human judgements (WordSim-353, SimLex-999 format).

    Lines are ``word1<delimiter>word2<delimiter>score``; lines starting with ``#`` and lines that do not
    parse are skipped; vocabulary, ``restrict`` and case handling as in :func:`evaluate_analogies` (and
    gensim's ``evaluate_word_pairs``).

    Returns
    -------
    dict
        ``{"pairs", "oov", "oov_ratio", "spearman", "pearson"}``. ``pairs`` is the number of pairs scored;
        ``oov_ratio`` is a share in [0, 1] (gensim returns a percentage): of all valid pairs, or with
        ``dummy4unknown`` (out-of-vocabulary pairs scored 0) of the scored pairs, as gensim does.
    """
    restrict = _check_restrict(restrict)
    ok = _ok_vocab(emb, restrict, case_insensitive)
    gold: list[float] = []
    ia: list[int] = []
    ib: list[int] = []
    oov = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line or line.startswith("#"):
                continue
            parts = line.split(delimiter)
            if len(parts) != 3:
                continue
            if case_insensitive:
                parts = [p.upper() for p in parts]
            try:
                sim = float(parts[2])
            except ValueError:
                continue
            a, b = parts[0], parts[1]
            if a not in ok or b not in ok:
                oov += 1
                if dummy4unknown:
                    gold.append(sim)
                    ia.append(-1)
                    ib.append(-1)
                continue
            gold.append(sim)
            ia.append(ok[a])
            ib.append(ok[b])
    if not gold:
        raise InputError(
            f"no valid similarity judgement in {str(path)!r} (bad format, or every pair unknown)"
        )
    g = np.asarray(gold, dtype=np.float64)
    a_ids, b_ids = np.asarray(ia), np.asarray(ib)
    known = a_ids >= 0
    model = np.zeros(len(g), dtype=np.float64)
    normed = emb.normed
    model[known] = np.einsum("ij,ij->i", normed[a_ids[known]], normed[b_ids[known]])
    denom = len(g) if dummy4unknown else len(g) + oov
    return {
        "pairs": len(g),
        "oov": oov,
        "oov_ratio": oov / denom,
        "spearman": _pearson(_rank_average(g), _rank_average(model)),
        "pearson": _pearson(g, model),
    }


# --------------------------------------------------------------------------------------------------------
# Held-out recommendation
# --------------------------------------------------------------------------------------------------------


class EmbeddingRecommender(VectorRecommender):
    """The model as a :class:`~likewise.baselines.Recommender`, scored as :meth:`Embeddings.recommend` does.

    With the space's context (output) table -- spaces trained by :func:`likewise.train` keep it -- the
    mixture affinity of :meth:`Embeddings.affinity_top_k`; without it (imported vectors) the cosine to the
    mean of the context's unit vectors. Context items are excluded; ties go to the lower id.

    Parameters
    ----------
    emb : Embeddings
    name : str
    scoring : {"auto", "affinity", "cosine"}
        As in :meth:`Embeddings.recommend`.
    """

    def __init__(self, emb: Embeddings, name: str = "model", scoring: str = "auto") -> None:
        if scoring not in ("auto", "affinity", "cosine"):
            raise InputError(f"scoring == {scoring!r}, must be 'auto', 'affinity' or 'cosine'")
        self.name = name
        self.normed_ = emb.normed
        self.n_items = len(emb)
        self.scoring = "affinity" if scoring == "auto" and emb.context is not None else scoring
        if self.scoring == "auto":
            self.scoring = "cosine"
        self._emb = emb

    def recommend_ids(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        """See :class:`~likewise.baselines.Recommender`."""
        if self.scoring == "cosine":
            return super().recommend_ids(contexts, k)
        return self._emb.affinity_top_k(contexts, k)[0]


def ranking_metrics(
    rec: Recommender,
    contexts: Sequence[np.ndarray],
    targets: Sequence[int] | np.ndarray,
    k: int = 10,
    n_items: int | None = None,
) -> dict[str, Any]:
    """Leave-one-out ranking quality of a recommender.

    Parameters
    ----------
    rec : Recommender
    contexts : sequence of int arrays
        The visible items of each test case.
    targets : sequence of int
        One hidden item id per context.
    k : int
        Length of the recommendation list.
    n_items : int, optional
        Catalogue size for coverage (default: ``rec.n_items``).

    Returns
    -------
    dict
        ``hr``: share of cases whose target is in the top ``k``; ``ndcg``: mean ``1 / log2(rank + 1)``
        (rank 1-based; 0 when absent; one relevant item, so the ideal DCG is 1); ``mrr``: mean
        ``1 / rank`` over the top-``k`` list, 0 when the target is absent (i.e. MRR@k, not over the full
        ranking); ``coverage``: share of the catalogue that appears in at least one top-``k`` list;
        ``k``; ``n``: number of cases.
    """
    t = np.asarray(targets, dtype=np.int64).reshape(-1)
    if len(t) != len(contexts):
        raise InputError(f"{len(contexts)} contexts but {len(t)} targets: need one target per context")
    if len(t) == 0:
        raise InputError("no test cases: contexts is empty")
    n_items = int(n_items if n_items is not None else getattr(rec, "n_items", 0))
    if n_items < 1:
        raise InputError("n_items is needed for coverage (the recommender does not say its catalogue size)")
    top = rec.recommend_ids(contexts, k)
    hit = top == t[:, None]
    found = hit.any(axis=1)
    rank = hit.argmax(axis=1) + 1
    return {
        "hr": float(found.mean()),
        "ndcg": float(np.where(found, 1.0 / np.log2(rank + 1.0), 0.0).mean()),
        "mrr": float(np.where(found, 1.0 / rank, 0.0).mean()),
        "coverage": float(len(np.unique(top)) / n_items),
        "k": int(top.shape[1]),
        "n": int(len(t)),
    }


def winners(rows: Mapping[str, Mapping[str, float]], metrics: Sequence[str] = METRICS) -> dict[str, str]:
    """For each metric, the name of the best row (higher is better); ties joined by ``" = "``."""
    out = {}
    for m in metrics:
        best = max(r[m] for r in rows.values())
        out[m] = " = ".join(n for n, r in rows.items() if r[m] == best)
    return out


@dataclass
class Split:
    """A train/test split of sequences (see the module docstring for the folder format).

    Attributes
    ----------
    train : list of list of str
    contexts : list of list of str
        Visible items of each test case.
    targets : list of str
        The hidden item of each test case.
    mode : {"basket", "sequence"}
    seed : int
    test_fraction : float
    n_short : int
        Sequences too short to hide an item from (they stay in the training part).
    input : dict
        Description of where the data came from.
    delimiter : str or None
        Separator of keys in the files; None: one space (read back as any whitespace).
    """

    train: list[list[str]]
    contexts: list[list[str]]
    targets: list[str]
    mode: str = "basket"
    seed: int = 0
    test_fraction: float = 0.2
    n_short: int = 0
    input: dict[str, Any] = field(default_factory=dict)
    delimiter: str | None = None


def split_sequences(
    sequences: Iterable[Sequence[str]],
    *,
    mode: Literal["basket", "sequence"] = "basket",
    test_fraction: float = 0.2,
    seed: int = 0,
) -> Split:
    """Hold out a seeded random share of the sequences, hiding one item of each.

    In basket mode a test basket is first reduced to its distinct items (order kept) and one of them,
    chosen at random, is hidden; in sequence mode the last item is hidden and the items before it are
    the context. Only sequences with at least two (distinct, in basket mode) items can be test cases;
    the others stay in the training part. Test sequences are removed from the training part whole.

    Parameters
    ----------
    sequences : iterable of sequence of str
    mode : {"basket", "sequence"}
    test_fraction : float
        Share of the eligible sequences held out, in (0, 1).
    seed : int

    Returns
    -------
    Split
    """
    if mode not in ("basket", "sequence"):
        raise InputError(f"mode == {mode!r}, must be 'basket' or 'sequence'")
    if not 0 < test_fraction < 1:
        raise InputError(f"test_fraction == {test_fraction!r}, must be in (0, 1)")
    seqs = [list(s) for s in sequences]
    if mode == "basket":
        views = [list(dict.fromkeys(s)) for s in seqs]
    else:
        views = seqs
    eligible = np.flatnonzero(np.fromiter((len(v) >= 2 for v in views), dtype=bool, count=len(views)))
    rng = np.random.default_rng(seed)
    n_test = int(round(test_fraction * len(eligible)))
    if n_test == 0:
        raise InputError(
            f"no test case: {len(eligible)} of {len(seqs)} sequences have 2 or more items and "
            f"test_fraction={test_fraction} of them rounds to 0"
        )
    test = np.sort(rng.choice(eligible, size=n_test, replace=False))
    is_test = np.zeros(len(seqs), dtype=bool)
    is_test[test] = True
    contexts, targets = [], []
    hide = rng.random(n_test)
    for j, i in enumerate(test.tolist()):
        v = views[i]
        p = int(hide[j] * len(v)) if mode == "basket" else len(v) - 1
        targets.append(v[p])
        contexts.append(v[:p] + v[p + 1 :])
    train = [s for s, t in zip(seqs, is_test.tolist(), strict=True) if not t]
    return Split(train, contexts, targets, mode, seed, test_fraction, len(seqs) - len(eligible))


def _key_checker(delimiter: str | None):
    def check(key: str) -> str:
        if delimiter is None:
            bad = not key or any(ch.isspace() for ch in key)
            why = "whitespace (keys are separated by spaces; read the input with --delimiter to keep them)"
        else:
            bad = not key or key != key.strip() or any(ch in key for ch in (delimiter, "\t", "\n", "\r"))
            why = f"the delimiter {delimiter!r}, a tab, a line break or edge spaces"
        if bad:
            raise InputError(
                f"item key {key!r} is empty or holds {why}: it could not be read back from a split"
            )
        return key

    return check


def save_split(split: Split, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write a split folder (written to a temporary folder beside it, then renamed)."""
    final = Path(path)
    if final.exists():
        if not overwrite:
            raise InputError(
                f"{str(final)!r} already exists: pass overwrite=True (--overwrite) to replace it"
            )
        if not (final / "split.json").is_file():
            raise InputError(f"{str(final)!r} exists and is not a split folder: refusing to replace it")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    check = _key_checker(split.delimiter)
    sep = split.delimiter or " "
    try:
        with open(tmp / "train.txt", "w", encoding="utf-8", newline="\n") as f:
            for s in split.train:
                if s:
                    f.write(sep.join(check(k) for k in s) + "\n")
        with open(tmp / "test.tsv", "w", encoding="utf-8", newline="\n") as f:
            f.write("context\ttarget\n")
            for c, t in zip(split.contexts, split.targets, strict=True):
                f.write(sep.join(check(k) for k in c) + "\t" + check(t) + "\n")
        files = {
            n: {"sha256": file_sha256(tmp / n), "bytes": (tmp / n).stat().st_size}
            for n in ("train.txt", "test.tsv")
        }
        manifest = {
            "format": SPLIT_FORMAT,
            "version": SPLIT_VERSION,
            "mode": split.mode,
            "seed": split.seed,
            "test_fraction": split.test_fraction,
            "delimiter": split.delimiter,
            "n_train": sum(1 for s in split.train if s),
            "n_test": len(split.targets),
            "n_short": split.n_short,
            "input": split.input,
            "files": files,
        }
        (tmp / "split.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", "utf-8")
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def load_split(path: str | os.PathLike, *, verify: bool = True) -> Split:
    """Read a split folder written by :func:`save_split` (checksums verified unless ``verify=False``)."""
    p = Path(path)
    man_path = p / "split.json"
    if not man_path.is_file():
        raise CorruptModelError(f"{str(p)!r} is not a split folder: split.json is missing")
    try:
        man = json.loads(man_path.read_text("utf-8"))
    except ValueError as e:
        raise CorruptModelError(f"{str(man_path)!r} is not valid JSON: {e}") from None
    if man.get("format") != SPLIT_FORMAT or man.get("version") != SPLIT_VERSION:
        raise CorruptModelError(
            f"{str(man_path)!r} has format {man.get('format')!r} version {man.get('version')!r}; "
            f"expected {SPLIT_FORMAT!r} version {SPLIT_VERSION}"
        )
    for name, info in man["files"].items():
        f = p / name
        if not f.is_file():
            raise CorruptModelError(f"split file {str(f)!r} is missing")
        if verify and file_sha256(f) != info["sha256"]:
            raise CorruptModelError(f"split file {str(f)!r} fails its sha256 checksum (changed or truncated)")
    sep = man.get("delimiter")

    def keys(text: str) -> list[str]:
        return text.split(sep) if text else []

    with open(p / "train.txt", encoding="utf-8", newline="\n") as f:
        train = [keys(line.rstrip("\n")) for line in f if line.strip()]
    contexts, targets = [], []
    with open(p / "test.tsv", encoding="utf-8", newline="\n") as f:
        next(f)
        for line in f:
            ctx, tgt = line.rstrip("\n").split("\t")
            contexts.append(keys(ctx))
            targets.append(tgt)
    return Split(
        train,
        contexts,
        targets,
        man["mode"],
        man["seed"],
        man["test_fraction"],
        man["n_short"],
        man["input"],
        sep,
    )


def holdout_cases(
    keys_to_ids: Mapping[str, int], split: Split, context_window: int | None = None
) -> tuple[list[np.ndarray], np.ndarray, dict[str, int]]:
    """Test cases of ``split`` as ids of a vocabulary.

    A case whose hidden item is not in the vocabulary is dropped (no model could return it); unknown
    context items are dropped, and a case left with an empty context is dropped too. With
    ``context_window`` only the last that many visible items are kept (sequence mode).

    Returns
    -------
    contexts : list of int64 arrays
    targets : int64 array
    dropped : dict
        ``{"unknown_target": n, "empty_context": n}``.
    """
    contexts: list[np.ndarray] = []
    targets: list[int] = []
    dropped = {"unknown_target": 0, "empty_context": 0}
    for ctx, tgt in zip(split.contexts, split.targets, strict=True):
        t = keys_to_ids.get(tgt)
        if t is None:
            dropped["unknown_target"] += 1
            continue
        c = [keys_to_ids[x] for x in ctx if x in keys_to_ids]
        if context_window:
            c = c[-context_window:]
        if not c:
            dropped["empty_context"] += 1
            continue
        contexts.append(np.asarray(c, dtype=np.int64))
        targets.append(t)
    return contexts, np.asarray(targets, dtype=np.int64), dropped


def holdout_report(
    emb: Embeddings,
    split: Split,
    *,
    k: int = 10,
    baselines: Sequence[str] = BASELINES,
    context_window: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Score the model and the count baselines (fitted on ``split.train``) on the test part.

    Baselines use the model's vocabulary (training items outside it are dropped), so every row ranks
    the same catalogue for the same cases. ``ppmi-svd`` gets the model's dimension.

    Returns
    -------
    dict
        ``{"k", "n", "dropped", "rows": {name: metrics}, "winners": {metric: name}}`` with the metrics
        of :func:`ranking_metrics`. The model's row is ``"model"``, scored as :meth:`Embeddings.recommend`
        scores by default; a space with a context table also gets ``"model-cosine"``, the other
        scoring, because neither wins everywhere: the affinity follows what is bought *together*
        (complements, popularity), the cosine what is *alike* (it generalises to pairs never seen
        together).
    """
    index = emb.vocab.index
    contexts, targets, dropped = holdout_cases(index, split, context_window)
    if len(targets) == 0:
        raise InputError(
            f"no test case has its hidden item and a visible item in the model's vocabulary "
            f"(dropped: {dropped})"
        )
    train_ids = [np.asarray([index[x] for x in s if x in index], dtype=np.int64) for s in split.train]
    recs: dict[str, Recommender] = {"model": EmbeddingRecommender(emb)}
    if emb.context is not None:
        recs["model-cosine"] = EmbeddingRecommender(emb, "model-cosine", scoring="cosine")
    recs.update(fit_baselines(train_ids, len(emb), dim=emb.dim, which=tuple(baselines), seed=seed))
    rows = {name: ranking_metrics(r, contexts, targets, k, n_items=len(emb)) for name, r in recs.items()}
    return {
        "k": int(k),
        "n": int(len(targets)),
        "dropped": dropped,
        "rows": rows,
        "winners": winners(rows),
    }


def heldout_loss(emb: Embeddings, contexts: Sequence[np.ndarray], targets: np.ndarray) -> float:
    """Held-out rank loss: the mean normalised rank of each hidden item, ``1 - AUC``.

    Every item outside the case's context is scored by cosine to the mean of the context's unit vectors
    (as :class:`EmbeddingRecommender` does); the hidden item's loss is the share of those other items
    that score above it (ties count one half). 0 means the hidden item always comes first, 0.5 is
    chance. Unlike HR@k it looks at the whole ranking, so it shows both failure modes of a dimension:
    too few dimensions cannot separate items, too many overfit small data.

    Why not the training (negative-sampling) loss: that needs the output vectors, which a saved space
    does not keep; this loss needs only the vectors every query uses and has no scale to tune.
    """
    t = np.asarray(targets, dtype=np.int64).reshape(-1)
    if len(contexts) != len(t):
        raise InputError(f"{len(contexts)} contexts but {len(t)} targets")
    if len(t) == 0:
        raise InputError("no held-out case")
    normed = emb.normed
    n_items = len(emb)
    total = 0.0
    step = max(1, (1 << 22) // max(1, n_items))
    for a in range(0, len(t), step):
        block = contexts[a : a + step]
        q = np.stack([normed[np.asarray(c, dtype=np.int64)].sum(axis=0) for c in block])
        scores = normalise_rows(q) @ normed.T
        tb = t[a : a + step]
        own = scores[np.arange(len(tb)), tb]
        for r, c in enumerate(block):
            scores[r, np.asarray(c, dtype=np.int64)] = np.nan  # context items are not candidates
        above = (scores > own[:, None]).sum(axis=1)
        ties = (scores == own[:, None]).sum(axis=1) - 1  # minus the hidden item itself
        others = np.array([n_items - 1 - len(np.unique(c)) for c in block], dtype=np.float64)
        total += float(((above + 0.5 * ties) / np.maximum(others, 1)).sum())
    return total / len(t)
