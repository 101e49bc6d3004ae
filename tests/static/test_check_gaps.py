"""`check` where it used to say "all clear" and the import then failed.

Each fixture under fixtures/check/ has the shape of what a real backend tree
showed: hook calls of trunk code that an ``inherit(globals())`` override runs,
overrides that can never load, a spec root in the wrong place, unreadable
inputs, calls whose arguments the trunk definition that runs cannot take,
names the new trunk dropped, and an import failure that stops ``import R``.
The run-time side of each finding is shown by importing in a fresh
interpreter, several scenarios to one interpreter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import make, run, shown
from conftest import run_python

CHECK = Path(__file__).resolve().parent.parent.parent / "fixtures" / "check"
SPEC = "from flagtree_spec import spec_path\n\nspec_path(__path__)\n"
VENDOR = "third_party/vendor/backend/spec/"


def findings(
    capsys: pytest.CaptureFixture[str], repo: Path, *extra: str, backend: str = "vendor"
) -> tuple[int, list[Any], str]:
    code, out, err = run(
        capsys, "check", "--repo", str(repo), "-b", backend, "--format", "json", *extra
    )
    assert code in (0, 1, 2), err
    found: list[Any] = json.loads(out)["findings"] if out.strip() else []
    return code, found, err


def codes(found: list[Any], code: str) -> list[tuple[str, str, int]]:
    return [(f["severity"], f["path"], f["line"]) for f in found if f["code"] == code]


def message(found: list[Any], code: str, path: str) -> str:
    return next(f["message"] for f in found if f["code"] == code and f["path"] == path)


def outcomes(repo: Path, code: str, backend: str = "vendor") -> dict[str, str]:
    """Run *code* (which fills a dict ``out`` of results) in a fresh interpreter with
    *repo*'s trunk on the path and *backend* active; the dict it printed."""
    proc = run_python(
        "import json\nout = {}\n" + code + "\nprint(json.dumps(out))\n",
        env={"FLAGTREE_BACKEND": backend},
        path=[repo / "python"],
    )
    result: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def import_failure(repo: Path, module: str, backend: str = "vendor") -> str:
    """``Type: message`` of what ``import module`` raises in a fresh interpreter with
    *repo*'s trunk on the path and *backend* active; ``imports`` when it does."""
    real = outcomes(
        repo,
        f"try:\n    import {module}\nexcept Exception as exc:\n"
        "    out['r'] = type(exc).__name__ + ': ' + str(exc)\nelse:\n    out['r'] = 'imports'\n",
        backend,
    )
    return real["r"]


# --------------------------------------------------------------------------- 1. inherit


def test_fts012_and_fts009_see_the_hook_calls_of_the_lower_version_inherit_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An inheriting override runs its lower version: the trunk's hook calls are its
    own, except those in definitions it replaces."""
    repo = CHECK / "fts012_inherited_calls"
    trunk = str(repo / "python/toy/driver.py")
    override = str(repo / VENDOR / "toy/driver.py")
    code, found, _ = findings(capsys, repo)
    # device_name() is inherited: its call of the hook, which now takes an argument.
    assert codes(found, "FTS012") == [("error", trunk, 6)]
    text = message(found, "FTS012", trunk)
    assert f"it runs in {override} through inherit()" in text
    assert "missing required positional argument 'index'" in text
    # launch() is inherited: make_grid and pre_launch are called.  describe() is
    # replaced: its trunk call of describe_device (two arguments) never runs, and the
    # override's own call binds.
    assert codes(found, "FTS009") == []
    assert code == 1
    real = outcomes(
        repo,
        """
import toy.driver
for name, call in [("device_name", toy.driver.device_name),
                   ("launch", lambda: toy.driver.launch(4)),
                   ("describe", toy.driver.describe)]:
    try:
        out[name] = repr(call())
    except TypeError as exc:
        out[name] = "TypeError: " + str(exc)
""",
    )
    assert real["device_name"].startswith("TypeError: ") and "index" in real["device_name"]
    assert real == {
        "device_name": real["device_name"],
        "launch": "(4, 1)",
        "describe": "'vendor (short)'",
    }


def test_fts009_still_says_a_hook_only_a_replaced_trunk_definition_called_is_never_called(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/toy/__init__.py": SPEC,
            "python/toy/ops.py": "from flagtree_spec import spec\n\n\ndef run():\n"
            "    return spec('old_hook')\n",
            VENDOR + "__init__.py": "def old_hook():\n    return 1\n",
            VENDOR + "toy/ops.py": "from flagtree_spec import inherit\n\ninherit(globals())\n\n\n"
            "def run():\n    return 2\n",
        },
    )
    _, found, _ = findings(capsys, tmp_path)
    assert codes(found, "FTS009") == [("warning", str(tmp_path / VENDOR / "__init__.py"), 1)]


# --------------------------------------------------------------------------- 2. never loads


def test_fts008_misnamed_added_module_that_nothing_imports_is_an_error_one_imported_is_not(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/lang/__init__.py": SPEC,
            "python/lang/core.py": "def add(a, b):\n    return a + b\n",
            "python/lang/jit.py": "X = 1\n",
            "python/lang/use.py": "from . import jitx\n",
            VENDOR + "lang/cores.py": "def add(a, b):\n    return b + a\n",
            VENDOR + "lang/jitx.py": "X = 2\n",
            VENDOR + "lang/extra.py": "Y = 1\n",
        },
    )
    code, found, _ = findings(capsys, tmp_path, "--select", "FTS008")
    assert codes(found, "FTS008") == [
        ("error", str(tmp_path / VENDOR / "lang/cores.py"), 1),
        ("info", str(tmp_path / VENDOR / "lang/extra.py"), 1),
        ("info", str(tmp_path / VENDOR / "lang/jitx.py"), 1),  # lang/use.py imports it
    ]
    cores = message(found, "FTS008", str(tmp_path / VENDOR / "lang/cores.py"))
    assert "nothing imports" in cores and "did you mean lang.core? Rename this file" in cores
    assert code == 1


# --------------------------------------------------------------------------- 4. unreadable


def test_unreadable_mirror_folder_and_unreadable_trunk_counterparts_are_input_errors() -> None:
    """Run as an unprivileged user (a forked child drops to uid 65534 when the tests run
    as root): a mirror folder that cannot be listed, and trunk modules an override
    shadows or inherits that cannot be read, are input errors, never a silent pass."""
    found = run_python(
        """
        import json, os, shutil, tempfile
        from flagtree_spec._tools.check.driver import check
        from flagtree_spec._tools.model.model import load
        from flagtree_spec._tools.model.overrides import list_rows

        top = tempfile.mkdtemp(dir="/tmp")
        spec = "from flagtree_spec import spec_path\\nspec_path(__path__)\\n"
        files = {
            "python/upkg/__init__.py": spec,
            "python/upkg/whole.py": "X = 1\\n",
            "python/upkg/lower.py": "Y = 1\\n",
            "python/upkg/sub/__init__.py": spec,
            "python/upkg/sub/mod.py": "Z = 1\\n",
            "third_party/vendor/backend/spec/upkg/whole.py": "X = 2\\n",
            "third_party/vendor/backend/spec/upkg/lower.py":
                "from flagtree_spec import inherit\\ninherit(globals())\\nW = 1\\n",
            "third_party/vendor/backend/spec/upkg/sub/mod.py": "Z = 2\\n",
        }
        for rel, text in files.items():
            path = os.path.join(top, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        for folder, _, _ in os.walk(top):
            os.chmod(folder, 0o755)
        os.chmod(os.path.join(top, "python/upkg/whole.py"), 0)
        os.chmod(os.path.join(top, "python/upkg/lower.py"), 0)
        os.chmod(os.path.join(top, "third_party/vendor/backend/spec/upkg/sub"), 0o311)
        read, write = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(read)
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            model = load(repo=top, backends=["vendor"])
            findings = [f.code for f in check(model)]
            rows = [r["module"] for r in list_rows(model)]
            problems = [[os.path.relpath(p.path, top), p.message] for p in model.problems]
            os.write(write, json.dumps([problems, findings, rows]).encode())
            os._exit(0)
        os.close(write)
        data = os.read(read, 1 << 20)
        os.waitpid(child, 0)
        os.chmod(os.path.join(top, "third_party/vendor/backend/spec/upkg/sub"), 0o755)
        shutil.rmtree(top)
        print(data.decode())
        """
    )
    problems, codes_found, rows = json.loads(found.stdout.strip().splitlines()[-1])
    by_file = dict(problems)
    assert sorted(by_file) == [
        "python/upkg/lower.py",
        "python/upkg/whole.py",
        "third_party/vendor/backend/spec/upkg/sub",
    ]
    assert by_file["python/upkg/whole.py"].startswith("cannot be read (Permission denied)")
    listing = by_file["third_party/vendor/backend/spec/upkg/sub"]
    assert listing.startswith("cannot be listed (Permission denied)") and "upkg.sub" in listing
    assert "upkg.sub.mod" not in rows  # what list cannot see it says it cannot see
    assert codes_found == []


# --------------------------------------------------------------------------- 7. what breaks


def test_fts004_in_a_file_the_root_package_imports_at_start_up_says_import_r_fails_and_how(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = CHECK / "fts004_startup_chain"
    disasm = str(repo / VENDOR / "tri/tools/disasm.py")
    code, found, _ = findings(capsys, repo)
    assert codes(found, "FTS004") == [("error", disasm, 2), ("error", disasm, 10)]
    first, later = (f["message"] for f in found if f["code"] == "FTS004")
    trunk = repo / "python/tri"
    assert first.endswith(
        "so 'import tri' fails: "
        f"{trunk / '__init__.py'}:6 imports tri.compiler; "
        f"{trunk / 'compiler/__init__.py'}:5 imports tri.compiler.compiler; "
        f"{trunk / 'compiler/compiler.py'}:2 (run by inherit() in "
        f"{repo / VENDOR / 'tri/compiler/compiler.py'}) imports tri.tools.disasm"
    )
    # An import in a function body runs only when it is called.
    assert "import tri" not in later
    assert code == 1
    assert import_failure(repo, "tri") == "ModuleNotFoundError: No module named 'tri.common'"


# --------------------------------------------------------------------------- 5. calls


def test_fts024_calls_whose_arguments_the_trunk_definition_that_runs_cannot_take(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The backend's JITFunction (kept by an inheriting override) calls the trunk's
    KernelParam with 4 arguments; the trunk's takes 3 now: TypeError at import."""
    repo = CHECK / "fts024_call_changed"
    jit = str(repo / VENDOR / "tri/runtime/jit.py")
    code, found, _ = findings(capsys, repo)
    assert codes(found, "FTS024") == [("error", jit, 12), ("error", jit, 13)]
    kernel, backend = (f["message"] for f in found if f["code"] == "FTS024")
    assert kernel.startswith("KernelParam(...): the class KernelParam(num, param, ")
    assert f"{repo / 'python/tri/runtime/jit.py'}:1" in kernel
    assert "takes 3 positional arguments but 4 were given" in kernel
    assert backend.startswith("make_backend(...): the function make_backend(target)")
    assert code == 1
    # The call in param(), where a parameter shadows the global, is not judged.
    failure = import_failure(repo, "tri")
    assert failure.startswith("TypeError: ") and "5 were given" in failure


def test_fts024_leaves_alone_what_syntax_cannot_decide(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/tri/__init__.py": SPEC,
            "python/tri/lib.py": (
                "import enum, functools\n\n\n"
                "def deco(f):\n    return f\n\n\n"
                "@deco\ndef decorated(a):\n    return a\n\n\n"
                "class Colour(enum.Enum):\n    RED = 1\n\n    def __init__(self, v):\n"
                "        self.v = v\n\n\n"
                "class Plain:\n    pass\n\n\n"
                "class Error(ValueError):\n    def __init__(self, what):\n"
                "        super().__init__(what)\n\n\n"
                "def takes(a, *rest, key=None, **more):\n    return a\n"
            ),
            # The version the override shadows makes the same call of Error().
            "python/tri/use.py": "from .lib import Error\n\n\ndef run(args):\n    Error()\n",
            VENDOR + "tri/use.py": (
                "from .lib import Colour, Error, Plain, decorated, takes\n\n\n"
                "def run(args):\n"
                "    decorated(1, 2)\n"  # decorated: unknown
                "    Colour(1, 2)\n"  # a base with a metaclass: unknown
                "    takes(1, 2, 3, key=4, other=5)\n"  # binds
                "    takes(*args)\n"  # unpacked: unknown
                "    Error('x')\n"  # binds
                "    Error()\n"  # missing 'what', but written so in trunk's use.py too
                "    Plain(1)\n"  # takes no argument
                "    Error(\n        )\n"  # missing 'what'
            ),
        },
    )
    _, found, _ = findings(capsys, tmp_path, "--select", "FTS024")
    use = str(tmp_path / VENDOR / "tri/use.py")
    assert codes(found, "FTS024") == [("error", use, 11), ("error", use, 12)]
    assert "takes 0 positional arguments but 1 were given" in found[0]["message"]
    assert "missing required positional argument 'what'" in found[1]["message"]


def test_fts024_trunk_calls_of_a_definition_the_override_gives_other_parameters(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The override keeps an old Kernel (two parameters) while the new trunk's takes
    three: the trunk's jit() (inherited) and trunk's use.py (which imports Kernel)
    call it with three, and the override's own copy of jit() too."""
    trunk_jit = (
        "class Kernel:\n    def __init__(self, fn, version, debug):\n        self.fn = fn\n\n\n"
        "def jit(fn):\n    return Kernel(fn, 1, False)\n\n\n"
        "def launch(fn):\n    return Kernel(fn, 2, True)\n"
    )
    make(
        tmp_path,
        {
            "python/tri/__init__.py": SPEC,
            "python/tri/jit.py": trunk_jit,
            "python/tri/use.py": "from .jit import Kernel\n\nK = Kernel(len, 1, True)\n",
            VENDOR + "tri/jit.py": (
                "from flagtree_spec import inherit\n\ninherit(globals())\n\n\n"
                "class Kernel:\n    def __init__(self, fn, version):\n        self.fn = fn\n\n\n"
                "def launch(fn):\n    return Kernel(fn, 2, True)\n"
            ),
        },
    )
    code, found, _ = findings(capsys, tmp_path, "--select", "FTS024")
    trunk, use = str(tmp_path / "python/tri/jit.py"), str(tmp_path / "python/tri/use.py")
    override = str(tmp_path / VENDOR / "tri/jit.py")
    # Trunk's launch() is replaced (it never runs); the override's launch calls its own Kernel.
    assert codes(found, "FTS024") == [
        ("error", trunk, 7),
        ("error", use, 3),
        ("error", override, 12),
    ]
    assert all("takes 2 positional arguments but 3 were given" in f["message"]
               for f in found)  # fmt: skip
    assert "(it runs in it through inherit())" in found[0]["message"]
    assert "(it imports it)" in found[1]["message"]
    assert found[2]["message"].startswith("Kernel(...): this call, written for the trunk's")
    assert code == 1
    assert import_failure(tmp_path, "tri.use").startswith("TypeError: ")


def test_fts023_a_name_the_lower_version_deletes_after_binding_it_is_bound_nowhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/tri/__init__.py": SPEC,
            "python/tri/extra.py": "_backends = ['a']\n__all__ = _backends\ndel _backends\n",
            VENDOR + "tri/extra.py": (
                "from flagtree_spec import inherit\n\ninherit(globals())\n\n__all__ = _backends\n"
            ),
        },
    )
    _, found, _ = findings(capsys, tmp_path, "--select", "FTS023")
    assert codes(found, "FTS023") == [("error", str(tmp_path / VENDOR / "tri/extra.py"), 5)]


# --------------------------------------------------------------------------- 6. dropped names


def test_fts023_a_name_the_new_trunk_dropped_is_read_while_the_override_is_imported(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = CHECK / "fts023_name_dropped"
    override = str(repo / VENDOR / "lang/extra/libdevice.py")
    code, found, _ = findings(capsys, repo)
    assert codes(found, "FTS023") == [("error", override, 8)]
    text = message(found, "FTS023", override)
    assert text.startswith("reads 'T' while it is imported, and nothing binds that name")
    assert str(repo / "python/lang/extra/libdevice.py") in text and "NameError" in text
    assert code == 1
    assert import_failure(repo, "lang.extra.libdevice") == "NameError: name 'T' is not defined"


def test_fts023_counts_every_binding_python_sees_and_only_what_runs_on_import(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/npkg/__init__.py": SPEC,
            "python/npkg/base.py": "__all__ = ['exported']\nexported = 1\nhidden = 2\n",
            "python/npkg/plain.py": "visible = 1\n_private = 2\n",
            VENDOR + "npkg/mod.py": (
                "from __future__ import annotations\n"
                "from typing import TYPE_CHECKING\n"
                "from .base import *\n"
                "from .plain import *\n"
                "if TYPE_CHECKING:\n    from .base import Only\n"
                "x = exported + visible\n"  # both from star imports
                "def f(a: Only) -> Only:\n    return undefined_in_body\n"  # not run on import
                "def g():\n    global later\n    later = 1\n"
                "y = later if False else 0\n"  # bound by a global statement
                "z = [i for i in range(3) if i]\n"
                "(w := 3)\n"
                "print(w, len, __file__, __name__)\n"
                "class C:\n    k = 1\n    m = k + 1\n"
                "if __name__ == '__main__':\n    print(script_only)\n"
                "q = hidden\n"  # not exported by base's __all__
                "r = _private\n"  # not exported without __all__
            ),
        },
    )
    _, found, _ = findings(capsys, tmp_path, "--select", "FTS023")
    mod = str(tmp_path / VENDOR / "npkg/mod.py")
    assert [(f["line"], f["message"].split("'")[1]) for f in found] == [
        (22, "hidden"),
        (23, "_private"),
    ]
    assert {f["path"] for f in found} == {mod}


# --------------------------------------------------------------------------- 3. misplaced


NAMED = Path(__file__).resolve().parent.parent.parent / "fixtures" / "named_backends"


def test_plain_check_names_a_spec_root_in_a_wrong_place_and_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without -b, check checks every backend that has a spec root; one whose spec root
    lacks the backend/ level is named, as with -b, and fails the run."""
    code, _, err = run(capsys, "check", "--repo", str(NAMED))
    third = NAMED / "third_party"
    assert "checking every backend of the repository: vendor" in err
    assert (
        f"{shown(third / 'misplaced/spec')}:1:1: input error: backend 'misplaced' (--backend) "
        f"has no spec root for layoutpkg: {shown(third / 'misplaced/spec')} looks like a spec "
        f"root in the wrong place: move it to {shown(third / 'misplaced/backend/spec')}"
    ) in err
    assert code == 2


def test_a_spec_root_in_a_wrong_place_is_named_by_strict_mode_and_warned_once_at_run_time() -> None:
    third = NAMED / "third_party"
    wrong = f"{third / 'misplaced/spec'} looks like a spec root in the wrong place: move it to "
    found = run_python(
        """
        import json, os, warnings
        from flagtree_spec import SpecConfigError, activate
        out = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import layoutpkg.mod
            activate("misplaced")  # resolved again: the warning is not repeated
            import layoutpkg
            out["file"] = layoutpkg.mod.__file__
        out["warnings"] = [str(w.message) for w in caught]
        out["category"] = [w.category.__name__ for w in caught]
        os.environ["FLAGTREE_SPEC_STRICT"] = "1"
        try:
            activate("misplaced")
        except SpecConfigError as exc:
            out["strict"] = str(exc)
        print(json.dumps(out))
        """,
        env={"FLAGTREE_BACKEND": "misplaced"},
        path=[NAMED / "python"],
    )
    out = json.loads(found.stdout.strip().splitlines()[-1])
    assert out["file"] == str(NAMED / "python/layoutpkg/mod.py")  # the trunk runs
    assert out["category"] == ["SpecWarning"]
    (warning,) = out["warnings"]
    assert wrong in warning and "the program runs on the trunk without it" in warning
    assert wrong in out["strict"] and "FLAGTREE_SPEC_STRICT=1" in out["strict"]


# --------------------------------------------------------------------------- spec_path calls


def test_after_an_upgrade_check_names_each_init_that_lost_spec_path_and_spec_path_restores_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The new trunk has none of the spec_path(__path__) calls the old one had: check
    names each package init the mirror files need it in, 'spec-path' lists them (exit
    1) and with --apply inserts the guarded idiom; then the overrides load."""
    make(
        tmp_path,
        {
            "python/upg/__init__.py": '"""The new trunk."""\nfrom . import core\n',
            "python/upg/core.py": "X = 'trunk'\n",
            "python/upg/lang/__init__.py": "from .ops import op\n",
            "python/upg/lang/ops.py": "def op():\n    return 'trunk'\n",
            "python/upg/lang/extra/mod.py": "Y = 1\n",  # a namespace portion
            "python/upg/tools/__init__.py": "",
            VENDOR + "upg/core.py": "X = 'vendor'\n",
            VENDOR + "upg/lang/ops.py": "def op():\n    return 'vendor'\n",
            VENDOR + "upg/lang/extra/added.py": "Z = 1\n",  # its package's parent needs it
        },
    )
    code, found, _ = findings(capsys, tmp_path)
    (unmodified,) = [f["message"] for f in found if f["code"] == "FTS001"]
    inits = [tmp_path / "python/upg/__init__.py", tmp_path / "python/upg/lang/__init__.py"]
    assert (
        f"the 2 package inits the mirror files need: {inits[0]}, {inits[1]} "
        "('flagtree-spec spec-path -b vendor --apply' inserts it)"
    ) in unmodified
    assert code == 1
    code, out, err = run(capsys, "spec-path", "--repo", str(tmp_path), "-b", "vendor")
    assert out.splitlines() == [f"missing  {inits[0]}", f"missing  {inits[1]}"]
    assert "nothing written" in err and code == 1
    code, out, _ = run(capsys, "spec-path", "--repo", str(tmp_path), "-b", "vendor", "--apply")
    assert out.splitlines() == [f"added  {inits[0]}", f"added  {inits[1]}"] and code == 0
    assert (
        inits[0]
        .read_text()
        .startswith('"""The new trunk."""\n\ntry:\n    from flagtree_spec import spec_path\n')
    )
    code, found, _ = findings(capsys, tmp_path)
    assert [f["code"] for f in found] == ["FTS008"] and code == 0  # added.py: a new module
    code, out, _ = run(capsys, "spec-path", "--repo", str(tmp_path), "-b", "vendor")
    assert out == "" and code == 0
    real = outcomes(
        tmp_path,
        "import upg, upg.lang.ops, upg.lang.extra.added\n"
        "out['core'] = upg.core.X\nout['op'] = upg.lang.ops.op()\n",
    )
    assert real == {"core": "vendor", "op": "vendor"}


def test_fts023_says_nothing_where_a_star_import_from_outside_may_bind_the_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make(
        tmp_path,
        {
            "python/tri/__init__.py": SPEC,
            "python/tri/lower.py": "from os.path import *\n",
            VENDOR + "tri/outside.py": "from os.path import *\n\nX = join\n",
            VENDOR
            + "tri/lower.py": "from flagtree_spec import inherit\n\ninherit(globals())\nY = join\n",
            VENDOR
            + "tri/nolower.py": "from flagtree_spec import inherit\n\ninherit(globals())\nZ = q\n",
            VENDOR + "tri/bound.py": "from .lower import *\n\nW = unbound_anywhere\n",
        },
    )
    _, found, _ = findings(capsys, tmp_path, "--select", "FTS023")
    # outside.py and lower.py: os.path's star import may bind it; nolower.py: FTS017's;
    # bound.py: lower.py's star import of os.path may bind anything too.
    assert found == []


OWN_PATH = Path(__file__).resolve().parent.parent.parent / "fixtures" / "own_path_init"


def test_a_package_init_override_that_extends_its_own_path_keeps_its_trunk_folders(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """FTS002 and FTS004 on FlagTree's iluvatar idiom: the override of a package's
    ``__init__`` imports its parent's ``__path__`` (a name every package has) and puts
    the trunk folder on its own ``__path__`` instead of calling ``spec_path``.  The
    static model reads such an init as keeping the trunk folders after its own, and
    ``which`` agrees with what a real import loads."""
    code, out, err = run(capsys, "check", "--repo", str(OWN_PATH), "-b", "acme", "--format", "json")
    assert code == 0, out + err
    assert [f["code"] for f in json.loads(out)["findings"]] == []
    code, out, _ = run(
        capsys, "which", "--repo", str(OWN_PATH), "-b", "acme", "pkg.sub", "pkg.sub.helper",
        "--format", "json",
    )  # fmt: skip
    assert code == 0
    predicted = {m["module"]: m["file"] for m in json.loads(out)}
    loaded = run_python(
        """
        import json, pkg.sub, pkg.sub.helper
        print(json.dumps({"pkg.sub": pkg.sub.__spec__.origin,
                          "pkg.sub.helper": pkg.sub.helper.__spec__.origin,
                          "f": pkg.sub.f(), "backend": pkg.sub.BACKEND}))
        """,
        env={"FLAGTREE_BACKEND": "acme"},
        path=[OWN_PATH / "python"],
    )
    real = json.loads(loaded.stdout)
    assert (real["f"], real["backend"]) == ("trunk", "acme")
    assert predicted == {"pkg.sub": real["pkg.sub"], "pkg.sub.helper": real["pkg.sub.helper"]}
    assert predicted["pkg.sub.helper"] == str(OWN_PATH / "python/pkg/sub/helper.py")


@pytest.mark.parametrize(
    "statement",
    [
        "__path__.append(_trunk)",
        "__path__.extend([_trunk])",
        "__path__.insert(1, _trunk)",
        "__path__ += [_trunk]",
        "__path__[:] = [*__path__, _trunk]",
        "__path__ = __import__('pkgutil').extend_path(__path__, __name__)",
    ],
)
def test_every_way_an_init_puts_folders_on_its_own_path_is_seen(statement: str) -> None:
    import ast

    from flagtree_spec._tools.model.facts import extract

    def extends(text: str) -> bool:
        return extract(ast.parse(text), text).extends_path

    assert extends(f"import os\n_trunk = os.getcwd()\nif True:\n    {statement}\n")
    assert not extends("path = []\npath.append(1)\nx = __path__[0]\n")
    assert not extends("import os\n__path__ = [os.path.dirname(__file__)]\n")  # narrows it
