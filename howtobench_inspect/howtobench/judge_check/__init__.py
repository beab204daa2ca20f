"""`howtobench judge-check`: can this judge serve Tree-of-Writing? Asked before money is spent.

A judge fails ToW in ways no model card states (a refused system message or temperature,
prose instead of JSON, one leaf's criterion answered and not another's), and hand-made
questions would miss what our own prompts provoke; so the check runs the real ToW eval,
small, on stored writings with a fresh reply store, and reads the log as the scorer wrote
it (`summary`; docs/judges.md, "Check a judge").
"""

__all__: list[str] = []  # no module is imported here, so importing the package costs nothing
