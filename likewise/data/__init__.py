"""What goes in: item keys and ids (``vocab``), the compiled, memory-mapped corpus every input becomes
(``corpus``, ``corpus_build``; the readers it compiles from are :mod:`likewise.readers`), vectors in and out
in other tools' formats (``formats``), and generated data sets with planted answers (``datasets``,
``eventdata``, ``names``). Modules are imported by their full name."""

from .._lazy import lazy_names

__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
