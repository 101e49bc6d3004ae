"""``--minimize`` against real imports: generated base/trunk/copy triples.

Each triple is a module of definitions of every kind the minimizer treats
(functions, classes, subclasses, decorators and decorated functions, tables
and values that capture functions, default arguments), the copy and trunk
each derived from the base by changes the generator records: changed by the
backend, by trunk, by both, added by either side, deleted by the backend,
reordered, and module-level effects.  The minimized override is imported
for real (``inherit(globals())`` over the trunk module, through a spec root)
in a fresh interpreter that imports many triples at once, and compared with
what the generator says each name must be: the backend's code for what the
backend changed, trunk's for what trunk changed, every captured reference
pointing at the module's current definition; or the file is kept whole,
which the generator must have asked for.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from conftest import LIBRARY, NEUTRAL, clean_env
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from flagtree_spec._tools.migrate.minimize import minimize

KINDS = ("func", "class", "sub", "deco", "decorated", "table", "value", "default")
KINDS += ("writer", "member")
# Which kind of earlier definition each capturing kind refers to.
NEEDS = {"sub": "class", "decorated": "deco", "table": "func", "value": "func", "default": "func"}
NEEDS.update(writer="class", member="writer")
# "trunk-deleted": trunk deleted it since the base, the copy still holds the base's.
LABELS = ("same", "backend", "trunk", "both", "deleted", "trunk-deleted")
# Where the module lies: a module, a nested package's __init__, a namespace portion.
PLACES = ("mod.py", "sub/__init__.py", "ns/mod.py")


@dataclass
class Definition:
    name: str
    kind: str
    ref: Optional[str]  # the captured definition
    label: str = "same"  # what happened to it: see LABELS, and "backend-added", "trunk-added"
    owner: Optional[str] = None  # for a member: the class its decorator writes to

    def source(self, version: str) -> str:
        mark = f"{self.name}:{version}"
        return {
            "func": f"def {self.name}():\n    return {mark!r}\n",
            "class": f"class {self.name}:\n    def m(self):\n        return {mark!r}\n",
            "sub": f"class {self.name}({self.ref}):\n    x = {mark!r}\n",
            "deco": f"def {self.name}(f):\n    f.tag = {mark!r}\n    return f\n",
            "decorated": f"@{self.ref}\ndef {self.name}():\n    return {mark!r}\n",
            "table": f"{self.name} = {{'v': {mark!r}, 'f': {self.ref}}}\n",
            "value": f"{self.name} = ({self.ref}(), {mark!r})\n",
            "default": f"def {self.name}(x={self.ref}):\n    return {mark!r}\n",
            "register": f"@register\ndef {self.name}():\n    return {mark!r}\n",
            # Triton's _tensor_member_fn: a decorator that writes to a class.
            "writer": f"def {self.name}(f):\n    setattr({self.ref}, f.__name__, f)\n"
            f"    f.tag = {mark!r}\n    return f\n",
            "member": f"@{self.ref}\ndef {self.name}():\n    return {mark!r}\n",
        }[self.kind]


@dataclass
class Triple:
    base: list[Definition]
    copy_order: list[str]
    trunk_extra: list[Definition] = field(default_factory=list)
    copy_extra: list[Definition] = field(default_factory=list)
    effect_at: Optional[int] = None  # a module-level call inserted into the copy
    has_base: bool = True
    place: str = "mod.py"

    def text(self, side: str) -> str:
        parts = [
            "_EVENTS = []\n",
            "def register(f):\n    _EVENTS.append(f.__name__)\n    return f\n",
        ]
        defs = {d.name: d for d in self.base}
        order = self.copy_order if side == "copy" else [d.name for d in self.base]
        for i, name in enumerate(order):
            d = defs[name]
            if side == "copy" and self.effect_at == i:
                parts.append(f"_EVENTS.append({name!r})\n")
            if side == "copy" and d.label == "deleted":
                continue
            if side == "trunk" and d.label == "trunk-deleted":
                continue
            changed = {
                "copy": d.label in ("backend", "both"),
                "trunk": d.label in ("trunk", "both"),
            }.get(side, False)
            parts.append(d.source(("c" if side == "copy" else "t") if changed else "b"))
        extra = {"copy": self.copy_extra, "trunk": self.trunk_extra}.get(side, [])
        parts.extend(d.source("c" if side == "copy" else "t") for d in extra)
        return "\n\n".join(parts)


@st.composite
def triples(draw: st.DrawFn) -> Triple:
    base: list[Definition] = []
    for i in range(draw(st.integers(2, 8))):
        kind = draw(st.sampled_from((*KINDS, "register")))
        need = NEEDS.get(kind)
        earlier = [d.name for d in base if d.kind == need]
        if need is not None and not earlier:
            kind, need = "func", None
        ref = draw(st.sampled_from(earlier)) if need else None
        base.append(Definition(f"{kind[0]}{i}", kind, ref))
    referenced = {d.ref for d in base}
    for d in base:
        if d.kind == "member":
            d.owner = next(w.ref for w in base if w.name == d.ref)
        labels = [lab for lab in LABELS if "deleted" not in lab or d.name not in referenced]
        d.label = draw(st.sampled_from(labels))
    order = [d.name for d in base]
    # Reorder two adjacent plain functions in the copy.
    swap = draw(st.integers(0, len(order)))
    if swap + 1 < len(order) and all(
        base[k].kind == "func" and base[k].name not in referenced for k in (swap, swap + 1)
    ):
        order[swap], order[swap + 1] = order[swap + 1], order[swap]
    functions = [d.name for d in base if d.kind == "func" and d.label != "deleted"]
    triple = Triple(base, order)
    for j in range(draw(st.integers(0, 2))):
        triple.trunk_extra.append(Definition(f"n{j}", "func", None, "trunk-added"))
    for j in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(("func", "table"))) if functions else "func"
        ref = draw(st.sampled_from(functions)) if kind == "table" else None
        triple.copy_extra.append(Definition(f"a{j}", kind, ref, "backend-added"))
    if draw(st.integers(0, 9)) == 0:
        triple.effect_at = draw(st.integers(0, len(order) - 1))
    triple.has_base = draw(st.integers(0, 4)) > 0
    triple.place = draw(st.sampled_from(PLACES))
    return triple


_CHILD = r"""
import importlib, json, sys

def describe(mod, name, kind, ref):
    v = getattr(mod, name)
    if kind in ("func", "decorated", "default", "register", "member"):
        own = v()
    elif kind == "class":
        own = v.__dict__["m"](None)
    elif kind == "sub":
        own = v.__dict__["x"]
    elif kind == "deco":
        own = v(lambda: 0).tag
    elif kind == "writer":  # calling it would write to the class: read its marker instead
        own = next(c for c in v.__code__.co_consts if isinstance(c, str) and ":" in c)
    elif kind == "table":
        own = v["v"]
    else:
        own = v[1]
    if kind == "member":
        ref, owner = ref.split("|")
        own = v()
    current = getattr(mod, ref) if ref else None
    ok = {
        "member": lambda: getattr(getattr(mod, owner), name, None) is v,
        "sub": lambda: v.__bases__[0] is current,
        "decorated": lambda: v.tag == current(lambda: 0).tag,
        "table": lambda: v["f"] is current,
        "value": lambda: v[0] == current(),
        "default": lambda: v.__defaults__[0] is current,
    }.get(kind, lambda: True)()
    return [own, ok]

out = []
for i, (place, dropped, defs) in enumerate(json.loads(sys.argv[1])):
    name = f"p{i}." + place[:-3].replace("/__init__", "").replace("/", ".")
    mod = importlib.import_module(name)
    side = "trunk" if dropped else "spec"
    assert mod.__spec__.origin.endswith(f"{side}/p{i}/{place}"), mod.__spec__.origin
    skip = ("register",)
    names = sorted(n for n in vars(mod) if not n.startswith("_") and n not in skip)
    found = {d[0]: describe(mod, *d) for d in defs if hasattr(mod, d[0])}
    out.append({"names": names, "found": found})
print(json.dumps(out))
"""

SPEC_PATH = "from flagtree_spec import spec_path\nspec_path(__path__)\n"


def expected(
    triple: Triple, notes: tuple[str, ...], whole: bool, dropped: bool = False
) -> tuple[list[str], dict[str, list[str]]]:
    """The names the module must have, and the marker(s) each may carry."""
    merged = [n.split(":")[0] for n in notes if "merge by hand" in n]
    # Trunk deleted it, but code the override keeps uses it: the copy's stays.
    rescued = [n.split(":")[0] for n in notes if "but the backend's code uses it" in n]
    names: list[str] = []
    marks: dict[str, list[str]] = {}
    for d in triple.base:
        if whole and d.label == "deleted":
            continue
        if dropped:
            # Trunk's module runs: every definition of it, trunk's version.
            if d.label != "trunk-deleted":
                names.append(d.name)
                marks[d.name] = [f"{d.name}:t" if d.label in ("trunk", "both") else f"{d.name}:b"]
            continue
        if d.label == "trunk-deleted" and triple.has_base and not whole:
            if d.name in rescued:
                names.append(d.name)
                marks[d.name] = [f"{d.name}:b"]
            continue  # otherwise trunk's deletion wins where the copy holds the base's
        if whole or not triple.has_base:
            # Nothing tells who changed what: the copy's version, or trunk's where it has none.
            names.append(d.name)
            changed = d.label in ("backend", "both")
            marks[d.name] = [f"{d.name}:c" if changed else f"{d.name}:b"]
            continue
        if d.label == "deleted":
            continue
        names.append(d.name)
        if d.label in ("backend", "both"):
            marks[d.name] = [f"{d.name}:c"]
        elif d.label == "trunk":
            marks[d.name] = [f"{d.name}:t"] + ([f"{d.name}:b"] if d.name in merged else [])
        else:
            marks[d.name] = [f"{d.name}:b"]
    for d in [] if whole else triple.trunk_extra:
        names.append(d.name)
        marks[d.name] = [f"{d.name}:t"]
    for d in [] if dropped else triple.copy_extra:
        names.append(d.name)
        marks[d.name] = [f"{d.name}:c"]
    return sorted(names), marks


def must_be_whole(triple: Triple) -> bool:
    """A module-level call in the copy, or a differing definition whose statement has effects."""
    kept = ("backend", "both") if triple.has_base else ("backend", "both", "trunk", "trunk-deleted")
    labels = {d.name: d.label for d in triple.base}
    return (
        triple.effect_at is not None
        or any(d.kind in ("register", "value") and d.label in kept for d in triple.base)
        # A member the copy lacks is still attached by trunk's module, to the class
        # the override would define again.
        or any(
            d.kind == "member" and d.label == "deleted" and labels[str(d.owner)] in kept
            for d in triple.base
        )
    )


def check_batch(batch: list[Triple], top: Path) -> None:
    results = []
    for i, triple in enumerate(batch):
        copy, trunk = triple.text("copy"), triple.text("trunk")
        result = minimize(
            copy, trunk, triple.text("base") if triple.has_base else None, has_base=triple.has_base
        )
        if must_be_whole(triple):
            assert result.text is None, f"{result.reason}\n{copy}"
            assert result.reason.startswith("kept whole:")
            result = result._replace(text=copy)  # moved whole: the copy itself
        elif result.text is None:
            # Dropped: every definition of the copy equals the base's (or trunk's).
            assert result.same, f"{result.reason}\n--- copy\n{copy}\n--- trunk\n{trunk}"
            differ = ("backend", "both", "deleted")
            if not triple.has_base:  # nothing tells who changed what: any difference is kept
                differ = ("backend", "both", "trunk", "trunk-deleted")
            changed = [d for d in triple.base if d.label in differ]
            assert not changed and not triple.copy_extra, result.reason
        results.append(result)
        package = top / "trunk" / f"p{i}"
        (package / triple.place).parent.mkdir(parents=True)
        (package / "__init__.py").write_text(SPEC_PATH)
        (package / triple.place).write_text(trunk)
        if result.text is not None:
            mirror = top / "spec" / f"p{i}" / triple.place
            mirror.parent.mkdir(parents=True)
            mirror.write_text(result.text)
    defs = [
        [
            t.place,
            r.text is None,
            [
                [d.name, d.kind, f"{d.ref}|{d.owner}" if d.kind == "member" else d.ref]
                for d in (*t.base, *t.trunk_extra, *t.copy_extra)
            ],
        ]
        for t, r in zip(batch, results)
    ]
    env = clean_env({"FLAGTREE_SPEC_PATH": str(top / "spec"), "PYTHONDONTWRITEBYTECODE": "1"})
    env["PYTHONPATH"] = f"{top / 'trunk'}:{LIBRARY}"
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(defs)],
        env=env,
        cwd=NEUTRAL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    for triple, result, found in zip(batch, results, json.loads(proc.stdout)):
        whole = result.text == triple.text("copy")
        names, marks = expected(triple, result.notes, whole, dropped=result.text is None)
        # Only what the copy binds must capture the module's current definitions.
        in_copy = {d.name for d in (*triple.base, *triple.copy_extra) if d.label != "deleted"}
        context = f"\n--- copy\n{triple.text('copy')}\n--- override\n{result.text}"
        assert found["names"] == names, context
        for name, (own, ok) in found["found"].items():
            assert own in marks[name], f"{name}: {own} not in {marks[name]}{context}"
            assert ok or name not in in_copy, f"{name} captured a stale definition{context}"


@settings(
    max_examples=12,
    deadline=None,
    # Each example is a fresh interpreter: shrinking would take minutes, and the
    # failure message already shows the copy and the override.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(batch=st.lists(triples(), min_size=15, max_size=15))
def test_minimized_overrides_import_with_the_right_definitions(batch: list[Triple]) -> None:
    with tempfile.TemporaryDirectory() as top:
        check_batch(batch, Path(top))
