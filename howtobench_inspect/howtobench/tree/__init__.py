"""Tree-of-Writing: the tree as data, its negotiator, experts, rules and aggregation."""

# None of its modules is imported here, so importing the package costs nothing.
__all__: list[str] = []
