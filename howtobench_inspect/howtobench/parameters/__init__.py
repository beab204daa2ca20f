"""What the tasks (`howtobench/tasks.py`) are given and check before anything runs: the
writing tasks' parameters and the checks that need the task type or the run's models
(`writing`), the scorers a task can be given by name (`scorers`), inspect's run options
(`run_options`), how `inspect view` shows a task's scores (`viewer`), and the run's
endpoints, each opened once, with a live writer's default length limit said
(`preflight`)."""

__all__: list[str] = []
