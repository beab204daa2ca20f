"""An open campaign file (`schema`): what a rater's page and the admin read, and each save;
every query of the rater's API is filtered by the rater and never names a model.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from howtobench.annotate.protocol import Pick, Rating, label
from howtobench.annotate.schema import SCHEMA_VERSION, connect, now
from howtobench.studies.log_files import StudyError

__all__ = ["Settings", "Store"]

# a candidate's (`c`) assignment, instruction and rater, for the exports
OWNERS = (
    "JOIN assignments a ON a.id = c.assignment_id "
    "JOIN instructions i ON i.id = a.instruction_id "
    "JOIN raters r ON r.id = a.rater_id"
)


@dataclass(frozen=True)
class Settings:
    """What the server needs at hand: the campaign's options and who may come in."""

    kind: str
    reference: str
    language: str
    admin_token: str
    raters: dict[str, tuple[int, str]]  # name -> (row id, token)


class Store:
    """An open campaign file; safe to use from several threads (a pool of connections)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_file():
            raise StudyError(
                f"{path}: no such campaign file (make one with howtobench annotate new)"
            )
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._write_lock = threading.Lock()
        try:
            with self._db() as db:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as err:
            raise StudyError(f"{path}: not a campaign file ({err})") from err
        if "campaign" not in tables:
            raise StudyError(f"{path}: not a campaign file (no campaign in it)")
        if version != SCHEMA_VERSION:
            raise StudyError(
                f"{path}: a campaign file of schema version {version}; this howtobench reads "
                f"version {SCHEMA_VERSION}"
            )

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        try:
            db = self._idle.get_nowait()
        except queue.Empty:
            db = connect(self.path)
        try:
            yield db
        finally:
            self._idle.put(db)

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """A connection in a transaction that commits on leaving, one writer at a time.
        SQLite lets one writer in at a time anyway, but a writer that finds the file locked
        sleeps in growing steps (up to 100 ms) before it tries again; waiting for this
        lock instead wakes the next writer as soon as the last one has committed."""
        with self._write_lock, self._db() as db, db:
            yield db

    def close(self) -> None:
        """Close the idle connections."""
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    def settings(self) -> Settings:
        with self._db() as db:
            row = db.execute(
                "SELECT kind, reference, language, admin_token FROM campaign"
            ).fetchone()
            raters = {r["name"]: (r["id"], r["token"]) for r in db.execute("SELECT * FROM raters")}
        return Settings(row["kind"], row["reference"], row["language"], row["admin_token"], raters)

    def instruction_kinds(self) -> set[tuple[str, str]]:
        """The (task, language) pairs of the campaign: which guidelines its pages need."""
        with self._db() as db:
            rows = db.execute("SELECT DISTINCT task, language FROM instructions").fetchall()
        return {(row["task"], row["language"]) for row in rows}

    def assignments(self, rater_id: int) -> list[dict[str, Any]]:
        """A rater's instructions in their order, each with its candidates and the rater's
        own ratings or pick, but no text: the page fetches one instruction's texts at a time
        (`instruction`), so that a page load stays small however many a rater has."""
        with self._db() as db:
            head = db.execute(
                "SELECT a.id, i.task, i.language FROM assignments a "
                "JOIN instructions i ON i.id = a.instruction_id "
                "WHERE a.rater_id = ? ORDER BY a.position",
                (rater_id,),
            ).fetchall()
            rows = db.execute(
                "SELECT c.id, c.assignment_id, c.position, g.score, g.errors, g.note, g.saved "
                "FROM assignments a JOIN candidates c ON c.assignment_id = a.id "
                "LEFT JOIN ratings g ON g.candidate_id = c.id "
                "WHERE a.rater_id = ? ORDER BY a.position, c.position",
                (rater_id,),
            ).fetchall()
            picks = {
                row["assignment_id"]: {key: row[key] for key in ("choice", "reason", "saved")}
                for row in db.execute(
                    "SELECT p.*, p.candidate_id AS choice FROM picks p "
                    "JOIN assignments a ON a.id = p.assignment_id WHERE a.rater_id = ?",
                    (rater_id,),
                )
            }
        candidates: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            rating = None
            if row["score"] is not None:
                rating = {key: row[key] for key in ("score", "note", "saved")}
                rating["errors"] = json.loads(row["errors"])
            candidates.setdefault(row["assignment_id"], []).append(
                {"id": row["id"], "label": label(row["position"]), "rating": rating}
            )
        return [
            {**dict(row), "writings": candidates[row["id"]], "pick": picks.get(row["id"])}
            for row in head
        ]

    def instruction(
        self, rater_id: int, assignment_id: str, settings: Settings
    ) -> dict[str, Any] | None:
        """The texts of one of the rater's instructions (the reference when the campaign
        shows it as a 4); None if no instruction of theirs has that id."""
        with self._db() as db:
            head = db.execute(
                "SELECT i.instruction, i.grounding, i.reference FROM assignments a "
                "JOIN instructions i ON i.id = a.instruction_id WHERE a.id = ? AND a.rater_id = ?",
                (assignment_id, rater_id),
            ).fetchone()
            rows = db.execute(
                "SELECT c.id, COALESCE(w.text, i.reference) AS text FROM candidates c "
                "JOIN assignments a ON a.id = c.assignment_id "
                "JOIN instructions i ON i.id = a.instruction_id "
                "LEFT JOIN writings w ON w.id = c.writing_id "
                "WHERE a.id = ? AND a.rater_id = ? ORDER BY c.position",
                (assignment_id, rater_id),
            ).fetchall()
        if head is None:
            return None
        shown = settings.kind == "rate" and settings.reference == "show" and head["reference"]
        return {
            "id": assignment_id,
            **dict(head),
            "reference": head["reference"] if shown else None,
            "writings": [dict(row) for row in rows],
        }

    def save_rating(self, rater_id: int, candidate_id: str, rating: Rating) -> str | None:
        """Store the rater's rating of one of their writings: when it was saved, or None if
        no writing of theirs has that id."""
        saved = now()
        with self._writing() as db:
            done = db.execute(
                "INSERT INTO ratings (candidate_id, score, errors, note, saved) "
                "SELECT c.id, ?, ?, ?, ? FROM candidates c "
                "JOIN assignments a ON a.id = c.assignment_id "
                "WHERE c.id = ? AND a.rater_id = ? AND c.writing_id IS NOT NULL "
                "ON CONFLICT (candidate_id) DO UPDATE SET score = excluded.score, "
                "errors = excluded.errors, note = excluded.note, saved = excluded.saved",
                (
                    rating.score,
                    json.dumps(list(rating.errors)),
                    rating.note,
                    saved,
                    candidate_id,
                    rater_id,
                ),
            )
        return saved if done.rowcount == 1 else None

    def save_pick(self, rater_id: int, assignment_id: str, pick: Pick) -> str | None:
        """As `save_rating`, for an instruction; a choice that is no candidate of that
        instruction is a `ValueError`."""
        saved = now()
        with self._writing() as db:
            mine = db.execute(
                "SELECT 1 FROM assignments WHERE id = ? AND rater_id = ?",
                (assignment_id, rater_id),
            ).fetchone()
            if mine is None:
                return None
            try:
                db.execute(
                    "INSERT INTO picks VALUES (?, ?, ?, ?) ON CONFLICT (assignment_id) DO UPDATE "
                    "SET candidate_id = excluded.candidate_id, reason = excluded.reason, "
                    "saved = excluded.saved",
                    (assignment_id, pick.choice, pick.reason, saved),
                )
            except sqlite3.IntegrityError as err:  # the foreign key: not this one's candidate
                raise ValueError(
                    f"'choice': {pick.choice!r} is no candidate of this instruction"
                ) from err
        return saved

    def ratings(self) -> list[dict[str, Any]]:
        """Every rating with its writing's sample id and model, and the rater's name."""
        with self._db() as db:
            rows = db.execute(
                "SELECT i.infer_id, i.task, w.model, r.name AS rater, g.score, g.errors, "
                "g.note, g.saved FROM ratings g JOIN candidates c ON c.id = g.candidate_id "
                f"JOIN writings w ON w.id = c.writing_id {OWNERS} "
                "ORDER BY i.infer_id, w.model, r.name"
            ).fetchall()
        return [{**dict(row), "errors": json.loads(row["errors"])} for row in rows]

    def picks(self) -> list[dict[str, Any]]:
        """Every pick, with the models of its choice and candidates (in the order shown)."""
        with self._db() as db:
            shown = db.execute(
                "SELECT c.assignment_id, COALESCE(w.model, 'reference') AS model FROM candidates c "
                "LEFT JOIN writings w ON w.id = c.writing_id ORDER BY c.assignment_id, c.position"
            ).fetchall()
            rows = db.execute(
                "SELECT p.assignment_id, i.infer_id, i.task, r.name AS rater, "
                "COALESCE(w.model, 'reference') AS choice, p.reason, p.saved FROM picks p "
                "JOIN candidates c ON c.id = p.candidate_id "
                f"LEFT JOIN writings w ON w.id = c.writing_id {OWNERS} "
                "ORDER BY i.infer_id, r.name"
            ).fetchall()
        candidates: dict[str, list[str]] = {}
        for row in shown:
            candidates.setdefault(row["assignment_id"], []).append(row["model"])
        return [{**dict(row), "candidates": candidates[row["assignment_id"]]} for row in rows]

    def progress(self) -> list[dict[str, Any]]:
        """Per rater: instructions assigned and finished, writings rated, the last save."""
        with self._db() as db:
            rows = db.execute(
                "SELECT r.name AS rater, COUNT(x.id) AS instructions, "
                "COALESCE(SUM(x.picked OR x.rated = x.writings), 0) AS finished, "
                "COALESCE(SUM(x.writings), 0) AS writings, COALESCE(SUM(x.rated), 0) AS rated, "
                "MAX(x.saved) AS last_save FROM raters r LEFT JOIN ("
                # per assignment: its writings, those rated, whether picked, the last save
                "SELECT a.id, a.rater_id, COUNT(c.id) AS writings, COUNT(g.candidate_id) AS rated, "
                "COUNT(p.assignment_id) > 0 AS picked, MAX(COALESCE(g.saved, p.saved)) AS saved "
                "FROM assignments a LEFT JOIN candidates c ON c.assignment_id = a.id "
                "LEFT JOIN ratings g ON g.candidate_id = c.id "
                "LEFT JOIN picks p ON p.assignment_id = a.id GROUP BY a.id"
                ") x ON x.rater_id = r.id GROUP BY r.id ORDER BY r.name"
            ).fetchall()
        return [dict(row) for row in rows]
