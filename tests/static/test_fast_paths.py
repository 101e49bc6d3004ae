"""The static model's shortcuts give the answers of the full walks they replace.

``check`` keeps within twice the time of parsing every file once
(``benchmarks/bench_check.py``) by not walking what cannot matter: function
and class bodies with no ``import``/``global`` in their lines, tree parts away
from the lines where a dispatcher is called, module-level statements written
identically in an override and its trunk file.  Each test here compares one
shortcut with the plain walk, on the standard library's modules and this
project's fixtures, variants of them included, so that a shortcut that skips
too much fails here.
"""

from __future__ import annotations

import ast
import gc
import io
import os
import random
import sys
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import scenario

from flagtree_spec._discovery import same_tree
from flagtree_spec._tools.check import layout
from flagtree_spec._tools.check.driver import _hits, check
from flagtree_spec._tools.model.calls import _DISPATCH_NAMES, HookCall, hook_call, hook_calls
from flagtree_spec._tools.model.facts import extract as _extract
from flagtree_spec._tools.model.finder import child_path
from flagtree_spec._tools.model.model import load
from flagtree_spec._tools.model.source import Facts, Source, _encoding, same_code

ROOT = Path(__file__).resolve().parents[2]


def _files() -> list[str]:
    """About 150 real modules: the standard library's top level and the fixtures."""
    stdlib = os.path.dirname(ast.__file__)
    found = sorted(
        os.path.join(stdlib, name) for name in os.listdir(stdlib) if name.endswith(".py")
    )[:120]
    for dirpath, _, names in os.walk(ROOT / "fixtures"):
        found.extend(os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".py"))
    return found


def _sources() -> Iterator[Source]:
    for path in _files():
        source = Source(path)
        if source.tree is not None:
            yield source


SOURCES = list(_sources())


def _facts(facts: Facts) -> dict[str, object]:
    return {slot: getattr(facts, slot) for slot in Facts.__slots__}


def _line_ends(text: str) -> Iterator[str]:
    """*text* with its line ends, and with lone carriage returns (which end lines
    too) and CRLF instead."""
    yield text
    plain = text.replace("\r\n", "\n")
    yield plain.replace("\n", "\r")
    yield plain.replace("\n", "\r\n")


def test_facts_skip_only_bodies_without_import_or_global() -> None:
    """Every fact equals that of the full walk (every line marked), whatever the
    line ends."""
    compared = 0
    for source in SOURCES:
        for text in _line_ends(source.text):
            tree = ast.parse(text)
            full = _extract(tree, "import\n" * (text.count("\n") + text.count("\r") + 2))
            assert _facts(_extract(tree, text)) == _facts(full), source.path
            compared += 1
    assert len(SOURCES) > 100 and compared == 3 * len(SOURCES)


def test_facts_of_an_import_inside_a_function_on_a_continued_line() -> None:
    text = "def f():\n    x = (\n        1)\n    from os import (\n        path)\n"
    facts = _extract(ast.parse(text), text)
    assert [i[:3] for i in facts.imports] == [(0, "os", ("path",))]


def _reference_calls(tree: ast.Module, names: frozenset[str]) -> list[HookCall]:
    """The hook calls that a walk of every node finds."""
    found = (hook_call(n, names) for n in ast.walk(tree) if isinstance(n, ast.Call))
    return sorted(c for c in found if c is not None)


def test_hook_calls_are_those_of_a_walk_of_every_node() -> None:
    """With the names each module calls with a literal string as dispatchers."""
    compared = 0
    for source in SOURCES:
        assert source.tree is not None
        names = sorted(
            {
                n.func.id
                for n in ast.walk(source.tree)
                if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.args
                and isinstance(n.args[0], ast.Constant)
            }
        )
        wanted = frozenset((*_DISPATCH_NAMES, *names))
        for text in _line_ends(source.text):
            tree = ast.parse(text)
            got = sorted(hook_calls(tree, text, names))
            assert got == _reference_calls(tree, wanted), source.path
            compared += len(got)
    assert compared > 3000


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ('spec("a")\nxspec("b")\nmy_spec("c")\n', [1]),
        ('obj.spec("a")\n(spec)("b")\nspec ("c")\nspec_func(\n  "d")\n', [1, 2, 3, 4]),
        ('(\n  spec\n)  (\n  "a")\n', [1]),
        ('@spec("a")\ndef f(x=spec("b")):\n    return [spec("c") for _ in x]\n', [1, 2, 3]),
        ('s = "spec(\'not a call\')"  # spec("no")\nspec(f"x")\n', []),
        ('été = 1; spec("a")\nαspec("b")\n', [1]),
        ('x = spec \\\n  ("a")\n', [1]),
        ('x = 1\rspec("a")\r\ry = spec("b")\r', [2, 4]),
        ('def f():\n    a = 1; spec("a")\n    b = 2; c = spec("b"); spec("c")\n', [2, 3, 3]),
        ('try:\n    pass\nexcept E:\n    spec("a")\nfinally:\n    x = 1; spec("b")\n', [4, 6]),
        ('class C(spec("a")):\n    @spec("b")\n    def f(self): return spec("c")\n', [1, 2, 3]),
        ('x = spec("a") if c else spec("b")\nf = lambda: spec("c")\n', [1, 1, 2]),
        ('x = [f(y) if y else spec("a") for y in (lambda: spec("b"))()]\n', [1, 1]),
    ],
)
def test_hook_calls_written_every_way(text: str, lines: list[int]) -> None:
    tree = ast.parse(text)
    found = sorted(hook_calls(tree, text, ()))
    assert sorted(c.line for c in found) == lines
    assert found == _reference_calls(tree, frozenset(_DISPATCH_NAMES))


@pytest.mark.parametrize(
    "text",
    ['x = [spec  # c\n  ("b")]\n', 'x = [spec("a"),\n  spec  # c\n  ("b")]\n'],
)
def test_a_call_the_text_scan_misses_is_missed_whatever_its_statement_holds(text: str) -> None:
    """``spec`` with a comment before its ``(`` is not found by the scan of the
    text; another hook call in the same statement does not make it found."""
    found = hook_calls(ast.parse(text), text, ())
    assert [c.hook for c in found] == (["a"] if '"a"' in text else [])


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match needs Python 3.10")
def test_hook_calls_in_match_cases() -> None:
    """Match cases have no lines of their own: each case is entered."""
    text = (
        'match spec("a"):\n'
        '    case 1 if spec("b"):\n'
        "        pass\n"
        "    case _:\n"
        '        x = 1; spec("c")\n'
    )
    tree = ast.parse(text)
    found = hook_calls(tree, text, ())
    assert [c.line for c in found] == [1, 2, 5]
    assert sorted(found) == _reference_calls(tree, frozenset(_DISPATCH_NAMES))


def _variants(text: str, rng: random.Random) -> Iterator[str]:
    """The text as it is, moved down, commented, with CRLF line ends, and with one
    statement's line changed (the same tree or not: same_tree decides)."""
    yield text
    yield "\n\n# moved\n" + text
    yield text.replace("\n", "  # note\n", 3) if '"""' not in text else text + "# end\n"
    yield text.replace("\n", "\r\n")
    lines = text.split("\n")
    for _ in range(3):
        at = rng.randrange(len(lines))
        line = lines[at]
        for old, new in (("1", "2"), ("(", "( "), ("'", '"'), ("==", "!="), (" + ", "+")):
            if old in line:
                yield "\n".join([*lines[:at], line.replace(old, new, 1), *lines[at + 1 :]])
                break


def test_same_code_is_same_tree(tmp_path: Path) -> None:
    """On every file and its variants, same_code answers what same_tree does."""
    rng = random.Random(7)
    answers = {True: 0, False: 0}
    for n, source in enumerate(SOURCES[:80]):
        assert source.tree is not None
        for k, text in enumerate(_variants(source.text, rng)):
            path = tmp_path / f"{n}_{k}.py"
            path.write_bytes(text.encode("utf-8"))
            other = Source(str(path))
            if other.tree is None:
                continue  # the change broke the syntax
            expected = same_tree(source.tree, other.tree)
            assert same_code(source, other) is expected, (source.path, k)
            assert same_code(other, source) is expected, (source.path, k)
            answers[expected] += 1
    assert answers[True] > 150 and answers[False] > 20


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("x = 1; y = 2\n", "x = 1; y = 3\n", False),
        ("x = 1; y = 2\n", "x = 1\ny = 2\n", True),
        ("@d\ndef f(): pass\n", "@e\ndef f(): pass\n", False),
        ("@d\ndef f(): pass\n", "\n@d\n\ndef f():  # c\n    pass\n", True),
        ("x = 1\r\ny = 2\r\n", "x = 1\ry = 3\r", False),
        ("x = 1\ry = 2\r", "x = 1\ny = 2\n", True),
        ("x = (1,\n 2)\n", "x = (1,\n 2, 3)\n", False),
        ("if a:\n    b = 1\n", "if a:\n    b = 1\nelse:\n    pass\n", False),
        (
            "class A:\n    def f(self): return 1\n    def g(self): return 2\n",
            "class A:\n    def f(self): return 1\n    def g(self): return 3\n",
            False,
        ),
        ("class A(B):\n    x = 1\n", "class A(C):\n    x = 1\n", False),
        ("class A:\n    x = 1\n", "class A:  # c\n\n    x = 1\n", True),
        ("def f():\n    @d\n    def g(): pass\n", "def f():\n    @e\n    def g(): pass\n", False),
        ("def f(a=1):\n    return a\n", "def f(a=2):\n    return a\n", False),
        ("def f():\n    return 1\n", 'def f():\n    """Doc."""\n    return 1\n', False),
    ],
)
def test_same_code_on_statements_written_alike(tmp_path: Path, a: str, b: str, same: bool) -> None:
    (tmp_path / "a.py").write_bytes(a.encode())
    (tmp_path / "b.py").write_bytes(b.encode())
    x, y = Source(str(tmp_path / "a.py")), Source(str(tmp_path / "b.py"))
    assert x.tree is not None and y.tree is not None
    assert same_tree(x.tree, y.tree) is same
    assert same_code(x, y) is same and same_code(y, x) is same


@pytest.mark.parametrize(
    "data",
    [
        b"x = 1\n",
        b"",
        b"x = 1",
        b"# -*- coding: latin-1 -*-\nx = '\xe9'\n",
        b"#!/usr/bin/env python\n# coding: cp1252\nx = 1\n",
        b"\n\n# coding: latin-1\nx = 1\n",  # line 3: not a declaration
        b"\xef\xbb\xbfx = 1\n",
        b"x = '\xc3\xa9'\ny = 2\n",
        b"# no declaration, \xc3\xa9 on line 1\nx = 1\n",
        b"# coding=utf-8\r\nx = 1\r\n",
    ],
)
def test_source_encoding_is_that_of_detect_encoding(tmp_path: Path, data: bytes) -> None:
    assert _encoding(data) == tokenize.detect_encoding(io.BytesIO(data).readline)[0]


def test_folder_kinds_are_those_of_the_path_finder_in_folders_it_cannot_enter_or_list() -> None:
    """A package folder that can be listed but not entered is no package (its
    ``__init__`` cannot be ``stat``-ed); one that can be entered but not listed
    is one.  Both as CPython's ``FileFinder`` says, run as an unprivileged user
    (dropped to uid 65534 in a child process when the tests run as root)."""
    found = scenario(
        """
        import importlib.machinery, json, os, shutil, tempfile
        from flagtree_spec._tools.model.finder import Folder

        top = tempfile.mkdtemp(dir="/tmp")
        os.chmod(top, 0o755)
        for name, mode in (("listed_only", 0o644), ("entered_only", 0o311), ("plain", 0o755)):
            os.makedirs(os.path.join(top, name))
            open(os.path.join(top, name, "__init__.py"), "w").close()
            os.chmod(os.path.join(top, name), mode)
        read, write = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(read)
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            details = [(importlib.machinery.SourceFileLoader, [".py"])]
            answers = {}
            for name in ("listed_only", "entered_only", "plain"):
                hit = Folder(top).find(name)
                spec = importlib.machinery.FileFinder(top, *details).find_spec(name)
                path_finder = "package" if spec.origin and spec.loader else "namespace"
                answers[name] = [hit.kind if hit else None, path_finder]
            os.write(write, json.dumps(answers).encode())
            os._exit(0)
        os.close(write)
        data = os.read(read, 65536)
        os.waitpid(child, 0)
        for name in ("listed_only", "entered_only", "plain"):
            os.chmod(os.path.join(top, name), 0o755)
        shutil.rmtree(top)
        print(data.decode())
        """
    )
    assert found == {
        "listed_only": ["namespace", "namespace"],
        "entered_only": ["package", "package"],
        "plain": ["package", "package"],
    }


def test_reading_a_file_makes_no_cyclic_garbage() -> None:
    """Extracting a file's facts, hook calls, dispatchers and loops leaves no
    reference cycle behind: nothing for the cyclic collector to find, so that
    its passes over the thousands of files of a tree cost little."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for path in _files():
            source = Source(path)
            source.release()
            source.dispatchers()
            del source
        found = gc.collect()
    finally:
        if was_enabled:
            gc.enable()
    assert found == 0


def _walked_links(top: str) -> list[str]:
    """The symlinks that ``os.walk`` lists below *top*, asked of ``os.path.islink``."""
    return sorted(
        os.path.join(folder, entry)
        for folder, dirs, files in os.walk(top)
        for entry in (*dirs, *files)
        if os.path.islink(os.path.join(folder, entry))
    )


def test_symlinks_from_listings_are_those_of_os_walk(tmp_path: Path) -> None:
    """FTS014 lists a spec root's symlinks from the model's listings: the same as
    ``os.walk`` and ``islink``, a link to a folder not followed, broken links too."""
    top = tmp_path / "root"
    (top / "pkg" / "sub").mkdir(parents=True)
    (top / "pkg" / "mod.py").write_text("x = 1\n")
    (top / "pkg" / "link.py").symlink_to(top / "pkg" / "mod.py")
    (top / "pkg" / "broken.py").symlink_to(top / "missing.py")
    (top / "pkg" / "sub" / "a.py").write_text("")
    (top / "folder_link").symlink_to(top / "pkg")
    (top / "outside").symlink_to(ROOT / "fixtures")
    model = load(repo=str(ROOT / "fixtures" / "check" / "fts014_symlink"), backends=["vendor"])
    for folder in (str(top), str(ROOT / "fixtures")):
        found = sorted(layout._links(model, folder))
        assert found == _walked_links(folder)
    assert len(_walked_links(str(top))) == 4


@pytest.mark.parametrize("folder", ["", "/", "/a", "/a/", "a", "a/b", "//x"])
def test_child_path_is_os_path_join(folder: str) -> None:
    for name in ("m.py", "__init__.py", "pkg", ".hidden"):
        assert child_path(folder, name) == os.path.join(folder, name)


def _collections(work: Callable[[], object], enabled: bool) -> tuple[int, bool]:
    """How many times the collector starts while *work* runs, with a threshold of
    1 (a pass at nearly every allocation) and the collector on or off; and
    whether it is on when *work* returns."""
    runs: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(info["generation"])

    threshold, was_enabled = gc.get_threshold(), gc.isenabled()
    gc.collect()
    (gc.enable if enabled else gc.disable)()
    gc.set_threshold(1)
    gc.callbacks.append(count)
    try:
        work()
        after = gc.isenabled()
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*threshold)
        (gc.enable if was_enabled else gc.disable)()
    return len(runs), after


@pytest.mark.parametrize("enabled", [True, False])
def test_check_pauses_the_collector_and_restores_it(enabled: bool) -> None:
    """The same rules run bare make the collector run at nearly every allocation;
    ``check`` pauses it (it runs only in the few allocations after ``check``
    turns it back on) and leaves it on or off as it was."""
    repo = str(ROOT / "fixtures" / "check" / "fts014_symlink")
    bare, _ = _collections(lambda: list(_hits(load(repo=repo, backends=["vendor"]))), True)
    model = load(repo=repo, backends=["vendor"])
    found: list[object] = []
    paused, after = _collections(lambda: found.extend(check(model)), enabled)
    assert found  # the fixture's symlink: the rules ran
    assert after is enabled
    assert bare > 100
    assert paused <= (10 if enabled else 0)
