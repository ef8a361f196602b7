"""The explorer's search box beyond key prefixes: names, attribute values, key substrings and typos.

:meth:`TextIndex.find` answers in this order, each group most frequent first (ids are ordered by
descending count), until ``limit`` items are found:

* ``"name"``: names that start with the query, then names with a word that starts with it, then any
  other name that holds it;
* ``"value"``: items with an attribute value that holds the query (``camping`` finds the camping
  aisle's products), values that equal it first;
* ``"key"``: keys that hold the query anywhere (key prefixes are :meth:`Served.search_prefix`'s);
* ``"close"``: only when nothing above matched, names and keys whose words are each close to one of the
  query's words (a typo, a swapped pair of letters: ``Alder tnet`` finds ``Alder tent``); when no item
  has a close word for every query word, those with the most.

The typo search is bounded whatever the query: only its first :data:`TYPO_WORDS` words of at most
:data:`TYPO_WORD_LENGTH` characters are looked for, and a word's one-edit neighbours are found through an
index of the indexed words' one-letter deletions (a symmetric-delete index, as SymSpell's), so a query
word costs ``len(word) + 1`` look-ups whatever the alphabet; generating every one-edit variant over the
catalogue's letters cost ``len(word) * letters`` strings (a 400-character query over 3,000 CJK letters:
2.4 million strings, gigabytes).

Items of hidden types (``attr:`` tokens) are never in the index, so they are never found or suggested.
Built once per loaded model (:class:`~likewise.service.models.Registry`); plain Python and NumPy.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from .._arrays import unique

__all__ = ["CLOSE_CUTOFF", "TYPO_WORDS", "TYPO_WORD_LENGTH", "TextIndex", "deletions"]

#: difflib's similarity ratio a word must reach to count as the same word mistyped (``tnet``/``tent``
#: is 0.75; ``tent``/``text`` too, which is why close matches come last and must match every word).
CLOSE_CUTOFF = 0.74
#: Close words taken per query word.
_CLOSE_WORDS = 6
#: Words of a query looked for as typos (the first ones); the others must match as typed.
TYPO_WORDS = 8
#: Longest word looked for as a typo (and indexed for it): a longer one is matched as typed only.
TYPO_WORD_LENGTH = 32
# words of letters (digits allowed after the first): numbers are not mistyped words, and 100 k of them
# would make every close search compare against 100 k strings
_WORD = re.compile(r"[^\W\d_][^\W_]*")


class TextIndex:
    """Folded keys, names and attribute values of the items a list may show.

    Parameters
    ----------
    keys : sequence of str
        Every item's key, by id.
    listed : ndarray of int
        The ids that may be found, ascending (hidden types left out).
    names : sequence of (str or None), optional
        Every item's display name, by id.
    values : dict of str to sequence of (str or None), optional
        Other attribute columns, each one value per id.
    """

    def __init__(
        self,
        keys: Sequence[str],
        listed: np.ndarray,
        names: Sequence[str | None] | None = None,
        values: dict[str, Sequence[str | None]] | None = None,
    ) -> None:
        ids = np.asarray(listed, dtype=np.int64)
        self._ids = ids
        self._keys = [keys[i].casefold() for i in ids.tolist()]
        self._names = None if names is None else [(names[i] or "").casefold() for i in ids.tolist()]
        # each distinct attribute value -> the rows holding it (rows index self._ids)
        by_value: dict[str, list[int]] = defaultdict(list)
        for col in (values or {}).values():
            for r, i in enumerate(ids.tolist()):
                v = col[i]
                if v:
                    by_value[v.casefold()].append(r)
        self._values = {v: unique(np.asarray(r, dtype=np.int64)) for v, r in by_value.items()}
        # each word of a name or key -> the rows holding it, for close (mistyped) matches
        words: dict[str, set[int]] = defaultdict(set)
        for r, text in enumerate(self._names or self._keys):
            for w in _WORD.findall(text):
                words[w].add(r)
        if self._names is not None:
            for r, text in enumerate(self._keys):
                for w in _WORD.findall(text):
                    words[w].add(r)
        self._words = {w: np.fromiter(sorted(r), dtype=np.int64, count=len(r)) for w, r in words.items()}
        # each one-letter deletion of a word (and the word itself) -> the words it comes from
        deleted: dict[str, list[str]] = defaultdict(list)
        self._by_length: dict[int, list[str]] = defaultdict(list)
        for w in self._words:
            if len(w) > TYPO_WORD_LENGTH:
                continue
            self._by_length[len(w)].append(w)
            for d in deletions(w):
                deleted[d].append(w)
        self._deleted = dict(deleted)

    def find(self, query: str, limit: int, exclude: set[int] | None = None) -> list[tuple[int, str]]:
        """Up to ``limit`` ``(id, how)`` pairs for ``query`` (see the module docstring), ids in
        ``exclude`` left out."""
        q = query.casefold().strip()
        if not q or limit < 1:
            return []
        seen = set(exclude or ())
        out: list[tuple[int, str]] = []

        def take(rows: list[int] | np.ndarray, how: str) -> bool:
            for r in rows:
                i = int(self._ids[r])
                if i not in seen:
                    seen.add(i)
                    out.append((i, how))
                    if len(out) >= limit:
                        return True
            return False

        if self._names is not None and take(self._name_rows(q), "name"):
            return out
        if take(self._value_rows(q), "value"):
            return out
        if take([r for r, k in enumerate(self._keys) if q in k], "key") or out or exclude:
            return out  # close matches only when nothing matched as typed (a key prefix included)
        take(self._close_rows(q), "close")
        return out

    def _name_rows(self, q: str) -> list[int]:
        starts, words, inside = [], [], []
        word_q = " " + q
        for r, name in enumerate(self._names or ()):
            if q not in name:
                continue
            if name.startswith(q):
                starts.append(r)
            elif word_q in name:
                words.append(r)
            else:
                inside.append(r)
        return starts + words + inside

    def _value_rows(self, q: str) -> np.ndarray:
        exact = self._values.get(q)
        parts = [exact] if exact is not None else []
        parts += [rows for v, rows in self._values.items() if q in v and v != q]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        rows = np.concatenate(parts)
        _, first = np.unique(rows, return_index=True)  # keep each row once, exact values first
        rows = rows[np.sort(first)]
        if exact is None:
            return np.sort(rows)
        return np.concatenate([exact, np.setdiff1d(np.sort(rows), exact)])

    def close_words(self, word: str) -> list[str]:
        """Indexed words within a typo of ``word`` (itself first when it is one): one letter dropped,
        added, changed or two swapped (what a short word's ratio misses: ``mgu``/``mug`` is 0.67), then
        words difflib finds similar. A word longer than :data:`TYPO_WORD_LENGTH` has none."""
        if word in self._words:
            return [word]
        if len(word) > TYPO_WORD_LENGTH:
            return []
        found = {w for d in deletions(word) for w in self._deleted.get(d, ())}
        near = sorted(w for w in found if _one_edit(word, w))
        pool = [w for n in range(len(word) - 2, len(word) + 3) for w in self._by_length.get(n, ())]
        near += [
            w
            for w in difflib.get_close_matches(word, pool, n=_CLOSE_WORDS, cutoff=CLOSE_CUTOFF)
            if w not in near
        ]
        return near[:_CLOSE_WORDS]

    def _close_rows(self, q: str) -> np.ndarray:
        words = _WORD.findall(q)[:TYPO_WORDS]
        if not words:
            return np.zeros(0, dtype=np.int64)
        hits = np.zeros(len(self._ids), dtype=np.int64)
        for w in words:
            found = [self._words[c] for c in self.close_words(w)]
            if found:
                hits[unique(np.concatenate(found))] += 1
        best = int(hits.max())
        if best == 0:
            return np.zeros(0, dtype=np.int64)
        # every word matched when some item matches them all; else the items matching the most
        return np.flatnonzero(hits == best)


def deletions(word: str) -> list[str]:
    """``word`` and each string one letter shorter: ``len(word) + 1`` strings, what the typo index keys
    a word by. Two words within one edit (a letter dropped, added, changed, or two neighbours swapped)
    share one of them."""
    return [word] + [word[:i] + word[i + 1 :] for i in range(len(word))]


def _one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one edit: a letter dropped or added, one changed, or two neighbours
    swapped (sharing a deletion is necessary, not sufficient: ``abc``/``bca`` share ``bc``)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) < len(b):
        return a[i:] == b[i + 1 :]
    return a[i + 1 :] == b[i + 1 :] or (
        i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
    )
