"""Commands of a typed space: campaigns, content and cold start.

``campaigns MODEL CUSTOMER...`` (one customer, or an audience), ``campaign-products MODEL CAMPAIGN``,
``campaign-audience MODEL CAMPAIGN [-o audience.csv]``, ``read-next MODEL ARTICLE... | --reader R`` and
``place MODEL --attrs k=v ... | --attrs-file FILE [-o NEW_MODEL]``. The logic lives in
:mod:`likewise.apps.campaigns`, :mod:`likewise.apps.content` and :mod:`likewise.apps.coldstart`.
"""

from __future__ import annotations

import argparse
from typing import Any

from likewise.data.vocab import parse_items

from ._common import (
    Commands,
    answers_payload,
    emit,
    k_option,
    load_space,
    neighbour_table,
    skip_unknown_option,
)


def _show(args: argparse.Namespace, query: Any, res: Any, title: str, what: str, **extra: Any) -> None:
    payload = answers_payload([(query, res)], **extra)
    emit(args, payload, f"{title}:\n" + neighbour_table(res, what))


def cmd_campaigns(args: argparse.Namespace) -> None:
    """Print the campaigns that fit one customer, or an audience of several."""
    from likewise.apps.campaigns import campaigns_for_audience, campaigns_for_customer
    from likewise.errors import InputError

    from .retail import read_seeds

    customers = list(args.customers)
    if args.customers_file:
        customers += read_seeds(args.customers_file, None, option="--customers-file", col_option=None)
    if not customers:
        raise InputError("no customer: give one (or an audience) as arguments or with --customers-file")
    emb = load_space(args.model)
    kind = args.campaign_type
    if len(customers) == 1:
        res = campaigns_for_customer(
            emb, customers[0], k=args.k, campaign_type=kind, exclude_opened=args.exclude_opened
        )
        return _show(args, customers[0], res, f"campaigns for {customers[0]}", "campaign")
    res = campaigns_for_audience(emb, customers, k=args.k, campaign_type=kind)
    _show(args, customers, res, f"campaigns for an audience of {len(set(customers))} customers", "campaign")


def cmd_campaign_products(args: argparse.Namespace) -> None:
    """Print the products bought with a campaign."""
    from likewise.apps.campaigns import campaign_products

    res = campaign_products(
        load_space(args.model),
        parse_items([args.campaign])[0],
        k=args.k,
        product_type=args.product_type,
        campaign_type=args.campaign_type,
    )
    _show(args, args.campaign, res, f"products with {args.campaign}", "product")


def cmd_campaign_audience(args: argparse.Namespace) -> None:
    """Print (or export with ``-o``) the customers who look like a campaign's responders."""
    from likewise._targets import check_output_file
    from likewise.apps.campaigns import campaign_audience, campaign_responders
    from likewise.retail import write_audience

    if args.output:
        check_output_file(args.output, overwrite=args.overwrite)
    emb = load_space(args.model)
    campaign = parse_items([args.campaign])[0]
    res = campaign_audience(emb, campaign, k=args.k, method=args.method, campaign_type=args.campaign_type)
    n_resp = len(campaign_responders(emb, campaign, campaign_type=args.campaign_type))
    title = f"lookalike audience of the {n_resp} responders to {args.campaign} ({args.method})"
    if args.output:
        n = write_audience(res, args.output, min_score=args.min_score, overwrite=args.overwrite)
        payload = {"audience": args.output, "customers": n, "responders": n_resp, "method": args.method}
        emit(args, payload, f"{title}: wrote {n} customers to {args.output}")
        return
    _show(
        args,
        args.campaign,
        res.at_least(args.min_score),
        title,
        "customer",
        method=args.method,
        responders=n_resp,
    )


def cmd_read_next(args: argparse.Namespace) -> None:
    """Print the articles to read next after ARTICLE(s), or for ``--reader``."""
    from likewise.apps.content import read_next, read_next_for
    from likewise.errors import InputError

    emb = load_space(args.model)
    if args.reader is not None:
        if args.articles:
            raise InputError("give the articles just read, or --reader, not both")
        res = read_next_for(
            emb, args.reader, k=args.k, article_type=args.article_type, include_read=args.include_read
        )
        return _show(args, args.reader, res, f"to read next for {args.reader}", "article")
    if not args.articles:
        raise InputError("give the article(s) just read, most recent last, or --reader READER")
    on_unknown = args.on_unknown
    res = read_next(
        emb, parse_items(args.articles), k=args.k, article_type=args.article_type, on_unknown=on_unknown
    )
    _show(args, list(args.articles), res, f"to read after {', '.join(args.articles)}", "article")


def _attrs(pairs: list[str]) -> dict[str, str]:
    from likewise.errors import InputError

    out: dict[str, str] = {}
    for p in pairs:
        name, sep, value = p.partition("=")
        if not sep or not name.strip():
            raise InputError(f"--attrs entry {p!r} must read NAME=VALUE, e.g. category=outdoor")
        out[name.strip()] = value.strip()
    return out


def cmd_place(args: argparse.Namespace) -> None:
    """Place new products from their attributes; with ``-o``, save a new version that holds them."""
    from likewise.apps.coldstart import add_placed, place, place_table
    from likewise.errors import InputError
    from likewise.space.store import check_target

    if bool(args.attrs) == bool(args.attrs_file):
        raise InputError("give one product's --attrs NAME=VALUE ..., or a table of them with --attrs-file")
    if args.output:
        check_target(args.output, overwrite=args.overwrite)  # fail before the work
    emb = load_space(args.model)
    if args.attrs:
        if args.output and not args.key:
            raise InputError("-o adds the product to a new version of the space: name it with --key")
        placed = [place(emb, _attrs(args.attrs), k=args.k, key=args.key, item_type=args.item_type)]
    else:
        placed = place_table(emb, args.attrs_file, k=args.k, item_col=args.item_col, item_type=args.item_type)
    saved = add_placed(args.model, placed, args.output, overwrite=args.overwrite) if args.output else None
    results = [p.to_dict() for p in placed]
    for r in results:
        del r["vector"]
    payload: dict[str, Any] = {"placed": results}
    lines = []
    for p in placed:
        name = p.key or "the new product"
        extra = f" (no vector for {', '.join(p.unknown)})" if p.unknown else ""
        lines.append(f"{name}: placed from {len(p.tokens)} attribute tokens{extra}; nearest:")
        lines.append(neighbour_table(p.similar, p.item_type or "item", "cosine"))
    if saved is not None:
        payload |= {"model": args.output, "parent": args.model, "fingerprint": saved.fingerprint}
        lines.append(f"wrote {args.output}: {len(saved):,} items, {len(placed)} placed (parent {args.model})")
    emit(args, payload, "\n".join(lines))


def register(commands: Commands) -> None:
    """Add ``campaigns``, ``campaign-products``, ``campaign-audience``, ``read-next`` and ``place``."""
    from likewise.apps import campaigns, coldstart, content

    p = commands.add("campaigns", cmd_campaigns, help="campaigns that fit a customer, or an audience")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("customers", nargs="*", metavar="CUSTOMER", help="one customer, or an audience")
    p.add_argument(
        "--customers-file", default=None, help="the audience: one customer id a line, a CSV or Parquet"
    )
    k_option(p, campaigns.campaigns_for_customer)
    p.add_argument("--exclude-opened", action="store_true", help="one customer: leave out campaigns opened")
    p.add_argument("--campaign-type", default="campaign", help="the type campaigns have (campaign)")

    p = commands.add("campaign-products", cmd_campaign_products, help="products bought with a campaign")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("campaign", metavar="CAMPAIGN", help="a campaign key")
    k_option(p, campaigns.campaign_products)
    p.add_argument("--product-type", default="product", help="the type products have (product)")
    p.add_argument("--campaign-type", default="campaign", help="the type campaigns have (campaign)")

    p = commands.add(
        "campaign-audience", cmd_campaign_audience, help="customers who look like a campaign's responders"
    )
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("campaign", metavar="CAMPAIGN", help="a campaign key")
    k_option(p, campaigns.campaign_audience, "audience size")
    p.add_argument(
        "--method",
        default="centroid",
        choices=["centroid", "knn"],
        help="centroid: nearest the responders' mean; knn: votes of each responder's nearest customers",
    )
    p.add_argument("-o", "--output", default=None, metavar="CSV", help="export the audience to CSV")
    p.add_argument("--overwrite", action="store_true", help="replace an existing file at CSV")
    p.add_argument("--min-score", type=float, default=None, help="cut the audience here")
    p.add_argument("--campaign-type", default="campaign", help="the type campaigns have (campaign)")

    p = commands.add("read-next", cmd_read_next, help="articles to read next, after articles or for a reader")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument(
        "articles", nargs="*", metavar="ARTICLE", help="the article(s) just read, most recent last"
    )
    p.add_argument("--reader", default=None, help="a reader (customer) of the space instead")
    k_option(p, content.read_next)
    p.add_argument("--article-type", default=None, help="typed space: the articles' type (article)")
    p.add_argument("--include-read", action="store_true", help="--reader: keep articles already read")
    skip_unknown_option(p, "ignore articles not in the model")

    p = commands.add("place", cmd_place, help="place new products from their attributes (cold start)")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("--attrs", nargs="+", default=None, metavar="NAME=VALUE", help="one product's attributes")
    p.add_argument("--attrs-file", default=None, metavar="FILE", help="a CSV/Parquet table of new products")
    p.add_argument("--item-col", default=None, help="--attrs-file: the product column (default: the first)")
    p.add_argument("--key", default=None, help="--attrs: the new product's key (needed with -o)")
    p.add_argument("--type", dest="item_type", default=None, help="typed space: its type (product)")
    k_option(p, coldstart.place)
    p.add_argument("-o", "--output", default=None, metavar="NEW_MODEL", help="save a version that holds them")
    p.add_argument("--overwrite", action="store_true", help="replace an existing space at NEW_MODEL")
