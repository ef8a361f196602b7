"""``likewise tune``: search training settings within a time budget, beside the count baselines.

``likewise tune orders.parquet --basket-col order_id --item-col product_id -o model --budget 10m``
splits the input as ``likewise split`` does, trains the library defaults first and then seeded random
settings until the budget is spent, prints a leaderboard of the trials and the baselines (popular,
co-count, PPMI, PPMI-SVD) on the same held-out split, and saves the best trial's model (trained on the
train part) to ``-o``. The search itself is :func:`likewise.training.tune.tune`.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    Commands,
    add_cache_dir,
    emit,
    input_group,
    input_spec,
    positive_int,
    seed_option,
    text_table,
)


def _budget(text: str) -> float:
    """``--budget``: ``90s``, ``10m``, ``1h`` (argparse reports a bad value with status 2)."""
    from likewise.errors import InputError
    from likewise.training.tune import parse_budget

    try:
        return parse_budget(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _fmt_setting(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return "0" if v == 0 else f"{v:.3g}"
    return str(v)


def cmd_tune(args: argparse.Namespace) -> None:
    """Search training settings within ``args.budget`` and save the best model."""
    from pathlib import Path

    from likewise import evaluate as ev
    from likewise.space.store import check_target
    from likewise.training.tune import tune

    check_target(args.output, overwrite=args.overwrite)  # fail before searching, not after
    if len(args.input) == 1 and (Path(args.input[0]) / "split.json").is_file():
        data: Any = ev.load_split(args.input[0])
    else:
        data = input_spec(args)
    res = tune(
        data,
        budget_s=args.budget,
        seed=args.seed,
        k=args.k,
        mode=args.mode,
        test_fraction=args.test_fraction,
        max_trials=args.trials,
        min_count=args.min_count,
        max_items=args.max_items,
        threads=args.threads,
        deterministic=args.deterministic,
        baselines=[b for b in args.baselines.split(",") if b],
        cache_dir=args.cache_dir,
        progress=not args.quiet,
    )
    res.embeddings.save(args.output, overwrite=args.overwrite)
    payload = res.to_dict()
    payload["model"] = str(args.output)
    payload["model_trained_on"] = "the train part of the split (the best trial's own model)"
    k = res.k
    names = ["dim", "epochs", "window", "negative", "ns_exponent", "sample", "lr", "basket_rule"]
    if res.mode == "basket":
        names.remove("window")
    rows = []
    for r in res.leaderboard():
        s = r["settings"]
        rows.append(
            [
                r["rank"],
                r["name"],
                r["hr"],
                r["ndcg"],
                r["mrr"],
                *[_fmt_setting(s.get(n)) for n in names],
                "-" if r["seconds"] is None else f"{r['seconds']:.1f}",
            ]
        )
    table = text_table(["#", "", f"HR@{k}", f"NDCG@{k}", f"MRR@{k}", *names, "seconds"], rows)
    b, d = res.best, res.default
    head = (
        f"tune ({res.mode} mode, seed {res.seed}): {len(res.trials)} trials in {res.elapsed_s:.1f} s "
        f"of a {res.budget_s:g} s budget ({res.stopped}); {res.n_train:,} training sequences, "
        f"{res.n_test:,} held-out cases"
    )
    tail = (
        f"best: {b.name}, HR@{k} {b.hr:.4f} (default {d.hr:.4f}), NDCG@{k} {b.ndcg:.4f} "
        f"(default {d.ndcg:.4f})\n"
        f"saved to {args.output}: the best trial's model, trained on the train part of the split; "
        f"its settings are in the config (the basket rule in meta['basket_scoring']), the search in "
        "meta['tune']"
    )
    emit(args, payload, f"{head}\n{table}\n{tail}")


def register(commands: Commands) -> None:
    """Add ``likewise tune``."""
    from likewise.training.tune import TuneOptions

    t = commands.add(
        "tune",
        cmd_tune,
        help="search dim, epochs, window, negatives, ns-exponent, sample and lr within a time budget",
        description="Split the input (one hidden item per test basket / sequence, as `likewise split`), "
        "train the defaults and then seeded random settings until --budget is spent, score each by "
        "HR@k on the held-out part beside the count baselines, and save the best model.",
    )
    t.add_argument(
        "input", nargs="+", metavar="INPUT", help="text file(s), folder, log, or one `likewise split` folder"
    )
    t.add_argument("-o", "--output", required=True, metavar="MODEL", help="folder to save the best space in")
    t.add_argument("--overwrite", action="store_true", help="replace an existing saved space")
    t.add_argument(
        "--budget", type=_budget, default=600.0, help="wall-clock budget: 90s, 10m, 1h (default: 10m)"
    )
    t.add_argument("--trials", type=positive_int, default=None, help="stop after N trials (default included)")
    seed_option(t, TuneOptions, "seeds the split, the search and training")
    t.add_argument("-k", "--k", type=positive_int, default=10, help="list length of HR@k (default: 10)")
    t.add_argument(
        "--mode",
        default="auto",
        choices=["auto", "sequence", "basket"],
        help="auto: basket for a log read by --basket-col with no ordering column, else sequence",
    )
    t.add_argument("--test-fraction", type=float, default=0.2, help="share held out (default: 0.2)")
    t.add_argument(
        "--baselines",
        default="popular,cocount,ppmi,ppmi-svd",
        help="comma-separated count baselines on the leaderboard ('' for none)",
    )
    g = input_group(t)
    g.add_argument(
        "--min-count",
        type=positive_int,
        default=None,
        help="drop rarer items (default: as `likewise train`)",
    )
    g.add_argument("--max-items", type=positive_int, default=None, help="keep the N most frequent")
    add_cache_dir(g)
    r = t.add_argument_group("run")
    r.add_argument("--threads", type=positive_int, default=None, help="default: all cores")
    r.add_argument("--deterministic", action="store_true", help="one thread, bit-identical trials")
    r.add_argument("--quiet", action="store_true", help="no progress bar or per-trial lines")
