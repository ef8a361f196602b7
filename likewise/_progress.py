"""The one progress reporter: a bar on a terminal, a line per phase and per pass in a log, or nothing.

``progress`` is one of :data:`MODES` (or a bool: True is ``"bar"``, False ``"none"``), resolved once by
:func:`progress_of` into a :class:`Progress` that the run carries:

- ``"bar"``: a tqdm bar (``tqdm.auto``, so notebooks get a widget) when tqdm is there (an optional extra,
  ``pip install '.[progress]'``); without it a bar degrades to one line per finished pass on stderr;
- ``"log"``: one line per phase and per pass with its elapsed time and rate, through the ``likewise``
  logger (:data:`logger`); when logging is not set up to show them (no handler, or a level above INFO)
  the lines go to stderr, so a run asked for lines always prints them;
- ``"none"``: nothing;
- ``"auto"`` (and None): a bar when stderr is a terminal, otherwise the lines of ``"log"`` through the
  logger alone: a library stays quiet in a log unless the application configured logging (the
  ``likewise`` command does: :func:`lines_to_stderr`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
from collections.abc import Iterator
from typing import Any

__all__ = [
    "MODES",
    "Bar",
    "Progress",
    "bar",
    "lines_to_stderr",
    "log_line",
    "logger",
    "note",
    "progress_of",
    "rate",
]

#: The values of ``progress`` (``likewise train --progress``); the first is the default.
MODES = ("auto", "bar", "log", "none")
#: What each mode does (the CLI's help reads it).
MODES_HELP = (
    "auto: a bar on a terminal, a line per phase and per pass otherwise; bar; log: a line per phase and "
    "per pass with its elapsed time and rate; none: nothing"
)
#: The logger the lines of ``"log"`` go through (``logging.getLogger("likewise")``).
logger = logging.getLogger("likewise")


@dataclasses.dataclass(frozen=True)
class Progress:
    """A resolved progress setting: ``mode`` is ``"bar"``, ``"log"`` or ``"none"``; ``echo`` sends the
    lines of ``"log"`` to stderr when logging would not show them. False when ``mode`` is ``"none"``."""

    mode: str = "none"
    echo: bool = True

    def __bool__(self) -> bool:
        return self.mode != "none"


def progress_of(value: Any, main: bool = True) -> Progress:
    """The :class:`Progress` of a ``progress`` argument (one of :data:`MODES`, a bool, None or a
    :class:`Progress`); ``main=False`` (a rank other than 0 of a multi-process run) shows nothing."""
    if isinstance(value, Progress):
        resolved = value
    elif value is None or value == "auto":
        resolved = Progress("bar") if sys.stderr.isatty() else Progress("log", echo=False)
    elif value is True or value == "bar":
        resolved = Progress("bar")
    elif value is False or value == "none":
        resolved = Progress("none")
    elif value == "log":
        resolved = Progress("log")
    else:
        raise ValueError(f"progress == {value!r}, must be one of {', '.join(MODES)} (or True / False)")
    return resolved if main else Progress("none")


def _mode(progress: Any) -> str:
    """The mode of a run's progress; a plain bool (older callers) is a bar or nothing."""
    if isinstance(progress, Progress):
        return progress.mode
    return "bar" if progress else "none"


class Bar:
    """A progress bar over ``total`` units; ``enabled=False`` makes every call a no-op."""

    def __init__(self, total: int, desc: str, unit: str, enabled: bool) -> None:
        self.enabled = enabled
        self.desc, self.unit, self.total = desc, unit, total
        self.done = 0
        self.postfix: dict[str, Any] = {}
        self._tqdm = None
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._tqdm = tqdm(
                    total=total,
                    desc=desc,
                    unit=unit,
                    unit_scale=True,
                    file=sys.stderr,
                    leave=True,
                    dynamic_ncols=True,
                )

    def update(self, n: int, **postfix: Any) -> None:
        """Advance by ``n`` units and show ``postfix`` (e.g. ``loss=2.31``)."""
        if not self.enabled:
            return
        self.done += n
        self.postfix = postfix
        if self._tqdm is not None:
            if postfix:
                self._tqdm.set_postfix(postfix, refresh=False)
            self._tqdm.update(n)

    def close(self) -> None:
        """Finish the bar (without tqdm: print its one line)."""
        if not self.enabled:
            return
        if self._tqdm is not None:
            self._tqdm.close()
            return
        tail = " ".join(f"{k}={v}" for k, v in self.postfix.items())
        sys.stderr.write(f"{self.desc}: {self.done:,}/{self.total:,} {self.unit} {tail}\n".rstrip() + "\n")
        sys.stderr.flush()


def bar(total: int, desc: str, unit: str = "it", enabled: Any = True) -> Bar:
    """A :class:`Bar`, shown only when ``enabled`` is a bar (``"log"`` prints its lines elsewhere)."""
    return Bar(total, desc, unit, _mode(enabled) == "bar")


def note(message: str, enabled: Any = True) -> None:
    """Say ``message`` as a line of its own: above a bar (mode ``"bar"``), through the ``likewise``
    logger (mode ``"log"``), or not at all."""
    mode = _mode(enabled)
    if mode == "none":
        return
    if mode == "log":
        shown = logger.isEnabledFor(logging.INFO) and logger.hasHandlers()
        if shown or not getattr(enabled, "echo", True):
            logger.info(message)
            return
        sys.stderr.write(f"likewise: {message}\n")
        sys.stderr.flush()
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None
    if tqdm is not None:
        tqdm.write(message, file=sys.stderr)  # redraws a live bar below the line
        return
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def log_line(message: str, progress: Any) -> None:
    """Say ``message`` only when ``progress`` asks for log lines (a bar shows the same thing itself)."""
    if _mode(progress) == "log":
        note(message, progress)


def rate(n: float, seconds: float, unit: str) -> str:
    """``"12,345 tokens/s"``: ``n`` over ``seconds``."""
    return f"{n / max(seconds, 1e-9):,.0f} {unit}/s"


class _CurrentStderr(logging.Handler):
    """Writes each record to the ``sys.stderr`` of the moment (a test's capture, a redirected stream)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # a closed stream must not stop training
            self.handleError(record)


@contextlib.contextmanager
def lines_to_stderr() -> Iterator[None]:
    """Within the block, the ``likewise`` logger's INFO lines go to stderr as ``likewise: <line>``
    (the command line's set-up: an application decides where a library's log goes)."""
    handler = _CurrentStderr(logging.INFO)
    handler.setFormatter(logging.Formatter("likewise: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
