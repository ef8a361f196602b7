"""Applications on a trained space beyond retail's (:mod:`likewise.retail`): campaigns in a typed space
(``campaigns``), what to read next (``content``), new products placed from their attributes
(``coldstart``) and the seed demo (``demo``). Modules are imported by their full name; this file imports only
its lazy loader (``likewise._lazy``)."""

from .._lazy import lazy_names

__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
