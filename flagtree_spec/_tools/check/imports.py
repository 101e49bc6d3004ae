"""The check rules about imports: FTS004, an import that fails (a module that
exists nowhere, or a name the version which loads does not define), and
FTS019, a submodule imported before its package's ``spec_path`` call.  They
register in :mod:`.registry`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..model.model import Model
from .registry import Hit, Rule, _sources, rule

__all__: list[str] = []


@rule("FTS004", "error", "a name imported from a module is not defined by the version that loads")
class UndefinedImport(Rule):
    def model(self, model: Model) -> Iterator[Hit]:
        reported: dict[tuple[str, str], list[str]] = {}
        for module, source in _sources(model):
            assert module.file is not None
            if source.error is not None:
                if module.origin is None:
                    model.problem(source.error)
                continue
            package = module.name if module.kind == "package" else module.name.rpartition(".")[0]
            imports = list(source.imports(package))
            if module.origin is None:
                # Trunk files are not needed again as trees; keeping thousands of
                # them alive makes the cyclic garbage collector rescan them.
                source.release()
            for imp in imports:
                if imp.guarded or imp.module.partition(".")[0] != model.root:
                    continue
                target = model.resolve(imp.module)
                if target.file is None or not target.file.endswith(".py"):
                    continue
                if module.origin is None and target.origin is None:
                    continue  # trunk importing trunk is not the backend's business
                facts = model.source(target.file).facts()
                if facts.defines_all:
                    continue
                for name in imp.names:
                    if name == "*" or name in facts.defined:
                        continue
                    if model.resolve(f"{imp.module}.{name}").kind != "missing":
                        continue  # a submodule
                    if module.origin is not None:
                        yield Hit(
                            module.file,
                            imp.line,
                            imp.col,
                            f"imports {name!r} from {imp.module}, which {target.file} does not "
                            "define",
                        )
                    else:
                        where = f"{module.file}:{imp.line}"
                        reported.setdefault((target.file, name), []).append(where)
        for spec_root, hooks in model.hook_modules():
            if hooks.broken is not None and hooks.broken[3].startswith("'from"):
                path, line, col, message = hooks.broken
                yield Hit(
                    path,
                    line,
                    col,
                    f"{message}: the hook module {spec_root.hooks} fails to import, so every "
                    "spec() call raises SpecImportError",
                )
        for (path, name), sites in sorted(reported.items()):
            more = f" and {len(sites) - 1} more" if len(sites) > 1 else ""
            yield Hit(
                path,
                1,
                1,
                f"does not define {name!r}, which {sites[0]}{more} imports from it; define it "
                "or call inherit(globals())",
            )


@rule(
    "FTS019",
    "error",
    "a package init imports a submodule before its spec_path call, so its override never loads",
)
class ImportBeforeSpecPath(Rule):
    """While a package's ``__init__`` runs up to its ``spec_path`` call, the
    package's ``__path__`` is its own folder: a submodule imported then (directly,
    or by the package's modules those imports run) loads from there, and stays."""

    def model(self, model: Model) -> Iterator[Hit]:
        for module in model.modules():
            early = module.early
            if early is None or early.shadowed is None:
                continue
            via = f" (through {', '.join(early.via)})" if early.via else ""
            yield Hit(
                early.init,
                early.line,
                early.col,
                f"imports {module.name}{via} before the spec_path call (line {early.call}), "
                f"so it loads from {os.path.dirname(early.init)} and the override "
                f"{early.shadowed} never loads; move the spec_path call above this import",
            )
