"""Tree-of-Writing: the tree as data, its negotiator, experts, rules and aggregation."""

# The subpackage's modules; none is imported here, so importing the package costs nothing.
__all__ = [
    "aggregate",
    "experts",
    "formatting_paper",
    "headings",
    "negotiation",
    "negotiator",
    "plan",
    "scorer",
    "spec",
]
