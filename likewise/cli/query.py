"""Queries of a saved space: ``similar``, ``recommend``, ``analogy`` and ``info``.

They answer from the saved files alone (memory-mapped), so none of them loads numba or pyarrow.
"""

from __future__ import annotations

import argparse
from typing import Any

from likewise._threads import query_threads
from likewise.data.vocab import parse_items

from ._common import (
    Commands,
    answers_payload,
    emit,
    fields_table,
    k_option,
    load_space,
    neighbour_table,
    positive_int,
    skip_unknown_option,
    titled,
    type_option,
    types_of,
)


def cmd_similar(args: argparse.Namespace) -> None:
    """Print the nearest items to each of ``args.items``."""
    emb = load_space(args.model)
    items = parse_items(args.items)
    with query_threads(len(items)):  # the BLAS policy, applied here at the edge (likewise._threads)
        res = emb.similar(
            items, k=args.k, restrict=args.restrict, types=types_of(args), evidence=not args.plain_cosine
        )
    # A list, not a dict: repeated queries stay, and "#0" (an id) never collides with an item named "0".
    payload = answers_payload(zip(args.items, res.rows(), strict=True))
    weighed = emb.evidence_shrink is not None and not args.plain_cosine
    # a weighed score is a cosine shrunk by its evidence: the table says so and shows the evidence
    score, count = ("score", "baskets") if weighed else ("cosine", None)
    text = "\n\n".join(
        f"similar to {titled(emb, q, item)}:\n" + neighbour_table(row, score=score, count=count)
        for q, item, row in zip(args.items, items, res.rows(), strict=True)
    )
    emit(args, payload, text)


def cmd_recommend(args: argparse.Namespace) -> None:
    """Print the items to add to the basket ``args.items``."""
    emb = load_space(args.model)
    res = emb.recommend(
        parse_items(args.items),
        k=args.k,
        restrict=args.restrict,
        on_unknown=args.on_unknown,
        scoring=args.scoring,
        types=types_of(args),
    )
    emit(
        args,
        answers_payload([(list(args.items), res)]),
        f"to add to {', '.join(args.items)}:\n" + neighbour_table(res),
    )


def cmd_analogy(args: argparse.Namespace) -> None:
    """Print the answers to "A is to B as C is to ?"."""
    emb = load_space(args.model)
    a, b, c = parse_items([args.a, args.b, args.c])
    res = emb.analogy(a, b, c, k=args.k, method=args.method, restrict=args.restrict)
    head = f"{args.a} is to {args.b} as {args.c} is to ... ({args.method})\n"
    emit(
        args,
        answers_payload([([args.a, args.b, args.c], res)], method=args.method),
        head + neighbour_table(res),
    )


def cmd_info(args: argparse.Namespace) -> None:
    """Print the size, dimensions, index and training config of a saved space."""
    import numpy as np

    from .nn import table_size  # the same arithmetic as `likewise size`

    emb = load_space(args.model)
    cfg = emb.config.to_dict() if emb.config is not None else {}  # as asked; resolved in the report
    # hidden types (attribute tokens) are rows of the table but not items a query answers with
    shown = np.flatnonzero(emb.types.mask()) if emb.types is not None else np.arange(len(emb))
    info = {
        "model": args.model,
        "items": len(shown),
        **({"rows": len(emb)} if len(shown) != len(emb) else {}),
        "dim": emb.dim,
        "dtype": str(emb.vectors.dtype),
        "weights": table_size(len(emb), emb.dim)["weights"],
        "table_bytes": int(emb.vectors.nbytes),
        "bytes_float32": table_size(len(emb), emb.dim, "float32")["bytes"],
        "bytes_bf16": table_size(len(emb), emb.dim, "bf16")["bytes"],
        "fingerprint": emb.fingerprint,
        "context_table": emb.context is not None,
        "customers": len(emb.customers) if emb.customers is not None else 0,
        "types": emb.types.counts() if emb.types is not None else None,
        "index": (
            f"{emb.index.library}, recall@10 {emb.index.info.get('recall_at_10', float('nan')):.4f}"
            if emb.index is not None
            else "none (exact search)"
        ),
        "config": cfg,
        "resolved": emb.report.resolved if emb.config is not None else {},  # the config's "auto" as trained
        "most_frequent": [emb.keys[i] for i in shown[:5].tolist()],
    }
    rows: list[tuple[str, Any]] = [
        (k, ", ".join(f"{t} {n:,}" for t, n in v.items()) if k == "types" else v)
        for k, v in info.items()
        if k not in ("config", "resolved", "most_frequent") and not (k == "types" and v is None)
    ]
    rows.append(("most_frequent", ", ".join(map(str, info["most_frequent"]))))
    rows += [(f"config.{k}", v) for k, v in cfg.items()]
    rows += [(f"resolved.{k}", v) for k, v in info["resolved"].items()]
    emit(args, info, fields_table(rows))


def register(commands: Commands) -> None:
    """Add ``similar``, ``recommend``, ``analogy`` and ``info``."""
    from likewise._check import default_of
    from likewise.space.affinity import SCORINGS
    from likewise.space.embeddings import Embeddings

    s = commands.add("similar", cmd_similar, help="nearest items to each ITEM")
    s.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    s.add_argument("items", nargs="+", metavar="ITEM", help="an item key (or display name), or #N for row N")
    k_option(s, Embeddings.similar)
    s.add_argument("--restrict", type=positive_int, default=None, help="search only the N most frequent")
    s.add_argument(
        "--plain-cosine",
        action="store_true",
        help="rank by plain cosine; by default a space trained on baskets shrinks each cosine by its "
        "evidence, count / (count + shrink), with the shrink chosen at training",
    )
    type_option(s)

    c = commands.add(
        "recommend",
        cmd_recommend,
        help="items to add to a basket of ITEMs, any space (`complete` gives the same answer, of products)",
    )
    c.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    c.add_argument(
        "items", nargs="+", metavar="ITEM", help="the basket: item keys (or display names), #N for row N"
    )
    k_option(c, Embeddings.recommend)
    c.add_argument(
        "--restrict", type=positive_int, default=None, help="recommend only among the N most frequent"
    )
    skip_unknown_option(c, "ignore basket items not in the model")
    c.add_argument(
        "--scoring",
        default=default_of(Embeddings.recommend, "scoring"),
        choices=SCORINGS,
        help="how completions are scored: auto (the space's own choice), itemitem, affinity, mixture, "
        "product, cosine (default: %(default)s)",
    )
    type_option(c)

    a = commands.add("analogy", cmd_analogy, help="A is to B as C is to ?")
    a.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    a.add_argument("a", metavar="A", help='A of "A is to B as C is to ?"')
    a.add_argument("b", metavar="B", help="B, what A becomes")
    a.add_argument("c", metavar="C", help="C, what to find the like of")
    k_option(a, Embeddings.analogy)
    a.add_argument("--method", default="add", choices=["add", "mul"], help="3CosAdd or 3CosMul")
    a.add_argument(
        "--restrict", type=positive_int, default=None, help="answer only among the N most frequent"
    )

    i = commands.add("info", cmd_info, help="size, dimensions and training config of a model")
    i.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
