"""Build a HoWToBench-style benchmark from a corpus of human texts (paper sections 4.3-4.6).

The paper's construction pipeline, step by step: genre classification (`classify`),
the rubric quality filter (`quality`), task construction (`completion` by a seeded
paragraph-removal rule, guide and open by LLM back-construction, `backconstruct`), and
screening for personal information, unsafe content and advertisements (`screen`), whose
personal details are then de-identified (`deidentify`). Each LLM step is an inspect task
of its own (`howtobench/classify`, ...), registered when its module is imported: by
`pipeline`, not by the package's inspect entry point, which every eval imports.
`pipeline.build_benchmark` runs them in order with `eval_set` and writes a data folder
that `-T dataset=DIR` reads.

The modules: `corpus` (the input format), `prompts` (templates, genre names, sections
and placeholders), `steps` (what the LLM steps share), one module per step, `shape`
(what a back-constructed item looks like, measured on the published data),
`completion` (the gap rule), `deidentify` (placeholders for personal details),
`selection` (per-genre cap, task assignment), `items` (benchmark records), `ledger`
(where every text ended up), `runs` (a step as an eval set, and its outcomes),
`manifest` (the build's facts) and `report` (their summary), `options` (what a build is
asked for), `pipeline` (the build) and `commands` (`howtobench build`).
"""

__all__: list[str] = []
