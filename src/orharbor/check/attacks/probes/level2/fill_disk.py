"""Write 2 GB of files (4 of 512 MB) in the run's working folder: the file size limit must stop it."""


def capability():
    chunk = b"x" * (1 << 20)
    for i in range(4):
        with open(f"part{i}.bin", "wb") as f:
            for _ in range(512):
                f.write(chunk)
    return True
