"""The inbox over MCP, for admin tokens: list proposals, show one with its diff, approve,
reject. Answers are JSON text (the same objects as the JSON API's); a decision somebody made
first, or a conflict, is a tool error whose text says so, with the state or the texts."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from memoryui import proposing
from memoryui.api.proposals import MAX_REASON, approver_of
from memoryui.models import ProposalDecision, Token
from memoryui.policies import KINDS
from memoryui.tools.registry import ToolError, check_args, object_schema

_ID = {"type": "string", "pattern": "^[0-9a-f]{12}$", "description": "The proposal's id."}
SCHEMAS: dict[str, tuple[str, dict, bool]] = {  # name -> description, schema, read-only
    "proposals_list": (
        "List proposed changes to curated memory (open ones by default), oldest first.",
        object_schema({"status": {"type": "string", "enum": list(ProposalDecision.STATUSES)},
                       "scope": {"type": "string"}, "proposer": {"type": "string"},
                       "kind": {"type": "string", "enum": list(KINDS)}}, []), True),
    "proposal_show": (
        "Show one proposal: its base, proposed and current texts and the diff.",
        object_schema({"id": _ID}, ["id"]), True),
    "proposal_approve": (
        "Approve a proposal: a merge commit brings its change in. `text` approves your own "
        "version instead; `recreate` brings back a file deleted since.",
        object_schema({"id": _ID, "text": {"type": "string"}, "recreate": {"type": "boolean"}},
                      ["id"]), False),
    "proposal_reject": (
        "Reject a proposal with a reason; its commits are kept.",
        object_schema({"id": _ID, "reason": {"type": "string", "maxLength": MAX_REASON}},
                      ["id"]), False),
}


def offered(token: Token | None) -> list[types.Tool]:
    """The inbox tools for this caller: admin tokens only."""
    if token is None or not token.is_admin:
        return []
    return [types.Tool(name=name, description=desc, input_schema=schema,
                       annotations=types.ToolAnnotations(
                           read_only_hint=ro, destructive_hint=False, idempotent_hint=ro,
                           open_world_hint=False))
            for name, (desc, schema, ro) in SCHEMAS.items()]


def handles(name: str) -> bool:
    return name in SCHEMAS


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


def run(token: Token | None, name: str, args: dict[str, Any]) -> str:
    """Run one inbox tool (ToolError with the reason otherwise)."""
    if token is None or not token.is_admin:
        raise ToolError(f"unknown tool '{name}'", "not_found", 404)
    _desc, schema, _ro = SCHEMAS[name]
    args = check_args(schema, args)
    if name == "proposals_list":
        views = proposing.open_proposals(
            scope=args.get("scope") or None, proposer=args.get("proposer") or None,
            kind=args.get("kind"), status=args.get("status") or ProposalDecision.OPEN)
        return _json({"proposals": [v.as_dict() for v in views]})
    if name == "proposal_show":
        return _json({"proposal": proposing.get(args["id"]).as_dict(texts=True)})
    try:
        if name == "proposal_approve":
            sha = proposing.approve(args["id"], approver_of(token),
                                    edited_text=args.get("text"),
                                    recreate=bool(args.get("recreate")))
            return _json({"proposal": proposing.get(args["id"]).as_dict(), "commit": sha})
        view = proposing.reject(args["id"], approver_of(token), args.get("reason", ""))
        return _json({"proposal": view.as_dict()})
    except proposing.AlreadyDecided as exc:
        raise ToolError(f"{exc} (state: {exc.state})", exc.code, 409) from None
    except proposing.MergeConflict as exc:
        texts = {"base": exc.base, "current": exc.ours, "proposed": exc.theirs,
                 "merged": exc.merged}
        raise ToolError(f"{exc}\n\n{_json(texts)}", "merge_conflict", 409) from None
