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
    INSPECT_EVAL_MAX_CONNECTIONS  judge calls in flight in this process, per judge model
                                  [unset: inspect's adaptive limit, 20 growing to 100]
    INSPECT_EVAL_MAX_SAMPLES      writings in flight per task      [its connections;
                                  unset too: 25, following the writer's adaptive limit]
    INSPECT_EVAL_MAX_TASKS        tasks of this process run at once               [1]

(the last three are `inspect eval-set`'s own variables, which `eval_set()` does not read;
`howtobench.scale.limits` reads them). Unset, the connections are inspect-ai 0.3.285's
adaptive concurrency, which lowers its limit only on rate-limit replies: a judge server of
your own queues instead, so give each worker its share of the judge's parallel slots
(the replicas' slots / the workers sharing them, docs/cluster.md). Each worker prints its
connections when it starts.

It runs with the large-run configuration (docs/large-runs.md): no realtime sample
buffer and no live score display, nearly a third less client CPU per judge call.

    # 1. enumerate the tasks (runs nothing, needs no judge endpoint)
    INSPECT_EVAL_SET_CAPTURE=tasks.json python scale_out.py
    # 2. cut them into N worker files of nearly equal judge calls
    howtobench shards split tasks.json --workers 8 --out shards
    # 3. on each worker: its file, its own judge endpoint and reply store; the same
    #    command again after a kill continues where it stopped
    INSPECT_EVAL_SET_SELECTION=shards/worker-1.json INSPECT_CACHE_DIR=/scratch/cache \\
      JUDGE_BASE_URL=http://10.0.0.5:8000/v1 python scale_out.py
    # 4. one leaderboard over the folder
    howtobench report $HOWTOBENCH_LOG_DIR

A worker skips its finished tasks, continues stopped ones and removes the logs they
replace (`howtobench.scale.workers`); docs/cluster.md has the Slurm and Kubernetes recipes.
"""

import os
import sys

from inspect_ai import eval_set

from howtobench import completion, guide, open_writing
from howtobench.scale import workers
from howtobench.scale.limits import limits

TASKS = {"completion": completion, "guide": guide, "open": open_writing}


def define() -> bool:
    """Run the eval set; whether every task finished (eval_set's own verdict)."""
    writers = [w for w in os.environ["HOWTOBENCH_WRITERS"].split(",") if w]
    chosen = os.environ.get("HOWTOBENCH_TASKS", "completion,guide,open").split(",")
    dataset = os.environ.get("HOWTOBENCH_DATASET", "hub")
    plan = os.environ["HOWTOBENCH_PLAN"]
    success, _ = eval_set(
        [TASKS[name](dataset=dataset, weights=plan) for name in chosen],
        log_dir=os.environ["HOWTOBENCH_LOG_DIR"],
        # the writers are inspect's model axis: each task once per stored writer
        model=[f"replay/{writer}" for writer in writers],
        model_roles={"grader": os.environ["HOWTOBENCH_JUDGE"]},
        eval_set_id="howtobench",
        **limits(),  # max_connections, max_samples, max_tasks: checked by workers.run
        log_realtime=False,  # the live sample buffer: a quarter of the client's CPU
        score_display=False,  # live metrics, recomputed over every score after each sample
    )
    return success


if __name__ == "__main__":
    sys.exit(
        workers.run(define, os.environ["HOWTOBENCH_LOG_DIR"], [os.environ["HOWTOBENCH_JUDGE"]])
    )
