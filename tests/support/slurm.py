"""A single-node Slurm on 127.0.0.1 for the tests: munged, slurmctld and slurmd of Debian's
`munge` and `slurm-wlm`, each with its files in one temporary folder (its own munge key and
socket, its own ports), so that nothing of a machine's own Slurm or munge is used or
touched. The daemons run as root (Slurm's own user and the jobs' user alike): the tests
that use this skip, with the reason, where that or the packages are missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

NODE = "howtobench-node"
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo")
START_SECONDS = 60.0


def unavailable() -> str | None:
    """Why a Slurm cannot be started here, or None."""
    if os.geteuid() != 0:
        return "the single-node Slurm runs its daemons as root (not root here)"
    missing = [name for name in DAEMONS if shutil.which(name) is None]
    if missing:
        return f"no {', '.join(missing)} (apt-get install slurm-wlm munge)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Slurm:
    """A running single-node Slurm: its configuration and the environment its commands
    need (`SLURM_CONF`)."""

    folder: Path
    conf: Path

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        return {**(os.environ if base is None else base), "SLURM_CONF": str(self.conf)}

    def command(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            args, env=self.env(env), capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, f"{' '.join(args)}: {done.stderr or done.stdout}"
        return done.stdout

    def jobs(self, job: str) -> list[str]:
        """The states of a job's array tasks still known to slurmctld (pending, running,
        completing); empty once every task has ended."""
        out = self.command("squeue", "-h", "-j", job, "-o", "%T")
        return [line.strip() for line in out.splitlines() if line.strip()]

    def wait_ended(self, job: str, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while self.jobs(job):
            assert time.monotonic() < deadline, f"job {job} did not end in {seconds:g} s"
            time.sleep(0.2)

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
            for p in sorted(self.folder.glob("*.log"))
        )


def _configuration(folder: Path, socket_path: Path) -> str:
    cpus = os.cpu_count() or 1
    return "\n".join(
        [
            "ClusterName=howtobench",
            "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={socket_path}",
            f"StateSaveLocation={folder / 'state'}",
            f"SlurmdSpoolDir={folder / 'spool'}",
            f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
            f"SlurmdPidFile={folder / 'slurmd.pid'}",
            f"SlurmctldLogFile={folder / 'slurmctld.log'}",
            f"SlurmdLogFile={folder / 'slurmd.log'}",
            # no cgroups in a container: track processes by their parents, bind nothing
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/backfill",
            "MpiDefault=none",
            "ReturnToService=2",
            "SlurmdParameters=config_overrides",
            "KillWait=5",
            "InactiveLimit=0",
            f"NodeName={NODE} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 "
            f"CPUs={cpus} State=UNKNOWN",
            f"PartitionName=test Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(15)


@contextmanager
def single_node(folder: Path) -> Iterator[Slurm]:
    """munged, slurmctld and slurmd in the foreground, stopped on leaving; ready once the
    node answers `sinfo` as idle."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)  # munged refuses a key or socket in a folder others may write
    for sub in ("state", "spool"):
        (folder / sub).mkdir(exist_ok=True)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    socket_path = folder / "munge.socket"
    conf = folder / "slurm.conf"
    conf.write_text(_configuration(folder, socket_path), "utf-8")
    slurm = Slurm(folder, conf)
    started: list[subprocess.Popen[bytes]] = []

    def start(*command: str) -> None:
        log = open(folder / f"{Path(command[0]).name}.out.log", "wb")  # noqa: SIM115
        started.append(
            subprocess.Popen(command, env=slurm.env(), stdout=log, stderr=subprocess.STDOUT)
        )

    try:
        start(
            "munged",
            "--foreground",
            "--force",
            f"--socket={socket_path}",
            f"--key-file={key}",
            f"--pid-file={folder / 'munged.pid'}",
            f"--log-file={folder / 'munged.log'}",
            f"--seed-file={folder / 'munged.seed'}",
        )
        deadline = time.monotonic() + START_SECONDS
        while not socket_path.exists():
            assert started[0].poll() is None, f"munged exited:\n{slurm.logs()}"
            assert time.monotonic() < deadline, f"munged did not start:\n{slurm.logs()}"
            time.sleep(0.1)
        start("slurmctld", "-D", "-i", "-f", str(conf))
        start("slurmd", "-D", "-N", NODE, "-f", str(conf))
        while True:
            states = subprocess.run(
                ["sinfo", "-h", "-N", "-o", "%T"],
                env=slurm.env(),
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            ).stdout.split()
            if states and all(state == "idle" for state in states):
                break
            for process in started:
                assert process.poll() is None, f"{process.args[0]} exited:\n{slurm.logs()}"
            assert time.monotonic() < deadline, f"the node is {states}:\n{slurm.logs()}"
            time.sleep(0.2)
        yield slurm
    finally:
        for process in reversed(started):
            _stop(process)
