"""The ``likewise`` command: arguments -> one library call -> printed output. No logic of its own.

Each subcommand imports only what it needs, so ``likewise info`` never loads numba.
Bad input exits with status 1 and one line on stderr (``--debug`` shows the traceback); usage errors
exit with status 2, as argparse does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from likewise.errors import LikewiseError

__all__ = ["main"]


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Rows as an aligned text table (numbers right-aligned)."""
    cells = [[_fmt(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    right = [bool(rows) and isinstance(rows[0][i], int | float) for i in range(len(headers))]

    def line(vals: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(vals, widths, right, strict=True))

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells]
    return "\n".join(s.rstrip() for s in out)


def _fmt(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10_000:
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}" if abs(v) < 0.01 and v else f"{v:.4f}"
    return str(v)


def _emit(args: argparse.Namespace, payload: Any, text: str) -> None:
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        print(text)


def _items(raw: Sequence[str]) -> list[str | int]:
    """Command-line items are keys; ``#12`` names the item with id 12."""
    out: list[str | int] = []
    for r in raw:
        if r.startswith("#") and r[1:].lstrip("-").isdigit():
            out.append(int(r[1:]))
        else:
            out.append(r)
    return out


def _load(path: str):
    from likewise.embeddings import Embeddings

    return Embeddings.load(path, mmap=True)


def _neighbour_rows(pairs: Iterable[tuple[str, float]]) -> list[list[Any]]:
    """(key, score) pairs as numbered table rows."""
    return [[i + 1, k, float(s)] for i, (k, s) in enumerate(pairs)]


def _epochs(text: str) -> int | str:
    """``--epochs``: a positive int or ``auto``."""
    return "auto" if text == "auto" else _positive_int(text)


def _show_defaults(parser: argparse.ArgumentParser) -> None:
    """Append '(default: X)' to every option's help, so ``--help`` shows each default a run uses."""
    for action in parser._actions:
        if not action.option_strings or action.default is None or action.default is False:
            continue
        if action.default == argparse.SUPPRESS:
            continue
        if "%(default)" not in (action.help or ""):
            action.help = ((action.help or "").rstrip() + " (default: %(default)s)").lstrip()


# --- subcommands -------------------------------------------------------------------------------------


def cmd_train(args: argparse.Namespace) -> None:
    from likewise.store import check_target
    from likewise.train import TrainConfig, train

    check_target(args.output, overwrite=args.overwrite)  # fail before training, not after

    if args.user_col or args.time_col or args.sessions or args.quantity_col:
        return _train_retail(args)
    spec = _input_spec(args)
    config = TrainConfig(
        mode=args.mode,
        dim=args.dim,
        window=args.window,
        negative=args.negative,
        ns_exponent=args.ns_exponent,
        sample=args.sample,
        min_count=args.min_count,
        max_items=args.max_items,
        epochs=args.epochs,
        lr=args.lr,
        min_lr=args.min_lr,
        max_context=args.max_context,
        neg_group=args.neg_group,
        threads=args.threads,
        seed=args.seed,
        deterministic=args.deterministic,
        backend=args.backend,
    )
    emb = train(spec, config, progress=False if args.quiet else None, cache_dir=args.cache_dir)
    emb.save(args.output, overwrite=args.overwrite)
    hist = emb.meta["history"]
    secs = sum(h["seconds"] for h in hist)
    items = sum(h["items"] for h in hist)
    pairs = sum(h["pairs"] for h in hist)
    summary = {
        "model": args.output,
        "items": len(emb),
        "dim": emb.dim,
        "tokens": emb.meta["corpus"]["n_tokens"],
        "sequences": emb.meta["corpus"]["n_sequences"],
        "epochs": emb.config["epochs"],
        "seconds": secs,
        "items_per_s": items / secs if secs else None,
        "pairs_per_s": pairs / secs if secs else None,
        "final_loss": hist[-1]["loss"],
        "fingerprint": emb.fingerprint,
    }
    _emit_train_summary(args, emb, summary)


def _emit_train_summary(args: argparse.Namespace, emb: Any, summary: dict[str, Any]) -> None:
    """The summary table, then what the user did not choose: mode, subsampling, dropped keys."""
    from likewise.vocab import Dropped

    meta, cfg = emb.meta, emb.config
    dropped = Dropped.from_dict(meta["dropped"]) if meta.get("dropped") else None
    summary = summary | {
        "mode": cfg.get("mode"),
        "mode_reason": meta.get("mode_reason"),
        "sample": cfg.get("sample"),
        "sample_reason": meta.get("sample_reason"),
        "tokens_kept": meta.get("kept_share"),
        "epochs_reason": meta.get("epochs_reason"),
        "dropped": dropped.to_dict() if dropped is not None else None,
    }
    if args.quiet and not args.json:
        return
    rows = [[k, v if v is not None else "-"] for k, v in summary.items() if k not in _NOTES]
    notes = [
        f"mode: {summary['mode']}: {summary['mode_reason']}",
        f"subsampling: sample={summary['sample']:.3g}: {summary['sample_reason']}; "
        f"{summary['tokens_kept']:.1%} of tokens kept",
        f"epochs: {summary['epochs']}: {summary['epochs_reason']}",
        dropped.summary(emb.vocab.what) if dropped is not None else "dropped: not recorded",
    ]
    _emit(args, summary, _table(["", "value"], rows) + "\n" + "\n".join(notes))


_NOTES = ("mode", "mode_reason", "sample", "sample_reason", "tokens_kept", "epochs_reason", "dropped")


def _train_retail(args: argparse.Namespace) -> None:
    """``train`` with --user-col / --time-col / --sessions: an order log -> products and customers."""
    from likewise.retail import train_from_log
    from likewise.train import TrainConfig

    if not (args.basket_col and args.item_col):
        raise LikewiseError("an order log needs --basket-col and --item-col (e.g. order_id and product_id)")
    if args.quantity_col and not args.user_col:
        raise LikewiseError(
            f"--quantity-col {args.quantity_col} needs --user-col: quantities are checked (numbers >= 0) "
            "for an order log with customers; they do not weigh product training, which counts each "
            "product once per basket"
        )
    fields = "mode dim window negative ns_exponent sample min_count max_items epochs lr min_lr max_context"
    fields += " neg_group threads seed deterministic backend"
    config = TrainConfig(**{f: getattr(args, f) for f in fields.split()})
    emb = train_from_log(
        args.input,
        config,
        basket_col=args.basket_col,
        item_col=args.item_col,
        user_col=args.user_col,
        time_col=args.time_col or args.order_col,
        quantity_col=args.quantity_col,
        sessions=args.sessions,
        half_life_days=args.half_life_days,
        popularity_power=args.popularity_power,
        format=args.format,
        delimiter=args.delimiter,
        progress=False if args.quiet else None,
    )
    emb.save(args.output, overwrite=args.overwrite)
    hist = emb.meta["history"]
    summary = {
        "model": args.output,
        "products": len(emb),
        "customers": len(emb.customers) if emb.customers is not None else 0,
        "dim": emb.dim,
        "lines": emb.meta["retail"]["lines"],
        "sequences": emb.meta["corpus"]["n_sequences"],
        "epochs": emb.config["epochs"],
        "seconds": emb.meta["read_seconds"] + emb.meta["train_seconds"],
        "final_loss": hist[-1]["loss"],
        "fingerprint": emb.fingerprint,
    }
    _emit_train_summary(args, emb, summary)


def cmd_similar(args: argparse.Namespace) -> None:
    emb = _load(args.model)
    items = _items(args.items)
    res = emb.similar(items, k=args.k, restrict=args.restrict)
    # A list, not a dict: repeated queries stay, and "#0" (an id) never collides with an item named "0".
    payload = [
        {"query": raw, "neighbours": [{"item": k, "score": float(s)} for k, s in zip(keys, sc, strict=True)]}
        for raw, keys, sc in zip(args.items, res.keys, res.scores, strict=True)
    ]
    text = "\n\n".join(
        f"similar to {q!s}:\n" + _table(["#", "item", "cosine"], _neighbour_rows(zip(keys, sc, strict=True)))
        for q, keys, sc in zip(items, res.keys, res.scores, strict=True)
    )
    _emit(args, payload, text)


def cmd_recommend(args: argparse.Namespace) -> None:
    emb = _load(args.model)
    res = emb.recommend(
        _items(args.items),
        k=args.k,
        restrict=args.restrict,
        on_unknown="skip" if args.skip_unknown else "raise",
    )
    payload = [{"item": k, "score": float(s)} for k, s in res]
    _emit(args, payload, _table(["#", "item", "score"], _neighbour_rows(res)))


def cmd_analogy(args: argparse.Namespace) -> None:
    emb = _load(args.model)
    a, b, c = _items([args.a, args.b, args.c])
    res = emb.analogy(a, b, c, k=args.k, method=args.method, restrict=args.restrict)
    payload = [{"item": k, "score": float(s)} for k, s in res]
    head = f"{args.a} is to {args.b} as {args.c} is to ... ({args.method})\n"
    _emit(args, payload, head + _table(["#", "item", "score"], _neighbour_rows(res)))


def cmd_info(args: argparse.Namespace) -> None:
    from .nn import table_size  # the same arithmetic as `likewise size`

    emb = _load(args.model)
    cfg = emb.config or {}
    info = {
        "model": args.model,
        "items": len(emb),
        "dim": emb.dim,
        "dtype": str(emb.vectors.dtype),
        "weights": table_size(len(emb), emb.dim)["weights"],
        "table_bytes": int(emb.vectors.nbytes),
        "bytes_float32": table_size(len(emb), emb.dim, "float32")["bytes"],
        "bytes_bf16": table_size(len(emb), emb.dim, "bf16")["bytes"],
        "fingerprint": emb.fingerprint,
        "context_table": emb.context is not None,
        "customers": len(emb.customers) if emb.customers is not None else 0,
        "index": (
            f"{emb.index.library}, recall@10 {emb.index.info.get('recall_at_10', float('nan')):.4f}"
            if emb.index is not None
            else "none (exact search)"
        ),
        "config": cfg,
        "most_frequent": emb.keys[:5],
    }
    rows: list[list[Any]] = [[k, v] for k, v in info.items() if k not in ("config", "most_frequent")]
    rows.append(["most_frequent", ", ".join(map(str, info["most_frequent"]))])
    rows += [[f"config.{k}", v] for k, v in cfg.items()]
    _emit(args, info, _table(["", "value"], rows))


def cmd_demo(args: argparse.Namespace) -> None:
    from likewise.demo import run_demo

    res = run_demo(args.output, seed=args.seed, progress=False if args.quiet else None)
    payload = {
        "model": str(res.model_path),
        "map": str(res.map_path) if res.map_path else None,
        "neighbours": {q: [{"item": k, "score": s} for k, s in n] for q, n in res.neighbours.items()},
    }
    parts = [f"trained 8-d vectors for 15 products from 400 baskets -> {res.model_path}"]
    for q, n in res.neighbours.items():
        parts.append(f"\nnearest to {q}:\n" + _table(["#", "item", "cosine"], _neighbour_rows(n)))
    parts.append(f"\nmap: {res.map_path}" if res.map_path else f"\n{res.note}")
    _emit(args, payload, "\n".join(parts))


# --- parser ------------------------------------------------------------------------------------------


def _add_input_options(g: Any) -> None:
    """The reader options (format, delimiter, log columns) of every command that reads INPUT files."""
    g.add_argument("--format", default="auto", choices=["auto", "text", "csv", "parquet", "jsonl"])
    g.add_argument("--delimiter", default=None, help="item separator in text; field separator in CSV")
    g.add_argument("--basket-col", default=None, help="log column naming the basket / order / session")
    g.add_argument("--item-col", default=None, help="log column naming the item")
    g.add_argument("--order-col", default=None, help="log column ordering items inside a basket")


def _input_spec(args: argparse.Namespace):
    """The :class:`~likewise.readers.InputSpec` of ``args.input`` and the options above."""
    from likewise.readers import InputSpec

    return InputSpec(
        paths=tuple(args.input),
        format=args.format,
        delimiter=args.delimiter,
        basket_col=args.basket_col,
        item_col=args.item_col,
        order_col=args.order_col,
    )


def _positive_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} must be >= 1")
    return v


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``likewise`` command."""
    from likewise._version import __version__

    p = argparse.ArgumentParser(prog="likewise", description="Learn item vectors from what goes together.")
    p.add_argument("--version", action="version", version=f"likewise {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON instead of a table")
    common.add_argument("--debug", action="store_true", help="show the traceback on errors")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = sub.add_parser(
        "train",
        parents=[common],
        help="train vectors from text or a transaction log",
        description="Train item vectors with skip-gram and negative sampling.",
    )
    t.add_argument("input", nargs="+", metavar="INPUT", help="text file(s), folder, or CSV/Parquet/JSONL log")
    t.add_argument("-o", "--output", required=True, metavar="MODEL", help="folder to save the space in")
    t.add_argument("--overwrite", action="store_true", help="replace an existing saved space")
    g = t.add_argument_group("input")
    _add_input_options(g)
    o = t.add_argument_group("order log: products and customers (likewise.retail)")
    o.add_argument("--user-col", default=None, help="customer column: also build customer vectors")
    o.add_argument("--time-col", default=None, help="order time column (ISO 8601, timestamp or seconds)")
    o.add_argument("--quantity-col", default=None, help="quantity column (checked to be >= 0)")
    o.add_argument(
        "--sessions",
        default=None,
        metavar="GAP",
        help="train on each customer's sessions (a new one after GAP, e.g. 30m) in time order",
    )
    o.add_argument("--half-life-days", type=float, default=None, help="customer vectors: recency decay")
    o.add_argument(
        "--popularity-power",
        type=float,
        default=0.0,
        help="customer vectors: weigh each product by count ** -P (0 = off)",
    )
    g.add_argument(
        "--min-count", type=_positive_int, default=5, help="drop items seen fewer times (reported)"
    )
    g.add_argument(
        "--max-items", type=_positive_int, default=None, help="keep the N most frequent (default: all)"
    )
    g.add_argument("--cache-dir", default=None, help="where compiled corpora are cached")
    m = t.add_argument_group("model")
    m.add_argument(
        "--mode",
        default="auto",
        choices=["auto", "sequence", "basket"],
        help="auto: basket for a log read by --basket-col with no ordering column or --sessions, "
        "else sequence",
    )
    m.add_argument("--dim", type=_positive_int, default=100)
    m.add_argument("--window", type=_positive_int, default=5)
    m.add_argument("--negative", type=int, default=5)
    m.add_argument("--ns-exponent", type=float, default=0.75)
    m.add_argument(
        "--sample",
        type=float,
        default=None,
        help="subsampling threshold (default: 0 in basket mode; in sequence mode 1e-3, raised to 1/V for "
        "V items and until half the tokens stay)",
    )
    m.add_argument("--max-context", type=_positive_int, default=50, help="basket mode: contexts per item")
    m.add_argument(
        "--neg-group",
        type=_positive_int,
        default=16,
        help="contexts sharing one set of negatives (1 = word2vec)",
    )
    m.add_argument(
        "--epochs",
        type=_epochs,
        default="auto",
        help="passes, or auto: planned from the data's size, stopped early on a held-out slice",
    )
    m.add_argument("--lr", type=float, default=0.025)
    m.add_argument("--min-lr", type=float, default=0.0001)
    r = t.add_argument_group("run")
    r.add_argument("--threads", type=_positive_int, default=None, help="default: all cores")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--deterministic", action="store_true", help="one thread, bit-identical runs")
    r.add_argument("--backend", default="auto", choices=["auto", "cpu", "torch"])
    r.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    _show_defaults(t)
    t.set_defaults(func=cmd_train)

    s = sub.add_parser("similar", parents=[common], help="nearest items to each ITEM")
    s.add_argument("model", metavar="MODEL")
    s.add_argument("items", nargs="+", metavar="ITEM", help="item key, or #ID for an id")
    s.add_argument("-k", type=_positive_int, default=10)
    s.add_argument("--restrict", type=_positive_int, default=None, help="search only the N most frequent")
    s.set_defaults(func=cmd_similar)

    c = sub.add_parser("recommend", parents=[common], help="items to add to a basket of ITEMs")
    c.add_argument("model", metavar="MODEL")
    c.add_argument("items", nargs="+", metavar="ITEM")
    c.add_argument("-k", type=_positive_int, default=10)
    c.add_argument("--restrict", type=_positive_int, default=None)
    c.add_argument("--skip-unknown", action="store_true", help="ignore basket items not in the model")
    c.set_defaults(func=cmd_recommend)

    a = sub.add_parser("analogy", parents=[common], help="A is to B as C is to ?")
    a.add_argument("model", metavar="MODEL")
    a.add_argument("a", metavar="A")
    a.add_argument("b", metavar="B")
    a.add_argument("c", metavar="C")
    a.add_argument("-k", type=_positive_int, default=5)
    a.add_argument("--method", default="add", choices=["add", "mul"], help="3CosAdd or 3CosMul")
    a.add_argument("--restrict", type=_positive_int, default=None)
    a.set_defaults(func=cmd_analogy)

    i = sub.add_parser("info", parents=[common], help="size, dimensions and training config of a model")
    i.add_argument("model", metavar="MODEL")
    i.set_defaults(func=cmd_info)

    d = sub.add_parser("demo", parents=[common], help="train the 15-product seed demo and draw its map")
    d.add_argument("-o", "--output", default="demo_out", help="output folder (default: demo_out)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--quiet", action="store_true")
    d.set_defaults(func=cmd_demo)

    # Further subcommands live one module per group in this package, each with ``register(sub, common)``;
    # they import their heavy dependencies inside the command functions.
    from . import datasets, evaluation, nn, retail, serve, tune
    from ._common import Commands

    commands = Commands(sub, common)
    for group in (datasets, evaluation, nn, retail, serve, tune):
        group.register(commands)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except BrokenPipeError:
        # The reader went away (`likewise info MODEL | head`): not an error worth a message.
        # Point stdout at devnull so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (LikewiseError, OSError) as e:
        if args.debug:
            raise
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"likewise: error: {msg}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("likewise: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
