"""`howtobench judge-check`: can this judge serve Tree-of-Writing? Asked before money is spent.

A judge fails ToW in ways no model card states: it refuses a system message or a
temperature, answers prose instead of JSON, or answers one leaf's criterion and not
another's. Hand-made test questions would miss what our own prompts provoke, so the check
runs the real thing, small: the ToW eval of our tasks on a few stored writings
(`replay`, so no writer is called), with a fresh reply store so that every question
really goes to the judge, and then reads the log the way the scorer wrote it.

`role` reads the judge from `--model-role grader=...`; `writings` chooses the stored
writings the eval replays; `probes` makes a few tiny direct calls first, to learn which
request shapes the endpoint refuses; `check` runs the whole check; `summary` reads its
logs and rules on them (`USABLE_SHARE`); `quality` (`--quality`) adds damaged copies
and a retest of the writings and rules on whether the judge sees each damage, reading
what the judge decided (`judged`) and printing it (`quality_report`); `agreement`
(`--against`) sets the scores beside a reference judge's logs; `report` prints
what was found, or gives it as JSON; `text` holds how its lines are worded. `commands`
is the `howtobench judge-check` parser, which imports none of them until the command
runs, so its `--help` stays light.

Exit status, through `cli.main`: 0 when the judge can serve (and, with `--quality`,
sees quality); 1 when it cannot (`JudgeCannotServe`, with the reasons; an endpoint that
answers nothing is one line saying what to check); 2 on bad input (`UserError`,
`StudyError`).
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
