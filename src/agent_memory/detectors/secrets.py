"""Secret detection for every write path: memory points at credentials, never holds them.

Known credential formats come from ``detect-secrets`` (its pattern detectors, not its
entropy scanners, which flag every hash and UUID) and from our own list of provider
key formats. On top of those, the shapes people paste into notes:

- a value given to a credential-named setting (``DATABASE_PASSWORD=…``,
  ``"api_key": "…"``, ``HEROKU_API_KEY=<uuid>``, ``X-Api-Key: …``);
- a password in prose (``the prod DB password is …``) or on a command line
  (``mysql -p…``, ``curl -u user:…``, ``--password …``);
- ``Authorization`` headers (``Basic``, ``Bearer``, ``Token``) and bearer tokens;
- a password in a URL, also with an empty user (``redis://:…@host``);
- private key blocks, and long random-looking tokens next to a credential word.

What only points at a secret is let through: references and templates (``${X}``,
``$X``, ``%X%``, ``{{ secrets.X }}``, ``os.environ[…]``, ``op://…``), placeholders
(``<password>``, ``****``, ``xxx``, ``...``, ``changeme``, ``[REDACTED:…]``), and
identifiers that look random but are not credentials: git SHAs, UUIDs, hex and SRI
digests, IPFS CIDs, ids with a type prefix (``user_…``, ``msg_…``), path segments of
URLs (document ids), paging cursors, and base64 of ordinary text.

Every pattern is linear: bounded quantifiers, no nested repetition, and the code
around them looks at bounded windows only. The few detect-secrets patterns that
backtrack without bound run in bounded form (see ``_REPLACED_PATTERNS`` and
``_bounded``). :func:`redact_secrets` replaces each finding with ``[REDACTED:KIND]``.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import ahocorasick
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector

from agent_memory.detectors import credentials

# The kinds of credential known by their class, named here beside the others.
from agent_memory.detectors.credentials import ACCESS_CODE as ACCESS_CODE
from agent_memory.detectors.credentials import BANK_ACCOUNT as BANK_ACCOUNT
from agent_memory.detectors.credentials import NATIONAL_ID as NATIONAL_ID
from agent_memory.detectors.credentials import PAYMENT_CARD as PAYMENT_CARD
from agent_memory.detectors.credentials import RECOVERY_PHRASE as RECOVERY_PHRASE
from agent_memory.detectors.credentials import fold

# detect-secrets detectors that say nothing about secrets in free text.
_IGNORED_DETECTORS = {"IPPublicDetector"}

# Scanning takes up to a millisecond per 1,000 characters: longer texts are scanned on
# a worker thread, so the event loop goes on serving other calls.
OFF_LOOP_CHARS = 2000

PROVIDER_API_KEY = "PROVIDER_API_KEY"
PRIVATE_KEY = "PRIVATE_KEY"
BASIC_AUTH_HEADER = "BASIC_AUTH_HEADER"
BEARER_TOKEN = "BEARER_TOKEN"
PASSWORD_IN_URL = "PASSWORD_IN_URL"
PASSWORD = "PASSWORD"
SECRET_ASSIGNMENT = "SECRET_ASSIGNMENT"
HIGH_ENTROPY_TOKEN = "HIGH_ENTROPY_TOKEN"


@dataclass(frozen=True)
class SecretFinding:
    """What kind of secret was found; never the secret itself."""

    kind: str


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    kind: str


# -- known formats ------------------------------------------------------------------------

_PROVIDER_KEYS = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"sk-ant-[A-Za-z0-9_\-]{20,256}"  # Anthropic
    r"|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,256}"  # OpenAI
    r"|AIza[0-9A-Za-z_\-]{35}"  # Google API keys
    r"|ya29\.[0-9A-Za-z_\-]{20,512}"  # Google OAuth access tokens
    r"|GOCSPX-[0-9A-Za-z_\-]{24,40}"  # Google OAuth client secrets
    r"|hf_[A-Za-z0-9]{30,64}"  # Hugging Face
    r"|xox[abposre]-[A-Za-z0-9\-]{10,256}"  # Slack
    r"|xapp-\d-[A-Za-z0-9\-]{10,256}"
    r"|gl(?:pat|dt|ft|rt|soat|cbt)-[A-Za-z0-9_\-]{20,64}"  # GitLab
    r"|gh[pousr]_[A-Za-z0-9]{36,255}"  # GitHub
    r"|github_pat_[A-Za-z0-9_]{60,255}"
    r"|[rs]k_(?:live|test)_[0-9A-Za-z]{20,255}"  # Stripe secret and restricted keys
    r"|whsec_[A-Za-z0-9+/=]{24,128}"  # webhook signing secrets
    r"|npm_[A-Za-z0-9]{36}"  # npm
    r"|SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,64}"  # SendGrid
    r"|SK[0-9a-fA-F]{32}"  # Twilio API keys
    r"|key-[0-9a-f]{32}"  # Mailgun
    r"|do[opr]_v1_[0-9a-f]{64}"  # DigitalOcean
    r"|shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}"  # Shopify
    r"|dapi[0-9a-f]{32}"  # Databricks
    r"|lin_api_[A-Za-z0-9]{40}"  # Linear
    r"|PMAK-[0-9a-f]{24}-[0-9a-f]{34}"  # Postman
    r"|AGE-SECRET-KEY-1[0-9A-Z]{58}"  # age
    r"|gsk_[A-Za-z0-9]{40,64}"  # Groq
    r"|r8_[A-Za-z0-9]{37}"  # Replicate
    r"|xai-[A-Za-z0-9]{40,128}"  # xAI
    r"|pplx-[A-Za-z0-9]{40,64}"  # Perplexity
    r"|dp\.(?:st|sa|ct|pt)\.[A-Za-z0-9_\-]{32,64}"  # Doppler
    r"|https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{5,30}/[\w\-]{30,100}"
    r")"
)
_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[^\-\"]|-(?!----)){0,16384}"
    r"(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----)?"
)

# -- headers, URLs, command lines -----------------------------------------------------------

_AUTHORIZATION = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?"
    r"(?:(?P<scheme>basic|bearer|token|apikey|api-key|sso-key|key)[ \t]{1,4})?"
    r"(?P<value>[^\s\"',;]{1,2048})"
)
_BASIC = re.compile(r"\b[Bb]asic[ \t]{1,4}(?P<value>[A-Za-z0-9+/]{8,1024}={0,2})(?![\w+/=])")
_BEARER = re.compile(r"(?i)\bbearer[ \t]{1,4}(?P<value>[A-Za-z0-9\-._~+/]{16,2048}=*)")
# Bounded scheme and parts: an unbounded scheme made this quadratic on long words.
_PASSWORD_IN_URL = re.compile(
    r"(?i)\b[a-z][a-z0-9+.\-]{0,31}://[^\s:/@?#\"'<>]{0,256}:(?P<value>[^\s@/?#\"'<>]{1,256})@"
)
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{0,31}://[^\s\"'<>`]{1,4096}")
_CURL_USER = re.compile(
    r"\bcurl\b[^\n]{0,256}?[ \t](?:-u|--user|--proxy-user)[ \t=]{0,4}[\"']?"
    r"[^\s:\"']{0,128}:(?P<value>[^\s\"']{1,256})"
)
_MYSQL_PASSWORD = re.compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b"
    r"[^\n]{0,256}?[ \t]-p[\"']?(?P<value>[^\s\"'\-][^\s\"']{0,255})"
)
_SSHPASS = re.compile(r"\bsshpass[ \t]{1,4}-p[ \t]{0,4}[\"']?(?P<value>[^\s\"']{1,256})")
_PASSWORD_FLAG = re.compile(
    r"(?i)(?<![\w\-])--?(?:[a-z]{1,20}-)?"
    r"(?P<word>password|passwd|pass|pwd|token|secret|api-key|apikey|access-key|secret-key)"
    r"[ \t]{1,4}[\"']?(?P<value>[^\s\"'\-][^\s\"']{0,255})"
)

# -- credential names and prose --------------------------------------------------------------

_NAME_VALUE = re.compile(
    r"(?<![\w.:/\\@])(?P<name>[A-Za-z_][\w.\-]{0,63})[\"']?(?P<before>[ \t]{0,4})"
    r"(?P<sep>:=|=>|==|=|:|->)(?P<after>[ \t]{0,4})"
    r"(?=(?P<value>\"[^\"\n]{0,256}\"|'[^'\n]{0,256}'|`[^`\n]{0,256}`|[^\s\"'`;]{1,256}))"
)
# The parts of a credential named in prose, then given. What it is for ("... for the
# NAS", "... of the admin panel"), and what stands between the name and the value: a
# mark (a colon, an equals sign, a dash) or "is" / "was now".
_FOR_WHAT = r"(?:[ \t]{1,4}(?:for|of|on|to|at)(?:[ \t]{1,4}[^\s]{1,64}){1,3})?"
_MARK = r"[ \t]{0,4}(?::|=|\u2014|\u2013)[ \t]{0,4}"
_IS = r"[ \t]{1,4}(?:is|was)(?:[ \t]{1,4}now)?[ \t]{1,4}"
_PASSWORD_PROSE = re.compile(
    r"(?i)\b(?:password|passwd|passphrase|passcode|pwd|pw)\b"
    + _FOR_WHAT
    + r"(?:[ \t]{0,4}(?::|=|->|=>|\u2014|\u2013)[ \t]{0,4}|[ \t]{1,4}-{1,2}[ \t]{1,4}"
    r"|[ \t]{1,4}(?:(?:(?:is|was|got|has[ \t]{1,4}been)[ \t]{1,4})?"
    r"(?:set|changed|reset|updated|rotated)[ \t]{1,4}to[ \t]{1,4}"
    r"|(?:is|was)(?:[ \t]{1,4}now)?[ \t]{1,4}|(?:now|became)[ \t]{1,4})?)"
    r"(?=(?P<value>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|`[^`\n]{1,128}`|[^\s\"'`]{1,128}))"
)
# A passphrase given in words: "passphrase is correct horse battery staple".
_PASSPHRASE_PROSE = re.compile(
    r"(?i)\bpass[ \t\-]?phrase\b"
    + _FOR_WHAT
    + f"(?:{_MARK}|{_IS})"
    + r"(?P<value>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[A-Za-z]{2,24}(?:[ \t][A-Za-z]{2,24}){2,9})"
)
# A PIN given: "my pin code is 4821", "PIN: 3307".
_PIN_PROSE = re.compile(
    r"(?i)\bpin(?:[ \t]?(?:code|number))?\b"
    + _FOR_WHAT
    + f"(?:{_MARK}|{_IS})"
    + r"(?P<value>\d{4,8})(?![\w\-]|[.,]\d)"
)
# A user and password given together after a login word: "login as admin / hunter2",
# "credentials: admin/Qwerty!234", "sign in with kiosk:Lantern-2024".
_LOGIN_PAIR = re.compile(
    r"(?i)\b(?:log[ \t\-]?(?:in|on)|sign[ \t\-]?in|credentials|creds)\b"
    r"(?:[ \t]{1,4}(?:as|is|are|with))?[ \t]{0,4}[:=]?[ \t]{0,4}"
    r"(?P<user>[\w.@+\-]{1,64})[ \t]{0,4}[/:][ \t]{0,4}"
    r"(?=(?P<value>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"'`]{1,128}))"
)
# A long random value right after a key or token word, with no "is" or colon between
# ("api token 5f4dcc3b...", "use the key 7fb2c0d1... for the API").
_NAMED_TOKEN = re.compile(
    r"(?i)\b(?:token|secret|key)\b"
    r"(?:[ \t]{0,4}[:=][ \t]{0,4}|[ \t]{1,4}(?:is|was)[ \t]{1,4}|[ \t]{1,4})"
    r"(?P<value>[A-Za-z0-9+/_\-]{24,512}={0,2})(?![\w+/=])"
)
# The word before a key or token word (its owner: "signing key", "public key").
_OWNER_BEFORE = re.compile(r"(\w{1,32})[ \t_\-]$")
# Whose key is no secret: a public key is shared, a primary or foreign key names a column.
_NOT_SECRET_KEYS = frozenset(
    ["public", "publishable", "primary", "foreign", "sort", "partition", "host", "ssh", "gpg"]
)
# Words a spoken password is not: what "the password is ..." goes on to say about one.
_NOT_A_PASSWORD = frozenset(
    """
    required needed missing wrong incorrect invalid expired empty blank correct valid
    weak strong mandatory optional secret private shared different same unknown known
    ignored disabled enabled visible hidden encrypted hashed stored saved managed changed
    rotated generated temporary permanent important sensitive forgotten complicated
    """.split()  # noqa: SIM905
)
# Words that join a sentence, which a passphrase of words would not hold.
_FUNCTION_WORDS = frozenset(
    """
    the a an in on at of to for from with by is are was were be been being this that
    these those it its our your my his her their and or but not no as into onto under
    over than then there here when where which who what how why written stored kept
    saved taped printed posted shared sent given
    """.split()  # noqa: SIM905
)
_ENGLISH_ENDINGS = ("ed", "ing", "able", "ible", "ly", "ful", "less", "ive", "ous", "ent", "ant")
_TOKEN_PROSE = re.compile(
    r"(?i)\b(?:token|secret|(?:api|access|secret|private|auth|signing|master)[ \t_\-]?key"
    r"|client[ \t_\-]?secret)\b"
    r"(?:[ \t]{1,4}(?:for|of|on|to)(?:[ \t]{1,4}[^\s]{1,64}){1,3})?"
    r"(?:[ \t]{0,4}[:=][ \t]{0,4}|[ \t]{1,4}(?:is|was)[ \t]{1,4}(?:now[ \t]{1,4})?)"
    r"(?=(?P<value>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'`]{1,256}))"
)

# Text a credential-named setting holds (lowercase): without one, no name can qualify.
_NAME_GATE = ("pass", "pw", "secret", "token", "key", "cred", "sig", "sas", "pat", "cookie")
_CURSOR_BEFORE = re.compile(r"(?:page|next|sync)[ _\-]$")  # a paging cursor, not a token
_NAME_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_PASSWORD_WORDS = {"password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw"}
# Words run together in one name: PGPASSWORD, CLIENTSECRET, SLACKTOKEN.
_PASSWORD_ENDINGS = ("password", "passwd", "passphrase")
_SECRET_ENDINGS = ("secret", "token", "apikey")
_SECRET_WORDS = frozenset(
    """
    secret token apikey credential credentials creds authtoken accesstoken refreshtoken
    clientsecret privatekey secretkey accesskey pat sas sig signature cookie
    """.split()  # noqa: SIM905
)
# "key" is a credential only after one of these ("api_key", "AccountKey", "x-api-key").
_KEY_OWNERS = frozenset(
    """
    api access secret private auth master signing sign encryption enc client app
    application license account service subscription admin deploy ssh webhook shared
    storage consumer
    """.split()  # noqa: SIM905
)
# A credential word followed by one of these names something about the credential.
_QUALIFIERS = frozenset(
    """
    id ids name names type types file files path dir env var variable ref reference arn
    url uri endpoint host length len size count limit limits ttl expiry expires
    expiration timeout age lifetime policy rotation hint prompt label field param
    header prefix suffix format pattern regex hash salt digest algorithm algo store
    source provider location manager enabled required version scope scopes usage used
    budget index encoding mode kind class strength mask masked min max rate at
    """.split()  # noqa: SIM905
)
# A setting whose name holds one of these is about credentials, not one of them.
_NOT_CREDENTIAL = frozenset(
    """
    max min num input output total is has show use enable disable allow require forgot
    validate verify check hide page next continuation sync cancellation resume
    pagination eos bos pad unk sep cls special
    """.split()  # noqa: SIM905
)

# -- placeholders and references ------------------------------------------------------------

_PLACEHOLDER_WORDS = frozenset(
    """
    changeme change_me change-me changeit password passwd pass secret token apikey
    api_key redacted removed hidden masked placeholder example sample dummy fake none
    null nil undefined empty todo tbd n/a unset notset true false yes no on off
    required optional enabled disabled str string bytes int bool secretstr secretbytes
    any object mypassword yourpassword foobar
    """.split()  # noqa: SIM905
)
_PLACEHOLDER_MARKS = re.compile(
    r"\$\{|\$\(|\{\{|\{%|%\(|[*•●]{3}|[xX]{4}|\.\.\.|…|<[^<>\s]{1,64}>"
    r"|(?i:\bexample\b|\byour[_\-]|_here\b|^your|^my_|redacted|\binsert[_\- ]|\breplace[_\- ])"
)
# A shell, batch or format-string variable standing for the value: $X, %X%, %s.
_VARIABLE = re.compile(r"\$[A-Za-z_]\w{0,63}|%\w{1,64}%|%[sd]|%\(\w{1,64}\)s")
_MASK = re.compile(r"[xX*•●.#_\-]{1,64}")
_REFERENCE = re.compile(
    r"(?i)(?:os\.environ|os\.getenv|getenv\b|process\.env|import\.meta\.env|env\(|ENV\[|"
    r"secrets?\.|vault:|op://|arn:aws:(?:secretsmanager|ssm)|!vault|ssm:|sm://|"
    r"gcp-secret|keyvault|@Microsoft\.KeyVault|/run/secrets/|file:|keyring\b)"
)
_CODE_EXPRESSION = re.compile(r"[A-Za-z_][\w.]{0,127}[ \t]?[\[(]")
_DOTTED_ATTRIBUTE = re.compile(r"[A-Za-z_]\w{0,63}(?:\.[A-Za-z_]\w{0,63}){1,8}")
# Capitalised words joined by dots, with digits: a password as people make them
# (``Lavanda.Otok21``), not an attribute path (``settings.db_password``).
_DOTTED_WORDS = re.compile(r"(?=.*\d)[A-Z][a-z]{2,20}\d*(?:\.[A-Z][a-z]{2,20}\d*){1,3}")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]{0,63}(?:_[A-Z0-9]{1,63}){1,12}")
_VERSION = re.compile(r"v?\d{1,6}(?:\.\d{1,6}){1,4}(?:[\-+][\w.\-]{1,32})?")
_NUMBER = re.compile(r"[\d.,_:]{1,16}")
_ASSIGNED_MIN_CHARS = 5
_DIGIT = re.compile(r"\d")
_DIGIT_OR_DASH = re.compile(r"[\d\-]")
_LETTER = re.compile(r"[^\W\d_]")
_LOWER = re.compile(r"[a-z]")
_UPPER = re.compile(r"[A-Z]")
_SYMBOL = re.compile(r"[\W_]")
_SPACE = re.compile(r"\s")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9+/=_\-.~:]{16,256}")

# -- random-looking tokens -------------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z0-9+/_\-.~]{24,4096}={0,2}")
_HEX = re.compile(r"(?:0x)?[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DIGEST_PREFIX = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)|sha3-\d{3}|md5|blake2[bs]?)[\-:_=]")
_IPFS_CID = re.compile(r"Qm[1-9A-HJ-NP-Za-km-z]{44}|baf[ykz][a-z2-7]{40,100}")
# Typed ids: Clerk, Stripe objects, model providers' message and request ids.
_ID_PREFIX = re.compile(
    r"(?:user|org|sess|sms|inv|client|cus|acct|prod|price|sub|pi|pm|ch|evt|in|txn|ord|msg|req"
    r"|run|job|file|img|doc|asst|thread|batch|ft|ftjob|vs|toolu|srvtoolu|call|resp|chatcmpl"
    r"|cmpl|span|trace|tx|node|item|task|ws|agent|conv|prj|proj|team|usr|ent|obj|rec|dpl)[_\-]"
    r"[A-Za-z0-9]{8,64}"
    # Publishable keys (Stripe, Clerk): meant for the browser, public by design.
    r"|pk_(?:test|live)_[A-Za-z0-9]{8,128}"
)
_CONTEXT = re.compile(
    r"(?i)(?P<id>(?:page|next|continuation|sync)[ _\-]?token|public[ _\-]?key|publishable"
    r"|cursor|\bids?\b|uids?\b|uuid|guid"
    r"|\busers?\b|user[ _\-]?id|\bdoc(?:ument)?s?\b|\bfile\b|commit|\bsha\b|hash|digest|checksum"
    r"|\bcid\b|ipfs|integrity|etag|revision|\brev\b|\bbuild\b|object|record|trace|\bspan\b"
    r"|\bimage\b|\bslug\b|base64,)"
    r"|(?P<cred>pass(?:word|wd|phrase|code)?|\bpwd\b|secret|token|api[ _\-]?key|apikey"
    r"|access[ _\-]?key|private[ _\-]?key|credential|\bauth\b|authorization|bearer|cookie"
    r"|session|signature|\bsig\b|\bkey\b)"
)
_PUBLIC = re.compile(
    r"-----BEGIN (?:[A-Z0-9 ]{0,24}PUBLIC KEY(?: BLOCK)?|CERTIFICATE(?: REQUEST)?"
    r"|PGP SIGNATURE|PGP MESSAGE)-----(?:[^\-]|-(?!----)){0,65536}"
    r"|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d{3}|sk-ssh-ed25519@openssh\.com)"
    r"[ \t]{1,4}AAAA[0-9A-Za-z+/]{16,8192}={0,3}"
)
_CONTEXT_CHARS = 48
_HIGH_ENTROPY_BITS = 4.0
_SEQUENCES = ("abcdefgh", "01234567", "qwertyui")
_UNPROMPTED_MIN_CHARS = 32
_LEFT_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+")
_RIGHT_TOKEN_CHARS = _LEFT_TOKEN_CHARS | frozenset("/.=~")
_EXTEND_MAX = 512
_SURROUNDING = frozenset(" \t\r\n\"'=:")


@dataclass(frozen=True)
class _Detector:
    kind: str
    detector: RegexBasedDetector
    patterns: tuple[tuple[re.Pattern[str], bool], ...]  # (pattern, keyword windows only)
    confirms: bool  # its own ``analyze_string`` must confirm a match
    gate: tuple[tuple[str, ...], tuple[str, ...]] | None  # see _GATES

    def runs_on(self, text: str, lower: str) -> bool:
        if self.gate is None:
            return True
        for word in self.gate[0]:
            if word in text:
                return True
        return any(word in lower for word in self.gate[1])


# detect-secrets patterns replaced by bounded ones that find the same credentials. The
# JWT, OpenAI and npm patterns were quadratic on a repeated prefix (``eyJeyJ…``,
# ``sk-sk-…``, ``//a//a…``): a left boundary stops a new attempt at every repeat. The
# Artifactory ones started with an alternation tried at every position.
_REPLACED_PATTERNS = {
    "JwtTokenDetector": (
        r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-=]{1,4096}\.[A-Za-z0-9_\-=]{1,8192}\.?",
    ),
    "OpenAIDetector": (r"(?<![A-Za-z0-9_\-])sk-[A-Za-z0-9_\-]{0,128}T3BlbkFJ[A-Za-z0-9]{20}",),
    "ArtifactoryDetector": (
        r"(?<![^\s=:\"])AKC[a-zA-Z0-9]{10,}(?=\s|\"|$)",
        r"(?<![^\s=:\"])AP[\dABCDEF][a-zA-Z0-9]{8,}(?=\s|\"|$)",
    ),
    "NpmDetector": (
        r"//[^\s/]{1,256}(?:/[^\s/]{0,256}){0,8}/:_authToken=[ \t]{0,4}"
        r"(npm_[^\s\"']{1,256}|[A-Fa-f0-9\-]{36})",
    ),
}
# Text any match of a detector holds: (case-sensitive, lowercase) substrings, one of
# which must be in the text for the detector to run. Detectors not named always run.
_GATES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "AWSKeyDetector": (("A3T", "ABIA", "ACCA", "AKIA", "ASIA"), ("aws",)),
    "ArtifactoryDetector": (("AKC", "AP"), ()),
    "AzureStorageKeyDetector": (("AccountKey=",), ()),
    "BasicAuthDetector": (("://",), ()),
    "CloudantDetector": ((), ("key", "pw", "pass", "token", "cloudant")),
    "GitHubTokenDetector": (("gh",), ()),
    "GitLabTokenDetector": (("gl", "GR1348941"), ()),
    "IbmCloudIamDetector": ((), ("key", "pw", "pass", "token")),
    "IbmCosHmacDetector": ((), ("key",)),
    "JwtTokenDetector": (("eyJ",), ()),
    "MailchimpDetector": (("-us",), ()),
    "NpmDetector": (("_authToken",), ()),
    "OpenAIDetector": (("T3BlbkFJ",), ()),
    "PrivateKeyDetector": (("PRIVATE KEY", "PuTTY"), ()),
    "PypiTokenDetector": (("pypi-",), ()),
    "SendGridDetector": (("SG.",), ()),
    "SlackDetector": ((), ("xox", "hooks.slack.com")),
    "SoftlayerDetector": ((), ("key", "pw", "pass", "token", "softlayer")),
    "SquareOAuthDetector": (("sq0csp-",), ()),
    "StripeDetector": (("k_live_",), ()),
    "TelegramBotTokenDetector": ((":",), ()),
    "TwilioKeyDetector": (("AC", "SK"), ()),
}


# The keyword detectors (IBM, Cloudant, SoftLayer) match ``<prefix><keyword> = <value>``
# only: they run on windows around the keywords, not on the whole text.
_KEYWORD_ANCHORED = "(?:(?<=\\W)|(?<=^))"
_KEYWORDS = re.compile(r"key|pw|pass|token")
_KEYWORD_BEFORE = 48
_KEYWORD_AFTER = 200
_WHITESPACE = re.compile(r"\s")


def _bounded(regex: re.Pattern[str]) -> re.Pattern[str]:
    """The keyword detectors' separator, ``(?: *)(?:=|:|:=|=>| +|::)(?: *)``, tries every
    split of a run of spaces: cubic. At most eight spaces each side find the same
    assignments."""
    pattern = regex.pattern.replace("(?: *)", "(?: {0,8})").replace("| +|", "| {1,8}|")
    return regex if pattern == regex.pattern else re.compile(pattern, regex.flags)


@cache
def _detectors() -> tuple[_Detector, ...]:
    found: list[_Detector] = []
    classes: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()
    for secret_type, cls in sorted(classes.items()):
        name = cls.__name__
        if not issubclass(cls, RegexBasedDetector) or name in _IGNORED_DETECTORS:
            continue
        detector = cls()
        if name in _REPLACED_PATTERNS:
            regexes = [re.compile(p) for p in _REPLACED_PATTERNS[name]]
        else:
            regexes = [_bounded(r) for r in detector.denylist]
        patterns = tuple((r, r.pattern.startswith(_KEYWORD_ANCHORED)) for r in regexes)
        confirms = cls.analyze_string is not RegexBasedDetector.analyze_string
        found.append(_Detector(_kind(secret_type), detector, patterns, confirms, _GATES.get(name)))
    return tuple(found)


def _kind(secret_type: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", secret_type.upper()).strip("_")


# -- what every finding holds ----------------------------------------------------------------

# Every finding is a match of a pattern above, and each of those matches holds one of the
# triggers below: a literal every match of the pattern holds, found with ``in`` and then,
# where a pattern says more, checked there; or a run of 24 token characters, which every
# key of a fixed format and every random token is at least as long as. A text without one
# holds no secret, and the finders (a third of a millisecond for a note of a hundred
# characters, a millisecond for a core block) do not run on it: most notes are prose.
#
# Case-sensitive patterns are triggered in the text itself. The case-insensitive ones are
# triggered in the text folded to lowercase: with the four characters that such a
# pattern's ASCII letters also match (dotted and dotless i, long s, the kelvin sign)
# folded to those letters, every match of the pattern in the text is a match in the
# folded text of its trigger, written in lowercase.
_CASED_TRIGGERS: dict[str, str] = {
    # literal: what must match where it is ("" for the literal alone)
    "://": "",  # a password in a URL, a webhook, Basic auth in a URL
    "-----BEGIN": "",  # a private key block
    "xapp-": "",  # Slack app tokens, shorter than a token run
    "asic": r"[Bb]asic[ \t]{1,4}[A-Za-z0-9+/]{8}",
    "curl": r"curl\b",
    "mysql": "",
    "mariadb": "",
    "sshpass": "",
    # detect-secrets detectors
    "A3T": "",
    "ABIA": "",
    "ACCA": "",
    "AKIA": "",
    "ASIA": "",
    "AKC": r"AKC[a-zA-Z0-9]{10}",
    "AP": r"AP[\dABCDEF][a-zA-Z0-9]{8}",
    "AccountKey=": "",
    "eyJ": "",
    "_authToken=": "",
    "PRIVATE KEY": "",
    "PuTTY-User-Key-File-2": "",
    "sq0csp-": "",
}
# What follows a credential word in a setting's name: the rest of the name, then the
# mark before its value.
_NAME_TAIL = r"[\w.\-]{0,63}[\"']?[ \t]{0,4}(?::|=|->)"
_FOLDED_TRIGGERS: dict[str, str] = {
    # word: what must match where it is, in the folded text; each word of _NAME_GATE
    # may name a setting, the others are words of prose, headers and flags
    "pass": rf"pass(?:{_NAME_TAIL}|(?:word|wd|phrase|code)\b|[ \t\-]?phrase\b"
    r"|(?<=-pass)(?:word|wd)?[ \t])",
    "pw": rf"pw(?:{_NAME_TAIL}|d?\b)",
    "secret": rf"secret(?:{_NAME_TAIL}|\b|[ \t_\-]?key\b)",
    "token": rf"token(?:{_NAME_TAIL}|\b)",
    "key": f"key{_NAME_TAIL}",
    "cred": rf"cred(?:{_NAME_TAIL}|(?:entials|s)\b)",
    "sig": rf"sig(?:{_NAME_TAIL}|n[ \t\-]?in\b)",
    "sas": f"sas{_NAME_TAIL}",
    "pat": f"pat{_NAME_TAIL}",
    "cookie": f"cookie{_NAME_TAIL}",
    "pin": r"pin(?:[ \t]?(?:code|number))?\b",
    "log": r"log[ \t\-]?(?:in|on)\b",
    "api": r"api[ \t_\-]?key\b",
    "access": r"access[ \t_\-]?key\b",
    "private": r"private[ \t_\-]?key\b",
    "auth": r"auth[ \t_\-]?key\b",
    "signing": r"signing[ \t_\-]?key\b",
    "master": r"master[ \t_\-]?key\b",
    "client": r"client[ \t_\-]?secret\b",
    "authorization": "",
    "bearer": r"bearer[ \t]{1,4}[a-z0-9\-._~+/]{16}",
    "xox": "xox[abposre]-",
}
_TOKEN_RUN = 24
# The triggers of the finders of credentials by class (detectors/credentials.py): the words
# of the vocabulary, of national ids and of logins, looked for as their finders look for
# them (each only where its literal is in the folded text); the numbers their finders
# judge, looked for where digits are; and twelve words of one BIP-39 list in a row.
_SHAPE_TRIGGERS: tuple[Callable[[str], bool], ...] = (
    credentials.may_hold_number,
    credentials.may_hold_phrase,
)


# The triggers of each detect-secrets detector, by class name (TOKEN_RUN for the run).
# A detector not named here (a newer detect-secrets) turns the shortcut off.
TOKEN_RUN = "TOKEN_RUN"
DETECTOR_TRIGGERS: dict[str, tuple[str, ...]] = {
    "AWSKeyDetector": ("A3T", "ABIA", "ACCA", "AKIA", "ASIA", TOKEN_RUN),
    "ArtifactoryDetector": ("AKC", "AP"),
    "AzureStorageKeyDetector": ("AccountKey=",),
    "BasicAuthDetector": ("://",),
    "CloudantDetector": (TOKEN_RUN, "://"),
    "DiscordBotTokenDetector": (TOKEN_RUN,),
    "GitHubTokenDetector": (TOKEN_RUN,),
    "GitLabTokenDetector": (TOKEN_RUN,),
    "IbmCloudIamDetector": (TOKEN_RUN,),
    "IbmCosHmacDetector": (TOKEN_RUN,),
    "JwtTokenDetector": ("eyJ",),
    "MailchimpDetector": (TOKEN_RUN,),
    "NpmDetector": ("_authToken=",),
    "OpenAIDetector": (TOKEN_RUN,),
    "PrivateKeyDetector": ("PRIVATE KEY", "PuTTY-User-Key-File-2"),
    "PypiTokenDetector": (TOKEN_RUN,),
    "SendGridDetector": (TOKEN_RUN,),
    "SlackDetector": ("xox", "://"),
    "SoftlayerDetector": (TOKEN_RUN, "://"),
    "SquareOAuthDetector": ("sq0csp-",),
    "StripeDetector": (TOKEN_RUN,),
    "TelegramBotTokenDetector": (TOKEN_RUN,),
    "TwilioKeyDetector": (TOKEN_RUN,),
}


@dataclass(frozen=True)
class _Triggers:
    """One kind of trigger, compiled: its literals (in one Aho-Corasick automaton), and
    what must match where they are."""

    literals: Any
    checks: tuple[tuple[str, re.Pattern[str] | None], ...]

    @classmethod
    def of(cls, *triggers: Iterable[tuple[str, str]]) -> _Triggers:
        checks = tuple(
            (word, re.compile(p) if p else None) for pairs in triggers for word, p in pairs
        )
        automaton = ahocorasick.Automaton()
        for word, _ in checks:
            automaton.add_word(word, word)
        automaton.make_automaton()
        return cls(automaton, checks)

    def found_in(self, text: str) -> bool:
        # Most texts hold none of the literals: one pass of C for all of them first.
        present = {literal for _, literal in self.literals.iter(text)}
        if not present:
            return False
        tried: set[re.Pattern[str]] = set()
        for literal, pattern in self.checks:
            if literal not in present:
                continue
            if pattern is None:
                return True
            if pattern not in tried:  # one pattern stands behind many literals
                tried.add(pattern)
                if pattern.search(text) is not None:
                    return True
        return False


@cache
def _triggers() -> tuple[_Triggers, _Triggers] | None:
    """The cased and folded triggers, compiled; None when a detector has none."""
    if any(type(d.detector).__name__ not in DETECTOR_TRIGGERS for d in _detectors()):
        return None
    cased = _Triggers.of(_CASED_TRIGGERS.items())
    return cased, _Triggers.of(_FOLDED_TRIGGERS.items())


def may_hold_secret(text: str, lower: str | None = None) -> bool:
    """False only when no finder can find anything in ``text`` (``lower``: the text
    lowercased, when the caller has it)."""
    triggers = _triggers()
    if triggers is None:
        return True
    cased, folded_triggers = triggers
    if cased.found_in(text):
        return True
    lower = text.lower() if lower is None else lower
    # The finders read the text lowercased, the class finders folded: apart from ASCII
    # the two may differ (``İ`` lowercases to an ``i`` and a combining dot, which splits
    # a word in two), and the gate looks at both.
    for folded in (lower,) if text.isascii() else (fold(text), lower):
        if folded_triggers.found_in(folded) or credentials.may_hold_words(folded):
            return True
    if any(trigger(text) for trigger in _SHAPE_TRIGGERS):
        return True
    # A run of token characters holds no whitespace.
    return len(text) >= _TOKEN_RUN and max(map(len, text.split()), default=0) >= _TOKEN_RUN


# -- value judgements ------------------------------------------------------------------------


def _unquote(value: str) -> tuple[str, bool]:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        return value[1:-1], True
    return value, False


def _placeholder(value: str) -> bool:
    """A stand-in for a secret, not one: a template, a mask, a well-known filler word."""
    v = value.strip()
    if not v or v[0] in "{<[(" or _VARIABLE.fullmatch(v):
        return True
    if v.lower() in _PLACEHOLDER_WORDS or _MASK.fullmatch(v):
        return True
    return _PLACEHOLDER_MARKS.search(v) is not None


def _reference(value: str) -> bool:
    """Says where a secret lives, or names a variable holding one."""
    v = value.strip()
    if _REFERENCE.match(v) or _CODE_EXPRESSION.match(v):
        return True
    if "://" in v or v.startswith(("/", "~/", "./", "../")):
        return True
    if _ENV_NAME.fullmatch(v):
        return True
    if _DOTTED_ATTRIBUTE.fullmatch(v) and not _DOTTED_WORDS.fullmatch(v):
        return True
    # snake_case or CamelCase made of words, no digits: a variable, not a value. Words
    # joined by dashes are not a variable name (``Correct-Horse-Battery-Staple``).
    if _DIGIT_OR_DASH.search(v) or not ("_" in v or len(_NAME_PARTS.findall(v)) > 1):
        return False
    return _looks_like_identifier(v)


def _filler(value: str) -> bool:
    return _placeholder(value) or _reference(value)


def _trim(value: str) -> str:
    return value.rstrip(".,;:)]}>")


def _assigned_secret(value: str, sep: str, spaced: bool, rest: str) -> bool:
    """Whether ``value``, given to a credential-named setting, is a credential.

    Not one: a pointer or placeholder, a number, a version, a few words in quotes
    (``"a value"``) unless they read as a password, and a lone lowercase word that is
    prose or code: after a colon with more text after it on its line (``password: see
    the vault``), or after `` = `` (``secret = parts``; ``DB_PASS=kettle`` is a value).
    ``rest`` is what follows the value.
    """
    raw, quoted = _unquote(value)
    v = raw if quoted else _trim(raw)
    if len(v) < _ASSIGNED_MIN_CHARS or _filler(v) or (v != raw and _filler(raw)):
        return False
    if _NUMBER.fullmatch(v) or _VERSION.fullmatch(v):
        return False
    if quoted:
        return _SPACE.search(v) is None or _password_like(v)
    if v.isalpha() and v.islower() and sep == "=" and spaced:
        return False
    more = rest.lstrip(" \t")[:1] not in ("", "\n", "\r")
    return not (sep == ":" and v.isalpha() and more)


def _password_like(value: str) -> bool:
    """A value in prose that reads as a password: letters with digits, or mixed case with
    a symbol inside; never a placeholder, a reference, a version or a URL."""
    v, quoted = _unquote(value)
    if not quoted:
        v = _trim(v)
    if len(v) < 6 or not _LETTER.search(v) or _VERSION.fullmatch(v):
        return False
    if not _DIGIT.search(v):
        mixed_case = _LOWER.search(v) is not None and _UPPER.search(v) is not None
        if not (mixed_case and _SYMBOL.search(v, 1, len(v) - 1)):
            return False
    return not _filler(v)


def _spoken_password(value: str, rest: str) -> bool:
    """A password given as one word (``correcthorsebattery``): long, letters only, the
    end of its clause, and not a word that says something about a password."""
    v, quoted = _unquote(value)
    if not quoted:
        v = _trim(v)
    if len(v) < 8 or not v.isalpha() or not v.isascii() or v != value.strip("\"'`.,;"):
        return False
    lowered = v.lower()
    if lowered in _NOT_A_PASSWORD or lowered in _PLACEHOLDER_WORDS:
        return False
    if lowered.endswith(_ENGLISH_ENDINGS) and not quoted:
        return False
    return _ends_clause(rest)


def _ends_clause(rest: str) -> bool:
    """Whether the text after a value ends the clause it stands in: the end of the
    text or its line, punctuation, or an aside (`` (ask ops)``, `` - for now``)."""
    if rest[:1] in ("", "\n", "\r") or rest[:1] in ".,;:!?)":
        return True
    return rest.startswith((" (", " -", " \u2014", " \u2013"))


def _spoken_passphrase(value: str, rest: str) -> bool:
    """A passphrase given as words: quoted, or three or more plain words ending their
    clause, none of which joins a sentence (``written on the whiteboard`` does)."""
    v, quoted = _unquote(value)
    words = v.split()
    if quoted:
        return len(words) >= 2 and not _filler(v)
    if len(words) < 3 or any(w.lower() in _FUNCTION_WORDS for w in words):
        return False
    return _ends_clause(rest)


def _named_random(value: str) -> bool:
    """A value right after a key or token word that can only be a credential: 32 hex
    digits or more, or a long random-looking run."""
    v = value.rstrip("=")
    if _ID_PREFIX.fullmatch(v):
        return False
    if len(v) >= 32 and _HEX.fullmatch(v) and len(set(v.lower())) >= 8:
        return True
    return _random_looking(v) and not _filler(v) and not _encodes_text(v)


def _tokenish(value: str) -> bool:
    """A value in prose that reads as a key or token: one long run of token characters
    with digits, not a word or an identifier."""
    v, quoted = _unquote(value)
    if not quoted:
        v = _trim(v)
    if len(v) < 16 or not _TOKEN_CHARS.fullmatch(v) or not _DIGIT.search(v):
        return False
    if _ID_PREFIX.fullmatch(v) or _looks_like_identifier(v):
        return False
    return not _filler(v)


def _credential_name(name: str) -> str | None:
    """The kind a setting named ``name`` would hold a secret of, or None."""
    lowered = name.lower()
    if not any(word in lowered for word in _NAME_GATE):
        return None
    parts = [p.lower() for p in _NAME_PARTS.findall(name)]
    if not parts or _NOT_CREDENTIAL.intersection(parts):
        return None
    kind: str | None = None
    last = -1
    for i, part in enumerate(parts):
        if part in _PASSWORD_WORDS or part.endswith(_PASSWORD_ENDINGS):
            kind, last = PASSWORD, i
        elif (
            part in _SECRET_WORDS
            or part.endswith(_SECRET_ENDINGS)
            or (part == "key" and i > 0 and parts[i - 1] in _KEY_OWNERS)
        ):
            kind, last = kind or SECRET_ASSIGNMENT, i
    if kind is None:
        return None
    if any(p in _QUALIFIERS for p in parts[last + 1 :]):
        return None
    return kind


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _random_looking(core: str) -> bool:
    if len(core) < 24 or _HEX.fullmatch(core) or _UUID.search(core):
        return False
    if "." in core:
        parts = core.split(".")
        if not _DIGIT.search(parts[-1]) or all(_word_like(p) for p in parts):
            return False  # a dotted name (module.path.like_this, Enum.TYPE_INT32)
    if _looks_like_identifier(core) or _path_of_words(core):
        return False
    if any(run in core.lower() for run in _SEQUENCES):
        return False  # an alphabet or a keyboard row, written out
    if not (_LOWER.search(core) and _UPPER.search(core) and _DIGIT.search(core)):
        return False
    return _entropy(core) >= _HIGH_ENTROPY_BITS


def _looks_like_identifier(token: str) -> bool:
    """CamelCase or snake_case made of words (``OAuth2AuthorizationCodeFlow``): every
    lowercase run belongs to a word of three letters or more, acronyms and digit runs
    stay short, and most letters are in words of four or more (``abc123DEF456ghi`` is
    not made of words). Random tokens almost always break one of these."""
    parts = [p for p in re.split(r"[_\-]", token) if p]
    letters = in_long_words = 0
    for part in parts:
        if not part.isalnum() or not part.isascii():
            return False
        words = _NAME_PARTS.findall(part)
        for word in words:
            if word.isdigit():
                if len(word) > 4:
                    return False
                continue
            if word.isupper():
                if len(word) > 5:
                    return False
            elif len(word) < 3:
                return False
            letters += len(word)
            in_long_words += len(word) if len(word) >= 4 else 0
        if "".join(words) != part:
            return False
    return bool(parts) and 2 * in_long_words >= letters


def _word_like(part: str) -> bool:
    return (
        not part
        or part.islower()
        or part.isdigit()
        or _looks_like_identifier(part)
        or bool(_VERSION.fullmatch(part))
    )


def _path_of_words(token: str) -> bool:
    """A file or URL path whose every segment is a word or an identifier."""
    if "/" not in token:
        return False
    segments = [s for s in re.split(r"[/.]", token) if s]
    return all(
        s.islower() or s.isdigit() or _looks_like_identifier(s) or _VERSION.fullmatch(s)
        for s in segments
    )


# Two or more ``name=value`` fields, as a settings line or a query string has them.
_SETTINGS_FIELD = r"[A-Za-z_][\w.-]*=[^;&,=\s]*"
_SETTINGS_FIELDS = re.compile(rf"{_SETTINGS_FIELD}(?:[;&,]{_SETTINGS_FIELD})+[;&,]?")


def _encodes_text(token: str) -> bool:
    """Base64 of readable text that holds no secret of its own, e.g. an encoded fixture
    or settings line: the text it encodes is judged, not how random the encoding looks.
    Readable is words with spaces, or ``name=value`` fields; a bare printable run (an
    encoded password) is not."""
    padded = token + "=" * (-len(token) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            text = decode(padded.encode("ascii")).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            continue
        if text.isprintable() and (" " in text or _SETTINGS_FIELDS.fullmatch(text)):
            return not _spans(text)  # shorter than the token: the judging ends
    return False


def _decodes_to_credentials(value: str) -> bool:
    """Base64 of ``user:password``, as in a Basic authorization header."""
    padded = value + "=" * (-len(value) % 4)
    try:
        text = base64.b64decode(padded.encode("ascii"), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return ":" in text and text.isprintable()


def _context(text: str, start: int) -> str | None:
    """``"id"`` or ``"cred"``: what the nearest telling word before ``start`` (same
    line, a few words back) says the token there is."""
    line_start = text.rfind("\n", max(0, start - _CONTEXT_CHARS), start) + 1
    window = text[max(line_start, start - _CONTEXT_CHARS) : start]
    found: str | None = None
    for match in _CONTEXT.finditer(window):
        found = "id" if match.group("id") else "cred"
    return found


# -- span finders ----------------------------------------------------------------------------


def _extend(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow a matched credential to the whole token around it (a JWT's signature, a
    longer key than the pattern asked for)."""
    low = max(0, start - _EXTEND_MAX)
    while start > low and text[start - 1] in _LEFT_TOKEN_CHARS:
        start -= 1
    high = min(len(text), end + _EXTEND_MAX)
    while end < high and text[end] in _RIGHT_TOKEN_CHARS:
        end += 1
    while end > start + 1 and text[end - 1] in ".~":
        end -= 1
    return start, end


def _keyword_windows(text: str, lower: str) -> list[tuple[int, int]]:
    """Disjoint ranges around every credential keyword, each ending at whitespace: the
    only places a keyword-anchored detect-secrets pattern can match."""
    if len(lower) != len(text):  # lowercasing moved offsets: scan all of it
        return [(0, len(text))]
    windows: list[tuple[int, int]] = []
    for match in _KEYWORDS.finditer(lower):
        reach = match.end() + _KEYWORD_AFTER
        if windows and reach <= windows[-1][1]:
            continue
        start = max(0, match.start() - _KEYWORD_BEFORE)
        space = _WHITESPACE.search(text, max(reach, windows[-1][1] if windows else 0))
        end = space.start() if space else len(text)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], end)
        else:
            windows.append((start, end))
    return windows


def _detect_secrets_spans(text: str, lower: str) -> Iterator[_Span]:
    windows: list[tuple[int, int]] | None = None
    for d in _detectors():
        if not d.runs_on(text, lower):
            continue
        for regex, anchored in d.patterns:
            if anchored:
                windows = _keyword_windows(text, lower) if windows is None else windows
                matches: Iterator[re.Match[str]] = (
                    m for a, b in windows for m in regex.finditer(text, a, b)
                )
            else:
                matches = regex.finditer(text)
            for match in matches:
                groups = [i for i in range(1, (regex.groups or 0) + 1) if match.group(i)]
                for i in groups or [0]:
                    found = match.group(i)
                    if _placeholder(found):
                        continue
                    if d.confirms and not any(True for _ in d.detector.analyze_string(found)):
                        continue
                    if d.kind == "BASIC_AUTH_CREDENTIALS" and _reference(found):
                        continue
                    start, end = match.span(i)
                    while start < end and text[start] in _SURROUNDING:
                        start += 1
                    while end > start and text[end - 1] in _SURROUNDING:
                        end -= 1
                    yield _Span(*_extend(text, start, end), d.kind)


def _has(text: str, *words: str) -> bool:
    return any(w in text for w in words)


def _provider_spans(text: str, lower: str) -> Iterator[_Span]:
    for match in _PROVIDER_KEYS.finditer(text):
        if not _PLACEHOLDER_MARKS.search(match.group()):
            yield _Span(*_extend(text, *match.span()), PROVIDER_API_KEY)
    if "PRIVATE KEY" in text:
        for match in _PRIVATE_KEY_BLOCK.finditer(text):
            yield _Span(match.start(), match.end(), PRIVATE_KEY)


def _header_spans(text: str, lower: str) -> Iterator[_Span]:
    if "authorization" in lower:
        for match in _AUTHORIZATION.finditer(text):
            value = match.group("value")
            scheme = (match.group("scheme") or "").lower()
            if scheme:
                if _filler(value) or len(value) < 8 or _looks_like_identifier(value):
                    continue
            elif not _tokenish(value):
                continue
            kind = BASIC_AUTH_HEADER if scheme == "basic" else BEARER_TOKEN
            yield _Span(*match.span("value"), kind)
    if "asic" in text:
        for match in _BASIC.finditer(text):
            if _decodes_to_credentials(match.group("value")):
                yield _Span(*match.span("value"), BASIC_AUTH_HEADER)
    if "bearer" in lower:
        for match in _BEARER.finditer(text):
            value = match.group("value")
            if not (_filler(value) or _looks_like_identifier(value)):
                yield _Span(*match.span("value"), BEARER_TOKEN)


def _url_spans(text: str, lower: str) -> Iterator[_Span]:
    if "://" in text:
        for match in _PASSWORD_IN_URL.finditer(text):
            if not _filler(match.group("value")):
                yield _Span(*match.span("value"), PASSWORD_IN_URL)


def _command_line_spans(text: str, lower: str) -> Iterator[_Span]:
    for regex, word in ((_CURL_USER, "curl"), (_MYSQL_PASSWORD, "-p"), (_SSHPASS, "sshpass")):
        if word in text:
            for match in regex.finditer(text):
                if not _filler(match.group("value")):
                    yield _Span(*match.span("value"), PASSWORD)
    if "-" in text and _has(lower, "pass", "pwd", "token", "secret", "key"):
        for match in _PASSWORD_FLAG.finditer(text):
            value = match.group("value")
            word = match.group("word").lower()
            is_password = word.startswith("pass") or word == "pwd"
            if (_password_like(value) or _tokenish(value)) if is_password else _tokenish(value):
                yield _Span(*match.span("value"), PASSWORD if is_password else SECRET_ASSIGNMENT)


def _assignment_spans(text: str, lower: str) -> Iterator[_Span]:
    if not _has(lower, *_NAME_GATE):
        return
    # Each pattern's value is a lookahead, so a value that is no secret is searched
    # again for one of its own (``notes: DATABASE_PASSWORD=…``); a secret is stepped
    # over whole, which keeps repeated assignments linear.
    pos = 0
    while (match := _NAME_VALUE.search(text, pos)) is not None:
        pos = match.end()
        kind = _credential_name(match.group("name"))
        if kind is None:
            continue
        rest = text[match.end("value") : match.end("value") + 8]
        spaced = bool(match.group("before")) and bool(match.group("after"))
        if _assigned_secret(match.group("value"), match.group("sep"), spaced, rest):
            yield _Span(*_value_span(match), kind)
            pos = match.end("value")


def _prose_spans(text: str, lower: str) -> Iterator[_Span]:
    pos = 0
    passwords = _has(lower, "pass", "pw")
    while passwords and (match := _PASSWORD_PROSE.search(text, pos)):
        pos = match.end()
        value = match.group("value")
        rest = text[match.end("value") : match.end("value") + 8]
        if _password_like(value) or _spoken_password(value, rest):
            yield _Span(*_value_span(match), PASSWORD)
            pos = match.end("value")
    pos = 0
    while passwords and (match := _PASSPHRASE_PROSE.search(text, pos)):
        pos = match.end()
        if _spoken_passphrase(match.group("value"), text[match.end() : match.end() + 8]):
            yield _Span(*_value_span(match), PASSWORD)
    pos = 0
    while "pin" in lower and (match := _PIN_PROSE.search(text, pos)):
        pos = match.end()
        yield _Span(*match.span("value"), PASSWORD)
    pos = 0
    logins = _has(lower, "log", "sign", "cred")
    while logins and (match := _LOGIN_PAIR.search(text, pos)):
        pos = match.end()
        value = match.group("value")
        if _password_like(value) or _tokenish(value):
            yield _Span(*_value_span(match), PASSWORD)
            pos = match.end("value")
    pos = 0
    tokens = _has(lower, "token", "secret", "key")
    while tokens and (match := _NAMED_TOKEN.search(text, pos)):
        pos = match.end()
        before = lower[max(0, match.start() - 33) : match.start()]
        owner = found.group(1) if (found := _OWNER_BEFORE.search(before)) else ""
        if owner in _NOT_SECRET_KEYS or _CURSOR_BEFORE.search(before):
            continue
        if _named_random(match.group("value")):
            yield _Span(*match.span("value"), SECRET_ASSIGNMENT)
    pos = 0
    while tokens and (match := _TOKEN_PROSE.search(text, pos)):
        pos = match.end()
        before = lower[max(0, match.start() - 5) : match.start()]
        if _tokenish(match.group("value")) and not _CURSOR_BEFORE.search(before):
            yield _Span(*_value_span(match), SECRET_ASSIGNMENT)
            pos = match.end("value")


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    start, end = match.span("value")
    value = match.group("value")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        return start + 1, end - 1
    return start, start + len(_trim(value))


def _masked(text: str) -> list[tuple[int, int]]:
    """Sorted, disjoint ranges whose random-looking tokens are let through: URLs (their
    paths hold document and object ids) and public keys and certificates. Credentials in
    URLs are caught by name (query parameters) or as the URL's password."""
    ranges: list[tuple[int, int]] = []
    if "://" in text:
        ranges += [m.span() for m in _URL.finditer(text)]
    if "-----BEGIN" in text or "AAAA" in text:
        ranges += [m.span() for m in _PUBLIC.finditer(text)]
    ranges.sort()
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _pieces(token: str) -> list[tuple[int, str]]:
    """What to judge in a token, with offsets: a path is judged segment by segment."""
    if "/" in token:
        segments = token.split("/")
        if any(len(s) >= 3 and s.isalpha() and s.islower() for s in segments):
            found: list[tuple[int, str]] = []
            at = 0
            for segment in segments:
                found.append((at, segment))
                at += len(segment) + 1
            return found
    return [(0, token)]


def _entropy_spans(text: str, lower: str) -> Iterator[_Span]:
    masked = iter(_masked(text))
    mask = next(masked, None)
    for match in _TOKEN.finditer(text):
        while mask is not None and mask[1] <= match.start():
            mask = next(masked, None)
        if mask is not None and mask[0] <= match.start():
            continue
        for offset, piece in _pieces(match.group()):
            core = piece.strip("=.-_/~")
            if _random_secret(text, match.start() + offset, core):
                start = match.start() + offset + piece.index(core)
                yield _Span(start, start + len(core), HIGH_ENTROPY_TOKEN)


def _random_secret(text: str, start: int, core: str) -> bool:
    if (
        len(core) < 24
        or _DIGEST_PREFIX.match(core)
        or _IPFS_CID.fullmatch(core)
        or _ID_PREFIX.fullmatch(core)
        or _PLACEHOLDER_MARKS.search(core)
        or not _random_looking(core)
    ):
        return False
    context = _context(text, start)
    if context == "id":
        return False
    if context is None:
        return len(core) >= _UNPROMPTED_MIN_CHARS and not _encodes_text(core)
    return True


@cache
def _judges() -> credentials.Judges:
    return credentials.Judges(password_like=_password_like, filler=_filler)


def _class_spans(text: str, lower: str) -> Iterator[_Span]:
    """Credentials known by their class: passwords, codes and PINs after the words that
    name them in many languages, a user and password after a login word, card numbers,
    IBANs and national ids by their checksums, and recovery phrases by their word list."""
    for finding in credentials.class_spans(text, _judges()):
        yield _Span(finding.start, finding.end, finding.kind)


_FINDERS: tuple[Callable[[str, str], Iterator[_Span]], ...] = (
    _detect_secrets_spans,
    _provider_spans,
    _header_spans,
    _url_spans,
    _command_line_spans,
    _assignment_spans,
    _prose_spans,
    _class_spans,
    _entropy_spans,
)


# Short texts found clean, remembered: ids, keys, labels and tags come back call after
# call. Only a clean verdict is kept (never a text that holds a secret), for texts of
# at most _CLEAN_CHARS, and the whole set is dropped when it fills (a bound, not an LRU).
_CLEAN_CHARS = 160
_CLEAN_KEPT = 4096
_clean: set[str] = set()


def _spans(text: str) -> list[_Span]:
    if not text:
        return []
    short = len(text) <= _CLEAN_CHARS
    if short and text in _clean:
        return []
    lower = text.lower()
    if not may_hold_secret(text, lower):
        spans = []
    else:
        spans = [span for finder in _FINDERS for span in finder(text, lower)]
    if short and not spans:
        if len(_clean) >= _CLEAN_KEPT:
            _clean.clear()
        _clean.add(text)
    return spans


# -- public API ------------------------------------------------------------------------------


def find_secrets(text: str) -> list[SecretFinding]:
    """Every kind of secret in ``text``, each kind once, in a stable order."""
    kinds: list[str] = []
    for span in _spans(text):
        if span.kind not in kinds:
            kinds.append(span.kind)
    return [SecretFinding(k) for k in kinds]


def redact_secrets(text: str) -> str:
    """``text`` with every secret found replaced by ``[REDACTED:KIND]``.

    Overlapping findings become one placeholder, named by the widest of them. What is
    left holds no secret :func:`find_secrets` would find.
    """
    spans = sorted(_spans(text), key=lambda s: (s.start, -s.end))
    if not spans:
        return text
    merged: list[_Span] = []
    for span in spans:
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            if span.end > last.end:
                wider = span.end - span.start > last.end - last.start
                merged[-1] = _Span(last.start, span.end, span.kind if wider else last.kind)
            continue
        merged.append(span)
    out: list[str] = []
    at = 0
    for span in merged:
        out.append(text[at : span.start])
        out.append(f"[REDACTED:{span.kind}]")
        at = span.end
    out.append(text[at:])
    return "".join(out)
