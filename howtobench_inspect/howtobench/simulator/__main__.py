"""`python -m howtobench.simulator`: serve the judge simulator (see `server.py`)."""

from howtobench.simulator.server import main

main()
