def configs():
    return ["BLOCK=128", "BLOCK=256"]
