"""The static model's answers: what the import system does with one module name."""

from __future__ import annotations

from typing import NamedTuple, Optional

from ..._discovery import SpecRoot

__all__ = ["Early", "Module"]


class Early(NamedTuple):
    """A submodule that a package's ``__init__`` imports before its ``spec_path`` call."""

    init: str  # the package's __init__ file
    line: int  # the line of its import statement that leads to the submodule
    col: int
    call: int  # the line of the spec_path call
    via: tuple[str, ...]  # modules of the package that import it on the way, outermost first
    shadowed: Optional[str]  # the file that would load after the call (None: the same)

    def describe(self) -> str:
        """Why the module loads from where it does, in words."""
        via = f" (through {', '.join(self.via)})" if self.via else ""
        text = f"{self.init}:{self.line} imports it{via} before its spec_path call"
        text += f" (line {self.call})"
        return text + (f", so {self.shadowed} never loads" if self.shadowed else "")


class Module(NamedTuple):
    """The model's answer for one module name."""

    name: str
    kind: str  # "package", "namespace", "module" or "missing"
    file: Optional[str]  # what loads (a package's __init__); None for namespace/missing
    candidates: tuple[str, ...]  # the chain below it, highest first
    origin: Optional[SpecRoot]  # the spec root the file comes from; None for trunk
    path: tuple[str, ...]  # __path__ of a package after spec_path
    trunk: tuple[str, ...]  # the runtime's trunk directories of a package
    specialised: bool  # a package whose __init__ calls spec_path (or auto mode)
    exclude: tuple[str, ...]  # full names its spec_path call excludes
    reason: str  # why it is missing
    # Why it loads from its package's own folder although a mirror has it: its
    # package's __init__ imports it before calling spec_path.
    early: Optional[Early] = None
