"""Proposals in the OpenAPI document: list, show, approve and reject (`api/proposals.py`)."""

from __future__ import annotations

from memoryui.api.openapi_schemas import err, json_body, param, ref
from memoryui.models import ProposalDecision
from memoryui.policies import KINDS

PID = param("id", "path", {"type": "string", "pattern": "^[0-9a-f]{12}$"},
            "The proposal's id: 12 lowercase hex digits.")
_NULLABLE = {"type": ["string", "null"]}

PROPOSAL_SCHEMAS: dict = {
    "Proposal": {
        "type": "object",
        "required": ["id", "path", "scope", "kind", "proposer", "status", "created", "updated",
                     "policy_now", "proposer_revoked"],
        "properties": {
            "id": {"type": "string"}, "path": {"type": "string"},
            "scope": {"type": "string", "description": "The proposing agent's scope."},
            "kind": {"type": "string"}, "proposer": {"type": "string"},
            "status": {"type": "string", "enum": list(ProposalDecision.STATUSES)},
            "created": {"type": "string", "format": "date-time"},
            "updated": {"type": "string", "format": "date-time"},
            "decided_by": _NULLABLE, "decided_at": _NULLABLE, "reason": _NULLABLE,
            "merge_commit": _NULLABLE,
            "policy_now": {"type": "string", "enum": ["write", "propose", "read"],
                           "description": "The kind's policy for the proposer now; an open "
                                          "proposal stays open when it changed."},
            "proposer_revoked": {"type": "boolean"},
            "available": {"type": "boolean", "description": "Its commits have reached this "
                                                            "instance (sync)."},
            "stale": {"type": "boolean", "description": "The file changed since the "
                                                        "proposal's base."},
            "deleted": {"type": "boolean", "description": "The file was deleted since."},
            "removes": {"type": "boolean", "description": "The proposal deletes the file."},
            "commits": {"type": "array", "items": {"type": "string"}},
            "base_text": _NULLABLE, "proposed_text": _NULLABLE, "current_text": _NULLABLE,
            "diff": {"type": "string", "description": "Unified diff from the current file "
                                                      "to the proposal."}}},
    "ProposalList": {
        "type": "object", "required": ["proposals", "open"],
        "properties": {"proposals": {"type": "array", "items": ref("Proposal")},
                       "open": {"type": "integer"}}},
    "ProposalOne": {"type": "object", "required": ["proposal"],
                    "properties": {"proposal": ref("Proposal")}},
    "ProposalApproved": {"type": "object", "required": ["proposal", "commit"],
                         "properties": {"proposal": ref("Proposal"),
                                        "commit": {"type": "string"}}},
}


def proposal_paths() -> dict:
    text = {"type": "string", "pattern": "^[^\\x00]*$"}
    return {
        "/api/v1/proposals": {"get": {
            "operationId": "listProposals", "tags": ["proposals"],
            "summary": "Proposed changes to curated memory, oldest first",
            "description": "A scope token sees its own scope's; an admin token every scope's.",
            "parameters": [
                param("status", "query", {"type": "string", "enum": [
                    "", *ProposalDecision.STATUSES], "default": "open"}, "Their state."),
                param("scope", "query", {"type": "string", "pattern": "^[A-Za-z0-9_-]{0,64}$"},
                      "Only this scope's."),
                param("proposer", "query", {"type": "string", "maxLength": 150},
                      "Only this agent's."),
                param("kind", "query", {"type": "string", "enum": ["", *KINDS]},
                      "Only files of this kind.")],
            "responses": {"200": json_body(ref("ProposalList"), "Proposals"),
                          **err(400, 401, 403, 500)}}},
        "/api/v1/proposals/{id}": {"get": {
            "operationId": "getProposal", "tags": ["proposals"],
            "summary": "One proposal with its texts and diff",
            "parameters": [PID],
            "responses": {"200": json_body(ref("ProposalOne"), "The proposal"),
                          **err(400, 401, 404, 500)}}},
        "/api/v1/proposals/{id}/approve": {"post": {
            "operationId": "approveProposal", "tags": ["proposals"],
            "summary": "Approve: a merge commit brings the change in (admin token)",
            "description": "`text` approves the curator's version instead; `recreate` "
                           "brings back a file deleted since. 409 `already_decided` with "
                           "`state` when it was decided already; 409 `merge_conflict` with "
                           "`base`, `current`, `proposed` and `merged` (with markers) when "
                           "the file changed since and the changes overlap.",
            "parameters": [PID],
            "requestBody": {"required": False, "content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": False,
                "properties": {"text": text, "recreate": {"type": "boolean"}}}}}},
            "responses": {"200": json_body(ref("ProposalApproved"), "Approved"),
                          **err(400, 401, 403, 404, 409, 413, 422, 500, 507)}}},
        "/api/v1/proposals/{id}/reject": {"post": {
            "operationId": "rejectProposal", "tags": ["proposals"],
            "summary": "Reject with a reason; the commits are kept (admin token)",
            "parameters": [PID],
            "requestBody": {"required": False, "content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": False,
                "properties": {"reason": {**text, "maxLength": 2000}}}}}},
            "responses": {"200": json_body(ref("ProposalOne"), "Rejected"),
                          **err(400, 401, 403, 404, 409, 500)}}},
    }
