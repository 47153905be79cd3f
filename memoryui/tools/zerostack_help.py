"""What zerostack's memory tools' arguments take, in their JSON Schema descriptions.

zerostack's own definitions list only the values ("long_term, scratchpad, daily, or
note"); a model (or a person writing a client) that leaves `target` out then learns from
the refusal only that it is required. These say what each value is, with the enum beside
them in the schema.
"""

TARGET_HELP = (
    "Required: which memory file. long_term: the global MEMORY.md (curated facts, one per "
    "line); scratchpad: this project's SCRATCHPAD.md checklist; daily: today's log of this "
    "project (memory_edit: name=YYYY-MM-DD for an earlier day); note: notes/<name>.md of "
    "this project (name required).")
SOURCE_HELP = (
    "Required: what to read. long_term (the global MEMORY.md), scratchpad, daily (name="
    "YYYY-MM-DD, default today), note (name=<stem>), or list (every memory file's path).")
QUERY_HELP = ("Space-separated keywords, searched case-insensitively; a line matches if it "
              "contains any of them.")
