"""The two things a simulated write goes through: a markdown file of sections of bullets,
and the `git fast-import` stream that makes each write a commit."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import IO


class Doc:
    """A markdown file made of `## ` sections of bullets, so rewrites can edit it in place."""

    def __init__(self, title: str, preamble: str = "") -> None:
        self.title = title
        self.preamble = preamble
        self.sections: list[tuple[str, list[str]]] = []

    def section(self, heading: str) -> list[str]:
        for h, bullets in self.sections:
            if h == heading:
                return bullets
        bullets = []
        self.sections.append((heading, bullets))
        return bullets

    def render(self) -> str:
        out = [f"# {self.title}\n"]
        if self.preamble:
            out.append(f"\n{self.preamble}\n")
        for heading, bullets in self.sections:
            out.append(f"\n## {heading}\n")
            out.extend(f"- {b}\n" for b in bullets)
        return "".join(out)

    def size(self) -> int:
        return len(self.render().encode())

    def trim(self, limit: int, sections: tuple[str, ...]) -> None:
        """Drop the oldest bullets of `sections` until the file fits in `limit` bytes."""
        while self.size() > limit:
            for heading in sections:
                bullets = self.section(heading)
                if len(bullets) > 1:
                    del bullets[0]
                    break
            else:
                return


class Importer:
    """One `git fast-import` process on branch main; each write is one commit of one file."""

    def __init__(self, repo: Path) -> None:
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        self._proc = subprocess.Popen(
            ["git", "fast-import", "--quiet", "--done"],
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=self._err,
        )
        assert self._proc.stdin is not None
        self._out: IO[bytes] = self._proc.stdin
        self.commits = 0

    def commit(self, ts: int, name: str, email: str, message: str, path: str,
               content: str) -> None:
        msg = message.encode()
        body = content.encode()
        ident = f"{name} <{email}> {ts} +0000\n".encode()
        self._out.write(
            b"commit refs/heads/main\nauthor " + ident + b"committer " + ident
            + b"data %d\n" % len(msg) + msg
            + b"M 100644 inline " + path.encode() + b"\n"
            + b"data %d\n" % len(body) + body + b"\n"
        )
        self.commits += 1

    def close(self) -> None:
        try:
            self._out.write(b"done\n")
            self._out.close()
        except BrokenPipeError:
            pass
        rc = self._proc.wait()
        if rc != 0:
            self._err.seek(0)
            detail = self._err.read().decode(errors="replace").strip()
            raise RuntimeError(f"git fast-import failed ({rc}): {detail}")
        self._err.close()

