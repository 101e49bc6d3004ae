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
    """## What it does
    Compares each override's counterpart with what `flagtree-spec lock`
    recorded: a whole-file override's counterpart that changed, or a
    definition that an inheriting override replaces that changed or is gone.

    ## Why is this bad?
    The override was written against the old trunk: the trunk's fix or new
    parameter is lost on this backend until someone merges it.

    ## Example
    ```text
    The trunk changed mul() since the lock; the override still replaces the
    old mul().
    ```

    ## Use instead
    ```text
    flagtree-spec rebase -b B --apply   (merges the trunk's change, then locks)
    flagtree-spec lock -b B             (after reviewing the change by hand)
    ```
    """

    def model(self, model: Model) -> Iterator[Hit]:
        for found in drift(model):
            yield Hit(found.path, found.line, 1, found.message, found.severity)
