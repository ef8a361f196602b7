"""Where a new version of a saved space comes from: the one rule for its ``meta`` lineage.

A space is continued by :func:`likewise.retail.update.update` (new orders) or
:func:`likewise.apps.coldstart.add_placed` (products placed from their attributes); each writes a new version
and never touches the parent. The new version's ``meta`` is the parent's, except that it names its own parent
(``meta["parent"]``: fingerprint and path) and records its own step (``meta["update"]`` or ``meta["place"]``)
and not the parent's: a version placed from an updated space says it was placed, not updated. What accumulates
over versions (``meta["placed"]``, the products placed so far) is kept by the caller.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = ["STEPS", "child_meta"]

#: The ``meta`` keys that record how a version was made from its parent (one per kind of step).
STEPS = ("update", "place")


def child_meta(parent: Any, parent_path: Path | None, step: str, record: dict[str, Any]) -> dict[str, Any]:
    """The ``meta`` of a new version of ``parent`` made by ``step``.

    Parameters
    ----------
    parent : Embeddings
        The space continued (its ``meta`` and ``fingerprint``).
    parent_path : Path or None
        Its folder, when it was loaded from one.
    step : {"update", "place"}
        What made the new version.
    record : dict
        What the step did, stored as ``meta[step]``.

    Returns
    -------
    dict
        A new dict: the parent's meta without its own step record, with ``parent`` and ``step`` set.
    """
    if step not in STEPS:
        raise InputError(f"step == {step!r}, must be one of {STEPS}")
    meta = {k: v for k, v in dict(parent.meta or {}).items() if k not in STEPS}
    meta["parent"] = {"fingerprint": parent.fingerprint, "path": str(parent_path) if parent_path else None}
    meta[step] = record
    return meta
