"""The bottom floor: the benchmark's shared words, metadata keys, errors and small helpers.
Nothing here imports another room of the package, so every room can stand on it."""

__all__: list[str] = []
