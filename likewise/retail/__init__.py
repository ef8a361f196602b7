"""Retail: an order log -> product and customer vectors, "also bought", basket completion, lookalikes.

The flow::

    order log (CSV / Parquet / JSONL: order, customer, product[, time, quantity, type])
      -> likewise.readers          the one log reader: checked, grouped into orders or customer
                                   sessions (--sessions 30m), typed, attribute tokens added, streamed
      -> likewise.data.corpus           compiled once into the corpus cache, customers and times beside
      -> likewise.train            product vectors (basket or sequence mode), checkpoints, resume
      -> customer_table            a weighted mean of each customer's products, one bounded pass
      -> queries                   also_bought, complete_basket, for_customer, similar_customers, lookalike

Customer vectors are means of unit product vectors, so they live in the product space: a customer can
be compared with a product (``for_customer``) and with other customers (``similar_customers``,
``lookalike``). The customer table carries the product space's fingerprint and each customer's bought
products (``indptr`` + product ids), and is saved in the same folder as the product vectors.

:func:`train_from_log` is that path; memory stays bounded by the reader's partitions and the customer
step's ranges (docs/speed.md section 7). :func:`read_order_log` reads a log through the same reader and
checks into memory, for analyses such as :func:`split_last_order` (:mod:`likewise.retail.evidence`).
"""

from __future__ import annotations

from .._lazy import lazy_names
from ..nextbasket.fit import fit_next_basket
from ..nextbasket.query import next_basket
from ..space.customers import CustomerTable
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
    "next_basket",
    "fit_next_basket",
    "log_codes",
    "log_sequences",
    "parse_duration",
    "read_order_log",
    "similar_customers",
    "split_last_order",
    "train_from_log",
    "write_audience",
]


__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
