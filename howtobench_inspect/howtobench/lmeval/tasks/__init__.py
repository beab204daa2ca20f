"""lm-eval's task files for HoWToBench (YAML) and the functions they call (`hooks.py`).

lm-eval imports `hooks.py` by its path when it reads a task file, so the module uses
absolute imports only."""

__all__: list[str] = []
