"""``likewise train``: text or an order log -> a saved space, then a summary of what was chosen for you.

Options map one to one onto :class:`likewise.training.train.TrainConfig`; with ``--user-col``, ``--time-col``,
``--sessions`` or ``--quantity-col`` the input is an order log and :func:`likewise.retail.train_from_log`
builds customer vectors too.
"""

from __future__ import annotations

import argparse
from typing import Any

from likewise._progress import MODES, MODES_HELP, lines_to_stderr
from likewise.errors import LikewiseError

from ._common import Commands, add_cache_dir, emit, fields_table, input_group, positive_int

#: Fields of the option dataclasses (``Class.field``) that are no flag of ``likewise train``, and why;
#: every other field is the flag of its name (``--min-count`` is ``TrainConfig.min_count``).
NOT_FLAGS = {
    "ReadOptions.item_keys": "a matrix's column names: a matrix is given in Python only",
    "ReadOptions.user_keys": "a matrix's row names: a matrix is given in Python only",
    "ReadOptions.as_order_log": "train_from_log's switch: a log read with --user-col, --time-col, ... is one",
    "RunOptions.callback": "a Python function called after every epoch",
}
#: Fields whose flag has another name: ``--query`` reads the log by a query (``ReadOptions.sql``).
FLAG_DEST = {"ReadOptions.sql": "query"}


def options_of(cls: type, args: argparse.Namespace) -> dict[str, Any]:
    """The fields of the dataclass ``cls`` (:class:`TrainConfig`, :class:`ReadOptions`,
    :class:`RunOptions`, :class:`CustomerOptions`) from ``likewise train``'s flags, by name
    (:data:`NOT_FLAGS` are left to their defaults)."""
    import dataclasses

    out = {}
    for f in dataclasses.fields(cls):
        key = f"{cls.__name__}.{f.name}"
        if key not in NOT_FLAGS:
            out[f.name] = getattr(args, FLAG_DEST.get(key, f.name))
    return out


# Summary keys printed as sentences under the table rather than as rows.
_NOTES = (
    "mode",
    "mode_reason",
    "sample",
    "sample_reason",
    "tokens_kept",
    "epochs_reason",
    "basket_rule",
    "basket_rule_reason",
    "completion",
    "completion_reason",
    "similar",
    "similar_reason",
    "dropped",
    "orders_cut",
    "skipped_rows",
    "next_basket",
)


def cmd_train(args: argparse.Namespace) -> None:
    """Train a space from ``args.input`` and save it to ``args.output``."""
    from likewise.space.store import check_target
    from likewise.training.checkpoint import check_apart
    from likewise.training.train import TrainConfig

    check_target(args.output, overwrite=args.overwrite)  # fail before training, not after
    check_apart(args.checkpoint_dir, args.output)
    config = TrainConfig(**options_of(TrainConfig, args))
    with lines_to_stderr():  # the command is the application: its log lines go to stderr
        emb = _train(args, config)
    if emb is None:  # a rank other than 0 under torchrun: rank 0 saves the space and reports
        return None
    emb.save(args.output, overwrite=args.overwrite)
    _emit_train_summary(
        args, emb, _retail_summary(args, emb) if "retail" in emb.meta else _summary(args, emb)
    )


def _train(args: argparse.Namespace, config: Any) -> Any:
    """The space of ``likewise train``'s input, options and ``config``."""
    import dataclasses

    from likewise.readers import InputSpec, ReadOptions
    from likewise.retail.fit import CustomerOptions, train
    from likewise.training.run import RunOptions

    read = ReadOptions(**{**options_of(ReadOptions, args), "type_cols": _type_cols(args.type_cols)})
    if read.order_log:  # an order log's time orders its orders: --order-col names it too
        read = dataclasses.replace(read, time_col=args.time_col or args.order_col, order_col=None)
    run = dataclasses.replace(
        RunOptions(**options_of(RunOptions, args)), progress="none" if args.quiet else args.progress
    )
    # customer vectors' weights, with a customer column
    customers = CustomerOptions(**options_of(CustomerOptions, args)) if args.user_col else None
    return train(
        # with --query, INPUT names the one database (the resolver says so when more are given)
        args.input if args.query is not None else InputSpec(paths=tuple(args.input)),
        config,
        read=read,
        run=run,
        customers=customers,
        name_col=args.name_col,  # the display names' column of --item-attrs (checked after reading it)
        names=args.names,  # a table kept for display only
    )


def _summary(args: argparse.Namespace, emb: Any) -> dict[str, Any]:
    """The summary of a space trained on text or a log of baskets and items."""
    hist = emb.report.history
    secs = sum(h["seconds"] for h in hist)
    items = sum(h["items"] for h in hist)
    pairs = sum(h["pairs"] for h in hist)
    return {
        "model": args.output,
        "items": len(emb),
        "dim": emb.dim,
        "tokens": emb.report.corpus["n_tokens"],
        "sequences": emb.report.corpus["n_sequences"],
        "epochs": emb.report.epochs.value,
        "seconds": secs,
        "items_per_s": items / secs if secs else None,
        "pairs_per_s": pairs / secs if secs else None,
        "final_loss": hist[-1]["loss"],
        "fingerprint": emb.fingerprint,
    }


def _emit_train_summary(args: argparse.Namespace, emb: Any, summary: dict[str, Any]) -> None:
    """The summary table, then what the user did not choose: mode, subsampling, dropped keys."""
    from likewise.data.vocab import Dropped

    report = emb.report
    dropped = Dropped.from_dict(report.dropped) if report.dropped else None
    summary = summary | {
        "mode": report.mode.value,
        "mode_reason": report.mode.reason,
        "sample": report.sample.value,
        "sample_reason": report.sample.reason,
        "tokens_kept": report.kept_share,
        "epochs_reason": report.epochs.reason,
        "basket_rule": report.basket_rule.value,
        "basket_rule_reason": report.basket_rule.reason,
        "completion": report.completion.value,
        "completion_reason": report.completion.reason,
        "similar": report.similar.value,
        "similar_reason": report.similar.reason,
        "dropped": dropped.to_dict() if dropped is not None else None,
        "orders_cut": report.corpus.get("cut_sequences", 0),
        "skipped_rows": report.skipped_rows,
        # how the next-basket weights did on held-out baskets (JSON only: the text notes stay as they were)
        "next_basket": getattr(getattr(emb.customers, "next_basket", None), "validation", None),
    }
    if args.quiet and not args.json:
        return
    rows = [(k, v if v is not None else "-") for k, v in summary.items() if k not in _NOTES]
    notes = [
        f"mode: {summary['mode']}: {summary['mode_reason']}",
        f"subsampling: sample={summary['sample']:.3g}: {summary['sample_reason']}; "
        f"{summary['tokens_kept']:.1%} of tokens kept",
        f"epochs: {summary['epochs']}: {summary['epochs_reason']}",
        f"basket rule (affinity): {summary['basket_rule']}: {summary['basket_rule_reason'] or '-'}",
        f"completion (recommend, complete, also-bought): {summary['completion']}: "
        f"{summary['completion_reason'] or '-'}",
        f"similar (neighbours): {summary['similar_reason'] or '-'}",
        dropped.summary(emb.vocab.what) if dropped is not None else "dropped: not recorded",
        *_cut_note(report.corpus),
        *_skipped_note(report.skipped_rows),
    ]
    emit(args, summary, fields_table(rows) + "\n" + "\n".join(notes))


def _cut_note(corpus: dict[str, Any]) -> list[str]:
    """The line on orders cut at the longest sequence, when a log's were (a rare event, so no line when
    none was: the JSON summary's ``orders_cut`` is 0 then)."""
    cap, n = corpus.get("max_sequence_length"), corpus.get("cut_sequences", 0)
    if not cap or not n:
        return []
    orders = "order" if n == 1 else "orders"
    return [f"{n:,} {orders} longer than {cap:,} lines cut into consecutive orders of at most {cap:,}"]


def _skipped_note(skipped: dict[str, int]) -> list[str]:
    """The line on rows left out (``--on-bad-rows skip``), by cause; none when no row was."""
    if not skipped:
        return []
    n = sum(skipped.values())
    causes = ", ".join(f"{k} {v:,}" for k, v in skipped.items())
    return [f"skipped {n:,} bad {'row' if n == 1 else 'rows'} (--on-bad-rows skip): {causes}"]


def _retail_summary(args: argparse.Namespace, emb: Any) -> dict[str, Any]:
    """The summary of a space trained on an order log: products (or typed items) and customers."""
    report = emb.report
    hist = report.history
    types = emb.types.counts() if emb.types is not None else None
    return {
        "model": args.output,
        "products" if types is None else "items": len(emb),
        **({"types": ", ".join(f"{t} {n:,}" for t, n in types.items())} if types else {}),
        "customers": len(emb.customers) if emb.customers is not None else 0,
        "dim": emb.dim,
        "lines": emb.meta["retail"]["lines"],
        "sequences": report.corpus["n_sequences"],
        "epochs": emb.report.epochs.value,
        # reading, the passes, the completion fit, customers and their next-basket weights
        "seconds": report.timings.total,
        "final_loss": hist[-1]["loss"],
        "fingerprint": emb.fingerprint,
    }


def _type_cols(text: str | None) -> dict[str, str] | None:
    """``--type-cols product=product_id,campaign=campaign_id`` as ``{type: column}``."""
    if text is None:
        return None
    out: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        kind, sep, col = part.partition("=")
        if not sep or not kind.strip() or not col.strip():
            raise LikewiseError(f"--type-cols entry {part!r} must read TYPE=COLUMN, e.g. product=product_id")
        out[kind.strip()] = col.strip()
    if not out:
        raise LikewiseError("--type-cols is empty: give TYPE=COLUMN pairs, e.g. product=product_id")
    return out


# --- parser ------------------------------------------------------------------------------------------


def _epochs(text: str) -> int | str:
    """``--epochs``: a positive int or ``auto``."""
    return "auto" if text == "auto" else positive_int(text)


def _device(text: str) -> str:
    """``--device``: auto, cpu, cuda or cuda:N."""
    from likewise.training.config import check_device

    try:
        return check_device(text)
    except LikewiseError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _minutes(text: str) -> float:
    """``--checkpoint-every``: minutes > 0."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of minutes > 0")
    return value


def _show_defaults(parser: argparse.ArgumentParser) -> None:
    """Append '(default: X)' to every option's help, so ``--help`` shows each default a run uses."""
    for action in parser._actions:
        if not action.option_strings or action.default is None or action.default is False:
            continue
        if action.default == argparse.SUPPRESS:
            continue
        if "%(default)" not in (action.help or ""):
            action.help = ((action.help or "").rstrip() + " (default: %(default)s)").lstrip()


def config_option(group: argparse._ActionsContainer, name: str, **kwargs: Any) -> None:
    """``--name`` for the :class:`~likewise.TrainConfig` field ``name``: its default, and its choices when the
    field is a ``Literal``, come from the dataclass, where they are declared once (``--help`` shows them).

    Parameters
    ----------
    group : argparse parser or group
    name : str
        A field of ``TrainConfig``.
    **kwargs
        ``type``, ``help``, ``action``, ``metavar`` for argparse.
    """
    import dataclasses
    import typing

    from likewise.training.config import TrainConfig

    field = {f.name: f for f in dataclasses.fields(TrainConfig)}[name]
    hint = typing.get_type_hints(TrainConfig)[name]
    if typing.get_origin(hint) is typing.Literal:
        kwargs["choices"] = list(typing.get_args(hint))
    group.add_argument("--" + name.replace("_", "-"), default=field.default, **kwargs)


def _vocab_options(g: argparse._ActionsContainer) -> None:
    """Which items are kept, and where compiled corpora go (in the input group)."""
    config_option(
        g,
        "min_count",
        type=positive_int,
        help="drop items seen fewer times, reported (default: 5 for sequences and text, 1 for baskets)",
    )
    config_option(g, "max_items", type=positive_int, help="keep the N most frequent (default: all)")
    add_cache_dir(g)


def _order_log_options(o: argparse._ActionsContainer) -> None:
    """Order logs: customers, time, quantities, sessions."""
    from likewise.readers import BASKET_SCOPES

    o.add_argument("--user-col", default=None, help="customer column: also build customer vectors")
    o.add_argument("--time-col", default=None, help="order time column (ISO 8601, timestamp or seconds)")
    o.add_argument("--quantity-col", default=None, help="quantity column (checked to be >= 0)")
    o.add_argument(
        "--basket-scope",
        default="order",
        choices=BASKET_SCOPES,
        help="with --user-col, what a basket is: an order id (an order holding lines of two customers is "
        "refused, with examples) or each (customer, order) pair, for order ids that restart (default: order)",
    )
    o.add_argument(
        "--sessions",
        default=None,
        metavar="GAP",
        help="train on each customer's sessions (a new one after GAP, e.g. 30m) in time order",
    )
    o.add_argument(
        "--half-life-days",
        type=float,
        default=None,
        help="customer vectors: recency decay, a purchase's weight halving every N days "
        "(default: none, every purchase weighs the same)",
    )
    o.add_argument(
        "--popularity-power",
        type=float,
        default=0.0,
        help="customer vectors: weigh each product by count ** -P (0 = off)",
    )


def _typed_options(y: argparse._ActionsContainer) -> None:
    """Typed items and side information."""
    y.add_argument("--type-col", default=None, help="column giving each row's type (or event kind)")
    y.add_argument(
        "--type-map",
        default=None,
        metavar="VALUE=TYPE,...",
        help="rename --type-col values, e.g. view=product,purchase=product,campaign_open=campaign",
    )
    y.add_argument(
        "--type-cols",
        default=None,
        metavar="TYPE=COLUMN,...",
        help="one item column per type instead, e.g. product=product_id,campaign=campaign_id",
    )
    y.add_argument(
        "--item-attrs",
        default=None,
        metavar="FILE",
        help="item attributes (CSV/Parquet keyed by item) trained as side information",
    )
    y.add_argument(
        "--attrs-item-col",
        default=None,
        help="the item column of --item-attrs (default: one named like --item-col, else the first)",
    )
    y.add_argument(
        "--names",
        default=None,
        metavar="FILE",
        help="a table of the items (CSV/Parquet keyed by item, e.g. products.csv) kept for display only: "
        "its names shown beside every key in answers, its columns on the explorer's map; not trained on",
    )
    y.add_argument(
        "--name-col",
        default=None,
        metavar="COLUMN",
        help="the column of --item-attrs or --names holding display names, shown beside every key in "
        "answers and usable in queries (default: name, product_name, display_name, title or description)",
    )
    config_option(
        y, "typed_negatives", action="store_true", help="draw negatives from the type of the item predicted"
    )


def _bad_row_options(g: argparse._ActionsContainer) -> None:
    """What a log row without a key does, and which texts mean a missing value (InputSpec)."""
    from likewise.readers import ON_BAD_ROWS

    g.add_argument(
        "--on-bad-rows",
        choices=ON_BAD_ROWS,
        default=ON_BAD_ROWS[0],
        help="a log row with a null or empty key (basket, item, customer, time) or a null quantity: raise "
        "(stop, naming the file, column and row) or skip (leave it out; the summary counts them by "
        "cause) (default: %(default)s)",
    )
    g.add_argument(
        "--na-values",
        default=None,
        metavar="TEXT,...",
        help="texts that mean a missing value in a log, e.g. NA,NULL (default: only an empty field; a "
        "product keyed NA is a product)",
    )


def _model_options(m: argparse._ActionsContainer) -> None:
    """The model's hyper-parameters (TrainConfig)."""
    config_option(
        m,
        "mode",
        help="auto: basket for a log read by --basket-col with no ordering column or --sessions, "
        "else sequence",
    )
    config_option(m, "dim", type=positive_int)
    config_option(m, "window", type=positive_int)
    config_option(m, "negative", type=int)
    config_option(m, "ns_exponent", type=float)
    config_option(
        m,
        "sample",
        type=float,
        help="subsampling threshold (default: 0 in basket mode; in sequence mode 1e-3, raised to 1/V for "
        "V items and until half the tokens stay)",
    )
    config_option(m, "max_context", type=positive_int, help="basket mode: contexts per item")
    config_option(
        m,
        "neg_group",
        type=positive_int,
        help="contexts sharing one set of negatives (1 = word2vec; default 16, 4 in basket mode)",
    )
    config_option(
        m,
        "epochs",
        type=_epochs,
        help="passes, or auto: planned from the data's size, chosen by trials on a held-out slice",
    )
    config_option(m, "lr", type=float)
    config_option(m, "min_lr", type=float)


def _run_options(r: argparse._ActionsContainer) -> None:
    """How and where the run goes (TrainConfig)."""
    config_option(r, "threads", type=positive_int, help="default: all cores, one per 50,000 tokens")
    config_option(r, "seed", type=int)
    config_option(r, "deterministic", action="store_true", help="one thread, bit-identical runs")
    config_option(
        r,
        "backend",
        help="cpu: the numba kernel; torch: minibatch SGNS in PyTorch (GPU, or several processes under "
        "torchrun); auto: torch when installed and a CUDA GPU is present or WORLD_SIZE > 1, else cpu",
    )
    config_option(
        r,
        "device",
        type=_device,
        help="torch backend: auto (CUDA when present, the GPU of LOCAL_RANK under torchrun), cpu, "
        "cuda, cuda:N",
    )
    config_option(
        r,
        "batch_tokens",
        type=positive_int,
        help="torch backend: corpus tokens per step, all processes together",
    )
    config_option(
        r,
        "max_row_updates",
        type=int,
        help="torch backend: a row updated more often in one step moves by this many times the mean "
        "update instead of the sum (0 = no cap)",
    )
    config_option(
        r, "table_dtype", help="torch backend: bfloat16 halves the tables' memory (stochastic rounding)"
    )
    config_option(
        r,
        "completion",
        help="what completes baskets: auto (the item-item model, EASE, when it completes held-out "
        "baskets at least as well as the vectors' affinity), itemitem, affinity",
    )
    config_option(
        r,
        "completion_max_items",
        type=positive_int,
        help="items of the exact item-item fit (16 x items^2 bytes); a larger catalogue is fitted on "
        "its most frequent ones (default: %(default)s)",
    )
    config_option(
        r,
        "completion_min_count",
        type=int,
        help="products outside those rows seen this many times or more get item-item weights too, "
        "regressed on them; 0: none (default: %(default)s)",
    )
    r.add_argument("--progress", choices=MODES, default=MODES[0], help=MODES_HELP)
    r.add_argument("--quiet", action="store_true", help="no progress and no summary (--progress none)")


def _checkpoint_options(c: argparse._ActionsContainer) -> None:
    """Checkpoints and resuming."""
    c.add_argument(
        "--checkpoint-dir",
        default=None,
        metavar="DIR",
        help="write a checkpoint to DIR/checkpoint at the end of every epoch (atomically)",
    )
    c.add_argument(
        "--checkpoint-every",
        type=_minutes,
        default=None,
        metavar="MINUTES",
        help="also write one between steps once MINUTES have passed since the last "
        "(default: epoch ends only)",
    )
    c.add_argument(
        "--resume",
        action="store_true",
        help="continue from the checkpoint in --checkpoint-dir (start afresh when there is none)",
    )


def register(commands: Commands) -> None:
    """Add ``likewise train``."""
    t = commands.add(
        "train",
        cmd_train,
        help="train vectors from text or a transaction log",
        description="Train item vectors with skip-gram and negative sampling.",
    )
    t.set_defaults(all_ranks=True)  # under torchrun every rank trains; other commands run on rank 0 alone
    t.add_argument(
        "input",
        nargs="+",
        metavar="INPUT",
        help="text file(s), folder, or CSV/Parquet/JSONL log; a glob, a folder of hive partitions, an "
        "s3:// or gs:// URL; a database with --query",
    )
    t.add_argument("-o", "--output", required=True, metavar="MODEL", help="folder to save the space in")
    t.add_argument("--overwrite", action="store_true", help="replace an existing saved space")
    g = input_group(t)
    _bad_row_options(g)
    _vocab_options(g)
    _order_log_options(t.add_argument_group("order log: products and customers (likewise.retail)"))
    _typed_options(t.add_argument_group("typed items and side information (likewise.retail.events, .side)"))
    _model_options(t.add_argument_group("model"))
    _run_options(t.add_argument_group("run"))
    _checkpoint_options(t.add_argument_group("checkpoints"))
    _show_defaults(t)
