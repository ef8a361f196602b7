"""The one progress reporter: a tqdm bar (``tqdm.auto``, so notebooks get a widget) when tqdm is there.

tqdm is an optional extra (``pip install '.[progress]'``). Without it a shown bar degrades to
one line per finished task on stderr, so a run asked to report progress still does.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["Bar", "bar", "note"]


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


def bar(total: int, desc: str, unit: str = "it", enabled: bool = True) -> Bar:
    """A :class:`Bar` (shown only when ``enabled``)."""
    return Bar(total, desc, unit, enabled)


def note(message: str, enabled: bool = True) -> None:
    """Print ``message`` as a line of its own on stderr, above a progress bar if one is showing."""
    if not enabled:
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
