"""What makes two close texts state different facts: a number, a date, a name, a negation.

`differences(a, b)` names the kinds of detail on which two texts disagree. A kind counts only
when both texts carry it and they carry different values ("refunds under 30 days" against
"under 14 days"), so a paraphrase that leaves a detail out ("support is open on weekdays")
is not a disagreement; a negation counts when one text negates and the other does not.
Two texts close in meaning whose details differ are contradiction candidates
(`review.meaning`).

Plain Python: no Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

NUMBER, DATE, NAME, NEGATION = "a number", "a date", "a name", "a negation"
MAX_CHARS = 2_000

_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
          "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11",
          "twelve": "12", "fifteen": "15", "twenty": "20", "thirty": "30", "forty": "40",
          "fifty": "50", "sixty": "60", "ninety": "90", "hundred": "100",
          "first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5",
          "once": "1", "twice": "2"}
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
# "may" and "march" are verbs too often to be dates on their own.
_MONTH_WORDS = frozenset(_MONTHS) - {"may", "march"} | {m[:3] for m in _MONTHS if m != "may"}
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b")
# An identifier with a digit in it (eu-west-1, INC-6, db-7, v2.3): a name, not a number.
_IDENT = re.compile(r"\b[A-Za-z][\w]*(?:[-_.][\w]+)*-\d[\w.-]*\b|\bv\d+(?:\.\d+)+\b"
                    r"|\b[A-Za-z]+\d[\w-]*\b")
_NUM = re.compile(r"\d+(?:[.:,]\d+)*(?:st|nd|rd|th)?")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.:,]\d+)*")
_NEG = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor",
                  "without", "cannot", "disabled", "stopped"})
# Capitalised words that are not names: sentence starts are skipped anyway, these are the
# words a sentence inside a line starts with, and units or acronyms every note carries.
_NOT_NAMES = frozenset({"the", "a", "an", "we", "our", "it", "this", "that", "they", "i",
                        "on", "in", "at", "for", "and", "but", "or", "if", "when", "to",
                        "api", "ui", "url", "ci", "cd", "utc", "tls", "vpn", "sso", "faq",
                        "note", "todo", "update", "since", "now", "also"})


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.replace("’", "'"))


def _sentence_starts(text: str) -> list[tuple[str, bool]]:
    """Each word of `text`, and whether it starts a sentence (the first word, or one after
    a stop)."""
    out: list[tuple[str, bool]] = []
    end = 0
    for m in _TOKEN.finditer(text.replace("’", "'")):
        out.append((m.group(), not out or any(c in ".!?:;\n" for c in text[end:m.start()])))
        end = m.end()
    return out


@dataclass(frozen=True)
class Details:
    """The details of a text two statements of one fact can disagree on."""

    numbers: frozenset[tuple[str, str, str]]  # (value, word before, word after)
    dates: frozenset[str]
    names: frozenset[str]  # capitalised inside a sentence, or identifiers (eu-west-1)
    leading: frozenset[str]  # capitalised words starting a sentence: names, maybe
    negations: int
    words: frozenset[str]  # every other word, lower case

    @property
    def values(self) -> frozenset[str]:
        return frozenset(v for v, _b, _a in self.numbers)


@lru_cache(maxsize=8192)
def details(text: str) -> Details:
    """A text's details; numbers and times normalised ('02:00' and '2:00' are one value,
    'two' is '2'), names lower-cased."""
    dates = set(_DATE.findall(text))
    rest = _DATE.sub(" ", text)
    names = {m.lower() for m in _IDENT.findall(rest)}
    rest = _IDENT.sub(" ", rest)
    found: list[tuple[str, int]] = []  # (value, position) of each number
    leading: set[str] = set()
    words: list[str] = []
    negations = 0
    tokens = _sentence_starts(rest)
    # the first word of a sentence is capitalised whatever it is: a name, maybe
    for n, (w, start) in enumerate(tokens):
        low = w.lower()
        if w[0].isdigit():
            found.append((_number(w), n))
        elif low in _WORDS:
            found.append((_WORDS[low], n))
        elif low in _DAYS or low in _MONTH_WORDS:
            dates.add(low[:3])
        elif low in _NEG or low.endswith("n't"):
            negations += 1
        elif w[0].isupper() and low not in _NOT_NAMES:
            (leading if start else names).add(low)
        else:
            words.append(low)
    lows = [t.lower() for t, _s in tokens]
    numbers = {(v, lows[n - 1] if n else "", lows[n + 1] if n + 1 < len(lows) else "")
               for v, n in found}
    return Details(frozenset(numbers), frozenset(dates), frozenset(names),
                   frozenset(leading), negations, frozenset(words))


def _number(w: str) -> str:
    w = re.sub(r"(st|nd|rd|th)$", "", w).replace(",", "")
    if ":" in w:  # a time: 02:00 == 2:00
        parts = w.split(":")
        return ":".join([str(int(parts[0])), *parts[1:]]) if parts[0].isdigit() else w
    try:
        return str(float(w)).removesuffix(".0")
    except ValueError:
        return w


def _same_slot(a: Details, b: Details) -> bool:
    """Whether a number only `a` has and one only `b` has stand beside the same word
    ("under 30 days" and "under 14 days"; not "at 02:00" and "for 30 days")."""
    only_a = [n for n in a.numbers if n[0] not in b.values]
    only_b = [n for n in b.numbers if n[0] not in a.values]
    return any((x[1] and x[1] == y[1]) or (x[2] and x[2] == y[2])
               for x in only_a for y in only_b)


def _swapped_lead(a: Details, b: Details) -> bool:
    """Whether the texts differ by the capitalised word a sentence starts with ("Alice
    owns billing" and "Bob owns billing"), the rest of their words mostly shared."""
    if not (a.leading - b.leading - b.words and b.leading - a.leading - a.words):
        return False
    small = min(len(a.words), len(b.words))
    return small > 0 and len(a.words & b.words) >= SWAP_SHARE * small


SWAP_SHARE = 0.7


def differences(a: str, b: str) -> list[str]:
    """The kinds of detail on which `a` and `b` disagree (empty: none). Only the first
    MAX_CHARS of each are read: a fact is stated in a sentence or two, and the memo of
    `details` stays small."""
    da, db = details(a[:MAX_CHARS]), details(b[:MAX_CHARS])
    out = []
    if da.values and db.values and da.values != db.values and _same_slot(da, db):
        out.append(NUMBER)
    if da.dates and db.dates and da.dates != db.dates:
        out.append(DATE)
    if (da.names - db.names - db.words and db.names - da.names - da.words) \
            or _swapped_lead(da, db):
        out.append(NAME)
    if (da.negations % 2) != (db.negations % 2):
        out.append(NEGATION)
    return out
