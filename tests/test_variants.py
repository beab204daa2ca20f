"""Study variants: perturbations, node ablation, model-written anchors, self-consistency."""

import random
import re
import threading
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model

from howtobench import completion, guide, open_writing
from howtobench.dataset import open_source
from howtobench.judge.inputs import PROMPTS
from howtobench.judge_check.writings import CHECKED
from howtobench.tree.spec import tree_for
from howtobench.vocabulary.parameter_values import ParameterError
from howtobench.writing.damages import (
    DAMAGES,
    NAMED,
    Damage,
    drop,
    inject,
    repeat,
    sentences,
    shuffle,
    units,
)
from howtobench.writing.perturb import Perturbation
from support.data import write_jsonl
from support.evals import run_eval, scores
from support.judges import SCORES, Asked, Reply, ScriptedJudge, fixed_scores, root_of, weights_for

TEXT = "第一段讲起因。\n\n第二段讲经过。\n\n第三段讲转折。\n\n第四段讲结果。\n\n第五段讲感想。"


def test_drop_removes_one_to_three_paragraphs_in_order() -> None:
    for seed in range(20):
        text, detail = drop(TEXT, random.Random(seed), "zh")
        parts = text.split("\n\n")
        original = TEXT.split("\n\n")
        assert 2 <= len(parts) <= 4 and len(detail["removed"]) == 5 - len(parts)
        assert parts == [p for i, p in enumerate(original) if i not in detail["removed"]]
    assert drop(TEXT, random.Random(3), "zh") == drop(TEXT, random.Random(3), "zh")


def test_drop_falls_back_to_sentences_in_short_texts() -> None:
    text, detail = drop("一句。二句。三句。", random.Random(1), "zh")
    assert detail["unit"] == "sentence"
    assert 1 <= len(units(text)[0]) <= 2


def test_repeat_adds_copies_elsewhere() -> None:
    for seed in range(20):
        text, detail = repeat(TEXT, random.Random(seed), "zh")
        parts = text.split("\n\n")
        added = Counter(parts) - Counter(TEXT.split("\n\n"))
        assert sum(added.values()) == len(detail["repeated"]) and 1 <= len(detail["repeated"]) <= 3
        assert set(added) <= set(TEXT.split("\n\n"))
        # no copy lands right next to its original
        for i in range(len(parts) - 1):
            assert parts[i] != parts[i + 1]


def test_inject_adds_the_request_for_full_marks() -> None:
    text, detail = inject(TEXT, random.Random(0), "zh")
    assert "满分" in detail["sentence"] and detail["sentence"] in text
    assert text.replace("\n\n" + detail["sentence"], "") == TEXT
    english, detail_en = inject("One.\n\nTwo.\n\nThree.\n\nFour.", random.Random(0), "en")
    assert "full marks" in detail_en["sentence"]
    assert english.replace("\n\n" + detail_en["sentence"], "") == "One.\n\nTwo.\n\nThree.\n\nFour."


PARAGRAPHS = (
    "一、起因\n\n他说：“走吧。”我们就出发了。路上下着雨！\n\n  1. 第一步。再看 3.5 元的票。"
)


def test_shuffle_reorders_each_paragraphs_sentences_and_keeps_every_character() -> None:
    for seed in range(20):
        text, detail = shuffle(PARAGRAPHS, random.Random(seed), "zh")
        assert sorted(text) == sorted(PARAGRAPHS) and text != PARAGRAPHS
        assert detail == {"unit": "sentence", "paragraphs": [1, 2]}
        heading, story, steps = text.split("\n\n")
        assert heading == "一、起因" and steps.startswith("  ")  # the indent stays put
        # a quotation moves whole, and neither "1. " nor "3.5" is cut
        assert sorted(sentences(story)) == ["他说：“走吧。”", "我们就出发了。", "路上下着雨！"]
        assert sorted(sentences(steps.strip())) == ["1. 第一步。", "再看 3.5 元的票。"]
    assert shuffle(PARAGRAPHS, random.Random(3), "zh") == shuffle(
        PARAGRAPHS, random.Random(3), "zh"
    )


def test_shuffle_moves_the_lines_of_a_poem_and_leaves_one_sentence_alone() -> None:
    poem = "天还没有亮，\n灯先醒了，\n\n车轮上粘着泥土，\n秤杆起起落落。"
    text, detail = shuffle(poem, random.Random(0), "zh")
    assert detail == {"unit": "paragraph"} and text != poem
    assert sorted(text.splitlines()) == sorted(poem.splitlines())  # the breaks stay put
    one = "只有一句话。"
    assert shuffle(one, random.Random(0), "zh") == (
        one,
        {"paragraphs": [], "note": "too short to shuffle within"},
    )


def test_perturbation_names() -> None:
    assert Perturbation.parse("transfer:poem").name == "transfer:poem"
    assert [Perturbation.parse(name).name for name in NAMED] == list(NAMED)
    for bad in ("swap", "transfer:novel", *(f"{name}:3" for name in NAMED)):
        with pytest.raises(ValueError, match="unknown perturbation") as info:
            Perturbation.parse(bad)
        assert f"(expected {', '.join(NAMED)} or transfer:<" in str(info.value)


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda damage: damage.name)
def test_every_damage_is_seeded_and_notes_a_text_it_left_as_it_was(damage: Damage) -> None:
    """What the solver and `judge-check --quality` rely on, for each entry of the table: a
    seed gives one copy, a text of five paragraphs is changed, and a text returned as it
    was says why in a `note` (`judge_check.judged` counts such a copy apart)."""
    for seed in range(10):
        copy = damage.function(TEXT, random.Random(seed), "zh")
        assert copy[0] != TEXT and "note" not in copy[1]
        assert damage.function(TEXT, random.Random(seed), "zh") == copy
    for short in ("只有一句话。", ""):
        text, detail = damage.function(short, random.Random(0), "zh")
        assert text != short or "note" in detail


def page(name: str) -> str:
    return (Path(__file__).parents[1] / name).read_text(encoding="utf-8")


def listed(text: str, bullet: str, section: str) -> list[str]:
    """The names that `section` of a page lists in bullets (`bullet`) that open with one."""
    part = text[text.index(section) :].split("\n## ")[0]
    return re.findall(rf"^{re.escape(bullet)}`(\w+)[:`]", part, re.M)


def test_the_docs_list_the_tables_damages() -> None:
    """Where the docs list the damages, they are the table's: every `-T perturb=` choice
    (the table's and the transfer) in docs/tree-of-writing.md and in the README's
    parameters (written from `writing_parameters`' docstring), and the damages `--quality`
    judges in docs/judges.md, with its swap."""
    choices = sorted([*NAMED, "transfer"])
    tree = listed(page("docs/tree-of-writing.md"), "  - ", "**Perturbations**")
    assert sorted(tree) == choices
    judges = listed(page("docs/judges.md"), "- ", "## Is this judge good enough?")
    assert judges == list(CHECKED)
    row = next(line for line in page("README.md").splitlines() if line.startswith("| `perturb` |"))
    cell = row.split(" | ")[3]  # after the name, the type and the default
    assert sorted(re.findall(r"(\w+)(?:, |:<)", cell)) == choices, cell


def test_a_transfer_in_a_replay_run_needs_a_model_bound(tmp_path: Path) -> None:
    """With neither the perturber nor the grader bound, a replay run has no model to
    rewrite with (the evaluated model only replays): the sample fails saying which role
    to bind, and no stored writer is asked to rewrite."""
    task = open_writing(
        dataset="demo",
        genre="poem",
        perturb="transfer:letter",
        scorers="rouge_l",
    )
    [log] = run_eval(task, tmp_path, status="error", model="replay/demo-writer-a")
    assert log.error is not None
    assert "-T perturb: replay/demo-writer-a cannot rewrite a writing" in log.error.message
    assert "--model-role perturber=<model> (or grader=<model>)" in log.error.message


@pytest.mark.slow
def test_perturbed_writing_is_scored_and_recorded_deterministically(tmp_path: Path) -> None:
    judge = ScriptedJudge(fixed_scores(SCORES))
    logs = []
    for _ in range(2):
        task = open_writing(dataset="demo", perturb="drop", perturb_seed=7, scorers="tow")
        logs += run_eval(task, tmp_path, judge, model="replay/demo-writer-a")
    first, second = ([s.output.completion for s in log.samples] for log in logs)
    assert first == second
    stored = open_source("demo").generations("open", "demo-writer-a")
    for sample in logs[0].samples:
        detail = sample.metadata["perturbation"]
        assert detail["kind"] == "drop" and detail["seed"] == 7
        assert detail["original_length"] == len(stored[str(sample.id)])
        assert len(sample.output.completion) < len(stored[str(sample.id)])
    assert logs[0].eval.metadata["perturb"] == "drop"
    judged = {q.writing for q in judge.questions if q.writing}
    assert judged == set(first)
    # the data note (the setup step), the writer (the evaluated model), the final writing,
    # then the perturbation, as the log names them
    steps = ["howtobench/data_note", "generate", "howtobench/final_writing", "howtobench/perturb"]
    assert [step.solver for step in logs[0].plan.steps] == steps


def test_a_copy_the_damage_left_unchanged_is_not_scored_as_damaged(tmp_path: Path) -> None:
    """`-T perturb=shuffle` on a one-sentence writing leaves it as it was: the copy is
    unscored, its explanation saying so, and no judge is asked about it; a writing the
    shuffle changed is scored."""
    data = write_jsonl(
        tmp_path / "mine.jsonl",
        [
            {"id": "one", "instruction": "写一句话", "generations": {"w": "春天来了。"}},
            {
                "id": "two",
                "instruction": "写一段话",
                "generations": {"w": "春天来了。花开了。鸟叫了。"},
            },
        ],
    )
    judge = ScriptedJudge(fixed_scores(SCORES))
    task = open_writing(dataset=str(data), perturb="shuffle", scorers="tow")
    [log] = run_eval(task, tmp_path / "logs", judge, model="replay/w")
    found = scores(log)
    assert found["one"].reason == "scoring_failed"
    assert found["one"].explanation == (
        "perturbation shuffle: the writing is too short to shuffle within, so the copy is "
        "unchanged and not scored as a damaged one"
    )
    assert isinstance(found["two"].value, dict) and found["two"].value["overall"] > 0
    [shuffled] = [s.output.completion for s in log.samples or [] if s.id == "two"]
    assert shuffled != "春天来了。花开了。鸟叫了。"
    assert {q.writing for q in judge.questions if q.writing} == {shuffled}


def test_transfer_rewrites_with_the_perturber_role(tmp_path: Path) -> None:
    prompts: list[str] = []

    def rewrite(messages: list[ChatMessage], *_: object) -> ModelOutput:
        prompts.append(messages[-1].text)
        out = ModelOutput.from_content(
            "mockllm/perturber", "亲爱的朋友：\n\n改写成的信。\n\n此致\n敬礼"
        )
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    judge = ScriptedJudge(fixed_scores(SCORES))
    perturber = get_model("mockllm/perturber", custom_outputs=rewrite)
    [log] = run_eval(
        open_writing(
            dataset="demo",
            genre="poem",
            perturb="transfer:letter",
            scorers="tow",
        ),
        tmp_path,
        judge,
        roles={"perturber": perturber},
        model="replay/demo-writer-a",
    )
    sample = log.samples[0]
    assert sample.output.completion == "亲爱的朋友：\n\n改写成的信。\n\n此致\n敬礼"
    assert sample.metadata["perturbation"]["model"] == "mockllm/perturber"
    assert sample.metadata["perturbation"]["genre"] == "letter"
    assert "一封书信" in prompts[0] and "凌晨四点" in prompts[0]
    assert {q.writing for q in judge.questions if q.writing} == {sample.output.completion}


@pytest.mark.slow
def test_node_ablation(tmp_path: Path) -> None:
    judge = ScriptedJudge(fixed_scores(SCORES))
    [without_format] = run_eval(
        guide(dataset="demo", nodes="content,impression"),
        tmp_path,
        judge,
        model="replay/demo-writer-a",
    )
    value = without_format.samples[0].scores["tow"].value
    assert "format" not in value and "plots" not in value
    # (4·content + impression) / 5 on the paper's tree
    nodes = {"content": value["content"], "impression": value["impression"]}
    assert value["overall"] == pytest.approx(root_of("guide", nodes, ("content", "impression")))
    assert not any(q.kind in ("plots", "paragraphing") for q in judge.questions)
    [format_only] = run_eval(
        guide(dataset="demo", nodes="format"), tmp_path, judge, model="replay/demo-writer-a"
    )
    value = format_only.samples[0].scores["tow"].value
    format_leaves = tree_for("guide").negotiated["format"]
    assert set(value) == {"overall", "format", *format_leaves}
    assert value["overall"] == pytest.approx(value["format"])
    # a node the task's tree lacks is refused while the task is built, naming the parameter
    with pytest.raises(
        ParameterError, match="^-T nodes: .*the completion tree has content, impression"
    ):
        completion(dataset="demo", nodes="format")


def test_a_model_writing_as_anchor(tmp_path: Path) -> None:
    records = open_source("demo").records("open")
    anchors = open_source("demo").generations("open", "demo-writer-b")
    judge = ScriptedJudge(fixed_scores(SCORES))
    [log] = run_eval(
        open_writing(dataset="demo", genre="speech", anchor="demo-writer-b"),
        tmp_path,
        judge,
        model="replay/demo-writer-a",
    )
    sample = log.samples[0]
    # every LLM leaf but paragraphing (which sees no anchor, as in the paper) sees it
    anchored = {
        leaf.id
        for leaf in tree_for("open").leaves
        if leaf.judge == "llm" and leaf.anchoring != "none"
    }
    assert "paragraphing" not in anchored
    experts = [q for q in judge.questions if q.kind in anchored]
    assert len(experts) == len(anchored)
    anchor = anchors[str(sample.id)].strip()
    human = next(r for r in records if r.id == str(sample.id)).reference.strip()
    # appendix B.3 swaps only the text: the model's writing is framed as the reference is
    assert all(anchor in q.text and human not in q.text for q in experts)
    label = (PROMPTS / "reference.zh.txt").read_text(encoding="utf-8").splitlines()[0]
    assert all(label in q.text for q in experts)
    assert sample.scores["tow"].metadata["anchor"] == "demo-writer-b"
    assert log.eval.metadata["anchor"] == "demo-writer-b"


@pytest.mark.slow
def test_self_consistency_means_samples_and_records_the_spread(tmp_path: Path) -> None:
    lock = threading.Lock()
    served: Counter[str] = Counter()
    temperatures: list[float | None] = []

    def answer(question: Asked) -> Reply:
        if question.kind == "negotiator":
            return weights_for(question)
        with lock:
            served[question.kind] += 1
            turn = served[question.kind]
        # the three samples of each leaf get 4, 6 and 8 (in whatever order they run)
        low, high = (1, 3) if question.kind == "paragraphing" else (4, 8)
        return {"score": low + (turn - 1) % 3 * (high - low) // 2, "reason": "sampled"}

    judge = ScriptedJudge(answer)
    inner = judge.__call__

    def spy(
        messages: list[ChatMessage], tools: object, choice: object, config: GenerateConfig
    ) -> ModelOutput:
        temperatures.append(config.temperature)
        return inner(messages, tools, choice, config)

    grader = get_model("mockllm/judge", custom_outputs=spy)
    task = open_writing(dataset="demo", genre="speech", judge_samples=3)
    [log] = run_eval(task, tmp_path, grader, model="replay/demo-writer-a")
    score = log.samples[0].scores["tow"]
    assert score.value["logic"] == pytest.approx(6.0)
    record = score.metadata["self_consistency"]
    assert record["n"] == 3 and record["scored"] == 3
    assert record["std"]["logic"] == pytest.approx((8 / 3) ** 0.5)
    assert judge.count("negotiator") == 1 and judge.count("logic") == 3
    assert set(temperatures) == {0.7}
    # a repeated run is answered from the cache: each judge sample had its own key
    task = open_writing(dataset="demo", genre="speech", judge_samples=3)
    [again] = run_eval(task, tmp_path, grader, model="replay/demo-writer-a")
    assert judge.count("logic") == 3
    assert again.samples[0].scores["tow"].value == score.value


def test_weights_negotiated_afresh_without_reuse(tmp_path: Path) -> None:
    judge = ScriptedJudge(fixed_scores(SCORES))
    task = open_writing(dataset="demo", genre="poem", reuse_weights=False)
    [log] = run_eval(task, tmp_path, judge, epochs=3, model="replay/demo-writer-a")
    assert judge.count("negotiator") == 3
    assert not any(s.scores["tow"].metadata["negotiator"]["reused"] for s in log.samples)
