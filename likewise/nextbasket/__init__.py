"""What a customer will buy next, by job: each customer's purchase counts per product (``history``), what
similar customers buy (``neighbours``), the fitted model as a typed, self-checking record (``model``), the
named features of a candidate (``features``), the fit on held-out baskets (``fit``) and the query
(``query``; :func:`likewise.retail.next_basket` is its public name). Modules are imported by their full
name."""

from .._lazy import lazy_names

__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
