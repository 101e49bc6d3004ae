"""The command lines of the static commands, and the pytest plugin's report.

* ``options``: the options and set-up every static command shares;
* ``output``: where and how a command prints (relative paths, color, ``--output-file``);
* ``findings``: ``check``'s output formats;
* ``commands``: ``status``, ``which``, ``list``, ``check`` and ``diff``;
* ``upgrade``: ``lock`` and ``rebase``;
* ``adopt``: ``adopt``, FlagTree's own spec file replaced by the forwarder;
* ``rules``: ``rule``, and the rules page of the documentation;
* ``report``: which mirror files a pytest session loaded, and which it never did.
"""
