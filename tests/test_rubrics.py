"""The `rubric` baseline's genre rubrics against the paper's appendix H, and their mapping.

Appendix H is read from the paper's text in the shared folder: every rubric must have the
appendix's dimensions in its order, each with as many numbered sub-criteria as the
appendix gives it (named ones, or, where the appendix names none, its questions), and the
key terms written out below for each dimension in our English wording of it.
"""

import json
import re
from pathlib import Path

import pytest

from howtobench.baselines.prompts import (
    APPENDIX_H_RUBRICS,
    GENERAL_RUBRIC,
    RUBRIC_OF_GENRE,
    RUBRIC_OF_RAW,
    genre_rubric,
    rubric_name,
)
from howtobench.baselines.rubric import rubric_question
from howtobench.judge.reading import ReplyError
from howtobench.simulator import classify, valid_reply
from howtobench.vocabulary.genres import CANONICAL_GENRES, RAW_TO_CANONICAL, canonical_genre
from support.data import anchored_input

# Per rubric, per dimension in the appendix's order: words its criteria turn on, which
# our English dimension line must contain (lower case).
KEY_TERMS: dict[str, list[tuple[str, ...]]] = {
    "argumentative": [
        ("theme", "argument", "logically"),
        ("enough evidence", "varied evidence", "data", "expert"),
        ("language", "logic", "persuasion"),
        ("structure", "introduction", "parallel", "transitions"),
        ("reflection", "society", "novel perspective"),
    ],
    "summary": [
        ("goals", "plans", "reflection", "lessons"),
        ("results", "difficulties", "improvement", "time, importance or category"),
        ("concise", "persuasive", "trust"),
        ("structure", "headings", "formatting", "figures"),
        ("own analysis", "creativity", "forward-looking"),
    ],
    "contract": [
        ("clause coverage", "rights and obligations", "breach", "disputes", "unambiguous"),
        ("legal compliance", "jurisdiction", "labour", "intellectual property", "risk"),
        ("payment", "delivery standards", "service quality", "monitoring"),
        ("balance", "one-sided", "fair"),
        ("changed circumstances", "market", "amendment", "long-term"),
    ],
    "delivery": [
        ("clarity", "redundancy", "register", "occasion"),
        ("sincere", "resonance", "tone"),
        ("opening, body and close", "transitions"),
        ("wedding", "memorial", "audience", "culture"),
        ("template", "memorable"),
    ],
    "documentary": [
        ("historical events", "investigation", "reliable sources", "bias"),
        ("inner life", "relations", "growth"),
        ("structure", "pacing", "repetition", "non-linear", "viewpoint"),
        ("social phenomena", "social concern", "critical", "social problems"),
        ("detail", "metaphor", "style", "readability"),
    ],
    "essay": [
        ("central argument", "position", "insight", "critical thinking"),
        ("logic", "layer by layer", "evidence"),
        ("precise", "commentary", "distinctive style"),
        ("several perspectives", "comprehensiveness", "whole"),
        ("originality", "new way of thinking", "reflect"),
    ],
    "fiction": [
        ("paced", "structure", "climax", "resolution", "tension"),
        ("many-sided", "grow", "inner conflict", "relationships"),
        ("theme", "symbols", "era", "culture"),
        ("vivid", "tone and atmosphere", "descriptions"),
        ("empathy", "authenticity"),
        ("tropes", "viewpoint", "identity"),
    ],
    "letters": [
        ("salutation", "body and closing", "paragraphs", "easy to read"),
        ("concise", "logic", "accurate", "ambiguous"),
        ("recipient", "sincere", "respectful", "professionalism"),
        ("purpose", "request", "accurate", "drifting"),
        ("etiquette", "cultural context", "tidy"),
    ],
    "officials": [
        ("fact", "information and details", "essential part", "laws, policies and regulations"),
        ("structure", "paragraphs", "order", "redundancy"),
        ("official documents", "colloquial", "precise", "concise"),
        ("format", "title", "reference number", "date", "signatory", "punctuation", "tone"),
        ("directives", "actionable", "laws", "public interest"),
    ],
    "plan": [
        ("goals", "measurable", "quantified indicators"),
        ("steps", "timelines", "responsibilities", "resources", "contingency"),
        ("new angles", "methods", "existing plans"),
        ("risks", "scenarios", "measures"),
        ("assessing outcomes", "feedback", "iterating"),
    ],
    "poem": [
        ("language", "succinctly", "rhythm", "sound"),
        ("self, society or existence", "metaphor", "symbol"),
        ("sincere", "complexity", "indirectly", "theme"),
        ("structure", "non-linear", "form", "layout"),
        ("openness and ambiguity", "readings", "lasting impression"),
    ],
    "prose": [
        ("theme", "philosophical", "personal experience"),
        ("concise", "graceful", "literary quality", "personal touch", "rhetorical"),
        ("organised", "pacing", "sentence patterns"),
        ("genuine", "resonate", "universal"),
        ("cultural", "historical", "spirit of its time", "distinctive"),
    ],
    "report": [
        ("structure", "hierarchical", "step by step", "repetition or omission"),
        ("data", "credible sources", "contradictions", "background"),
        ("concise", "grammar", "formal", "academic"),
        ("fresh perspectives", "methods", "heart of the problems", "analysis"),
        ("theme", "intended readers", "acted on"),
    ],
    "document": [
        ("title, background, main body, conclusion", "transitions", "conventions"),
        ("concise", "word choice", "ambiguous", "misreading"),
        ("industry, organisation or genre", "punctuation", "consistent"),
        ("logical framework", "evidence or data", "background", "solutions"),
        ("context", "readers", "time constraints", "purpose", "guide action"),
    ],
    "speech": [
        ("inform, persuade or inspire", "content", "call to action"),
        ("central ideas", "transitions", "ambiguity"),
        ("facts, data or examples", "convincing", "sources"),
        ("depth", "interests, needs and background", "opposing views"),
        ("precise", "wordiness", "style", "respectful", "repetition"),
    ],
}
APPENDIX_NAMES = {"Officials": "officials"}  # the others are their names in lower case

# A named sub-criterion of appendix H: "Clause Coverage : Do the ..." at a sentence start.
_NAMED = re.compile(r"(?:^|(?<=[?.] ))([A-Z][^?.:]{0,60}?) ?: ")


def appendix_h(text: str) -> dict[str, list[tuple[str, int]]]:
    """Each appendix-H rubric's dimensions: their titles and how many sub-criteria each
    has (its named ones, or its questions where it names none)."""
    start = text.index("## Appendix H ")
    section = text[start : text.index("\n## Appendix", start + 1)]
    rubrics = {}
    for part in re.split(r"^### H\.\d+ ", section, flags=re.M)[1:]:
        name, _, body = part.partition("\n")
        dimensions = re.findall(r"^\d+\. (.+)\n\n(.+)$", body, flags=re.M)
        rubrics[name.strip()] = [
            (title, len(_NAMED.findall(criteria)) or criteria.count("?"))
            for title, criteria in dimensions
        ]
    return rubrics


@pytest.fixture
def paper(shared_data: Path) -> str:
    """The paper's text beside the published data (../shared/reference)."""
    path = shared_data.parent / "reference" / "howtobench-paper.md"
    if not path.is_file():
        pytest.skip(f"the paper's text is not at {path}")
    return path.read_text(encoding="utf-8")


def dimension_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"\[[a-z][a-z0-9_]*\] ", line)]


def numbered(line: str, language: str) -> list[int]:
    pattern = r"（(\d)）" if language == "zh" else r"\((\d)\)"
    return [int(n) for n in re.findall(pattern, line)]


def test_every_rubric_follows_its_appendix_h_dimensions_in_order(paper: str) -> None:
    appendix = appendix_h(paper)
    assert len(appendix) == 15
    names = [APPENDIX_NAMES.get(n, n.lower()) for n in appendix]
    assert names == list(APPENDIX_H_RUBRICS)
    for name, dimensions in zip(names, appendix.values(), strict=True):
        assert len(dimensions) == (6 if name == "fiction" else 5)
        terms = KEY_TERMS[name]
        assert len(terms) == len(dimensions), name
        for language in ("en", "zh"):
            lines = dimension_lines(genre_rubric(name, language).text)
            assert len(lines) == len(dimensions), (name, language)
            for line, (title, criteria) in zip(lines, dimensions, strict=True):
                # the appendix's sub-criteria, numbered 1..n in its order
                assert numbered(line, language) == list(range(1, criteria + 1)), (title, line)
        for line, words, (title, _) in zip(
            dimension_lines(genre_rubric(name, "en").text), terms, dimensions, strict=True
        ):
            missing = [w for w in words if w not in line.lower()]
            assert not missing, f"{name}, {title}: {missing} not in {line!r}"


def word_runs(text: str, length: int = 6) -> set[str]:
    """The runs of `length` words within a clause (titles and names stand apart)."""
    runs = set()
    for clause in re.split(r"[:;,?.()!—\n]", text.lower()):
        words = re.findall(r"[a-z’'-]+", clause)
        runs |= {" ".join(words[i : i + length]) for i in range(len(words) - length + 1)}
    return runs


def test_rubrics_are_our_own_words(paper: str) -> None:
    """The appendix's criteria in our wording: no run of six words within one of its
    clauses is in ours (its dimension titles, five words at most, may recur)."""
    start = paper.index("## Appendix H ")
    appendix = word_runs(paper[start : paper.index("\n## Appendix", start + 1)])
    for name in APPENDIX_H_RUBRICS:
        copied = word_runs(genre_rubric(name, "en").text) & appendix
        assert not copied, (name, sorted(copied))


def test_every_published_label_gets_an_appendix_h_rubric(shared_data: Path) -> None:
    published = {
        json.loads(line)["sub_task"]
        for task in ("completion", "guide", "open")
        for line in (shared_data / task / "aligned.jsonl").open(encoding="utf-8")
    }
    assert published == set(RAW_TO_CANONICAL)
    for label in published:
        assert rubric_name(canonical_genre(label), label) in APPENDIX_H_RUBRICS, label


def test_the_mapping_uses_the_raw_label_where_appendix_h_is_finer() -> None:
    assert set(RUBRIC_OF_GENRE) == set(CANONICAL_GENRES)
    assert set(RUBRIC_OF_GENRE.values()) | set(RUBRIC_OF_RAW.values()) <= set(APPENDIX_H_RUBRICS)
    assert set(RUBRIC_OF_RAW) <= set(RAW_TO_CANONICAL)
    expected = {
        "纪实": "documentary",  # counts under fiction in Table 4, H.5 is its own
        "小说": "fiction",
        "总结类写作": "summary",  # under report in Table 4
        "实习报告": "report",
        "公文": "officials",
        "通知": "officials",
        "规章制度": "officials",
        "文章": "essay",  # commentary: H.6's review article
        "文秘知识": "document",
        "申请类写作": "letters",
        "教案": "plan",
    }
    for label, name in expected.items():
        assert rubric_name(canonical_genre(label), label) == name, label
        assert genre_rubric(canonical_genre(label), "zh", label).name == name
    # without a raw label the canonical genre decides; a rubric's name selects itself
    assert rubric_name("fiction") == "fiction" and rubric_name("others") == "document"
    assert [rubric_name(n) for n in APPENDIX_H_RUBRICS] == list(APPENDIX_H_RUBRICS)
    assert rubric_name("Delivery", "Delivery") == "delivery"
    # a label of the user's own
    assert rubric_name("travelogue", "travelogue") == GENERAL_RUBRIC
    assert genre_rubric("travelogue", "en", "travelogue").name == GENERAL_RUBRIC


@pytest.mark.parametrize("label", sorted(RAW_TO_CANONICAL))
def test_the_reply_check_takes_exactly_the_rubric_ids(label: str) -> None:
    judge_input = anchored_input(
        genre=canonical_genre(label),
        genre_raw=label,
        language="zh",
        instruction="请写一篇作品。",
        reference="参考文本。",
        writing="待评的作品正文。",
    )
    question = rubric_question(judge_input)
    rubric = genre_rubric(judge_input.genre, "zh", label)
    assert question.about == {"rubric": rubric.name}
    assert rubric.text in question.instructions
    scores = {i: 6 for i in rubric.ids}
    verdict = question.form.check({"scores": scores, "overall": 7})
    assert verdict.details["scores"] == scores and verdict.score == 7
    first, *rest = rubric.ids
    for wrong in ({i: 6 for i in rest}, {**scores, "extra": 6}):
        with pytest.raises(ReplyError, match='"scores" must hold exactly'):
            question.form.check({"scores": wrong, "overall": 7})
    # the simulator reads the same ids off the prompt, and its reply passes the check
    seen = classify(
        [
            {"role": "system", "content": question.system},
            {
                "role": "user",
                "content": f"{judge_input.materials(True)}\n\n{question.instructions}",
            },
        ]
    )
    assert list(question.form.read(valid_reply(seen)).details["scores"]) == list(rubric.ids)
