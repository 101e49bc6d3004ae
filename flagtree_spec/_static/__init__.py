"""The offline tools of ``flagtree-spec``: they read trunk and spec trees, never import them.

``source`` (the facts of one file), ``finder`` (the path finder's view of one
folder), ``model`` (which file the import system would load for each module),
``rules`` and ``check`` (the lint), ``digest`` (version-stable digests of
source), ``lock`` and ``rebase`` (what each override was made against, and
merging the trunk's later changes into it; ``git`` runs git for them),
``migrate`` and ``minimize`` (moving a whole-tree copy into a spec tree),
``cli``, ``lock_cli`` and ``migrate_cli`` (the commands).  They import the runtime's rules
(``flagtree_spec._config``, ``flagtree_spec._discovery``) so both agree; the
runtime never imports them.
"""
