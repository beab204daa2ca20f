"""A campaign file's layout (the SQL schema and its version), and the making of one from a plan.

Written once, in one transaction: a file that could not be written whole is removed.
`PRAGMA user_version` holds the schema version, so a file of another version is refused
rather than misread. The ids a rater's page uses are random, revealing neither the sample
nor the model.
"""

from __future__ import annotations

import secrets
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from howtobench.annotate.campaign import REFERENCE, Plan
from howtobench.studies.log_files import StudyError

__all__ = ["SCHEMA_VERSION", "connect", "create", "now"]

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE campaign (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    kind TEXT NOT NULL CHECK (kind IN ('rate', 'pick')),
    reference TEXT NOT NULL CHECK (reference IN ('show', 'hide')),
    seed INTEGER NOT NULL,
    language TEXT NOT NULL,
    admin_token TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE instructions (
    id INTEGER PRIMARY KEY,
    infer_id TEXT NOT NULL UNIQUE,
    task TEXT NOT NULL,
    genre TEXT NOT NULL,
    language TEXT NOT NULL,
    instruction TEXT NOT NULL,
    grounding TEXT NOT NULL,
    reference TEXT NOT NULL
);
CREATE TABLE writings (
    id INTEGER PRIMARY KEY,
    instruction_id INTEGER NOT NULL REFERENCES instructions (id),
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    log TEXT NOT NULL,
    UNIQUE (instruction_id, model)
);
CREATE TABLE raters (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token TEXT NOT NULL UNIQUE
);
CREATE TABLE assignments (
    id TEXT PRIMARY KEY,
    rater_id INTEGER NOT NULL REFERENCES raters (id),
    instruction_id INTEGER NOT NULL REFERENCES instructions (id),
    position INTEGER NOT NULL,
    UNIQUE (rater_id, instruction_id),
    UNIQUE (rater_id, position)
);
CREATE TABLE candidates (
    id TEXT PRIMARY KEY,
    assignment_id TEXT NOT NULL REFERENCES assignments (id),
    writing_id INTEGER REFERENCES writings (id),  -- NULL: the human reference
    position INTEGER NOT NULL,
    UNIQUE (assignment_id, position),
    UNIQUE (id, assignment_id)
);
CREATE TABLE ratings (
    candidate_id TEXT PRIMARY KEY REFERENCES candidates (id),
    score INTEGER NOT NULL CHECK (score BETWEEN 1 AND 5),
    errors TEXT NOT NULL,  -- a JSON list of error type ids
    note TEXT NOT NULL,
    saved TEXT NOT NULL
);
CREATE TABLE picks (
    assignment_id TEXT PRIMARY KEY REFERENCES assignments (id),
    candidate_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    saved TEXT NOT NULL,
    FOREIGN KEY (candidate_id, assignment_id) REFERENCES candidates (id, assignment_id)
);
CREATE INDEX assignments_by_rater ON assignments (rater_id, position);
CREATE INDEX candidates_by_assignment ON candidates (assignment_id, position);
"""


TOKEN_BYTES = 24  # 192 random bits per link


ID_BYTES = 12  # opaque ids of instructions and candidates on a rater's page


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, timeout=30)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA synchronous = FULL")
    return db


def create(path: Path, plan: Plan) -> None:
    """Write the campaign to a new file (an existing file is never overwritten)."""
    if path.exists():
        raise StudyError(f"{path}: the file exists; give a new file for the campaign")
    try:
        db = connect(path)
    except sqlite3.Error as err:
        raise StudyError(f"{path}: cannot create the campaign file: {err}") from err
    try:
        db.execute("PRAGMA journal_mode = WAL")
        with db:
            _write(db, plan)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.close()
        for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            leftover.unlink(missing_ok=True)
        raise
    db.close()


def _write(db: sqlite3.Connection, plan: Plan) -> None:
    db.executescript(SCHEMA)
    db.execute(
        "INSERT INTO campaign VALUES (1, ?, ?, ?, ?, ?, ?)",
        (plan.kind, plan.reference, plan.seed, plan.language, _token(), now()),
    )
    instruction_ids, writing_ids = {}, {}
    for item in plan.instructions:
        instruction_ids[item.infer_id] = db.execute(
            "INSERT INTO instructions (infer_id, task, genre, language, instruction, grounding, "
            "reference) VALUES (:infer_id, :task, :genre, :language, :instruction, :grounding, "
            ":reference)",
            vars(item),  # the instruction's fields by name (its writings are not columns)
        ).lastrowid
        for model, text in sorted(item.writings.items()):
            writing_ids[(item.infer_id, model)] = db.execute(
                "INSERT INTO writings (instruction_id, model, text, log) VALUES (?, ?, ?, ?)",
                (instruction_ids[item.infer_id], model, text, item.where.get(model, "")),
            ).lastrowid
    rater_ids = {
        name: db.execute(
            "INSERT INTO raters (name, token) VALUES (?, ?)", (name, _token())
        ).lastrowid
        for name in plan.raters
    }
    positions: dict[str, int] = {}
    for assignment in plan.assignments:
        key = secrets.token_urlsafe(ID_BYTES)
        position = positions[assignment.rater] = positions.get(assignment.rater, -1) + 1
        db.execute(
            "INSERT INTO assignments VALUES (?, ?, ?, ?)",
            (key, rater_ids[assignment.rater], instruction_ids[assignment.infer_id], position),
        )
        db.executemany(
            "INSERT INTO candidates VALUES (?, ?, ?, ?)",
            [
                (
                    secrets.token_urlsafe(ID_BYTES),
                    key,
                    None if model == REFERENCE else writing_ids[(assignment.infer_id, model)],
                    i,
                )
                for i, model in enumerate(assignment.candidates)
            ],
        )


def _token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)
