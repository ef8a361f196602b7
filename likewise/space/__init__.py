"""A trained space and what it answers: ``embeddings`` (the :class:`Embeddings` class, its mixins in
``analogies``, ``affinity``, ``gensim_names``, ``itemtable``, ``persist``), what a query hands back
(``results``: neighbours, tagged vectors, fingerprints), the arrays behind the answers (``search``,
``itemitem``, ``completion``), customers and item types (``customers``, ``itemtypes``) and the files of a
saved space (``store``). Modules are imported by their full name."""

from .._lazy import lazy_names

__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
