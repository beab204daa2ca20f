"""The HoWToBench tasks (`writing`: `howtobench/completion`, `guide`, `open`, and the
negotiation task that freezes their weights into a plan), the task parameters they read
and check (`parameters`, `run_options`) and the scorers they can be given (`scorers`)."""

__all__: list[str] = []
