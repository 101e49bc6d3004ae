"""``migrate`` on the shapes found in real whole-tree copies, proven by importing.

Each fixture under ``fixtures/migrate_cases/`` is a small checkout (trunk
``python/minitri``, backend ``acme``'s copy ``third_party/acme/python/minitri``
and, where the case needs one, the trunk the copy was made from,
``base/minitri``) of one shape that made a migrated real tree fail to import
or behave differently from its copy.  Each test migrates a committed copy of
it with ``--minimize --apply --add-spec-path`` and then imports the result in
a fresh interpreter (trunk plus the new spec tree, backend ``acme``), and
compares what it finds with what the copy itself does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_support import as_migrated, git, run
from cli_support import as_the_copy as copy_run
from conftest import FIXTURES

CASES = FIXTURES / "migrate_cases"
COPY = "third_party/acme/python/minitri"
MIRROR = "third_party/acme/backend/spec/minitri"


def checkout(tmp_path: Path, case: str) -> Path:
    """The fixture of *case*, copied and committed in git."""
    top = tmp_path / case
    shutil.copytree(CASES / case, top)
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "whole-tree copy")
    return top


def migrate(
    capsys: pytest.CaptureFixture[str], top: Path, *extra: str, base: bool = False
) -> dict[str, Any]:
    """Migrate *top* (with its ``base/`` when *base*), applying it; the JSON report."""
    argv = ["migrate", "--repo", str(top), "-b", "acme", "--minimize", *extra]
    if base:
        argv += ["--base", str(top / "base" / "minitri")]
    code, out, err = run(capsys, *argv, "--apply", "--add-spec-path", "--format", "json")
    assert code == 0, out + err
    data: dict[str, Any] = json.loads(out)
    return data


def as_the_copy(case: str, code: str) -> Any:
    """Run *code* against the copy itself (the fixture's, untouched)."""
    return copy_run(CASES / case, code)


def action(data: dict[str, Any], path: str) -> str:
    found = [e["action"] for e in data["entries"] if e["path"] == path]
    assert found, path
    return str(found[0])


@pytest.mark.parametrize("base", [False, True], ids=["no-base", "base"])
def test_module_whose_definitions_all_equal_trunks_is_dropped_and_trunk_additions_stay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base: bool
) -> None:
    case = "trunk_additions_to_untouched_module"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top, base=base)
    assert action(data, "runtime/driver.py") == "drop"
    assert data["verification"]["status"] == "equivalent", data["verification"]
    code = """
        import json
        from minitri.runtime.driver import spec, spec_func
        from minitri.runtime import jit
        print(json.dumps({"acme": jit(lambda: 0).acme, "spec": spec("x") is None}))
    """
    assert as_migrated(top, code) == {"acme": True, "spec": True}


def test_whole_move_names_the_trunk_names_it_loses() -> None:
    from flagtree_spec._tools.migrate.minimize import minimize

    copy = '"""M."""\nimport os\n\nos.environ.setdefault("X", "1")\n\n\ndef f():\n    return 2\n'
    trunk = '"""M."""\nimport os\n\n\ndef f():\n    return 1\n\n\ndef spec():\n    return 0\n'
    result = minimize(copy, trunk, None, has_base=False)
    assert result.text is None
    assert any(note.startswith("loses trunk's spec:") for note in result.notes), result.notes


def test_add_spec_path_reaches_the_package_of_an_inheriting_package_init(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "inheriting_package_init_only"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top)
    assert action(data, "language/extra/cuda/__init__.py") == "minimize"
    needed = {Path(p).relative_to(top).as_posix() for p in data["spec_path"]}
    assert "python/minitri/language/extra/cuda/__init__.py" in needed
    code = """
        import json
        from minitri.language.extra.cuda import acme_version, fast, libdevice
        print(json.dumps([acme_version, fast is libdevice.fast]))
    """
    assert as_migrated(top, code) == ["1.0", True] == as_the_copy(case, code)


def test_add_spec_path_goes_into_package_init_overrides_kept_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "children_of_package_init_kept_whole"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top)
    assert action(data, "runtime/__init__.py") == "move"
    assert action(data, "runtime/jit.py") == "minimize"
    assert "spec_path(__path__)" in (top / MIRROR / "runtime" / "__init__.py").read_text()
    code = """
        import json, os
        from minitri.runtime import cache_dir, jit, key
        from minitri.runtime.backends import acme
        print(json.dumps([key(jit), cache_dir(), acme.NAME, os.environ["ACME_RUNTIME"]]))
    """
    assert as_migrated(top, code) == as_the_copy(case, code)
    assert data["verification"]["status"] == "equivalent", data["verification"]


def test_added_init_over_a_trunk_namespace_package_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    top = checkout(tmp_path, "added_init_over_namespace_package")
    code, out, err = run(capsys, "migrate", "--repo", str(top), "-b", "acme", "--apply")
    assert code == 2, out + err
    assert "_C/__init__.py" in err and "namespace package" in err
    assert git(top, "status", "--porcelain") == ""


def test_decorators_that_set_attributes_on_a_kept_class_are_kept_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "decorator_sets_class_attributes"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top, base=True)
    assert action(data, "language/core.py") == "minimize"
    code = """
        import json
        from minitri.language.core import tensor
        t = tensor(1)
        print(json.dumps([t.device, hasattr(tensor, "abs"), hasattr(tensor, "exp")]))
    """
    assert as_migrated(top, code) == ["acme", True, True] == as_the_copy(case, code)


def test_trunk_deletions_win_where_the_copy_equals_the_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "trunk_deletions"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top, base=True)
    assert action(data, "runtime/driver.py") == "drop"
    assert data["verification"]["status"] == "equivalent", data["verification"]
    code = """
        import importlib, json
        m = importlib.import_module("minitri.runtime.jit")
        print(json.dumps([m.jit(lambda: 0).acme, hasattr(m, "LEGACY"), hasattr(m, "old_name")]))
    """
    assert as_migrated(top, code) == [True, False, False]


@pytest.mark.parametrize("which", ["newer", "other"])
def test_base_dir_must_be_an_older_trunk_of_the_same_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str
) -> None:
    top = checkout(tmp_path, "base_not_an_older_trunk")
    base = str(top / which / "minitri")
    code, out, err = run(
        capsys, "migrate", "--repo", str(top), "-b", "acme", "--minimize", "--base", base
    )
    assert code == 2, out + err
    assert "is not an older trunk" in err and base in err


def test_names_bound_inside_functions_are_never_module_level_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "walrus_inside_a_method"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top, base=True)
    text = (top / MIRROR / "runtime" / "jit.py").read_text()
    assert "del n" not in text
    assert action(data, "runtime/jit.py") == "minimize"
    code = """
        import importlib, json
        m = importlib.import_module("minitri.runtime.jit")
        print(json.dumps([m.jit(len).run([1, 2, 3]), hasattr(m, "n")]))
    """
    assert as_migrated(top, code) == [3, False] == as_the_copy(case, code)


def test_star_import_keeps_its_place_after_the_imports_it_rebinds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "star_import_rebinds"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top)
    assert action(data, "language/math.py") == "minimize"
    code = """
        import json
        from minitri.language import math
        print(json.dumps([math.f(), list(math.g())]))
    """
    assert as_migrated(top, code) == ["extra", ["acme", "extra"]] == as_the_copy(case, code)


def test_bindings_keep_the_copys_order_relative_to_its_imports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "binding_before_imports"
    top = checkout(tmp_path, case)
    migrate(capsys, top)
    code = """
        import json
        import minitri.language as m
        print(json.dumps([m.ACME_FLAG, m.f()]))
    """
    assert as_migrated(top, code) == [True, 1] == as_the_copy(case, code)


def test_override_helper_imports_leave_no_name_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "no_helper_name_left"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top)
    assert action(data, "runtime/jit.py") == "minimize"
    code = """
        import importlib, json
        m = importlib.import_module("minitri.runtime.jit")
        print(json.dumps([sorted(k for k in vars(m) if not k.startswith("__")), m.key(len)]))
    """
    assert as_migrated(top, code) == [["jit", "key"], ["acme", "len"]] == as_the_copy(case, code)


def test_trunk_code_that_imports_names_a_whole_copy_lacks_is_kept_whole_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "whole_copy_lacking_names_trunk_imports"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top)
    assert action(data, "language/core.py") == "move"  # its module-level statements differ
    init = next(e for e in data["entries"] if e["path"] == "language/__init__.py")
    assert init["action"] == "move"
    assert "imports add from language/core.py" in init["reason"]
    code = """
        import json
        import minitri.language as m
        print(json.dumps([m.acme, m.tensor.device, hasattr(m, "add")]))
    """
    assert as_migrated(top, code) == ["acme", "acme", False] == as_the_copy(case, code)


def test_trunk_version_importing_a_module_that_exists_nowhere_is_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "trunk_imports_a_missing_module"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top)  # without a base the copy's names are all trunk's
    step = next(e for e in data["entries"] if e["path"] == "tools/disasm.py")
    assert step["action"] == "move"
    assert "imports minitri.common.backend (line 3), which neither trunk nor" in step["reason"]
    code = """
        import json
        from minitri.tools import disasm
        print(json.dumps(hasattr(disasm, "get_sass")))
    """
    assert as_migrated(top, code) is True


def test_decorator_of_another_module_writing_to_a_kept_class_keeps_the_module_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = "decorator_of_another_module_writes"
    top = checkout(tmp_path, case)
    data = migrate(capsys, top)
    step = next(e for e in data["entries"] if e["path"] == "language/standard.py")
    assert step["action"] == "move"
    assert "writes to tensor of language/core.py through @core._tensor_member_fn" in step["reason"]
    code = """
        import json
        from minitri.language import core, standard
        print(json.dumps([core.tensor().sort(), standard.sort(0)]))
    """
    assert as_migrated(top, code) == ["acme", "acme free function"] == as_the_copy(case, code)
