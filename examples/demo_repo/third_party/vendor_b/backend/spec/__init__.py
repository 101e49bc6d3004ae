"""Hooks of backend vendor_b."""


def lower_op(op):
    return f"vendor_b.{op}"
