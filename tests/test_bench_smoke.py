"""The speed benchmark's smoke cut: the whole pipeline (corpus from the shared builder, gensim and likewise
in alternating worker processes, the same evaluators, the table and the ratio line) on a tiny corpus.

It checks that the benchmark runs and reports, not how fast anything is: figures come from the full run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILDER = ROOT.parent / "shared" / "bench" / "build_text_corpus.py"


@pytest.mark.skipif(not BUILDER.exists(), reason=f"the shared corpus builder is not at {BUILDER}")
def test_speed_benchmark_smoke(tmp_path):
    pytest.importorskip("gensim")
    env = dict(os.environ, LIKEWISE_BENCH_DATA=str(tmp_path / "data"), LIKEWISE_CACHE=str(tmp_path / "cache"))
    cmd = [sys.executable, str(ROOT / "bench" / "speed_vs_gensim.py"), "--smoke", "--baskets", "3000"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert re.fullmatch(r"ratio likewise/gensim words/s: \d+\.\d\dx", lines[-1]), lines[-1]
    for who in ("gensim #1", "likewise #1", "gensim (median)", "likewise (median)"):
        assert sum(who in ln for ln in lines) == 2, who  # one row in the text table, one in the basket table
    row = next(ln for ln in lines if ln.strip().startswith("likewise #1"))
    words_per_s = float(row.split()[2].replace(",", ""))
    assert words_per_s > 0
    assert any(ln.startswith("basket ratio likewise/gensim: ") for ln in lines)
    assert any(ln.startswith("quality gaps (likewise - gensim): analogy ") for ln in lines)
