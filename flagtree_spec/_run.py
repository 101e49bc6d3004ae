"""The ``run`` and ``autostart`` commands.

``flagtree-spec run [-b B] [--root R]... (-m MOD | SCRIPT) [ARGS...]`` runs a
program with auto mode for the root packages named by ``--root`` (or by
``FLAGTREE_SPEC_AUTO``).  Child Python processes inherit the specialisation
through the environment: ``FLAGTREE_SPEC_AUTO`` and ``FLAGTREE_BACKEND`` name
it, and the folder ``flagtree_spec/_startup`` is put first on ``PYTHONPATH``;
its ``sitecustomize`` starts auto mode in every Python process that starts
with that environment, then runs the environment's own ``sitecustomize``.

``flagtree-spec autostart enable|disable`` writes or removes a one-line
``.pth`` file in the environment's ``site-packages`` that starts auto mode
when ``FLAGTREE_SPEC_AUTO`` is set and does nothing otherwise, nor after the
library is uninstalled.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import runpy
import sys
import sysconfig
import types
from importlib.machinery import ModuleSpec, PathFinder
from typing import Any

from ._auto import install
from ._config import MAX_NAMES, parse_module_names, parse_stack
from ._errors import SpecError
from ._usage import error

__all__ = ["AUTOSTART_FILE", "AUTOSTART_LINE", "STARTUP_DIR", "add_commands"]

STARTUP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_startup")
AUTOSTART_FILE = "flagtree_spec_autostart.pth"
# site executes .pth lines that start with "import"; this one imports nothing
# else unless FLAGTREE_SPEC_AUTO is set, and nothing at all once the library is gone.
AUTOSTART_LINE = (
    "import os; exec('try:\\n from flagtree_spec._auto import start_from_environment\\n"
    "except ImportError:\\n pass\\nelse:\\n start_from_environment()') "
    "if os.environ.get('FLAGTREE_SPEC_AUTO', '').strip() else None\n"
)


def add_commands(commands: Any) -> None:
    """Register ``run`` and ``autostart`` with the ``flagtree-spec`` parser."""
    run = commands.add_parser(
        "run",
        help="run a program with auto mode for root packages",
        description=(
            "Run a Python program with auto mode (every package of the root packages "
            "specialised as it is imported, no spec_path() calls needed). Child Python "
            "processes it starts inherit the same specialisation."
        ),
        usage="%(prog)s [-b B] [--root R] (-m MOD | SCRIPT) [ARGS...]",
    )
    run.add_argument("-b", "--backend", metavar="B", help="backend stack, like FLAGTREE_BACKEND")
    run.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="R",
        help="root package to specialise (repeatable; default: FLAGTREE_SPEC_AUTO=R[,R])",
    )
    run.add_argument(
        "-m", dest="module", nargs=argparse.REMAINDER, metavar="MOD", help="run a module"
    )
    run.add_argument("script", nargs=argparse.REMAINDER, metavar="SCRIPT [ARGS...]")
    run.set_defaults(handler=_run_command)

    autostart = commands.add_parser(
        "autostart",
        help="opt-in start-up hook honouring FLAGTREE_SPEC_AUTO",
        description=(
            f"Write (enable) or remove (disable) {AUTOSTART_FILE} in site-packages: at every "
            "Python start-up it installs auto mode for the roots in FLAGTREE_SPEC_AUTO=R[,R] "
            "when that is set, and does nothing otherwise or once the library is uninstalled."
        ),
    )
    autostart.add_argument("action", choices=["enable", "disable"])
    autostart.add_argument(
        "--site-dir",
        metavar="DIR",
        help="site-packages folder to change (default: this interpreter's purelib folder)",
    )
    autostart.set_defaults(handler=_autostart_command)


def _fail(message: str) -> int:
    """*message* (``"<command>: text"``) as the command's error line; exit code 2."""
    command, _, text = message.partition(": ")
    return error(command, text)


def _run_command(args: argparse.Namespace) -> int:
    module_args: list[str] = args.module or []
    script_args: list[str] = args.script or []
    if module_args and script_args:
        return _fail("run: give -m MOD or SCRIPT, not both (options go before -m or SCRIPT)")
    if args.module is not None and not module_args:
        return _fail("run: -m needs a module name")
    if not module_args and not script_args:
        return _fail("run: give the program to run: -m MOD [ARGS...] or SCRIPT [ARGS...]")
    try:
        roots = _roots(args.root)
        if args.backend is not None:
            parse_stack(args.backend, "--backend")
    except SpecError as exc:
        return _fail(f"run: {exc}")
    if not roots:
        return _fail(
            "run: name the root packages to specialise with --root R (repeatable) or "
            "FLAGTREE_SPEC_AUTO=R[,R]"
        )
    if args.backend is not None:
        os.environ["FLAGTREE_BACKEND"] = args.backend.strip()
    os.environ["FLAGTREE_SPEC_AUTO"] = ",".join(roots)
    _export_absolute()
    _export_startup()
    if module_args:
        name, argv = module_args[0], module_args[1:]
        if not _safe_path():
            sys.path[0:1] = [os.getcwd()]
        # Installed once sys.path is the program's: the root packages it imports decide.
        for root in roots:
            install(root)
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError) as exc:
            return _fail(f"run: cannot run module {name!r}: {exc}")
        if found is None:
            return _fail(f"run: no module named {name!r}")
        sys.argv = [name, *argv]
        runpy.run_module(name, run_name="__main__", alter_sys=True)
        return 0
    script, argv = script_args[0], script_args[1:]
    if not os.path.exists(script):
        return _fail(f"run: no such script {script!r}")
    from pkgutil import get_importer

    archive = os.path.abspath(script)
    if get_importer(archive) is not None:
        # A folder or zip archive with a __main__.py: as "python app.pyz" does, its
        # absolute path goes first on sys.path (in place of the working folder).
        main = PathFinder.find_spec("__main__", [archive])
        if main is None or main.loader is None:
            sys.stderr.write(f"flagtree-spec: run: can't find '__main__' module in {script!r}\n")
            return 1
        sys.path[0 : 0 if _safe_path() else 1] = [archive]  # -P keeps the archive too
        for root in roots:
            install(root)
        sys.argv = [script, *argv]
        _run_main(main)
        return 0
    if not _safe_path():
        # As "python SCRIPT" does: the script's folder, symlinks resolved.
        sys.path[0:1] = [os.path.dirname(os.path.realpath(script))]
    for root in roots:
        install(root)
    sys.argv = [script, *argv]
    runpy.run_path(script, run_name="__main__")
    return 0


def _run_main(spec: ModuleSpec) -> None:
    """Run the ``__main__`` module *spec* of a folder or zip archive as ``python app.pyz`` does."""
    assert spec.loader is not None
    code = spec.loader.get_code("__main__")  # type: ignore[attr-defined]
    module = types.ModuleType("__main__")
    module.__dict__.update(
        __file__=spec.origin,
        __cached__=spec.cached,
        __loader__=spec.loader,
        __spec__=spec,
        __package__="",
    )
    sys.modules["__main__"] = module
    exec(code, module.__dict__)


def _roots(given: list[str]) -> tuple[str, ...]:
    if given:
        names = parse_module_names(",".join(given), "--root", MAX_NAMES)
        what = "--root"
    else:
        value = os.environ.get("FLAGTREE_SPEC_AUTO", "")
        names = parse_module_names(value, "FLAGTREE_SPEC_AUTO", MAX_NAMES)
        what = "FLAGTREE_SPEC_AUTO"
    for name in names:
        if "." in name:
            raise SpecError(f"{what} {name!r} is not a top-level package name like 'triton'")
    return tuple(dict.fromkeys(names))


def _safe_path() -> bool:
    """Whether this interpreter keeps the program's folder off ``sys.path`` (-P, -I).

    ``python -P``, ``PYTHONSAFEPATH`` (CPython 3.11+) and ``python -I`` start a
    program without its folder (or the working directory) first on ``sys.path``;
    ``run`` then leaves ``sys.path`` alone, as the program would have it.
    """
    return bool(getattr(sys.flags, "safe_path", False) or sys.flags.isolated)


def _export_absolute() -> None:
    """Export the path settings as absolute paths: a child may start in another folder."""
    value = os.environ.get("FLAGTREE_SPEC_PATH", "")
    if value:
        entries = [os.path.abspath(e) if e.strip() else e for e in value.split(os.pathsep)]
        os.environ["FLAGTREE_SPEC_PATH"] = os.pathsep.join(entries)
    source_root = os.environ.get("FLAGTREE_SOURCE_ROOT", "")
    if source_root:
        os.environ["FLAGTREE_SOURCE_ROOT"] = os.path.abspath(source_root)


def _export_startup() -> None:
    """Make child Python processes start auto mode too (see the module docstring).

    The start-up folder goes first on ``PYTHONPATH``; the rest of the value is
    kept exactly, empty entries included (each one puts the child's working
    directory on its ``sys.path``), and the start-up module takes its folder off
    again, so a child's ``sys.path`` is what it would be without ``run``.
    """
    value = os.environ.get("PYTHONPATH", "")
    if STARTUP_DIR not in value.split(os.pathsep):
        os.environ["PYTHONPATH"] = STARTUP_DIR + (os.pathsep + value if value else "")


def _autostart_command(args: argparse.Namespace) -> int:
    site_dir = args.site_dir or sysconfig.get_paths()["purelib"]
    target = os.path.join(site_dir, AUTOSTART_FILE)
    if not os.path.isdir(site_dir):
        return _fail(f"autostart: {site_dir!r} is not a directory; pass --site-dir DIR")
    try:
        if args.action == "enable":
            with open(target, "w", encoding="utf-8") as f:
                f.write(AUTOSTART_LINE)
            print(f"autostart enabled: {target} (active when FLAGTREE_SPEC_AUTO=R[,R] is set)")
        elif os.path.exists(target):
            os.remove(target)
            print(f"autostart disabled: removed {target}")
        else:
            print(f"autostart was not enabled: no {target}")
    except OSError as exc:
        return _fail(
            f"autostart: cannot {args.action} it: cannot change {target}: {exc.strerror or exc}"
        )
    return 0
