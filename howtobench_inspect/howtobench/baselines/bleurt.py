"""BLEURT between the writing and the human reference: Table 3's "BLEU-rt" row.

The model is lucadiliello's PyTorch port (`bleurt-pytorch`, the `bleurt` extra), with a
checkpoint the user names (the paper names none); no model code is written here, and
torch and transformers are imported only when a scorer is built. How pairs are batched
and cut is in docs/scorers.md ("BLEURT").
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread
from inspect_ai.scorer import Scorer, Value, grouped, mean, scorer, stderr
from inspect_ai.solver import TaskState

from howtobench.baselines.overlap import reference_scorer
from howtobench.commandline.extras import install_command
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.parameter_values import ParameterError, positive_integer, refuses_unknown
from howtobench.vocabulary.rounding import rounded

__all__ = ["BleurtModel", "INSTALL", "PARAMETER", "bleurt", "load"]

PARAMETER = "bleurt_checkpoint"
INSTALL = install_command("bleurt")


_MEMO_SIZE = 4096  # scores kept per checkpoint: epochs of a replay score the same pairs


@dataclass
class _Request:
    """One (reference, writing) pair waiting for its score."""

    reference: str
    candidate: str
    value: float | None = None
    tokens: int = 0  # length of the pair uncut
    error: BaseException | None = None


@dataclass
class BleurtModel:
    """A loaded checkpoint: scores pairs, batching those that wait for the same pass."""

    checkpoint: str
    model: Any  # bleurt_pytorch.BleurtForSequenceClassification, in eval mode
    tokenizer: Any
    max_tokens: int
    batch_size: int = 8
    _pending: list[_Request] = field(default_factory=list)
    _queue: threading.Lock = field(default_factory=threading.Lock)
    _forward: threading.Lock = field(default_factory=threading.Lock)
    _memo: dict[tuple[str, str], tuple[float, int]] = field(default_factory=dict)

    @property
    def queued(self) -> int:
        """How many pairs wait for a forward pass (all of them go in the next pass, up to
        `batch_size`)."""
        with self._queue:
            return len(self._pending)

    def predict(self, references: list[str], candidates: list[str]) -> list[float]:
        """One forward pass over the pairs (the port's own recipe: reference first)."""
        import torch

        inputs = self.tokenizer(
            references,
            candidates,
            padding="longest",
            truncation=True,
            max_length=self.max_tokens,
            return_tensors="pt",
        ).to(self.model.device)
        with torch.inference_mode():
            return [float(v) for v in self.model(**inputs).logits.flatten().tolist()]

    def _tokens(self, reference: str, candidate: str) -> int:
        """Length of the pair uncut ([CLS] reference [SEP] writing [SEP])."""
        encoded = self.tokenizer(reference, candidate, truncation=False, verbose=False)
        return len(encoded["input_ids"])

    def score(self, reference: str, candidate: str) -> tuple[float, int]:
        """The BLEURT score of one pair and its length in tokens uncut; blocking, so call
        it from a worker thread.

        Group commit: whoever holds the forward lock scores the oldest waiting pairs, its own
        among them, so the callers queued meanwhile find their score ready. The tokenizer runs
        under that lock too: its padding and truncation settings are state.
        """
        key = (reference, candidate)
        if key in self._memo:
            return self._memo[key]
        request = _Request(reference, candidate)
        with self._queue:
            self._pending.append(request)
        with self._forward:
            while request.value is None and request.error is None:
                with self._queue:
                    batch = self._pending[: self.batch_size]
                    del self._pending[: self.batch_size]
                try:
                    values = self.predict(
                        [r.reference for r in batch], [r.candidate for r in batch]
                    )
                    lengths = [self._tokens(r.reference, r.candidate) for r in batch]
                except Exception as err:  # each caller in the batch raises it
                    for waiting in batch:
                        waiting.error = err
                    continue
                for waiting, value, tokens in zip(batch, values, lengths, strict=True):
                    waiting.value, waiting.tokens = value, tokens
                    if len(self._memo) < _MEMO_SIZE:
                        self._memo[(waiting.reference, waiting.candidate)] = (value, tokens)
        if request.error is not None:
            raise request.error
        assert request.value is not None
        return request.value, request.tokens


_LOADED: dict[str, BleurtModel] = {}
_LOADING = threading.Lock()


def load(checkpoint: str, batch_size: int = 8) -> BleurtModel:
    """The checkpoint's model, loaded once per process (a large one takes seconds and GBs).

    Raises a `ParameterError` naming `-T bleurt_checkpoint` when it cannot be loaded, and
    a `UserError` with the install command when the extra is missing. Scorers sharing a
    checkpoint share its model, and the batch size set last.
    """
    if importlib.util.find_spec("bleurt_pytorch") is None:
        raise UserError(f"the bleurt scorer needs the 'bleurt' extra: {INSTALL}")
    local = Path(checkpoint).expanduser()
    if local.exists():  # one folder named two ways is loaded once
        checkpoint = str(local.resolve())
    with _LOADING:
        if checkpoint not in _LOADED:
            _LOADED[checkpoint] = _load(checkpoint)
        loaded = _LOADED[checkpoint]
    loaded.batch_size = batch_size
    return loaded


def _load(checkpoint: str) -> BleurtModel:
    import torch
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    try:
        model = BleurtForSequenceClassification.from_pretrained(checkpoint)
        tokenizer = BleurtTokenizer.from_pretrained(checkpoint)
    except (OSError, ValueError, TypeError) as err:  # what from_pretrained raises
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise ParameterError(
            PARAMETER,
            f"cannot load a BLEURT checkpoint from {checkpoint!r} ({first}); give a folder "
            "saved by bleurt-pytorch or a hub id such as lucadiliello/BLEURT-20-D12",
        ) from err
    model.to("cuda" if torch.cuda.is_available() else "cpu").eval()
    # the tokenizer's own limit (bleurt-base-128 takes 128), within the position table
    max_tokens = min(tokenizer.model_max_length, model.config.max_position_embeddings)
    return BleurtModel(checkpoint, model, tokenizer, max_tokens)


@scorer(metrics=[mean(), stderr(), grouped(mean(), "genre")])
@refuses_unknown("bleurt")
def bleurt(checkpoint: str | None = None, batch_size: int = 8) -> Scorer:
    """BLEURT of the writing against the human reference (paper section 5.1, Table 3), by
    the `checkpoint` (a bleurt-pytorch folder or hub id) in passes of up to `batch_size`
    pairs."""
    if checkpoint is None or not str(checkpoint).strip():
        raise ParameterError(
            PARAMETER,
            "the bleurt scorer needs a checkpoint: a local folder or a hub id, e.g. "
            f"-T {PARAMETER}=lucadiliello/BLEURT-20-D12 (needs {INSTALL})",
        )
    model = load(str(checkpoint).strip(), positive_integer(batch_size, "bleurt_batch_size"))

    async def comparison(state: TaskState, reference: str) -> tuple[Value, str, dict[str, Any]]:
        value, tokens = await anyio.to_thread.run_sync(
            model.score, reference, state.output.completion
        )
        cut = f", cut to {model.max_tokens}" if tokens > model.max_tokens else ""
        explanation = f"BLEURT ({model.checkpoint}) on {tokens} tokens{cut}"
        return rounded(value), explanation, {"tokens": tokens, "max_tokens": model.max_tokens}

    return reference_scorer(comparison)
