"""Every field of a checkpoint's manifest, checked before a run resumes from it
(:mod:`likewise.training.checkpoint`).

A checkpoint folder may have been edited by hand, half-copied or written by something else, and its
checksums cover the tables, not the manifest. A field that is missing, of the wrong type or out of range
would otherwise surface as a ``KeyError`` deep in the trainer, or worse: a ``world_size`` of 0 read no
shard at all and resumed into a table of uninitialised memory. :func:`check_manifest` reads the whole
manifest first and raises :class:`~likewise.errors.CorruptModelError` naming the field (``state.epoch``,
``tables.W.shape``, ``files``), the value found and what was expected.

What is checked: the types of every field; the identity's config and layout fields, by the saved
backend; the tables' dtypes and shapes against the identity (one row per item, ``dim`` columns); the
epoch and step in range (``0 <= epoch <= epochs``, step 0 at a pass's end; the step's upper bound is
the backend's number of steps, checked by :meth:`likewise.training.checkpoint.Saved.restore`); the history's
length and entries; the counters of a pass begun; the random state's keys against the state; counts and
timings finite and ``>= 0``; the files listed, exactly the shards of ``world_size`` processes. The
values of the tables are checked to be finite as they are read
(:meth:`likewise.training.checkpoint.Saved.rows`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from ..errors import CorruptModelError, shown

__all__ = ["MUST_MATCH", "MUST_MATCH_TORCH", "check_manifest", "shard_name"]

#: Hyper-parameters a checkpoint and the run that resumes it must agree on (``threads``, ``device``
#: and ``deterministic`` may change: they change how fast, not what, is trained).
MUST_MATCH = (
    "mode",
    "dim",
    "window",
    "negative",
    "ns_exponent",
    "sample",
    "min_count",
    "max_items",
    "epochs",
    "lr",
    "min_lr",
    "max_context",
    "neg_group",
    "seed",
    "typed_negatives",
)
#: Further fields that shape the torch backend's steps.
MUST_MATCH_TORCH = ("batch_tokens", "max_row_updates", "table_dtype")

_SHA256 = re.compile(r"[0-9a-f]{64}")
#: The counters a pass carries between checkpoints (``partial``), besides its seconds.
COUNTERS = ("seen", "kept", "pairs", "loss")
#: The notes a run records in its checkpoint (``state.notes``), each optional.
_NOTES = (
    "epochs_reason",
    "basket_scoring",
    "scoring_reason",
    "validation_rr",
    "validation_mrr",
    "validation_leaked",
)


def shard_name(name: str, rank: int, world: int) -> str:
    """The file of table ``name``'s shard ``rank`` of ``world``: ``W.0-of-1.npy``."""
    return f"{name}.{rank}-of-{world}.npy"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _int_at_least(lo: int) -> Callable[[Any], bool]:
    return lambda v: _is_int(v) and v >= lo


def _number_at_least(lo: float) -> Callable[[Any], bool]:
    return lambda v: _is_number(v) and v >= lo


def _count(v: Any) -> bool:
    return _is_number(v) and v >= 0 and float(v).is_integer()


def _is_object(v: Any) -> bool:
    return isinstance(v, dict)


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


_INT = (_is_int, "an integer")
_NUMBER = (_is_number, "a finite number")
# identity.config: each field's JSON type (values are compared with the resuming run's afterwards)
_CONFIG: dict[str, tuple[Callable[[Any], bool], str]] = {
    "mode": (lambda v: v in ("sequence", "basket"), "'sequence' or 'basket'"),
    "dim": (_int_at_least(1), "an integer >= 1"),
    "window": _INT,
    "negative": _INT,
    "ns_exponent": _NUMBER,
    "sample": _NUMBER,
    "min_count": _INT,
    "max_items": (lambda v: v is None or (_is_int(v) and v >= 1), "an integer >= 1 or null"),
    "epochs": (lambda v: v == "auto" or (_is_int(v) and v >= 1), "an integer >= 1 or 'auto'"),
    "lr": _NUMBER,
    "min_lr": _NUMBER,
    "max_context": _INT,
    "neg_group": _INT,
    "seed": _INT,
    "typed_negatives": (lambda v: isinstance(v, bool), "true or false"),
    "batch_tokens": _INT,
    "max_row_updates": _INT,
    "table_dtype": (lambda v: v in ("float32", "bfloat16"), "'float32' or 'bfloat16'"),
}
_DATA: dict[str, tuple[Callable[[Any], bool], str]] = {
    "n_items": (_int_at_least(1), "an integer >= 1"),
    "n_sequences": (_int_at_least(0), "an integer >= 0"),
    "n_tokens": (_int_at_least(0), "an integer >= 0"),
}
_HEX = (lambda v: isinstance(v, str) and bool(_SHA256.fullmatch(v)), "a sha256 in hex (64 digits)")
#: The keys of ``state.rng`` that describe, in words, how each backend draws its random streams.
_RNG_TEXT = {"cpu": ("kind", "seed_of_epoch"), "torch": ("kind", "epoch_keys")}
_HISTORY: dict[str, tuple[Callable[[Any], bool], str]] = {
    "items": (_int_at_least(0), "an integer >= 0"),
    "items_trained": (_int_at_least(0), "an integer >= 0"),
    "pairs": (_int_at_least(0), "an integer >= 0"),
    "loss": (_number_at_least(0), "a finite number >= 0"),
    "seconds": (_number_at_least(0), "a finite number >= 0"),
    "lr": (_number_at_least(0), "a finite number >= 0"),
}


class _Reader:
    """Reads fields of one manifest, each checked; a bad one raises naming the manifest and the field."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, name: str, value: Any, expected: str) -> CorruptModelError:
        return CorruptModelError(
            f"{self.path!r}: field {name!r} is {shown(value)}, expected {expected}; the checkpoint is "
            "damaged (start afresh in another --checkpoint-dir, or restore the folder)"
        )

    def get(
        self,
        parent: dict[str, Any],
        key: str,
        name: str,
        ok: Callable[[Any], bool],
        expected: str,
    ) -> Any:
        """``parent[key]`` (the field called ``name``), checked by ``ok``."""
        if key not in parent:
            raise CorruptModelError(
                f"{self.path!r} lacks the field {name!r} ({expected}); the checkpoint is damaged "
                "(start afresh in another --checkpoint-dir, or restore the folder)"
            )
        value = parent[key]
        if not ok(value):
            raise self.fail(name, value, expected)
        return value

    def obj(self, parent: dict[str, Any], key: str, name: str) -> dict[str, Any]:
        return self.get(parent, key, name, _is_object, "an object")

    def fields(self, parent: dict[str, Any], prefix: str, rules: dict[str, tuple[Callable, str]]) -> None:
        for key, (ok, expected) in rules.items():
            self.get(parent, key, f"{prefix}.{key}", ok, expected)


def check_manifest(manifest: Any, path: str, ours: dict[str, Any]) -> None:
    """Check every field of a checkpoint manifest (its ``format`` and ``version`` already checked).

    Parameters
    ----------
    manifest : Any
        The manifest as read from JSON.
    path : str
        The manifest file, named in messages.
    ours : dict
        The identity of the run about to resume (:class:`likewise.training.checkpoint.Checkpoints`): the data
        and layout fields it records must be present in the checkpoint's identity too.

    Raises
    ------
    CorruptModelError
        Naming the first field that is missing, of the wrong type or out of range.
    """
    r = _Reader(path)
    identity = r.obj(manifest, "identity", "identity")
    backend = r.get(
        identity, "backend", "identity.backend", lambda v: v in ("cpu", "torch"), "'cpu' or 'torch'"
    )
    config = r.obj(identity, "config", "identity.config")
    wanted = MUST_MATCH + (MUST_MATCH_TORCH if backend == "torch" else ())
    r.fields(config, "identity.config", {k: _CONFIG[k] for k in wanted})
    data = r.obj(identity, "data", "identity.data")
    r.fields(data, "identity.data", _DATA)
    for key in sorted(k for k in ours.get("data", {}) if k.endswith("_sha256")):
        r.get(data, key, f"identity.data.{key}", *_HEX)
    layout = r.obj(identity, "layout", "identity.layout")
    if backend == ours.get("backend"):  # another backend's layout is reported as another run
        for key, value in ours.get("layout", {}).items():
            kind = (_is_int, "an integer") if _is_int(value) else (_is_str, "a string")
            r.get(layout, key, f"identity.layout.{key}", *kind)

    world = r.get(manifest, "world_size", "world_size", _int_at_least(1), "an integer >= 1")
    _check_tables(r, manifest, backend, config, data)
    _check_state(r, r.obj(manifest, "state", "state"), config, backend)
    r.get(manifest, "saved_at", "saved_at", _is_str, "a string (a time)")
    _check_files(r, r.obj(manifest, "files", "files"), world)


def _check_tables(r: _Reader, manifest: dict, backend: str, config: dict, data: dict) -> None:
    tables = r.obj(manifest, "tables", "tables")
    if set(tables) - {"W", "C"}:
        raise r.fail("tables", sorted(tables), "the tables 'W' and 'C' only")
    dtype = config["table_dtype"] if backend == "torch" else "float32"
    shape = [data["n_items"], config["dim"]]
    for name in ("W", "C"):
        info = r.obj(tables, name, f"tables.{name}")
        r.get(
            info, "dtype", f"tables.{name}.dtype", lambda v, d=dtype: v == d, f"{dtype!r} (the run's tables)"
        )
        r.get(
            info,
            "shape",
            f"tables.{name}.shape",
            lambda v: v == shape and all(_is_int(x) for x in v),
            f"{shape} (identity.data.n_items rows, identity.config.dim columns)",
        )


def _check_state(r: _Reader, state: dict, config: dict, backend: str) -> None:
    runs = config["epochs"]
    epochs = r.get(
        state,
        "epochs",
        "state.epochs",
        lambda v: _is_int(v) and v >= 1 and (runs == "auto" or v == runs),
        "an integer >= 1" + ("" if runs == "auto" else f" equal to identity.config.epochs ({runs})"),
    )
    epoch = r.get(state, "epoch", "state.epoch", lambda v: _is_int(v) and 0 <= v <= epochs, f"0 to {epochs}")
    done = epoch == epochs
    step = r.get(
        state,
        "step",
        "state.step",
        lambda v: _is_int(v) and v >= 0 and (v == 0 or not done),
        "0 (the run is finished)" if done else "an integer >= 0",
    )
    if done:
        r.get(state, "lr", "state.lr", lambda v: v is None, "null (the run is finished)")
    else:
        r.get(state, "lr", "state.lr", _number_at_least(0), "a finite number >= 0")
    history = r.get(
        state, "history", "state.history", lambda v: isinstance(v, list) and len(v) == epoch,
        f"an array of {epoch} epochs (one per finished epoch)",
    )  # fmt: skip
    for i, h in enumerate(history):
        at = f"state.history[{i}]"
        if not isinstance(h, dict):
            raise r.fail(at, h, "an object")
        r.get(h, "epoch", f"{at}.epoch", lambda v, n=i + 1: _is_int(v) and v == n, str(i + 1))
        r.get(h, "epochs", f"{at}.epochs", lambda v: _is_int(v) and v == epochs, str(epochs))
        r.fields(h, at, _HISTORY)
    partial = r.obj(state, "partial", "state.partial")
    if step == 0:
        r.get(state, "partial", "state.partial", lambda v: v == {}, "{} (no pass begun)")
    else:
        for key in ("seen", "kept", "pairs"):  # counts (floats when torch summed them over processes)
            r.get(partial, key, f"state.partial.{key}", _count, "a whole number >= 0")
        for key in ("loss", "seconds"):
            r.get(partial, key, f"state.partial.{key}", _number_at_least(0), "a finite number >= 0")
        if set(partial) - {*COUNTERS, "seconds"}:
            raise r.fail("state.partial", sorted(partial), f"the counters {[*COUNTERS, 'seconds']}")
    _check_notes(r, r.obj(state, "notes", "state.notes"))
    rng = r.obj(state, "rng", "state.rng")
    for key in _RNG_TEXT[backend]:  # how the backend's streams are drawn, in words
        r.get(rng, key, f"state.rng.{key}", _is_str, "a string")
    for key, want in (("seed", config["seed"]), ("epoch", epoch), ("step", step)):
        r.get(
            rng, key, f"state.rng.{key}", lambda v, w=want: _is_int(v) and v == w, f"{want} (as in the state)"
        )
    for key, value in rng.items():
        if key not in ("seed", "epoch", "step") and not isinstance(value, str):
            raise r.fail(f"state.rng.{key}", value, "a string")


def _check_notes(r: _Reader, notes: dict) -> None:
    unknown = sorted(set(notes) - set(_NOTES))
    if unknown:
        raise r.fail(
            f"state.notes.{unknown[0]}", notes[unknown[0]], f"no such note (notes: {', '.join(_NOTES)})"
        )
    for key in ("epochs_reason", "basket_scoring", "scoring_reason"):
        if key in notes:
            r.get(notes, key, f"state.notes.{key}", _is_str, "a string")
    if "validation_rr" in notes:
        r.get(
            notes, "validation_rr", "state.notes.validation_rr",
            lambda v: v is None or (isinstance(v, list) and all(_is_number(x) for x in v)),
            "null or an array of finite numbers",
        )  # fmt: skip
    if "validation_leaked" in notes:
        r.get(
            notes,
            "validation_leaked",
            "state.notes.validation_leaked",
            lambda v: isinstance(v, bool),
            "true or false",
        )
    if "validation_mrr" in notes:
        r.get(
            notes, "validation_mrr", "state.notes.validation_mrr",
            lambda v: isinstance(v, dict)
            and all(isinstance(s, dict) and all(_is_number(x) for x in s.values()) for s in v.values()),
            "an object of objects of finite numbers (passes -> rule -> MRR)",
        )  # fmt: skip


def _check_files(r: _Reader, files: dict, world: int) -> None:
    # the count first: the names of a world_size of 10**12 are never built
    if len(files) != 2 * world:
        raise r.fail("files", sorted(files)[:4], f"the {2 * world} shards of W and C for world_size {world}")
    expected = {shard_name(t, rank, world) for t in ("W", "C") for rank in range(world)}
    if set(files) != expected:
        raise r.fail("files", sorted(files)[:4], f"the shards {sorted(expected)[:4]} (world_size {world})")
    for name, entry in sorted(files.items()):
        if not isinstance(entry, dict):
            raise r.fail(f"files.{name}", entry, "an object with sha256 and bytes")
        r.get(entry, "sha256", f"files.{name}.sha256", *_HEX)
        r.get(entry, "bytes", f"files.{name}.bytes", _int_at_least(0), "an integer >= 0")
