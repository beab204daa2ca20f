"""Scale-out around `inspect eval-set`: worker files of equal work (`shards`), a worker
that owns its bookkeeping and resumes after a kill (`workers`), a worker's limits from
inspect's variables (`limits`) and the exit status of a run that did not finish
(`logcheck`, `howtobench check-logs`)."""

__all__: list[str] = []
