"""The whole scoring job as one inspect eval set: every writer × task, judged from one plan
(each stored writer is the model `replay/<writer>`).

inspect's eval-set protocol divides it among workers; any job runner (Slurm, Kubernetes
Jobs, a shell loop) starts them. Settings come from the environment, so the same file
serves the capture, every worker and a one-process run:

    HOWTOBENCH_WRITERS   comma list of stored writers to replay (the paper's models)
    HOWTOBENCH_DATASET   the data source (`hub`, `demo`, a data folder)       [hub]
    HOWTOBENCH_PLAN      the plan file every worker scores with (`howtobench plan export`)
    HOWTOBENCH_JUDGE     the judge model, bound to the grader role
    HOWTOBENCH_LOG_DIR   one log folder for all workers (local, or s3://...)
    HOWTOBENCH_TASKS     comma list of tasks                    [completion,guide,open]

    # 1. enumerate the tasks (runs nothing)
    INSPECT_EVAL_SET_CAPTURE=tasks.json python scale_out.py
    # 2. on each worker: its share of the tasks, its own judge endpoint and reply store
    INSPECT_EVAL_SET_SELECTION=worker-1.json INSPECT_CACHE_DIR=/scratch/cache \\
      JUDGE_BASE_URL=http://10.0.0.5:8000/v1 python scale_out.py
    # 3. one leaderboard over the folder
    howtobench report $HOWTOBENCH_LOG_DIR
"""

import os

from inspect_ai import eval_set

from howtobench import completion, guide, open_writing

TASKS = {"completion": completion, "guide": guide, "open": open_writing}


def main() -> None:
    writers = [w for w in os.environ["HOWTOBENCH_WRITERS"].split(",") if w]
    chosen = os.environ.get("HOWTOBENCH_TASKS", "completion,guide,open").split(",")
    dataset = os.environ.get("HOWTOBENCH_DATASET", "hub")
    plan = os.environ["HOWTOBENCH_PLAN"]
    eval_set(
        [TASKS[name](dataset=dataset, weights=plan) for name in chosen],
        log_dir=os.environ["HOWTOBENCH_LOG_DIR"],
        # the writers are inspect's model axis: each task once per stored writer
        model=[f"replay/{writer}" for writer in writers],
        model_roles={"grader": os.environ["HOWTOBENCH_JUDGE"]},
        eval_set_id="howtobench",
    )


if __name__ == "__main__":
    main()
