"""A new user's first training: wall time from a cold compile cache, then warm, beside gensim.

Usage::

    .venv/bin/python bench/first_run.py                      # seed baskets, 200 KB text, 10 k and 1 M tokens
    .venv/bin/python bench/first_run.py --tokens 10000,1000000,13000000

Each run is a fresh process (``likewise train ... --quiet``, import included), as a user types it:

* **cold**: a fresh, empty ``NUMBA_CACHE_DIR`` and ``LIKEWISE_CACHE`` (a new install: every kernel
  compiles, the corpus is compiled);
* **warm**: the same command again with the caches the cold run filled;
* **gensim**: ``gensim.models.Word2Vec`` on the same text with the same settings in a fresh process,
  its import included (gensim's kernels are compiled ahead of time: it has no cold start).

Inputs: the seed demo's 400 baskets written as ``orders.csv`` (``likewise.data.datasets.demo_baskets``,
trained as a log: ``--basket-col order_id --item-col product``, the defaults); about 200 KB of English
(this project's README and docs); and Zipf-distributed synthetic text of ``--tokens`` tokens (20,000
word types, exponent 1.1, lines of 5-25 words, seeded). Text trains with likewise's defaults (skip-gram,
dim 100, window 5, negative 5, min_count 5) at ``--epochs 5``, gensim's pass count, and gensim with
the same (``sg=1``, ``workers`` = the cores); the baskets train with every default (``epochs="auto"``).
Prints one row per input: cold, warm, gensim (seconds) and cold / gensim.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# Text trains gensim's amount: 5 passes (likewise's default epochs="auto" would also run trial passes
# on a held-out slice and may choose more, which is more work than the gensim column does).
TEXT = ["--epochs", "5"]

GENSIM = """
import sys, time
t0 = time.perf_counter()
from gensim.models import Word2Vec
Word2Vec(corpus_file=sys.argv[1], sg=1, vector_size=100, window=5, negative=5, min_count=5, epochs=5,
         workers=int(sys.argv[2]))
"""


def _seed_orders(folder: Path) -> Path:
    from likewise.data.datasets import demo_baskets

    path = folder / "orders.csv"
    with open(path, "w", encoding="utf-8") as f:
        f.write("order_id,product\n")
        for i, basket in enumerate(demo_baskets(400, seed=0)):
            for item in basket:
                f.write(f'{i},"{item}"\n')
    return path


def _english(folder: Path, chars: int = 200_000) -> Path:
    text = ""
    for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text += p.read_text(encoding="utf-8") + "\n"
    while len(text) < chars:
        text += text
    path = folder / "english.txt"
    path.write_text(text[:chars], encoding="utf-8")
    return path


def _zipf_text(folder: Path, tokens: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    types = 20_000
    p = 1.0 / np.arange(1, types + 1) ** 1.1
    words = rng.choice(types, size=tokens, p=p / p.sum())
    path = folder / f"zipf_{tokens}.txt"
    with open(path, "w", encoding="utf-8") as f:
        i = 0
        while i < tokens:
            n = int(rng.integers(5, 26))
            f.write(" ".join(f"w{w}" for w in words[i : i + n]) + "\n")
            i += n
    return path


def _run(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", default="10000,1000000", help="comma-separated sizes of the synthetic text")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    likewise = str(Path(sys.executable).parent / "likewise")
    try:
        import gensim  # noqa: F401

        have_gensim = True
    except ImportError:
        have_gensim = False
        print("gensim is not installed (pip install -e '.[bench]'): its column is left empty")
    with tempfile.TemporaryDirectory(prefix="likewise-first-run-") as tmp:
        folder = Path(tmp)
        inputs: list[tuple[str, Path, list[str]]] = [
            (
                "seed baskets (400, as a log)",
                _seed_orders(folder),
                ["--basket-col", "order_id", "--item-col", "product"],
            ),
            ("English text, 200 KB", _english(folder), TEXT),
        ]
        for n in (int(t) for t in args.tokens.split(",")):
            inputs.append((f"Zipf text, {n:,} tokens", _zipf_text(folder, n), TEXT))
        print(f"{'input':34s} {'cold s':>8s} {'warm s':>8s} {'gensim s':>9s} {'cold/gensim':>12s}")
        for i, (name, path, extra) in enumerate(inputs):
            caches = folder / f"caches-{i}"
            env = dict(
                os.environ, NUMBA_CACHE_DIR=str(caches / "numba"), LIKEWISE_CACHE=str(caches / "corpora")
            )
            cmd = [likewise, "train", str(path), *extra, "--quiet", "--threads", str(args.threads)]
            cold = _run([*cmd, "-o", str(folder / f"m{i}c")], env)
            warm = _run([*cmd, "-o", str(folder / f"m{i}w")], env)
            gs = float("nan")
            if have_gensim and extra is TEXT:
                gs = _run([sys.executable, "-c", GENSIM, str(path), str(args.threads)], dict(os.environ))
            ratio = f"{cold / gs:12.2f}" if gs == gs else f"{'-':>12s}"
            gcol = f"{gs:9.2f}" if gs == gs else f"{'-':>9s}"
            print(f"{name:34s} {cold:8.2f} {warm:8.2f} {gcol} {ratio}", flush=True)


if __name__ == "__main__":
    main()
