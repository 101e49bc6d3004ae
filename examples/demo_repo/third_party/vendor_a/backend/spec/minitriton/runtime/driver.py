def device():
    return "vendor_a accelerator"
