"""Trunk upgrades: what each override was made against, and merging what changed since.

* ``lock``: ``flagtree_spec.lock``, written and read;
* ``drift``: what changed below each override since the lock (FTS016);
* ``rebase``: three-way merges of the trunk's changes into the overrides, and
  ``reshape``, what it does beyond a merge after a trunk upgrade;
* ``digest``: digests of Python source blind to layout and comments, per
  definition;
* ``defdiff``: the diff of an ``inherit`` override, per replaced definition;
* ``git``: the ``git`` commands they run.
"""
