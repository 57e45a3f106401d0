"""Keep 384 MB on disk in files under the per-file limit (8 of 48 MB): the disk quota must stop it."""


def capability():
    block = b"x" * (48 << 20)
    for i in range(8):
        with open(f"part{i}.bin", "wb") as f:
            f.write(block)
    return True
