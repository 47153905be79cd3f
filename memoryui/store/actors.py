"""Who made a change: an agent (a scope), a person, or something outside memoryui."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    kind: str  # "agent" | "user" | "external"
    name: str
    email: str

    @classmethod
    def agent(cls, scope: str) -> Actor:
        return cls("agent", scope, f"{scope}@agents.memoryui")

    @classmethod
    def user(cls, username: str, email: str | None = None) -> Actor:
        return cls("user", username, email or f"{username}@users.memoryui")

    @classmethod
    def external(cls) -> Actor:
        return cls("external", "workspace", "workspace@memoryui")

    @property
    def trailer(self) -> str:
        """The `Memoryui-Actor` trailer value, e.g. `agent:ops-bot`."""
        return f"{self.kind}:{self.name}"

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "email": self.email}

    @classmethod
    def from_dict(cls, d: dict[str, str]) -> Actor:
        return cls(d["kind"], d["name"], d["email"])
