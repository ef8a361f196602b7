"""Neural-network commands: ``train-next``, ``sample``, ``predict-next`` (PyTorch) and ``size`` (no torch).

``likewise train-next names.txt --context 3 --dim 2 --hidden 100 -o names_model`` trains makemore's MLP
on one sequence per line (a line without spaces is read as characters, so a names file gives 27 tokens
with the boundary ``.``); ``likewise sample names_model -n 20`` invents names; ``likewise predict-next
MODEL ITEM...`` ranks what comes after a session. ``likewise size --vocab V --dim D`` is table arithmetic.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    Commands,
    emit,
    emit_fields,
    fields_table,
    neighbour_table,
    positive_int,
    text_table,
)

DTYPE_BYTES = {"float64": 8, "float32": 4, "bf16": 2, "float16": 2, "int8": 1}


def table_size(vocab: int, dim: int, dtype: str = "float32") -> dict[str, Any]:
    """Weights and bytes of a ``vocab`` x ``dim`` embedding table stored as ``dtype``.

    Parameters
    ----------
    vocab, dim : int
        Rows and columns.
    dtype : {"float64", "float32", "bf16", "float16", "int8"}

    Returns
    -------
    dict
        ``{"vocab", "dim", "dtype", "weights", "bytes", "mib", "gb"}`` (MiB = 2**20 bytes, GB = 1e9 bytes).
    """
    from likewise.errors import InputError

    for name, v in (("vocab", vocab), ("dim", dim)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InputError(f"{name} == {v!r}, must be an int >= 0")
    if dtype not in DTYPE_BYTES:
        raise InputError(f"dtype == {dtype!r}, must be one of {sorted(DTYPE_BYTES)!r}")
    weights = vocab * dim
    nbytes = weights * DTYPE_BYTES[dtype]
    return {
        "vocab": vocab,
        "dim": dim,
        "dtype": dtype,
        "weights": weights,
        "bytes": nbytes,
        "mib": nbytes / 2**20,
        "gb": nbytes / 1e9,
    }


def cmd_size(args: argparse.Namespace) -> None:
    """Print the weights and bytes of a ``--vocab`` x ``--dim`` table."""
    s = table_size(args.vocab, args.dim, args.dtype)
    rows = [
        ["table", f"{s['vocab']:,} x {s['dim']:,}"],
        ["weights", s["weights"]],
        ["dtype", s["dtype"]],
        ["bytes", s["bytes"]],
        ["MiB", f"{s['mib']:,.1f}"],
        ["GB", f"{s['gb']:,.2f}"],
    ]
    emit(args, s, fields_table(rows))


# --- next-token model --------------------------------------------------------------------------------


def _read_sequences(path: str, items: str) -> tuple[list[list[str]], str]:
    """One sequence per non-blank line: characters (``chars``) or whitespace-separated keys (``words``)."""
    from likewise.errors import InputError

    with open(path, encoding="utf-8") as f:
        lines = [ln.strip() for ln in f]
    lines = [ln for ln in lines if ln]
    if not lines:
        raise InputError(f"{path!r} has no non-blank lines: give one sequence per line")
    if items == "auto":
        # Names files have no spaces in any line; session files separate their items by spaces.
        items = "words" if any(len(ln.split()) > 1 for ln in lines) else "chars"
    seqs = [list(ln) for ln in lines] if items == "chars" else [ln.split() for ln in lines]
    return seqs, items


def _set_threads(n: int) -> None:
    from likewise.errors import MissingDependencyError

    try:
        import torch
    except ImportError:  # one line with the install command, not a traceback
        raise MissingDependencyError("torch", "torch", "the next-item model") from None
    torch.set_num_threads(n)


def _dims(s: str) -> list[int]:
    try:
        dims = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a comma-separated list of integers") from None
    if not dims or min(dims) < 1:
        raise argparse.ArgumentTypeError(f"{s!r}: give vector lengths >= 1, e.g. 1,2,10")
    return dims


def _plot_table(trained: Any, path: str) -> str:
    """Draw the table's rows. PCA without normalising: for 2-D vectors that is only a rotation onto their
    principal axes, so the distances in the picture are the distances between the trained vectors."""
    from likewise.plot import pca_coords, plot_map

    keys = trained.vocab.keys
    vectors = trained.model.table.weight.detach().cpu().numpy()
    labels = None
    if all(len(k) == 1 and k.isalpha() for k in keys[1:]):
        labels = {k: "vowel" if k in "aeiou" else "consonant" for k in keys[1:]}
        labels[keys[0]] = "boundary"
    c = trained.config
    title = f"{len(keys)} item vectors, dim {c.dim} (context {c.context}, hidden {c.hidden})"
    return str(plot_map(pca_coords(vectors, 2, normalize=False), keys, path, labels=labels, title=title))


def cmd_train_next(args: argparse.Namespace) -> None:
    """Train (or, with ``--sweep-dims``, compare) next-item models on one sequence per line."""
    from likewise.errors import InputError

    if args.sweep_dims is None and args.output is None:
        raise InputError("-o/--output MODEL is required (only --sweep-dims runs without saving a model)")
    if args.plot and not args.plot.lower().endswith((".png", ".svg")):
        raise InputError(f"--plot {args.plot!r} must end in .png or .svg")
    _set_threads(args.threads)
    from likewise.torch import NextTokenConfig, check_model_target, save_model, sweep_dims, train_next

    seqs, items = _read_sequences(args.input, args.items)
    cfg = dict(
        context=args.context,
        hidden=args.hidden,
        tied=args.tied,
        steps=args.steps,
        batch_size=args.batch_size,
        lr=args.lr,
        val_fraction=args.val_fraction,
        seed=args.seed,
        boundary=args.boundary,
    )
    if args.sweep_dims is not None:
        common = {k: v for k, v in cfg.items() if k not in ("context", "hidden", "steps", "seed")}
        rows = sweep_dims(
            seqs,
            args.sweep_dims,
            context=args.context,
            hidden=args.hidden,
            steps=args.steps,
            seed=args.seed,
            device=args.device,
            progress=False if args.quiet else None,
            **common,
        )
        payload = {"input": args.input, "items": items, "sequences": len(seqs), "runs": rows}
        text = text_table(
            ["dim", "train_loss", "val_loss", "weights"],
            [[r["dim"], r["train_loss"], r["val_loss"], r["weights"]] for r in rows],
        )
        emit(args, payload, text)
        return

    check_model_target(args.output, overwrite=args.overwrite)  # fail before training, not after
    if args.plot:
        from likewise._targets import check_output_file

        check_output_file(args.plot, overwrite=args.overwrite)
    trained = train_next(
        seqs, NextTokenConfig(dim=args.dim, **cfg), device=args.device, progress=False if args.quiet else None
    )
    trained.meta["items_from"] = items
    save_model(trained, args.output, overwrite=args.overwrite)
    summary: dict[str, Any] = {
        "model": args.output,
        "space": f"{args.output}/space",
        "items": len(trained.vocab),
        "read_as": items,
        "sequences": trained.meta["sequences"],
        "examples": trained.meta["examples"],
        "dim": args.dim,
        "context": args.context,
        "hidden": args.hidden,
        "tied": args.tied,
        "steps": args.steps,
        "train_loss": trained.train_loss,
        "val_loss": trained.val_loss,
        "seconds": trained.meta["seconds"],
        "device": trained.meta["device"],
    }
    keys = set(trained.vocab.keys)
    if set("abcdefghijklmnopqrstuvwxyz") <= keys:
        from likewise.data.names import vowel_clustering

        vc = vowel_clustering(trained.model.table.weight.detach().cpu().numpy(), trained.vocab.keys)
        summary |= {
            "vowel_mean_distance": vc["vowel_mean"],
            "letter_mean_distance": vc["letter_mean"],
            "vowel_ratio": vc["ratio"],
            "vowel_p_value": vc["p_value"],
        }
    if args.plot:
        summary["plot"] = _plot_table(trained, args.plot)
    emit_fields(args, summary)


def _load_model(args: argparse.Namespace) -> Any:
    _set_threads(args.threads)
    from likewise.torch import load_model

    return load_model(args.model, device=args.device)


def cmd_sample(args: argparse.Namespace) -> None:
    """Print sequences generated by a next-item model."""
    from likewise.torch import sample

    trained = _load_model(args)
    sep = "" if trained.meta.get("items_from") == "chars" else " "
    seqs = sample(trained, args.n, seed=args.seed, temperature=args.temperature, max_len=args.max_len)
    out = [sep.join(s) for s in seqs]
    emit(args, out, "\n".join(out))


def cmd_predict_next(args: argparse.Namespace) -> None:
    """Print the most probable items after the session ``args.items``."""
    from likewise.torch import predict_next

    trained = _load_model(args)
    items = list(args.items)
    if trained.meta.get("items_from") == "chars":
        items = [c for it in items for c in it]  # `predict-next names_model em` means the prefix e, m
    res = predict_next(trained, items, k=args.k, include_boundary=args.include_end)
    payload = [{"item": k, "probability": float(p)} for k, p in res]  # a prediction, not a neighbour
    emit(args, payload, neighbour_table(res, score="probability"))


# --- parser --------------------------------------------------------------------------------------------


def _device_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--device", default="cpu", help="cpu, cuda, cuda:N or auto (CUDA when torch sees a GPU); default cpu"
    )
    # Tiny models are bound by per-op overhead: on a busy 2-core machine 2,000 steps of the names model
    # took 2.6 s with 1 thread and 44-50 s with 2 (docs/torch.md), so one thread is the default.
    p.add_argument("--threads", type=positive_int, default=1, help="torch CPU threads (default 1)")


def register(commands: Commands) -> None:
    """Add ``train-next``, ``sample``, ``predict-next`` and ``size``."""
    t = commands.add(
        "train-next",
        cmd_train_next,
        help="train a next-item model (makemore MLP, PyTorch) on one sequence per line",
        description="Previous k items -> their vectors concatenated -> tanh hidden layer -> next item. "
        "Reports train and validation loss (mean nats per item). Needs likewise[torch].",
    )
    t.add_argument("input", metavar="INPUT", help="text file, one sequence per line (e.g. one name per line)")
    t.add_argument("-o", "--output", default=None, metavar="MODEL", help="folder to save the model in")
    t.add_argument(
        "--overwrite", action="store_true", help="replace an existing saved model (and --plot file)"
    )
    t.add_argument(
        "--items",
        default="auto",
        choices=["auto", "chars", "words"],
        help="a line's items: characters or space-separated words (auto: chars if no line has a space)",
    )
    t.add_argument("--boundary", default=".", help="start/end token (default '.')")
    t.add_argument("--context", type=positive_int, default=3, help="previous items seen (default 3)")
    t.add_argument("--dim", type=positive_int, default=2, help="vector length (default 2)")
    t.add_argument("--hidden", type=positive_int, default=100, help="tanh units (default 100)")
    t.add_argument("--tied", action="store_true", help="score outputs against the input table")
    t.add_argument("--steps", type=positive_int, default=20_000, help="Adam steps (default 20000)")
    t.add_argument("--batch-size", type=positive_int, default=128, help="sequences per optimiser step")
    t.add_argument("--lr", type=float, default=0.01, help="Adam learning rate (lr/10 for the last quarter)")
    t.add_argument(
        "--val-fraction", type=float, default=0.1, help="share of sequences held out (default 0.1)"
    )
    t.add_argument("--seed", type=int, default=0, help="(default: 0, NextTokenConfig.seed)")
    t.add_argument("--plot", default=None, metavar="FILE", help="draw the item vectors to FILE (.png/.svg)")
    t.add_argument(
        "--sweep-dims",
        type=_dims,
        default=None,
        metavar="D1,D2,...",
        help="train once per vector length and print the losses instead of saving a model",
    )
    t.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal by default)")
    _device_args(t)

    s = commands.add("sample", cmd_sample, help="generate sequences (e.g. names) from a next-item model")
    s.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    s.add_argument("-n", type=positive_int, default=20, help="how many (default 20)")
    s.add_argument("--seed", type=int, default=0, help="(default: 0, sample's)")
    s.add_argument(
        "--temperature", type=float, default=1.0, help="sampling temperature (lower: likelier items)"
    )
    s.add_argument("--max-len", type=positive_int, default=50, help="longest sequence to sample")
    _device_args(s)

    p = commands.add("predict-next", cmd_predict_next, help="most probable next items after ITEM...")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("items", nargs="+", metavar="ITEM", help="the session so far (a chars model splits words)")
    p.add_argument("-k", type=positive_int, default=10, help="how many next items")
    p.add_argument("--include-end", action="store_true", help="also rank the end of the sequence")
    _device_args(p)

    z = commands.add("size", cmd_size, help="weights and bytes of a VOCAB x DIM table")
    z.add_argument("--vocab", type=int, required=True, metavar="V", help="rows (items)")
    z.add_argument("--dim", type=int, required=True, metavar="D", help="columns (vector length)")
    z.add_argument("--dtype", default="float32", choices=list(DTYPE_BYTES), help="default float32")
