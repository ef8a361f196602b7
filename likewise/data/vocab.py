"""Item keys <-> integer ids, with counts. No vectors here.

Ids are ordered by descending count, ties broken by key, so the order is stable across runs and the
most frequent item is id 0 (the layout word2vec files use).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import numpy as np

from .._check import Row
from ..errors import InputError, ItemIndexError, UnknownItemError, shown

#: Characters of an unknown key that "did you mean" compares (keeps the error path's work bounded).
MAX_SUGGEST_CHARS = 200

__all__ = ["Dropped", "KeyList", "Row", "Vocab", "parse_item", "parse_items", "ranked_vocab"]

#: Digits a row number written ``#N`` may have: more than any table holds (int64), few enough to convert
#: at once.
MAX_ID_DIGITS = 20


def parse_item(text: str) -> str | Row:
    """An item as a person writes it in text: ``#12`` is row 12 unless a key ``#12`` exists, anything else
    is a key.

    The one parser of written items: the command line, the HTTP service (keys in paths, queries and JSON
    strings) and Python callers reading items from text all use it, so ``#12`` means the same everywhere.
    The row is :class:`~likewise.Row` carrying the text it was read from, so that :meth:`Vocab.resolve`
    gives a key written ``#12`` precedence: an item keyed ``#12`` stays reachable.

    Parameters
    ----------
    text : str
        The item as written.

    Returns
    -------
    str or Row
        The key unchanged, or ``Row(n, written=text)`` when ``text`` is ``#`` then ASCII digits (``#-3`` is
        row -3, refused later as outside the table).

    Raises
    ------
    InputError
        ``#`` followed by digits that are not ASCII (``#²``, ``#٣``), or by more than
        :data:`MAX_ID_DIGITS` of them.

    Examples
    --------
    >>> parse_item("#12"), parse_item("tent"), parse_item("#tag")
    (Row(12), 'tent', '#tag')
    """
    if not (text.startswith("#") and len(text) > 1):
        return text
    digits = text[1:].removeprefix("-")
    if not digits.isdigit() and not digits.isdecimal():
        return text  # "#tag", "#1a": a key that starts with '#'
    if not digits.isascii():  # "#²", "#٣": digits, but not the ones an id is written in
        raise InputError(f"{shown(text)}: a row number after '#' is written in ASCII digits 0-9")
    if len(digits) > MAX_ID_DIGITS:
        raise InputError(f"{shown(text)}: a row number after '#' has at most {MAX_ID_DIGITS} digits")
    return Row(int(text[1:]), written=text)


def parse_items(texts: Iterable[str]) -> list[str | Row]:
    """:func:`parse_item` of each of ``texts``.

    Parameters
    ----------
    texts : iterable of str

    Returns
    -------
    list of str or Row
    """
    return [parse_item(t) for t in texts]


class KeyList(list[str]):
    """A vocabulary's keys: a list that refuses to change, so a caller holding ``emb.keys`` (or gensim's
    ``index_to_key``) cannot move the keys away from their ids. ``list(keys)`` is a copy to edit; ``+``
    and slices give plain lists."""

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("the keys of a vocabulary are read-only: edit a copy, list(emb.keys)")

    def __reduce__(self) -> tuple[type, tuple[list[str]]]:  # pickle builds it whole, not by append
        return (KeyList, (list(self),))

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse  # type: ignore[assignment]
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore[assignment]


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

    def __init__(
        self,
        keys: Sequence[str],
        counts: Iterable[int] | None = None,
        what: str = "item",
        *,
        dropped: Dropped | None = None,
    ) -> None:
        keys = KeyList(str(k) for k in keys)
        index = {k: i for i, k in enumerate(keys)}
        if len(index) != len(keys):
            dup = next(k for k, n in Counter(keys).items() if n > 1)
            raise InputError(f"duplicate {what} key {dup!r}: vocabulary keys must be unique")
        if counts is None:
            arr = np.zeros(len(keys), dtype=np.int64)
        else:
            arr = np.array(counts, dtype=np.int64).reshape(-1)  # a copy: the caller's array stays theirs
            if len(arr) != len(keys):
                raise InputError(f"counts has {len(arr)} entries but there are {len(keys)} keys")
        arr.flags.writeable = False
        init = object.__setattr__  # a Vocab is immutable: its fields are set here, once
        init(self, "keys", keys)
        init(self, "what", what)
        init(self, "index", MappingProxyType(index))
        init(self, "counts", arr)
        # What trimming removed (from from_counts, or restored from a saved space): explains misses.
        init(self, "dropped", dropped)
        # Bare names of a typed space ("tent" for "product:tent"): see with_aliases.
        init(self, "aliases", MappingProxyType({}))
        init(self, "ambiguous", MappingProxyType({}))
        init(self, "_by_count", None)  # ids by descending count, made on first use (a cache, not state)

    def __setattr__(self, name: str, value: object) -> None:
        if name.startswith("_"):  # lazily made caches of what the fields already say
            object.__setattr__(self, name, value)
            return
        raise AttributeError(
            f"a Vocab is immutable: {name!r} cannot be set; make a new one "
            "(Vocab(...), with_aliases, with_dropped)"
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Vocab is immutable: {name!r} cannot be deleted")

    def __reduce__(self) -> tuple:
        return (
            _rebuild,
            (
                list(self.keys),
                np.asarray(self.counts),
                self.what,
                self.dropped,
                dict(self.aliases),
                {k: list(v) for k, v in self.ambiguous.items()},
            ),
        )

    def _copy(self, **fields: object) -> Vocab:
        """A new Vocab sharing this one's keys, index and counts (all read-only), with ``fields`` replaced."""
        out = object.__new__(Vocab)
        for name, value in {**self.__dict__, **fields}.items():
            object.__setattr__(out, name, value)
        return out

    def with_dropped(self, dropped: Dropped | None) -> Vocab:
        """This vocabulary with ``dropped``, the record of what trimming removed (a new object).

        Parameters
        ----------
        dropped : Dropped or None

        Returns
        -------
        Vocab
        """
        return self._copy(dropped=dropped)

    def with_aliases(self, unique: Mapping[str, int], ambiguous: Mapping[str, list[int]]) -> Vocab:
        """This vocabulary with other names that find its keys (a new object; this one is unchanged).

        Parameters
        ----------
        unique : mapping of str to int
            A name to the id it means.
        ambiguous : mapping of str to list of int
            A name to the ids it could mean (looking it up then fails and names them).

        Returns
        -------
        Vocab
            Keys always win over aliases.
        """
        return self._copy(
            aliases=MappingProxyType({k: int(v) for k, v in unique.items() if k not in self.index}),
            ambiguous=MappingProxyType(
                {k: [int(i) for i in v] for k, v in ambiguous.items() if k not in self.index}
            ),
        )

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
        keys = list(counts)
        values = np.fromiter((int(counts[k]) for k in keys), dtype=np.int64, count=len(keys))
        return ranked_vocab(keys, values, min_count=min_count, max_items=max_items, what=what)[0]

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, key: object) -> bool:
        return key in self.index or key in self.aliases

    def lookup(self, key: object) -> int | None:
        """Id of a key or of an unambiguous alias; None when neither."""
        i = self.index.get(key)  # type: ignore[call-overload]
        return self.aliases.get(key) if i is None else i  # type: ignore[call-overload]

    def __iter__(self):
        return iter(self.keys)

    def __repr__(self) -> str:
        return f"Vocab({len(self)} {self.what}s)"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Vocab) and self.keys == other.keys and np.array_equal(self.counts, other.counts)
        )

    def suggest(self, key: str, n: int = 3) -> list[str]:
        """Return up to ``n`` existing keys that look like ``key``.

        Bounded work whatever ``key`` is: only its first ``MAX_SUGGEST_CHARS`` characters are compared
        (a key that long is no typo of a short one) and at most 200,000 candidates.
        """
        key = str(key)[:MAX_SUGGEST_CHARS]
        if len(self.keys) > 200_000:  # difflib is O(V); keep the error path bounded on huge vocabularies
            candidates = self.keys[:200_000]
        else:
            candidates = self.keys
        close = difflib.get_close_matches(key, candidates, n=n, cutoff=0.6)
        if close or len(key) < 2:
            return close
        # a bare prefix ("tent" for "tent-00005"): the most frequent keys that start with it (ids by count)
        folded = key.casefold()
        return [k for k in candidates if k.casefold().startswith(folded)][:n]

    def id(self, key: str) -> int:
        """Id of ``key``; raises :class:`UnknownItemError` with suggestions if absent."""
        i = self.lookup(key)
        if i is None:
            raise self.unknown(key)
        return i

    def resolve(self, item: object) -> int:
        """The row of an item as a caller gave it: the one reading of an item given in Python.

        Parameters
        ----------
        item : str, int or Row
            A key (or an alias of one); an int is the key written the same way (``43`` is the key
            ``"43"``: a table's int64 ids are stored as their text); a :class:`~likewise.Row` is a row
            number (one read from ``#12`` is the key ``"#12"`` when there is one).

        Returns
        -------
        int

        Raises
        ------
        UnknownItemError
            No key (or alias) is written so; for an int, the message says how to ask for a row.
        ItemIndexError
            A :class:`~likewise.Row` outside ``[0, len)``.
        InputError
            Anything else (a float, a bool, None ...), named.
        """
        if isinstance(item, str):
            return self.id(item)
        if isinstance(item, Row):
            if item.written is not None:
                i = self.index.get(item.written)
                if i is not None:
                    return i
            if not 0 <= item.n < len(self):
                raise ItemIndexError(item.n, len(self), what=f"{self.what} row")
            return item.n
        if isinstance(item, int | np.integer) and not isinstance(item, bool | np.bool_):
            key = str(int(item))
            i = self.lookup(key)
            if i is None:
                raise self.unknown(key, asked=int(item))
            return i
        raise InputError(
            f"{'an' if self.what[:1] in 'aeiou' else 'a'} {self.what} is a str key, an int (the key written "
            f"the same way) or likewise.Row(n) (a row number), got {type(item).__name__} {shown(item)}"
        )

    def unknown(self, key: object, asked: int | None = None) -> UnknownItemError:
        """The error for a missing ``key``: why it was dropped when it was, else close keys; ``asked``:
        the int the caller gave (the message then says how to ask for a row)."""
        if asked is not None:
            row = f"Row({asked})" if 0 <= asked < len(self) else "likewise.Row(n)"
            note = (
                f"the int {asked} is read as the key {key!r}, which this vocabulary of {len(self)} "
                f"{self.what}s lacks; a row number is asked for as {row} (#{asked} on the command line)"
            )
            return UnknownItemError(key, (), what=self.what, note=note)
        if isinstance(key, str) and key in self.ambiguous:
            means = [self.keys[i] for i in self.ambiguous[key]]
            note = f"it names {len(means)} items of different types ({', '.join(map(repr, means))}); give one"
            return UnknownItemError(key, means, what=self.what, note=note)
        note = self.dropped.explain(key) if self.dropped is not None and isinstance(key, str) else None
        if note is not None:
            return UnknownItemError(key, (), what=self.what, note=note)
        return UnknownItemError(key, self.suggest(str(key)), what=self.what)

    def ids(self, keys: Iterable[str], on_unknown: OnUnknown = "raise") -> np.ndarray:
        """Ids of ``keys`` as int32; ``on_unknown="skip"`` drops keys not in the vocabulary."""
        if on_unknown not in ("raise", "skip"):
            raise InputError(f"on_unknown == {on_unknown!r}, must be 'raise' or 'skip'")
        out = []
        for k in keys:
            i = self.lookup(k)
            if i is None:
                if on_unknown == "raise":
                    raise self.unknown(k)
                continue
            out.append(i)
        return np.asarray(out, dtype=np.int32)

    def check_ids(self, ids: Iterable[int] | np.ndarray) -> np.ndarray:
        """Return ``ids`` as int64, raising :class:`ItemIndexError` for any id outside the table."""
        arr = np.asarray(ids)
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise InputError(f"{self.what} rows must be integers, got dtype {arr.dtype}")
        arr = arr.astype(np.int64, copy=False)
        bad = (arr < 0) | (arr >= len(self))
        if bad.any():
            raise ItemIndexError(int(arr[bad][0]), len(self), what=f"{self.what} id")
        return arr

    def by_count(self) -> np.ndarray:
        """All ids, most frequent first by ``counts`` (equal counts: the lower id first), read-only.

        A vocabulary built in one go (:meth:`from_counts`) is already in this order; one that had rows
        appended (:func:`likewise.retail.update.update`, :func:`likewise.apps.coldstart.add_placed`) may not
        be.
        """
        if self._by_count is None:
            order = np.argsort(-self.counts, kind="stable")
            order.flags.writeable = False
            self._by_count = order
        return self._by_count

    def most_frequent(self, n: int) -> np.ndarray | None:
        """The ids of the ``n`` most frequent keys (gensim's ``restrict_vocab=n``), sorted; None when they
        are ids ``0 .. n-1``, so a caller can take a prefix of its table instead of a copy."""
        top = self.by_count()[: max(0, int(n))]
        if len(top) == 0 or int(top.max()) == len(top) - 1:  # n distinct ids below n: the prefix
            return None
        return np.sort(top)

    def key(self, i: int) -> str:
        """Key of id ``i``; raises :class:`ItemIndexError` when out of range."""
        i = int(i)
        if not 0 <= i < len(self):
            raise ItemIndexError(i, len(self), what=f"{self.what} id")
        return self.keys[i]


# The dropped keys kept for explanations: the most frequent ones (those a user is likeliest to ask for).
MAX_DROPPED_KEYS = 10_000


@dataclass
class Dropped:
    """What vocabulary trimming removed: totals, and the most frequent dropped keys with their counts.

    Parameters
    ----------
    min_count, max_items
        The trimming rules that were applied.
    below_min_count, past_max_items : int
        How many distinct keys each rule removed.
    tokens : int
        Occurrences removed in all (they are taken out of their sequences before training).
    keys, counts, reasons
        Up to :data:`MAX_DROPPED_KEYS` dropped keys, most frequent first, with their counts and the
        rule that removed each (``"min_count"`` or ``"max_items"``, or ``"empty"``: a column of a
        training matrix that holds no value > 0, listed after the others with count 0).
    empty : int
        Columns of a training matrix that hold no value > 0 (in no basket, so without a vector).
    """

    min_count: int
    max_items: int | None
    below_min_count: int = 0
    past_max_items: int = 0
    tokens: int = 0
    keys: list[str] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    empty: int = 0

    @classmethod
    def build(
        cls,
        below: list[tuple[str, int]],
        past: list[tuple[str, int]],
        *,
        min_count: int,
        max_items: int | None,
    ) -> Dropped:
        """From the (key, count) pairs each rule removed, both sorted by descending count."""
        tagged = [(k, c, "max_items") for k, c in past] + [(k, c, "min_count") for k, c in below]
        tagged.sort(key=lambda t: (-t[1], t[0]))
        tagged = tagged[:MAX_DROPPED_KEYS]
        return cls(
            min_count=int(min_count),
            max_items=None if max_items is None else int(max_items),
            below_min_count=len(below),
            past_max_items=len(past),
            tokens=int(sum(c for _, c in below) + sum(c for _, c in past)),
            keys=[t[0] for t in tagged],
            counts=[int(t[1]) for t in tagged],
            reasons=[t[2] for t in tagged],
        )

    def with_empty(self, keys: Sequence[str]) -> Dropped:
        """This record with ``keys``, the columns of a training matrix that hold no value > 0, added.

        They are listed after the dropped keys (count 0), as far as :data:`MAX_DROPPED_KEYS` allows, so
        that a later query naming one says why it has no vector instead of suggesting another item.
        """
        room = max(0, MAX_DROPPED_KEYS - len(self.keys))
        listed = list(keys)[:room]
        return dataclasses.replace(
            self,
            keys=[*self.keys, *listed],
            counts=[*self.counts, *([0] * len(listed))],
            reasons=[*self.reasons, *(["empty"] * len(listed))],
            empty=self.empty + len(keys),
        )

    @property
    def n_keys(self) -> int:
        """Distinct keys dropped (the empty columns of a training matrix included)."""
        return self.below_min_count + self.past_max_items + self.empty

    @property
    def truncated(self) -> bool:
        """True when more keys were dropped than are listed."""
        return self.n_keys > len(self.keys)

    def explain(self, key: str) -> str | None:
        """Why ``key`` is not in the vocabulary, or None when it was never seen (or is not listed)."""
        i = self._lookup().get(key)
        if i is None:
            return None
        n, why = self.counts[i], self.reasons[i]
        if why == "empty":
            return (
                "its column of the training matrix holds no value > 0: it is in no basket, so it has "
                "no vector (meta['dropped'] lists it)"
            )
        times = "once" if n == 1 else f"{n} times"
        if why == "min_count":
            return (
                f"it was seen {times}, below min_count={self.min_count}, and dropped before training; "
                f"train with min_count={n} (--min-count {n}) to keep it"
            )
        return (
            f"it was seen {times} but max_items={self.max_items} kept only the most frequent "
            f"{self.max_items}; train with a larger max_items (--max-items) to keep it"
        )

    def _lookup(self) -> dict[str, int]:
        cached = self.__dict__.get("_index")
        if cached is None or len(cached) != len(self.keys):
            cached = self.__dict__["_index"] = {k: i for i, k in enumerate(self.keys)}
        return cached

    def summary(self, what: str = "item", n: int = 5) -> str:
        """One line: how many keys and occurrences were dropped, by which rule, with examples."""
        if self.n_keys == 0:
            return f"no {what} dropped"
        parts = []
        if self.below_min_count:
            parts.append(f"{self.below_min_count:,} below min_count={self.min_count}")
        if self.past_max_items:
            parts.append(f"{self.past_max_items:,} past max_items={self.max_items}")
        if self.empty:
            parts.append(f"{self.empty:,} empty matrix columns")
        plural = what if self.n_keys == 1 else what + "s"
        shown = ", ".join(f"{k!r} ({c})" for k, c in zip(self.keys[:n], self.counts[:n], strict=True))
        more = ", ..." if self.n_keys > n else ""
        return (
            f"{self.n_keys:,} {plural} dropped ({'; '.join(parts)}; {self.tokens:,} occurrences): "
            f"{shown}{more}"
        )

    def to_dict(self) -> dict:
        """JSON-able form (stored in a saved space's manifest)."""
        return {
            "min_count": self.min_count,
            "max_items": self.max_items,
            "below_min_count": self.below_min_count,
            "past_max_items": self.past_max_items,
            "tokens": self.tokens,
            "keys": list(self.keys),
            "counts": list(self.counts),
            "reasons": list(self.reasons),
            "empty": self.empty,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> Dropped:
        """Rebuild from :meth:`to_dict`'s output; raises :class:`InputError` when malformed."""
        try:
            out = cls(
                min_count=int(d["min_count"]),
                max_items=None if d.get("max_items") is None else int(d["max_items"]),
                below_min_count=int(d.get("below_min_count", 0)),
                past_max_items=int(d.get("past_max_items", 0)),
                tokens=int(d.get("tokens", 0)),
                keys=[str(k) for k in d.get("keys", [])],
                counts=[int(c) for c in d.get("counts", [])],
                reasons=[str(r) for r in d.get("reasons", [])],
                empty=int(d.get("empty", 0)),
            )
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:  # not a dict; inf
            raise InputError(f"malformed record of dropped keys: {e}") from None
        if not len(out.keys) == len(out.counts) == len(out.reasons):
            raise InputError("malformed record of dropped keys: keys, counts and reasons differ in length")
        return out


def ranked_vocab(
    keys: Sequence[str],
    counts: np.ndarray,
    *,
    min_count: int = 1,
    max_items: int | None = None,
    what: str = "item",
) -> tuple[Vocab, np.ndarray]:
    """:meth:`Vocab.from_counts` for parallel ``keys`` and ``counts``, with where each kept key came from.

    Only the kept keys and the candidates for :attr:`Dropped.keys` are sorted, so a corpus with many
    rare keys (most of them below ``min_count``) costs memory for the vocabulary, not for every key.

    Parameters
    ----------
    keys : sequence of str
        Distinct keys.
    counts : ndarray of int, shape (len(keys),)
        Occurrences of each key.
    min_count, max_items, what
        As in :meth:`Vocab.from_counts`.

    Returns
    -------
    vocab : Vocab
        Sorted by descending count, ties by key; ``vocab.dropped`` says what the rules removed.
    source : ndarray of int64, shape (len(vocab),)
        ``keys[source[i]]`` is ``vocab.keys[i]``.
    """
    if min_count < 1:
        raise InputError(f"min_count == {min_count}, must be >= 1")
    if max_items is not None and max_items < 1:
        raise InputError(f"max_items == {max_items}, must be >= 1 or None")
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    if len(counts) != len(keys):
        raise InputError(f"{len(keys)} keys but {len(counts)} counts; they must match")

    def rank(ids: np.ndarray) -> list[int]:
        c = counts.tolist()
        return sorted(ids.tolist(), key=lambda i: (-c[i], keys[i]))

    order = rank(np.flatnonzero(counts >= min_count))
    past = order[max_items:] if max_items is not None else []
    order = order[:max_items] if max_items is not None else order
    below = np.flatnonzero(counts < min_count)
    tokens = int(counts[below].sum()) + int(counts[past].sum())
    if len(below) > MAX_DROPPED_KEYS:  # only keys at least as frequent as the cut can be listed
        cut = np.partition(counts[below], len(below) - MAX_DROPPED_KEYS)[len(below) - MAX_DROPPED_KEYS]
        below_listed = below[counts[below] >= cut]
    else:
        below_listed = below
    reason = {int(i): "max_items" for i in past}
    listed = rank(np.concatenate([np.asarray(past, dtype=np.int64), below_listed]))[:MAX_DROPPED_KEYS]
    source = np.asarray(order, dtype=np.int64)
    vocab = Vocab(
        [keys[i] for i in order],
        counts[source],
        what=what,
        dropped=Dropped(
            min_count=int(min_count),
            max_items=None if max_items is None else int(max_items),
            below_min_count=len(below),
            past_max_items=len(past),
            tokens=tokens,
            keys=[keys[i] for i in listed],
            counts=[int(counts[i]) for i in listed],
            reasons=[reason.get(i, "min_count") for i in listed],
        ),
    )
    return vocab, source


def _rebuild(
    keys: list[str], counts: np.ndarray, what: str, dropped: Dropped | None, aliases: dict, ambiguous: dict
) -> Vocab:
    """Unpickle a :class:`Vocab` (it has no setters to restore fields through)."""
    return Vocab(keys, counts, what, dropped=dropped).with_aliases(aliases, ambiguous)
