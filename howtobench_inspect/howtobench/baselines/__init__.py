"""Baseline scorers beside the Tree-of-Writing judge."""

# The subpackage's modules; none is imported here, so importing the package costs nothing.
__all__ = [
    "autoplan",
    "bleurt",
    "overlap",
    "prompts",
    "rubric",
    "single_call",
]
