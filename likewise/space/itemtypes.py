"""Item types: which kind of thing each row of a space is (a product, a campaign, an article, ...).

A typed space holds several kinds of item in one vocabulary, trained together from one event log
(``likewise train events.csv --type-col event``), so a campaign, the products bought around it and the
articles read with it are comparable. Each key carries its type as a prefix (``product:tent``,
``campaign:spring-sale``), but the type is stored apart from the key, as one small integer per row
(:class:`ItemTypes`), and saved with the space: queries filter by it (``types=["campaign"]``) without
parsing keys, and a key may itself contain ``:``.

Side information (the attribute tokens of :mod:`likewise.retail.side`, type ``attr``) is *hidden*:
it trains with the items and lives in the same space, but a query returns hidden types only when asked
for them by name.

Bare names resolve: in a typed space ``"tent"`` means ``"product:tent"`` when exactly one type has an
item named ``tent`` (:meth:`ItemTypes.aliases`); when several do, the lookup fails and names them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InputError

__all__ = [
    "SIDE_TYPE",
    "TYPE_SEP",
    "ItemTypes",
    "check_item_type",
    "check_type_name",
    "split_key",
    "typed_key",
    "types_of_keys",
]

#: Separates the type from the name in a typed key (``product:tent``); type names never contain it.
TYPE_SEP = ":"
#: The type of side-information tokens (item attributes): hidden from query results by default.
SIDE_TYPE = "attr"
#: Most distinct types a space may hold (codes are int16).
MAX_TYPES = 32_767


def check_type_name(name: object) -> str:
    """A valid type name: a non-empty str without ``:`` or whitespace at its ends, at most 64 characters.

    Raises
    ------
    InputError
        The name is not a str, is empty, contains ``:`` or a line break, or is too long.
    """
    if not isinstance(name, str) or not name or name != name.strip():
        raise InputError(f"type name {name!r} must be a non-empty str without surrounding spaces")
    if TYPE_SEP in name or "\n" in name or "\r" in name or len(name) > 64:
        raise InputError(
            f"type name {name!r} must be at most 64 characters without {TYPE_SEP!r} or line breaks"
        )
    return name


def check_item_type(name: object) -> str:
    """A type an item may be given: a valid type name (:func:`check_type_name`) other than
    :data:`SIDE_TYPE`, which only training with item attributes gives (to their tokens).

    The rule, and the message, of an event log's type column (:mod:`likewise.retail.events`), for a
    type given from outside otherwise -- a product placed by ``place`` (CLI or HTTP) -- so that no item
    can be made that reads as an attribute token.

    Raises
    ------
    InputError
        The name is not valid, or is ``"attr"``.
    """
    check_type_name(name)
    if name == SIDE_TYPE:
        raise InputError(f"type {SIDE_TYPE!r} is reserved for item attributes (side information)")
    return name  # type: ignore[return-value]


def typed_key(type_name: str, name: str) -> str:
    """The key of item ``name`` of type ``type_name``: ``"type:name"``."""
    return f"{check_type_name(type_name)}{TYPE_SEP}{name}"


def split_key(key: str) -> tuple[str, str]:
    """``"product:tent"`` -> ``("product", "tent")``; a key without ``:`` raises :class:`InputError`."""
    head, sep, tail = key.partition(TYPE_SEP)
    if not sep or not head or not tail:
        raise InputError(f"key {key!r} is not typed: expected 'type{TYPE_SEP}name', e.g. 'product:tent'")
    return head, tail


class ItemTypes:
    """The type of every row of a space.

    Parameters
    ----------
    names : sequence of str
        The type names; ``codes`` index into them.
    codes : array-like of int, shape [V]
        The type of each row, in id order.
    hidden : iterable of str
        Types a query leaves out unless it names them (side information).

    Notes
    -----
    Built by :meth:`from_types` (one name per row) and saved by :mod:`likewise.space.store` as
    ``item_types.npy`` (int16) with the names in the manifest.
    """

    def __init__(self, names: Sequence[str], codes: Any, hidden: Iterable[str] = ()) -> None:
        self.names: tuple[str, ...] = tuple(check_type_name(n) for n in names)
        if len(set(self.names)) != len(self.names):
            raise InputError(f"type names must be distinct, got {list(self.names)!r}")
        if len(self.names) > MAX_TYPES:
            raise InputError(f"{len(self.names)} types, at most {MAX_TYPES} are supported")
        arr = np.asarray(codes)
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise InputError(f"type codes must be a 1-D integer array, got {arr.dtype} {arr.shape}")
        arr = arr.astype(np.int16)
        if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= len(self.names)):
            raise InputError(f"type codes must lie in [0, {len(self.names)}) (one per type name)")
        arr.flags.writeable = False
        self.codes = arr
        self.hidden = frozenset(hidden)
        unknown = sorted(self.hidden - set(self.names))
        if unknown:
            raise InputError(f"hidden type {unknown[0]!r} is not one of {list(self.names)!r}")

    @classmethod
    def from_types(cls, per_item: Sequence[str], hidden: Iterable[str] = ()) -> ItemTypes:
        """From one type name per row; names are ordered by first appearance.

        Parameters
        ----------
        per_item : sequence of str
            The type of each row, in id order.
        hidden : iterable of str
            Types to hide from query results (kept only if some row has them).
        """
        order: dict[str, int] = {}
        codes = np.fromiter((order.setdefault(t, len(order)) for t in per_item), np.int64, len(per_item))
        return cls(list(order), codes, hidden=[h for h in hidden if h in order])

    # ---- reading -------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.codes)

    def __repr__(self) -> str:
        shown = ", ".join(f"{n} {c}" for n, c in self.counts().items())
        return f"ItemTypes({shown})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ItemTypes)
            and self.per_item() == other.per_item()
            and self.hidden == other.hidden
        )

    def type_of(self, i: int) -> str:
        """The type name of row ``i``."""
        return self.names[int(self.codes[int(i)])]

    def per_item(self) -> list[str]:
        """The type name of every row, in id order."""
        names = np.asarray(self.names, dtype=object)
        return names[self.codes.astype(np.int64)].tolist() if len(self.codes) else []

    def counts(self) -> dict[str, int]:
        """Rows of each type, in the order of :attr:`names`."""
        n = np.bincount(self.codes.astype(np.int64), minlength=len(self.names))
        return {name: int(c) for name, c in zip(self.names, n.tolist(), strict=True)}

    def check(self, types: str | Iterable[str]) -> tuple[str, ...]:
        """``types`` as a tuple of known type names (one str is one type).

        Raises
        ------
        InputError
            An empty selection, or a name that is not a type of this space (the message lists them).
        """
        wanted = (types,) if isinstance(types, str) else tuple(types)
        if not wanted:
            raise InputError(f"types is empty; give one or more of {', '.join(map(repr, self.names))}")
        for t in wanted:
            if t not in self.names:
                import difflib

                close = difflib.get_close_matches(str(t), self.names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise InputError(
                    f"unknown type {t!r}{hint}; this space has types {', '.join(map(repr, self.names))}"
                )
        return wanted

    def mask(self, types: str | Iterable[str] | None = None) -> np.ndarray:
        """bool [V]: rows of ``types``; None means every type that is not hidden."""
        if types is None:
            codes = [i for i, n in enumerate(self.names) if n not in self.hidden]
        else:
            codes = [self.names.index(t) for t in self.check(types)]
        return np.isin(self.codes, np.asarray(codes, dtype=np.int16))

    def ids(self, types: str | Iterable[str] | None = None) -> np.ndarray:
        """Sorted int64 ids of the rows of ``types`` (None: the types that are not hidden)."""
        return np.flatnonzero(self.mask(types)).astype(np.int64)

    def aliases(self, keys: Sequence[str]) -> tuple[dict[str, int], dict[str, list[int]]]:
        """Bare names that resolve to one typed key, and those that name several.

        A key ``"type:name"`` whose prefix is its own row's type gives the alias ``name``, unless
        ``name`` is itself a key.

        Returns
        -------
        unique : dict of str to int
            Alias -> id.
        ambiguous : dict of str to list of int
            Alias -> the ids it could mean.
        """
        found: dict[str, list[int]] = {}
        index = set(keys)
        names = self.names
        for i, (key, code) in enumerate(zip(keys, self.codes.tolist(), strict=True)):
            prefix = names[code] + TYPE_SEP
            if key.startswith(prefix):
                bare = key[len(prefix) :]
                if bare and bare not in index:
                    found.setdefault(bare, []).append(i)
        unique = {k: v[0] for k, v in found.items() if len(v) == 1}
        ambiguous = {k: v for k, v in found.items() if len(v) > 1}
        return unique, ambiguous

    # ---- building ------------------------------------------------------------------------------------

    def extend(self, per_item: Sequence[str]) -> ItemTypes:
        """These types followed by rows of the types ``per_item`` (new names are appended)."""
        names = list(self.names)
        extra = []
        for t in per_item:
            if t not in names:
                names.append(check_type_name(t))
            extra.append(names.index(t))
        codes = np.concatenate([self.codes.astype(np.int64), np.asarray(extra, dtype=np.int64)])
        return ItemTypes(names, codes, hidden=self.hidden)

    def to_manifest(self) -> dict[str, Any]:
        """The manifest entry (the codes are saved as a file of their own)."""
        return {"names": list(self.names), "hidden": sorted(self.hidden), "file": "item_types.npy"}

    @classmethod
    def from_manifest(cls, entry: Mapping[str, Any], codes: np.ndarray) -> ItemTypes:
        """Rebuild from :meth:`to_manifest`'s entry and the saved codes; raises :class:`InputError`."""
        names = entry.get("names")
        hidden = entry.get("hidden") or []
        if not isinstance(names, list) or not isinstance(hidden, list):
            raise InputError("the types entry needs a list of 'names' (and a list 'hidden')")
        return cls(names, codes, hidden=hidden)


def types_of_keys(
    keys: Sequence[str], *, typed: bool, side: bool, item_type: str = "product"
) -> ItemTypes | None:
    """The types of a vocabulary compiled from a typed log and/or one with attribute tokens.

    Parameters
    ----------
    keys : sequence of str
        The vocabulary, in id order.
    typed : bool
        Item keys read ``type:item`` (a typed log).
    side : bool
        Keys starting ``attr:`` are attribute tokens (the reader refuses such item keys in that case,
        and a typed log refuses the type ``attr``), hidden from queries.
    item_type : str
        The type of every item of an untyped log.

    Returns
    -------
    ItemTypes or None
        None when neither ``typed`` nor ``side``.
    """
    if not (typed or side):
        return None
    prefix = f"{SIDE_TYPE}{TYPE_SEP}"
    per = [
        SIDE_TYPE if side and k.startswith(prefix) else (split_key(k)[0] if typed else item_type)
        for k in keys
    ]
    return ItemTypes.from_types(per, hidden=[SIDE_TYPE])
