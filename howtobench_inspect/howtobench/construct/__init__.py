"""Build a HoWToBench-style benchmark from a corpus of human texts (paper sections 4.3-4.6).

One module per step of the paper's pipeline, and what the steps share. Each LLM step is
an inspect task registered by `pipeline`, not by the package's inspect entry point,
which every eval imports.
"""

__all__: list[str] = []
