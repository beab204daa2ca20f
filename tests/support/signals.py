"""Child processes that a test stops with Ctrl-C (SIGINT).

A shell starts its background jobs with SIGINT ignored, and a child inherits that, so a
suite run as `cmd &` would see Ctrl-C do nothing. The tests that send SIGINT start their
process with the signal's default action, as a terminal would."""

import signal


def default_sigint() -> None:
    """`preexec_fn` of a child process: SIGINT acts as at a terminal (KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
