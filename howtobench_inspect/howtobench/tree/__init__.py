"""Tree-of-Writing: the tree as data, its negotiator, experts, rules and aggregation."""

# The subpackage's modules; none is imported here, so importing the package costs nothing.
__all__ = [
    "aggregate",
    "columns",
    "experts",
    "formatting_paper",
    "headings",
    "negotiation",
    "negotiator",
    "plan",
    "prompts",
    "scorer",
    "spec",
    "writing_score",
]
