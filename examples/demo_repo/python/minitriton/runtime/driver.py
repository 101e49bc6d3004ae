def device():
    return "cpu (trunk)"
