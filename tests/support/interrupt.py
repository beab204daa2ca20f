"""A pytest plugin (listed in conftest's `pytest_plugins`): Ctrl-C stops the suite, even
inside an in-process eval.

Under Python's default handler, `asyncio.run` takes SIGINT as a cancel of what it runs;
inspect then ends the eval as cancelled and returns, and the suite went on with the next
test. asyncio leaves any other handler alone, so ours raises KeyboardInterrupt where the
signal lands, as it does outside an eval, and pytest stops. An ignored SIGINT (a shell's
background job) stays ignored."""

import signal
import threading
from types import FrameType


def pytest_configure() -> None:
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, _interrupt)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
