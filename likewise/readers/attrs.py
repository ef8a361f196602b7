"""Item attributes, read: an attribute table keyed by item turned into tokens, and baskets expanded with them.

The rules (bands, words, values) are told in :mod:`likewise.retail.side`. This module reads and tokenises
the table (:func:`read_item_attributes`) and adds each item's tokens to the sequences that hold it
(:func:`expand_tokens`); the log reader uses both to compile a log with ``InputSpec.attrs`` into one
corpus, and :mod:`likewise.apps.coldstart` tokenises a new product by the same rules.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._arrays import unique
from ..errors import InputError
from ..space.itemtypes import SIDE_TYPE, TYPE_SEP
from .keyed import key_column, read_table_file, text_column

__all__ = [
    "ItemAttributes",
    "expand_tokens",
    "expand_with_tokens",
    "read_item_attributes",
    "item_table",
    "read_table_file",
    "side_key",
    "tokenise",
]

#: Quantile bands of a numeric attribute.
N_BANDS = 5
#: Tokens an item keeps (the first ones, in column order): a 5,000-word title must not add 5,000 tokens
#: to every basket holding the item. Recorded in the attribute spec, so ``place`` keeps as many.
MAX_ITEM_TOKENS = 64
#: Characters of an attribute value kept in its token's key (longer values are cut): keys are served.
MAX_VALUE_CHARS = 200
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass
class ItemAttributes:
    """Attribute tokens of items (see the module docstring).

    Attributes
    ----------
    keys : list of str
        Item keys as the table names them.
    tokens : list of list of str
        Per item, its tokens (``"attr:category=outdoor"``), de-duplicated, in column order.
    spec : dict
        How values become tokens: ``{"item_col", "columns": {name: "bands" | "words" | "value"},
        "bands": {name: [edges]}}``; saved as the space's ``meta["attributes"]``.
    """

    keys: list[str]
    tokens: list[list[str]]
    spec: dict[str, Any] = field(default_factory=dict)

    def of(self, key: str) -> list[str] | None:
        """The tokens of item ``key``; a typed key ``product:tent`` also finds a row keyed ``tent``."""
        index = self.__dict__.get("_index")
        if index is None:
            index = self.__dict__["_index"] = {k: i for i, k in enumerate(self.keys)}
        i = index.get(key)
        if i is None and TYPE_SEP in key:
            i = index.get(key.partition(TYPE_SEP)[2])
        return None if i is None else self.tokens[i]


def side_key(column: str, value: str) -> str:
    """The key of one attribute token: ``attr:column=value``, the value cut at :data:`MAX_VALUE_CHARS`."""
    return f"{SIDE_TYPE}{TYPE_SEP}{column}={value[:MAX_VALUE_CHARS]}"


def _band(value: float, edges: Sequence[float]) -> str:
    return f"band{int(np.searchsorted(np.asarray(edges), value, side='right')) + 1}of{len(edges) + 1}"


def tokenise(spec: Mapping[str, Any], attrs: Mapping[str, Any]) -> list[str]:
    """The tokens of one item's attributes, by the rules a space was trained with.

    Parameters
    ----------
    spec : dict
        ``meta["attributes"]`` of the space (:attr:`ItemAttributes.spec`).
    attrs : mapping of str to value
        Column -> value (``{"category": "outdoor", "title": "lightweight dome tent", "price": 79}``);
        None or "" gives no token.

    Raises
    ------
    InputError
        A column the space was not trained with (the message lists them), or a non-number in a
        numeric column.
    """
    kinds: dict[str, str] = spec.get("columns") or {}
    out: list[str] = []
    for name, value in attrs.items():
        if name not in kinds:
            known = ", ".join(map(repr, kinds)) or "none"
            raise InputError(f"attribute {name!r} was not trained with this space; its attributes: {known}")
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        kind = kinds[name]
        if kind == "bands":
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise InputError(f"attribute {name!r} == {value!r} must be a number (it is banded)") from None
            if not np.isfinite(number):
                raise InputError(f"attribute {name!r} == {value!r} must be a finite number")
            out.append(side_key(name, _band(number, spec["bands"][name])))
        elif kind == "words":
            out += [side_key(name, w) for w in _WORD.findall(str(value).casefold())]
        elif kind == "list":  # tags; given as text (``place --attrs tags=a,b``) they are split at commas
            parts = value.split(",") if isinstance(value, str) else value
            out += [
                side_key(name, str(v).strip().casefold()) for v in parts if v is not None and str(v).strip()
            ]
        else:
            out.append(side_key(name, str(value).strip().casefold()))
    return list(dict.fromkeys(out))[: int(spec.get("max_tokens", MAX_ITEM_TOKENS))]


def read_item_attributes(
    source: str | os.PathLike | Any,
    item_col: str | None = None,
    *,
    format: str = "auto",
    delimiter: str | None = None,
) -> ItemAttributes:
    """Read an attribute table keyed by item and tokenise it (see the module docstring).

    Parameters
    ----------
    source : path, or a pyarrow Table / pandas / polars DataFrame
        CSV/TSV or Parquet, one row per item.
    item_col : str, optional
        The item column; default: the first column.
    format, delimiter
        As for logs (``"auto"`` detects from the suffix).

    Returns
    -------
    ItemAttributes

    Raises
    ------
    InputError
        One line naming the file and the column or data row: an unreadable or empty table, a missing item
        column, a table with no attribute column, a null, empty or repeated item key.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    table, where, _ = read_table_file(source, format, delimiter, key=item_col)
    names = table.column_names
    if table.num_rows == 0:
        raise InputError(f"item attributes {where!r} have no data rows")
    item_col = names[0] if item_col is None else item_col
    if item_col not in names:
        raise InputError(
            f"item column {item_col!r} not found in item attributes {where!r}; columns: "
            f"{', '.join(map(repr, names))}"
        )
    attr_cols = [c for c in names if c != item_col]
    if not attr_cols:
        raise InputError(f"item attributes {where!r} have no attribute column besides {item_col!r}")
    keys = key_column(table, item_col, where, need="every row needs an item key").to_pylist()
    for row, k in enumerate(keys):
        if not k.strip():
            raise InputError(
                f"blank item key {k!r} in column {item_col!r} of {where!r} at data row {row + 1} (rows count "
                "from 1, header not counted)"
            )
    if len(set(keys)) != len(keys):
        seen: set[str] = set()
        row = next(i for i, k in enumerate(keys) if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise InputError(
            f"item {keys[row]!r} appears twice in column {item_col!r} of {where!r} (again at data row "
            f"{row + 1}); give one row per item"
        )
    kinds: dict[str, str] = {}
    bands: dict[str, list[float]] = {}
    values: dict[str, list[Any]] = {}
    for c in attr_cols:
        col = table.column(c).combine_chunks()
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
            x = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
            finite = x[np.isfinite(x)]
            if len(finite) == 0:
                continue  # nothing to band
            kinds[c] = "bands"
            qs = np.quantile(finite, np.arange(1, N_BANDS) / N_BANDS)
            bands[c] = unique(qs).tolist()
            values[c] = [None if not np.isfinite(v) else float(v) for v in x.tolist()]
            continue
        if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):  # tags: a token per element
            kinds[c] = "list"
            _attr_text(col.flatten(), c, where, col.type)  # the elements must be text (or numbers, dates)
            values[c] = col.to_pylist()
            continue
        if col.null_count == len(col):
            continue  # nothing to tokenise
        text = _attr_text(col, c, where)
        spaced = pc.any(pc.match_substring_regex(text, r"\s\S")).as_py()
        kinds[c] = "words" if spaced else "value"
        values[c] = text.to_pylist()
    if not kinds:
        named = ", ".join(map(repr, attr_cols))
        raise InputError(f"item attributes {where!r}: no attribute column holds a value ({named})")
    spec = {"item_col": item_col, "columns": kinds, "bands": bands, "max_tokens": MAX_ITEM_TOKENS}
    tokens = [tokenise(spec, {c: values[c][row] for c in kinds}) for row in range(len(keys))]
    spec["items_at_max_tokens"] = sum(len(t) == MAX_ITEM_TOKENS for t in tokens)  # some may have been cut
    return ItemAttributes(keys, tokens, spec)


def item_table(source: Any, item_col: str | None, keys: Sequence[str]) -> dict[str, Any]:
    """The rows of an attribute table that name items of a space, as plain JSON values, for display.

    Parameters
    ----------
    source : path or table
        As :func:`read_table_file` reads it.
    item_col : str, optional
        Its item column (default: its first).
    keys : sequence of str
        The space's keys; a typed key ``product:tent`` takes the row keyed ``tent``.

    Returns
    -------
    dict
        ``{"item_col": name, "columns": {column: [value per kept row]}}``: numbers, text, lists and None
        (NaN becomes None; dates and bytes become text).
    """
    import math

    table, where, _ = read_table_file(source, key=item_col)
    item_col = item_col or table.column_names[0]
    known = set(keys) | {k.partition(TYPE_SEP)[2] for k in keys if TYPE_SEP in k}
    rows = [
        i for i, k in enumerate(_attr_text(table.column(item_col), item_col, where).to_pylist()) if k in known
    ]
    table = table.take(rows)

    def plain(v: Any) -> Any:
        if v is None or isinstance(v, bool | int | str):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else None
        if isinstance(v, list):
            return [plain(x) for x in v]
        return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)

    columns = {c: [plain(v) for v in table.column(c).to_pylist()] for c in table.column_names}
    columns[item_col] = [str(v) for v in columns[item_col]]
    return {"item_col": item_col, "columns": columns}


def _attr_text(col: Any, name: str, where: str, shown: Any = None) -> Any:
    """An attribute column as text; ``shown``: the type to name in an error (a list's, not its elements')."""
    expected = "text, numbers, dates or a list of them"
    return text_column(col, name, where, kind="attribute column", expected=expected, shown=shown)


def expand_with_tokens(
    ids: np.ndarray, offsets: np.ndarray, tok_indptr: np.ndarray, tok_ids: np.ndarray, *, basket: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Sequences with each item's tokens added: ``(ids, offsets)`` in, the same layout out.

    See :func:`expand_tokens`, which also says where each output position came from.
    """
    out, new_offsets, _, _ = expand_tokens(ids, offsets, tok_indptr, tok_ids, basket=basket)
    return out, new_offsets


def expand_tokens(
    ids: np.ndarray, offsets: np.ndarray, tok_indptr: np.ndarray, tok_ids: np.ndarray, *, basket: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sequences with each item's tokens added, and where each position of the result came from.

    Parameters
    ----------
    ids, offsets : ndarray
        Packed sequences of codes (int), ``offsets`` int64 [S + 1].
    tok_indptr, tok_ids : ndarray
        Code ``c`` has the token codes ``tok_ids[tok_indptr[c]:tok_indptr[c + 1]]``.
    basket : bool
        Add a basket's tokens once each, after its items (order carries no meaning in a basket);
        otherwise each item's tokens follow it.

    Returns
    -------
    ids : ndarray of int64
    offsets : ndarray of int64
    origin : ndarray of int64
        Per output position, the input position it stands for: the item itself, or for a token the item
        it follows (sequence mode) or the first item of its basket (basket mode). Side arrays (customer,
        time) follow the expansion as ``side[origin]``.
    is_token : ndarray of bool
        Which output positions are tokens.
    """
    ids = np.asarray(ids, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    n_seq = len(offsets) - 1
    seq = np.repeat(np.arange(n_seq), np.diff(offsets))
    per = (tok_indptr[ids + 1] - tok_indptr[ids]).astype(np.int64)
    starts = np.repeat(tok_indptr[ids], per)
    within = np.arange(int(per.sum()), dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
    toks = tok_ids[starts + within].astype(np.int64)
    tok_seq = np.repeat(seq, per)
    if basket:
        width = int(tok_ids.max(initial=0)) + 1
        pair = unique(tok_seq * width + toks)
        tok_seq, toks = np.divmod(pair, width)
        # items first, then the basket's tokens: sort (sequence, items before tokens) stably
        all_seq = np.concatenate([seq, tok_seq])
        kind = np.concatenate([np.zeros(len(ids), np.int8), np.ones(len(toks), np.int8)])
        order = np.lexsort((kind, all_seq))
        out = np.concatenate([ids, toks])[order]
        origin = np.concatenate([np.arange(len(ids)), offsets[tok_seq]])[order]
        is_token = kind[order] == 1
        lengths = np.bincount(all_seq, minlength=n_seq)
    else:
        # each item followed by its tokens: item at slot 0, its tokens at 1..per
        pos_item = np.arange(len(ids)) + np.concatenate([[0], np.cumsum(per)[:-1]])
        out = np.empty(len(ids) + len(toks), dtype=np.int64)
        out[pos_item] = ids
        is_token = np.ones(len(out), dtype=bool)
        is_token[pos_item] = False
        out[is_token] = toks
        origin = np.empty(len(out), dtype=np.int64)
        origin[pos_item] = np.arange(len(ids))
        origin[is_token] = np.repeat(np.arange(len(ids)), per)
        lengths = np.diff(offsets) + np.bincount(tok_seq, minlength=n_seq)
    new_offsets = np.zeros(n_seq + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    return out, new_offsets, origin, is_token
