"""``flagtree-spec migrate``: a whole-tree copy of the trunk moved into a spec tree.

* ``plan``: what to do with each file of the copy (planning only);
* ``minimize``: an override reduced to ``inherit(globals())`` and the
  definitions that differ;
* ``apply``: carrying a plan out, never losing a file;
* ``verify``: the result imported next to the copy and compared per module
  and name, each side in a fresh interpreter running ``probe``;
* ``cli``: the ``migrate`` command.
"""
