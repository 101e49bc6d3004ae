"""The static model of the import system: what loads, found without importing anything.

* ``source``: one source file (read, decoded and parsed once), and ``facts``,
  what the model and the checks read from its syntax tree in one pass;
* ``calls``: hook calls and hook signatures, read from syntax; ``dynamic``:
  hooks fetched by name in loops;
* ``finder``: one folder as the path finder sees it; ``files``: the trunk and
  mirror folders as files, each read once;
* ``model``: which file loads for every module, each package's ``__path__``,
  and ``load``, which builds the model from command-line options; ``modules``:
  its answer for one module; ``inputs``: where the trunk and spec roots come
  from;
* ``overrides``: what the import system does with each file of a mirror tree
  (the facts the rules read); ``inherited``: what an ``inherit(globals())``
  override runs of its lower versions;
* ``startup``: what ``import R`` imports, and through which imports;
* ``names``: the global names a module reads while it is imported;
  ``definitions``: what its top-level names are bound to, and the calls a file
  makes of given names;
* ``hooks``, ``hook_exec``: which hooks a hook module and its fragments define;
* ``backends``: named backends that have no spec root;
* ``repo``: the root package of a checkout whose ``python/`` holds several;
* ``settings``: the ``[tool.flagtree-spec]`` table of ``pyproject.toml``;
* ``flagtree``: FlagTree's own spec file, which variant it is, read from syntax.
"""
