"""What goes in: item keys and ids (``vocab``), the compiled, memory-mapped corpus every input becomes
(``corpus``, ``corpus_build``; the readers it compiles from are :mod:`likewise.readers`), vectors in and out
in other tools' formats (``formats``), and generated data sets with planted answers (``datasets``,
``eventdata``, ``names``). Modules are imported by their full name; this file imports nothing."""
