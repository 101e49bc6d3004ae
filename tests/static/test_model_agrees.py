"""The static model agrees with the real import system on random trees.

Each example is a batch of trees written to disk; every module of every tree
is imported for real in one fresh interpreter, and each module's ``__file__``
and ``__path__`` (or its import failure) is compared with the model.
``FTS_AGREE_EXAMPLES`` raises the number of batches (default 30 batches of
10 trees: 300 trees).
"""

from __future__ import annotations

import os
import tempfile

import treegen
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("FTS_AGREE_EXAMPLES", "30"))
BATCH = 10


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(treegen.trees(), min_size=BATCH, max_size=BATCH))
def test_model_agrees_with_import_system_on_random_trees(batch: list[treegen.Tree]) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        problems = treegen.check_batch(batch, workdir)
    assert not problems, "\n\n".join(problems)
