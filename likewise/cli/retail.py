"""Retail commands on a space trained from an order log (``likewise train LOG --user-col ...``).

``also-bought MODEL PRODUCT``, ``complete MODEL PRODUCT...``, ``for-customer MODEL CUSTOMER``,
``similar-customers MODEL CUSTOMER``, ``lookalike MODEL SEED... [--seeds-file F] [-o audience.csv]``
and ``update MODEL NEW_LOG -o NEW_MODEL``. The logic lives in :mod:`likewise.retail` and
:mod:`likewise.update`.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    Commands,
    emit,
    emit_fields,
    load_space,
    neighbour_payload,
    neighbour_table,
    parse_items,
    positive_int,
    type_option,
    types_of,
)


def _show(args: argparse.Namespace, res: Any, title: str, what: str, **extra: Any) -> None:
    """Ranked ``what`` (product or customer) under ``title``; ``extra`` goes into the JSON before them."""
    payload = {"query": title, **extra, "results": neighbour_payload(res, what)}
    emit(args, payload, f"{title}:\n" + neighbour_table(res, what))


def cmd_also_bought(args: argparse.Namespace) -> None:
    """Print the products bought with ``args.product``."""
    from likewise.retail import also_bought

    res = also_bought(load_space(args.model), parse_items([args.product])[0], k=args.k, types=types_of(args))
    _show(args, res, f"bought with {args.product}", "product")


def cmd_complete(args: argparse.Namespace) -> None:
    """Print the products to add to the basket ``args.products``."""
    from likewise.retail import complete_basket

    on_unknown = "skip" if args.skip_unknown else "raise"
    res = complete_basket(
        load_space(args.model),
        parse_items(args.products),
        k=args.k,
        on_unknown=on_unknown,
        types=types_of(args),
    )
    _show(args, res, f"to add to {', '.join(args.products)}", "product")


def cmd_for_customer(args: argparse.Namespace) -> None:
    """Print the products to recommend to ``args.customer``."""
    from likewise.retail import for_customer

    res = for_customer(
        load_space(args.model),
        args.customer,
        k=args.k,
        exclude_bought=not args.include_bought,
        types=types_of(args),
    )
    _show(args, res, f"for {args.customer}", "item" if types_of(args) else "product")


def cmd_similar_customers(args: argparse.Namespace) -> None:
    """Print the customers closest to ``args.customer``."""
    from likewise.retail import similar_customers

    res = similar_customers(load_space(args.model), args.customer, k=args.k)
    _show(args, res, f"customers like {args.customer}", "customer")


def read_seeds(path: str, seed_col: str | None) -> list[str]:
    """Seed customers from a file: a CSV / TSV with a header (column ``seed_col``, or ``customer_id``,
    ``customer`` or the only column), or plain text with one id per line (an optional header line)."""
    from pathlib import Path

    from likewise.errors import InputError

    with open(path, encoding="utf-8") as f:
        first = f.readline()
    delim = "\t" if path.endswith(".tsv") or "\t" in first else "," if "," in first else None
    if delim is None and seed_col is None:
        with open(path, encoding="utf-8") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
        if lines and lines[0].lower() in ("customer_id", "customer", "seed", "user_id"):
            lines = lines[1:]  # a header line
        return lines
    import pyarrow as pa
    import pyarrow.csv as pacsv

    try:
        table = pacsv.read_csv(
            Path(path),
            parse_options=pacsv.ParseOptions(delimiter=delim or ","),
            convert_options=pacsv.ConvertOptions(strings_can_be_null=False),
        )
    except pa.ArrowInvalid as e:
        raise InputError(
            f"--seeds-file {path!r} is not a readable CSV/TSV: {str(e).splitlines()[0]}"
        ) from None
    cols = table.column_names
    if seed_col is None:
        seed_col = next((c for c in ("customer_id", "customer", "seed", "user_id") if c in cols), None)
        if seed_col is None and len(cols) == 1:
            seed_col = cols[0]
    if seed_col is None or seed_col not in cols:
        raise InputError(
            f"--seeds-file {path!r} has columns {', '.join(map(repr, cols))}: "
            f"name the seed column with --seed-col{'' if seed_col is None else f' (not {seed_col!r})'}"
        )
    return [str(v) for v in table.column(seed_col).to_pylist() if v is not None and str(v).strip()]


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
    if args.skip_unknown and emb.customers is not None:
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
    rows = [(k, s) for k, s in res if args.min_score is None or s >= args.min_score]
    if args.min_score is not None:
        title += f", score >= {args.min_score:g}"
    _show(args, rows, title, "customer", unknown_seeds=unknown)


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
    from likewise.update import update

    emb = update(
        args.model,
        args.new_log,
        args.output,
        epochs=args.epochs,
        lr_scale=args.lr_scale,
        overwrite=args.overwrite,
        item_attrs=args.item_attrs,
        attrs_item_col=args.attrs_item_col,
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
        "seconds": u["seconds"],
    }
    emit_fields(args, summary)


def register(commands: Commands) -> None:
    """Add the retail subcommands."""
    p = commands.add("also-bought", cmd_also_bought, help="products bought with PRODUCT")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("product", metavar="PRODUCT", help="product key, or #ID")
    p.add_argument("-k", type=positive_int, default=10)
    type_option(p)

    p = commands.add(
        "complete",
        cmd_complete,
        help="products to add to a basket (`recommend`'s answer, with --type for a typed space)",
    )
    p.add_argument("model", metavar="MODEL")
    p.add_argument("products", nargs="+", metavar="PRODUCT")
    p.add_argument("-k", type=positive_int, default=10)
    p.add_argument("--skip-unknown", action="store_true", help="ignore basket products not in the model")
    type_option(p)

    p = commands.add("for-customer", cmd_for_customer, help="products to recommend to CUSTOMER")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("customer", metavar="CUSTOMER")
    p.add_argument("-k", type=positive_int, default=10)
    p.add_argument("--include-bought", action="store_true", help="also recommend products already bought")
    type_option(p)

    p = commands.add("similar-customers", cmd_similar_customers, help="customers closest to CUSTOMER")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("customer", metavar="CUSTOMER")
    p.add_argument("-k", type=positive_int, default=10)

    p = commands.add("lookalike", cmd_lookalike, help="customers closest to a seed audience")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("seeds", nargs="*", metavar="SEED", help="seed customer ids")
    p.add_argument(
        "--seeds-file",
        default=None,
        help="seed customers: a CSV/TSV with a header (see --seed-col), or one id per line",
    )
    p.add_argument("--seed-col", default=None, help="column of --seeds-file with the ids (customer_id)")
    p.add_argument("--skip-unknown", action="store_true", help="report seeds not in the model and go on")
    p.add_argument("-k", type=positive_int, default=100, help="audience size")
    p.add_argument("--method", default="centroid", choices=["centroid", "knn"])
    p.add_argument("-o", "--output", default=None, metavar="CSV", help="export the audience to CSV")
    p.add_argument("--overwrite", action="store_true", help="replace an existing file at CSV")
    p.add_argument(
        "--min-score", type=float, default=None, help="cut the audience (printed or exported) here"
    )

    p = commands.add("update", cmd_update, help="continue a retail space with new orders")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("new_log", nargs="+", metavar="NEW_LOG")
    p.add_argument("-o", "--output", required=True, metavar="NEW_MODEL", help="folder of the new space")
    p.add_argument("--epochs", type=positive_int, default=None, help="default: the model's")
    p.add_argument("--lr-scale", type=float, default=0.5, help="update learning rate / original")
    p.add_argument("--overwrite", action="store_true", help="replace an existing space at NEW_MODEL")
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
