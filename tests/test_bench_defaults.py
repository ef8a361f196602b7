"""Smoke cut of ``bench/defaults_vs_baselines.py``: the generated data sets, every row, at tiny sizes.

It checks that the benchmark runs and reports a complete, sane table, not which row wins: the figures
come from the full run (``--sizes full``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "defaults_vs_baselines.py"
HAS_IMPLICIT = importlib.util.find_spec("implicit") is not None


def test_defaults_vs_baselines_smoke(tmp_path):
    out = tmp_path / "report.json"
    env = dict(os.environ, LIKEWISE_CACHE=str(tmp_path / "cache"))
    sets = ["retail", "zipf-groups", "mixed-tastes"]  # the Debian sets depend on the machine's apt lists
    cmd = [sys.executable, str(SCRIPT), "--sizes", "small", "--seeds", "1,2", "--json", str(out)]
    cmd += ["--datasets", ",".join(sets)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout

    peers = ["ease"] + (["als"] if HAS_IMPLICIT else [])  # the tuned learned peers
    expected = ["likewise", "popular", "cocount", "ppmi", "ppmi-svd", *peers]
    report = json.loads(out.read_text("utf-8"))
    assert report["seeds"] == [1, 2]
    assert set(report["datasets"]) == set(sets)
    for name, ds in report["datasets"].items():
        assert f"== {name}:" in text
        summary = ds["summary"]
        assert summary["methods"] == expected
        assert set(summary["metrics"]) >= {"hr", "ndcg"}
        assert any(m.startswith("knn:") for m in summary["metrics"])
        for method in expected:
            for metric in summary["metrics"]:
                s = summary["stats"][method][metric]
                if method == "popular" and metric.startswith("knn:"):
                    assert s is None  # popularity offers no item vectors
                    continue
                assert len(s["values"]) == 2
                assert all(0.0 <= v <= 1.0 for v in s["values"]), (name, method, metric, s)
                assert s["sd"] >= 0.0
        # the default model answers at all: better than ranking by popularity alone
        assert summary["stats"]["likewise"]["hr"]["mean"] > summary["stats"]["popular"]["hr"]["mean"]
        assert set(summary["winners"]) == set(summary["metrics"])
        assert all(g["best_baseline"] in expected[1:] for g in summary["margins"].values())
        assert all(g["best_baseline"] in peers for g in summary["peer_margins"].values())
        for run in ds["runs"]:
            assert run["n_cases"] > 0 and run["model_config"]["mode"] == "basket"
            assert run["peers"]["ease"]["lam"] > 0 and run["peers"]["ease"]["tried"]
            if HAS_IMPLICIT:
                assert run["peers"]["als"]["alpha"] in (1.0, 10.0, 40.0, 100.0)
                assert run["peers"]["als"]["regularization"] in (0.1, 1.0, 10.0, 100.0)

    lines = text.splitlines()
    for method in expected:
        row = re.compile(rf"{re.escape(method)} +\d\.\d{{4}} ± \d\.\d{{4}}")
        assert sum(bool(row.match(ln)) for ln in lines) == len(sets), method  # one row per table
    if not HAS_IMPLICIT:
        assert sum(ln.startswith("als ") and "skipped" in ln for ln in lines) == len(sets)
    assert sum(ln.startswith("winner ") for ln in lines) == len(sets)
    assert sum(ln.startswith("likewise - best other: ") for ln in lines) == len(sets)
    assert sum(ln.startswith("likewise - best peer (ease, als): ") for ln in lines) == len(sets)
    assert sum(ln.strip().startswith("peers (chosen on a held-out slice") for ln in lines) == len(sets)


def test_defaults_vs_baselines_compare_prints_the_likewise_row_twice(tmp_path):
    env = dict(os.environ, LIKEWISE_CACHE=str(tmp_path / "cache"))
    cmd = [sys.executable, str(SCRIPT), "--sizes", "small", "--seeds", "1", "--datasets", "zipf-groups"]
    cmd += ["--compare", '{"max_context": 50}']
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [ln for ln in proc.stdout.splitlines() if ln.startswith("zipf-groups seed 1 ")]
    assert len(rows) == 2 and "defaults" in rows[0] and '{"max_context": 50}' in rows[1]
    for row in rows:
        hr = float(re.search(r"HR@10 (\d\.\d+)", row).group(1))
        knn = float(re.search(r"kNN-10 group (\d\.\d+)", row).group(1))
        assert 0.0 < hr <= 1.0 and 0.0 < knn <= 1.0
