"""Baseline scorers beside the Tree-of-Writing judge."""

# None of its modules is imported here, so importing the package costs nothing.
__all__: list[str] = []
