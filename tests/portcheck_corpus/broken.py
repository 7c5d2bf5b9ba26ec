def oops(:  # expect: PC900
    pass
