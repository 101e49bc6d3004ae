"""Compare FlagTree's own ``triton/flagtree_spec.py`` with the drop-in, module by module.

Usage::

    python scripts/flagtree_compare.py SITE [--json OUT]

*SITE* is a folder holding an installed ``triton`` of FlagTree's shape
(``triton/backends/<B>/spec/triton/...``, the build marker) whose
``triton/flagtree_spec.py`` is FlagTree's own.  The script makes a second
copy of it (hard links, so it costs no space) whose ``flagtree_spec.py`` is
the forwarder of docs/flagtree.md, then in one fresh interpreter per copy
imports ``triton`` and every module of the trunk and of the spec tree's
mirror, one after the other in the same order, and records for each module:
whether it imported (else the exception), ``__spec__.origin``, ``__file__``,
``__path__`` (relative to the copy) and its names; then which modules of the
hook package were loaded and what ``spec_func`` answers for each of its
public functions.  It prints the figures and every difference.

Nothing of the corpus is part of this repository: build it outside (see the
report of the FlagTree proof), and pass its path.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

FORWARDER = (
    Path(__file__).resolve().parent.parent
    / "fixtures/flagtree_dropin/installed/site-packages/triton/flagtree_spec.py"
)

PROBE = r"""
import importlib, json, os, sys
site = os.path.realpath(sys.argv[1])
names = json.loads(sys.argv[2])
hook_package = sys.argv[3]


def rel(path):
    if not isinstance(path, str):
        return None
    path = os.path.realpath(path)
    return os.path.relpath(path, site) if path.startswith(site + os.sep) else path


def describe(module):
    spec = getattr(module, "__spec__", None)
    path = getattr(module, "__path__", None)
    return {
        "origin": rel(getattr(spec, "origin", None)),
        "file": rel(getattr(module, "__file__", None)),
        "path": [rel(p) for p in path] if path is not None else None,
        "names": sorted(n for n in vars(module) if not n.startswith("__")),
    }


out = {"modules": {}}
for name in ["triton", *names]:
    try:
        module = importlib.import_module(name)
    except BaseException as exc:  # noqa: BLE001 - the outcome is what is compared
        text = str(exc).replace(site, "<site>").replace(sys.argv[1], "<site>")
        out["modules"][name] = {"error": f"{type(exc).__name__}: {text[:300]}"}
    else:
        out["modules"][name] = describe(module)
out["library_imported"] = "flagtree_spec" in sys.modules
if out["library_imported"]:
    import flagtree_spec

    state = flagtree_spec.active("triton")
    out["backend"] = [list(state.backends), state.source.replace(site, "<site>")]
else:
    out["backend"] = getattr(sys.modules.get("triton._flagtree_backend"), "FLAGTREE_BACKEND", None)
out["hook_modules"] = sorted(
    m for m in sys.modules if m == hook_package or m.startswith(hook_package + ".")
)
hooks = {}
try:
    from triton.flagtree_spec import spec_func
    package = sys.modules.get(hook_package)
    for attr in sorted(vars(package) if package is not None else ()):
        value = getattr(package, attr)
        if attr.startswith("_") or not callable(value) or isinstance(value, type):
            continue
        found = spec_func(attr)
        hooks[attr] = "same object" if found is value else repr(found)[:80]
except BaseException as exc:  # noqa: BLE001
    hooks["<error>"] = f"{type(exc).__name__}: {exc}"
out["hooks"] = hooks
print(json.dumps(out))
"""


def module_names(site: Path, backend: str) -> list[str]:
    """Every module of the trunk ``triton`` and of the spec tree's mirror, by dotted name."""
    root = site / "triton"
    spec = root / "backends" / backend / "spec" / "triton"
    names: set[str] = set()

    def walk(top: Path, prefix: str, skip: set[Path]) -> None:
        for dirpath, dirnames, filenames in os.walk(top):
            here = Path(dirpath)
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d != "__pycache__" and here / d not in skip and d.isidentifier()
            )
            rel = here.relative_to(top).parts
            if "__init__.py" not in filenames and rel:
                continue  # not a regular package (namespace portions are not walked)
            base = ".".join([prefix, *rel])
            names.add(base)
            for f in filenames:
                if f.endswith(".py") and f != "__init__.py" and f[:-3].isidentifier():
                    names.add(f"{base}.{f[:-3]}")

    walk(root, "triton", {root / "_C", root / "backends" / backend / "spec"})
    walk(spec, "triton", set())
    return sorted(names)


def run_variant(site: Path, names: list[str], hook_package: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAGTREE_", "PYTHON"))}
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(site), json.dumps(names), hook_package],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        raise SystemExit(f"the probe failed in {site}:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def compare(own: dict[str, Any], lib: dict[str, Any]) -> dict[str, Any]:
    both_ok, same, differ, only_own, only_lib, both_fail = [], [], [], [], [], []
    for name in sorted(own["modules"]):
        a, b = own["modules"][name], lib["modules"][name]
        if "error" in a and "error" in b:
            both_fail.append((name, a["error"], b["error"]))
        elif "error" in b:
            only_own.append((name, b["error"]))
        elif "error" in a:
            only_lib.append((name, a["error"]))
        else:
            both_ok.append(name)
            fields = [f for f in ("origin", "file", "path", "names") if a[f] != b[f]]
            if fields:
                differ.append((name, {f: (a[f], b[f]) for f in fields}))
            else:
                same.append(name)
    spec_tree = "triton/backends/"
    from_spec = [n for n in both_ok if (own["modules"][n]["origin"] or "").startswith(spec_tree)]
    return {
        "from_spec_tree": len(from_spec),
        "modules": len(own["modules"]),
        "both_load": len(both_ok),
        "identical": len(same),
        "differ": differ,
        "only_own_loads": only_own,
        "only_library_loads": only_lib,
        "both_fail": both_fail,
        "hook_modules": (own["hook_modules"], lib["hook_modules"]),
        "library_imported": (own["library_imported"], lib["library_imported"]),
        "backend": (own["backend"], lib["backend"]),
        "hooks": (own["hooks"], lib["hooks"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="folder holding FlagTree's installed triton")
    parser.add_argument("--backend", default="mthreads")
    parser.add_argument("--json", type=Path, help="write the full comparison here")
    args = parser.parse_args()
    site = args.site.resolve()
    if not (site / "triton" / "flagtree_spec.py").is_file():
        parser.error(f"{site} holds no triton/flagtree_spec.py")
    names = module_names(site, args.backend)
    hook_package = f"triton.backends.{args.backend}.spec.triton"
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "site-packages"
        shutil.copytree(site, copy, copy_function=os.link, symlinks=True)
        target = copy / "triton" / "flagtree_spec.py"
        target.unlink()  # a hard link: replace it, never write through it
        shutil.copyfile(FORWARDER, target)
        own = run_variant(site, names, hook_package)
        lib = run_variant(copy, names, hook_package)
    result = compare(own, lib)
    print(f"modules probed          {result['modules']}")
    print(f"both load               {result['both_load']}")
    print(f"  identical             {result['identical']}  (origin, __file__, __path__, names)")
    print(f"  loaded from the spec tree {result['from_spec_tree']}")
    print(f"  different             {len(result['differ'])}")
    print(f"only FlagTree's loads   {len(result['only_own_loads'])}")
    print(f"only the library loads  {len(result['only_library_loads'])}")
    print(f"both fail               {len(result['both_fail'])}")
    same_errors = sum(1 for _, a, b in result["both_fail"] if a == b)
    print(f"  with the same error   {same_errors}")
    own_lib, lib_lib = result["library_imported"]
    print(f"library imported        {own_lib} / {lib_lib}")
    print(f"backend                 {result['backend'][0]!r} / {result['backend'][1]!r}")
    own_hooks, lib_hooks = result["hook_modules"]
    print(f"hook modules loaded     {len(own_hooks)} / {len(lib_hooks)}  (FlagTree's / library)")
    print(f"  same set              {own_hooks == lib_hooks}")
    print(f"hook answers equal      {result['hooks'][0] == result['hooks'][1]}")
    for name, fields in result["differ"]:
        print(f"DIFF {name}: " + "; ".join(f"{f}: {a!r} -> {b!r}" for f, (a, b) in fields.items()))
    for name, error in result["only_own_loads"]:
        print(f"ONLY-FLAGTREE {name}: the library's variant fails: {error}")
    for name, error in result["only_library_loads"]:
        print(f"ONLY-LIBRARY {name}: FlagTree's variant fails: {error}")
    errors: dict[str, int] = {}
    for _, error, _ in result["both_fail"]:
        errors[error] = errors.get(error, 0) + 1
    for error, count in sorted(errors.items(), key=lambda item: -item[1]):
        print(f"BOTH-FAIL x{count}: {error}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
