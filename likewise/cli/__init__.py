"""The ``likewise`` command: arguments -> one library call -> printed output. No logic of its own.

One module per command group (``train``, ``query``, ``demo``, ``datasets``, ``evaluation``, ``nn``,
``retail``, ``typed_space``, ``serve``, ``tune``), each with ``register(commands)``; what they share is in
:mod:`likewise.cli._common`. A group imports only the standard library and ``_common`` at import time
and the library inside its command functions, so ``likewise info`` never loads numba.
Bad input exits with status 1 and one line on stderr (``--debug`` shows the traceback); usage errors
exit with status 2, as argparse does.

Under ``torchrun`` (``WORLD_SIZE`` > 1) only ``train`` uses every process; any other command runs on
rank 0 alone, as one process (it sees ``WORLD_SIZE=1``), so it prints and writes once, and the other
ranks exit at once with status 0. Rank 0 says so in one line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence

from likewise._secrets import redact
from likewise.errors import LikewiseError

from .._lazy import lazy_names
from . import datasets, demo, evaluation, nn, query, retail, serve, train, tune, typed_space
from ._common import Commands, unknown_options_hint

__all__ = ["build_parser", "main"]

# The order of ``likewise --help``: the core commands first, then the groups by name.
_GROUPS = (train, query, demo, datasets, evaluation, nn, retail, typed_space, serve, tune)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``likewise`` command.

    Returns
    -------
    argparse.ArgumentParser
    """
    from likewise._version import __version__

    p = argparse.ArgumentParser(prog="likewise", description="Learn item vectors from what goes together.")
    p.add_argument("--version", action="version", version=f"likewise {__version__}")
    commands = Commands(p.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    for group in _GROUPS:
        group.register(commands)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``likewise``; default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0, 1 for bad input (one line on stderr), 130 when interrupted.
    """
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(words)
    if extra:  # argparse's message, with the option meant when we can tell
        parser.error(f"unrecognized arguments: {' '.join(extra)}{unknown_options_hint(parser, words, extra)}")
    try:
        with _one_process_unless_train(args) as here:
            if here:
                args.func(args)
    except BrokenPipeError:
        # The reader went away (`likewise info MODEL | head`): not an error worth a message.
        # Point stdout at devnull so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (LikewiseError, OSError) as e:
        if args.debug:
            raise
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"likewise: error: {redact(str(msg))}", file=sys.stderr)  # no password, whatever raised it
        return 1
    except KeyboardInterrupt:
        print("likewise: interrupted", file=sys.stderr)
        return 130
    return 0


@contextlib.contextmanager
def _one_process_unless_train(args: argparse.Namespace) -> Iterator[bool]:
    """Yield whether this process runs the command: under ``torchrun`` a command other than ``train``
    (whose parser sets ``all_ranks``) runs on rank 0 only, told it is one process of one."""
    from likewise.training.distributed import detect

    d = detect()  # the one place RANK / WORLD_SIZE are read
    if not d.active or getattr(args, "all_ranks", False):
        yield True
        return
    if not d.main:
        yield False
        return
    print(
        f"likewise: note: {args.command!r} runs in one process: rank 0 of this torchrun of {d.world} "
        "answers and the other ranks exit (only 'train' uses every process)",
        file=sys.stderr,
    )
    saved = {k: os.environ.get(k) for k in ("RANK", "WORLD_SIZE")}
    os.environ.update(RANK="0", WORLD_SIZE="1")  # a command that trains (tune, demo) trains here alone
    try:
        yield True
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
