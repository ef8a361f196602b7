"""Training throughput and peak memory on a generated 1 M-basket set (the foundation's figures).

Usage::

    .venv/bin/python bench/train_throughput.py [--baskets 1000000] [--dim 100] [--epochs 5] [--threads N]

Prints corpus build time, then per-epoch items/s and pairs/s, kNN label purity on a sample of items, and
peak resident memory of the process. Throughput figures are wall-clock on this machine; no peer is run
here (the gensim comparison lives in the speed benchmark).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from benchutil import peak_rss_mib

from likewise.data.corpus import build_corpus
from likewise.data.datasets import planted_baskets
from likewise.evaluate import label_purity
from likewise.readers import InputSpec
from likewise.training.train import train


def write_data(a: argparse.Namespace, path: Path) -> dict[str, str]:
    baskets, labels = planted_baskets(
        n_groups=a.groups,
        group_size=a.group_size,
        n_baskets=a.baskets,
        basket_size=(2, 12),
        noise=0.1,
        zipf=1.0,
        seed=0,
    )
    with open(path, "w") as f:
        f.write("\n".join(" ".join(b) for b in baskets))
        f.write("\n")
    return labels


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--baskets", type=int, default=1_000_000)
    p.add_argument("--groups", type=int, default=500)
    p.add_argument("--group-size", type=int, default=40)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--negative", type=int, default=5)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--mode", default="basket", choices=["basket", "sequence"])
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        return child(a)

    with tempfile.TemporaryDirectory() as d:
        data = Path(d) / "baskets.txt"
        t0 = time.perf_counter()
        labels = write_data(a, data)
        mib = data.stat().st_size / 2**20
        print(f"generated {a.baskets:,} baskets in {time.perf_counter() - t0:.1f} s -> {mib:.0f} MiB of text")
        (Path(d) / "labels.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in labels.items()))
        # Train in a fresh process so its peak RSS is the pipeline's alone (reader, corpus, trainer).
        cmd = [sys.executable, __file__, "--child", d, *(argv if argv is not None else sys.argv[1:])]
        return subprocess.run(cmd).returncode


def child(a: argparse.Namespace) -> int:
    d = Path(a.child)
    labels = dict(line.split("\t") for line in (d / "labels.tsv").read_text().splitlines())
    t0 = time.perf_counter()
    corpus = build_corpus(InputSpec(paths=(str(d / "baskets.txt"),)), min_count=1, cache_dir=d / "cache")
    t_corpus = time.perf_counter() - t0
    rss_corpus = peak_rss_mib()
    print(
        f"corpus: {corpus.n_sequences:,} baskets, {corpus.n_tokens:,} items, {len(corpus.vocab):,} "
        f"distinct; compiled from text in {t_corpus:.1f} s "
        f"({corpus.n_tokens / t_corpus / 1e6:.2f} M items/s), "
        f"peak RSS so far {rss_corpus:,.0f} MiB"
    )
    rows: list = []
    emb = train(
        corpus,
        mode=a.mode,
        dim=a.dim,
        epochs=a.epochs,
        negative=a.negative,
        threads=a.threads,
        sample=1e-3,
        min_count=1,
        seed=1,
        progress=False,
        callback=rows.append,
        completion="affinity",  # the trainer alone; the item-item fit is bench/completion_scale.py's
    )
    print(f"{'epoch':>5} {'items/s':>12} {'pairs/s':>12} {'loss':>8} {'seconds':>8}")
    for s in rows:
        rates = f"{s.items_per_s:>12,.0f} {s.pairs_per_s:>12,.0f}"
        print(f"{s.epoch:>5} {rates} {s.loss:>8.4f} {s.seconds:>8.2f}")
    secs = sum(s.seconds for s in rows)
    items = sum(s.items for s in rows)
    pairs = sum(s.pairs for s in rows)
    # Epoch 1 includes numba's first-call compile when the on-disk cache is cold; report both.
    steady = rows[1:] or rows
    ss = sum(s.seconds for s in steady)
    print(
        f"all epochs: {items / secs:,.0f} items/s, {pairs / secs:,.0f} pairs/s over {secs:.1f} s "
        f"({emb.meta['threads']} thread(s))"
    )
    print(
        f"epochs 2+: {sum(s.items for s in steady) / ss:,.0f} items/s, "
        f"{sum(s.pairs for s in steady) / ss:,.0f} pairs/s"
    )
    rng = np.random.default_rng(0)
    sample = [emb.keys[i] for i in rng.choice(len(emb), size=min(2000, len(emb)), replace=False)]
    purity = label_purity(emb, labels, k=10, items=sample)
    print(f"kNN(10) label purity on {len(sample)} items: {purity:.3f}")
    print(
        f"peak RSS of the training process: {peak_rss_mib():,.0f} MiB "
        f"(input vectors {emb.vectors.nbytes / 2**20:,.0f} MiB + output vectors of the same size)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
