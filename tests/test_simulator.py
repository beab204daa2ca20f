"""The judge simulator: its billing rule, both APIs over real HTTP with their own SDKs, and
inspect's openai-api provider talking to 127.0.0.1."""

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from howtobench import guide
from howtobench.simulator.billing import PromptCache, Segment, Usage, tokens
from howtobench.simulator.faults import Faults
from howtobench.simulator.protocol import FOREIGN_JUDGE, Asked
from howtobench.simulator.replies import WRITER_REPLY
from howtobench.simulator.server import Fault, JudgeSimulator
from support.evals import run_eval
from support.judges import Serve, experts

LONG = "长" * 3000  # written out as "user\n" + text + "\n": 3006 characters, 1503 tokens
MARK = {"type": "ephemeral"}


def test_token_rule_is_two_characters_a_token_rounded_up() -> None:
    assert [tokens(n) for n in (0, 1, 2, 3, 2048)] == [0, 1, 1, 2, 1024]
    assert Segment("user", "ab").written == "user\nab\n"


def test_anthropic_bills_a_marked_prefix_once_as_write_then_as_read() -> None:
    cache = PromptCache()
    first = [Segment("user", LONG, MARK), Segment("user", "问题一")]
    again = [Segment("user", LONG, MARK), Segment("user", "问题二，长一些")]
    # the prefix: 3006 characters, 1503 tokens; the question: "user\n问题一\n", 9 -> 5 tokens
    assert cache.anthropic("m", first, False, "回答") == Usage(5, 1503, 0, 1)
    assert cache.anthropic("m", again, False, "回答") == Usage(7, 0, 1503, 1)
    assert cache.anthropic("other", again, False, "") == Usage(7, 1503, 0, 0)  # per model


def test_anthropic_reads_the_longest_cached_part_and_writes_the_rest() -> None:
    cache = PromptCache()
    head = [Segment("system", LONG, MARK)]
    cache.anthropic("m", [*head, Segment("user", "问")], False, "")
    longer = [*head, Segment("user", LONG, MARK), Segment("user", "问")]
    # "system\n" + LONG + "\n" is 3008 characters (1504 tokens, read), the marked user
    # block 3006 more (1503, written), "user\n问\n" 7 more: 6021 characters, 3011 tokens
    assert cache.anthropic("m", longer, False, "") == Usage(4, 1503, 1504, 0)


def test_anthropic_ignores_short_marks_and_caches_the_last_block_automatically() -> None:
    cache = PromptCache()
    short = [Segment("system", "短", MARK), Segment("user", LONG)]  # 9 + 3006 characters
    assert cache.anthropic("m", short, False, "") == Usage(1508, 0, 0, 0)
    # a top-level cache_control marks the last block: the whole prompt is written
    assert cache.anthropic("m", short, True, "") == Usage(0, 1508, 0, 0)
    assert cache.anthropic("m", short, True, "") == Usage(0, 0, 1508, 0)


def test_openai_caches_a_repeated_prefix_of_1024_tokens_or_more_in_128_token_steps() -> None:
    cache = PromptCache()
    prompt = [Segment("user", LONG), Segment("user", "一")]
    assert cache.openai("m", prompt, "") == Usage(1507, 0, 0, 0)
    # the first 1503 tokens are shared: 1024 + 3 x 128 = 1408 of them are read
    assert cache.openai("m", [Segment("user", LONG), Segment("user", "二")], "") == Usage(
        1507 - 1408, 0, 1408, 0
    )
    short = [Segment("user", "短" * 2000)]
    cache.openai("m", short, "")
    assert cache.openai("m", short, "") == Usage(1003, 0, 0, 0)  # under 1024 tokens


SCORE = {"score": 7, "reason": "scripted"}


def _answering(reply: dict[str, Any] | Fault) -> JudgeSimulator:
    """A simulator answering every request with `reply`, whatever it asks."""
    return JudgeSimulator(script=lambda _: reply)


def test_anthropic_messages_with_the_sdk_streamed_or_not() -> None:
    with _answering(SCORE) as simulator:
        client = anthropic.Anthropic(base_url=simulator.root_url, api_key="none", max_retries=0)
        request: dict[str, Any] = {
            "model": "claude-sim",
            "max_tokens": 100,
            "system": [{"type": "text", "text": "评委"}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": LONG, "cache_control": MARK},
                        {"type": "text", "text": "打分"},
                    ],
                }
            ],
        }
        plain = client.messages.create(**request)
        with client.messages.stream(**request) as stream:
            streamed = stream.get_final_message()
    assert json.loads(plain.content[0].text) == SCORE
    assert streamed.content[0].text == plain.content[0].text
    # "system\n评委\n" (10 characters) and the marked block (3006): 1508 tokens cached
    assert (plain.usage.cache_creation_input_tokens, plain.usage.cache_read_input_tokens) == (
        1508,
        0,
    )
    assert (streamed.usage.cache_creation_input_tokens, streamed.usage.cache_read_input_tokens) == (
        0,
        1508,
    )
    assert streamed.usage.input_tokens == plain.usage.input_tokens == tokens(len("user\n打分\n"))
    assert streamed.usage.output_tokens == plain.usage.output_tokens > 0
    first, second = simulator.requests
    assert (first.path, first.api, first.stream, second.stream) == (
        "/v1/messages",
        "anthropic",
        False,
        True,
    )
    assert first.marked == (Segment("user", LONG, MARK),)


@pytest.mark.parametrize(
    ("fault", "status", "kind"),
    [
        ("429", 429, "rate_limit_error"),
        ("500", 500, "api_error"),
        ("400", 400, "invalid_request_error"),
    ],
)
def test_anthropic_faults_come_in_anthropics_error_shape(
    fault: str, status: int, kind: str
) -> None:
    with _answering(Fault(fault)) as simulator:
        client = anthropic.Anthropic(base_url=simulator.root_url, api_key="none", max_retries=0)
        with pytest.raises(anthropic.APIStatusError) as raised:
            client.messages.create(
                model="claude-sim", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
    assert raised.value.status_code == status
    assert raised.value.body == {
        "type": "error",
        "error": {"type": kind, "message": f"simulated {fault}"},
    }
    [request] = simulator.requests
    assert (request.fault, request.reply, request.usage) == (fault, None, None)


def test_openai_chat_with_the_sdk_reports_cached_tokens() -> None:
    with _answering(SCORE) as simulator:
        client = openai.OpenAI(base_url=simulator.base_url, api_key="none", max_retries=0)
        replies = [
            client.chat.completions.create(
                model="sim", messages=[{"role": "user", "content": LONG + question}]
            )
            for question in ("问一", "问二")
        ]
        stats = json.load(urllib.request.urlopen(f"{simulator.root_url}/stats"))
    assert [r.usage.prompt_tokens_details.cached_tokens for r in replies] == [0, 1408]
    assert [r.usage.prompt_tokens for r in replies] == [tokens(len(f"user\n{LONG}问一\n"))] * 2
    assert [r.api for r in simulator.requests] == ["openai", "openai"]
    assert stats["tokens"]["cache_read"] == 1408
    assert stats["characters"]["prompt"] == 2 * (len(LONG) + 2)


def test_unknown_get_paths_are_refused() -> None:
    with JudgeSimulator() as simulator, pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{simulator.root_url}/nothing")
    assert refused.value.code == 404


def test_tow_over_http_scores_every_sample(serve: Serve, tmp_path: Path) -> None:
    simulator = serve()
    [log] = run_eval(
        guide(dataset="demo"), tmp_path, "openai-api/sim/judge", model="replay/demo-writer-a"
    )
    assert all(isinstance(s.scores["tow"].value, dict) for s in log.samples)
    assert simulator.calls == {"negotiator": 3, **dict.fromkeys(experts("guide"), 3)}
    usage = log.stats.model_usage["openai-api/sim/judge"]
    assert usage.input_tokens == simulator.tokens["input"] > 0
    assert (usage.input_tokens_cache_read or 0) == simulator.tokens["cache_read"]
    assert usage.output_tokens == simulator.tokens["output"]


@pytest.mark.slow
def test_persistently_malformed_replies_end_cleanly_unscored(serve: Serve, tmp_path: Path) -> None:
    sim = serve(faults=Faults(rate_malformed=1.0))
    [log] = run_eval(
        guide(dataset="demo"), tmp_path, "openai-api/sim/judge", model="replay/demo-writer-b"
    )
    assert len(log.samples) == 3
    for sample in log.samples:
        score = sample.scores["tow"]
        assert score.reason == "grader_failed"
        assert score.explanation.startswith(
            "negotiator (openai-api/sim/judge): the reply holds no JSON object"
        )
    assert sim.calls["negotiator"] == 3 * 3


def test_a_question_is_read_from_the_conversation_an_sdk_sends() -> None:
    seen: list[Asked] = []

    def script(question: Asked) -> None:
        seen.append(question)

    with JudgeSimulator(script=script) as simulator:
        client = anthropic.Anthropic(base_url=simulator.root_url, api_key="none", max_retries=0)
        client.messages.create(
            model="claude-sim",
            max_tokens=10,
            messages=[
                {"role": "user", "content": "写一首诗"},
                {"role": "assistant", "content": "草稿"},
                {"role": "user", "content": "再写一次"},
            ],
        )
    [question] = seen
    assert (question.kind, question.attempt, question.text, question.last) == (
        "writer",
        2,
        "写一首诗",
        "再写一次",
    )


def test_another_benchmarks_judge_prompt_gets_a_score_it_can_read() -> None:
    """An untagged prompt asking for a JSON "score" (inspect_evals' writingbench judge,
    whose template this mirrors) is a foreign judge's: answered with a whole score its
    grade pattern reads, stable per question; a request without one stays the writer's."""
    ask = (
        "Evaluate the Response based on the Query and Criteria provided.\n"
        "Return the results in the following JSON format, Only output the following JSON:\n"
        '```json\n{{\n"score": an integer score between 1 to 10,\n"reason": "..."\n}}\n```\n'
        "** Criteria **\n```{criterion}```\n** Response **\n```一篇作文```"
    )
    with JudgeSimulator() as simulator:
        client = openai.OpenAI(base_url=simulator.base_url, api_key="none", max_retries=0)
        replies = [
            client.chat.completions.create(
                model="sim", messages=[{"role": "user", "content": content}]
            )
            .choices[0]
            .message.content
            for content in (
                ask.format(criterion="结构"),
                ask.format(criterion="结构"),
                ask.format(criterion="语言"),
                "写一首诗",
            )
        ]
        kinds = json.load(urllib.request.urlopen(f"{simulator.root_url}/stats"))["calls"]
    grades = [re.search(r'"score"\s*:\s*(10|[1-9])', str(reply)) for reply in replies[:3]]
    assert all(grades) and grades[0][1] == grades[1][1]  # type: ignore[index]
    assert [json.loads(str(reply))["reason"] for reply in replies[:3]] == ["simulated"] * 3
    assert kinds == {FOREIGN_JUDGE: 3, "writer": 1} and replies[3] == WRITER_REPLY
