"""The Kubernetes recipe checked without a cluster: its manifest against the API's schema
and the rules the API server adds to it, and the worker image's Dockerfile against what
its build context holds.

The schema (`kubernetes_validate`, strict: an unknown field is refused, as the API server
refuses it in strict field validation, `kubectl apply`'s default) cannot say that one
field needs another. `job_problems` holds those rules for the fields the recipe uses, as
the API server's Job validation states them (`validateJobSpec` and `ValidateJob` in
kubernetes/kubernetes `pkg/apis/batch/validation/validation.go`, and a pod's volume mounts
in `pkg/apis/core/validation`), with the one rule the API reference states for
`backoffLimitPerIndex`: "It can only be set when Job's completionMode=Indexed, and the
Pod's restart policy is Never" (KEP-3850 leaves `OnFailure` out: the kubelet restarts
the container in place, and the Job controller cannot count those restarts per index).
`store_problems` is the recipe's own need: the reply store outlives the pods of an index.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

# a DNS-1123 label: what the pod hostname `<job name>-<index>` of an Indexed Job must be
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def documents(path: Path) -> list[dict[str, Any]]:
    """The manifest's objects, in the order `kubectl apply` sends them."""
    return [doc for doc in yaml.safe_load_all(path.read_text("utf-8")) if doc]


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [doc for doc in objects if doc["kind"] == kind]


def schema_problem(document: dict[str, Any], version: str) -> str | None:
    """Why the schema of Kubernetes `version` refuses the object (strict), or None."""
    import kubernetes_validate

    try:
        kubernetes_validate.validate(document, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        where = ".".join(str(part) for part in error.path)
        return f"{document['kind']} {where}: {error.message}"
    return None


def job_problems(job: dict[str, Any]) -> list[str]:
    """What the API server refuses in a Job (or, for backoffLimitPerIndex with another
    restart policy than Never, what its reference forbids), one line each."""
    spec = job["spec"]
    pod = spec["template"]["spec"]
    restart = pod.get("restartPolicy", "")
    indexed = spec.get("completionMode") == "Indexed"
    completions = spec.get("completions")
    failure_policy = spec.get("podFailurePolicy")
    problems = []
    if restart not in ("OnFailure", "Never"):
        problems.append(f"restartPolicy {restart!r}: a Job's must be OnFailure or Never")
    if indexed and completions is None:
        problems.append("completions: required when completionMode is Indexed")
    if indexed and completions and not _LABEL.match(f"{job['metadata']['name']}-{completions - 1}"):
        problems.append("metadata.name: the pod hostname <name>-<index> is no DNS label")
    if "backoffLimitPerIndex" in spec:
        if not indexed:
            problems.append("backoffLimitPerIndex: requires completionMode Indexed")
        if restart != "Never":
            problems.append(f"backoffLimitPerIndex: requires restartPolicy Never, not {restart}")
    if "maxFailedIndexes" in spec:
        if "backoffLimitPerIndex" not in spec:
            problems.append("maxFailedIndexes: requires backoffLimitPerIndex")
        elif completions is not None and spec["maxFailedIndexes"] > completions:
            problems.append("maxFailedIndexes: must be at most completions")
    if failure_policy is not None:
        if restart != "Never":
            problems.append(f"podFailurePolicy: requires restartPolicy Never, not {restart}")
        if spec.get("podReplacementPolicy", "Failed") != "Failed":
            problems.append("podReplacementPolicy: must be Failed with a podFailurePolicy")
        for rule in failure_policy.get("rules", []):
            if ("onExitCodes" in rule) == ("onPodConditions" in rule):
                problems.append("podFailurePolicy rule: needs one of onExitCodes, onPodConditions")
            if rule["action"] == "FailIndex" and "backoffLimitPerIndex" not in spec:
                problems.append("podFailurePolicy FailIndex: requires backoffLimitPerIndex")
    volumes = {volume["name"] for volume in pod.get("volumes", [])}
    for container in pod["containers"]:
        for mount in container.get("volumeMounts", []):
            if mount["name"] not in volumes:
                problems.append(f"volumeMount {mount['name']!r}: no such volume in the pod")
    return problems


def store_problems(
    objects: list[dict[str, Any]], container: dict[str, Any], cache_dir: str
) -> list[str]:
    """Why the reply store at `cache_dir` (the container's INSPECT_CACHE_DIR) would not
    reach the next pod of an index: it must lie on a volume of a claim that the manifest
    makes, ReadWriteMany, since the pods of the indexes run on different nodes."""
    job = of_kind(objects, "Job")[0]
    volumes = {volume["name"]: volume for volume in job["spec"]["template"]["spec"]["volumes"]}
    mounts = [
        m
        for m in container["volumeMounts"]
        if Path(cache_dir).is_relative_to(m["mountPath"]) and not m.get("readOnly")
    ]
    if not mounts:
        return [f"INSPECT_CACHE_DIR {cache_dir}: on no writable volume (lost with the pod)"]
    name = max(mounts, key=lambda m: len(m["mountPath"]))["name"]
    claim = volumes[name].get("persistentVolumeClaim", {}).get("claimName")
    if claim is None:
        kind = ", ".join(sorted(set(volumes[name]) - {"name"}))
        return [f"INSPECT_CACHE_DIR {cache_dir}: on volume {name} ({kind}), new in each pod"]
    made = {doc["metadata"]["name"]: doc for doc in of_kind(objects, "PersistentVolumeClaim")}
    if claim not in made:
        return [f"INSPECT_CACHE_DIR {cache_dir}: the claim {claim} is not in the manifest"]
    if "ReadWriteMany" not in made[claim]["spec"]["accessModes"]:
        return [f"the claim {claim}: not ReadWriteMany, so pods on other nodes cannot mount it"]
    return []


@dataclass(frozen=True)
class Copy:
    """A Dockerfile's COPY: the sources (in the build context) and the destination."""

    sources: tuple[str, ...]
    destination: str


def copies(dockerfile: Path) -> list[Copy]:
    """The Dockerfile's COPY instructions (shell form; no --from stages)."""
    found = []
    for line in _instructions(dockerfile):
        word, _, rest = line.partition(" ")
        if word.upper() == "COPY":
            *sources, destination = shlex.split(rest)
            found.append(Copy(tuple(s.rstrip("/") for s in sources), destination))
    return found


def pip_requirements(dockerfile: Path) -> list[str]:
    """What the Dockerfile's `pip install` lines install (options left out)."""
    wanted = []
    for line in _instructions(dockerfile):
        for command in line.partition(" ")[2].split("&&"):
            words = shlex.split(command)
            if words[:2] == ["pip", "install"]:
                wanted += [w for w in words[2:] if not w.startswith("-")]
    return wanted


def _instructions(dockerfile: Path) -> Iterator[str]:
    """The Dockerfile's instructions, continued lines joined, comments left out."""
    text = re.sub(r"\\\n", " ", dockerfile.read_text("utf-8"))
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            yield line.strip()


def in_context(path: str, ignore_file: Path) -> bool:
    """Whether `path` (relative to the context's root) is sent to the builder: the last
    pattern of the .dockerignore file that matches it or a folder above it decides, and
    a `!` pattern takes the path back in."""
    sent = True
    for raw in ignore_file.read_text("utf-8").splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        keep = pattern.startswith("!")
        regex = re.compile(_regex(pattern.lstrip("!").strip("/")))
        parts = path.split("/")
        if any(regex.fullmatch("/".join(parts[:n])) for n in range(1, len(parts) + 1)):
            sent = keep
    return sent


def _regex(pattern: str) -> str:
    """A .dockerignore pattern as a regular expression: `**` any folders, `*` any name."""
    out = ""
    for token in re.split(r"(\*\*/?|\*|\?)", pattern):
        if token in ("**", "**/"):
            out += "(.*/)?" if token == "**/" else ".*"
        elif token == "*":
            out += "[^/]*"
        elif token == "?":
            out += "[^/]"
        else:
            out += re.escape(token)
    return out
