"""Data rows and files for tests: the paper repository's layout, user JSONL files, the
writers' file the studies' logs replay, and where the published benchmark lies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from howtobench.dataset.jsonl import DEMO_FILE
from howtobench.judge.inputs import JudgeInput

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "howtobench-data"
MARKER = "[fill in the blank]"


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def anchored_input(
    *,
    genre: str,
    language: str,
    instruction: str,
    reference: str,
    writing: str,
    task: str = "open",
    genre_raw: str = "",
    grounding: str = "",
) -> JudgeInput:
    """What a judge reads of a sample of our tasks, the human reference as its anchor."""
    return JudgeInput(
        task=task,
        genre=genre,
        genre_raw=genre_raw,
        language=language,
        instruction=instruction,
        grounding=grounding,
        reference=reference,
        writing=writing,
        anchor=reference,
        anchor_source="human",
    )


def aligned_row(infer_id: str, task: str = "guide", **overrides: Any) -> dict[str, Any]:
    """A record of the paper repository's `<task>/aligned.jsonl`."""
    row = {
        "infer_id": infer_id,
        "bench_id": f"bench_{infer_id}",
        "task_type": task,
        "sub_task": "议论文",
        "basic_instruction": "请写一篇关于城市公园的议论文。",
        "information": f"公园是城市的肺。{MARKER}我们应当珍惜它。"
        if task == "completion"
        else "- 公园的作用\n- 如何保护",
        "reference": "公园让城市更宜居。我们要爱护公园。",
    }
    row.update(overrides)
    return row


# Three guide instructions, each written by `m` (WRITINGS) and `n` (OTHER).
INSTRUCTIONS = {
    "a": "请写一篇关于社区花园的文章。",
    "b": "请写一篇关于旧书店的文章。",
    "c": "请写一篇关于夜市的文章。",
}
WRITINGS = {
    "a": "社区花园的故事。\n\n邻居们一起种花，也一起收获。",
    "b": "旧书店的午后。\n\n阳光落在书脊上，老板在打盹。",
    "c": "夜市的灯亮了。\n\n烤串的香味飘满整条街。",
}
OTHER = {k: f"另一位作者写的{v}" for k, v in WRITINGS.items()}


def write_guide_data(path: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    """A user JSONL file of `rows`, by default the three guide instructions above. JSON
    escapes keep every character, lone surrogates too."""
    rows = rows or [
        {
            "id": key,
            "task": "guide",
            "genre": "prose",
            "instruction": INSTRUCTIONS[key],
            "grounding": "- 缘起\n- 经过\n- 感想",
            "reference": "一篇专业作者写的范文。",
            "generations": {"m": WRITINGS[key], "n": OTHER[key]},
        }
        for key in INSTRUCTIONS
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def demo_records() -> list[dict[str, Any]]:
    """The demo's records, as stored."""
    with DEMO_FILE.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def demo_record(sample_id: str) -> dict[str, Any]:
    return next(r for r in demo_records() if r["id"] == sample_id)


def writings(record: dict[str, Any]) -> dict[str, str]:
    """Four writers of different length and quality from the demo's two."""
    a, b = record["generations"]["demo-writer-a"], record["generations"]["demo-writer-b"]
    return {
        "w-a": a,
        "w-b": b,
        "w-c": a[: max(20, len(a) * 2 // 3)],
        "w-d": b + "\n\n" + a[: len(a) // 4],
    }


def writers_file(folder: Path) -> Path:
    """The demo records with the four writers' writings as their generations."""
    return write_jsonl(
        folder / "writers.jsonl",
        [{**record, "generations": writings(record)} for record in demo_records()],
    )


def perturbed_file(folder: Path) -> Path:
    """The demo's open records written three ways: `clean`, `drop` (paragraphs dropped)
    and `inject` (the reference itself, which raises the overlap scores)."""
    rows = []
    for record in demo_records():
        if record.get("task") != "open":
            continue
        clean = record["generations"]["demo-writer-a"]
        paragraphs = clean.split("\n\n")
        record["generations"] = {
            "clean": clean,
            "drop": "\n\n".join(paragraphs[: max(1, len(paragraphs) // 2)]),
            "inject": record["reference"],
        }
        rows.append(record)
    return write_jsonl(folder / "perturbed.jsonl", rows)
