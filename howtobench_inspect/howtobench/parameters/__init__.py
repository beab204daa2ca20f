"""What the tasks (`howtobench/tasks.py`) are given, and check before anything runs: their
parameters, scorers, inspect's run options, the viewer's layout and the run's endpoints."""

__all__: list[str] = []
