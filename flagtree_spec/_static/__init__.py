"""The offline tools of ``flagtree-spec``: they read trunk and spec trees, never import them.

The model of the import system (``source``, ``finder``, ``model``), the lint
(``rules``, ``check``) and the commands built on them.  They import the
runtime's rules (``flagtree_spec._config``, ``flagtree_spec._discovery``) so
both agree; the runtime never imports them.  ``docs/architecture.md`` lists
every module and what it owns.
"""
