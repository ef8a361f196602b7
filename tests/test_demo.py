"""The seed demo: each query product's nearest three are from its own department, and a map is drawn."""

from __future__ import annotations

import struct

import pytest

from likewise.apps.demo import DEMO_QUERIES, run_demo
from likewise.data.datasets import DEMO_CATALOGUE, demo_baskets, demo_labels


def png_size(path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_demo_baskets_follow_the_recipe():
    baskets = demo_baskets(400, seed=0)
    labels = demo_labels()
    assert len(baskets) == 400 and len(labels) == 15
    assert sum(len(d) for d in DEMO_CATALOGUE.values()) == 15
    core_depts = [len({labels[p] for p in b[:3]}) for b in baskets]
    assert set(core_depts) == {1}
    extra = sum(len(b) == 4 for b in baskets)
    assert 50 <= extra <= 110  # about one in five (duplicates of the basket's own items are skipped)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_demo_neighbours_are_from_the_same_department(tmp_path, seed):
    res = run_demo(tmp_path / "demo", seed=seed)
    labels = demo_labels()
    for q in DEMO_QUERIES:
        got = res.neighbours[q].keys
        assert len(got) == 3
        assert {labels[k] for k in got} == {labels[q]}, (q, got)
    assert (res.model_path / "manifest.json").exists()
    assert res.map_path is not None
    w, h = png_size(res.map_path)
    assert w >= 600 and h >= 500
