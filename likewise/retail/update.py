"""Training that can continue: both SGNS tables kept, and the incremental update of a saved retail space.

:func:`likewise.training.train.train_tables` (the loop :func:`likewise.train` runs) starts from given input
and output tables and returns both. The output
("context") table matters twice in retail: ``W[i] · C[j]`` estimates how much more often ``j`` is bought
with ``i`` than chance (the PMI), which finds complements (tent -> sleeping bag) where the cosine of
two input vectors finds substitutes (tent -> other tents); and an update that continues training needs
the output table it stopped with.

:func:`update` takes a saved space trained from an order log and a log of new orders, and writes a new
space (the old folder is never written to):

* products seen for the first time get rows started from the mean vectors of the known products they
  were bought with (a product bought with nothing known starts as small noise);
* every row continues training on the new orders at ``lr_scale`` times the original learning rate;
* customers get vectors from their old purchases plus the new ones, new customers included (each old
  product bought counts once, as the parent stores which products a customer bought, not when or how
  often; so a ``half_life_days`` decay is not re-applied, while ``popularity_power`` is);
* the new manifest's ``meta["parent"]`` names the parent's fingerprint and path, and ``meta["update"]``
  this step (a parent's own ``meta["place"]`` is not carried over: :mod:`likewise._lineage`);
* a typed space stays typed (new items take the type their key names);
* a space trained with item attributes (``train --item-attrs``) gets them in the new orders too, as
  training adds them: each item's attribute tokens join the baskets (or follow the item in a session)
  that hold it, tokenised by the parent's rules (``meta["attributes"]``). An item's attributes come from
  ``item_attrs`` (a table of new products, or new attributes of old ones), else from the parent's
  saved item table, else, for a placed product, from the tokens it was placed with; a token the parent
  has no row for gets one (``min_count`` applies, as to new products), typed ``attr`` and hidden;
* an order the model already holds (its id among the parent's orders, kept as 64-bit hashes with the
  customer table) or older than the parent's newest order (``meta["retail"]["newest"]``) is refused,
  counted with an example, or left out with ``on_repeat="skip"`` and counted in ``meta["update"]``: an
  order added twice counted twice in every history it touched.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from .._arrays import unique
from .._check import first_nonfinite_row
from .._lineage import child_meta
from ..data.vocab import Vocab
from ..errors import InputError
from ..readers.attr_rules import tokens_by_rules
from ..readers.attrs import expand_with_tokens
from ..space.embeddings import Embeddings
from ..space.itemtypes import SIDE_TYPE, TYPE_SEP
from ..space.store import check_target
from ..training.config import min_count_for
from ..training.train import train_tables
from .repeats import ON_REPEAT, new_orders, record_orders

__all__ = ["update"]

_TOKEN_PREFIX = f"{SIDE_TYPE}{TYPE_SEP}"  # an attribute token's key: attr:column=value


def _start_rows(
    ids: np.ndarray,
    offsets: np.ndarray,
    table: np.ndarray,
    known: np.ndarray,
    rows: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Start vectors for ``rows``: the mean of ``table`` over the known items sharing a sequence with each.

    ``known`` (bool, one per id of the new vocabulary) marks the ids that have a row in ``table``.

    A row that shares no sequence with a known item starts as word2vec's small noise.
    """
    dim = table.shape[1]
    out = ((rng.random((len(rows), dim), dtype=np.float32) - 0.5) / dim).astype(np.float32)
    if len(rows) == 0:
        return out
    where = np.full(len(known), -1, dtype=np.int64)
    where[rows] = np.arange(len(rows))
    seq = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    is_new = where[ids] >= 0
    is_known = known[ids]
    # every (new item, known item) pair of a sequence: join the two lists on the sequence number
    new_seq, new_pos = seq[is_new], where[ids[is_new]]
    known_seq, known_id = seq[is_known], ids[is_known]
    order = np.argsort(known_seq, kind="stable")
    known_seq, known_id = known_seq[order], known_id[order]
    lo = np.searchsorted(known_seq, new_seq, side="left")
    hi = np.searchsorted(known_seq, new_seq, side="right")
    n_pairs = hi - lo
    if n_pairs.sum() == 0:
        return out
    rep_pos = np.repeat(new_pos, n_pairs)
    idx = np.repeat(lo - np.cumsum(n_pairs) + n_pairs, n_pairs) + np.arange(int(n_pairs.sum()))
    sums = np.zeros((len(rows), dim), dtype=np.float64)
    np.add.at(sums, rep_pos, table[known_id[idx]])
    cnt = np.bincount(rep_pos, minlength=len(rows))
    has = cnt > 0
    out[has] = (sums[has] / cnt[has, None]).astype(np.float32)
    return out


def update(
    model: str | os.PathLike | Embeddings,
    new_log: str | os.PathLike | Sequence[str | os.PathLike],
    output: str | os.PathLike | None = None,
    *,
    epochs: int | None = None,
    lr_scale: float = 0.5,
    overwrite: bool = False,
    cache_dir: str | os.PathLike | None = None,
    item_attrs: str | os.PathLike | Any = None,
    attrs_item_col: str | None = None,
    sql: str | None = None,
    on_repeat: str = "refuse",
) -> Embeddings:
    """Continue a retail space with a log of new orders; the result is a new space.

    Parameters
    ----------
    model : path or Embeddings
        A space trained from an order log (:func:`likewise.retail.train_from_log`); it must carry its
        output table (``emb.context``), which spaces trained from a log do.
    new_log : path or paths
        New order lines, with the columns the model was trained with: files, a glob, a folder of hive
        partitions, an ``s3://`` URL, or with ``sql`` the database the query runs on.
    output : path, optional
        Folder to save the new space in; must differ from the model's folder (never overwritten).
    epochs : int, optional
        Passes over the new orders (default: the model's).
    lr_scale : float
        The learning rate of the update as a share of the model's, in ``(0, 1]``.
    overwrite : bool
        Replace an existing saved space at ``output`` (never the parent).
    cache_dir : path, optional
        Where the new log is compiled (:func:`likewise.data.corpus.build_corpus`): read by the one log reader,
        with the columns, sessions and types the parent was trained with.
    item_attrs : path or table, optional
        Attributes of the new products (or new attributes of old ones), CSV/Parquet keyed by item, read
        as ``train --item-attrs`` reads them and tokenised by the parent's rules; only for a parent
        trained with item attributes, whose own attributes are used for the items this table lacks.
    attrs_item_col : str, optional
        The item column of ``item_attrs`` (default: the one the parent's table used, else one named like
        the log's item column, else the first).
    sql : str, optional
        Read the new orders by this query on the database ``new_log`` names (``likewise train --query``).
    on_repeat : {"refuse", "skip"}
        An order of the new log that the model already holds (same order id, or the same (customer,
        order) with ``basket_scope="customer"``), or one older than the model's newest order: refuse the
        log naming how many (the default), or leave those orders out (``meta["update"]["skipped_orders"]``
        says how many).

    Returns
    -------
    Embeddings
        Products: the old ones in their old order, then new ones (and new attribute tokens) by count;
        ``meta["parent"]`` holds ``{"fingerprint", "path"}``; customer vectors rebuilt from old
        purchases plus new lines.

    Raises
    ------
    InputError
        A parent not trained from an order log or without its output table; ``item_attrs`` for a parent
        trained without attributes, or with a column the parent was not trained with; an ``output``
        that is the parent's folder or would be refused (:func:`likewise._targets.check_target`); orders
        the model already holds, or older than its newest, unless ``on_repeat="skip"``.
    """
    if on_repeat not in ON_REPEAT:
        raise InputError(f"on_repeat == {on_repeat!r}, must be one of {', '.join(map(repr, ON_REPEAT))}")

    parent, parent_path, info, attr_spec = _checked_parent(model, lr_scale, item_attrs)
    if output is not None:
        target = check_target(output, overwrite=overwrite)
        if parent_path is not None and target.resolve() == parent_path:
            raise InputError(f"output {str(output)!r} is the model being updated; choose a new folder")
    asked = parent.config if epochs is None else dataclasses.replace(parent.config, epochs=epochs)
    trained = parent.report.trained_config(parent.config)  # the parent's "auto" values as it trained them
    config = dataclasses.replace(
        trained,
        lr=trained.lr * lr_scale,
        min_lr=trained.min_lr * lr_scale,
        epochs=trained.epochs if epochs is None else epochs,
    )
    with ExitStack() as stack:  # a table in memory is read from a scratch copy while it trains
        read = parent_read_options(parent)
        corpus = new_orders(_new_corpus(new_log, read, cache_dir, sql, stack), parent, info, on_repeat)
        t0 = time.perf_counter()
        seq_ids, seq_offsets = corpus.ids, corpus.offsets  # codes of corpus.keys
        new_keys, new_counts = corpus.keys, corpus.counts
        attrs = None
        if attr_spec is not None:  # the orders get their items' attribute tokens, as training gave them
            attrs, new_keys, seq_ids, seq_offsets = _with_tokens(
                parent, info, attr_spec, new_keys, seq_ids, seq_offsets, item_attrs, attrs_item_col
            )
            new_counts = np.bincount(seq_ids, minlength=len(new_keys)).astype(np.int64)
        # vocabulary: old rows keep their ids; new products and tokens (by count, min_count applied) follow
        old_index = parent.vocab.index
        fresh = {k: int(c) for k, c in zip(new_keys, new_counts.tolist(), strict=True) if k not in old_index}
        fresh_vocab = Vocab.from_counts(fresh, min_count=min_count_for(config)) if fresh else Vocab([])
        keys = parent.keys + fresh_vocab.keys
        vocab_index = {k: i for i, k in enumerate(keys)}
        lut = np.array([vocab_index.get(k, -1) for k in new_keys], dtype=np.int64)
        counts = np.concatenate([np.asarray(parent.counts, np.int64), np.zeros(len(fresh_vocab), np.int64)])
        np.add.at(counts, lut[lut >= 0], new_counts[lut >= 0])
        line_ids = lut[corpus.ids]  # each line of the new log: its id in the new space, or -1
        ids, offsets = _kept(lut[seq_ids], seq_offsets)  # the lines and their attribute tokens, trained
        n_old = len(parent)
        new_rows = np.arange(n_old, len(keys))
        known = np.zeros(len(keys), dtype=bool)
        known[:n_old] = True
        rng = np.random.default_rng(config.seed + 1)
        W0 = np.concatenate(
            [
                np.asarray(parent.vectors),
                _start_rows(ids, offsets, np.asarray(parent.vectors), known, new_rows, rng),
            ]
        )
        C_old = np.asarray(parent.context)
        C0 = np.concatenate([C_old, _start_rows(ids, offsets, C_old, known, new_rows, rng)])
        W, C, history = train_tables(ids, offsets, counts, config, W=W0, C=C0)
        seconds = time.perf_counter() - t0
        new_tokens = sum(k.startswith(_TOKEN_PREFIX) for k in fresh_vocab.keys) if attrs is not None else 0
        record = {
            "lines": len(line_ids),
            "new_products": len(fresh_vocab) - new_tokens,
            "lr_scale": lr_scale,
            "epochs": config.epochs,
            "seconds": seconds,
            "skipped_orders": corpus.skipped,
            "repeat_check": corpus.checked,
        }
        if attrs is not None:
            record |= {"new_attribute_tokens": new_tokens, "items_with_attributes": attrs.found}
        meta = child_meta(parent, parent_path, "update", record)  # not the parent's own step (a place)
        meta["resolved"] = {**parent.report.resolved, "epochs": config.epochs}
        meta["history"] = [dict(h) for h in history]
        meta["train_seconds"] = seconds
        vocab = Vocab(keys, counts, what=parent.vocab.what)
        emb = Embeddings(W, vocab, config=asked, meta=meta)
        emb.attach_context(C)
        _carry_over(emb, parent, attrs, keys, fresh_vocab.keys, corpus, line_ids, info)
        record_orders(emb, parent, corpus)
        if output is not None:
            emb.save(output, overwrite=overwrite)
        return emb


def _checked_parent(
    model: Any, lr_scale: float, item_attrs: Any
) -> tuple[Embeddings, Path | None, dict, dict | None]:
    """The parent space, its folder, its log's record and its attribute rules, after every check an update
    makes of them."""
    parent_path = None
    if isinstance(model, Embeddings):
        parent = model
    else:
        parent_path = Path(model).resolve()
        parent = Embeddings.load(model)
    info = parent.meta.get("retail")
    if not isinstance(info, dict) or not info.get("basket_col") or not info.get("item_col"):
        raise InputError(
            "the model does not record the order log it was trained from (meta['retail'] with basket_col "
            "and item_col); train it with likewise.retail.train_from_log or `likewise train --user-col`"
        )
    if parent.context is None:
        raise InputError("the model has no output table (context.npy) to continue training; retrain it")
    if parent.config is None:
        raise InputError("the model has no training config to continue training with; retrain it")
    for name, table in (("vectors", parent.vectors), ("context table", parent.context)):
        bad = first_nonfinite_row(np.asarray(table))  # a space built with check_finite=False
        if bad is not None:
            raise InputError(
                f"the model's {name} row {bad} ({parent.keys[bad]!r}) holds NaN or infinity; "
                "an update continues from finite tables only"
            )
    if not 0 < lr_scale <= 1:
        raise InputError(f"lr_scale == {lr_scale!r}, must be in (0, 1]")
    customers = parent.customers
    if customers is not None and customers.next_basket is not None:
        from ..nextbasket.features import FEATURES
        from ..nextbasket.model import retrain_command

        # refused before any work: weights fitted on other features are never carried into a new version
        customers.next_basket.check(FEATURES, retrain_command(info))
    attr_spec = parent.meta.get("attributes") if isinstance(parent.meta.get("attributes"), dict) else None
    if item_attrs is not None and attr_spec is None:
        raise InputError(
            "item_attrs (--item-attrs) needs a model trained with item attributes, and this one was "
            "trained without: its attribute tokens and their rules do not exist; retrain with --item-attrs"
        )
    return parent, parent_path, info, attr_spec


def _with_tokens(
    parent: Embeddings,
    info: dict,
    attr_spec: dict,
    new_keys: list[str],
    seq_ids: np.ndarray,
    seq_offsets: np.ndarray,
    item_attrs: Any,
    attrs_item_col: str | None,
) -> tuple[Any, list[str], np.ndarray, np.ndarray]:
    """The new orders with their items' attribute tokens (by the parent's rules), and the tokens' keys."""
    clash = next((k for k in new_keys if k.startswith(_TOKEN_PREFIX)), None)
    if clash is not None:
        raise InputError(
            f"item {clash!r} of the new log starts with {_TOKEN_PREFIX!r}, which names attribute tokens "
            "in this model (trained with item attributes); rename such items"
        )
    attrs = tokens_by_rules(
        new_keys,
        attr_spec,
        table=parent.item_table,
        placed=parent.meta.get("placed"),
        source=item_attrs,
        item_col=attrs_item_col,
        log_item_col=info["item_col"],
    )
    tok_keys, tok_indptr, tok_codes = _token_table(new_keys, attrs.tokens)
    seq_ids, seq_offsets = expand_with_tokens(
        seq_ids, seq_offsets, tok_indptr, tok_codes, basket=info.get("sessions") is None
    )
    return attrs, [*new_keys, *tok_keys], seq_ids, seq_offsets


def _carry_over(
    emb: Embeddings,
    parent: Embeddings,
    attrs: Any,
    keys: list[str],
    fresh_keys: list[str],
    corpus: Any,
    line_ids: np.ndarray,
    info: dict,
) -> None:
    """What the updated space takes from its parent beside the tables: the item-item model, the item
    table, the types and the customers (rebuilt from old purchases plus the new lines)."""
    if parent.itemitem is not None:
        # EASE needs every basket (its Gram matrix), and an update sees only the new ones: the parent's
        # model keeps completing the products it covers, new products are completed by their vectors
        emb.attach_itemitem(parent.itemitem)
        emb.meta["completion_reason"] = (
            f"{parent.report.completion.reason or 'item-item'}; carried over from the parent by update "
            "(retrain on the whole log to refit it with the new orders)"
        )
    # the parent's item attributes still name its products; new rows of item_attrs name new ones
    table = parent.item_table if attrs is None else attrs.table(keys)
    chosen = (parent.item_table or {}).get("name_col")  # the display names' column chosen at training
    emb.item_table = {**table, "name_col": chosen} if table is not None and chosen else table
    if parent.types is not None:  # a typed space: new items of a typed log say their type in their key
        emb.attach_types(parent.types.extend(_new_types(parent.types, fresh_keys, info)))
    users = corpus.side.get("user") if corpus.user_keys is not None else None
    if users is not None or parent.customers is not None:
        new_lines = None if users is None else (corpus.user_keys, np.asarray(users), line_ids)
        times = corpus.side.get("time")
        baskets = (np.asarray(corpus.offsets), None if times is None else np.asarray(times))
        emb.attach_customers(_merged_customers(emb, parent.customers, new_lines, baskets))


def _new_types(types: Any, keys: list[str], info: dict) -> list[str]:
    """The types of new rows: an attribute token's (``attr:...``) is ``attr``; an item's comes from its
    ``type:item`` key in a typed log, else it is the space's item type."""
    from ..space.itemtypes import split_key

    visible = [n for n in types.names if n not in types.hidden]
    item_type = visible[0] if visible else types.names[0]
    typed = bool(info.get("type_col") or info.get("type_cols"))
    return [
        SIDE_TYPE if k.startswith(_TOKEN_PREFIX) else (split_key(k)[0] if typed else item_type) for k in keys
    ]


def _token_table(keys: list[str], tokens: list[list[str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Codes for the tokens of each key (``keys[c]`` has ``tokens[c]``): the token keys in order of first
    appearance, coded after the keys, and the CSR table :func:`expand_with_tokens` reads."""
    code: dict[str, int] = {}
    flat = [code.setdefault(t, len(keys) + len(code)) for per in tokens for t in per]
    indptr = np.zeros(len(keys) + len(code) + 1, dtype=np.int64)
    indptr[1 : len(keys) + 1] = np.cumsum([len(per) for per in tokens])
    indptr[len(keys) + 1 :] = indptr[len(keys)]
    return list(code), indptr, np.asarray(flat, dtype=np.int64)


def _merged_customers(emb: Embeddings, old: Any, new_lines: Any, baskets: Any = None) -> Any:
    """Customer vectors from each customer's old purchases (one line per product bought) plus new lines.

    ``new_lines`` is ``(customer keys, customer code per line, id per line)`` of the new log, or None;
    ``baskets`` its ``(offsets, times)``. When the parent's table keeps a purchase history, the new
    baskets are added to it (:func:`_merged_history`) and the next-basket weights carried over.
    """
    from ..space.customers import customer_table

    index: dict[str, int] = {}
    codes: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    if old is not None:
        per = np.diff(old.bought_indptr)
        own = np.fromiter((index.setdefault(k, len(index)) for k in old.keys), np.int64, len(old.keys))
        codes.append(np.repeat(own, per))
        ids.append(np.asarray(old.bought_ids, dtype=np.int64))
    new_codes = None
    if new_lines is not None:
        keys, users, line_ids = new_lines
        remap = np.fromiter((index.setdefault(k, len(index)) for k in keys), np.int64, len(keys))
        users = np.asarray(users, dtype=np.int64)
        new_codes = np.where(users >= 0, remap[np.maximum(users, 0)], -1)  # -1: a line with no customer
        codes.append(new_codes)
        ids.append(line_ids)
    cfg = dict(old.config) if old is not None else {}
    table = customer_table(
        emb.vectors,
        emb.counts,
        emb.fingerprint,
        list(index),
        np.concatenate(codes),
        np.concatenate(ids),
        popularity_power=cfg.get("popularity_power", 0.0),
    )
    if old is None or old.history is None or new_codes is None or baskets is None:
        return table  # no history to add to: next_basket says to retrain
    history = _merged_history(old, own, new_codes, np.asarray(line_ids), baskets, len(index), len(emb))
    out_pairs = np.repeat(np.arange(len(table), dtype=np.int64), np.diff(table.bought_indptr))
    kept_codes = np.fromiter((index[k] for k in table.keys), np.int64, len(table))
    want = kept_codes[out_pairs] * len(emb) + np.asarray(table.bought_ids, dtype=np.int64)
    if not np.array_equal(history["pair"], want):  # the same lines, the same pairs: a check, never expected
        raise InputError("the merged purchase history's pairs differ from the customers' bought products")
    from ..nextbasket.features import FEATURES
    from ..nextbasket.model import retrain_command
    from ..space.customers import CustomerTable

    model = old.next_basket  # fitted on the parent's baskets: carried over while it fits this version
    if model is not None:  # weights fitted on other features are refused, never carried stale
        model = model.check(FEATURES, retrain_command((emb.meta or {}).get("retail")))
    return CustomerTable(
        np.asarray(table.vectors),
        table.vocab,
        table.bought_indptr,
        table.bought_ids,
        fingerprint=table.fingerprint,
        config=dict(table.config),
        history={
            **{k: v for k, v in history.items() if k != "pair"},
            "n_baskets": history["n_baskets"][kept_codes],
        },
        next_basket=model,
    )


def _merged_history(
    old: Any,
    own: np.ndarray,
    new_codes: np.ndarray,
    line_ids: np.ndarray,
    baskets: Any,
    n_customers: int,
    n_items: int,
) -> dict[str, np.ndarray]:
    """The parent's purchase history with the new baskets added, per (customer code, product) pair.

    The new baskets come after the old ones: a product's ``last`` is counted in the new baskets when it
    is in one, else the old count plus the customer's new baskets; ``first`` moves back by them; the
    recency-weighted count of the old baskets ages by them (``0.5 ** (new / HALF_LIFE)``).
    """
    from ..nextbasket.history import HALF_LIFE, purchase_history

    offsets, times = baskets
    new = purchase_history(new_codes, line_ids, offsets, n_customers, n_items, times=times)
    h = old.history
    old_code = np.repeat(own, np.diff(old.bought_indptr))
    old_pair = old_code * n_items + np.asarray(old.bought_ids, dtype=np.int64)
    n_old = np.zeros(n_customers, dtype=np.int64)
    n_old[own] = h["n_baskets"]
    n_new = new.n_baskets.astype(np.int64)
    pair = unique(np.concatenate([old_pair, new.pair]))
    out = {name: np.zeros(len(pair), dtype=np.float64) for name in ("baskets", "last", "first", "decay")}
    code = pair // n_items
    in_old = np.zeros(len(pair), bool)
    at = np.searchsorted(pair, old_pair)
    in_old[at] = True
    age = n_new[code[at]]  # the old baskets are this many baskets older now
    out["baskets"][at] += h["baskets"]
    out["last"][at] = h["last"] + age
    out["first"][at] = h["first"] + age
    out["decay"][at] = h["decay"] * 0.5 ** (age / HALF_LIFE)
    at = np.searchsorted(pair, new.pair)
    out["baskets"][at] += new.baskets
    out["last"][at] = new.last
    out["first"][at] = np.where(in_old[at], out["first"][at], new.first)
    out["decay"][at] += new.decay
    return {
        "pair": pair,
        "baskets": out["baskets"].astype(np.int32),
        "last": out["last"].astype(np.int32),
        "first": out["first"].astype(np.int32),
        "decay": out["decay"].astype(np.float32),
        "n_baskets": (n_old + n_new).astype(np.int32),
    }


def _new_corpus(new_log: Any, parent_read: Any, cache_dir: Any, sql: str | None, stack: ExitStack) -> Any:
    """The new log compiled as the parent's was read (its columns, sessions and types), every item kept."""
    from ..data.corpus import build_corpus
    from ..readers.resolve import resolve_input

    read = dataclasses.replace(_log_shape(parent_read), sql=sql)
    source = resolve_input(new_log, read, stack)
    cache = source.cache_dir if source.cache_dir is not None else cache_dir
    return build_corpus(source.data, min_count=1, cache_dir=cache, what="item")


#: What an update takes of the parent's read options: the shape of its log (columns, sessions, types,
#: what a basket is). The file's own format, delimiter, bad-row and missing-value handling belong to the
#: new file, and its attributes come by ``item_attrs``.
UPDATE_READS = (
    "basket_col",
    "item_col",
    "user_col",
    "time_col",
    "sessions",
    "type_col",
    "type_map",
    "type_cols",
    "basket_scope",
)


def parent_read_options(parent: Any) -> Any:
    """How the parent read its order log: ``meta["read"]`` (:meth:`ReadOptions.from_dict`), or for a model
    saved before it was recorded, the columns ``meta["retail"]`` names.

    Raises
    ------
    InputError
        ``meta["read"]`` is damaged (not read options this version knows), naming what is wrong.
    """
    from ..readers.resolve import ReadOptions

    saved = parent.meta.get("read")
    if saved is not None:
        try:
            return ReadOptions.from_dict(saved)
        except InputError as e:
            raise InputError(f"the model's meta['read']: {e}; the manifest was edited or damaged") from None
    info = parent.meta["retail"]
    return ReadOptions(
        basket_col=info["basket_col"],
        item_col=None if info.get("type_cols") else info["item_col"],
        user_col=info.get("user_col"),
        time_col=info.get("time_col"),
        sessions=info.get("sessions"),
        type_col=info.get("type_col"),
        type_map=info.get("type_map"),
        type_cols=info.get("type_cols"),
        basket_scope=info.get("basket_scope", "order"),
    )


def _log_shape(read: Any) -> Any:
    """``read``'s :data:`UPDATE_READS`, every other option at its default."""
    return type(read)(**{name: getattr(read, name) for name in UPDATE_READS})


def _kept(line_ids: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Packed sequences without the lines of ids -1 (products below ``min_count``); empty ones go."""
    kept = line_ids >= 0
    csum = np.zeros(len(line_ids) + 1, dtype=np.int64)
    np.cumsum(kept, out=csum[1:])
    lengths = csum[offsets[1:]] - csum[offsets[:-1]]
    lengths = lengths[lengths > 0]
    new_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    return line_ids[kept].astype(np.int32), new_offsets
