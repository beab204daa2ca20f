"""The studio's HTTP API, with Starlette's test client and, for durability, a real server
process killed with SIGKILL: auth, isolation, validation, errors, export into metaeval."""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import uvicorn
from annotate_support import (
    WRITERS,
    call,
    demo_logs_fixture,  # noqa: F401 (a fixture)
    new_campaign,
    server_process,
    texts,
    tokens,
)
from starlette.testclient import TestClient

from howtobench.annotate.app import create_app
from howtobench.annotate.http_guard import parse_body
from howtobench.annotate.protocol import NOTE_LIMIT, InvalidInput
from howtobench.annotate.store import Store
from howtobench.cli import main
from howtobench.studies import metaeval
from support.kappa import kappa_by_hand

Studio = tuple[TestClient, Store, dict[str, str]]


@pytest.fixture
def studio(demo_logs: Path, tmp_path: Path) -> Iterator[Studio]:
    store = new_campaign(tmp_path / "c.db", [demo_logs], raters=["ana", "ben", "chen"])
    with TestClient(create_app(store)) as client:
        yield client, store, tokens(store)
    store.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assignments(client: TestClient, token: str) -> list[dict[str, Any]]:
    """The rater's instructions with each one's texts merged in, as the page shows them."""
    response = client.get("/api/assignments", headers=bearer(token))
    assert response.status_code == 200
    found = list(response.json()["instructions"])
    for item in found:
        texts = client.get(f"/api/assignments/{item['id']}", headers=bearer(token))
        assert texts.status_code == 200
        content = texts.json()
        item.update({key: content[key] for key in ("instruction", "grounding", "reference")})
        by_id = {w["id"]: w["text"] for w in content["writings"]}
        for writing in item["writings"]:
            writing["text"] = by_id[writing["id"]]
    return found


def writing_ids(client: TestClient, token: str) -> list[str]:
    return [w["id"] for item in assignments(client, token) for w in item["writings"]]


@pytest.mark.slow
def test_every_request_needs_its_own_token(studio: Studio) -> None:
    client, _, token = studio
    assert client.get("/api/assignments").status_code == 401
    assert client.get("/api/assignments", headers=bearer("nope")).status_code == 401
    assert client.get("/api/assignments", headers=bearer(token["admin"])).status_code == 401
    refused = client.get("/api/admin/summary", headers=bearer(token["ana"]))
    assert refused.status_code == 401 and "admin token" in refused.json()["error"]
    assert client.get("/api/admin/summary", headers=bearer(token["admin"])).status_code == 200
    assert client.get(f"/r/{token['ana']}x").status_code == 404
    assert client.get(f"/admin/{token['ana']}").status_code == 404
    assert client.get(f"/admin/{token['admin']}/export.csv").status_code == 200
    assert client.get(f"/admin/{token['ana']}/export.csv").status_code == 404
    page = client.get(f"/r/{token['ana']}")
    assert page.status_code == 200 and 'class="guideline"' in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"


def test_a_rater_gets_no_model_sample_or_other_rater(studio: Studio) -> None:
    client, _, token = studio
    ben = writing_ids(client, token["ben"])
    for key in ben:  # ben rates everything he has, so whatever others share with him
        answer = client.put(f"/api/ratings/{key}", json={"score": 4}, headers=bearer(token["ben"]))
        assert answer.status_code == 200
    for name in ("ana", "chen"):
        answer = client.get("/api/assignments", headers=bearer(token[name])).text
        instructions = json.loads(answer)["instructions"]
        for item in instructions:
            texts = client.get(f"/api/assignments/{item['id']}", headers=bearer(token[name]))
            answer += texts.text
        hidden = (*WRITERS, "demo_open", "demo_completion", token["admin"], token["ben"])
        for secret in (*hidden, '"ben"'):
            assert secret not in answer
        assert all(w["rating"] is None for item in instructions for w in item["writings"])
        ids = [w["id"] for item in instructions for w in item["writings"]]
        assert not set(ids) & set(ben) and len(ids) == len(set(ids))


def test_another_raters_writing_is_not_found(studio: Studio) -> None:
    client, store, token = studio
    instruction = assignments(client, token["ben"])[0]["id"]
    hidden = client.get(f"/api/assignments/{instruction}", headers=bearer(token["ana"]))
    assert hidden.status_code == 404 and hidden.json() == {
        "error": "no instruction of yours has this id"
    }
    theirs = writing_ids(client, token["ben"])[0]
    refused = client.put(f"/api/ratings/{theirs}", json={"score": 4}, headers=bearer(token["ana"]))
    assert refused.status_code == 404 and refused.json() == {
        "error": "no writing of yours has this id"
    }
    unknown = client.put("/api/ratings/made-up", json={"score": 4}, headers=bearer(token["ana"]))
    assert unknown.status_code == 404
    assert store.ratings() == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"score": 0}, "'score' must be a whole number from 1 to 5, not 0"),
        ({"score": 6}, "not 6"),
        ({"score": 3.5}, "not 3.5"),
        ({"score": "4"}, "not '4'"),
        ({"score": True}, "not True"),
        ({}, "'score' is required"),
        ({"score": 4, "mood": "ok"}, "unknown field(s) mood"),
        ({"score": 2}, "a score below 3 needs at least one error type"),
        ({"score": 4, "errors": ["factual_error"]}, "error types go with scores below 3 only"),
        ({"score": 2, "errors": ["typo"]}, "unknown error type(s) typo"),
        ({"score": 2, "errors": "factual_error"}, "'errors' must be a list"),
        ({"score": 2, "errors": ["factual_error", "factual_error"]}, "names an error type twice"),
        ({"score": 2, "errors": ["unsafe"]}, "an unsafe writing scores 1"),
        ({"score": 4, "note": 5}, "'note' must be a string"),
        ({"score": 4, "note": "x" * (NOTE_LIMIT + 1)}, f"the limit is {NOTE_LIMIT}"),
        ([4], "the body must be a JSON object"),
    ],
)
@pytest.mark.slow
def test_bad_ratings_get_422_with_the_reason(studio: Studio, body: object, message: str) -> None:
    client, store, token = studio
    key = writing_ids(client, token["ana"])[0]
    response = client.put(f"/api/ratings/{key}", json=body, headers=bearer(token["ana"]))
    assert response.status_code == 422
    assert message in response.json()["error"]
    assert store.ratings() == []


def test_bodies_that_are_no_json_or_too_long(studio: Studio) -> None:
    client, _, token = studio
    key = writing_ids(client, token["ana"])[0]
    headers = bearer(token["ana"])
    bad = client.put(f"/api/ratings/{key}", content=b"{score: 4", headers=headers)
    assert bad.status_code == 422
    assert bad.json()["error"].startswith("the body is not JSON: Expecting property name")
    huge = client.put(f"/api/ratings/{key}", content=b" " * 70_000 + b"{}", headers=headers)
    assert huge.status_code == 422 and "longer than" in huge.json()["error"]

    def chunked() -> Iterator[bytes]:  # no Content-Length: refused once past the limit
        yield from (b" " * 1024 for _ in range(100))

    streamed = client.put(f"/api/ratings/{key}", content=chunked(), headers=headers)
    assert streamed.status_code == 422 and "longer than" in streamed.json()["error"]


# within the 64 KB limit; json.loads raises RecursionError at about a thousand levels,
# which the studio once answered 500
DEEP = 30_000


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[" * DEEP + b"]" * DEEP, "nested too deeply"),
        (b'{"score": 4, "note": ' + b"[" * DEEP + b"]" * DEEP + b"}", "nested too deeply"),
        (b"{" + b'"a":{' * 5_000 + b"}" * 5_001, "nested too deeply"),
        ('{"score": 4, "note": "好"}'.encode("gbk"), "not UTF-8 (byte 0xba at offset 22)"),
        ('{"score": 4}'.encode("utf-16"), "not UTF-8"),  # json.loads would guess UTF-16
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"", "the body is not JSON"),
        (b"score=4", "the body is not JSON"),
        (b'{"score": NaN}', "NaN is no JSON value"),
        (b'{"score": -Infinity}', "-Infinity is no JSON value"),
        (b'{"score": ' + b"4" * 5_000 + b"}", "a number of over 4300 digits"),
        (b'{"score": 4, "note": "\\ud800"}', "lone surrogate"),
        (b'{"\\udc00": 4}', "lone surrogate"),
        (b'"a rating"', "must be a JSON object"),
        (b"null", "must be a JSON object"),
        (b'{"score": [4]}', "'score' must be a whole number"),
        (b'{"score": {"value": 4}}', "'score' must be a whole number"),
        (b'{"score": 2, "errors": [["unsafe"]]}', "'errors' must be a list"),
        (b'{"score": 2, "errors": {"unsafe": true}}', "'errors' must be a list"),
        (b'{"score": 4, "note": ["x"]}', "'note' must be a string"),
        (b'{"score": 4, "note": null}', "'note' must be a string"),
    ],
    ids=lambda v: v[:24].decode("latin-1") if isinstance(v, bytes) else None,
)
@pytest.mark.slow
def test_any_body_the_studio_cannot_use_is_422_with_a_message(
    studio: Studio, content: bytes, message: str
) -> None:
    client, store, token = studio
    key = writing_ids(client, token["ana"])[0]
    answer = client.put(f"/api/ratings/{key}", content=content, headers=bearer(token["ana"]))
    assert answer.status_code == 422, answer.text
    assert message in answer.json()["error"]
    assert len(answer.json()["error"]) < 300  # a message, not an echo of the body
    assert store.ratings() == []


def test_nesting_too_deep_for_the_parser_is_refused_at_any_depth() -> None:
    for depth in (2_000, 100_000, 1_000_000):
        with pytest.raises(InvalidInput, match="nested too deeply"):
            parse_body(b"[" * depth + b"]" * depth)
    assert parse_body(b'{"score": 2, "errors": ["unsafe"]}') == {"score": 2, "errors": ["unsafe"]}


def test_an_error_message_quotes_the_sender_briefly(studio: Studio) -> None:
    client, _, token = studio
    key = writing_ids(client, token["ana"])[0]
    body = {"score": 4, **{f"{'x' * 5_000}{i}": 1 for i in range(7)}}
    answer = client.put(f"/api/ratings/{key}", json=body, headers=bearer(token["ana"]))
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error.startswith("unknown field(s) xxx") and "and 2 more" in error
    assert len(error) < 400
    long_score = client.put(
        f"/api/ratings/{key}", json={"score": "9" * 10_000}, headers=bearer(token["ana"])
    )
    assert long_score.status_code == 422 and len(long_score.json()["error"]) < 200


def test_a_utf8_body_with_a_byte_order_mark_is_read(studio: Studio) -> None:
    client, store, token = studio
    key = writing_ids(client, token["ana"])[0]
    content = "\ufeff" + json.dumps({"score": 4, "note": "好"})
    answer = client.put(
        f"/api/ratings/{key}", content=content.encode("utf-8"), headers=bearer(token["ana"])
    )
    assert answer.status_code == 200, answer.text
    assert [r["note"] for r in store.ratings()] == ["好"]


def test_a_save_is_kept_replaced_and_shown_back(studio: Studio) -> None:
    client, store, token = studio
    key = writing_ids(client, token["ana"])[0]
    headers = bearer(token["ana"])
    first = {"score": 2, "errors": ["unsafe", "factual_error"], "note": "x"}
    assert (
        client.put(f"/api/ratings/{key}", json={**first, "score": 1}, headers=headers).status_code
        == 200
    )
    assert client.put(
        f"/api/ratings/{key}", json={"score": 5, "note": "<b>好</b>"}, headers=headers
    ).json()["saved"]
    shown = [
        w["rating"]
        for item in assignments(client, token["ana"])
        for w in item["writings"]
        if w["id"] == key
    ]
    assert shown[0]["score"] == 5 and shown[0]["errors"] == [] and shown[0]["note"] == "<b>好</b>"
    [kept] = store.ratings()
    assert (kept["rater"], kept["score"], kept["note"]) == ("ana", 5, "<b>好</b>")


def test_no_traceback_reaches_the_client(studio: Studio, monkeypatch: pytest.MonkeyPatch) -> None:
    _, store, token = studio

    def broken(*args: object) -> None:
        raise RuntimeError("secret detail of the server")

    monkeypatch.setattr(store, "save_rating", broken)
    with TestClient(create_app(store), raise_server_exceptions=False) as client:
        key = writing_ids(client, token["ana"])[0]
        response = client.put(
            f"/api/ratings/{key}", json={"score": 4}, headers=bearer(token["ana"])
        )
    assert response.status_code == 500
    assert response.json() == {"error": "the server failed on this request; its log says why"}
    assert "content-security-policy" in response.headers


def rate_everything(
    client: TestClient, token: dict[str, str], logs: list[Path]
) -> list[dict[str, Any]]:
    """Every rater rates all their writings: a made-up score from the writer and rater."""
    who = texts(logs)
    given = []
    for name in ("ana", "ben", "chen"):
        for item in assignments(client, token[name]):
            for writing in item["writings"]:
                infer_id, model = who[writing["text"]]
                score = (4 if model == WRITERS[0] else 2) + (len(infer_id) + len(name)) % 2
                body = {
                    "score": score,
                    "errors": [] if score >= 3 else ["off_request"],
                    "note": f"{name}, {infer_id}",
                }
                answer = client.put(
                    f"/api/ratings/{writing['id']}", json=body, headers=bearer(token[name])
                )
                assert answer.status_code == 200, answer.text
                given.append({"infer_id": infer_id, "model": model, "rater": name, **body})
    return given


def test_the_export_is_what_was_rated_and_metaeval_reads_it(
    studio: Studio, demo_logs: Path, tmp_path: Path
) -> None:
    client, store, token = studio
    given = rate_everything(client, token, [demo_logs])
    out = tmp_path / "ratings.csv"
    assert main(["annotate", "export", str(store.path), "--out", str(out)]) == 0
    with out.open(encoding="utf-8", newline="") as file:
        exported = list(csv.DictReader(file))
    assert list(exported[0]) == ["infer_id", "model", "rater", "score", "errors", "note"]
    as_given = sorted(
        (g["infer_id"], g["model"], g["rater"], str(g["score"]), ";".join(g["errors"]), g["note"])
        for g in given
    )
    assert sorted(tuple(row.values()) for row in exported) == as_given
    jsonl = tmp_path / "ratings.jsonl"
    assert main(["annotate", "export", str(store.path), "--out", str(jsonl)]) == 0
    lines = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert sorted(
        (r["infer_id"], r["model"], r["rater"], r["score"], tuple(r["errors"])) for r in lines
    ) == sorted(
        (g["infer_id"], g["model"], g["rater"], g["score"], tuple(g["errors"])) for g in given
    )
    download = client.get(f"/admin/{token['admin']}/export.csv")
    assert download.content == out.read_bytes()
    # metaeval: rater agreement over the pairs, each pair (first rater by name, second)
    by_writing: dict[tuple[str, str], dict[str, int]] = {}
    for g in given:
        by_writing.setdefault((g["infer_id"], g["model"]), {})[g["rater"]] = g["score"]
    pairs = [sorted(scores.items()) for scores in by_writing.values()]
    first = [p[0][1] for p in pairs]
    second = [p[1][1] for p in pairs]
    for source in (out, jsonl):
        result = metaeval([demo_logs], source, resamples=0)
        raters = result.tables["raters"].iloc[0]
        assert raters["rating_pairs"] == 14
        labels = list(range(min(first + second), max(first + second) + 1))
        assert raters["overall_kappa"] == pytest.approx(kappa_by_hand(first, second, labels, False))
        assert raters["overall_quadratic_kappa"] == pytest.approx(
            kappa_by_hand(first, second, labels, True)
        )
        assert raters["overall_pearson"] == pytest.approx(np.corrcoef(first, second)[0, 1])
        assert set(result.tables["per_rater"]["rater"]) == {"ana", "ben", "chen"}


def test_the_admin_summary(studio: Studio, demo_logs: Path) -> None:
    client, store, token = studio
    key = writing_ids(client, token["ana"])[0]
    assert (
        client.put(
            f"/api/ratings/{key}", json={"score": 5}, headers=bearer(token["ana"])
        ).status_code
        == 200
    )
    summary = client.get("/api/admin/summary", headers=bearer(token["admin"])).json()
    progress = {row["rater"]: row for row in summary["progress"]}
    assert progress["ana"]["rated"] == 1 and progress["ben"]["rated"] == 0
    assert sum(row["instructions"] for row in summary["progress"]) == 14
    assert summary["agreement"]["kappa"] is None  # one rating: nothing to agree on yet
    given = rate_everything(client, token, [demo_logs])
    summary = client.get("/api/admin/summary", headers=bearer(token["admin"])).json()
    assert all(row["finished"] == row["instructions"] for row in summary["progress"])
    scores: dict[tuple[str, str], list[int]] = {}
    for g in given:
        scores.setdefault((g["infer_id"], g["model"]), []).append(g["score"])
    far = {key for key, pair in scores.items() if abs(pair[0] - pair[1]) >= 2}
    assert {(d["infer_id"], d["model"]) for d in summary["disagreements"]} == far
    assert summary["agreement"]["rating_pairs"] == 14
    assert summary["agreement"]["quadratic_kappa"] is not None


def test_a_pick_campaign(demo_logs: Path, tmp_path: Path) -> None:
    store = new_campaign(tmp_path / "p.db", [demo_logs], raters=["ana", "ben"], kind="pick")
    token = tokens(store)
    with TestClient(create_app(store)) as client:
        items = assignments(client, token["ana"])
        assert all(len(item["writings"]) == 3 and item["reference"] is None for item in items)
        first, second = items[0], items[1]
        shown = {w["text"] for w in first["writings"]}
        assert any(text in shown for text in texts([demo_logs])) and len(shown) == 3
        url = f"/api/picks/{first['id']}"
        headers = bearer(token["ana"])
        other = second["writings"][0]["id"]
        assert (
            client.put(url, json={"choice": other, "reason": "x"}, headers=headers).status_code
            == 422
        )
        no_reason = client.put(url, json={"choice": first["writings"][0]["id"]}, headers=headers)
        assert no_reason.status_code == 422 and "'reason' is required" in no_reason.json()["error"]
        wrong = client.put(
            f"/api/ratings/{first['writings'][0]['id']}", json={"score": 4}, headers=headers
        )
        assert wrong.status_code == 409
        mine = client.put(
            url, json={"choice": first["writings"][1]["id"], "reason": "更好"}, headers=headers
        )
        assert mine.status_code == 200
        assert (
            client.put(
                url,
                json={"choice": first["writings"][1]["id"], "reason": "x"},
                headers=bearer(token["ben"]),
            ).status_code
            == 404
        )
        assert assignments(client, token["ana"])[0]["pick"]["choice"] == first["writings"][1]["id"]
    out = tmp_path / "picks.csv"
    assert main(["annotate", "export", str(store.path), "--out", str(out)]) == 0
    [row] = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    assert list(row) == ["infer_id", "rater", "choice", "candidates", "reason"]
    assert row["rater"] == "ana" and row["reason"] == "更好"
    assert sorted(row["candidates"].split(";")) == sorted([*WRITERS, "reference"])
    assert row["choice"] == row["candidates"].split(";")[1]
    assert main(["metaeval", str(demo_logs), "--ratings", str(out)]) == 2
    store.close()


def test_links(demo_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = new_campaign(tmp_path / "c.db", [demo_logs])
    token = tokens(store)
    store.close()
    capsys.readouterr()
    assert main(["annotate", "links", str(store.path), "--json", "--url", "https://x.org/"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found == {
        "admin": f"https://x.org/admin/{token['admin']}",
        "raters": {
            "ana": f"https://x.org/r/{token['ana']}",
            "ben": f"https://x.org/r/{token['ben']}",
        },
    }
    assert len(token["ana"]) >= 32 and token["ana"] != token["ben"]


def test_serve_warns_off_this_machine_and_names_a_busy_port(
    demo_logs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "c.db"
    new_campaign(db, [demo_logs]).close()
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    assert main(["annotate", "serve", str(db), "--host", "127.0.0.1", "--port", "0"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["annotate", "serve", str(db), "--host", "0.0.0.0", "--port", "0"]) == 0
    assert capsys.readouterr().err.startswith("warning: serving on 0.0.0.0")
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        assert main(["annotate", "serve", str(db), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"howtobench annotate serve: error: --host 127.0.0.1 --port {port}: cannot listen there"
    )
    assert err.count("\n") == 1


@pytest.mark.slow
def test_an_acknowledged_save_survives_kill_9(demo_logs: Path, tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    new_campaign(db, [demo_logs]).close()
    store = Store(db)
    token = tokens(store)["ana"]
    store.close()
    with server_process(db) as (process, base):
        status, answer = call(base, "GET", "/api/assignments", token)
        assert status == 200
        keys = [w["id"] for item in answer["instructions"] for w in item["writings"]]
        for i, key in enumerate(keys):
            status, _ = call(
                base, "PUT", f"/api/ratings/{key}", token, {"score": 3 + i % 3, "note": str(i)}
            )
            assert status == 200
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL
    reopened = Store(db)
    kept = reopened.ratings()
    reopened.close()
    assert sorted(int(r["note"]) for r in kept) == list(range(len(keys))) and len(keys) == 14
    assert [r["score"] for r in sorted(kept, key=lambda r: int(r["note"]))] == [
        3 + i % 3 for i in range(14)
    ]


@pytest.mark.slow
def test_ctrl_c_stops_the_server_without_a_traceback(demo_logs: Path, tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    new_campaign(db, [demo_logs]).close()
    with server_process(db) as (process, base):
        assert call(base, "GET", "/api/assignments", "nobody")[0] == 401
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert "Traceback" not in err and out.rstrip().endswith("stopped")
    assert not Path(f"{db}-wal").exists()  # closed cleanly: the log folded into the file


def test_an_export_needs_a_csv_or_jsonl_file(
    demo_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "c.db"
    new_campaign(db, [demo_logs]).close()
    out = tmp_path / "ratings.txt"
    assert main(["annotate", "export", str(db), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"howtobench annotate export: error: --out {out}: give a .csv or a .jsonl file\n"
    assert not out.exists()
