from flagtree_spec import spec_func


def emit(op):
    lower = spec_func("lower_op") or (lambda op: f"generic.{op}")
    return lower(op)
