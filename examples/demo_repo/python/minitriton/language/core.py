def program_id():
    return 0


def vector_add(x, y):
    return [a + b for a, b in zip(x, y)]
