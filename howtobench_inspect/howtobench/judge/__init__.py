"""What every LLM judge shares: the materials it reads and the way its JSON replies are asked for.

Its modules are imported by name; none is imported here, so importing the package costs nothing.
"""

__all__: list[str] = []
