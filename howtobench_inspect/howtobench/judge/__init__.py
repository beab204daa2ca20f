"""What every LLM judge shares: the materials it reads and the way its JSON replies are asked for."""

# The subpackage's modules; none is imported here, so importing the package costs nothing.
__all__ = [
    "batching",
    "calls",
    "defaults",
    "failures",
    "guards",
    "inputs",
    "lost_batches",
    "models",
    "outages",
    "prices",
    "question_locks",
    "reading",
    "redirects",
    "replies",
    "reply_size",
    "request_shape",
    "runs",
    "sampling",
    "server_words",
    "settings",
    "store",
    "unread",
]
