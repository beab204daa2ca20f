"""What the tests share: scripted judges, data files, the studies' logs, one way to run an eval.

Test modules import these by name (`from support.judges import ScriptedJudge`); fixtures
live in `tests/conftest.py`. Nothing here is collected as a test.
"""

import pytest

# asserts in the helpers (e.g. run_eval's status check) report like the tests' own
pytest.register_assert_rewrite("support.data", "support.evals", "support.judges", "support.logs")
