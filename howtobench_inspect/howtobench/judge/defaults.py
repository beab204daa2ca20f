"""The judge's defaults, in one place, each with the reason for its value.

Every module that asks a judge, waits for one or checks its answers reads its numbers
from here, so a default is changed once and its reason stays beside it. The settings a
user changes per run (`--max-retries`, a role's `attempt_timeout`, `-T tries`,
`HOWTOBENCH_BATCH_WAIT`) override these; the rest are rules of the method or of the
machinery.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_BATCH_WAIT",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_TIME_LIMIT",
    "ECHOED_REPLY",
    "JUDGE_ATTEMPT_TIMEOUT",
    "JUDGE_MAX_RETRIES",
    "JUDGE_MAX_TOKENS",
    "LOCK_POLL_SECONDS",
    "LOCK_WAIT_SECONDS",
    "LONGEST_REPLY",
    "LONGEST_WRITING",
    "READ_SHARE",
    "REASK_TEMPERATURE",
    "SAMPLED_TEMPERATURE",
    "SUM_TOLERANCE",
    "TRIES",
]

# Retries of one judge request after a transient fault, on our tasks (`--max-retries`
# overrides it). inspect's backoff waits about 3, 6, 12 and 24 s (plus up to 3 s jitter
# each), so four retries give up on a refused connection in under a minute instead of
# retrying forever, as inspect does when nothing is set.
JUDGE_MAX_RETRIES = 4

# Seconds after which a hung judge request is abandoned and retried (a role's own
# `attempt_timeout` overrides it): long enough for a reasoning model's considered answer.
JUDGE_ATTEMPT_TIMEOUT = 180

# Tokens a judge may answer with unless its role sets its own: the paper code's 4,096, far
# above a JSON answer (docs/judges.md, "Judge replies, bounded").
JUDGE_MAX_TOKENS = 4096

# Characters of a judge reply the client keeps (`howtobench.judge.reply_size`): 4,096
# tokens are at most about 16,000 characters, so only a server that ignores `max_tokens`
# (or a role's own above about 50,000) sends more.
LONGEST_REPLY = 200_000

# Characters of an unusable reply sent back in its re-ask: its last part, where the answer is.
ECHOED_REPLY = 4_000

# Seconds a batched judge call waits for its batch (`HOWTOBENCH_BATCH_WAIT` overrides
# it). Providers promise batches within 24 hours (OpenAI's completion window; Anthropic
# expires a batch after 24 hours), so the run waits as long as they may take.
DEFAULT_BATCH_WAIT = 24 * 3600.0

# How often a judge question is asked before its sample is left unscored with the
# reason (`-S tries`): the first ask and two re-asks that say what was wrong with the
# reply. A judge that fails a question three times running is not fixed by a fourth.
TRIES = 3

# A re-ask after an unusable reply is sampled at least this warm: a judge at temperature
# 0 repeats an invalid reply word for word when only a short correction is appended.
REASK_TEMPERATURE = 0.7

# The judge's temperature when several judge samples are averaged (`judge_samples` > 1)
# and neither the scorer nor the role sets one: samples at temperature 0 would all be
# the same answer, so their mean would measure nothing the first did not.
SAMPLED_TEMPERATURE = 0.7

# Characters of the longest writing sent to a judge: seven times the longest of the
# 13,020 published writings (7,128 characters). A longer one is refused with a record
# rather than sent to a paid judge.
LONGEST_WRITING = 50_000

# Seconds a question waits for another process asking the same one (the reply store's
# file lock). Past this the question is unscored with the reason, and a rerun asks again.
LOCK_WAIT_SECONDS = 900.0

# Seconds between looks at a lock another process holds: polled rather than blocked on,
# so no thread blocks and the event loop keeps serving the other questions.
LOCK_POLL_SECONDS = 0.2

# How far a group of negotiated weights may sum away from 1 and still be used,
# renormalised: the paper's weights "sum up to 1" (section 3.3), and judges round them
# to two decimals (0.33 + 0.33 + 0.33), which no judge should be failed for.
SUM_TOLERANCE = 0.01

# `howtobench judge-check --max-connections`: one connection, as many as a local server
# with one slot serves at once, so a call's measured time is the server's answer and not
# its queue (`howtobench.judge_check.check` says more).
DEFAULT_MAX_CONNECTIONS = 1

# `howtobench judge-check --time-limit`, seconds for the whole check, probes and eval:
# inspect bounds samples, not runs, so the check bounds its own run.
DEFAULT_TIME_LIMIT = 900.0

# The share of a prompt's (low) token estimate below which a server's usage says it did
# not read the prompt whole (`howtobench.judge.unread`): a truncating server (Ollama's
# num_ctx) reads a fraction of a long judge prompt, an honest count is never below half
# of an estimate made to be low.
READ_SHARE = 0.5
