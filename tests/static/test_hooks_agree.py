"""Static hook answers agree with ``spec_func`` in a real interpreter on random hook packages.

Each example is a batch of hook trees (see ``hookgen``); every hook name of
every tree is looked up with ``for_root(R).spec_func(name)`` in one fresh
interpreter and compared with the static model: defined (same file and line
for functions), not defined, or a hook module that fails to load. "Unknown"
is accepted only in trees that use a construct that makes it so.
``FTS_HOOK_EXAMPLES`` raises the number of batches (default 10 batches of 25
trees: 250 trees).
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter

import hookgen
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("FTS_HOOK_EXAMPLES", "10"))
BATCH = 25
TALLY: Counter[str] = Counter()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    # A failure lists every disagreement of its batch: shrinking it costs minutes.
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(hookgen.hook_trees(), min_size=BATCH, max_size=BATCH))
def test_static_hooks_agree_with_spec_func_on_random_hook_packages(
    batch: list[hookgen.HookTree],
) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        problems, tally = hookgen.check_batch(batch, workdir)
    assert not problems, f"{len(problems)} trees disagree; the first ones:\n\n" + "\n\n".join(
        problems[:3]
    )
    TALLY.update(tally)


print_tally = os.environ.get("FTS_HOOK_TALLY")
if print_tally:
    import atexit

    atexit.register(lambda: print("\nTALLY", hookgen.describe(dict(TALLY))))
