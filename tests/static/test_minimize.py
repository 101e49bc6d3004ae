"""``migrate --minimize``: the three-way classification of top-level definitions."""

from __future__ import annotations

import ast
import json
import shutil
import textwrap
from pathlib import Path

import pytest
from cli_support import git, run
from conftest import FIXTURES, run_python

from flagtree_spec._tools.migrate.minimize import Minimized, minimize
from flagtree_spec._tools.migrate.render import prove

BASE = """\
import os


def mul(a, b):
    return a * b


def add(a, b):
    return a + b


def old():
    return 0


class A:
    def f(self):
        return 1
"""


def body(result: Minimized) -> list[str]:
    """The top-level names the override binds after its inherit call, in order."""
    assert result.text is not None, result.reason
    names = []
    tree = ast.parse(result.text)
    after = False
    for node in tree.body:
        if isinstance(node, ast.Expr) and ast.unparse(node) == "inherit(globals())":
            after = True
        elif after and isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif after and isinstance(node, ast.Assign):
            names.extend(ast.unparse(t) for t in node.targets)
        elif after and isinstance(node, ast.Delete):
            # The override's own import of inherit leaves no name behind.
            names.extend(
                f"del {ast.unparse(t)}" for t in node.targets if ast.unparse(t) != "inherit"
            )
    return names


def three(copy: str, trunk: str, base: str = BASE) -> Minimized:
    return minimize(copy, trunk, base, has_base=True)


def test_backend_only_change_is_kept() -> None:
    result = three(BASE.replace("a * b", "a * b * 2"), BASE)
    assert body(result) == ["mul"]
    assert result.kept == ("mul",)
    assert "return a * b * 2" in (result.text or "")


def test_trunk_only_change_is_inherited() -> None:
    result = three(BASE.replace("a * b", "a * b * 2"), BASE.replace("a + b", "b + a"))
    assert body(result) == ["mul"]  # add: trunk's new version flows in
    assert "b + a" not in (result.text or "") and "a + b" not in (result.text or "")


def test_change_by_both_is_kept_and_reported_for_manual_merge() -> None:
    result = three(BASE.replace("a + b", "a + b + 1"), BASE.replace("a + b", "b + a"))
    assert body(result) == ["add"]
    assert "add: changed by both the backend and trunk: merge by hand" in result.notes


def test_backend_added_definition_is_kept() -> None:
    result = three(BASE + "\n\ndef extra():\n    return os.sep\n", BASE)
    assert body(result) == ["extra"]
    assert "import os" in (result.text or "")  # the import the kept definition needs


def test_trunk_added_definition_is_inherited_never_deleted() -> None:
    copy = BASE.replace("a * b", "a * b * 2")
    result = three(copy, BASE + "\n\ndef newer():\n    return 2\n")
    assert body(result) == ["mul"]
    assert "newer" not in (result.text or "")


def test_backend_deleted_definition_is_deleted_after_inherit_and_reported() -> None:
    copy = BASE.replace("def old():\n    return 0\n", "")
    result = three(copy, BASE)
    assert body(result) == ["del old"]
    assert "old: deleted by the backend: the override deletes it" in result.notes


def test_trunk_deleted_definition_kept_by_backend_stays() -> None:
    copy = BASE.replace("return 0", "return 5")
    result = three(copy, BASE.replace("def old():\n    return 0\n", ""))
    assert body(result) == ["old"]
    assert any(n.startswith("old: trunk deleted it") for n in result.notes)


def test_without_base_every_differing_definition_is_kept_and_nothing_is_deleted() -> None:
    copy = BASE.replace("a * b", "a * b * 2").replace("def old():\n    return 0\n", "")
    result = minimize(copy, BASE.replace("a + b", "b + a"), None, has_base=False)
    assert body(result) == ["mul", "add"]
    assert not any(n.startswith("del") for n in body(result))
    assert result.notes[0].startswith("no base given")


def test_class_with_a_changed_method_is_kept_whole_as_a_class() -> None:
    result = three(BASE.replace("return 1", "return 2"), BASE)
    assert body(result) == ["A"]


@pytest.mark.parametrize(
    ("capture", "kept"),
    [
        ("class B(A):\n    pass\n", ["A", "B"]),
        ("def deco(f):\n    return f\n\n\n@deco\nclass C(A):\n    pass\n", ["A", "C"]),
        ("def g(x=A):\n    return x\n", ["A", "g"]),
        ("TABLE = {'a': A}\n", ["A", "TABLE"]),
        ("X = A()\n", ["A", "X"]),
        ("class B(A):\n    pass\n\n\nclass D(B):\n    pass\n\n\nT = [D]\n", ["A", "B", "D", "T"]),
    ],
)
def test_import_time_captures_of_a_kept_definition_are_kept_transitively(
    capture: str, kept: list[str]
) -> None:
    trunk = BASE + "\n\n" + capture
    copy = trunk.replace("return 1", "return 2")
    result = three(copy, trunk, trunk)
    assert body(result) == kept


def test_trunk_only_statement_capturing_a_kept_name_is_reported() -> None:
    trunk = BASE + "\n\nclass Newer(A):\n    pass\n"
    result = three(BASE.replace("return 1", "return 2"), trunk)
    assert body(result) == ["A"]
    assert "Newer: trunk's (not in the copy) captures A when the module runs" in result.notes[0]


def test_call_time_uses_are_not_captures() -> None:
    trunk = BASE + "\n\ndef use():\n    return A().f()\n"
    result = three(trunk.replace("return 1", "return 2"), trunk, trunk)
    assert body(result) == ["A"]


def test_decorator_capture_of_a_kept_function_is_kept() -> None:
    trunk = BASE + "\n\n@mul\ndef h():\n    pass\n"
    result = three(trunk.replace("a * b", "a"), trunk, trunk)
    assert body(result) == ["mul", "h"]


@pytest.mark.parametrize(
    ("statement", "why"),
    [
        ("print('loaded')\n", "module-level statements with effects differ"),
        ("__all__ = ['mul']\n__all__ += ['add']\n", "module-level statements with effects differ"),
        ("if os.sep:\n    Z = 1\n", "module-level statements with effects differ"),
        ("try:\n    import json\nexcept ImportError:\n    json = None\n", "effects differ"),
        ("Y = os.getcwd()\n", "its value is computed by a call"),
        ("@register('x')\ndef r():\n    pass\n", "registers it"),
    ],
)
def test_differing_module_level_effects_keep_the_file_whole(statement: str, why: str) -> None:
    result = three(BASE + "\n\n" + statement, BASE)
    assert result.text is None
    assert why in result.reason


def test_unchanged_effect_that_captures_a_kept_name_keeps_the_file_whole() -> None:
    trunk = BASE + "\n\nREGISTRY = []\nREGISTRY.append(mul)\n"
    result = three(trunk.replace("a * b", "a"), trunk, trunk)
    assert result.text is None
    assert "uses mul when the module runs, and would run twice" in result.reason


def test_trunk_changed_effects_flow_in_when_the_backend_kept_them() -> None:
    trunk = BASE + "\n\nprint('trunk')\n"
    result = three(BASE.replace("a * b", "a"), trunk)
    assert body(result) == ["mul"]


def test_encoding_cookie_docstring_and_future_imports_stay_first() -> None:
    base = '# -*- coding: latin-1 -*-\n"""Doc."""\nfrom __future__ import annotations\n\n' + BASE
    result = three(base.replace("a * b", "a"), base, base)
    assert result.text is not None
    lines = result.text.splitlines()
    assert lines[:3] == [
        "# -*- coding: latin-1 -*-",
        '"""Doc."""',
        "from __future__ import annotations",
    ]
    assert lines[4:7] == ["from flagtree_spec import inherit", "", "inherit(globals())"]


def test_copy_whose_definitions_all_equal_the_bases_or_trunks_is_dropped() -> None:
    trunk = BASE.replace("a + b", "b + a")
    result = three(BASE, trunk)
    assert result.same and result.text is None
    assert (
        result.reason
        == "every definition equals the base's or trunk's: the backend changed nothing"
    )
    # Without a base: every definition of the copy equals trunk's, and trunk's
    # addition (newer) must not be lost by moving the copy whole.
    alone = minimize(BASE, BASE + "\n\ndef newer():\n    pass\n", None, has_base=False)
    assert alone.same and alone.text is None and "equals trunk's" in alone.reason


def test_a_version_that_does_not_parse_keeps_the_file_whole() -> None:
    result = three("def (:\n", BASE)
    assert result.text is None and "does not parse" in result.reason


def test_prove_rejects_an_override_that_loses_a_definition() -> None:
    copy = BASE.replace("a * b", "a")
    good = three(copy, BASE)
    assert good.text is not None
    assert prove(copy, BASE, good.text, (), ()) == ""
    wrong = good.text.replace("return a\n", "return a * b\n")
    assert prove(copy, BASE, wrong, (), ()) == "mul would not be bound to the copy's definition"
    assert prove(copy, BASE, "X = 1\n", (), ()) == "no inherit(globals()) call"
    copy = BASE.replace("def old():\n    return 0\n", "")
    deleting = three(copy, BASE).text
    assert deleting is not None and "del old" in deleting
    assert prove(copy, BASE, deleting, (), ("old",)) == ""
    kept = deleting.replace("del old\n", "")
    assert prove(copy, BASE, kept, (), ("old",)) == "old would stay bound"
    trunk = BASE + "\n\nclass B(A):\n    pass\n"
    copy = trunk.replace("return 1", "return 2")
    lossy = "from flagtree_spec import inherit\ninherit(globals())\ndel inherit\n"
    lossy += "class A:\n    def f(self):\n        return 2\n"
    assert prove(copy, trunk, lossy, (), ()).endswith("would capture trunk's A")
    helper = good.text.replace("del inherit\n", "")
    assert (
        prove(copy, BASE, helper, (), ()) == "inherit, the override's own import, would stay bound"
    )


# --------------------------------------------------------------------------- through the command

REPO = FIXTURES / "migrate_repo"
COPY = "third_party/acme/python/minitri"
MIRROR = "third_party/acme/backend/spec/minitri"


def test_minimize_with_base_rev_reads_the_base_from_git(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    top = tmp_path / "repo"
    shutil.copytree(REPO, top, symlinks=True)
    trunk = top / "python" / "minitri"
    # History: the base trunk first, the current trunk later.
    shutil.rmtree(trunk)
    shutil.copytree(FIXTURES / "migrate_base" / "minitri", trunk)
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "base")
    base = git(top, "rev-parse", "HEAD").strip()
    shutil.rmtree(trunk)
    shutil.copytree(REPO / "python" / "minitri", trunk)
    git(top, "add", "-A")
    git(top, "commit", "-qm", "trunk moves on")
    argv = ["migrate", "--repo", str(top), "-b", "acme", "--minimize", "--format", "json"]
    code, out, err = run(capsys, *argv, "--base-rev", base)
    assert code == 0, err
    by_rev = json.loads(out)
    code, out, err = run(capsys, *argv, "--base", str(FIXTURES / "migrate_base" / "minitri"))
    assert code == 0, err
    assert json.loads(out) == by_rev
    entries = {e["path"]: e for e in by_rev["entries"]}
    assert entries["runtime/jit.py"]["action"] == "minimize"
    assert entries["runtime/jit.py"]["reason"].endswith("1 changed name(s): cache_key")
    assert entries["compiler/code_generator.py"]["reason"].endswith("visit_dot")
    assert entries["runtime/autotuner.py"]["action"] == "move"  # a registering decorator

    code, out, err = run(capsys, *argv[:-2], "--base-rev", base, "--apply", "--add-spec-path")
    assert code == 0, out + err
    assert "check: 0 errors" in out
    proc = run_python(
        textwrap.dedent(
            """
            import minitri.runtime.jit as jit, minitri.compiler.code_generator as cg
            print(jit.cache_key(jit.jit)[0])          # the backend's change
            print(jit.specialize(True))                # trunk's later fix
            print(callable(jit.interpret_enabled))     # trunk's later addition
            try:
                cg.CodeGenerator({"num_warps": 3}).num_warps()
            except ValueError:
                print("trunk-fix")
            """
        ),
        path=[top / "python"],
        env={"FLAGTREE_BACKEND": "acme"},
    )
    assert proc.stdout.split() == ["acme", "i1", "True", "trunk-fix"]
    # The full copy stays in history.
    assert "acme" in git(top, "show", f"HEAD:{COPY}/runtime/jit.py")


def test_a_value_made_by_a_call_that_touches_nothing_else_is_minimized() -> None:
    # Triton's T = TypeVar("T"): running trunk's statement and then the copy's
    # leaves the copy's value, and nothing else happens.
    trunk = 'from typing import TypeVar\n\nT = TypeVar("T")\n\n\ndef f():\n    return 1\n'
    copy = trunk.replace('TypeVar("T")', 'TypeVar("T", bound=int)')
    result = minimize(copy, trunk, trunk, has_base=True)
    assert result.kept == ("T",)
    assert result.text is not None and 'T = TypeVar("T", bound=int)' in result.text
    namespace: dict[str, object] = {}
    exec(trunk, namespace)
    exec(
        result.text.replace("from flagtree_spec import inherit\n", "").replace(
            "inherit(globals())\ndel inherit\n", ""
        ),
        namespace,
    )
    assert getattr(namespace["T"], "__bound__", None) is int


def test_a_trunk_definition_calling_a_kept_one_that_cannot_take_the_call_is_kept_too() -> None:
    # Trunk's jit() (changed by trunk only) calls JITFunction(fn, debug=...); the
    # copy's JITFunction (kept) has no such parameter: the copy's jit is kept too.
    base = "class JITFunction:\n    def __init__(self, fn):\n        self.fn = fn\n\n\n"
    base += "def jit(fn):\n    return JITFunction(fn)\n"
    trunk = base.replace("self, fn)", "self, fn, debug=False)").replace(
        "JITFunction(fn)\n", "JITFunction(fn, debug=True)\n"
    )
    copy = base.replace("self.fn = fn", "self.fn = fn\n        self.device = 'acme'")
    result = minimize(copy, trunk, base, has_base=True)
    assert result.kept == ("JITFunction", "jit")
    assert (
        "jit: trunk's calls JITFunction with 1 positional argument and keywords debug (line 7 "
        "of trunk's file), which the copy's JITFunction(fn) cannot take (got an unexpected "
        "keyword argument 'debug'); trunk's JITFunction(fn, debug=...) can: the override keeps "
        "the copy's jit too; merge by hand"
    ) in result.notes
