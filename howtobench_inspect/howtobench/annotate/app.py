"""The studio's web app (Starlette): the two pages, their JSON API and its answers
(docs/studio.md, "The JSON API" and "Safety"). Any body the studio cannot use is answered
422 with the reason, never 500, and a rater's answers carry no model name or sample id.
"""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable
from html import escape
from pathlib import Path
from string import Template
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from howtobench.annotate.export import write_rows
from howtobench.annotate.http_guard import Guard, bearer, read_body, same_secret
from howtobench.annotate.protocol import (
    NOTE_LIMIT,
    PASSING,
    REFERENCE_SCORE,
    InvalidInput,
    Pick,
    Rating,
    check_pick,
    check_rating,
    error_types,
)
from howtobench.annotate.store import Settings, Store
from howtobench.annotate.summary import summary
from howtobench.annotate.wording import page_language, page_text, words

__all__ = ["PAGES", "STATIC", "create_app"]

HERE = Path(__file__).parent
STATIC = HERE / "static"
PAGES = HERE / "pages"  # templates of the two pages, not served as files
GUIDELINES = HERE / "guidelines"
# the answer (409) to a verdict of the other kind: where this campaign's verdicts go
ELSEWHERE = {
    "rate": "this campaign asks for ratings: PUT /api/ratings/<writing id>",
    "pick": "this campaign asks for picks: PUT /api/picks/<instruction id>",
}
TARGET = {"rate": "writing", "pick": "instruction"}  # what a verdict's id names
Verdict = TypeVar("Verdict", Rating, Pick)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _no_link() -> PlainTextResponse:
    return PlainTextResponse("This link is not valid.", status_code=404)


def _missing(what: str) -> JSONResponse:
    """Someone else's id, or none at all: the same answer, so ids cannot be probed."""
    return _error(404, f"no {what} of yours has this id")


def _guideline(kind: str, task: str, shown: str) -> str:
    """The guideline of a task (or of picking) in the language the page speaks, wrapped
    so that the page shows the one it needs (a user's own tasks get the whole writings')."""
    name = (
        "pick" if kind == "pick" else "rate_completion" if task == "completion" else "rate_writing"
    )
    text = (GUIDELINES / f"{name}.{shown}.html").read_text(encoding="utf-8")
    return (
        f'<section class="guideline" data-task="{escape(task)}" data-language="{shown}" hidden>'
        f"{text}</section>"
    )


def _page(name: str, language: str, languages: list[str], **parts: str) -> str:
    """`pages/<name>.html` in the shell both pages share, in the campaign's language, with
    the tables of `languages` for its script. Made once, when the studio starts."""
    table = words(name, language)
    body = _template(name).substitute(noscript=escape(table["noscript"]), **parts)
    return _template("page").substitute(
        name=name,
        lang=page_language(language),
        title=escape(table["title"]),
        text=page_text(name, languages),
        body=body,
    )


def _template(name: str) -> Template:
    return Template((PAGES / f"{name}.html").read_text(encoding="utf-8"))


class Studio:
    """The app's state: the open campaign, its settings and its two pages (the rater's
    with the words of every language its instructions are in)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.settings: Settings = store.settings()
        language = self.settings.language
        # two data languages may share a page language (every one without a table
        # speaks English): one guideline each
        kinds = sorted({(t, page_language(lang)) for t, lang in store.instruction_kinds()})
        guidelines = "\n".join(_guideline(self.settings.kind, t, lang) for t, lang in kinds)
        languages = [language, *(lang for _, lang in kinds)]
        self.rater_page = _page("rater", language, languages, guidelines=guidelines)
        self.admin_page = _page("admin", language, [language])

    def rater(self, token: str) -> tuple[str, int] | None:
        """The rater (name, row id) whose token this is. Compared with every rater's token
        in constant time, so the answer's timing says nothing about a near miss."""
        found = None
        for name, (rater_id, secret) in self.settings.raters.items():
            if same_secret(token, secret):
                found = (name, rater_id)
        return found

    def admin(self, token: str) -> bool:
        return same_secret(token, self.settings.admin_token)

    async def rater_page_for(self, request: Request) -> Response:
        if self.rater(request.path_params["token"]) is None:
            return _no_link()
        return HTMLResponse(self.rater_page)

    async def admin_page_for(self, request: Request) -> Response:
        if not self.admin(request.path_params["token"]):
            return _no_link()
        return HTMLResponse(self.admin_page)

    async def download(self, request: Request) -> Response:
        if not self.admin(request.path_params["token"]):
            return _no_link()
        suffix = request.path_params["suffix"]
        if suffix not in ("csv", "jsonl"):
            return PlainTextResponse("Export as .csv or .jsonl.", status_code=404)
        rating = self.settings.kind == "rate"
        rows = await run_in_threadpool(self.store.ratings if rating else self.store.picks)
        text = io.StringIO(newline="")
        write_rows(rows, rating, text, jsonl=suffix == "jsonl")
        name = f"{'ratings' if rating else 'picks'}.{suffix}"
        return Response(
            text.getvalue(),
            media_type="text/csv" if suffix == "csv" else "application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    def _who(self, request: Request) -> tuple[str, int]:
        found = self.rater(bearer(request))
        if found is None:
            raise HTTPException(401, "give your link's token as Authorization: Bearer <token>")
        return found

    async def assignments(self, request: Request) -> Response:
        name, rater_id = self._who(request)
        items = await run_in_threadpool(self.store.assignments, rater_id)
        return JSONResponse(
            {
                "rater": name,
                "kind": self.settings.kind,
                "language": self.settings.language,
                "reference_score": REFERENCE_SCORE,
                "passing": PASSING,
                "note_limit": NOTE_LIMIT,
                "error_types": error_types(self.settings.language),
                "instructions": items,
            }
        )

    async def texts(self, request: Request) -> Response:
        _, rater_id = self._who(request)
        key = request.path_params["key"]
        found = await run_in_threadpool(self.store.instruction, rater_id, key, self.settings)
        if found is None:
            return _missing("instruction")
        return JSONResponse(found)

    async def _save(
        self,
        request: Request,
        kind: str,
        check: Callable[[object], Verdict],
        save: Callable[[int, str, Verdict], str | None],
    ) -> Response:
        """Check a verdict (a rating or a pick), store it for the rater, say when."""
        _, rater_id = self._who(request)
        if self.settings.kind != kind:
            return _error(409, ELSEWHERE[self.settings.kind])
        verdict = check(await read_body(request))
        try:
            saved = await run_in_threadpool(save, rater_id, request.path_params["key"], verdict)
        except ValueError as err:  # a pick of a candidate the instruction does not have
            return _error(422, str(err))
        if saved is None:
            return _missing(TARGET[kind])
        return JSONResponse({"saved": saved})

    async def rate(self, request: Request) -> Response:
        return await self._save(request, "rate", check_rating, self.store.save_rating)

    async def pick(self, request: Request) -> Response:
        return await self._save(request, "pick", check_pick, self.store.save_pick)

    async def admin_summary(self, request: Request) -> Response:
        if not self.admin(bearer(request)):
            raise HTTPException(401, "give the admin token as Authorization: Bearer <token>")
        return JSONResponse(await run_in_threadpool(summary, self.store, self.settings))


async def _refused(request: Request, exc: Exception) -> Response:
    return _error(422, str(exc))  # an `InvalidInput`


async def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=headers)
    return PlainTextResponse(exc.detail, status_code=exc.status_code, headers=headers)


async def _crash(request: Request, exc: Exception) -> Response:
    # the traceback goes to the server's log (uvicorn logs the exception raised on)
    return _error(500, "the server failed on this request; its log says why")


def create_app(store: Store) -> ASGIApp:
    """The ASGI app for an open campaign."""
    studio = Studio(store)
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        InvalidInput: _refused,
        HTTPException: _http,
        Exception: _crash,
    }
    routes = [
        Route("/r/{token}", studio.rater_page_for),
        Route("/admin/{token}", studio.admin_page_for),
        Route("/admin/{token}/export.{suffix}", studio.download),
        Route("/api/assignments", studio.assignments),
        Route("/api/assignments/{key}", studio.texts),
        Route("/api/ratings/{key}", studio.rate, methods=["PUT"]),
        Route("/api/picks/{key}", studio.pick, methods=["PUT"]),
        Route("/api/admin/summary", studio.admin_summary),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    return Guard(Starlette(routes=routes, exception_handlers=handlers))
