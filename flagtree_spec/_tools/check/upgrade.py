"""The check rule about trunk upgrades: FTS016, the version an override was made
against changed since ``flagtree-spec lock`` (see
:mod:`flagtree_spec._tools.upgrade.drift`).  It registers in :mod:`.registry`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..model.model import Model
from ..upgrade.drift import drift
from .registry import Hit, Rule, rule

__all__: list[str] = []


@rule("FTS016", "warning", "the version an override was made against changed since the lock")
class DriftSinceLock(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        for found in drift(model):
            yield Hit(found.path, found.line, 1, found.message, found.severity)
