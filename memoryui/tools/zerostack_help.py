"""The texts a model reads about zerostack's memory tools: each tool's description (zerostack's
own, word for word) and what the arguments take, in their JSON Schema descriptions.

zerostack's own argument definitions list only the values ("long_term, scratchpad, daily, or
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
MODE_HELP = ("hybrid (default): also return files that match the query by meaning, "
             "shown with [matched: \u2014]; keyword: exact keyword matches only.")

# memory_write's description
WRITE_HELP = (
    "Persist durable memory to disk. target=long_term writes curated facts/preferences/"
    "decisions to MEMORY.md (always loaded next session), one fact per line; long_term "
    "appends are deduplicated (whitespace-insensitive) so a line already present is "
    "skipped. target=scratchpad maintains a per-project checklist (use `- [ ]` items; "
    "open ones are auto-injected, mode=overwrite to rewrite the list). target=daily "
    "appends to today's running log. target=note saves reference material to "
    "notes/<name>.md (find it later with memory_search, then read it in full with "
    "memory_read). Prefer long_term for things that should always be remembered.")

# memory_read's description
READ_HELP = (
    "Read a memory file: source=long_term (MEMORY.md), scratchpad, daily "
    "(name=YYYY-MM-DD, omit for today), note (name=<stem>), or list (enumerate "
    "everything).")

# memory_search's description
SEARCH_HELP = (
    "Case-insensitive keyword search across all memory files (long-term, notes, daily "
    "logs, including older ones). Space-separated words are treated as separate terms; "
    "a line matches if it contains ANY term, and files matching more distinct terms "
    "rank higher. Matches are returned with surrounding context and the file path; to "
    "read a relevant file in full, follow up with memory_read. Use to recall older "
    "context that is not auto-injected. If a search returns 'No matches', try again "
    "with synonyms, broader concepts, or shorter keywords.")

# memory_edit's description
EDIT_HELP = (
    "Replace a unique substring in a memory file in place. target=long_term "
    "(MEMORY.md), scratchpad, daily (a day's log; pass name=YYYY-MM-DD to edit an "
    "earlier day, defaults to today), or note (name=<stem>). old_str must occur "
    "EXACTLY once in the target file, matched literally (no fuzzy matching); if it "
    "matches zero or multiple times the edit fails and nothing is written, so include "
    "enough surrounding text to make it unique. The match is replaced with new_str "
    "verbatim, with no newline cleanup: set new_str to an empty string to delete the "
    "matched text, and include the trailing newline in old_str to delete a whole line. "
    "Omit old_str entirely to delete a whole note file (requires target=note and "
    "name=<stem>); omitting old_str for long_term/scratchpad/daily is rejected and "
    "changes nothing. Use memory_write to append or overwrite; use this to surgically "
    "fix or remove existing content.")
