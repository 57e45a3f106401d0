"""Map 3 GB of memory and touch every page of it: the memory limit must stop it."""

import mmap


def capability():
    size = 3 * 1024**3
    block = mmap.mmap(-1, size)
    for offset in range(0, size, 1 << 20):
        block[offset] = 1
    return True
