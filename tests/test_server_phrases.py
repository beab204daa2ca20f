"""The judge's table of server phrases against what the simulator's profiles send.

Each profile writes down a server's refusals in that server's own words
(`howtobench.simulator.profiles`); the judge recognises a few of them by their words
(`howtobench.judge.server_words.PHRASES`). The two are kept in step here: every refusal
a profile sends is read, out of the profile's own error body, as what the server means
(and a refusal the judge tells by its status alone matches no phrase), and every phrase
of the table is sent by exactly the profiles it names, or says where a real server
says it.
"""

from __future__ import annotations

from typing import Any, get_args

import pytest

from howtobench.judge.server_words import (
    CONTEXT_TOO_LONG,
    PHRASES,
    SYSTEM_ROLE_REFUSED,
    Meaning,
    Phrase,
    context_refusal,
    meanings,
    reply_counted,
    server_message,
    system_refusal,
)
from howtobench.simulator import PROFILES
from howtobench.simulator.refusals import MEANT, Profile, Refusal

# The numbers a refusal's message is filled with, as `refusals.check` fills them
VALUES = {"context": 4096, "prompt": 5000, "max_tokens": 100, "total": 5100, "count": 5}
VALUES["temperature"] = 0
READ_FROM_WORDS: set[str] = set(get_args(Meaning))
SENT = [
    (name, reason, refusal)
    for name, profile in PROFILES.items()
    for reason, refusal in profile.refusals().items()
]


class SDKError(Exception):
    """A refusal as the openai SDK raises it: the body's "error" unwrapped, if any."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"Error code: {status}")
        self.status_code = status
        self.body = body.get("error", body)


def words(profile: Profile, refusal: Refusal) -> str:
    """What the judge reads of a refusal: the message out of the server's own body, and
    the code beside it (OpenAI's `context_length_exceeded`, which the SDK error's text
    carries)."""
    body = profile.error_body(refusal.status, refusal.text(**VALUES), refusal)
    read = server_message(SDKError(refusal.status, body))
    return " ".join(part for part in (read, refusal.code) if part)


def test_every_profile_refusal_is_one_the_table_knows_what_to_make_of() -> None:
    assert {reason for _, reason, _ in SENT} <= set(MEANT)
    assert READ_FROM_WORDS == {CONTEXT_TOO_LONG, SYSTEM_ROLE_REFUSED} <= set(MEANT.values())


@pytest.mark.parametrize(("name", "reason", "refusal"), SENT, ids=[f"{n}-{r}" for n, r, _ in SENT])
def test_each_refusal_is_read_as_what_the_server_means(
    name: str, reason: str, refusal: Refusal
) -> None:
    said = words(PROFILES[name], refusal)
    assert refusal.text(**VALUES).split()[0] in said  # the server's words, out of its body
    meant = MEANT[reason]
    expected = {meant} & READ_FROM_WORDS  # the rest is told by status, not words
    assert meanings(said) == expected, said
    assert context_refusal(said) == (meant == CONTEXT_TOO_LONG)
    assert system_refusal(said) == (meant == SYSTEM_ROLE_REFUSED)


@pytest.mark.parametrize("phrase", PHRASES, ids=[p.pattern for p in PHRASES])
def test_each_phrase_is_sent_by_the_profiles_it_names_or_says_where_it_was_seen(
    phrase: Phrase,
) -> None:
    senders = {
        name
        for name, reason, refusal in SENT
        if MEANT[reason] == phrase.meaning and phrase.found_in(words(PROFILES[name], refusal))
    }
    assert senders == set(phrase.servers)
    assert phrase.servers or phrase.seen, f"{phrase.pattern!r}: no profile sends it, no source"


def test_a_phrase_is_found_in_any_case_and_only_as_itself() -> None:
    assert meanings("THIS MODEL'S MAXIMUM CONTEXT LENGTH IS 8 TOKENS") == {CONTEXT_TOO_LONG}
    assert meanings("System prompts are not supported") == {SYSTEM_ROLE_REFUSED}
    assert meanings("Rate limit reached; the server is overloaded") == set()


@pytest.mark.parametrize(("name", "reason", "refusal"), SENT, ids=[f"{n}-{r}" for n, r, _ in SENT])
def test_a_context_refusal_that_counts_the_reply_names_the_context_and_the_prompt(
    name: str, reason: str, refusal: Refusal
) -> None:
    """What lets a question be asked again without our max_tokens: every profile's refusal
    of a max_tokens over what is left of its context says it counted the reply, with the
    context and the prompt's tokens; a refusal of the prompt alone (vLLM's, SGLang's,
    llama.cpp's, LM Studio's, OpenAI's) does not."""
    counted = reply_counted(words(PROFILES[name], refusal))
    if reason == "max_tokens":
        assert counted == (VALUES["context"], VALUES["prompt"])
    elif reason == "context" and refusal is PROFILES[name].max_tokens_error:
        assert counted == (VALUES["context"], VALUES["prompt"])  # one message for both
    else:
        assert counted is None
