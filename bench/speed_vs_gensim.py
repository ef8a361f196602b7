"""likewise against gensim on the same cores, corpus and hyper-parameters, in the same run.

Usage::

    .venv/bin/pip install -e '.[bench]'          # gensim is a bench (and test) dependency only
    .venv/bin/python bench/speed_vs_gensim.py                 # full: 13 M-token corpus, 2 runs each
    .venv/bin/python bench/speed_vs_gensim.py --tokens 2000000 --runs 1   # a quicker cut
    .venv/bin/python bench/speed_vs_gensim.py --smoke         # CI: tiny cut, checks the pipeline only

Text: the corpus comes from ``../shared/bench/build_text_corpus.py`` (``--install`` passes through to
it and apt-installs its Debian sources), cached in ``$LIKEWISE_BENCH_DATA`` (default
``~/.cache/likewise-bench``). Both trainers run skip-gram, negative 5, window 5, dim 100, min_count 5,
sample 1e-3, 5 epochs, on ``--threads`` threads (gensim: ``corpus_file`` mode, ``workers``), alternately
(gensim, likewise, gensim, likewise ...), each in a fresh process so peak memory is its own. Both are
evaluated the same way, by gensim's own evaluators on a KeyedVectors holding each model's vectors:
Google analogies (30 000 most frequent words), WordSim-353 and SimLex-999 Spearman.

Words/s is raw corpus tokens (every token of the file, before min_count trimming, as gensim counts
them) x epochs / training wall seconds, the same numerator for both; vocabulary / corpus building is
timed separately and shown. The last line is the ratio of the medians, likewise / gensim.

``--baskets N`` adds the basket-mode comparison (planted groups, Zipf popularity; gensim configured for
sets: sg, window = the largest basket, shrink_windows=False) and ``--scaling`` adds likewise's
scaling figures (threads, corpus size, vocabulary size vs peak memory).
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

import numpy as np
from benchutil import peak_rss_mib

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "bench"
DATA = Path(os.environ.get("LIKEWISE_BENCH_DATA", Path.home() / ".cache" / "likewise-bench"))

TEXT = dict(dim=100, window=5, negative=5, min_count=5, sample=1e-3, epochs=5)


# --- workers (each runs in its own process) ---------------------------------------------------------


def _keyed_vectors(keys: list[str], vectors: np.ndarray):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vectors.shape[1], dtype=np.float32)
    kv.add_vectors(keys, vectors)
    return kv


def _evaluate_words(kv) -> dict:
    from gensim.test.utils import datapath

    _, sections = kv.evaluate_word_analogies(datapath("questions-words.txt"), restrict_vocab=30000)
    total = sections[-1]
    n = len(total["correct"]) + len(total["incorrect"])
    ws = kv.evaluate_word_pairs(datapath("wordsim353.tsv"))
    sl = kv.evaluate_word_pairs(datapath("simlex999.txt"))
    return {
        "analogy": len(total["correct"]) / n if n else float("nan"),
        "analogy_n": n,
        "ws353": float(ws[1][0]),
        "simlex": float(sl[1][0]),
    }


def _label_purity(keys: list[str], vectors: np.ndarray, labels: dict[str, str], n: int = 2000) -> float:
    from likewise.data.vocab import Vocab
    from likewise.evaluate import label_purity
    from likewise.space.embeddings import Embeddings

    emb = Embeddings(vectors, Vocab(keys))
    rng = np.random.default_rng(0)
    sample = rng.choice(len(keys), size=min(n, len(keys)), replace=False)
    return label_purity(emb, labels, k=10, items=[keys[i] for i in sample])


def work_gensim(a: argparse.Namespace) -> dict:
    from gensim.models import Word2Vec

    p = json.loads(a.params)
    t0 = time.perf_counter()
    model = Word2Vec(
        vector_size=p["dim"],
        window=p["window"],
        negative=p["negative"],
        min_count=p["min_count"],
        sample=p["sample"],
        sg=1,
        workers=a.threads,
        seed=1,
        shrink_windows=p.get("shrink_windows", True),
    )
    model.build_vocab(corpus_file=a.corpus)
    t1 = time.perf_counter()
    model.train(
        corpus_file=a.corpus,
        total_words=model.corpus_total_words,
        total_examples=model.corpus_count,
        epochs=p["epochs"],
    )
    t2 = time.perf_counter()
    out = {
        "tokens": int(model.corpus_total_words),
        "vocab": len(model.wv),
        "prepare_s": t1 - t0,
        "train_s": t2 - t1,
    }
    keys, vectors = list(model.wv.index_to_key), np.asarray(model.wv.vectors, dtype=np.float32)
    out["peak_rss_mib"] = peak_rss_mib()  # training's peak, before the evaluation loads anything
    return out | _quality(a, keys, vectors)


def work_likewise(a: argparse.Namespace) -> dict:
    import tempfile

    from likewise.data.corpus import build_corpus
    from likewise.readers import InputSpec
    from likewise.training.train import train

    p = json.loads(a.params)
    with tempfile.TemporaryDirectory() as cache:  # a cold corpus cache: its build is timed every run
        t0 = time.perf_counter()
        corpus = build_corpus(
            InputSpec(paths=(a.corpus,), format="text"), min_count=p["min_count"], cache_dir=cache
        )
        t1 = time.perf_counter()
        emb = train(
            corpus,
            mode=p.get("mode", "sequence"),
            dim=p["dim"],
            window=p["window"],
            negative=p["negative"],
            sample=p["sample"],
            min_count=p["min_count"],
            epochs=p["epochs"],
            max_context=p.get("max_context", 50),
            neg_group=p.get("neg_group"),  # None: the library default of the mode
            threads=a.threads,
            seed=1,
            progress=False,
            # the embedding trainer against gensim's: no item-item completion model (gensim fits
            # none; its time and memory are bench/completion_scale.py's)
            completion="affinity",
        )
        t2 = time.perf_counter()
        out = {
            # raw tokens of the file, before min_count trimming: the count gensim's words/s uses
            "tokens": int(corpus.manifest["input_tokens"]),
            "vocab": len(emb),
            "prepare_s": t1 - t0,
            "train_s": t2 - t1,
        }
        out["peak_rss_mib"] = peak_rss_mib()  # training's peak, before the evaluation loads anything
        return out | _quality(a, list(emb.keys), np.asarray(emb.vectors))


def _quality(a: argparse.Namespace, keys: list[str], vectors: np.ndarray) -> dict:
    if not json.loads(a.params).get("evaluate", True):
        return {}
    if a.labels:
        labels = dict(line.rstrip("\n").split("\t") for line in open(a.labels, encoding="utf-8"))
        return {"purity": _label_purity(keys, vectors, labels)}
    return _evaluate_words(_keyed_vectors(keys, vectors))


def worker(a: argparse.Namespace) -> None:
    res = work_gensim(a) if a.worker == "gensim" else work_likewise(a)
    res["words_per_s"] = res["tokens"] * json.loads(a.params)["epochs"] / res["train_s"]
    print("RESULT " + json.dumps(res))


# --- driver -------------------------------------------------------------------------------------------


def run_worker(which: str, corpus: Path, threads: int, params: dict, labels: Path | None = None) -> dict:
    cmd = [sys.executable, __file__, "--worker", which, "--corpus", str(corpus), "--threads", str(threads)]
    cmd += ["--params", json.dumps(params)]
    if labels is not None:
        cmd += ["--labels", str(labels)]
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    load = os.getloadavg()[0]  # the machine's load (others' jobs included) as the run starts
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        sys.exit(f"{which} worker failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    res = json.loads(lines[-1][len("RESULT ") :])
    res["who"] = which
    res["load"] = load
    print(
        f"  {which:8s} {res['words_per_s']:>12,.0f} words/s  train {res['train_s']:7.1f} s  "
        f"peak {res['peak_rss_mib']:5.0f} MiB  load {load:.1f}",
        flush=True,
    )
    return res


def warm_up() -> None:
    """Compile likewise's kernel into numba's on-disk cache first, so no timed run pays for it (a
    one-time cost of a fresh install, like building gensim's C extension)."""
    from likewise.training.train import train

    # the width the runs use: from 32 columns up the kernel is compiled for the exact width
    train([["a", "b", "c", "d"]] * 50, min_count=1, epochs=1, dim=TEXT["dim"], progress=False)


def text_corpus(tokens: int | None, install: bool) -> Path:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / (f"text-{tokens}.txt" if tokens else "text.txt")
    if not path.exists():
        tmp = path.with_suffix(".tmp.txt")
        cmd = [sys.executable, str(SHARED / "build_text_corpus.py"), str(tmp)]
        cmd += (["--tokens", str(tokens)] if tokens else []) + (["--install"] if install else [])
        print("building the corpus:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        tmp.rename(path)
    return path


def basket_corpus(n: int) -> tuple[Path, Path, int]:
    """Planted groups with Zipf popularity, one basket per line; returns (text, labels, largest basket)."""
    from likewise.data.datasets import planted_baskets

    DATA.mkdir(parents=True, exist_ok=True)
    path, lab = DATA / f"baskets-{n}.txt", DATA / f"baskets-{n}.labels.tsv"
    if not path.exists():
        baskets, labels = planted_baskets(
            n_groups=500, group_size=40, n_baskets=n, basket_size=(2, 12), noise=0.1, zipf=1.0, seed=0
        )
        path.with_suffix(".tmp").write_text("".join(" ".join(b) + "\n" for b in baskets), encoding="utf-8")
        path.with_suffix(".tmp").rename(path)
        lab.write_text("".join(f"{k}\t{v}\n" for k, v in labels.items()), encoding="utf-8")
    largest = max(len(line.split()) for line in open(path, encoding="utf-8"))
    return path, lab, largest


def table(rows: list[dict], cols: list[tuple[str, str, str]]) -> str:
    head = [c[1] for c in cols]
    cells = [[format(r[c[0]], c[2]) if c[0] in r else "-" for c in cols] for r in rows]
    w = [max(len(h), *(len(x[i]) for x in cells)) for i, h in enumerate(head)]
    out = ["  ".join(h.rjust(w[i]) for i, h in enumerate(head)), "  ".join("-" * x for x in w)]
    out += ["  ".join(x.rjust(w[i]) for i, x in enumerate(r)) for r in cells]
    return "\n".join(out)


def summarise(results: list[dict], cols) -> tuple[str, dict]:
    """The runs, then min / median / max of each trainer's numbers (each column on its own)."""
    rows, med = [], {}
    for who in ("gensim", "likewise"):
        mine = [r for r in results if r["who"] == who]
        numeric = [k for k in mine[0] if isinstance(mine[0][k], int | float)]
        rows += [dict(r, who=f"{who} #{i + 1}") for i, r in enumerate(mine)]
        for stat, fn in (("min", min), ("median", statistics.median), ("max", max)):
            if stat != "median" and len(mine) < 3:
                continue
            m = {k: fn(r[k] for r in mine) for k in numeric}
            m["who"] = f"{who} ({stat})"
            rows.append(m)
            if stat == "median":
                med[who] = m
    return table(rows, cols), med


def paired(results: list[dict], key: str, how) -> list[float]:
    """``how(likewise, gensim)`` of each run: the runs alternate, so run i pairs the i-th of each."""
    g = [r for r in results if r["who"] == "gensim"]
    lw = [r for r in results if r["who"] == "likewise"]
    return [how(b[key], a[key]) for a, b in zip(g, lw, strict=True)]


def spread(values: list[float], fmt: str) -> str:
    lo, mid, hi = min(values), statistics.median(values), max(values)
    return f"min {lo:{fmt}}, median {mid:{fmt}}, max {hi:{fmt}}"


def alternate(runs: int, corpus: Path, threads: int, params: dict, labels: Path | None = None) -> list[dict]:
    results = []
    for i in range(runs):
        print(f"run {i + 1}/{runs}", flush=True)
        for who in ("gensim", "likewise"):
            p = dict(params)
            if who == "gensim" and "gensim" in params:
                p.update(params["gensim"])
            results.append(run_worker(who, corpus, threads, p, labels))
    return results


def scaling(corpus: Path, threads: int) -> None:
    """likewise's scaling: threads, corpus size (1 epoch), vocabulary size vs peak memory."""
    one = dict(TEXT, epochs=1)
    rows = []
    for t in sorted({1, threads}):
        rows.append({"what": f"threads={t}", **run_worker("likewise", corpus, t, one)})
    rows.append(dict(rows[-1], what="corpus x1"))
    lines = corpus.read_text(encoding="utf-8")
    for mult in (4, 16):
        big = DATA / f"{corpus.stem}-x{mult}.txt"
        if not big.exists():
            with open(big.with_suffix(".tmp"), "w", encoding="utf-8") as f:
                for _ in range(mult):
                    f.write(lines)
            big.with_suffix(".tmp").rename(big)
        # min_count scaled with the copies: a word kept at x1 (count >= 5) is kept at xN (>= 5N) and no
        # other, so the vocabulary (and the tables) stay the same and only the corpus grows.
        same_vocab = dict(one, min_count=one["min_count"] * mult)
        rows.append({"what": f"corpus x{mult}", **run_worker("likewise", big, threads, same_vocab)})
    rng = np.random.default_rng(0)
    for v in (10_000, 100_000, 1_000_000):
        path = DATA / f"zipf-vocab-{v}.txt"
        if not path.exists():
            # 5 M tokens; Zipf-like ranks so every id is drawn often enough to pass min_count.
            ids = np.minimum((rng.pareto(0.6, size=5_000_000) * 3).astype(np.int64), v - 1)
            ids = np.concatenate([ids, np.repeat(np.arange(v), 5)])
            rng.shuffle(ids)
            words = np.char.add("w", ids.astype(str))
            path.write_text(
                "\n".join(" ".join(c) for c in np.array_split(words, len(words) // 20)), encoding="utf-8"
            )
        r = run_worker("likewise", path, threads, dict(one, evaluate=False))
        rows.append({"what": f"vocab {r['vocab']:,}", **r})
    for r in rows:  # the bound: peak = the two float32 tables + what is left (runtime, one block)
        r["tables_mib"] = 2 * r["vocab"] * TEXT["dim"] * 4 / 2**20
        r["rest_mib"] = r["peak_rss_mib"] - r["tables_mib"]
    print("\nlikewise scaling (1 epoch each; words/s = raw tokens / train seconds)")
    cols = [
        ("what", "run", "s"),
        ("tokens", "tokens", ",d"),
        ("vocab", "vocab", ",d"),
        ("words_per_s", "words/s", ",.0f"),
        ("train_s", "train s", ".1f"),
        ("peak_rss_mib", "peak MiB", ".0f"),
        ("tables_mib", "tables MiB", ".0f"),
        ("rest_mib", "rest MiB", ".0f"),
        ("load", "load", ".1f"),
    ]
    print(table(rows, cols))
    curve = [r for r in rows if r["what"].startswith("corpus")]
    print(
        "peak memory against corpus size (x1, x4, x16): "
        + ", ".join(f"{r['peak_rss_mib']:.0f}" for r in curve)
        + f" MiB; rest (peak - tables): {spread([r['rest_mib'] for r in rows], '.0f')} MiB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", choices=["gensim", "likewise"], help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    ap.add_argument("--params", help=argparse.SUPPRESS)
    ap.add_argument("--labels", help=argparse.SUPPRESS)
    ap.add_argument("--tokens", type=int, default=None, help="cut the text corpus to about N tokens")
    ap.add_argument("--runs", type=int, default=3, help="runs of each trainer, alternating")
    ap.add_argument(
        "--no-text", action="store_true", help="skip the text comparison (baskets or scaling alone)"
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--baskets", type=int, default=0, help="add the basket-mode comparison on N baskets")
    ap.add_argument("--scaling", action="store_true", help="add likewise's scaling figures")
    ap.add_argument("--install", action="store_true", help="let the corpus builder apt-install its sources")
    ap.add_argument("--smoke", action="store_true", help="tiny cut, 1 run, 1 epoch: checks the pipeline")
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    text = dict(TEXT)
    if a.smoke:
        a.tokens, a.runs, a.baskets = a.tokens or 100_000, 1, a.baskets and 20_000
        text["epochs"] = 1
    corpus = text_corpus(a.tokens, a.install)
    warm_up()
    print(f"text corpus: {corpus} ({corpus.stat().st_size / 2**20:.0f} MiB); {a.threads} threads; {text}")
    results = [] if a.no_text else alternate(a.runs, corpus, a.threads, text)
    cols = [
        ("who", "trainer", "s"),
        ("words_per_s", "words/s", ",.0f"),
        ("train_s", "train s", ".1f"),
        ("prepare_s", "vocab s", ".1f"),
        ("peak_rss_mib", "peak MiB", ".0f"),
        ("analogy", "analogy", ".4f"),
        ("analogy_n", "questions", ".0f"),
        ("ws353", "WS353", ".4f"),
        ("simlex", "SimLex", ".4f"),
        ("load", "load", ".1f"),
    ]
    text_table, text_med = summarise(results, cols) if results else ("", {})
    basket_table = None
    if a.baskets:
        path, labels, largest = basket_corpus(a.baskets)
        params = dict(
            mode="basket", dim=100, window=largest, negative=5, min_count=1, sample=0.0, epochs=5,
            gensim={"shrink_windows": False},
        )  # fmt: skip
        if a.smoke:
            params["epochs"] = 1
        print(f"baskets: {path} ({a.baskets:,} baskets, largest {largest})")
        bres = alternate(a.runs, path, a.threads, params, labels)
        bcols = [
            ("who", "trainer", "s"),
            ("words_per_s", "items/s", ",.0f"),
            ("train_s", "train s", ".1f"),
            ("peak_rss_mib", "peak MiB", ".0f"),
            ("purity", "kNN purity@10", ".4f"),
            ("load", "load", ".1f"),
        ]
        basket_table, bmed = summarise(bres, bcols)
    if a.scaling:
        scaling(corpus, a.threads)
    if basket_table:
        ratio_b = bmed["likewise"]["words_per_s"] / bmed["gensim"]["words_per_s"]
        print(f"\nbasket mode ({a.baskets:,} baskets)\n{basket_table}")
        print("basket ratio per run: " + spread(paired(bres, "words_per_s", lambda x, y: x / y), ".2f"))
        mem_b = bmed["likewise"]["peak_rss_mib"] / bmed["gensim"]["peak_rss_mib"]
        print(f"basket peak memory likewise/gensim: {mem_b:.2f}")
        print(f"basket ratio likewise/gensim: {ratio_b:.2f}x")
    if not results:
        return None
    g, lw = text_med["gensim"], text_med["likewise"]
    print(f"\ntext, sg neg5 win5 dim100 min_count5 sample1e-3 x{text['epochs']} epochs\n{text_table}")
    gaps = (
        paired(results, "analogy", lambda x, y: 100 * (x - y)),
        paired(results, "ws353", lambda x, y: x - y),
        paired(results, "simlex", lambda x, y: x - y),
    )
    print(
        f"quality gaps per run (likewise - gensim): analogy pts {spread(gaps[0], '+.2f')}; "
        f"WS353 {spread(gaps[1], '+.4f')}; SimLex {spread(gaps[2], '+.4f')}"
    )
    print("words/s ratio per run: " + spread(paired(results, "words_per_s", lambda x, y: x / y), ".2f"))
    print(
        "peak memory likewise/gensim per run: "
        + spread(paired(results, "peak_rss_mib", lambda x, y: x / y), ".2f")
        + f" (medians {lw['peak_rss_mib']:.0f} / {g['peak_rss_mib']:.0f} MiB)"
    )
    print(
        f"quality gaps (likewise - gensim): analogy {100 * (lw['analogy'] - g['analogy']):+.2f} pts, "
        f"WS353 {lw['ws353'] - g['ws353']:+.4f}, SimLex {lw['simlex'] - g['simlex']:+.4f}"
    )
    print(f"ratio likewise/gensim words/s: {lw['words_per_s'] / g['words_per_s']:.2f}x")


if __name__ == "__main__":
    main()
