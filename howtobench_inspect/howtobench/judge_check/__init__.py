"""`howtobench judge-check`: can this judge serve Tree-of-Writing? Asked before money is spent.

A judge fails ToW in ways no model card states: it refuses a system message or a
temperature, answers prose instead of JSON, or answers one leaf's criterion and not
another's. Hand-made test questions would miss what our own prompts provoke, so the check
runs the real thing, small: the ToW eval of our tasks on a few stored writings
(`replay`, so no writer is called), with a fresh reply store so that every question
really goes to the judge, and then reads the log the way the scorer wrote it (`summary`).
`commands` is its parser, which imports none of the rest until the command runs, so its
`--help` stays light. Exit status: 0 the judge can serve, 1 it cannot
(`JudgeCannotServe`), 2 bad input.
"""

# The subpackage's modules; none is imported here, so importing the package costs nothing.
__all__ = [
    "agreement",
    "check",
    "commands",
    "judged",
    "probes",
    "quality",
    "quality_report",
    "report",
    "role",
    "summary",
    "text",
    "writings",
]
