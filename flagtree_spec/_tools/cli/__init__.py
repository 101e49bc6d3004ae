"""The command lines of the static commands, and the pytest plugin's report.

* ``options``: the options and set-up every static command shares;
* ``commands``: ``status``, ``which``, ``list``, ``check`` and ``diff``;
* ``upgrade``: ``lock`` and ``rebase``;
* ``adopt``: ``adopt``, FlagTree's own spec file replaced by the forwarder;
* ``report``: which mirror files a pytest session loaded, and which it never did.
"""
