"""Stored text as a model may read it: the one function every stored string passes
through before it reaches a model, wherever it is rendered (the prompt, reminders, the
re-examination prompt, MCP tool results, the MEMORY.md document).

:func:`shown` normalises first, then escapes:

1. look-alike brackets, slashes and bars (fullwidth, small and angle-quotation
   forms ...) become the ASCII characters they imitate, so the tag rule sees them as what they are;
2. format characters (Unicode category Cf: zero-width spaces and joiners, the soft
   hyphen, byte-order marks, bidirectional controls, tag characters), variation
   selectors that hide data, and combining marks on punctuation or on nothing are removed
   (a joiner between two letters of a script that needs it stays); every other space
   character is a plain space;
3. turn markers at the start of a line (``Human:``, ``Assistant:``, ``[INST]`` ...),
   chat-template tokens and imitations of the marks the service puts after a row
   (``[person ana, ...]``, ``[archival, ...]``) are neutralised with a backslash;
4. markdown images and links become inert text with their URL shown
   (``![x](https://h/p)`` → ``image x (https://h/p)``), so no chat window fetches one;
5. a ``<`` that could close a tag, open a comment, a directive, a template token, a
   role, fence or fetching HTML tag is written as the entity ``&lt;``.

:func:`inline` then keeps a text on one line, and :func:`lines` keeps a core block's
lines, none reading as a heading, an underline or a code fence.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Characters that imitate the ASCII ones the tag, structure and template rules look
# for. Fullwidth and small forms, angle quotation marks, mathematical and CJK angle
# brackets, Canadian syllabics and modifier arrows that read as ``<`` and ``>``.
_LOOK_ALIKES = str.maketrans(
    {
        **dict.fromkeys("\uff1c\ufe64\u2039\u2329\u3008\u27e8\u276c\u276e", "<"),
        **dict.fromkeys("\u2770\u02c2\u02f1\u1438\u29fc\ufe3f\u2991", "<"),
        **dict.fromkeys("\uff1e\ufe65\u203a\u232a\u3009\u27e9\u276d\u276f", ">"),
        **dict.fromkeys("\u2771\u02c3\u02f2\u1433\u29fd\ufe40\u2992", ">"),
        **dict.fromkeys("\uff0f\u2215\u2044\u29f8\u2571", "/"),
        **dict.fromkeys("\uff5c\u2223\u01c0\uffe8", "|"),
        **dict.fromkeys("\uff03", "#"),
        **dict.fromkeys("\uff40", "`"),
        **dict.fromkeys("\uff3b", "["),
        **dict.fromkeys("\uff3d", "]"),
        **dict.fromkeys("\uff01", "!"),
    }
)
# Characters that show nothing, or a blank, but are not format characters: Hangul
# fillers, the braille blank, and the variation selectors (all but the two that choose
# text or emoji presentation), which can carry hidden bytes.
_INVISIBLE = re.compile("[\u115f\u1160\u3164\uffa0\u2800\u180e\ufe00-\ufe0d\U000e0100-\U000e01ef]")
_JOINERS = "\u200c\u200d"
_TURN_WORDS = "human|assistant|user|system|ai|model|developer|tool|bot|h|a"
# A turn marker at the start of a line: ``Human:``, ``### Assistant:`` (the heading
# is escaped apart), ``[INST]``, ``<<SYS>>``.
_TURN_MARKER = re.compile(
    rf"^([ \t]*)(?=(?:(?:{_TURN_WORDS})[ \t]*:|\[/?(?:inst|sys)\]))",
    re.IGNORECASE | re.MULTILINE,
)
# Template tokens anywhere: ``[INST]``, ``[/INST]``, ``[SYS]``; the angle-bracket ones
# (``<<SYS>>``, ``<|im_start|>``, ``<s>``, ``<start_of_turn>``) are the tag rule's.
_TEMPLATE_TOKEN = re.compile(r"(?<!\\)\[(?=/?(?:inst|sys)\])", re.IGNORECASE)
# A bracket that opens what reads as one of the service's own marks, which say who
# stated a row or where a line came from (render/prompt.py), or the fields an MCP
# result gives an item (``[agent · manual]``, ``[0.783 · agent memory …]``, a decision's
# ``[resolved · conviction 9]``): stored text
# never makes one, so it cannot pass an agent's words off as a person's.
_MARK_IMITATION = re.compile(
    r"(?<!\\)\[(?=\s*(?:(?:person|stored|extracted|rule|agent|archival|director|workspace|user|open|resolved|expired)"
    r"\b|\d+(?:\.\d+)?\s*·))",
    re.IGNORECASE,
)
# ``![alt](url "title")`` and ``[text](url)``, with no bracket nested in the text.
_IMAGE_OR_LINK = re.compile(
    r"(!?)\[([^\[\]]*)\]\(\s*<?([^\s()<>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
)
# What would still form an image or a link once those are shown: an image opener, a
# link target after a bracket, a reference definition at the start of a line.
_LINK_REST = re.compile(r"!\[|\]\(|\]\[|^[ \t]*\[(?=[^\]\n]*\]:)", re.MULTILINE)
_ROLE_TAGS = (
    "system|user|assistant|human|ai|model|developer|tool|tools|function|functions|"
    "instructions?|prompt|context|documents?|memory|decision|im_start|im_end|"
    "s|sys|start_of_turn|end_of_turn|core_memory|"
    "img|image|a|iframe|frame|script|style|link|meta|base|object|embed|svg|math|"
    "video|audio|source|picture|form|input|button|textarea|template"
)
# A ``<`` that could close any tag (``</memory>``), open a comment, a directive, a
# template token (``<!--``, ``<?``, ``<|im_start|>``, ``<<SYS>>``), or a role, fence or
# fetching HTML tag. Other angle brackets stay, so ``--to <release>`` reads as written.
_TAG_OPENER = re.compile(rf"<(?=\s*(?:[/!?|<]|(?:{_ROLE_TAGS})\b))", re.IGNORECASE)
# Every character ``str.splitlines`` breaks a line at, and the other control characters.
_BREAKS_AND_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_BREAKS_AND_CONTROLS_BUT_TAB = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
# A line markdown would read as structure: a heading, a setext underline, a code fence.
_STRUCTURE_LINE = re.compile(r"^([ \t]{0,3})(#|=+[ \t]*$|-+[ \t]*$|`{3,}|~{3,})")
# Plain ASCII text needs none of the rules when it holds none of these.
_ASCII_RISK = re.compile(rf"[<\[]|^[ \t]*(?:{_TURN_WORDS})[ \t]*:", re.IGNORECASE | re.MULTILINE)
# One-line text never starts a line where it is rendered (a list item's marker, a
# label, a field name comes first): only brackets can matter in it.
_ASCII_RISK_INLINE = re.compile(r"[<\[]")


def shown(text: str) -> str:
    """``text`` normalised and escaped (steps 1 to 5 of the module), its line breaks
    left where they are."""
    if not text.isascii():
        return _escaped(_normalised(text))
    return _escaped(text) if _ASCII_RISK.search(text) else text


def normalised(text: str) -> str:
    """``text`` as a model reads it, nothing escaped yet: steps 1 and 2 of the module."""
    return text if text.isascii() else _normalised(text)


# A prompt shows the same keys, values, names and days render after render: the texts
# of at most _REMEMBERED_CHARS are kept as rendered, up to _REMEMBERED of them.
_REMEMBERED_CHARS = 512
_REMEMBERED = 8192


def inline(text: str) -> str:
    """Stored text as a run of words on one line: every line break and control
    character becomes a space, runs of spaces one space, then :func:`shown` but for its
    turn markers (one-line text never starts a line where it is rendered: a list item's
    marker or a label comes first, so ``User: Ana`` stays as written)."""
    return _inline_kept(text) if len(text) <= _REMEMBERED_CHARS else _inline(text)


def _inline(text: str) -> str:
    if text.isascii():
        if not text.isprintable() or text[:1] == " " or text[-1:] == " " or "  " in text:
            text = " ".join(_BREAKS_AND_CONTROLS.sub(" ", text).split())
        if not _ASCII_RISK_INLINE.search(text):
            return text  # most text: as it is
        return _escaped(text, line_starts=False)
    text = _normalised(_BREAKS_AND_CONTROLS.sub(" ", text))
    return _escaped(" ".join(text.split()), line_starts=False)


_inline_kept = lru_cache(maxsize=_REMEMBERED)(_inline)


# A core block is rendered again at every render until it is written: kept as rendered.
_BLOCKS_REMEMBERED = 1024
_BLOCK_REMEMBERED_CHARS = 8192


def lines(text: str) -> str:
    """Stored multi-line text (a core block) with its lines kept, each one data: no
    line reads as a heading, an underline or a code fence (then :func:`shown`)."""
    return _lines_kept(text) if len(text) <= _BLOCK_REMEMBERED_CHARS else _lines(text)


def _lines(text: str) -> str:
    return "\n".join(line_views(text)).strip("\n")


def line_views(text: str) -> list[str]:
    """Each line of ``text`` (as ``str.splitlines`` breaks it) as :func:`lines` shows
    it, one for one: where a passage of what is shown stands in what is stored."""
    kept = []
    for line in text.splitlines():
        line = shown(_BREAKS_AND_CONTROLS_BUT_TAB.sub(" ", line))
        kept.append(_STRUCTURE_LINE.sub(r"\1\\\2", line.rstrip()))
    return kept


_lines_kept = lru_cache(maxsize=_BLOCKS_REMEMBERED)(_lines)


def _normalised(text: str) -> str:
    """Steps 1 and 2: look-alikes as ASCII; without format characters, hiding variation
    selectors and combining marks on punctuation; every space plain. A joiner stays
    between two non-ASCII letters or symbols: scripts and emoji sequences need it."""
    chars = _INVISIBLE.sub("", text.translate(_LOOK_ALIKES))
    out: list[str] = []
    for n, ch in enumerate(chars):
        category = unicodedata.category(ch)
        if category == "Cf":
            if ch in _JOINERS and out and not out[-1].isascii() and _wide(chars[n + 1 : n + 2]):
                out.append(ch)
            continue
        if category in ("Mn", "Me") and (not out or (out[-1].isascii() and not out[-1].isalnum())):
            continue
        out.append(" " if category == "Zs" else ch)
    return "".join(out)


def _wide(ch: str) -> bool:
    """Whether ``ch`` is a non-ASCII character that is not a format character."""
    return bool(ch) and not ch.isascii() and unicodedata.category(ch) != "Cf"


def _escaped(text: str, *, line_starts: bool = True) -> str:
    """Steps 3 to 5: turn markers and template tokens, images and links, tags."""
    if line_starts:  # a turn marker starts a turn only at the start of a line
        text = _TURN_MARKER.sub(r"\1\\", text)
    text = _TEMPLATE_TOKEN.sub(r"\\[", text)
    text = _IMAGE_OR_LINK.sub(_inert, text)
    text = _LINK_REST.sub(_escaped_link, text)
    text = _MARK_IMITATION.sub(r"\\[", text)  # after links: theirs are gone by now
    return _TAG_OPENER.sub("&lt;", text)


def _inert(found: re.Match[str]) -> str:
    image, words, url = found.group(1), found.group(2), found.group(3)
    words = " ".join(words.split())
    if image:
        return f"image {words} ({url})" if words else f"image ({url})"
    return f"{words} ({url})" if words else f"({url})"


def _escaped_link(found: re.Match[str]) -> str:
    said = found.group(0)
    if said.endswith("["):
        return said[:-1] + "\\["
    return said[0] + "\\" + said[1]
