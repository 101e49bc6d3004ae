"""Run in a fresh interpreter by ``adopt``: import a root's modules, describe them.

``python adopt_probe.py CONFIG`` reads the JSON object CONFIG (``root``,
``spec_files``, ``modules``, ``hooks``, ``strip``, ``digests``, ``report``),
imports every module in order and writes to the file ``report`` a JSON
object: per module, whether it imported (else the exception's type and
message), ``__spec__.origin``, ``__file__``, ``__path__`` and, per name of
its namespace, a digest of the value (``migrate``'s, loaded from the file
``digests``: equal in two processes exactly when the value is the same code);
then, per hook name, what the trunk's own ``spec_func`` answers, and the
public functions of the hook modules that were loaded.  Paths under the
folders named in ``strip`` are written relative to them.

Functions that come from the spec file itself (FlagTree's own or this
library's) are written as ``<spec file> NAME``: the two sides differ there by
design.  This file imports only the standard library and never
``flagtree_spec``; the library is imported only if the trunk imports it.
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import sys
import types
from typing import Any, Callable, Optional

_STRIP: list[str] = []


def _rel(path: object) -> Optional[str]:
    if not isinstance(path, str):
        return None
    for folder in _STRIP:
        if path == folder or path.startswith(folder + os.sep):
            return "<root>" + path[len(folder) :]
    return path


def _bare(path: object) -> object:
    if isinstance(path, str) and len(path) > 1:
        return path.rstrip(os.sep) or path
    return path


def _text(text: str) -> str:
    for folder in _STRIP:
        text = text.replace(folder, "<root>")
    return text[:300]


def _from_spec_file(value: object, spec_modules: list[str]) -> bool:
    module = getattr(value, "__module__", None)
    if not isinstance(module, str):
        return False
    return (
        module in spec_modules or module == "flagtree_spec" or module.startswith("flagtree_spec.")
    )


def _error(exc: BaseException) -> str:
    """How a failed import is compared: a missing module by its name (the library's
    finder explains an excluded module in its message), anything else by its text."""
    name = getattr(exc, "name", None)
    if isinstance(exc, ModuleNotFoundError) and isinstance(name, str):
        return f"ModuleNotFoundError: No module named {name!r}"
    return _text(f"{type(exc).__name__}: {exc}")


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as f:
        config = json.load(f)
    _STRIP.extend(sorted(config["strip"], key=len, reverse=True))
    digest: Callable[[Any], str] = runpy.run_path(config["digests"])["digest"]
    root: str = config["root"]
    spec_modules = [f"{root}.{stem}" for stem in config["spec_files"]]
    modules: dict[str, dict[str, Any]] = {}
    for name in config["modules"]:
        try:
            importlib.import_module(name)
        except BaseException as exc:  # a failing module is a result, whatever it raises
            modules[name] = {"error": _error(exc)}
        else:
            modules[name] = {}
    for name, result in modules.items():
        module = sys.modules.get(name)
        if "error" in result or module is None:
            continue
        path = getattr(module, "__path__", None)
        result["origin"] = _rel(getattr(getattr(module, "__spec__", None), "origin", None))
        result["file"] = _rel(getattr(module, "__file__", None))
        try:
            # Without a trailing separator: FlagTree's spec_path adds the root package's
            # mirror folder with one (os.path.join(folder, "")), the same folder.
            result["path"] = None if path is None else [_rel(_bare(p)) for p in path]
        except Exception as exc:  # a namespace path whose parent left sys.modules
            result["path"] = _text(f"cannot be read: {type(exc).__name__}: {exc}")
        names = {}
        for key, value in sorted(vars(module).items()):
            if key.startswith("__") and key.endswith("__"):
                continue
            if isinstance(value, types.FunctionType) and _from_spec_file(value, spec_modules):
                # spec_call is FlagTree's later name of spec: one function here.
                role = "spec" if value.__name__ == "spec_call" else value.__name__
                names[key] = f"<spec file> {role}"
            else:
                names[key] = _text(digest(value))
        result["names"] = names
    hooks: dict[str, Optional[str]] = {}
    # The trunk's own spec_func: of the newest spec file that is imported.
    loaded = [sys.modules[m] for m in spec_modules if m in sys.modules]
    ask = getattr(loaded[0], "spec_func", None) if loaded else None
    for hook in config["hooks"]:
        try:
            found = ask(hook) if callable(ask) else None
        except BaseException as exc:  # the answer is what is compared
            hooks[hook] = _text(f"raises {type(exc).__name__}: {exc}")
            continue
        hooks[hook] = (
            None if found is None else f"{getattr(found, '__module__', '?')} {digest(found)}"
        )
    offered = sorted(
        {
            key
            for name, module in list(sys.modules.items())
            if any(name == h or name.startswith(h + ".") for h in config["hook_modules"])
            for key, value in vars(module).items()
            if isinstance(value, types.FunctionType) and not key.startswith("_")
        }
    )
    report = {
        "modules": modules,
        "hooks": hooks,
        "offered": offered,
        "library": "flagtree_spec" in sys.modules,
        "backend": getattr(sys.modules.get(f"{root}._flagtree_backend"), "FLAGTREE_BACKEND", None),
    }
    with open(config["report"], "w", encoding="utf-8") as f:
        json.dump(report, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
