"""The negotiation task: the negotiator alone, one sample per instruction, its log the
record of the weights that `howtobench plan export` freezes into a plan."""

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import GenerateConfig

from howtobench.dataset import open_source
from howtobench.dataset.fingerprint import fingerprint
from howtobench.dataset.records import DataError, WritingRecord, record_to_sample
from howtobench.judge.defaults import JUDGE_MAX_RETRIES
from howtobench.tasks.parameters import ParameterError, names, temperature
from howtobench.tasks.run_options import check_run_options
from howtobench.tasks.writing_parameters import check_grader
from howtobench.tree.negotiation import instruction_only, negotiation
from howtobench.tree.plan import TREE_VERSION
from howtobench.vocabulary.genres import canonical_genre
from howtobench.vocabulary.metadata import TaskKey
from howtobench.vocabulary.words import TASKS

__all__ = ["negotiate"]


@task
def negotiate(
    dataset: str | None = "hub",
    genre: str | None = None,
    judge_temperature: float | None = None,
    tasks: str | list[str] | None = None,
) -> Task:
    """The negotiator alone: one sample per instruction, scored by its weights.

    Its log is the record of the weights, and `howtobench plan export` turns it into a
    plan file that every worker scores with (`-T weights=PLAN.jsonl`). Bind the judge
    with `--model-role grader=...` and run with `--model none`.

    Args:
        dataset: `hub`, `demo`, a data folder (`<task>/aligned.jsonl`) or a JSONL file.
        genre: keep one canonical genre (e.g. `argumentative`).
        judge_temperature: the negotiator's sampling temperature; default the judge
            role's own, else 0.
        tasks: comma list of the tasks whose instructions are negotiated
            (`completion,guide,open`, the default).

    Returns:
        The task: one sample per instruction, and the negotiation scorer.
    """
    check_run_options()
    chosen = names(tasks, "tasks") or TASKS
    unknown = [t for t in chosen if t not in TASKS]
    if unknown:
        raise ParameterError(
            "tasks", f"unknown task(s) {', '.join(unknown)} (expected {', '.join(TASKS)})"
        )
    check_grader()
    data: dict[str, dict[str, object]] = {}
    records: list[WritingRecord] = []
    source = open_source(dataset)
    for task_type in chosen:
        found = source.records(task_type)
        prints = fingerprint(found)
        data[task_type] = {"count": prints.count, "sha256": prints.sha256}
        records += [r for r in found if not genre or r.genre == canonical_genre(genre)]
    if not records:
        raise ParameterError("genre", f"no instruction of genre '{genre}' in {', '.join(chosen)}")
    seen: dict[str, str] = {}
    for record in records:
        if record.id in seen:
            raise DataError(
                source.name,
                f"id '{record.id}' is used by a {seen[record.id]} and a {record.task} "
                "record; negotiate the tasks one at a time (-T tasks=...)",
            )
        seen[record.id] = record.task
    return Task(
        dataset=MemoryDataset(
            [record_to_sample(r, r.instruction) for r in records], name="howtobench-negotiate"
        ),
        solver=instruction_only(),
        scorer=negotiation(judge_temperature=temperature(judge_temperature, "judge_temperature")),
        metadata={
            TaskKey.HOWTOBENCH_TASK: "negotiate",
            TaskKey.DATASET: source.name,
            TaskKey.GENRE: genre,
            TaskKey.TASKS: list(chosen),
            TaskKey.DATA: data,
            TaskKey.TREE: TREE_VERSION,
        },
        config=GenerateConfig(max_retries=JUDGE_MAX_RETRIES),
        version=1,
    )
