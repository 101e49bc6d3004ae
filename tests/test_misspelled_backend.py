"""A backend named by FLAGTREE_BACKEND or activate() that exists nowhere: one SpecWarning."""

from __future__ import annotations

from conftest import FIXTURES, SOURCE, run_python, scenario

import flagtree_spec

# Every warning recorded, as (category, message, file name) lists; the program's result last.
RECORD = """
import json, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    {body}
print(json.dumps({{
    "warnings": [[w.category.__name__, str(w.message), w.filename] for w in caught],
    "result": result,
}}))
"""


def record(body: str, **kwargs: object) -> dict[str, object]:
    return scenario(RECORD.format(body=body.replace("\n", "\n    ")), **kwargs)  # type: ignore[no-any-return]


def test_spec_warning_is_a_user_warning_exported_from_the_package():
    assert issubclass(flagtree_spec.SpecWarning, UserWarning)
    assert not issubclass(flagtree_spec.SpecWarning, flagtree_spec.SpecError)
    assert flagtree_spec.SpecWarning.__module__ == "flagtree_spec"
    assert "SpecWarning" in flagtree_spec.__all__


def test_backend_from_environment_that_exists_nowhere_warns_naming_close_match_and_runs():
    out = record(
        "import fixpkg.runtime.jit as j\nresult = j.WHERE",
        env={"FLAGTREE_BACKEND": "alpah"},
    )
    assert out["result"] == "trunk"  # the program runs on
    [(category, message, filename)] = out["warnings"]
    assert category == "SpecWarning"
    assert message.startswith("FLAGTREE_BACKEND names backend 'alpah', which exists nowhere")
    assert "did you mean 'alpha'?" in message
    assert str(SOURCE / "third_party" / "alpah") in message  # where it was looked for
    # Reported at the trunk's spec_path() call, not inside the library or importlib.
    assert filename.endswith("fixpkg/__init__.py"), filename


def test_backend_that_exists_nowhere_warns_once_per_process():
    out = record(
        """
import fixpkg.runtime.jit
from flagtree_spec import activate
activate("alpah")
activate(None)
activate("alpah")
result = None
""",
        env={"FLAGTREE_BACKEND": "alpah"},
    )
    assert [w[0] for w in out["warnings"]] == ["SpecWarning"]


def test_backend_from_activate_that_exists_nowhere_warns_at_the_call():
    out = record(
        """
import fixpkg
from flagtree_spec import activate, spec
activate("alpha, betta")
result = spec("add_one", 1)
""",
    )
    assert out["result"] == 2  # alpha still serves its hook
    [(category, message, filename)] = out["warnings"]
    assert category == "SpecWarning"
    assert message.startswith("activate() names backend 'betta'")
    assert "did you mean 'beta'?" in message
    assert filename == "<string>"  # the line that called activate()


def test_backend_that_exists_nowhere_without_close_match_lists_the_backends_that_exist():
    out = record("import fixpkg\nresult = None", env={"FLAGTREE_BACKEND": "zzzzzz"})
    [(_, message, _)] = out["warnings"]
    assert "the backends that exist are alpha, " in message and "did you mean" not in message


def test_backend_named_by_a_build_marker_is_never_judged_a_typo():
    # The marker names 'gamme' (gamma exists): -W error turns any warning into a failure.
    proc = run_python(
        "import warnings; warnings.simplefilter('error'); import ghostpkg; print('ok')",
        path=[FIXTURES / "marker_misspelled" / "site-packages"],
    )
    assert proc.stdout.strip() == "ok" and not proc.stderr


def test_backend_that_exists_without_a_python_spec_tree_is_not_warned_about():
    # third_party/cpponly changes only C++ code: it exists, so it is no typo.
    proc = run_python(
        "import warnings; warnings.simplefilter('error'); import fixpkg.runtime.jit; print('ok')",
        env={"FLAGTREE_BACKEND": "cpponly"},
    )
    assert proc.stdout.strip() == "ok" and not proc.stderr


def test_misspelled_backend_warning_is_an_error_under_filterwarnings_error():
    out = scenario(
        """
import json, warnings
warnings.simplefilter("error")
from flagtree_spec import SpecWarning, active
try:
    import fixpkg
except SpecWarning as exc:
    caught = str(exc)
import fixpkg  # once per process: the second import is not stopped again
print(json.dumps([caught, active("fixpkg").backends]))
""",
        env={"FLAGTREE_BACKEND": "alpah"},
    )
    assert "did you mean 'alpha'?" in out[0]
    assert out[1] == ["alpah"]


def test_existing_backend_start_up_pays_nothing_for_the_typo_search():
    out = scenario(
        """
import json, sys
import fixpkg.runtime.jit
from flagtree_spec import spec
spec("add_one", 1)
print(json.dumps("difflib" in sys.modules))
""",
        env={"FLAGTREE_BACKEND": "alpha"},
    )
    assert out is False
