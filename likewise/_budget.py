"""A time budget: read from ``"10m"``, and kept by not starting work expected to end past it.

:func:`likewise.training.tune.tune` runs trials until its budget is spent. :func:`parse_budget` reads the
budget the user gives; :func:`expected_seconds` says how long the next trial should take, from the trials
before it, so a trial that would end past the budget is not started.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from .errors import InputError

__all__ = ["expected_seconds", "parse_budget", "work_units"]

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
_BUDGET_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([smh])", re.IGNORECASE)


def parse_budget(text: str | float | int) -> float:
    """A time budget in seconds from ``"90s"``, ``"10m"``, ``"1h"``, ``"1h30m"``, ``"2.5m"`` or a number.

    A bare number (or an int / float) is seconds. ``0`` is allowed: only the default trial runs.

    Raises
    ------
    InputError
        Naming the value when it is not a duration (``"10x"``, ``"-5m"``, ``""``).
    """
    if isinstance(text, bool):
        raise InputError(f"budget == {text!r}, must be a duration such as '90s', '10m' or '1h'")
    if isinstance(text, int | float):
        seconds = float(text)
    elif isinstance(text, str):
        s = text.strip()
        try:
            seconds = float(s)
        except ValueError:
            parts = _BUDGET_RE.findall(s)
            if not parts or _BUDGET_RE.sub("", s).strip():
                raise InputError(
                    f"budget {text!r} is not a duration: use a number of seconds or e.g. '90s', '10m', "
                    "'1h', '1h30m'"
                ) from None
            seconds = sum(float(n) * _UNITS[u.lower()] for n, u in parts)
    else:
        raise InputError(f"budget == {text!r}, must be a str such as '10m' or a number of seconds")
    if not math.isfinite(seconds) or seconds < 0:
        raise InputError(f"budget {text!r} must be a finite duration >= 0")
    return seconds


def work_units(settings: dict[str, Any], mode: str) -> float | None:
    """A trial's work in relative units: passes x dimensions x (negatives + 1), x window for sequences
    (a basket's contexts do not depend on the window).

    Parameters
    ----------
    settings : dict
        ``epochs``, ``dim``, ``negative`` and, for sequences, ``window``.
    mode : {"basket", "sequence"}

    Returns
    -------
    float or None
        The work, > 0; None when a setting is missing or not a number.
    """
    try:
        work = float(settings["epochs"]) * float(settings["dim"]) * (float(settings["negative"]) + 1)
        if mode == "sequence":
            work *= float(settings.get("window") or 1)
    except (KeyError, TypeError, ValueError):
        return None
    return work if work > 0 else None


def expected_seconds(trials: Sequence[Any], params: dict[str, Any], mode: str) -> float:
    """How long a trial with ``params`` is expected to take, from the ``trials`` that ran before it.

    The seconds per unit of work (:func:`work_units`) of each random trial that ran (of the default
    trial while no other has: its time holds the trials of ``epochs="auto"`` and the first compile, so
    it overestimates, which errs on the side of the budget), the slowest of them, times the new
    trial's work. Without a usable rate, the longest trial so far.

    Parameters
    ----------
    trials : sequence of likewise.training.tune.Trial
        The trials that ran (their ``number``, ``seconds`` and ``settings``).
    params : dict
        The next trial's settings (``epochs``, ``dim``, ``negative``, ``window``).
    mode : {"basket", "sequence"}

    Returns
    -------
    float
        Seconds, >= 0.
    """
    done = [t for t in trials if t.number > 0] or list(trials)
    rates = [t.seconds / w for t in done if (w := work_units(t.settings, mode))]
    work = work_units(params, mode)
    if rates and work:
        return max(rates) * work
    return max((t.seconds for t in trials), default=0.0)
