"""The bottom floor: the benchmark's shared words (task names, the fill-in marker, the
providers' names, the language of a text), the metadata keys the log is written and read
with, the user's errors, the genres, names shown safely, rounding, prompt templates,
the base of the package's in-process model providers and whether an address takes a
connection at all (`reachable`). Nothing here imports another room
of the package, so every room can stand on it."""

__all__: list[str] = []
