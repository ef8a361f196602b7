"""Subcommands of the ``likewise`` command beyond the core ones in :mod:`likewise.cli`.

Each module here defines ``register(sub, common)``, which adds its subparsers to ``sub`` (the
``argparse`` subparsers action) with ``common`` (the ``--json``/``--debug`` parent parser) as a parent.
Modules are discovered by name, so adding a file adds its commands. A module imports only ``argparse``
and the helpers in :mod:`likewise.cli` at import time; the library and its optional dependencies are
imported inside the command functions, so ``likewise info`` stays fast.
"""
