"""A judge's base URL that redirects is followed a handful of hops at most, and a loop is
learnt once per run; the hooks on the judge's HTTP client are put on here, with the
bound on a reply's body (`howtobench.judge.reply_size`).

httpx follows 20 redirects a request and the SDK and inspect retry the error a loop ends in
(2,079 requests in 59 s for one writing: docs/large-runs.md). So the client inspect's
OpenAI providers hand their SDK (`bound_client`) follows `REDIRECTS_AT_MOST`, and our hooks
stop (`RedirectStop`) a request that leads back into the run's redirects or past the bound,
and every later request to those URLs. Other providers keep their client private.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakSet

from inspect_ai.model import Model

from howtobench.judge.reply_size import bound_body
from howtobench.judge.runs import this_run

__all__ = ["REDIRECTS_AT_MOST", "RedirectStop", "bound_client"]

REDIRECTS_AT_MOST = 3  # a gateway's http -> https, a trailing slash: real ones are short

_BOUNDED: WeakSet[Any] = WeakSet()  # the clients with our hooks
# every URL some run of this process stopped: a request to another needs no look at its
# run's notes (the request hook runs on every judge call)
_EVER_STOPPED: set[str] = set()


class RedirectStop(Exception):
    """A request stopped on redirects: a loop, or more than `REDIRECTS_AT_MOST` in a row
    (its text says where)."""


def bound_client(model: Model) -> None:
    """Bound `model`'s redirects and hook its HTTP client so that they are learnt, and
    bound its replies' bodies (`bound_body`), once per client. A provider that shows no
    httpx client is left as it is."""
    client = getattr(model.api, "http_client", None)
    hooks = getattr(client, "event_hooks", None)
    if client is None or not isinstance(hooks, dict) or client in _BOUNDED:
        return
    _BOUNDED.add(client)
    client.max_redirects = REDIRECTS_AT_MOST
    hooks.setdefault("request", []).append(_refuse_a_stopped_url)
    hooks.setdefault("response", []).extend([_follow, bound_body])


async def _refuse_a_stopped_url(request: Any) -> None:
    url = str(request.url)
    if url in _EVER_STOPPED and (why := this_run().redirects_stopped.get(url)) is not None:
        raise RedirectStop(why)


async def _follow(response: Any) -> None:
    """Note where a redirect leads; stop, naming the redirects from where they were
    entered, when it leads back into them, or when it is one too many (httpx would
    refuse to follow it: named and learnt here instead)."""
    location = response.headers.get("location")
    if not response.is_redirect or not location:
        return
    notes = this_run()
    here = str(response.request.url)
    notes.redirects[here] = str(response.request.url.join(location))
    chain = [here]  # back to where the redirects were entered, then forward to the end
    came_from = {to: origin for origin, to in notes.redirects.items()}
    while chain[0] in came_from and came_from[chain[0]] not in chain:
        chain.insert(0, came_from[chain[0]])
    while chain[-1] in notes.redirects and notes.redirects[chain[-1]] not in chain:
        chain.append(notes.redirects[chain[-1]])
    if chain[-1] in notes.redirects:  # its redirect leads back into the chain
        loop = chain[chain.index(notes.redirects[chain[-1]]) :]
        why = f"the server redirects in a loop: {' -> '.join([*loop, loop[0]])}"
    elif len(chain) - 1 > REDIRECTS_AT_MOST:
        why = f"the server redirects more than {REDIRECTS_AT_MOST} times: {' -> '.join(chain)}"
    else:
        return
    notes.redirects_stopped.update(dict.fromkeys(chain, why))
    _EVER_STOPPED.update(chain)
    raise RedirectStop(why)
