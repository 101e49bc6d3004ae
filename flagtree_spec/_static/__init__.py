"""The offline tools of ``flagtree-spec``: they read trunk and spec trees, never import them."""
