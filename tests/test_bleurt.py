"""The BLEURT scorer on a tiny, randomly initialised checkpoint that the test builds itself.

Nothing is downloaded: the checkpoint (config, weights, WordPiece vocabulary of the demo's
characters) is written with `save_pretrained`, loaded back by the scorer's real loading
code and run through a real inspect eval. The expected scores are the model's own output
for each (reference, writing) pair, computed here one pair at a time, without padding.
"""

from __future__ import annotations

import importlib.util
import io
import math
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import task_with
from inspect_ai.solver import Generate, Solver, TaskState, chain, solver

from howtobench import open_writing
from howtobench.baselines import bleurt as bleurt_module
from howtobench.baselines.bleurt import bleurt
from howtobench.dataset.jsonl import DEMO_FILE
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.metadata import SampleKey
from howtobench.vocabulary.parameter_values import ParameterError
from support.data import demo_records, write_jsonl
from support.evals import run_eval

EXTRA = "the 'bleurt' extra is not installed (pip install -e '.[bleurt]')"
MAX_TOKENS = 64  # the tiny model's position table: longer pairs are cut
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BLEURT checkpoint with 2 layers of width 16 and the demo's characters as vocabulary."""
    pytest.importorskip("bleurt_pytorch", reason=EXTRA)
    import torch
    from bleurt_pytorch import BleurtConfig, BleurtForSequenceClassification, BleurtTokenizer

    folder = tmp_path_factory.mktemp("tiny-bleurt")
    text = DEMO_FILE.read_text(encoding="utf-8")
    characters = sorted({c for c in text if not c.isspace() and c.isprintable()})
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(SPECIALS + characters) + "\n", encoding="utf-8")
    config = BleurtConfig(
        vocab_size=len(SPECIALS) + len(characters),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=MAX_TOKENS,
        initializer_range=0.5,  # wide weights: different pairs get clearly different scores
    )
    torch.manual_seed(7)
    BleurtForSequenceClassification(config).save_pretrained(folder)
    BleurtTokenizer(vocab_file=str(vocab), do_lower_case=False).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def sentencepiece_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint laid out like BLEURT-20's: a SentencePiece model (`spm.model`), no
    WordPiece vocabulary, so the port falls back to its SentencePiece tokenizer."""
    pytest.importorskip("bleurt_pytorch", reason=EXTRA)
    import sentencepiece
    import torch
    from bleurt_pytorch import BleurtConfig, BleurtForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny-bleurt-20")
    records = demo_records()
    spm = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter([r["reference"] for r in records]),
        model_writer=spm,
        vocab_size=1200,
        character_coverage=1.0,
        user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"],
        pad_id=0,
        pad_piece="[PAD]",
        unk_id=1,
        unk_piece="[UNK]",
        bos_id=-1,
        eos_id=-1,
        minloglevel=2,
    )
    (folder / "spm.model").write_bytes(spm.getvalue())
    config = BleurtConfig(
        vocab_size=1200,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=MAX_TOKENS,
        initializer_range=0.5,
    )
    torch.manual_seed(3)
    BleurtForSequenceClassification(config).save_pretrained(folder)
    return folder


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def direct_scores(checkpoint: Path, pairs: list[tuple[str, str]]) -> list[tuple[float, int]]:
    """(score, uncut length) of each (reference, writing), one pair per forward pass."""
    import torch
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    model = BleurtForSequenceClassification.from_pretrained(checkpoint).eval()
    tokenizer = BleurtTokenizer.from_pretrained(checkpoint)
    found = []
    with torch.no_grad():
        for reference, writing in pairs:
            uncut = len(tokenizer(reference, writing)["input_ids"])
            inputs = tokenizer(
                [reference], [writing], truncation=True, max_length=MAX_TOKENS, return_tensors="pt"
            )
            found.append((model(**inputs).logits.item(), uncut))
    return found


def user_data(folder: Path) -> Path:
    """The demo's open records, one with an empty writing, plus one without a reference."""
    rows = [r for r in demo_records() if r["task"] == "open"]
    rows[1]["generations"]["demo-writer-a"] = ""
    rows.append(
        {"id": "no_reference", "instruction": "写一首诗", "generations": {"demo-writer-a": "春风"}}
    )
    return write_jsonl(folder / "open.jsonl", rows)


@solver
def mark_unusable(sample_id: str) -> Solver:
    """What a perturber does when it cannot disturb a writing."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == sample_id:
            state.metadata[SampleKey.UNSCORABLE] = "the perturber returned nothing"
        return state

    return solve


def test_an_eval_scores_what_the_model_computes(tiny_checkpoint: Path, tmp_path: Path) -> None:
    task = open_writing(dataset=str(user_data(tmp_path)), scorers="rouge_l")
    task = task_with(
        task,
        solver=chain(task.solver, mark_unusable("demo_open_4")),
        scorer=bleurt(checkpoint=str(tiny_checkpoint), batch_size=3),
    )
    [log] = run_eval(task, tmp_path / "logs", model="replay/demo-writer-a")
    samples = {s.id: s for s in log.samples}
    for unscored, reason in [
        ("no_reference", "the sample has no reference to compare with"),
        ("demo_open_4", "the perturber returned nothing"),
    ]:
        score = samples[unscored].scores["bleurt"]
        assert math.isnan(score.value) and score.reason == "scoring_failed"
        assert score.explanation == reason

    scored = ["demo_open_1", "demo_open_2", "demo_open_3"]
    assert samples["demo_open_2"].output.completion == ""  # an empty writing is scored too
    pairs = [(samples[i].target, samples[i].output.completion) for i in scored]
    expected = direct_scores(tiny_checkpoint, pairs)
    values = [samples[i].scores["bleurt"].value for i in scored]
    assert values == pytest.approx([value for value, _ in expected], rel=1e-4, abs=1e-5)
    assert len({round(v, 4) for v in values}) == 3  # the pairs are told apart
    for i, (_, uncut) in zip(scored, expected, strict=True):
        score = samples[i].scores["bleurt"]
        named = {"tokens": uncut, "max_tokens": MAX_TOKENS}
        if i == "demo_open_2":  # the empty writing's score names its state
            named["writing"] = samples[i].metadata["writing"]
            assert named["writing"]["state"] == "empty"
        assert score.metadata == named
        assert (f"cut to {MAX_TOKENS}" in score.explanation) == (uncut > MAX_TOKENS)
    assert any(uncut > MAX_TOKENS for _, uncut in expected)
    metrics = log.results.scores[0].metrics
    assert metrics["mean"].value == pytest.approx(sum(values) / 3, rel=1e-4)


def test_pairs_waiting_together_go_in_one_pass(tiny_checkpoint: Path) -> None:
    model = bleurt_module.load(str(tiny_checkpoint), batch_size=8)
    passes: list[int] = []
    predict = model.predict
    running = threading.Event()
    release = threading.Event()

    def counted(references: list[str], candidates: list[str]) -> list[float]:
        passes.append(len(references))
        running.set()
        release.wait(10)  # the first pass runs until the other pairs are queued
        return predict(references, candidates)

    # pairs no other test scores, so none is answered from the model's memory
    first = ("排队的第一对。", "先到先算")
    pairs = [("我们爱排队的公园。", "公园很美"), ("城市需要排队", "绿地"), ("春风排队", "秋雨")]
    results: dict[int, Any] = {}

    def score(i: int) -> None:
        results[i] = model.score(*pairs[i])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model, "predict", counted)
        ahead = threading.Thread(target=model.score, args=first)
        ahead.start()
        assert running.wait(10)
        threads = [threading.Thread(target=score, args=(i,)) for i in range(3)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while model.queued < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert model.queued == 3
        release.set()
        for thread in [ahead, *threads]:
            thread.join(10)
    assert passes == [1, 3]  # the three that waited went in one pass
    expected = direct_scores(tiny_checkpoint, pairs)
    assert [results[i][0] for i in range(3)] == pytest.approx(
        [v for v, _ in expected], rel=1e-4, abs=1e-5
    )
    assert [results[i][1] for i in range(3)] == [n for _, n in expected]
    # a second request for a pair is answered from memory, not by the model
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model, "predict", counted)
        assert model.score(*pairs[0]) == results[0]
    assert passes == [1, 3]


def test_a_sentencepiece_checkpoint_like_bleurt_20(sentencepiece_checkpoint: Path) -> None:
    from bleurt_pytorch.bleurt.tokenization_bleurt_sp import BleurtSPTokenizer

    model = bleurt_module.load(str(sentencepiece_checkpoint))
    assert isinstance(model.tokenizer, BleurtSPTokenizer)
    pairs = [("我们爱公园。城市需要绿地。", "公园很美"), ("春风吹过。", "秋雨落下，春风不再。")]
    found = [model.score(*pair) for pair in pairs]
    expected = direct_scores(sentencepiece_checkpoint, pairs)
    assert [v for v, _ in found] == pytest.approx([v for v, _ in expected], rel=1e-4, abs=1e-5)
    assert [n for _, n in found] == [n for _, n in expected]
    assert found[0][0] != pytest.approx(found[1][0])


def test_the_model_is_loaded_once_per_checkpoint(tiny_checkpoint: Path) -> None:
    assert bleurt_module.load(str(tiny_checkpoint)) is bleurt_module.load(str(tiny_checkpoint))


def test_a_checkpoint_is_required() -> None:
    for missing in (None, " "):
        with pytest.raises(ParameterError, match="^-T bleurt_checkpoint: .*needs a checkpoint"):
            bleurt(checkpoint=missing)


def test_a_checkpoint_that_does_not_load(tmp_path: Path) -> None:
    pytest.importorskip("bleurt_pytorch", reason=EXTRA)
    with pytest.raises(ParameterError, match="^-T bleurt_checkpoint: cannot load a BLEURT"):
        bleurt(checkpoint=str(tmp_path / "nothing-here"))


def test_without_the_extra_the_install_command_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "bleurt_pytorch" else find_spec(name, *args),
    )
    with pytest.raises(UserError, match=r"pip install 'howtobench\[bleurt\]'"):
        bleurt(checkpoint="some/checkpoint")
