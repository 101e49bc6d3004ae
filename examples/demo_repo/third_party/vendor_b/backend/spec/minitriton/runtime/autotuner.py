def configs():
    return ["BLOCK=64 (vendor_b)"]
