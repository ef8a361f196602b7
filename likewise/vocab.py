"""Item keys <-> integer ids, with counts. No vectors here.

Ids are ordered by descending count, ties broken by key, so the order is stable across runs and the
most frequent item is id 0 (the layout word2vec files use).
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import numpy as np

from .errors import InputError, ItemIndexError, UnknownItemError

__all__ = ["Vocab"]

OnUnknown = Literal["raise", "skip"]


class Vocab:
    """An ordered vocabulary of string keys with counts.

    Parameters
    ----------
    keys : sequence of str
        Keys in id order; must be unique.
    counts : array-like of int, optional
        Count of each key (same length as ``keys``); zeros when omitted.
    what : str
        What a key names ("item", "word", "customer"), used in error messages.
    """

    def __init__(self, keys: Sequence[str], counts: Iterable[int] | None = None, what: str = "item") -> None:
        self.keys: list[str] = [str(k) for k in keys]
        self.what = what
        self.index: dict[str, int] = {k: i for i, k in enumerate(self.keys)}
        if len(self.index) != len(self.keys):
            dup = next(k for k, n in Counter(self.keys).items() if n > 1)
            raise InputError(f"duplicate {what} key {dup!r}: vocabulary keys must be unique")
        if counts is None:
            self.counts = np.zeros(len(self.keys), dtype=np.int64)
        else:
            self.counts = np.asarray(counts, dtype=np.int64).reshape(-1)
            if len(self.counts) != len(self.keys):
                raise InputError(f"counts has {len(self.counts)} entries but there are {len(self.keys)} keys")

    @classmethod
    def from_counts(
        cls,
        counts: Mapping[str, int],
        min_count: int = 1,
        max_items: int | None = None,
        what: str = "item",
    ) -> Vocab:
        """Build a frequency-sorted vocabulary from a key -> count mapping.

        Parameters
        ----------
        counts : mapping of str to int
            Occurrences of each key.
        min_count : int
            Keys seen fewer times are dropped.
        max_items : int, optional
            Keep at most this many keys (the most frequent).
        """
        if min_count < 1:
            raise InputError(f"min_count == {min_count}, must be >= 1")
        if max_items is not None and max_items < 1:
            raise InputError(f"max_items == {max_items}, must be >= 1 or None")
        kept = [(k, int(c)) for k, c in counts.items() if c >= min_count]
        kept.sort(key=lambda kc: (-kc[1], kc[0]))
        if max_items is not None:
            kept = kept[:max_items]
        return cls([k for k, _ in kept], [c for _, c in kept], what=what)

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, key: object) -> bool:
        return key in self.index

    def __iter__(self):
        return iter(self.keys)

    def __repr__(self) -> str:
        return f"Vocab({len(self)} {self.what}s)"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Vocab) and self.keys == other.keys and np.array_equal(self.counts, other.counts)
        )

    def suggest(self, key: str, n: int = 3) -> list[str]:
        """Return up to ``n`` existing keys that look like ``key``."""
        if len(self.keys) > 200_000:  # difflib is O(V); keep the error path bounded on huge vocabularies
            candidates = self.keys[:200_000]
        else:
            candidates = self.keys
        return difflib.get_close_matches(str(key), candidates, n=n, cutoff=0.6)

    def id(self, key: str) -> int:
        """Id of ``key``; raises :class:`UnknownItemError` with suggestions if absent."""
        try:
            return self.index[key]
        except KeyError:
            raise UnknownItemError(key, self.suggest(key), what=self.what) from None

    def ids(self, keys: Iterable[str], on_unknown: OnUnknown = "raise") -> np.ndarray:
        """Ids of ``keys`` as int32; ``on_unknown="skip"`` drops keys not in the vocabulary."""
        if on_unknown not in ("raise", "skip"):
            raise InputError(f"on_unknown == {on_unknown!r}, must be 'raise' or 'skip'")
        out = []
        for k in keys:
            i = self.index.get(k)
            if i is None:
                if on_unknown == "raise":
                    raise UnknownItemError(k, self.suggest(k), what=self.what)
                continue
            out.append(i)
        return np.asarray(out, dtype=np.int32)

    def check_ids(self, ids: Iterable[int] | np.ndarray) -> np.ndarray:
        """Return ``ids`` as int64, raising :class:`ItemIndexError` for any id outside the table."""
        arr = np.asarray(ids)
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise InputError(f"item ids must be integers, got dtype {arr.dtype}")
        arr = arr.astype(np.int64, copy=False)
        bad = (arr < 0) | (arr >= len(self))
        if bad.any():
            raise ItemIndexError(int(arr[bad][0]), len(self), what=f"{self.what} id")
        return arr

    def key(self, i: int) -> str:
        """Key of id ``i``; raises :class:`ItemIndexError` when out of range."""
        i = int(i)
        if not 0 <= i < len(self):
            raise ItemIndexError(i, len(self), what=f"{self.what} id")
        return self.keys[i]
