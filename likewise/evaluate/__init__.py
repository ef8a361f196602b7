"""Is the space any good? Word benchmarks, held-out recommendation, labels -- beside the baselines.

Everything lives in :mod:`.holdout` for now (moved from ``evaluate.py``); re-exported here, so
``likewise.evaluate.X`` is the public path.

Numpy only.
"""

from __future__ import annotations

from .holdout import (
    METRICS,
    SPLIT_FORMAT,
    SPLIT_VERSION,
    EmbeddingRecommender,
    Split,
    evaluate_analogies,
    evaluate_labels,
    evaluate_pairs,
    heldout_loss,
    holdout_cases,
    holdout_report,
    label_purity,
    load_split,
    ranking_metrics,
    read_labels,
    save_split,
    split_sequences,
    winners,
)

__all__ = [
    "METRICS",
    "SPLIT_FORMAT",
    "SPLIT_VERSION",
    "EmbeddingRecommender",
    "Split",
    "evaluate_analogies",
    "evaluate_labels",
    "evaluate_pairs",
    "heldout_loss",
    "holdout_cases",
    "holdout_report",
    "label_purity",
    "load_split",
    "ranking_metrics",
    "read_labels",
    "save_split",
    "split_sequences",
    "winners",
]
