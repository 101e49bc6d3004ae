"""The override report: which mirror files a session loaded, and which it never did.

:class:`Recorder` is registered only with ``--flagtree-report``: it notes the
names imported during each test (:class:`_ImportLog`), records the files
they loaded, merges what xdist workers and ``flagtree_run`` children saw,
and at the end builds the report from the static model (the ``flagtree-spec
list`` states), which is imported only then.

PYTEST_DONT_REWRITE: no ``assert`` here for pytest to rewrite.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Optional

import pytest

from .. import _state

if TYPE_CHECKING:
    from ._settings import Settings

__all__ = ["RECORDER", "Recorder"]

# The name the recorder is registered under with the plugin manager.
RECORDER = "flagtree_spec_report"


class Recorder:
    """Registered only with ``--flagtree-report``: records what loaded, reports at the end."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.roots: set[str] = set(settings.roots)
        self.auto: set[str] = set()
        self.origins: set[str] = set()
        self.inherited: set[str] = set()
        self.report: Optional[dict[str, Any]] = None
        self.log = _ImportLog()
        sys.meta_path.insert(0, self.log)

    def scan(self, full: bool = False) -> None:
        """Record what loaded: the modules imported since the last scan, or all of them.

        After each test only the names :class:`_ImportLog` saw being imported are
        looked at, so a test costs what it imported, not the size of ``sys.modules``;
        a full scan runs at collection end, at session end and when a new root
        package becomes known.
        """
        before = len(self.roots)
        self.roots.update(_state.known_roots())
        auto = sys.modules.get("flagtree_spec._auto")
        self.auto.update(getattr(auto, "_roots", ()))
        self.roots.update(self.auto)
        names = self.log.take()
        if full or len(self.roots) != before:
            origins, inherited = _loaded_files(self.roots)
        else:
            origins, inherited = _loaded_files(self.roots, names)
        self.origins |= origins
        self.inherited |= inherited

    def merge(self, seen: Sequence[Sequence[str]]) -> None:
        """Add what another process (an xdist worker, a ``flagtree_run`` child) loaded."""
        roots, origins, inherited = seen[0], seen[1], seen[2]
        self.roots.update(roots)
        self.origins.update(origins)
        self.inherited.update(inherited)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self) -> None:
        self.scan(full=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self) -> None:
        self.scan()  # before the fixtures are torn down (one may restore sys.modules)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any) -> None:
        seen = getattr(node, "workeroutput", {}).get("flagtree_spec")
        if seen is not None:
            self.merge(seen)

    def pytest_sessionfinish(self) -> None:
        self.scan(full=True)
        while self.log in sys.meta_path:
            sys.meta_path.remove(self.log)
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller reports
            workeroutput["flagtree_spec"] = (
                sorted(self.roots),
                sorted(self.origins),
                sorted(self.inherited),
            )
            return
        from .._tools.cli.report import build_report

        self.report = build_report(self.roots, self.auto, self.origins, self.inherited)
        if self.settings.stack is not None:
            for entry in self.report["roots"]:
                if entry.get("source") == "FLAGTREE_BACKEND":
                    entry["source"] = self.settings.source
        for target in self.settings.reports:
            if target.startswith("json:"):
                import json

                path = os.path.join(str(self.config.invocation_params.dir), target[5:])
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(self.report, f, indent=2)
                    f.write("\n")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None or "term" not in self.settings.reports:
            return
        from .._tools.cli.report import format_report

        terminalreporter.section("flagtree_spec override report")
        for line in format_report(self.report):
            terminalreporter.write_line(line)


class _ImportLog:
    """A meta path finder that finds nothing and notes every name imported (for the report)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        self.names.append(fullname)  # list.append: safe from any thread
        return None

    def invalidate_caches(self) -> None:
        """Nothing is cached (part of the finder protocol)."""

    def take(self) -> list[str]:
        names, self.names = self.names, []
        return names


def _loaded_files(
    roots: Iterable[str], only: Optional[Iterable[str]] = None
) -> tuple[set[str], set[str]]:
    from .._child import loaded_files

    return loaded_files(roots, only)
