"""Build a HoWToBench-style benchmark from a corpus of human texts (paper sections 4.3-4.6).

One module per step of the paper's construction pipeline (`classify`, `quality`,
`completion`, `backconstruct`, `screen`, `deidentify`), and what they share (`steps`,
`prompts`, `runs`, `ledger`). Each LLM step is an inspect task of its own
(`howtobench/classify`, ...), registered when its module is imported: by `pipeline`, not
by the package's inspect entry point, which every eval imports. `pipeline.build_benchmark`
runs them in order with `eval_set` and writes a data folder that `-T dataset=DIR` reads.
"""

__all__: list[str] = []
