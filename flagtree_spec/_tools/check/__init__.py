"""``flagtree-spec check``: the lint of spec trees, run over the static model.

* ``driver``: runs every rule over the model's facts; findings, ``--select``,
  ``--ignore`` and ``# noqa``;
* ``registry``: the rule registry (one small class per code) and the helpers
  the rule families share;
* one module per family of rules: ``loading`` (whether a mirror file loads:
  FTS001, FTS002), ``overrides`` (what each mirror file is),
  ``imports`` (FTS004, FTS019), ``hooks`` (hook modules and hook calls), ``inherit``
  (``inherit`` overrides), ``layout`` (files of a spec root outside what
  loads), ``upgrade`` (drift since the lock), ``bindings`` (names and calls an
  override takes from the trunk);
* ``signatures``: whether a call's arguments bind to the parameters of the
  definition that runs (FTS012, FTS024);
* ``foreign``: what the trunk's own ``spec_path`` does, for FTS001's and
  FTS002's advice.
"""
