"""The static model of the import system: what loads, found without importing anything.

* ``source``: the facts of one source file (read, decoded and parsed once);
* ``calls``: hook calls and hook signatures, read from syntax;
* ``finder``: one folder as the path finder sees it;
* ``model``: which file loads for every module, each package's ``__path__``,
  and ``load``, which builds the model from command-line options;
* ``overrides``: what the import system does with each file of a mirror tree
  (the facts the rules read);
* ``hooks``, ``hook_exec``: which hooks a hook module and its fragments define;
* ``backends``: named backends that have no spec root;
* ``repo``: the root package of a checkout whose ``python/`` holds several;
* ``settings``: the ``[tool.flagtree-spec]`` table of ``pyproject.toml``;
* ``flagtree``: FlagTree's own spec file, which variant it is, read from syntax.
"""
