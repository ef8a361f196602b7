"""The yardsticks a space must beat: counting baselines (``counts``: popular, co-count, PPMI, PPMI-SVD)
and the strongest simple peers as a competent user would configure them (``peers``: EASE and
confidence-weighted ALS), behind one recommender interface (``_ranking``); each declared once
(``counts.PEERS``, of ``registry.Peer``). Modules are imported by their full name."""

from .._lazy import lazy_names

__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
