"""The writing under test: the prompt a writer writes from, what its reply holds, and the
text the judges read (each module says its part)."""

__all__: list[str] = []
