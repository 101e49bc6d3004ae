"""Which root a bare ``spec()`` answers for, in the cases where the caller is not plain.

Fixture: fixtures/shared_hooks.  Root packages ``rone`` and ``rtwo`` call
``spec_path``; the hook module ``shared`` (``FLAGTREE_SPEC_PATH``) serves
both, and its hook ``outer()`` calls a bare ``spec("inner")``; ``extra`` is a
second spec root, activated for ``rtwo`` only, whose ``inner()`` answers "two".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import FIXTURES, LIBRARY, NEUTRAL, clean_env, scenario

SHARED = FIXTURES / "shared_hooks"
ENV = {"FLAGTREE_SPEC_PATH": str(SHARED / "shared")}


def test_reading_another_roots_state_does_not_make_it_specialised_for_bare_spec():
    out = scenario(
        """
        import json
        import flagtree_spec
        from flagtree_spec import spec
        import rone
        answers = [spec("inner")]
        flagtree_spec.active("rtwo")
        answers.append(spec("inner"))
        flagtree_spec.fingerprint("rtwo")
        answers.append(spec("inner"))
        flagtree_spec.trunk_path("rtwo")
        answers.append(spec("inner"))
        flagtree_spec.install("rtwo")
        flagtree_spec.uninstall("rtwo")
        answers.append(spec("inner"))
        import rtwo  # now it is specialised: a call from outside both is ambiguous
        try:
            spec("inner")
        except flagtree_spec.SpecError as exc:
            answers.append("SpecError: use for_root" if "for_root" in str(exc) else str(exc))
        print(json.dumps(answers))
        """,
        path=[SHARED / "python"],
        env=ENV,
    )
    assert out == ["shared"] * 5 + ["SpecError: use for_root"]


def test_bare_spec_in_a_root_module_run_as_python_m_answers_for_its_root():
    env = clean_env(ENV)
    env["PYTHONPATH"] = os.pathsep.join([str(SHARED / "python"), LIBRARY])
    proc = subprocess.run(
        [sys.executable, "-m", "rone.cli"],
        env=env,
        cwd=NEUTRAL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == "shared"


def test_a_shared_hook_reached_through_for_root_answers_for_that_root():
    out = scenario(
        f"""
        import json
        from flagtree_spec import activate, for_root
        import rone
        activate(root="rtwo", spec_roots=[{str(SHARED / "extra")!r}, {str(SHARED / "shared")!r}])
        import rtwo
        print(json.dumps([for_root("rone").spec("outer"), for_root("rtwo").spec("outer")]))
        """,
        path=[SHARED / "python"],
        env=ENV,
    )
    assert out == ["shared", "two"]
