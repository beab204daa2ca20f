"""lm-eval output written as lm-eval 0.4.13 writes it with `--log_samples` (the fields the
import reads, in their places: `results_<date>.json` and `samples_<task>_<date>.jsonl` in
the model's folder), for the import's checks without running lm-eval; the slow test
(tests/test_lm_eval.py) imports what lm-eval itself wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from howtobench.lmeval.tasks.hooks import docs

MODEL_ARGS = {
    "model": "writer",
    "base_url": "http://127.0.0.1:9/v1/chat/completions",
    "api_key": "sk-not-to-be-kept",
}


def lm_eval_run(
    output_path: Path,
    tasks: dict[str, int],
    *,
    date: str = "2026-12-04T10-00-00.000000",
    limit: float | None = 2.0,
    model: str = "writer",
    samples: bool = True,
    model_args: dict[str, Any] | str | None = None,
) -> Path:
    """One run over the demo's items: `tasks` maps a task (`open`) to how many items were
    answered, each with a writing of its own; returns the results file. The model's
    arguments are `MODEL_ARGS` naming `model`, or `model_args` as lm-eval records them
    (a dict, or the string it was given)."""
    folder = output_path / model
    folder.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "results": {},
        "configs": {},
        "n-samples": {},
        "config": {
            "model": "local-chat-completions",
            "model_args": {**MODEL_ARGS, "model": model} if model_args is None else model_args,
            "limit": limit,
            "gen_kwargs": {},
        },
        "lm_eval_version": "0.4.13",
        "model_name": model,
        "model_name_sanitized": model,
        "chat_template": "",
        "chat_template_sha": None,
        "system_instruction": None,
    }
    for task, count in tasks.items():
        name = f"howtobench_{task}"
        rows = list(docs(task, {"dataset": "demo"})["test"])[:count]
        results["configs"][name] = {
            "task": name,
            "generation_kwargs": {"until": [], "max_gen_toks": 16384},
        }
        results["n-samples"][name] = {"original": count, "effective": count}
        if samples:
            lines = [
                {
                    "doc_id": index,
                    "doc": row,
                    "arguments": {
                        "gen_args_0": {
                            "arg_0": json.dumps([{"role": "user", "content": row["prompt"]}]),
                            "arg_1": {"until": [], "max_gen_toks": 16384},
                        }
                    },
                    "resps": [[writing(row)]],
                    "filtered_resps": [writing(row)],
                }
                for index, row in enumerate(rows)
            ]
            (folder / f"samples_{name}_{date}.jsonl").write_text(
                "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), "utf-8"
            )
    path = folder / f"results_{date}.json"
    path.write_text(json.dumps(results, ensure_ascii=False), "utf-8")
    return path


def writing(row: dict[str, Any]) -> str:
    """The writing the fake run gives an item: its reference's first line, then a note."""
    return f"{row['reference'].splitlines()[0]}\n\n（{row['infer_id']} 的写作）"
