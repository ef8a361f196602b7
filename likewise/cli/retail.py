"""Retail commands on a space trained from an order log (``likewise train LOG --user-col ...``).

``also-bought MODEL PRODUCT``, ``complete MODEL PRODUCT...``, ``for-customer MODEL CUSTOMER``,
``similar-customers MODEL CUSTOMER``, ``lookalike MODEL SEED... [--seeds-file F] [-o audience.csv]``
and ``update MODEL NEW_LOG -o NEW_MODEL``. The logic lives in :mod:`likewise.retail` and
:mod:`likewise.retail.update`.
"""

from __future__ import annotations

import argparse
from typing import Any

from likewise.data.vocab import parse_item, parse_items

from ._common import (
    Commands,
    answers_payload,
    emit,
    emit_fields,
    k_option,
    load_space,
    neighbour_table,
    positive_int,
    skip_unknown_option,
    titled,
    type_option,
    types_of,
)


def _show(
    args: argparse.Namespace, query: Any, res: Any, title: str, what: str, score: str = "score", **extra: Any
) -> None:
    """Ranked ``what`` (product or customer) under ``title``, the score column headed ``score``; the JSON
    is the one envelope of ``query``'s answer, ``extra`` beside it."""
    payload = answers_payload([(query, res)], **extra)
    emit(args, payload, f"{title}:\n" + neighbour_table(res, what, score))


def cmd_also_bought(args: argparse.Namespace) -> None:
    """Print the products bought with ``args.product``."""
    from likewise.retail import also_bought

    emb, item = load_space(args.model), parse_item(args.product)
    res = also_bought(emb, item, k=args.k, types=types_of(args))
    _show(args, args.product, res, f"bought with {titled(emb, args.product, item)}", "product")


def cmd_complete(args: argparse.Namespace) -> None:
    """Print the products to add to the basket ``args.products``."""
    from likewise.retail import complete_basket

    on_unknown = args.on_unknown
    res = complete_basket(
        load_space(args.model),
        parse_items(args.products),
        k=args.k,
        on_unknown=on_unknown,
        types=types_of(args),
    )
    _show(args, list(args.products), res, f"to add to {', '.join(args.products)}", "product")


def cmd_for_customer(args: argparse.Namespace) -> None:
    """Print the products to recommend to ``args.customer``."""
    from likewise.retail import for_customer

    res = for_customer(
        load_space(args.model),
        parse_item(args.customer),
        k=args.k,
        exclude_bought=not args.include_bought,
        types=types_of(args),
    )
    _show(args, args.customer, res, f"for {args.customer}", "item" if types_of(args) else "product")


def cmd_next_basket(args: argparse.Namespace) -> None:
    """Print what ``args.customer`` will buy next (repeats included; ``--explore``: only new products)."""
    from likewise.retail import next_basket

    res = next_basket(
        load_space(args.model),
        parse_item(args.customer),
        k=args.k,
        explore=args.explore,
        types=types_of(args),
    )
    _show(
        args,
        args.customer,
        res,
        f"{'new for' if args.explore else 'next basket of'} {args.customer} (chance: the estimated "
        "probability of being in the next basket)",
        "product",
        score="chance",
    )


def cmd_similar_customers(args: argparse.Namespace) -> None:
    """Print the customers closest to ``args.customer``."""
    from likewise.retail import similar_customers

    res = similar_customers(load_space(args.model), parse_item(args.customer), k=args.k)
    _show(args, args.customer, res, f"customers like {args.customer}", "customer")


#: Names of a seed file's id column, in the order they are looked for; a first line holding one is a header.
SEED_COLUMNS = ("customer_id", "customer", "seed", "user_id")


def read_seeds(
    path: str, seed_col: str | None, option: str = "--seeds-file", col_option: str | None = "--seed-col"
) -> list[str]:
    """Seed customers from a file, read as every keyed table is (:func:`likewise.readers.read_table_file`).

    A CSV / TSV with a header (the column ``seed_col``, else ``customer_id``, ``customer``, ``seed``,
    ``user_id`` or the only column), a Parquet file (told by its content), or plain text with one id per
    line (an optional header line naming the column; blank lines and ``#`` comments skipped). The ids get
    a log's key checks: none null or empty, none with a line break or over the length limit. ``option`` is
    the command's option for the file (``--seeds-file``, ``--customers-file``) and ``col_option`` its option
    naming the column (None where the command has none), both named in its errors.
    """
    from likewise.errors import InputError
    from likewise.readers import HeaderRule, key_column, read_table_file

    named = SEED_COLUMNS if seed_col is None else (seed_col,)
    table, where, fmt = read_table_file(
        path, what="seeds", header=HeaderRule(named, plain_width=1), text=True
    )
    cols = table.column_names
    if fmt == "lines":  # one id per line, no header
        if seed_col is not None:
            raise InputError(
                f"{option} {where!r} has no header line naming a column {seed_col!r} (its first line is "
                f"an id): give the file a header, or no {col_option}"
            )
        column = cols[0]
    elif seed_col is None:
        column = next((c for c in SEED_COLUMNS if c in cols), cols[0] if len(cols) == 1 else None)
    else:
        column = seed_col if seed_col in cols else None
    if column is None:
        if col_option is None:  # the header must name the column
            names = " or ".join(map(repr, SEED_COLUMNS))
            hint = f"name its customer column {names} in the header, or give one column"
        else:
            hint = (
                f"name the seed column with {col_option}{'' if seed_col is None else f' (not {seed_col!r})'}"
            )
        raise InputError(f"{option} {where!r} has columns {', '.join(map(repr, cols))}: {hint}")
    return key_column(table, column, where, need="every row needs a customer id").to_pylist()


def cmd_lookalike(args: argparse.Namespace) -> None:
    """Print (or export with ``-o``) the customers closest to a seed audience."""
    import sys

    from likewise._targets import check_output_file
    from likewise.errors import InputError
    from likewise.retail import lookalike, write_audience

    seeds = list(args.seeds)
    if args.seeds_file:
        seeds += read_seeds(args.seeds_file, args.seed_col)
    elif args.seed_col:
        raise InputError("--seed-col names a column of --seeds-file; give the file too")
    if not seeds:
        raise InputError("no seed customers: give them as arguments or with --seeds-file")
    if args.output:  # before the work: never inside a model folder, never over a file unasked
        check_output_file(args.output, overwrite=args.overwrite)
    emb = load_space(args.model)
    unknown: list[str] = []
    if args.on_unknown == "skip" and emb.customers is not None:
        known = emb.customers.vocab
        unknown = [s for s in seeds if s not in known]
        seeds = [s for s in seeds if s in known]
        if unknown:
            shown = ", ".join(repr(u) for u in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
            print(f"likewise: skipped {len(unknown)} unknown seed customer(s): {shown}", file=sys.stderr)
        if not seeds:
            raise InputError(f"none of the {len(unknown)} seed customers is in the model")
    res = lookalike(emb, seeds, k=args.k, method=args.method)
    title = f"lookalike audience of {len(seeds)} seed customers ({args.method})"
    if args.output:
        n = write_audience(res, args.output, min_score=args.min_score, overwrite=args.overwrite)
        why = _fewer_than_k(n, len(res), args, len(set(seeds)), len(emb.customers or ()))
        payload = {
            "audience": args.output,
            "customers": n,
            "seeds": len(seeds),
            "unknown_seeds": unknown,
            "method": args.method,
        }
        emit(args, payload, f"{title}: wrote {n} customers to {args.output}{why}")
        return
    if args.min_score is not None:
        title += f", score >= {args.min_score:g}"
    _show(
        args,
        seeds,
        res.at_least(args.min_score),
        title,
        "customer",
        method=args.method,
        unknown_seeds=unknown,
    )


def _fewer_than_k(n: int, found: int, args: argparse.Namespace, n_seeds: int, n_customers: int) -> str:
    """Why an audience has fewer than ``-k`` customers, for the line that says how many were written."""
    if n >= args.k:
        return ""
    if n < found:
        return f" (fewer than -k {args.k}: {found - n} scored below --min-score {args.min_score:g})"
    if found >= n_customers - n_seeds:
        return f" (fewer than -k {args.k}: only {n_customers - n_seeds} customers are not seeds)"
    # knn: each seed votes for its 50 nearest customers; only those with a vote are in the audience
    return (
        f" (fewer than -k {args.k}: with --method knn each of the {n_seeds} seeds votes for its 50 nearest "
        "customers, and only customers with a vote are kept; more seeds or --method centroid give more)"
    )


def cmd_update(args: argparse.Namespace) -> None:
    """Continue a retail space with new orders and save it to ``args.output``."""
    from likewise.retail.update import update

    emb = update(
        args.model,
        args.new_log,
        args.output,
        epochs=args.epochs,
        lr_scale=args.lr_scale,
        overwrite=args.overwrite,
        item_attrs=args.item_attrs,
        attrs_item_col=args.attrs_item_col,
        sql=args.query,
        on_repeat=args.on_repeat,
    )
    u = emb.meta["update"]
    summary = {
        "model": args.output,
        "parent": args.model,
        "parent_fingerprint": emb.meta["parent"]["fingerprint"],
        "fingerprint": emb.fingerprint,
        "products": len(emb),
        "new_products": u["new_products"],
        **({"new_attribute_tokens": u["new_attribute_tokens"]} if "new_attribute_tokens" in u else {}),
        "customers": len(emb.customers) if emb.customers is not None else 0,
        "lines": u["lines"],
        "skipped_orders": u["skipped_orders"],
        "seconds": u["seconds"],
    }
    emit_fields(args, summary)


def register(commands: Commands) -> None:
    """Add the retail subcommands."""
    from likewise import retail
    from likewise._check import default_of
    from likewise.retail.repeats import ON_REPEAT
    from likewise.retail.update import update

    p = commands.add("also-bought", cmd_also_bought, help="products bought with PRODUCT")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("product", metavar="PRODUCT", help="product key, or #ID")
    k_option(p, retail.also_bought)
    type_option(p)

    p = commands.add(
        "complete",
        cmd_complete,
        help="products to add to a basket (`recommend`'s answer, with --type for a typed space)",
    )
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument(
        "products", nargs="+", metavar="PRODUCT", help="the basket: product keys (or display names)"
    )
    k_option(p, retail.complete_basket)
    skip_unknown_option(p, "ignore basket products not in the model")
    type_option(p)

    p = commands.add("for-customer", cmd_for_customer, help="products to recommend to CUSTOMER")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("customer", metavar="CUSTOMER", help="a customer key (#N: row N)")
    k_option(p, retail.for_customer)
    p.add_argument("--include-bought", action="store_true", help="also recommend products already bought")
    type_option(p)

    p = commands.add(
        "next-basket", cmd_next_basket, help="what CUSTOMER will buy next, repeats included (--explore: new)"
    )
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("customer", metavar="CUSTOMER", help="a customer key (#N: row N)")
    k_option(p, retail.next_basket)
    p.add_argument(
        "--explore", action="store_true", help="something new: only products the customer never bought"
    )
    type_option(p, default="products (the type 'product')")

    p = commands.add("similar-customers", cmd_similar_customers, help="customers closest to CUSTOMER")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("customer", metavar="CUSTOMER", help="a customer key (#N: row N)")
    k_option(p, retail.similar_customers)

    p = commands.add("lookalike", cmd_lookalike, help="customers closest to a seed audience")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("seeds", nargs="*", metavar="SEED", help="seed customer ids")
    p.add_argument(
        "--seeds-file",
        default=None,
        help="seed customers: one id per line, a CSV/TSV with a header (see --seed-col), or Parquet",
    )
    p.add_argument("--seed-col", default=None, help="column of --seeds-file with the ids (customer_id)")
    skip_unknown_option(p, "report seeds not in the model and go on")
    k_option(p, retail.lookalike, "audience size")
    p.add_argument(
        "--method",
        default="centroid",
        choices=["centroid", "knn"],
        help="centroid: nearest the seeds' mean; knn: votes of each seed's nearest customers",
    )
    p.add_argument("-o", "--output", default=None, metavar="CSV", help="export the audience to CSV")
    p.add_argument("--overwrite", action="store_true", help="replace an existing file at CSV")
    p.add_argument(
        "--min-score", type=float, default=None, help="cut the audience (printed or exported) here"
    )

    p = commands.add("update", cmd_update, help="continue a retail space with new orders")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument(
        "new_log",
        nargs="+",
        metavar="NEW_LOG",
        help="files, a glob, a hive folder, an s3:// URL; a database with --query",
    )
    p.add_argument(
        "--query", default=None, metavar="SQL", help="read the new orders by this query on NEW_LOG"
    )
    p.add_argument("-o", "--output", required=True, metavar="NEW_MODEL", help="folder of the new space")
    p.add_argument("--epochs", type=positive_int, default=None, help="default: the model's")
    p.add_argument("--lr-scale", type=float, default=0.5, help="update learning rate / original")
    p.add_argument("--overwrite", action="store_true", help="replace an existing space at NEW_MODEL")
    p.add_argument(
        "--on-repeat",
        choices=ON_REPEAT,
        default=default_of(update, "on_repeat"),
        help="orders already in MODEL, or older than its newest: refuse the log (default) or leave them out",
    )
    p.add_argument(
        "--item-attrs",
        default=None,
        metavar="FILE",
        help="attributes of new products (CSV/Parquet keyed by item), for a model trained with --item-attrs; "
        "items it lacks keep the model's own",
    )
    p.add_argument(
        "--attrs-item-col",
        default=None,
        help="the item column of --item-attrs (default: the model's attribute table's, else the first)",
    )
