"""Talking to the remote with the git CLI: credentials, proxies and transports are git's own.

No named remote is configured in the clone: the URL (which may hold a token) is passed on
each call, so it is never written to `.git/config`, and fetched tips land in a ref of our
own, `refs/remotes/memoryui/<branch>`. Every message is masked before it leaves.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..gitcli import git_env, run_git
from .config import RemoteConfig, SyncError, valid_branch

TRACKING_PREFIX = "refs/remotes/memoryui/"


class TransportError(SyncError):
    """The remote could not be reached or refused us (message masked)."""


@dataclass(frozen=True)
class PushOutcome:
    ok: bool
    rejected: bool  # non-fast-forward: somebody pushed first; fetch and try again
    message: str


class Transport:
    """fetch / push / default branch for one clone and one remote."""

    def __init__(self, root: Path, config: RemoteConfig):
        self.root = root
        self.config = config

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        env = git_env()  # no terminal prompt, no submodules, no hooks (gitcli)
        # A prompt nobody answers would hang the round: answer it empty unless the operator
        # set their own askpass program; ssh gets no terminal (new session) to prompt on.
        env.setdefault("GIT_ASKPASS", "true")
        env.setdefault("SSH_ASKPASS_REQUIRE", "never")
        # The commit-graph is the workspace's housekeeping (`GitRepo.maintain`, run after a
        # fetch that brought commits): a fetch writing it too fails while that holds its lock.
        try:
            proc = subprocess.run(
                ["git", "-c", "fetch.writeCommitGraph=false",
                 "-c", "http.lowSpeedLimit=1000",
                 "-c", "http.lowSpeedTime=30", "-c", "credential.interactive=false", *args],
                cwd=self.root, capture_output=True, env=env, stdin=subprocess.DEVNULL,
                timeout=self.config.timeout, start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            raise TransportError(self.config.mask(
                f"git {args[0]} to {self.config.display_url()} gave no answer within "
                f"{self.config.timeout:g} s")) from None
        except OSError as exc:
            raise TransportError(f"git could not run: {exc}") from None
        if check and proc.returncode != 0:
            raise TransportError(self.describe(args[0], proc.stderr))
        return proc

    def describe(self, what: str, stderr: bytes) -> str:
        """git's own error, masked and cut to its useful lines."""
        lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines()
                 if ln.strip() and not ln.startswith(("hint:", "remote: Counting",
                                                      "remote: Compressing"))]
        # git's own verdict ("fatal: Unable to create '…lock'") names the cause; the prose
        # after it does not.
        verdicts = [ln for ln in lines if ln.startswith(("fatal:", "error:", "!"))]
        detail = "; ".join((verdicts or lines)[-3:]) or "no message"
        return self.config.mask(f"git {what} {self.config.display_url()} failed: {detail}")

    def run_git(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        """A git command against the remote, its failure in the result (not raised)."""
        return self._run(*args, check=False)

    def tracking_ref(self, branch: str) -> str:
        return TRACKING_PREFIX + branch

    def default_branch(self) -> str | None:
        """The branch the remote's HEAD names, None when it names none (empty remote)."""
        proc = self._run("ls-remote", "--symref", "--", self.config.url, "HEAD")
        for line in proc.stdout.decode("utf-8", "replace").splitlines():
            if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
                name = line[len("ref: refs/heads/"):-len("\tHEAD")]
                return name if valid_branch(name) else None
        return None

    def remote_tip(self, branch: str) -> str | None:
        """The branch's tip on the remote without fetching (None: no such branch)."""
        proc = self._run("ls-remote", "--heads", "--", self.config.url, f"refs/heads/{branch}")
        for line in proc.stdout.decode().splitlines():
            sha, _, ref = line.partition("\t")
            if ref == f"refs/heads/{branch}":
                return sha
        return None

    def fetch(self, branch: str, negotiate: str | None = None) -> str | None:
        """Fetch the branch into our tracking ref; its tip, or None when the remote lacks it.

        `negotiate`: a commit the remote has (the tip last fetched); git then offers the
        remote only its history as what we have. Else git offers every local branch, and
        our own commits the remote lacks (a backlog of them) made each fetch longer."""
        ref = self.tracking_ref(branch)
        tips = [f"--negotiation-tip={negotiate}"] if negotiate else []
        proc = self._run("fetch", "--no-tags", "--no-write-fetch-head", "--quiet",
                         "--no-auto-gc", "--no-recurse-submodules", *tips, "--",
                         self.config.url, f"+refs/heads/{branch}:{ref}", check=False)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace")
            if "couldn't find remote ref" in err or "could not find remote ref" in err:
                _delete_ref(self.root, ref)
                return None
            raise TransportError(self.describe("fetch", proc.stderr))
        out = run_git(self.root, "rev-parse", "--verify", "--quiet", ref + "^{commit}",
                      check=False)
        return out.decode().strip() or None

    def push(self, sha: str, branch: str) -> PushOutcome:
        """Push a commit to the branch, never forced: a rejection is reported, not overridden."""
        proc = self._run("push", "--porcelain", "--no-verify", "--", self.config.url,
                         f"{sha}:refs/heads/{branch}", check=False)
        text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if proc.returncode == 0:
            return PushOutcome(True, False, "")
        rejected = any(word in text for word in (
            "[rejected]", "non-fast-forward", "fetch first", "(stale info)",
            "cannot lock ref", "failed to update ref", "reference already exists"))
        return PushOutcome(False, rejected, self.describe("push", proc.stdout + proc.stderr))


def _delete_ref(root: Path, ref: str) -> None:
    run_git(root, "update-ref", "-d", ref, check=False)
