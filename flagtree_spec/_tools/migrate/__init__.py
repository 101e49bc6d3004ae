"""``flagtree-spec migrate``: a whole-tree copy of the trunk moved into a spec tree.

* ``plan``: what to do with each file of the copy (planning only), over
  ``steps`` (what a plan is), ``files`` (reading the trees) and ``base``
  (the trunk the copy was made from);
* ``minimize``: an override reduced to ``inherit(globals())`` and the
  definitions that differ, over ``statements`` (what each top-level
  statement binds and reads) and ``render`` (writing and proving it);
* ``whole``: modules kept whole because of what other modules of the plan do;
* ``apply``: carrying a plan out, never losing a file;
* ``verify``: the result imported next to the copy (built by ``overlay``)
  and compared per module and name by the rules of ``compare``, each side in
  a fresh interpreter running ``probe``;
* ``cli``: the ``migrate`` command.
"""
