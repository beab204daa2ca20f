"""What every LLM judge shares: the materials it reads and the way its JSON replies are asked for."""

# The subpackage's modules; none is imported here, so importing the package costs nothing.
__all__ = [
    "calls",
    "guards",
    "inputs",
    "models",
    "replies",
    "runs",
    "sampling",
    "store",
]
