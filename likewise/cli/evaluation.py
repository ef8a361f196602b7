"""``likewise eval | split | export | import | sweep-dim | plot``: judge a space, exchange it, draw it."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    Commands,
    add_cache_dir,
    emit,
    emit_fields,
    fields_table,
    format_value,
    input_group,
    input_spec,
    load_space,
    positive_int,
    seed_option,
    text_table,
)

#: The vector-store formats of ``likewise export`` (likewise.space.vectorstores.EXPORT_FORMATS, whose
#: module is imported only when one is written).
STORE_FORMATS = ("lancedb", "qdrant", "faiss", "parquet", "pgvector")

_METRIC_NAMES = {"hr": "HR@{k}", "ndcg": "NDCG@{k}", "mrr": "MRR@{k}", "coverage": "coverage"}


# --- shared ------------------------------------------------------------------------------------------


def _md_table(headers: list[str], rows: list[list[Any]]) -> str:
    """Rows as a GitHub Markdown table (numbers formatted as in the text table)."""
    out = ["| " + " | ".join(headers) + " |"]
    out.append(
        "|"
        + "|".join(
            "---:" if rows and isinstance(rows[0][i], int | float) else "---" for i in range(len(headers))
        )
        + "|"
    )
    out += ["| " + " | ".join(format_value(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _render(args: argparse.Namespace, headers: list[str], rows: list[list[Any]]) -> str:
    return _md_table(headers, rows) if getattr(args, "markdown", False) else text_table(headers, rows)


def _add_input_options(p: argparse.ArgumentParser) -> None:
    """The input options of ``likewise train`` that reading (not training) uses."""
    add_cache_dir(input_group(p))


def _read_sequences(args: argparse.Namespace) -> tuple[list[list[str]], dict[str, Any]]:
    """Every sequence of the input as key lists, read with the same options as ``likewise train``."""
    import numpy as np

    from likewise.data.corpus import build_corpus
    from likewise.readers import input_format, resolve_files

    spec = input_spec(args)
    fmt = input_format(spec, resolve_files(spec))
    corpus = build_corpus(spec, min_count=1, cache_dir=args.cache_dir)
    keys = np.array(corpus.vocab.keys, dtype=object)
    toks = keys[np.asarray(corpus.ids)]
    offsets = np.asarray(corpus.offsets)
    seqs = [toks[a:b].tolist() for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]
    desc = {"paths": list(spec.paths), "format": fmt, "delimiter": spec.delimiter}
    desc.update(
        {
            k: v
            for k, v in (
                ("basket_col", spec.basket_col),
                ("item_col", spec.item_col),
                ("order_col", spec.order_col),
            )
            if v
        }
    )
    return seqs, desc


# --- eval --------------------------------------------------------------------------------------------


def cmd_eval(args: argparse.Namespace) -> None:
    """Print the analogy, word-pair, held-out and label results of a saved space."""
    from likewise import evaluate as ev
    from likewise.errors import InputError

    if not (args.analogies or args.pairs or args.holdout or args.labels):
        raise InputError("nothing to evaluate: give --analogies, --pairs, --holdout and/or --labels")
    emb = load_space(args.model)
    payload: dict[str, Any] = {"model": args.model}
    parts: list[str] = []
    ci = not args.case_sensitive
    if args.analogies:
        methods = ["add", "mul"] if args.method == "both" else [args.method]
        payload["analogies"] = {}
        for m in methods:
            r = ev.evaluate_analogies(
                emb, args.analogies, restrict=args.restrict, case_insensitive=ci, method=m
            )
            payload["analogies"][m] = r
            rows = [[s["section"], s["correct"], s["total"], s["accuracy"]] for s in r["sections"]]
            rows.append(["TOTAL", r["total"]["correct"], r["total"]["total"], r["total"]["accuracy"]])
            name = "3CosAdd" if m == "add" else "3CosMul"
            parts.append(
                f"analogies ({name}, {args.analogies}): {r['oov']} of {r['questions']} questions skipped "
                f"(a word not among the {min(r['restrict'] or len(emb), len(emb)):,} most frequent keys)\n"
                + _render(args, ["section", "correct", "total", "accuracy"], rows)
            )
    if args.pairs:
        payload["pairs"] = {}
        rows = []
        for f in args.pairs:
            r = ev.evaluate_pairs(emb, f, restrict=args.restrict, case_insensitive=ci)
            payload["pairs"][f] = r
            rows.append([f, r["pairs"], r["oov_ratio"], r["spearman"], r["pearson"]])
        parts.append("word pairs:\n" + _render(args, ["file", "pairs", "oov", "spearman", "pearson"], rows))
    if args.holdout:
        split = ev.load_split(args.holdout)
        # None: the library's default set (likewise.baselines.counts.BASELINES), resolved only when needed
        chosen = None if args.baselines is None else [b for b in args.baselines.split(",") if b]
        r = ev.holdout_report(
            emb,
            split,
            k=args.k,
            **({} if chosen is None else {"baselines": chosen}),
            context_window=args.context_window,
        )
        payload["holdout"] = r
        names = [_METRIC_NAMES[m].format(k=r["k"]) for m in ev.METRICS]
        rows = [[name, *[row[m] for m in ev.METRICS]] for name, row in r["rows"].items()]
        rows.append(["winner", *[r["winners"][m] for m in ev.METRICS]])
        dropped = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in r["dropped"].items() if v)
        parts.append(
            f"held-out ({args.holdout}, {split.mode} mode): {r['n']} test cases"
            + (f" ({dropped} dropped)" if dropped else "")
            + "\n"
            + _render(args, ["", *names], rows)
        )
        from likewise.baselines.counts import PEERS

        if chosen is None:  # a default peer left out for a missing library is said, not silently dropped
            parts += [f"no {p.name} row: {p.missing()}" for p in PEERS if p.default and not p.available]
    if args.labels:
        r = ev.evaluate_labels(emb, ev.read_labels(args.labels), k=args.k)
        payload["labels"] = r
        rows = [[lab, v["n"], v["accuracy"], v["purity"]] for lab, v in r["per_label"].items()]
        rows.append(["ALL", r["n"], r["accuracy"], r["purity"]])
        parts.append(
            f"labels ({args.labels}): kNN majority label (k={r['k']}) over {r['n']} labelled items"
            + (f", {r['n_unknown']} labelled keys not in the space" if r["n_unknown"] else "")
            + "\n"
            + _render(args, ["label", "items", "knn_accuracy", "purity"], rows)
        )
    emit(args, payload, "\n\n".join(parts))


# --- split -------------------------------------------------------------------------------------------


def cmd_split(args: argparse.Namespace) -> None:
    """Write a seeded train/test split of the input to ``args.output``."""
    from pathlib import Path

    from likewise.errors import InputError
    from likewise.evaluate import delimiter_for, save_split, split_sequences

    out = Path(args.output)
    if out.exists() and not args.overwrite:
        raise InputError(f"{str(out)!r} already exists: pass --overwrite to replace it")
    seqs, desc = _read_sequences(args)
    split = split_sequences(seqs, mode=args.mode, test_fraction=args.test_fraction, seed=args.seed)
    split.input = desc
    # text read with a delimiter keeps it; keys with spaces (from a log) get a separator they lack
    given = args.delimiter if desc["format"] == "text" and args.delimiter else None
    split.delimiter = delimiter_for(split.train, given)
    save_split(split, out, overwrite=args.overwrite)
    info = {
        "split": str(out),
        "mode": split.mode,
        "seed": split.seed,
        "train_sequences": sum(1 for s in split.train if s),
        "test_cases": len(split.targets),
        "too_short": split.n_short,
        "train_file": str(out / "train.txt"),
        "test_file": str(out / "test.tsv"),
    }
    hint = f"\ntrain on it with: likewise train {out / 'train.txt'} --mode {split.mode}"
    if split.delimiter:
        hint += f" --delimiter {split.delimiter!r}"
    emit(args, info, fields_table(info.items()) + hint)


# --- export / import ---------------------------------------------------------------------------------


def cmd_export(args: argparse.Namespace) -> None:
    """Write a saved space as word2vec text/binary or a TensorBoard Projector folder."""
    from likewise._targets import check_output_file, check_outside_saved
    from likewise.data import formats
    from likewise.evaluate import read_labels

    # before loading: an export never lands inside a model folder nor replaces a file unasked
    if args.format in STORE_FORMATS:
        from likewise.space.vectorstores import export

        check_outside_saved(args.output)
        path = export(load_space(args.model), args.format, args.output)
        emit_fields(args, {"format": args.format, "output": str(path)})
        return
    if args.format == "projector":
        check_outside_saved(args.output)
    else:
        check_output_file(args.output, overwrite=args.overwrite)
    emb = load_space(args.model)
    if args.format == "projector":
        labels = read_labels(args.labels) if args.labels else None
        path = formats.export_projector(emb, args.output, labels=labels)
    else:
        path = formats.write_word2vec(
            emb,
            args.output,
            binary=args.format == "word2vec-binary",
            replace_space=args.replace_space,
            overwrite=args.overwrite,  # checked above, before the model was loaded
        )
    info = {
        "model": args.model,
        "format": args.format,
        "output": str(path),
        "items": len(emb),
        "dim": emb.dim,
    }
    emit_fields(args, info)


def cmd_import(args: argparse.Namespace) -> None:
    """Save word2vec / fastText vectors as a space."""
    from likewise.data.formats import read_word2vec
    from likewise.space.store import check_target

    check_target(args.output, overwrite=args.overwrite)
    binary = True if args.binary else False if args.text else None
    emb = read_word2vec(args.file, binary=binary, limit=args.limit, unicode_errors=args.unicode_errors)
    emb.save(args.output, overwrite=args.overwrite)
    info = {
        "file": args.file,
        "format": emb.meta["source"]["format"],
        "model": args.output,
        "items": len(emb),
        "dim": emb.dim,
        "fingerprint": emb.fingerprint,
    }
    emit_fields(args, info)


# --- sweep-dim ---------------------------------------------------------------------------------------


def _parse_dims(s: str) -> list[int]:
    try:
        dims = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a comma-separated list of integers") from None
    if not dims or any(d < 1 for d in dims):
        raise argparse.ArgumentTypeError(f"{s!r}: give one or more dimensions, each >= 1")
    return sorted(set(dims))


def cmd_sweep_dim(args: argparse.Namespace) -> None:
    """Train at each of ``args.dims`` and print (and draw) held-out loss and HR@k."""
    from pathlib import Path

    from likewise import evaluate as ev
    from likewise._targets import check_output_file
    from likewise.training.train import train

    pictures_out: list[Path] = []
    if args.output:  # checked before the trainings, not after them (as plot -o)
        out = Path(args.output)
        pictures_out = [out] if out.suffix else [out.with_suffix(".png"), out.with_suffix(".svg")]
        for p in pictures_out:
            check_output_file(p, overwrite=args.overwrite)
    if len(args.input) == 1 and (Path(args.input[0]) / "split.json").is_file():
        split = ev.load_split(args.input[0])
    else:
        seqs, desc = _read_sequences(args)
        split = ev.split_sequences(seqs, mode=args.mode, test_fraction=args.test_fraction, seed=args.seed)
        split.input = desc
    rows: list[dict[str, Any]] = []
    base: dict[str, float] = {}
    for dim in args.dims:
        emb = train(
            split.train,
            mode=split.mode,
            dim=dim,
            epochs=args.epochs,
            window=args.window,
            negative=args.negative,
            sample=args.sample,
            min_count=args.min_count,
            lr=args.lr,
            seed=args.seed,
            deterministic=args.deterministic,
            completion="affinity",  # the vectors complete the baskets: an item-item model ignores dim
            progress=False,
        )
        contexts, targets, _ = ev.holdout_cases(emb.vocab.index, split)
        if len(targets) == 0:
            from likewise.errors import InputError

            raise InputError(
                "no test case has its hidden item in the trained vocabulary (lower --min-count?)"
            )
        rec = ev.EmbeddingRecommender(emb, scoring=args.scoring)
        m = ev.ranking_metrics(rec, contexts, targets, k=args.k, n_items=len(emb))
        loss = ev.heldout_loss(emb, contexts, targets)
        hist = emb.report.history
        rows.append(
            {
                "dim": dim,
                "heldout_loss": loss,
                "hr": m["hr"],
                "ndcg": m["ndcg"],
                "train_loss": hist[-1]["loss"],
                "n": m["n"],
            }
        )
        if not base and args.baselines:
            from likewise.baselines.counts import fit_baselines

            index = emb.vocab.index
            train_ids = [[index[x] for x in s if x in index] for s in split.train]
            which = [b for b in args.baselines.split(",") if b and b != "ppmi-svd"]
            for name, rec in fit_baselines(train_ids, len(emb), which=which).items():
                base[name] = ev.ranking_metrics(rec, contexts, targets, k=args.k, n_items=len(emb))["hr"]
    pictures = []
    if pictures_out:
        from likewise.plot import plot_sweep

        for p in pictures_out:
            pictures.append(
                str(
                    plot_sweep(rows, p, baselines=base, k=args.k, title=f"{split.mode} data: dimension sweep")
                )
            )
    payload = {"k": args.k, "scoring": args.scoring, "rows": rows, "baselines_hr": base, "pictures": pictures}
    table = text_table(
        ["dim", "heldout_loss", f"HR@{args.k}", f"NDCG@{args.k}", "train_loss"],
        [[r["dim"], r["heldout_loss"], r["hr"], r["ndcg"], r["train_loss"]] for r in rows],
    )
    extra = "".join(f"\n{name} HR@{args.k}: {v:.4f}" for name, v in base.items())
    extra += "".join(f"\npicture: {p}" for p in pictures)
    emit(args, payload, table + extra)


# --- plot --------------------------------------------------------------------------------------------


def cmd_plot(args: argparse.Namespace) -> None:
    """Draw the PCA map or the training loss of a saved space."""
    from likewise import plot
    from likewise._targets import check_output_file
    from likewise.evaluate import read_labels

    check_output_file(args.output, overwrite=args.overwrite)  # before loading and drawing
    emb = load_space(args.model)
    if args.kind == "loss":
        path = plot.plot_loss(list(emb.report.history), args.output, title=f"training loss of {args.model}")
    else:
        labels = read_labels(args.labels) if args.labels else None
        annotate: Any = args.annotate if args.annotate else args.top
        path = plot.plot_space(
            emb, args.output, labels=labels, annotate=annotate, max_points=args.max_points, seed=args.seed
        )
    emit(args, {"picture": str(path)}, f"picture: {path}")


# --- parser ------------------------------------------------------------------------------------------


def _baseline_names(s: str) -> str:
    """``--baselines``: names of the declared peers, comma-separated (checked, returned as given)."""
    from likewise.baselines.counts import PEERS

    if bad := [b for b in s.split(",") if b and b not in PEERS]:
        raise argparse.ArgumentTypeError(f"unknown baseline {bad[0]!r}; known: {', '.join(PEERS.names)}")
    return s


def _register_eval(commands: Commands) -> None:
    """Add ``likewise eval``."""
    from likewise.baselines.counts import PEERS

    e = commands.add(
        "eval",
        cmd_eval,
        help="judge a space: analogies, word pairs, held-out baskets, labels",
        description="Evaluate a saved space; held-out results are printed beside the baselines "
        "(counts, EASE, and ALS when implicit is installed).",
    )
    e.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    e.add_argument("--analogies", metavar="FILE", help="questions-words.txt format")
    e.add_argument(
        "--pairs", metavar="FILE", nargs="+", help="WordSim-353 / SimLex-999 format (tab-separated)"
    )
    e.add_argument("--holdout", metavar="SPLIT", help="a folder written by `likewise split`")
    e.add_argument(
        "--labels",
        metavar="FILE",
        help="item<TAB>label lines, or a table with a header (CSV/TSV, Parquet): items, then labels",
    )
    e.add_argument(
        "--restrict", type=positive_int, default=300_000, help="word tests: the N most frequent keys"
    )
    e.add_argument("--case-sensitive", action="store_true", help="word tests: compare words as written")
    e.add_argument(
        "--method", default="add", choices=["add", "mul", "both"], help="analogies: 3CosAdd / 3CosMul"
    )
    e.add_argument("-k", type=positive_int, default=10, help="list length (holdout) / neighbours (labels)")
    e.add_argument(
        "--baselines",
        default=None,
        type=_baseline_names,
        help=f"comma-separated baselines for --holdout ('' for none; default: "
        f"{','.join(p.name for p in PEERS if p.default)}, each if its library is installed). {PEERS.help()}",
    )
    e.add_argument("--context-window", type=positive_int, default=None, help="holdout: last N visible items")
    e.add_argument("--markdown", action="store_true", help="print Markdown tables")


def _register_split(commands: Commands) -> None:
    """Add ``likewise split``."""
    from likewise.evaluate import split_sequences

    s = commands.add(
        "split",
        cmd_split,
        help="write a reproducible train/test split of baskets or sequences",
        description="Hold out a seeded share of the sequences: one random item of each test basket, or the "
        "last item of each test sequence. The folder holds train.txt, test.tsv and split.json.",
    )
    s.add_argument("input", nargs="+", metavar="INPUT", help="the sequences or baskets to split (files)")
    s.add_argument("-o", "--output", required=True, metavar="DIR", help="new folder: train and test parts")
    s.add_argument(
        "--mode",
        default="basket",
        choices=["basket", "sequence"],
        help="basket: hold out an item of each test basket; sequence: the last item",
    )
    s.add_argument("--test-fraction", type=float, default=0.2, help="share of sequences held out")
    seed_option(s, split_sequences, "seeds which sequences are held out")
    s.add_argument("--overwrite", action="store_true", help="replace an existing output folder")
    _add_input_options(s)


def _register_export(commands: Commands) -> None:
    """Add ``likewise export``."""
    x = commands.add(
        "export",
        cmd_export,
        help="write vectors for gensim, word2vec, fastText, the Projector, or a vector store",
    )
    x.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    x.add_argument(
        "--format",
        required=True,
        choices=["word2vec", "word2vec-binary", "projector", *STORE_FORMATS],
        help="what to write: a word2vec file, TensorFlow Projector files, or a vector store",
    )
    x.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="PATH",
        help="a file (word2vec) or a new folder (projector; lancedb, qdrant: their local storage; faiss, "
        "parquet: items and customers files; pgvector: likewise.sql for psql -f)",
    )
    x.add_argument(
        "--replace-space", default=None, metavar="S", help="word2vec: replace whitespace in keys by S"
    )
    x.add_argument(
        "--labels", default=None, metavar="FILE", help="projector: labels, as eval --labels reads them"
    )
    x.add_argument("--overwrite", action="store_true", help="word2vec: replace an existing file at PATH")


def _register_import(commands: Commands) -> None:
    """Add ``likewise import``."""
    i = commands.add("import", cmd_import, help="make a saved space of word2vec / fastText .vec vectors")
    i.add_argument("file", metavar="FILE", help="a word2vec / fastText file, text or binary")
    i.add_argument("-o", "--output", required=True, metavar="MODEL", help="new model folder")
    kind = i.add_mutually_exclusive_group()
    kind.add_argument("--binary", action="store_true", help="word2vec binary (default: detected)")
    kind.add_argument("--text", action="store_true", help="word2vec text / .vec (default: detected)")
    i.add_argument("--limit", type=positive_int, default=None, help="read only the first N vectors")
    i.add_argument(
        "--unicode-errors",
        default="strict",
        choices=["strict", "replace", "ignore"],
        help="keys that are not UTF-8: fail, replace the bad bytes, or drop them",
    )
    i.add_argument("--overwrite", action="store_true", help="replace an existing model folder")


def _register_sweep_dim(commands: Commands) -> None:
    """Add ``likewise sweep-dim``."""
    from likewise.evaluate import split_sequences
    from likewise.space.affinity import SCORINGS

    # the scorings that rank with the vectors alone, so depend on the dimension
    vector_scorings = [s for s in SCORINGS if s not in ("auto", "itemitem")]

    w = commands.add(
        "sweep-dim",
        cmd_sweep_dim,
        help="train at each dimension and plot held-out loss and HR@10",
        description="Split the input (or use a split folder), train at each --dims size on the train part, "
        "and report the held-out rank loss (mean normalised rank of the hidden items, 1 - AUC) and HR@k.",
    )
    w.add_argument(
        "input", nargs="+", metavar="INPUT", help="input files, or one folder from `likewise split`"
    )
    w.add_argument(
        "--dims",
        type=_parse_dims,
        default=[1, 2, 4, 8, 16, 32, 64],
        help="dimensions to train, comma-separated",
    )
    w.add_argument("-o", "--output", default=None, metavar="PICTURE", help=".png / .svg, or a stem for both")
    w.add_argument("--overwrite", action="store_true", help="replace existing pictures at PICTURE")
    w.add_argument(
        "--mode", default="basket", choices=["basket", "sequence"], help="as `likewise split --mode`"
    )
    w.add_argument("--test-fraction", type=float, default=0.2, help="share of sequences held out")
    w.add_argument("-k", type=positive_int, default=10, help="list length of HR@k and NDCG@k")
    w.add_argument(
        "--scoring",
        default="affinity",
        choices=vector_scorings,
        help="how HR@k ranks with the vectors (as recommend --scoring; default: affinity). An item-item "
        "model does not depend on the dimension, so the sweep trains none and offers no itemitem/auto",
    )
    w.add_argument(
        "--baselines",
        default="popular,cocount,ease",
        help="drawn as lines on the HR panel (default: popular,cocount,ease)",
    )
    m = w.add_argument_group("training")
    m.add_argument("--epochs", type=positive_int, default=5, help="passes over the data per dimension")
    m.add_argument("--window", type=positive_int, default=5, help="context window (sequence mode)")
    m.add_argument("--negative", type=int, default=5, help="negative samples per positive pair")
    m.add_argument(
        "--sample", type=float, default=None, help="subsampling threshold (default: 1e-3 sequence, 0 basket)"
    )
    m.add_argument(
        "--min-count", type=positive_int, default=None, help="default: 5 sequence, 1 basket (as train)"
    )
    m.add_argument("--lr", type=float, default=0.025, help="initial learning rate")
    seed_option(m, split_sequences, "seeds the split and every training")
    m.add_argument("--deterministic", action="store_true", help="one thread: bit-identical runs")
    _add_input_options(w)


def _register_plot(commands: Commands) -> None:
    """Add ``likewise plot``."""
    p = commands.add("plot", cmd_plot, help="draw the PCA map or the training loss of a space")
    p.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    p.add_argument("-o", "--output", required=True, metavar="PICTURE", help=".png or .svg")
    p.add_argument("--overwrite", action="store_true", help="replace an existing file at PICTURE")
    p.add_argument(
        "--kind",
        default="map",
        choices=["map", "loss"],
        help="map: the items in 2-D; loss: training loss per pass",
    )
    p.add_argument(
        "--labels", default=None, metavar="FILE", help="map: colour by labels, as eval --labels reads them"
    )
    p.add_argument("--annotate", nargs="+", default=None, metavar="ITEM", help="map: items to name")
    p.add_argument("--top", type=int, default=15, help="map: name the N most frequent items")
    p.add_argument("--max-points", type=positive_int, default=2000, help="map: sample large spaces")
    p.add_argument("--seed", type=int, default=0, help="seeds the 2-D projection")


def register(commands: Commands) -> None:
    """Add ``eval``, ``split``, ``export``, ``import``, ``sweep-dim`` and ``plot``."""
    _register_eval(commands)
    _register_split(commands)
    _register_export(commands)
    _register_import(commands)
    _register_sweep_dim(commands)
    _register_plot(commands)
