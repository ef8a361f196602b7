"""Cold start: a vector for a product with no orders yet, from its attributes alone.

A space trained with item attributes (``likewise train LOG --item-attrs items.csv``, see
:mod:`likewise.retail.side`) holds a vector for every attribute value it saw (``attr:category=outdoor``,
``attr:title=tent``, ``attr:price=band3of5``), trained as context of the items that have it and of the
items bought with them. A new product is placed at the mean of its attributes' rows, in both of
skip-gram's tables:

* its input vector (``vectors``) is the weighted mean of its tokens' input vectors, so its cosine
  neighbours are the products its attributes describe (:attr:`Placed.similar`), and
  ``vector · context[j]`` ranks what is bought with it (:attr:`Placed.bought_with`);
* its output vector (``context``) is the same mean of its tokens' output vectors, so once added to the
  space (:func:`add_placed`) it can itself be recommended with a basket, before its first order.

The weights are measured in the space (:func:`token_weights`): a token weighs the square of what it
says about the items bought with it, so a brand sold in every department counts little and a
category or a product-type word a lot; the mean is then scaled to the typical length of the vectors
of its type. On the generated shop (``bench/coldstart.py``, seed 0) the plain mean gave HR@10 0.412
and kNN aisle accuracy 0.733; these weights 0.504 and 0.950.

Tokens the space has no row for (a brand never seen, a value below ``min_count``) are reported in
:attr:`Placed.unknown` and left out; a product none of whose tokens is known cannot be placed.

``bench/coldstart.py`` measures the placement against popular-in-category and LightFM with item
features on products held out of training entirely (docs/retail.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._check import check_k
from .._lineage import child_meta
from ..data.vocab import Vocab
from ..errors import InputError, NotFittedError
from ..retail.queries import affinity_top_k
from ..retail.side import read_item_attributes, tokenise
from ..space.embeddings import Embeddings
from ..space.itemtypes import SIDE_TYPE, TYPE_SEP, check_item_type, typed_key
from ..space.results import Neighbours, SpaceVector
from ..space.store import check_target

__all__ = ["Placed", "add_placed", "place", "place_table", "token_weights"]


@dataclass(frozen=True)
class Placed:
    """A product placed from its attributes.

    Attributes
    ----------
    key : str or None
        The key it will have when added to the space.
    item_type : str or None
        Its type in a typed space.
    tokens : list of str
        The attribute tokens it was placed from (those the space knows).
    unknown : list of str
        Its tokens the space has no row for (left out).
    vector : SpaceVector, float32 [D]
        Its input vector.
    context : ndarray of float32 [D], or None
        Its output vector (None in a space without a context table).
    similar : Neighbours
        The nearest items of its type by cosine.
    bought_with : Neighbours or None
        Items of its type bought with it, by affinity (None without a context table).
    prior_count : int
        The count it gets when added (:func:`add_placed`): the median count of its ``similar`` items, a
        launch-day guess at its popularity, so the popularity term of the affinity treats it as a
        typical product of its kind rather than as one nobody buys.
    """

    key: str | None
    item_type: str | None
    tokens: list[str]
    unknown: list[str]
    vector: SpaceVector
    context: np.ndarray | None
    similar: Neighbours
    bought_with: Neighbours | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    prior_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python fields for JSON (vectors as lists)."""
        return {
            "key": self.key,
            "type": self.item_type,
            "attrs": self.attrs,
            "tokens": self.tokens,
            "unknown": self.unknown,
            "prior_count": self.prior_count,
            "vector": [round(float(x), 6) for x in np.asarray(self.vector)],
            "similar": self.similar.records(),
            "bought_with": None if self.bought_with is None else self.bought_with.records(),
        }


def _spec(emb: Embeddings) -> dict[str, Any]:
    spec = (emb.meta or {}).get("attributes")
    if not isinstance(spec, dict) or not spec.get("columns"):
        raise NotFittedError(
            "this space was trained without item attributes: train it with --item-attrs FILE "
            "(train_from_log(..., item_attrs=...)) to place new products from their attributes"
        )
    return spec


def _default_type(emb: Embeddings, item_type: str | None) -> str | None:
    if item_type is not None:
        check_item_type(item_type)  # never "attr": a placed product is not an attribute token
    if emb.types is None:
        return None
    if item_type is not None:
        return emb.types.check(item_type)[0]
    if "product" in emb.types.names:
        return "product"
    return next(n for n in emb.types.names if n not in emb.types.hidden)


def token_weights(emb: Embeddings, ids: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """How much each token says about what is bought with it: the squared information gain
    ``(log n - H(p(j | token)))**2``, where ``p(j | token)`` is skip-gram's estimate over the ``n`` items
    ``rows`` (the softmax of the affinity, :meth:`~likewise.Embeddings.recommend`). A token bought
    with everything (a brand or a price band that says nothing of the department) weighs little; a
    category or a product-type word a lot. Without a context table every token weighs 1.

    Returns
    -------
    ndarray of float64, one weight per id, > 0
    """
    if emb.context is None or len(rows) < 2:
        return np.ones(len(ids))
    table = np.asarray(emb.affinity_table[rows], dtype=np.float64)
    q = np.hstack([np.asarray(emb.vectors[ids], dtype=np.float64), np.ones((len(ids), 1))])
    logits = q @ table.T
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    entropy = -(p * np.log(np.maximum(p, 1e-300))).sum(axis=1)
    return np.maximum(np.log(len(rows)) - entropy, 1e-6) ** 2


def _blend(table: np.ndarray, ids: np.ndarray, weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The weighted mean of ``table[ids]``, scaled to the median norm of ``table[rows]`` (the items of the
    placed product's type): a mean of several directions is shorter than any of them, and a short
    vector's affinity is all popularity."""
    v = (weights[:, None] * np.asarray(table[ids], dtype=np.float64)).sum(axis=0) / weights.sum()
    norm = np.linalg.norm(v)
    target = float(np.median(np.linalg.norm(np.asarray(table[rows], dtype=np.float64), axis=1)))
    return (v * (target / norm) if norm > 0 and target > 0 else v).astype(np.float32)


def place(
    emb: Embeddings,
    attrs: Mapping[str, Any],
    k: int = 10,
    *,
    key: str | None = None,
    item_type: str | None = None,
) -> Placed:
    """Place one new product from its attributes (see the module docstring).

    Parameters
    ----------
    emb : Embeddings
        A space trained with item attributes.
    attrs : mapping of str to value
        The product's attributes by column (``{"category": "outdoor", "brand": "acme",
        "title": "lightweight dome tent", "price": 79}``); the columns must be ones the space was
        trained with.
    k : int
        Neighbours to return.
    key : str, optional
        The key it will have when added (:func:`add_placed`); must not be in the space yet. In a space
        whose keys of this type read ``type:name``, a bare ``name`` gets the prefix.
    item_type : str, optional
        Its type (default ``"product"`` in a typed space); neighbours are of this type. Never ``"attr"``:
        that type is reserved for attribute tokens (:func:`likewise.space.itemtypes.check_item_type`).

    Raises
    ------
    NotFittedError
        The space was trained without attributes.
    InputError
        An attribute the space was not trained with, a key already in the space, the type ``"attr"`` or a
        key ``attr:...`` (an attribute token's), or no known token.
    """
    spec = _spec(emb)
    check_k(k)
    if not isinstance(attrs, Mapping) or not attrs:
        raise InputError(f"attrs must be a non-empty mapping of attribute -> value, got {attrs!r}")
    if key is not None and (not isinstance(key, str) or not key or key in emb.vocab.index):
        raise InputError(f"key {key!r} must be a new, non-empty key (it is already in the space)")
    if key is not None and key.startswith(SIDE_TYPE + TYPE_SEP):
        raise InputError(
            f"key {key!r} would read as an attribute token: type {SIDE_TYPE!r} is reserved for item "
            "attributes (side information)"
        )
    tokens = tokenise(spec, attrs)
    known = [t for t in tokens if t in emb.vocab.index]
    unknown = [t for t in tokens if t not in emb.vocab.index]
    if not known:
        raise InputError(
            f"none of the attribute tokens {tokens!r} has a vector in this space (never seen in "
            "training, or below min_count): the product cannot be placed"
        )
    ids = np.array([emb.vocab.index[t] for t in known], dtype=np.int64)
    kind = _default_type(emb, item_type)
    types = None if kind is None else [kind]
    allowed = emb.typed_restrict(None, types)
    rows = np.arange(len(emb)) if allowed is None else allowed
    weights = token_weights(emb, ids, rows)
    vector = _blend(np.asarray(emb.vectors), ids, weights, rows)
    context = None if emb.context is None else _blend(np.asarray(emb.context), ids, weights, rows)
    if key is not None and kind is not None and not key.startswith(kind + TYPE_SEP):
        first = emb.types.ids(kind)[:1] if emb.types is not None else []
        if len(first) and emb.keys[int(first[0])].startswith(kind + TYPE_SEP):  # keys of this type are typed
            key = typed_key(kind, key)
            if key in emb.vocab.index:
                raise InputError(f"key {key!r} must be a new key (it is already in the space)")
    similar = emb.similar_to_vector(vector, k=k, types=types)
    bought = None
    if emb.context is not None:  # the placed vector against every output row: what is bought with it
        none = np.zeros(0, np.int64)
        out, scores = affinity_top_k(emb, vector[None, :], k, none, none, allowed=allowed)
        bought = emb.neighbours_of(out[0], scores[0])
    return Placed(
        key=key,
        item_type=kind,
        tokens=known,
        unknown=unknown,
        vector=SpaceVector(vector, emb.fingerprint),
        context=context,
        similar=similar,
        bought_with=bought,
        attrs=dict(attrs),
        prior_count=int(np.median(np.asarray(emb.counts)[similar.ids])) if len(similar.ids) else 0,
    )


def place_table(
    emb: Embeddings,
    source: str | os.PathLike | Any,
    k: int = 10,
    *,
    item_col: str | None = None,
    item_type: str | None = None,
) -> list[Placed]:
    """Place every product of an attribute table (CSV/Parquet, or a table in memory).

    The table is read as the training attributes are (its first column, or ``item_col``, names the
    product); each row is placed with :func:`place` under its key. Columns the space was not trained
    with are an error.
    """
    _spec(emb)
    table = _rows(source, item_col)
    return [place(emb, attrs, k, key=key, item_type=item_type) for key, attrs in table]


def _rows(source: Any, item_col: str | None) -> list[tuple[str, dict[str, Any]]]:
    """(key, {column: value}) per row of an attribute table, checked as training reads it."""
    import pyarrow as pa

    read_item_attributes(source, item_col)  # the same checks (file, columns, keys) with the same messages
    from ..readers import read_table_file

    table, _, _ = read_table_file(source, key=item_col)  # the one reader: the same table the checks saw
    item_col = table.column_names[0] if item_col is None else item_col
    keys = [str(k) for k in table.column(item_col).cast(pa.string()).to_pylist()]
    cols = [c for c in table.column_names if c != item_col]
    values = {c: table.column(c).to_pylist() for c in cols}
    return [(key, {c: values[c][r] for c in cols}) for r, key in enumerate(keys)]


def add_placed(
    model: str | os.PathLike | Embeddings,
    placed: Sequence[Placed],
    output: str | os.PathLike | None = None,
    *,
    overwrite: bool = False,
) -> Embeddings:
    """A new version of the space with the placed products added; the parent is never written to.

    Each product is appended with its placed input and output vectors and its
    :attr:`Placed.prior_count` as count (it has no orders yet: the count is a guess from its neighbours,
    which an :func:`~likewise.retail.update.update` with its first orders adds to); its type is recorded;
    the customer table is carried over (customers' vectors do not change); ``meta["parent"]`` names the
    parent's fingerprint and path, as :func:`likewise.retail.update.update` does, ``meta["place"]`` records
    this step (``{"products", "new_products"}``; the parent's own ``meta["update"]`` is not carried over:
    :mod:`likewise._lineage`), and ``meta["placed"]`` maps every product placed so far to
    ``{"tokens", "prior_count"}``.
    An approximate index is not carried over (build one again with ``likewise index``).

    Raises
    ------
    InputError
        A product without a key, a key twice or already in the space, vectors of another space, or an
        ``output`` that is the parent's folder.
    """
    parent_path = None
    if isinstance(model, Embeddings):
        parent = model
    else:
        parent_path = Path(model).resolve()
        parent = Embeddings.load(model)
    if not placed:
        raise InputError("nothing to add: placed is empty")
    keys = [p.key for p in placed]
    for p in placed:
        if not p.key:
            raise InputError("every placed product needs a key to be added (place(..., key='new-tent'))")
        if p.key in parent.vocab.index:
            raise InputError(f"key {p.key!r} is already in the space")
        if p.vector.fingerprint != parent.fingerprint:
            raise InputError(f"{p.key!r} was placed in another space ({p.vector.fingerprint!r})")
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise InputError(f"key {dup[0]!r} is placed twice")
    target = None
    if output is not None:
        target = check_target(output, overwrite=overwrite)
        if parent_path is not None and target.resolve() == parent_path:
            raise InputError(f"output {str(output)!r} is the parent space; choose a new folder")
    W = np.vstack([np.asarray(parent.vectors), np.stack([np.asarray(p.vector) for p in placed])])
    vocab = Vocab(
        parent.keys + keys,  # type: ignore[operator]
        np.concatenate([np.asarray(parent.counts), np.array([p.prior_count for p in placed], np.int64)]),
        what=parent.vocab.what,
        dropped=parent.vocab.dropped,
    )
    # the version records this place, not the parent's own step (an update's lineage stays with it)
    meta = child_meta(parent, parent_path, "place", {"products": list(keys), "new_products": len(keys)})
    fresh = {p.key: {"tokens": p.tokens, "prior_count": p.prior_count} for p in placed}
    meta["placed"] = {**dict(meta.get("placed") or {}), **fresh}
    emb = Embeddings(W, vocab, config=parent.config, meta=meta)
    emb.item_table = parent.item_table  # still names the parent's products (a placed one shows its key)
    if parent.context is not None:
        C = np.stack(
            [p.context if p.context is not None else np.zeros(parent.dim, np.float32) for p in placed]
        )
        emb.attach_context(np.vstack([np.asarray(parent.context), C]))
    # the item-item model covers each placed product as a blend of its nearest products (no orders)
    if parent.itemitem is not None:
        n0 = len(parent)
        sims = [(np.asarray(p.similar.ids[:10], np.int64), np.asarray(p.similar.scores[:10])) for p in placed]
        emb.attach_itemitem(
            parent.itemitem.with_placed(
                list(range(n0, n0 + len(placed))), [s[0] for s in sims], [s[1] for s in sims]
            )
        )
    if parent.types is not None:
        emb.attach_types(parent.types.extend([p.item_type or parent.types.names[0] for p in placed]))
    if parent.customers is not None:
        old = parent.customers
        from ..space.customers import CustomerTable

        emb.attach_customers(
            CustomerTable(
                np.asarray(old.vectors),
                old.vocab,
                old.bought_indptr,
                old.bought_ids,
                fingerprint=emb.fingerprint,
                config=old.config,
                history=old.history,
                next_basket=old.next_basket,
            )
        )
    if target is not None:
        emb.save(target, overwrite=overwrite)
    return emb
