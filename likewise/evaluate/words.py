"""Word benchmarks with gensim's semantics, so the numbers compare with gensim's own evaluators.

* :func:`evaluate_analogies` -- ``questions-words.txt`` analogies, per section, 3CosAdd or 3CosMul, batched
  matrix products; with 3CosAdd the counts equal gensim's ``evaluate_word_analogies``.
* :func:`evaluate_pairs` -- WordSim-353 / SimLex-999 pairs: Spearman, Pearson and the out-of-vocabulary
  share, equal to gensim's ``evaluate_word_pairs``.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

from ..errors import InputError
from ..space.embeddings import Embeddings
from ..space.search import normalise_rows, top_k_search

__all__ = ["evaluate_analogies", "evaluate_pairs"]


def _ok_vocab(emb: Embeddings, restrict: int | None, case_insensitive: bool) -> dict[str, int]:
    """Key -> id over the ``restrict`` most frequent keys (by count, whatever the row order: an update
    appends rows); an uppercased key maps to the id of its most frequent case variant."""
    keys = emb.keys
    out: dict[str, int] = {}
    for i in emb.vocab.by_count()[:restrict].tolist():
        key = keys[i]
        out.setdefault(key.upper() if case_insensitive else key, i)
    return out


def _utf8_lines(path: str | os.PathLike, what: str, *, universal: bool) -> Iterator[tuple[int, str]]:
    """``(line_no, line)`` of a UTF-8 text file, lines counted from 1 and ending at ``\\n``.

    ``universal``: ``\\r`` and ``\\r\\n`` end lines too, turned into ``\\n`` (as ``open(path)`` reads text).
    A file that cannot be opened, or a line that is not UTF-8, is an :class:`InputError` naming the file.
    """
    try:
        f = open(path, "rb")  # noqa: SIM115 -- closed by the ``with`` below; the open alone is guarded
    except OSError as e:
        raise InputError(f"cannot open {what} file {str(path)!r}: {e.strerror or e}") from None
    with f:
        for no, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{what} file {str(path)!r} line {no} is not UTF-8 text") from None
            if not universal:
                yield no, line
                continue
            *parts, last = line.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            for part in parts:
                yield no, part + "\n"
            if last:
                yield no, last


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
    for line_no, line in _utf8_lines(path, "analogy questions", universal=False):
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
        top = emb.vocab.most_frequent(restrict) if restrict else None  # None: a prefix of the rows
        keys = emb.keys
        if top is None:
            table = normed[:restrict] if restrict else normed
        else:  # the table's rows are the candidates: a, b, c (known words) and answers are positions in it
            table = normed[top]
            idx = np.searchsorted(top, idx)
            keys = [keys[i] for i in top.tolist()]
        n = len(idx)
        step = 8192  # bounded query block; top_k_search blocks the score matrix itself
        for s in range(0, n, step):
            ia, ib, ic = (idx[s : s + step, j] for j in range(3))
            if method == "add":
                queries = normalise_rows(table[ib] - table[ia] + table[ic])
            else:
                queries = np.stack([table[ia], table[ib], table[ic]], axis=1)
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

    Parameters
    ----------
    emb : Embeddings
    path : path
        The pairs file (UTF-8).
    delimiter : str
        Field separator of a line.
    restrict : int or None
        Only the ``restrict`` most frequent keys are known words (gensim: 300,000).
    case_insensitive : bool
    dummy4unknown : bool
        Score out-of-vocabulary pairs 0 instead of skipping them.

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
    for _, line in _utf8_lines(path, "word pairs", universal=True):
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
