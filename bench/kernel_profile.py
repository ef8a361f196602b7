"""Where the batched kernel's time goes, on one thread, without hardware counters.

Usage::

    .venv/bin/python bench/kernel_profile.py                  # first 2 M tokens of the bench text
    .venv/bin/python bench/kernel_profile.py --tokens 500000 --repeat 3

Machines like these (KVM guests) expose no ``perf`` hardware events, so the profile is built from what
can be measured on one thread: CPU time (``time.thread_time``, immune to other jobs' share of the
cores, not to their use of the shared caches), counts from the kernel (tokens, kept tokens, pairs) and
ablations. Each ablation is the kernel's own source with one part cut out (compiled into a temporary
module, its numba cache beside it); the difference in CPU time is that part's cost. The rows:

* ``full``: the kernel as shipped (``train_sgns_batched_block_serial``'s driver, dim 100, window 5,
  negative 5, group 16, sample 1e-3);
* ``no prefetch``: without the row prefetches of the next group;
* ``no math``: without the score products and the two row updates (the rows are still copied);
* ``no math, no copy``: also without copying the group's rows into the scratch buffers;
* ``chunk loop only``: no group trained at all (subsampling, windows, negative draws, bookkeeping).

Cycles are CPU seconds x the TSC frequency (``--ghz``, default from /proc/cpuinfo's BogoMIPS / 2);
a core whose clock boosts above it does more per "cycle" than counted. The FMA peak is 16 fp32
multiply-adds per cycle (two 256-bit FMA pipes, Zen 4; AVX-512 runs on them in two halves). Flops per
pair: ``(negative + 1) x dim`` multiply-adds for the scores and as many for each of the two updates.

The negative table's cache misses are estimated, not counted: negatives are drawn independently from
``count ** 0.75``, for which Che's approximation of an LRU cache of ``R`` rows is accurate (the
characteristic time ``T`` solves ``sum(1 - exp(-p T)) = R``; the hit rate is ``sum(p (1 - exp(-p T)))``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

_PAD = " " * 16
_W_UPDATE = "    for b in range(nb):\n        r = ctx[b]\n        t = 0\n"
_C_UPDATE = "    for t in range(nt):\n        r = tg[t]\n        b = 0\n"
_CUTS = {
    "no prefetch": [(_PAD + "_prefetch_group(W, C, cx[q], nb, tgs[q], nt)\n", "")],
    "no math": [
        (_PAD + "_dots2(xb, tb, b, t, k, width, gm)\n", _PAD + "gm[b, t] = 0.1\n"),
        (_PAD + "s0, s1, s2 = _dots(xb, tb, b, t, k, width)\n", _PAD + "s0 = s1 = s2 = 0.1\n"),
        (_W_UPDATE, _W_UPDATE.replace("range(nb)", "range(0)")),
        (_C_UPDATE, _C_UPDATE.replace("range(nt)", "range(0)")),
    ],
}
_CUTS["no math, no copy"] = _CUTS["no math"] + [
    ("        for d in range(dim):\n            xb[b, d] = W[r, d]\n", ""),
    ("        for d in range(dim):\n            tb[t, d] = C[r, d]\n", ""),
]
_TRAIN = _PAD + "    loss += _group(cx[p], nbs[p], tgs[p], nts[p], W, C, xb, tb, gm, lrs[p], dim)\n"
_CUTS["chunk loop only"] = [(_TRAIN, ""), *_CUTS["no prefetch"]]


def _cut(src: str, old: str, new: str, name: str) -> str:
    """``src`` with the lines ``old`` replaced by ``new``, at whatever indentation the kernel has them
    (both are written as at one indentation; the kernel's own decides)."""
    old_d, new_d = textwrap.dedent(old), textwrap.dedent(new)
    first = old_d.splitlines()[0]
    found = re.search(r"^( *)" + re.escape(first) + "$", src, flags=re.M)
    indented = textwrap.indent(old_d, found.group(1)) if found else None
    if indented is None or indented not in src:
        sys.exit(f"kernel_profile: the kernel changed, cannot cut {old.strip()[:60]!r} for {name!r}")
    return src.replace(indented, textwrap.indent(new_d, found.group(1)))


def variant(name: str, cuts: list[tuple[str, str]], folder: Path):
    """The shipped kernel module with ``cuts`` applied, imported from ``folder``."""
    import likewise.kernels.batched as shipped

    src = Path(shipped.__file__).read_text(encoding="utf-8")
    for old, new in cuts:
        src = _cut(src, old, new, name)
    # the copy lives outside the package: its relative imports name the package's modules
    src = re.sub(r"^from \.(\w+) import", r"from likewise.kernels.\1 import", src, flags=re.M)
    path = folder / f"cut_{abs(hash(name))}.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def che_hit_rate(p: np.ndarray, rows: float) -> float:
    """Hit rate of an LRU cache of ``rows`` rows under independent draws with probabilities ``p``."""
    lo, hi = 0.0, 1.0
    while np.sum(1 - np.exp(-p * hi)) < rows:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.sum(1 - np.exp(-p * mid)) < rows else (lo, mid)
    return float(np.sum(p * (1 - np.exp(-p * hi))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ghz", type=float, default=None)
    a = ap.parse_args()
    from speed_vs_gensim import DATA, text_corpus

    from likewise.data.corpus import build_corpus
    from likewise.kernels import make_keep_prob, make_neg_cum
    from likewise.kernels.params import KernelParams
    from likewise.readers import InputSpec

    ghz = a.ghz
    if ghz is None:
        mips = [float(ln.split(":")[1]) for ln in open("/proc/cpuinfo") if ln.lower().startswith("bogomips")]
        ghz = mips[0] / 2000 if mips else 2.6
    spec = InputSpec(paths=(str(text_corpus(None, False)),), format="text")
    corpus = build_corpus(spec, min_count=5, cache_dir=DATA / "corpus-cache")
    ids, offsets = np.ascontiguousarray(corpus.ids), np.ascontiguousarray(corpus.offsets)
    end = int(np.searchsorted(offsets, min(a.tokens, int(offsets[-1]))))
    n_tok = int(offsets[end])
    counts = np.asarray(corpus.vocab.counts, dtype=np.int64)
    keep, neg = make_keep_prob(counts, 1e-3), make_neg_cum(counts, 0.75)
    V, D, negative = len(counts), 100, 5
    params = KernelParams(
        mode=0, window=5, negative=negative, max_context=50, lr0=0.025, min_lr=1e-4, group=16
    )
    import likewise.kernels.batched as shipped

    mods = {"full": shipped}
    with tempfile.TemporaryDirectory(prefix="likewise-profile-") as tmp:
        for name, cuts in _CUTS.items():
            mods[name] = variant(name, cuts, Path(tmp))
        res: dict[str, list[float]] = {name: [] for name in mods}
        for rep in range(a.repeat + 1):  # the first round compiles and is not counted
            for name, mod in mods.items():
                W = ((np.random.default_rng(1).random((V, D), dtype=np.float32) - 0.5) / D).astype(np.float32)
                C = np.zeros((V, D), np.float32)
                t0 = time.thread_time()
                # one thread, 8 chunks: the block kernel as training calls it (KernelParams whole)
                got = mod.BATCHED_SERIAL(params, ids, offsets, 0, end, W, C, keep, neg, 0, n_tok, 1, 8)
                if rep:
                    res[name].append(time.thread_time() - t0)
                if name == "full":
                    seen, kept, pairs = got[:3]
    best = {name: min(ts) for name, ts in res.items()}
    full = best["full"]
    cyc = full * ghz * 1e9
    fma_pair = 3 * (negative + 1) * D
    print(f"first {n_tok:,} tokens of the bench text; vocab {V:,}; dim {D}; one thread; TSC {ghz:.2f} GHz; "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"tokens {seen:,}  kept {kept:,} ({kept / seen:.1%})  pairs {pairs:,} "
          f"({pairs / kept:.2f} per kept word)")  # fmt: skip
    print(f"CPU {full:.3f} s (best of {a.repeat}): {seen / full / 1e6:.2f} M raw words/s, "
          f"{kept / full / 1e6:.2f} M kept words/s per thread")  # fmt: skip
    print(f"cycles per kept (effective) word {cyc / kept:,.0f}; per pair {cyc / pairs:,.0f}; "
          f"per raw word {cyc / seen:,.0f}")  # fmt: skip
    flops = 2 * fma_pair * pairs
    print(f"flops per kept word {2 * fma_pair * pairs / kept:,.0f}; achieved {flops / cyc:.1f} flops/cycle = "
          f"{flops / cyc / 32:.1%} of the FMA peak (32 flops/cycle/core)")  # fmt: skip
    print("\nablation (CPU s, best of runs; share of the full kernel's time)")
    for name, t in best.items():
        print(f"  {name:18s} {t:7.3f} s  {t / full:6.1%}  {t * ghz * 1e9 / pairs:6.0f} cycles/pair")
    math = best["full"] - best["no math"]
    print(f"  => products and updates {math / full:.0%}, row copies (cache misses) "
          f"{(best['no math'] - best['no math, no copy']) / full:.0%}, sigmoid and group bookkeeping "
          f"{(best['no math, no copy'] - best['chunk loop only']) / full:.0%}, chunk loop "
          f"{best['chunk loop only'] / full:.0%}; prefetching saves "
          f"{(best['no prefetch'] - full) / full:.0%}")  # fmt: skip
    p = counts.astype(np.float64) ** 0.75
    p /= p.sum()
    row_bytes = D * 4
    print(
        f"\nnegative rows (C, {row_bytes} B each) that hit an LRU cache holding R rows, Che's approximation:"
    )
    caches = (("L1d 32 KiB", 32 << 10), ("L2 1 MiB (half of 2 MiB)", 1 << 20), ("L3 16 MiB (half)", 16 << 20))
    for label, size in caches:
        print(f"  {label:24s} R={size // row_bytes:7,d}: hit rate {che_hit_rate(p, size / row_bytes):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
