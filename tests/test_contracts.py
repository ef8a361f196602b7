"""Every index and every training backend against the shared contracts of conftest.py."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import BackendContract, IndexContract

from likewise.index import ExactIndex, IndexParams, build_index


class TestExactIndex(IndexContract):
    recall_floor = 1.0

    def make_index(self, emb):
        return ExactIndex.of(emb)


class TestHnswIndex(IndexContract):
    recall_floor = 0.95

    def make_index(self, emb):
        pytest.importorskip("hnswlib")
        return build_index(emb, IndexParams(m=16, ef_construction=100, ef_search=64), threads=1)


class TestBatchedKernel(BackendContract):
    """The default CPU kernel: negatives shared by the contexts of one centre (groups of 16)."""

    backend = {"backend": "cpu", "neg_group": 16}


class TestClassicKernel(BackendContract):
    """The per-pair kernel (word2vec's loop), selected by neg_group=1."""

    backend = {"backend": "cpu", "neg_group": 1}


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
class TestTorchBackend(BackendContract):
    """The torch backend (minibatch steps, CPU here), against the same contract as the numba kernels."""

    backend = {"backend": "torch"}
