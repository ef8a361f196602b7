"""The torch backend against the numba kernel: same corpus, settings and cores, in the same run.

Usage::

    .venv/bin/python bench/torch_vs_numba.py                          # 13 M-token corpus, 2 runs each
    .venv/bin/python bench/torch_vs_numba.py --tokens 2000000 --runs 1 --batch-tokens 2048 8192 32768
    .venv/bin/python bench/torch_vs_numba.py --smoke                  # CI: tiny cut, checks the pipeline

The text is the corpus of ``../shared/bench/build_text_corpus.py`` (cached as in
``bench/speed_vs_gensim.py``; ``--tokens N`` takes its first lines up to about N tokens, which are already
shuffled). Both backends train skip-gram, negative 5, window 5, dim 100, min_count 5, sample 1e-3,
5 epochs, the numba kernel on ``--threads`` threads and torch on ``--torch-threads`` (default 1, the
backend's own default on a CPU: its many small operations lose more to waking threads than they gain),
alternately (numba, torch, numba, torch ...), each in a fresh
process, on the same cached corpus (built once, before the timed runs). Each torch run uses
``--batch-tokens`` (one torch run per value in every round). Both are scored by gensim's evaluators:
Google analogies (30 000 most frequent words), WordSim-353 and SimLex-999 Spearman. Words/s = corpus
tokens x epochs / training seconds. The last lines are the ratio of the medians (torch / numba) and the
quality gaps, per batch size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchutil import peak_rss_mib
from speed_vs_gensim import DATA, _evaluate_words, _keyed_vectors, table, text_corpus

HERE = Path(__file__).resolve().parent
TEXT = dict(dim=100, window=5, negative=5, min_count=5, sample=1e-3, epochs=5)


def cut_corpus(tokens: int | None) -> Path:
    """The whole corpus, or its first lines up to about ``tokens`` tokens (cached beside it)."""
    full = text_corpus(None, install=False)
    if not tokens:
        return full
    path = DATA / f"text-head-{tokens}.txt"
    if not path.exists():
        out, n = [], 0
        with open(full, encoding="utf-8") as f:
            for line in f:
                out.append(line)
                n += len(line.split())
                if n >= tokens:
                    break
        path.with_suffix(".tmp").write_text("".join(out), encoding="utf-8")
        path.with_suffix(".tmp").rename(path)
    return path


def worker(a: argparse.Namespace) -> None:
    from likewise.data.corpus import build_corpus
    from likewise.readers import InputSpec
    from likewise.training.train import train

    p = json.loads(a.params)
    corpus = build_corpus(
        InputSpec(paths=(a.corpus,), format="text"), min_count=p["min_count"], cache_dir=a.cache
    )
    extra = (
        {"backend": "torch", "device": "cpu", "batch_tokens": a.batch_tokens} if a.worker == "torch" else {}
    )
    t0 = time.perf_counter()
    emb = train(
        corpus,
        mode="sequence",
        dim=p["dim"],
        window=p["window"],
        negative=p["negative"],
        sample=p["sample"],
        min_count=p["min_count"],
        epochs=p["epochs"],
        threads=a.torch_threads if a.worker == "torch" else a.threads,
        seed=1,
        progress=False,
        **({"backend": "cpu"} | extra),
    )
    train_s = time.perf_counter() - t0
    res = {"tokens": corpus.n_tokens, "vocab": len(emb), "train_s": train_s, "peak_rss_mib": peak_rss_mib()}
    res["words_per_s"] = res["tokens"] * p["epochs"] / train_s
    res["final_loss"] = emb.meta["history"][-1]["loss"]
    if p.get("evaluate", True):
        res |= _evaluate_words(_keyed_vectors(list(emb.keys), emb.vectors))
    print("RESULT " + json.dumps(res))


def run_worker(
    who: str, corpus: Path, cache: Path, a: argparse.Namespace, params: dict, batch: int = 0
) -> dict:
    cmd = [sys.executable, __file__, "--worker", who, "--corpus", str(corpus), "--cache", str(cache)]
    cmd += ["--threads", str(a.threads), "--torch-threads", str(a.torch_threads)]
    cmd += ["--params", json.dumps(params), "--batch-tokens-one", str(batch)]
    threads = a.torch_threads if who == "torch" else a.threads
    env = dict(os.environ, NUMBA_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(threads))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        sys.exit(f"{who} worker failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    res = json.loads(lines[-1][len("RESULT ") :])
    res["who"] = who if who == "numba" else f"torch b={batch}"
    print(
        f"  {res['who']:14s} {res['words_per_s']:>12,.0f} words/s  train {res['train_s']:7.1f} s", flush=True
    )
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", choices=["numba", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    ap.add_argument("--params", help=argparse.SUPPRESS)
    ap.add_argument("--batch-tokens-one", dest="batch_one", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--tokens", type=int, default=None, help="cut the corpus to about N tokens")
    ap.add_argument("--runs", type=int, default=2, help="rounds (numba, then torch at each batch size)")
    ap.add_argument("--threads", type=int, default=2, help="numba threads")
    ap.add_argument("--torch-threads", type=int, default=1, help="torch threads")
    ap.add_argument("--batch-tokens", type=int, nargs="+", default=[8192], help="torch step sizes")
    ap.add_argument("--smoke", action="store_true", help="tiny cut, 1 run, 1 epoch: checks the pipeline")
    a = ap.parse_args()
    if a.worker:
        a.batch_tokens = a.batch_one
        return worker(a)
    params = dict(TEXT)
    if a.smoke:
        a.tokens, a.runs, params["epochs"], params["evaluate"] = a.tokens or 20_000, 1, 1, False
        corpus = text_corpus(a.tokens, install=False)
    else:
        corpus = cut_corpus(a.tokens)
    cache = DATA / "corpus-cache"
    subprocess.run(
        [sys.executable, "-c", "from likewise.data.corpus import build_corpus; from likewise.readers import "
         f"InputSpec; build_corpus(InputSpec(paths=({str(corpus)!r},), format='text'), "
         f"min_count={params['min_count']}, cache_dir={str(cache)!r})"],
        check=True,
    )  # fmt: skip
    print(
        f"text corpus: {corpus}; numba {a.threads} threads, torch {a.torch_threads}; {params}; "
        f"torch batch_tokens {a.batch_tokens}"
    )
    results = []
    for i in range(a.runs):
        print(f"run {i + 1}/{a.runs}", flush=True)
        results.append(run_worker("numba", corpus, cache, a, params))
        for b in a.batch_tokens:
            results.append(run_worker("torch", corpus, cache, a, params, b))
    cols = [
        ("who", "trainer", "s"),
        ("words_per_s", "words/s", ",.0f"),
        ("train_s", "train s", ".1f"),
        ("peak_rss_mib", "peak MiB", ".0f"),
        ("final_loss", "loss", ".4f"),
    ]
    if params.get("evaluate", True):
        cols += [("analogy", "analogy", ".4f"), ("analogy_n", "questions", "d"), ("ws353", "WS353", ".4f")]
        cols += [("simlex", "SimLex", ".4f")]
    rows, med = [], {}
    for who in dict.fromkeys(r["who"] for r in results):
        mine = [r for r in results if r["who"] == who]
        m = {k: statistics.median(r[k] for r in mine) for k in mine[0] if isinstance(mine[0][k], int | float)}
        med[who] = m
        rows += [dict(r, who=f"{who} #{j + 1}") for j, r in enumerate(mine)] + [
            dict(m, who=f"{who} (median)")
        ]
    print(table(rows, cols))
    base = med["numba"]
    for who, m in med.items():
        if who == "numba":
            continue
        line = f"{who}: words/s ratio torch/numba {m['words_per_s'] / base['words_per_s']:.2f}x"
        if "analogy" in m:
            line += f", analogy gap {100 * (m['analogy'] - base['analogy']):+.2f} pts"
            line += f", WS353 {m['ws353'] - base['ws353']:+.4f}, SimLex {m['simlex'] - base['simlex']:+.4f}"
        print(line)


if __name__ == "__main__":
    main()
