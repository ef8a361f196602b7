"""Retail: an order log -> product and customer vectors, "also bought", basket completion, lookalikes.

The flow::

    order log (CSV / Parquet / JSONL: order, customer, product[, time, quantity])
      -> read_order_log            one validated, dictionary-encoded table in memory
      -> log_sequences             one sequence per order, or per customer session (--sessions 30m)
      -> likewise.train            product vectors (basket or sequence mode)
      -> build_customer_vectors    a weighted mean of each customer's products: a second table
      -> queries                   also_bought, complete_basket, for_customer, similar_customers, lookalike

Customer vectors are means of unit product vectors, so they live in the product space: a customer can
be compared with a product (``for_customer``) and with other customers (``similar_customers``,
``lookalike``). The customer table carries the product space's fingerprint and each customer's bought
products (``indptr`` + product ids), and is saved in the same folder as the product vectors.

The log is read whole into Arrow memory (about 40 bytes a line: 25 M lines take ~1 GB); the streaming
reader of :mod:`likewise.readers` is the path for logs larger than memory when no customer table is
needed.
"""

from __future__ import annotations

from ..customers import CustomerTable
from .evidence import holdout_hit_rates, lookalike_precision, split_last_order
from .fit import build_customer_vectors, fit_order_log, train_from_log
from .log import OrderLog, log_codes, log_sequences, parse_duration, read_order_log
from .queries import (
    affinity_top_k,
    also_bought,
    complete_basket,
    for_customer,
    lookalike,
    similar_customers,
    write_audience,
)

__all__ = [
    "CustomerTable",
    "OrderLog",
    "affinity_top_k",
    "also_bought",
    "build_customer_vectors",
    "complete_basket",
    "fit_order_log",
    "for_customer",
    "holdout_hit_rates",
    "lookalike",
    "lookalike_precision",
    "log_codes",
    "log_sequences",
    "parse_duration",
    "read_order_log",
    "similar_customers",
    "split_last_order",
    "train_from_log",
    "write_audience",
]
