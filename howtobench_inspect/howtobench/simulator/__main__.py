"""`python -m howtobench.simulator`: serve the judge simulator (see `command.py`)."""

from howtobench.simulator.command import main

__all__: list[str] = []

main()
