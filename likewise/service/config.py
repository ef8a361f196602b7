"""What ``likewise serve`` serves and how: one frozen object, built by the CLI, read by the app factory.

:class:`ServeConfig` is handed to :func:`~likewise.service.app.app_from_config` as an object. Only for
several worker processes does it travel as text: uvicorn starts each worker as a fresh interpreter that
imports the application by name, so ``likewise serve --workers N`` puts :meth:`ServeConfig.to_json` in
the ``LIKEWISE_SERVE_CONFIG`` variable those processes inherit, and the factory
``likewise.service.app:app_from_env`` reads it back with :meth:`ServeConfig.from_json`. That variable is
the hand-over between the two, not a setting.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bodies import Limits
from .guard import LOOPBACK_NAMES
from .models import ModelSpec

__all__ = ["CONFIG_VARIABLE", "ServeConfig"]

#: The environment variable that hands a :class:`ServeConfig` to uvicorn's worker processes.
CONFIG_VARIABLE = "LIKEWISE_SERVE_CONFIG"


@dataclass(frozen=True)
class ServeConfig:
    """How to serve: the models, the token, the limits and the watched folders.

    Attributes
    ----------
    models : tuple of ModelSpec
        What to serve; the first is the explorer's default.
    token : str or None
        When set, API requests need ``Authorization: Bearer <token>``.
    limits : Limits
        Request limits.
    map_sample : int
        Items on the explorer's map (most frequent first).
    watch_seconds : float
        Seconds between checks for a new model version (0: no watching).
    allowed_hosts : tuple of str, or None
        ``Host`` names answered (others get 400); None answers any. Loopback names by default.
    """

    models: tuple[ModelSpec, ...]
    token: str | None = None
    limits: Limits = field(default_factory=Limits)
    map_sample: int = 3000
    watch_seconds: float = 0.0
    allowed_hosts: tuple[str, ...] | None = tuple(sorted(LOOPBACK_NAMES))

    def to_json(self) -> str:
        """This configuration as JSON text (:meth:`from_json` reads it back)."""
        return json.dumps(
            {
                "models": [
                    {
                        "name": m.name,
                        "path": str(m.path),
                        "labels": None if m.labels_path is None else str(m.labels_path),
                        "name_col": m.name_col,
                    }
                    for m in self.models
                ],
                "token": self.token,
                "limits": self.limits.model_dump(),
                "map_sample": self.map_sample,
                "watch_seconds": self.watch_seconds,
                "allowed_hosts": None if self.allowed_hosts is None else list(self.allowed_hosts),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> ServeConfig:
        """The configuration :meth:`to_json` wrote; a missing field takes its default, and an allowed
        host ``"*"`` means any host."""
        data: dict[str, Any] = json.loads(text)
        hosts = data.get("allowed_hosts", sorted(LOOPBACK_NAMES))
        return cls(
            models=tuple(
                ModelSpec(
                    m["name"],
                    Path(m["path"]),
                    Path(m["labels"]) if m.get("labels") else None,
                    m.get("name_col"),
                )
                for m in data["models"]
            ),
            token=data.get("token") or None,
            limits=Limits(**data.get("limits", {})),
            map_sample=data.get("map_sample", 3000),
            watch_seconds=data.get("watch_seconds", 0.0),
            allowed_hosts=None if hosts is None or "*" in hosts else tuple(hosts),
        )
