"""The offline tools of ``flagtree-spec``: they read trunk and spec trees, never import them.

(Only ``migrate --verify`` imports the trees, each in a fresh interpreter of its own.)

One folder per tool, imported in one direction (a layer imports only the
layers below it, and all of them the runtime's rules in
``flagtree_spec._config`` and ``flagtree_spec._discovery``, so both agree):

* ``cli``: the command lines of the static commands (``status``, ``which``,
  ``list``, ``check``, ``diff``, ``lock``, ``rebase``) and the pytest plugin's
  report;
* ``migrate``: moving a whole-tree copy into a spec tree;
* ``check``: the lint, its rule registry and one module per family of rules;
* ``upgrade``: ``lock``, drift since the lock, ``rebase``, and the digests and
  ``git`` calls they share;
* ``model``: the static model of the import system: file facts, folders as the
  path finder sees them, which file loads for every module, hook modules, and
  the repository and backends the options name.

The runtime never imports this package (``pyproject.toml`` states both rules
as import-linter contracts); ``docs/architecture.md`` lists every module.
"""
