"""Is the space any good? Word benchmarks, held-out recommendation, labels -- beside the baselines.

One module per kind of evidence, all re-exported here (``likewise.evaluate.X`` is the public path):

* :mod:`.words` -- :func:`evaluate_analogies` (``questions-words.txt``, 3CosAdd or 3CosMul; with
  3CosAdd the counts equal gensim's ``evaluate_word_analogies``) and :func:`evaluate_pairs`
  (WordSim-353 / SimLex-999: Spearman, Pearson, out-of-vocabulary share, as ``evaluate_word_pairs``).
* :mod:`.split` -- :class:`Split`, :func:`split_sequences`, :func:`save_split` / :func:`load_split`: a
  reproducible train/test split and its folder format.
* :mod:`.holdout` -- :func:`holdout_report`, which scores the model and the baselines of
  :mod:`likewise.baselines.counts` on a split's test part with :func:`ranking_metrics` (HR@K, NDCG@K, MRR,
  coverage); :func:`heldout_loss`; :class:`EmbeddingRecommender`.
* :mod:`.labels` -- :func:`evaluate_labels` (kNN majority-label accuracy, per-label purity),
  :func:`label_purity`, :func:`read_labels`.

Numpy only.
"""

from __future__ import annotations

from .._lazy import lazy_names
from .holdout import (
    METRICS,
    EmbeddingRecommender,
    heldout_loss,
    holdout_cases,
    holdout_report,
    ranking_metrics,
    winners,
)
from .labels import evaluate_labels, label_purity, read_labels
from .split import SPLIT_FORMAT, SPLIT_VERSION, Split, delimiter_for, load_split, save_split, split_sequences
from .words import evaluate_analogies, evaluate_pairs

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
    "delimiter_for",
    "load_split",
    "ranking_metrics",
    "read_labels",
    "save_split",
    "split_sequences",
    "winners",
]


__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
