"""Hooks of backend vendor_a."""


def init_language(namespace):
    namespace["fused_axpy"] = lambda a, x, y: [a * u + v for u, v in zip(x, y)]
    return ["fused_axpy"]


def lower_op(op):
    return f"vendor_a.{op}"
