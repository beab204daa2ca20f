"""The writing under test: the prompt a writer writes from and the text the judges read
(`writer`), what a reply holds (`state`: complete, cut, filtered, empty, refused, a
leading trace removed; a stored writing's cut read from its text, `endings`), the
artifacts of the paper's prompts (`artifacts`), the run's counts of the states
(`summary`), the damages done before judging (`damages`; the solver, `perturb`) and
stored writings replayed as a model (`replay`)."""

__all__: list[str] = []
