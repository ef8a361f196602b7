"""The exceptions likewise raises, in one place.

Hierarchy::

    LikewiseError
    ├── InputError (ValueError)            bad data or a bad parameter value; names the value
    │   └── SpaceMismatchError             vectors from two different spaces were mixed
    ├── UnknownItemError (KeyError)        a key that is not in the vocabulary; suggests close keys
    ├── ItemIndexError (IndexError)        an integer id past the end of the table
    ├── NotFittedError (RuntimeError)      an object used before it was trained or loaded
    ├── CorruptModelError (OSError)        a saved file is missing, truncated or fails its checksum
    │   └── ModelMismatchError             a saved fitted part no longer fits the code; names the retrain
    ├── WriteError (OSError)               an output could not be written (a full disk); names the path
    ├── MissingDependencyError (ImportError)  an optional extra is not installed; gives the install line
    └── DistributedError (RuntimeError)    another process of a torchrun run died or stopped answering

Catch ``LikewiseError`` to catch everything the library raises on purpose; each class also derives from
the matching built-in so ``except KeyError`` and friends keep working.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "CorruptModelError",
    "DistributedError",
    "InputError",
    "ItemIndexError",
    "LikewiseError",
    "MissingDependencyError",
    "ModelMismatchError",
    "NotFittedError",
    "SpaceMismatchError",
    "UnknownItemError",
    "WriteError",
    "shown",
]


class LikewiseError(Exception):
    """Base class of every error likewise raises on purpose."""


#: Characters of a bad value an error message shows; a longer value is cut and its length given, so a
#: megabyte-long key sent to the service never comes back whole in the answer.
SHOWN_CHARS = 80


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)``, cut to about ``limit`` characters with the full length noted when longer."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value)} characters)"
    text = repr(value)
    return text if len(text) <= limit + 2 else f"{text[:limit]}… ({len(text)} characters)"


class InputError(LikewiseError, ValueError):
    """Bad input data or a bad parameter value; the message names the value and what was expected."""


class SpaceMismatchError(InputError):
    """Vectors or models from two different embedding spaces were combined.

    Parameters
    ----------
    expected, got : str
        The two fingerprints.
    """

    def __init__(self, expected: str, got: str, what: str = "vector") -> None:
        self.expected = expected
        self.got = got
        super().__init__(
            f"{what} comes from space {got!r} but this space is {expected!r}: "
            "vectors of two different embedding spaces cannot be compared"
        )


class UnknownItemError(LikewiseError, KeyError):
    """An item key that is not in the vocabulary.

    Parameters
    ----------
    key : str
        The unknown key.
    suggestions : sequence of str
        Close keys that do exist (may be empty).
    what : str
        What the key names: ``"item"`` (or the space's own word for its items), ``"customer"``,
        ``"model"``; kept as an attribute so a front end words its answer from it, not from the message.
    note : str, optional
        Why the key is missing when that is known (e.g. dropped below ``min_count``).
    """

    def __init__(
        self, key: object, suggestions: Sequence[str] = (), what: str = "item", note: str | None = None
    ) -> None:
        self.key = key
        self.suggestions = list(suggestions)
        self.what = what
        self.note = note
        msg = f"unknown {what} {shown(key)}"
        if note:
            msg += f": {note}"
        elif self.suggestions:
            msg += " — did you mean " + " or ".join(repr(s) for s in self.suggestions) + "?"
        super().__init__(msg)

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return str(self.args[0])


class ItemIndexError(LikewiseError, IndexError):
    """An integer item id outside ``[0, size)``.

    Parameters
    ----------
    index : int
        The bad id.
    size : int
        Number of rows in the table.
    """

    def __init__(self, index: int, size: int, what: str = "item id") -> None:
        self.index = int(index)
        self.size = int(size)
        super().__init__(
            f"{what} {self.index} is out of range for a table of {self.size} rows "
            f"(valid {'rows' if what.endswith('row') else 'ids'} are 0..{self.size - 1})"
        )


class NotFittedError(LikewiseError, RuntimeError):
    """An object was used before it was trained or loaded."""


class CorruptModelError(LikewiseError, OSError):
    """A saved model file is missing, truncated or fails its checksum."""


class ModelMismatchError(CorruptModelError):
    """A saved fitted part no longer fits the code that reads it (weights fitted on other features than
    this version computes); the message says what differs and the command that retrains it."""


class WriteError(LikewiseError, OSError):
    """An output could not be written: the disk is full, the file system read-only, a permission is
    missing. The message names the output, the operating system's reason and what to do; nothing was
    left half-written under the output's name (``errno`` is the operating system's, when it gave one)."""


#: The CPU build of PyTorch: what a machine without a CUDA GPU installs (``pip install '.[torch]'`` alone
#: takes PyPI's Linux wheel, which brings the CUDA libraries, several GB).
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


class MissingDependencyError(LikewiseError, ImportError):
    """An optional dependency is not installed.

    Parameters
    ----------
    package : str
        The import name that failed.
    extra : str or None
        The likewise extra that brings it in; None for a package no extra installs (the message then
        says ``pip install PACKAGE``).
    purpose : str
        What needs it, for the message.
    """

    def __init__(self, package: str, extra: str | None, purpose: str = "") -> None:
        self.package = package
        self.extra = extra
        why = f" for {purpose}" if purpose else ""
        # likewise installs from its clone (it is not on PyPI): the extra is named on the folder
        install = f"pip install '.[{extra}]' in the likewise clone" if extra else f"pip install {package}"
        if package == "torch":  # PyPI's Linux wheel brings CUDA (GBs); the CPU build is enough without a GPU
            install = f"{CPU_TORCH} first for the CPU build, then {install}"
        super().__init__(f"{package} is needed{why}: {install}")


class DistributedError(LikewiseError, RuntimeError):
    """A collective operation of a multi-process run failed: another process died, or did not answer
    within the timeout (``LIKEWISE_DIST_TIMEOUT`` seconds). The message names the rank and the step."""
