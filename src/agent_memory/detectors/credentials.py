# ruff: noqa: RUF001, RUF003
# (the words of many languages, and their punctuation, are the point of this module)
"""Credentials known by their class rather than by a phrase: what :mod:`secrets` needs to
find a password, a door code or a PIN in whatever language a note is written in, a card
number, a bank account or a national id by its checksum, and a wallet's recovery phrase
by its word list.

- Numbers are judged by what well-kept libraries know of them: ``python-stdnum`` checks
  card numbers (Luhn, with the issuers' prefixes and lengths), IBANs (ISO 13616) and
  national ids (the United States' SSN, Brazil's CPF, Spain's DNI and NIE, Italy's
  codice fiscale, and more where a word names the id).
- Recovery phrases are runs of twelve words or more of one BIP-39 word list (the lists
  ``mnemonic`` ships, in ten languages), numbered or not.
- Passwords, passcodes, PINs and the codes of doors, gates, alarms and safes are found
  by a vocabulary of the words that name them in many languages, with the mark or verb
  that gives their value (``:``, ``is``, ``ist``, ``est``, ``é``, ``es``, ``是``, ``は``,
  ``=``, ``'s``, a verb after a comma: ``mudou, agora é``...) and the value itself, which
  must read as one; and by the other ways chat gives one: a verb that enters a code on a
  keypad (``digita 4490 no interfone``), "pass" after the network or account it opens,
  a value given before what it opens (``it's hunter2 for the wifi``), or given first and
  then named (``Rosemary55 is the new guest wifi password``, ``2741 is the alarm code``).
  Beside the tables written here, ``credential_words.json`` lists the words for
  passwords, PINs, codes and what codes open in each of the 95 languages the local
  model reads, so that no language is without them.
- A key or a code is a network's password where a network is named with it (``network
  BTHub, key ...``, ``le code wifi``, ``WLAN-Schlüssel``); what opens with a code and
  nothing else (a key safe, a lockbox, a padlock, a ``Tresor``) takes the digits given
  after it. A value in parentheses after a password word is one when it reads as a
  password (``a senha atual (Jabuticaba#7)``).

Every pattern is linear (bounded quantifiers, no nested repetition) and every loop
looks at a bounded window. The words are folded as the gate before the finders folds
text (:func:`fold`), so that each word the finders look for is a literal the gate can
look for first.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import ahocorasick
from mnemonic import Mnemonic
from stdnum import iban as _iban
from stdnum import luhn
from stdnum.bg import egn
from stdnum.br import cpf
from stdnum.ca import sin
from stdnum.ch import ssn as ahv
from stdnum.cl import rut
from stdnum.cn import ric
from stdnum.cz import rc
from stdnum.de import idnr
from stdnum.dk import cpr
from stdnum.ee import ik
from stdnum.es import nif as es_nif
from stdnum.fi import hetu
from stdnum.fr import nir
from stdnum.gr import amka
from stdnum.hr import oib
from stdnum.id import nik
from stdnum.il import idnr as il_idnr
from stdnum.in_ import aadhaar
from stdnum.is_ import kennitala
from stdnum.it import codicefiscale
from stdnum.jp import in_ as my_number
from stdnum.kr import rrn
from stdnum.lt import asmens
from stdnum.lv import pvn
from stdnum.mx import curp
from stdnum.my import nric
from stdnum.nl import bsn
from stdnum.no import fodselsnummer
from stdnum.pk import cnic
from stdnum.pl import pesel
from stdnum.pt import nif as pt_nif
from stdnum.ro import cnp
from stdnum.ru import inn as ru_inn
from stdnum.se import personnummer
from stdnum.si import emso
from stdnum.th import pin as th_pin
from stdnum.tr import tckimlik
from stdnum.ua import rntrc
from stdnum.us import ssn
from stdnum.vn import mst
from stdnum.za import idnr as za_idnr

# Kinds of finding (what a refusal names).
PAYMENT_CARD = "PAYMENT_CARD"
NATIONAL_ID = "NATIONAL_ID"
BANK_ACCOUNT = "BANK_ACCOUNT"
RECOVERY_PHRASE = "RECOVERY_PHRASE"
ACCESS_CODE = "ACCESS_CODE"
PASSWORD = "PASSWORD"

# -- folding ----------------------------------------------------------------------------------

# Characters a case-insensitive pattern matches for ASCII letters (dotted and dotless i,
# long s, the kelvin sign), then the lowercase letters it takes for one another (final
# and medial sigma, the Greek symbol forms, the micro sign...). Text folded with these,
# and lowercased, holds the folded form of every word a case-insensitive pattern finds.
FOLDS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
_EQUIVALENTS = str.maketrans(
    {
        "\u03c2": "\u03c3",  # ς σ
        "\u03d0": "\u03b2",  # ϐ β
        "\u03f5": "\u03b5",  # ϵ ε
        "\u03d1": "\u03b8",  # ϑ θ
        "\u03f0": "\u03ba",  # ϰ κ
        "\u03d6": "\u03c0",  # ϖ π
        "\u03f1": "\u03c1",  # ϱ ρ
        "\u03d5": "\u03c6",  # ϕ φ
        "\u0345": "\u03b9",  # ypogegrammeni ι
        "\u1fbe": "\u03b9",  # prosgegrammeni ι
        "\u00b5": "\u03bc",  # µ μ
        "\u1e9b": "\u1e61",  # ẛ ṡ
        "\ufb05": "\ufb06",  # ﬅ ﬆ
        "\u1fd3": "\u0390",
        "\u1fe3": "\u03b0",
    }
)


def fold(text: str) -> str:
    """``text`` as the gate compares it: case-folded the way case-insensitive patterns
    match, so a word such a pattern finds in ``text`` is in ``fold(text)`` as
    ``fold(word)``."""
    if text.isascii():
        return text.lower()
    return text.translate(FOLDS).lower().translate(_EQUIVALENTS)


# -- the vocabulary ---------------------------------------------------------------------------

# Classes of credential word, by what their value is.
_PASSWORD = "password"  # a password, passcode or passphrase: any value that reads as one
_CODE = "code"  # a code, if what it opens is named: a door, gate, alarm or safe
_PIN = "pin"  # a PIN or PUK: digits
_CVV = "cvv"  # a card's security code: three or four digits
_UNLOCK = "unlock"  # "opens with", "geht mit ... auf": digits, if a lock is named
_ENTER = "enter"  # "type", "digita", "marca": digits right after, if a lock is named
_SHORT = "short"  # "pass", short for a password: a value, if an account or network is named
_KEY = "key"  # a key: a network's password, if a network is named (``network X, key ...``)
_VAULT = "vault"  # a key safe, lockbox or padlock: digits given right after, ending the clause
_PURPOSE = "purpose"  # "for the wifi", "for the gate": what a value given before it opens

# How a word is bounded: a whole word; the end of a compound (``WLAN-Passwort``,
# ``Türcode``, ``portkoden``); or written without spaces (Chinese, Japanese).
_WORD, _TAIL, _CJK = "word", "tail", "cjk"


@dataclass(frozen=True)
class _Term:
    cls: str
    pattern: str  # a case-insensitive regular expression
    literal: str  # a string every match holds, in folded form
    bound: str = _WORD

    @property
    def anchored(self) -> bool:
        """Whether every match starts with the literal."""
        return fold(self.pattern).startswith(self.literal)


def _terms(cls: str, bound: str, *entries: tuple[str, str]) -> list[_Term]:
    return [_Term(cls, pattern, fold(literal), bound) for pattern, literal in entries]


# What Hebrew and Arabic write joined to the start of a word: "and", "that", "in", "to",
# "from", "as", and "the" (``הסיסמה``, ``לדלת``; ``للبطاقة``, ``الباب``), as a pattern before
# a word of the vocabulary, and as the forms a stem takes with them.
_HE_CLITICS = r"(?:[ושכ]?[בלמ]?ה?)"
_AR_CLITICS = r"(?:[وف]?(?:لل|[بكل]?(?:ال)?))"
_HE_PREFIXES = ("", *"ובכלמשה", "וה", "שה", "מה", "כש", "וב", "ול", "ומ", "שב", "של", "שמ")
_AR_PREFIXES = ("", "ال", "لل", "بال", "وال", "فال", "كال", *"لبوفك", "وب", "ول", "وبال", "ولل")


def _with_clitics(stems: str, prefixes: tuple[str, ...]) -> str:
    """``stems`` (words separated by spaces) with each of ``prefixes`` joined before."""
    return " ".join(prefix + stem for stem in stems.split() for prefix in prefixes)


# "for the", in the languages whose pronoun's verb gives a value before it (English,
# French, German: see _GIVEN_BEFORE): what opens a purpose (``for the wifi``).
_FOR = r"(?:for|pour|für|fürs)(?: (?:the|our|my|le|la|l['’]|die|das|den))? ?"

# (pattern, literal) pairs. Each literal is a substring of every match of its pattern.
_VOCABULARY: list[_Term] = [
    # -- passwords, passcodes, passphrases, the wifi's key --------------------------------
    *_terms(
        _PASSWORD,
        _WORD,
        (r"pass(?:words?|wd|codes?|phrases?)", "pass"),  # en
        (r"paswords?", "paswor"),  # a common misspelling (en, it)
        (r"pass[ \-]code", "pass"),
        (r"pwd?", "pw"),
        (r"wi-?fi[ \-]?key", "wi"),
        (r"wlan[ \-]?key", "wlan"),
        (r"network[ \-]?key", "network"),
        (r"wpa2?[ \-]?key", "wpa"),
        (r"wep[ \-]?key", "wep"),
        (r"senhas?", "senha"),  # pt
        (r"palavras?[ \-]passe", "palavra"),
        (r"contrase[ñn]as?", "contrase"),  # es
        (r"claves?", "clave"),
        (r"mots?[ \-]de[ \-]passe", "mot"),  # fr
        (r"mdp", "mdp"),
        (r"parola d['’]ordine", "parola d"),  # it
        (r"hasł(?:o|a|em)", "hasł"),  # pl
        (r"haśle", "haśle"),
        (r"парол(?:ь|я|ем|ю|и|а|ата|ите)", "парол"),  # ru, uk, bg
        (r"şifre(?:si|niz|n|m|yi|miz)?", "şifre"),  # tr
        (r"şifrə(?:si|niz|n|m|ni|miz)?", "şifrə"),  # az
        (r"parola(?:sı|nız|n|m)?", "parola"),  # tr, ro, it
        (r"parolă", "parolă"),  # ro
        (r"parol(?:e|es|i|ni|ingiz|im)?", "parol"),  # lv, uz
        (r"parool(?:i|iks|id)?", "parool"),  # et
        (r"salasõna(?:t)?", "salasõna"),
        (r"contraseny(?:a|es)", "contraseny"),  # ca
        (r"lozink(?:a|u|e|om|i)", "lozink"),  # hr, bs, sr (Latin)
        (r"slaptažod(?:is|į|žio|žiu|žiai|žius)", "slaptažod"),  # lt
        (r"salasana(?:ni|si|n)?", "salasana"),  # fi
        (r"hesl(?:o|a|em)", "hesl"),  # cs
        (r"gesl(?:o|a|om)", "gesl"),  # sl
        (r"jelszó|jelszava", "jelsz"),  # hu
        (r"κωδικ(?:ός|ό|ού)(?: πρόσβασ(?:ης|ής))?", "κωδικ"),  # el
        (r"kata sandi", "kata sandi"),  # id, ms
        (r"kata[ \-]?laluan", "laluan"),  # ms
        (r"sandi", "sandi"),
        (r"mật khẩu", "mật khẩu"),  # vi
        # vi: short for "mật khẩu" in chat; not an id's head ("mk-3f2a"), a model's name
        # ("Mk7") nor a domain (".mk")
        (r"(?<![.@])mk(?![\-_./\d])", "mk"),
        (rf"{_AR_CLITICS}كلمة (?:المرور|(?:ال)?سر)", "كلمة"),  # ar
        (rf"{_HE_CLITICS}סיסמ(?:ה|א|ת|אות)", "סיסמ"),  # he
        (r"पासवर्ड", "पासवर्ड"),  # hi
        (r"лозинк(?:а|у|е|ом|и)", "лозинк"),  # sr (Cyrillic)
        (r"nenosiri", "nenosiri"),  # sw
        (r"পাসওয়ার্ড", "পাসওয়ার্ড"),  # bn
        (r"(?:رمز|کلمه)[ \t\u200c]عبور", "عبور"),  # fa
        (r"پسورد", "پسورد"),
        (r"پاس[ \t]?ورڈ", "پاس"),  # ur
        (r"գաղտնաբառ(?:ը|ի|ս|դ)?", "գաղտնաբառ"),  # hy
        (r"პაროლ(?:ი|ს|ით)?", "პაროლ"),  # ka
        (r"құпия[ \t]сөз(?:і|ім|ді)?", "құпия"),  # kk
        (r"нууц[ \t]үг(?:ийг|ийн|ээ)?", "нууц"),  # mn
        (r"கடவுச்சொல்(?:லை|லு)?", "கடவுச்சொல்"),  # ta
        (r"contrasinal(?:es)?", "contrasinal"),  # gl
        (r"pasahitz(?:a|ak|aren)?", "pasahitz"),  # eu
        (r"fjalëkalim(?:i|in|et|e)?", "fjalëkalim"),  # sq
        (r"(?:የ)?ይለፍ[ \t]ቃል", "ይለፍ"),  # am
        (r"kalmar[ \t]sirri", "kalmar"),  # ha: the secret word
        (r"iphasiwedi", "iphasiwedi"),  # zu
        (r"پټ[ \t\u200c]?نوم(?:ونه)?", "پټ"),  # ps
        (r"وشەی?[ \t\u200c]نهێنی", "نهێنی"),  # ku (Sorani)
        (r"ਪਾਸਵਰਡ", "ਪਾਸਵਰਡ"),  # pa
        (r"పాస్\u200c?వర్డ్", "పాస్"),  # te
        (r"പാസ്\u200c?വേഡ്", "പാസ്"),  # ml
        (r"ಪಾಸ್\u200c?ವರ್ಡ್", "ಪಾಸ್"),  # kn
        (r"પાસવર્ડ", "પાસવર્ડ"),  # gu
        (r"මුරපද(?:ය)?", "මුරපද"),  # si
    ),
    *_terms(
        _PASSWORD,
        _TAIL,
        (r"passw(?:ort|örter)(?:e?s)?", "passw"),  # de
        (r"kennw(?:ort|örter)(?:e?s)?", "kennw"),
        (r"wachtwoord(?:en)?", "wachtwoord"),  # nl
        (r"lösenord(?:et)?", "lösenord"),  # sv
        (r"passord(?:et)?", "passord"),  # no
        (r"adgangskode(?:n)?", "adgangskode"),  # da
        (r"kodeord(?:et)?", "kodeord"),
        (r"wagwoord(?:e)?", "wagwoord"),  # af
    ),
    *_terms(
        _PASSWORD,
        _CJK,
        *((word, word) for word in ("密码", "密碼", "口令", "暗码")),  # zh
        *((word, word) for word in ("パスワード", "暗証番号", "パスコード", "合言葉")),  # ja
        *((word, word) for word in ("비밀번호", "비번", "암호", "패스워드")),  # ko
        ("รหัสผ่าน", "รหัสผ่าน"),  # th
        ("ລະຫັດຜ່ານ", "ລະຫັດຜ່ານ"),  # lo
        ("ពាក្យសម្ងាត់", "ពាក្យសម្ងាត់"),  # km
        ("စကားဝှက်", "စကားဝှက်"),  # my
    ),
    # -- codes: what they open must be named --------------------------------------------
    *_terms(
        _CODE,
        _WORD,
        (r"códigos?", "código"),  # pt, es
        (r"codigos?", "codigo"),
        (r"codic[ei]", "codic"),  # it
        (r"kod(?:u|y|ów|a|om|as|ą|o|s)?", "kod"),  # pl, tr, hr, lt, lv
        (r"codis?", "codi"),  # ca
        (r"šifr(?:a|u|e|om)", "šifr"),  # hr, bs, sr (Latin): a code, or a password
        (r"шифр(?:а|у|е|ом)", "шифр"),  # sr (Cyrillic)
        (rf"{_HE_CLITICS}קוד(?:ים)?", "קוד"),  # he
        *((rf"{_AR_CLITICS}{word}", word) for word in ("رمز", "كود")),  # ar
        (r"kode", "kode"),  # id
        (r"kód(?:u|em|ja|ot)?", "kód"),  # cs, sk, hu
        (r"mã", "mã"),  # vi
        (r"कोड", "कोड"),  # hi
        (r"код(?:а|у|ом|ът|ы|ын|ты)?", "код"),  # ru, bg, kk, mn
        (r"კოდ(?:ი|ს|ით)?", "კოდ"),  # ka
        (r"կոդ(?:ը|ի|ն|ով)?", "կոդ"),  # hy
        (r"cod(?:ul|ului)", "cod"),  # ro
        (r"کد", "کد"),  # fa
        (r"কোড", "কোড"),  # bn
        (r"namba[ \t]ya[ \t]siri", "namba"),  # sw
        (r"(?:i)?khodi", "khodi"),  # zu
        (r"කේත(?:ය)?", "කේත"),  # si
        (r"ਕੋਡ", "ਕੋਡ"),  # pa
        (r"કોડ", "કોડ"),  # gu
        (r"కోడ్", "కోడ్"),  # te
        (r"ಕೋಡ್", "ಕೋಡ್"),  # kn
        (r"ಕಾಂಬಿನೇಷನ್", "ಕಾಂಬಿನೇಷನ್"),
        (r"കോഡ്", "കോഡ്"),  # ml
        (r"ኮድ", "ኮድ"),  # am
        (r"combinations?", "combination"),  # en
        (r"combos?", "combo"),
        (r"combinaç(?:ão|ões)|combinación|combinaison|combinazione|combinatie", "combina"),
        (r"kombination(?:en)?|kombinacj[ae]", "kombina"),
        (r"комбинаци[яю]", "комбинаци"),
    ),
    *_terms(
        _CODE,
        _TAIL,
        (r"codes?", "code"),  # en, fr, de, nl (Türcode, digicode, deurcode)
        (r"kod(?:en)?", "kod"),  # sv (portkoden)
        (r"kode(?:n|a|ak)?", "kode"),  # da, no (dørkoden), eu (atearen kodea)
        (r"koodi(?:n|a)?", "koodi"),  # fi (ovikoodi)
        (r"kood(?:i|id)?", "kood"),  # et (uksekood)
        (r"kód(?:ja|ját|ot)?", "kód"),  # hu (kapukódja)
    ),
    *_terms(_CODE, _CJK, *((word, word) for word in ("コード", "验证码", "驗證碼", "รหัส", "ລະຫັດ"))),
    # "number": a code only where a lock is named with it (``オートロックの番号``)
    *_terms(_CODE, _CJK, ("番号", "番号"), ("번호", "번호")),
    # -- PINs ----------------------------------------------------------------------------
    *_terms(
        _PIN,
        _WORD,
        (
            r"pin(?:[ \-]?(?:codes?|numbers?|nummer|nr|no|kod(?:u|en|as|ą|o|s|a)?|kood(?:i)?"
            r"|kód(?:ja|ot|u)?|код|kodi|နံပါတ်|կոդ(?:ը|ի|ն)?)"
            r"|-ul(?:ui)?|-(?:i|ı|u|ü|ը|ն))?",
            "pin",
        ),
        (r"pincode|pinkod(?:en)?", "pin"),
        (r"пин(?:[ \-]?код(?:ът|а|у|ом)?)?", "пин"),  # ru, bg
        (r"пін(?:[ \-]?код(?:у|ом)?)?", "пін"),  # uk
        (r"m-?pin", "pin"),  # a mobile wallet's PIN
        (r"পিন", "পিন"),  # bn
        (r"பின்", "பின்"),  # ta: also "after", so a bare one is a card's only
        (r"პინ(?:ი|ს)?(?:[ \t]კოდ(?:ი|ს)?)?", "პინ"),  # ka
        (r"پن", "پن"),  # ur
        (r"puk(?:[ \-]?(?:code|kod))?", "puk"),
        (r"पिन", "पिन"),  # hi
        (r"ፒን", "ፒን"),  # am
        (r"lambar[ \t]sirri", "lambar"),  # ha: the secret number
        (rf"{_HE_CLITICS}קוד(?: ה)?סודי", "קוד"),  # he: a card's secret code
        # ar: the secret number or code
        *((rf"{_AR_CLITICS}{word} (?:ال)?سر[يّ]ي?", word) for word in ("رقم", "رمز")),
    ),
    *_terms(
        _PIN,
        _CJK,
        ("PIN码", "PIN码"),
        ("PIN碼", "PIN碼"),
        ("ＰＩＮ", "ＰＩＮ"),
        ("ပင်နံပါတ်", "ပင်နံပါတ်"),
    ),
    # -- a card's security code ------------------------------------------------------------
    *_terms(
        _CVV,
        _WORD,
        (r"cvv2?", "cvv"),
        (r"cvc2?", "cvc"),
        (r"csc", "csc"),
        (r"card verification (?:code|value|number)", "card verification"),
        (r"cryptogramme(?: visuel)?", "cryptogramme"),
        (r"kartenprüf(?:nummer|ziffer|zahl)", "kartenprüf"),
        (r"prüf(?:nummer|ziffer|zahl)", "prüf"),
    ),
    *_terms(
        _CVV,
        _CJK,
        *((word, word) for word in ("安全码", "安全碼", "セキュリティコード", "보안코드")),
    ),
    # -- a key: a network's password where a network is named ----------------------------
    *_terms(
        _KEY,
        _WORD,
        (r"keys?", "key"),  # en
        (r"chaves?", "chave"),  # pt
        (r"llaves?", "llave"),  # es
        (r"clés?", "clé"),  # fr
        (r"clefs?", "clef"),
        (r"chiav[ei]", "chiav"),  # it
        (r"klucz(?:a|em)?", "klucz"),  # pl
        (r"ключ(?:а|ом|и)?", "ключ"),  # ru
        (r"anahtar(?:ı|i)?", "anahtar"),  # tr
        (r"kunci", "kunci"),  # id
    ),
    *_terms(
        _KEY,
        _TAIL,
        (r"schlüssel", "schlüssel"),  # de (WLAN-Schlüssel, Netzwerkschlüssel)
        (r"sleutel", "sleutel"),  # nl (netwerksleutel)
        (r"nyckel(?:n)?", "nyckel"),  # sv (nätverksnyckel)
    ),
    *_terms(_KEY, _CJK, *((word, word) for word in ("密钥", "密鑰", "キー", "네트워크 키"))),
    # -- what opens with a code and nothing else: a key safe, a lockbox, a padlock ---------
    *_terms(
        _VAULT,
        _WORD,
        (r"key[ \-]?(?:safe|box|lock)s?", "key"),  # en
        (r"lock[ \-]?box(?:es)?", "lock"),
        (r"pad[ \-]?locks?", "pad"),
        (r"combination[ \-]locks?", "combination"),
        (r"code[ \-]locks?", "code"),
        (r"cadeados?", "cadeado"),  # pt
        (r"caixa[ \-]de[ \-]chaves", "caixa"),
        (r"candados?", "candado"),  # es
        (r"caja[ \-]fuerte", "caja"),
        (r"cadenas", "cadenas"),  # fr
        (r"coffre[ \-]fort", "coffre"),
        (r"boîte[ \-]à[ \-]clés", "boîte"),
        (r"lucchett[oi]", "lucchett"),  # it
        (r"cassaforte", "cassaforte"),
        (r"kłódk[aię]", "kłódk"),  # pl
        (r"sejf(?:u)?", "sejf"),
        (r"сейф(?:а|е)?", "сейф"),  # ru
        (r"brankas", "brankas"),  # id
        (r"gembok", "gembok"),
        (r"key[ \-]?pads?", "key"),  # en: a keypad takes a code
    ),
    *_terms(
        _VAULT,
        _TAIL,
        (r"schlüssel(?:safe|tresor|kasten|box)", "schlüssel"),  # de
        (r"codeschloss(?:es)?", "codeschloss"),
        (r"zahlenschloss(?:es)?", "zahlenschloss"),
        (r"vorhängeschloss(?:es)?", "vorhängeschloss"),
        (r"tresor", "tresor"),
        (r"sleutelkluis", "sleutelkluis"),  # nl
        (r"hangslot", "hangslot"),
        (r"kodlås(?:et)?", "kodlås"),  # sv
        (r"hänglås(?:et)?", "hänglås"),
        (r"nyckelskåp(?:et)?", "nyckelskåp"),
    ),
    *_terms(
        _VAULT,
        _CJK,
        *((word, word) for word in ("保险箱", "保險箱", "保险柜", "保險櫃", "密码锁")),
        *((word, word) for word in ("キーボックス", "金庫", "南京錠", "금고", "키박스")),
    ),
    # -- verbs that open a lock with a code --------------------------------------------------
    *_terms(
        _UNLOCK,
        _WORD,
        (r"opens?(?: it)? with", "open"),  # en
        (r"unlocks?(?: it)? with", "unlock"),
        (r"disarms?(?: it)? with", "disarm"),
        (r"abre(?:-se)? com", "abre"),  # pt
        (r"desarma(?:-se)? com", "desarma"),
        (r"destrava(?:-se)? com", "destrava"),
        (r"abre con", "abre"),  # es
        (r"se abre con", "se abre"),
        (r"desarma con", "desarma"),
        (r"se desarma con", "se desarma"),
        (r"(?:s['’])?ouvre avec", "ouvre"),  # fr
        (r"se désactive avec", "désactive"),
        (r"geht mit", "geht"),  # de
        (r"öffnet(?: sich)? mit", "öffnet"),
        (r"lässt sich mit", "lässt"),
        (r"apre con", "apre"),  # it
        (r"si apre con", "si apre"),
        (r"disattiva con", "disattiva"),
        (r"si disattiva con", "si disattiva"),
        (r"sblocca con", "sblocca"),
        (r"si sblocca con", "si sblocca"),
        (r"opent met", "opent"),  # nl
        (r"gaat open met", "gaat open"),
        (r"(?:se )?deschide cu", "deschide"),  # ro
        (r"s['’]obre amb", "obre amb"),  # ca
        (r"otwiera(?: się)?", "otwiera"),  # pl
        (r"öppnas med", "öppnas"),  # sv
        (r"(?:åbnes|åpnes) med", "nes med"),  # da, no
    ),
    # -- verbs that enter a code on a keypad ---------------------------------------------------
    *_terms(
        _ENTER,
        _WORD,
        (r"enter", "enter"),  # en
        (r"type(?: in)?", "type"),
        (r"key in", "key in"),
        (r"digit(?:a|e|ar|are|ate)", "digit"),  # pt, it
        (r"apert(?:a|e|ar)", "apert"),  # pt: press
        (r"premi", "premi"),  # it
        (r"tecl(?:a|e|ar)", "tecl"),
        (r"marc(?:a|ar)", "marc"),  # es
        (r"marque", "marque"),
        (r"tecle(?:a|e|ar)", "tecle"),
        (r"introduc(?:e|ir)", "introduc"),
        (r"tap(?:e|ez|er)", "tap"),  # fr
        (r"compos(?:e|ez|er)", "compos"),
        (r"tipp(?:e|en|t)?", "tipp"),  # de
        (r"eintippen", "eintippen"),
        (r"gib", "gib"),
        (r"compon(?:i|ete|ere)", "compon"),  # it
        (r"toets", "toets"),  # nl
        (r"punch(?: it)? in", "punch"),  # en
        (r"wpisz", "wpisz"),  # pl
        (r"wybierz", "wybierz"),
        (r"введи(?:те)?", "введи"),  # ru
        (r"набери(?:те)?", "набери"),
        (r"tuşla(?:yın|yin)?", "tuşla"),  # tr
        (r"slå in", "slå in"),  # sv
        (r"knappa in", "knappa"),
        (r"masukkan", "masukkan"),  # id
        (r"ketik", "ketik"),
        (r"tekan", "tekan"),
    ),
    # -- "pass", short for a password ---------------------------------------------------------
    *_terms(_SHORT, _WORD, (r"pass", "pass"), (r"contra", "contra")),  # en, es
    # -- what a value given before it opens: "it's hunter2 *for the wifi*" --------------------
    *_terms(
        _PURPOSE,
        _WORD,
        *(
            (rf"{_FOR}{target}", literal)
            for target, literal in (
                (r"wi-?fi", "wi"),
                (r"wlan", "wlan"),
                (r"router", "router"),
                (r"network", "network"),
                (r"door", "door"),
                (r"gate", "gate"),
                (r"alarm[ea]?", "alarm"),
                (r"garage", "garage"),
                (r"porte", "porte"),
                (r"portail", "portail"),
                (r"tür", "tür"),
            )
        ),
    ),
]

# The words for passwords, PINs and codes, and for what a code opens, in every language
# the local model reads (``credential_words.json``): written apart from the corpus and
# the rules, by class and language, so a language no batch has met is not left without
# them. Each adds to the tables here only what they lack.
_WORDS_BY_LANGUAGE: dict[str, dict[str, list[str]]] = json.loads(
    Path(__file__).with_name("credential_words.json").read_text(encoding="utf-8")
)
# Scripts written without spaces between words (Thai, Lao, Burmese, Khmer, Chinese,
# Japanese), and the Indic scripts whose vowel signs split a word for the patterns
# here: their words are found wherever they stand.
_INFIX_SCRIPTS = re.compile(r"[\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u9fff]")
_LISTED_CLASSES = {"password": _PASSWORD, "pin": _PIN, "code": _CODE}


def _listed_terms() -> list[_Term]:
    """The listed words that no word of the tables above reads (as any class: the
    tables say what a word they know stands for), and that no other class lists too."""
    classes: dict[str, set[str]] = {}
    for words in _WORDS_BY_LANGUAGE.values():
        for name, cls in _LISTED_CLASSES.items():
            for word in words.get(name, []):
                classes.setdefault(word.strip().lower(), set()).add(cls)
    tables = tuple(_VOCABULARY)
    added: list[_Term] = []
    for word, (cls, *others) in classes.items():
        if len(word) < 3 or others or _read_by(tables, word):
            continue
        bound = _CJK if _INFIX_SCRIPTS.search(word) else _WORD
        pattern = re.escape(word).replace("\\ ", "[ \t]")
        # A word of several: its first holds the literal (a tab may stand for a space
        # between them).
        added.append(_Term(cls, pattern, fold(word.split(" ")[0]), bound))
    return added


def _read_by(terms: tuple[_Term, ...], word: str) -> bool:
    """Whether a word of ``terms`` reads in ``word``: only those whose literal it holds
    are tried (every match holds its word's literal)."""
    folded = fold(word)
    return any(t.literal in folded and _matcher(t).search(word) for t in terms)


@cache
def _matcher(term: _Term) -> re.Pattern[str]:
    return re.compile("(?i)" + _bounded(term))


def _listed_locks() -> tuple[list[str], list[str]]:
    """The listed words for what a code opens: stems for spaced scripts, and infixes for
    the scripts of :data:`_INFIX_SCRIPTS`."""
    stems: set[str] = set()
    infixes: set[str] = set()
    for words in _WORDS_BY_LANGUAGE.values():
        for word in words.get("locks", []):
            word = word.strip().lower()
            if " " in word or len(word) < 3:
                continue
            (infixes if _INFIX_SCRIPTS.search(word) else stems).add(word)
    return sorted(stems), sorted(infixes)


_LISTED_LOCK_STEMS, _LISTED_LOCK_INFIXES = _listed_locks()

# Words that say what a code opens: a credential's code, not an error's, a parcel's or a
# discount's. Stems match the start of a word (``alarme``, ``Alarmanlage``, ``домофона``);
# the words of _LOCK_WORDS, too short or too common to stand for their stem, match whole.
# Either may be the first part of a compound (``Türcode``, ``portkoden``, ``digicode``).
_LOCK_STEM_WORDS = (
    # en
    "door alarm padlock lockbox keybox keysafe locker garage keypad entry entrance "
    "access intercom buzzer disarm unlock security storage suitcase wifi wi-fi "
    "verification backup recovery authenticator one-time "
    # pt
    "portão portao portaria alarme cofre cadeado interfone garagem acesso segurança "
    "desbloqueio fechadura armário entrada prédio predio verificação "
    # es
    "puerta portón alarma candado portero garaje seguridad desbloqueo cerradura "
    "taquilla casillero edificio verificación "
    # fr
    "portail coffre cadenas interphone accès sécurité déverrouillage serrure casier "
    "entrée immeuble "
    # de
    "haustür tresor schloss vorhängeschloss schlüssel zugang sicherheit entsperr "
    "eingang spind garagen "
    # it
    "portone cancello allarme cassaforte lucchetto citofono accesso sicurezza sblocco "
    "serratura armadietto ingresso "
    # nl
    "deur poort kluis hangslot toegang beveiliging voordeur sleutel fietsenstalling berging "
    # pl
    "drzwi furtk alarmu sejf kłódk domofon garaż dostęp wejści "
    # ru
    "двер ворот сигнализац сейф замк замок домофон гараж доступ подъезд калитк "
    # tr
    "kapı kilit garaj giriş erişim güvenlik "
    # sv, da, no
    "dörr larm kassaskåp hänglås dør pengeskab "
    # id
    "pintu gerbang pagar brankas gembok akses "
    # cs, sk
    "vchod dveř dveře brán branka trezor zámek zámku domovní klíč "
    # fi
    "portti rappu hälyt lukko kassakaap "
    # hu, ro
    "ajtó kapu riaszt széf lakat ușa ușii poart interfon seif alarm "
    # el
    "πόρτ εξώπορτ συναγερμ χρηματοκιβώτ λουκέτ εισόδ είσοδ "
    # vi
    "cửa cổng két khóa khoá "
    # bg
    "врат вход аларм катинар "
    # ca
    "garatge cadenat edifici accés "
    # et
    "uks värav signalisats seif lukk garaaž "
    # hr, bs, sr (Latin)
    "vrat ulaz kapij sef lokot zgrad "
    # lt, lv
    "laiptin vart signalizacij spyn garaž durv vārt signalizācij slēdzen garāž "
    # ms, tl
    "penggera pinto pintuan kandado "
    # sw, bn, fa, ur
    "geti mlango kufuli "
    # ka, hy, kk, mn, az, uz, sl (the words they share with a language above are there)
    "სადარბაზო ჭიშკარ სეიფ մուտք դուռ դռան դարպաս "
    "есік кіреберіс орц хаалг "
    "qapı podyezd eshik darvoza "
    "vhod "
    "پارکینگ درب قفل گاوصندوق دزدگیر "
    "گیٹ دروازہ تالا "
    # be, ku (Kurmanji), ha, zu, eu
    "дзвер брам "
    "derî deriy dergeh "
    "ƙofa "
    "isisef umnyang isango "
    "atea atear "
    # he, ar: each with what is written joined before it
    + _with_clitics("דלת שער כניסה אזעקה כספת מנעול", _HE_PREFIXES)
    + " "
    + _with_clitics("باب بوابة خزنة خزين إنذار انذار مدخل قفل", _AR_PREFIXES)
)
_LOCK_STEMS = tuple(dict.fromkeys((*_LOCK_STEM_WORDS.split(), *_LISTED_LOCK_STEMS)))
_LOCK_WORDS = frozenset(
    """
    gate gates safe safes lock locks vault shed sim phone screen master otp 2fa porta
    portas caja portal porte portes boîte tür türe tor digi slot brama bramy bramie
    bramki kasa port lås ovi oven durys durų duris hek
    """.split()  # noqa: SIM905
)
_LOCK_CJK = (
    *("门", "門", "禁", "锁", "鎖", "保险", "保險", "车库", "警报", "報警"),
    *("玄関", "オートロック", "金庫", "鍵", "ロッカー", "ボックス", "ドア", "門"),
    *("현관", "도어락", "금고", "대문", "자물쇠"),
    # Thai, written without spaces
    *("ประตู", "เซฟ", "กุญแจ", "สัญญาณกันขโมย", "ล็อก", "ล็อค"),
    # Devanagari, whose vowel signs split its words for the patterns here
    *("गेट", "दरवाज", "ताला", "तिजोरी", "अलार्म", "ढोका", "लॉकर", "लकर"),
    # Bengali, Gurmukhi, Gujarati, Sinhala, Telugu, Kannada, Malayalam: the same
    *("গেট", "দরজা", "তালা", "লকার", "অ্যালার্ম"),
    *("ਗੇਟ", "ਦਰਵਾਜ਼", "ਦਰਵਾਜ", "ਤਾਲਾ", "ਅਲਾਰਮ", "ਲਾਕਰ"),
    *("ગેટ", "દરવાજ", "તાળ", "એલાર્મ", "લોકર"),
    *("ගරාජ", "දොර", "ගේට්ටු", "අගුල", "ලොකර්"),
    *("గేట్", "తలుపు", "తాళం", "లాక్", "అలారం"),
    *("ಗೇಟ್", "ಬಾಗಿಲ", "ಲಾಕ್", "ಬೀಗ", "ಅಲಾರಾಂ"),
    *("ഗേറ്റ്", "വാതിൽ", "ലോക്ക്", "പൂട്ട്", "അലാറം"),
    # Lao, written without spaces
    *("ປະຕູ", "ກະແຈ", "ລັອກ"),
    # Belarusian's entrance, whose apostrophe splits it for the patterns here
    *("пад'езд", "пад’езд"),
)
_LOCK_INFIXES = re.compile("|".join(map(re.escape, (*_LOCK_CJK, *_LISTED_LOCK_INFIXES))))
# "Number" words, a code only with a lock that opens with one; and what else a lock word
# near them numbers: a locker, a key, a gate or a room (``ロッカーの番号``: which locker).
_NUMBER_WORDS = ("番号", "번호")
_NUMBERED_THINGS = ("ロッカー", "鍵", "門", "部屋", "号室", "사물함", "열쇠", "호실")
# Words for a card, whose PIN or security code follows (``пин-код карты``, ``PIN do cartão``).
_CARD_STEM_WORDS = (
    "card cartão cartao tarjeta carte karte carta kaart karty kart карт kort bankpas "
    "bancomat visa mastercard amex debit credit crédito débito targeta targetes kartic kortel "
    "kadi thẻ کارت کارڈ bankkort "
    + _with_clitics("כרטיס אשראי", _HE_PREFIXES)
    + " "
    + _with_clitics("بطاق", _AR_PREFIXES)
)
_CARD_STEMS = tuple(_CARD_STEM_WORDS.split())
# Words for a card, or a payment app's account, too short to stand for their stem (``PIN
# ATM``, ``UPI pin``).
_CARD_WORDS_WHOLE = frozenset({"atm", "kad", "upi"})
# Words for a card written without spaces (Thai).
_CARD_INFIXES = ("บัตร", "কার্ড")
# Codes that open nothing: what a code is when one of these words names it.
_NOT_LOCKS = frozenset(
    """
    error exit status return http zip postal post area country dial dialing language
    currency airport product item sku bar qr promo promotional discount coupon voucher
    referral invite invitation source building dress color colour tracking reference
    booking confirmation reservation tax vat sort swift bic routing iso hs sample
    example machine op short billing fault response region morse activation country
    barras rastreio rastreamento produto promocional desconto erro pedido fiscal
    seguimiento producto descuento reserva barre barres réduction erreur suivi
    réservation postleitzahl fehler gutschein rabatt sendungs postale sconto errore
    tracciamento prenotazione fiscale posta postai poștal poștale poštovní poštové
    poštanski pocztowy почтовый поштовий пощенски
    """.split()  # noqa: SIM905
)
# Words that may open what comes between a credential word and its value: "the password
# *for* the NAS", "la contraseña *del* wifi", "das Passwort *für* den Drucker".
_PREPOSITIONS = frozenset(
    """
    for of on to at in from da do das dos de del dela della dello delle degli dei des du
    la le les el al au aux für fürs vom von zum zur der die das den dem di per van voor
    bij het een till för på til av от для к do dla na od u the a an our my your his her
    their its this that mum's mom's
    by near beside behind under inside outside next junto perto atrás debaixo cerca detrás
    près derrière sous neben hinter bei unter vicino accanto dietro sotto naast achter
    onder przy obok pod возле рядом под vid bredvid
    k ke na do od pro v ve z ze u
    του της των το τη την στο στη στην για από σε
    của cho ở
    pentru la al lui
    para pra dels za за ku iz nuo iš no uz priekš ng sa ni kay untuk bagi של
    im am beim ins на від ya wa kwa cha در برای في i до
    pour vir á fyrir frá ад ў fún
    """.split()  # noqa: SIM905
)
# What follows "pin" the verb, not the noun: "pin *the* memory", "pin *it* to the top".
_OBJECTS = frozenset(
    "the this that these those it them an my your our his her".split()  # noqa: SIM905
)
# Words right after a credential word that say which one it is, in the languages that put
# their adjectives after the noun ("senha *provisória* é", "clave *temporal* es", "mot de
# passe *provisoire* est"): like a preposition's words, they say what it is for.
_QUALIFIERS = frozenset(
    """
    temporary new current old initial default provisional
    provisória provisório temporária temporário nova novo atual antiga antigo inicial padrão
    provisoria provisorio temporal temporaria temporario nueva nuevo actual antigua antiguo
    provisoire temporaire nouveau nouvel nouvelle actuel actuelle ancien ancienne initiale
    provvisoria provvisorio temporanea temporaneo nuova nuovo attuale vecchia vecchio iniziale
    baru lama aku saya kamu anda kami kita
    σας μου σου νέος νέο προσωρινός προσωρινό
    tạm mới cũ bạn anh chị em tôi mình
    ko mo niya namin natin nila yung ang שלי שלנו שלך
    tuntun nýja nýtt nýr
    mājās اول جدید قدیمی
    """.split()  # noqa: SIM905
)
# What "pass" is short for a password of: an account or a network named before it
# ("network BlueDoor, pass ...", "user ops pass ..."); else it is a ticket or a verb.
_ACCOUNT_STEM_WORDS = (
    "wifi wlan network ssid router modem hotspot user login account admin email mail vpn "
    "réseau compte identifiant utilisateur usuário usuario cuenta konto benutzer netzwerk "
    "وای وائی banking mbanking ebanking netbanking homebanking "
    + _with_clitics("וויפי ויפי וויי-פיי", _HE_PREFIXES)
    + " "
    + _with_clitics("واي", _AR_PREFIXES)
    + " ไวไฟ"
)
_ACCOUNT_STEMS = tuple(_ACCOUNT_STEM_WORDS.split())
# What a key or a code is the password of when one of these is named with it: a network
# ("network BTHub, key ...", "le code wifi", "WLAN-Schlüssel"). Stems match the start of a
# word with its hyphens taken out ("Wi-Fi" is "wifi").
_NETWORK_STEM_WORDS = (
    "wifi wlan network ssid router modem hotspot wpa wep réseau netz netwerk sieć sieci сеть "
    "сети вайфа nätverk jaringan livebox freebox fritz وای وائی "
    + _with_clitics("וויפי ויפי", _HE_PREFIXES)
    + " "
    + _with_clitics("واي", _AR_PREFIXES)
)
_NETWORK_STEMS = tuple(_NETWORK_STEM_WORDS.split())
# Words too short or too common to stand for their stem ("rede" of "redeploy").
_NETWORK_WORDS = frozenset({"rede", "redes", "rete", "ağ", "ağı"})
_NETWORK_CJK = (
    *("ネットワーク", "网络", "網路", "无线", "無線", "와이파이", "네트워크", "ไวไฟ"),
    "ওয়াইফাই",  # bn, whose vowel signs split its words
)
# Any of those anywhere, in text lowercased and without hyphens: what must be there for a
# network to be named (a test of one pass, for the many keys that open no network).
_NETWORK_HINTS = (*_NETWORK_STEMS, *sorted(_NETWORK_WORDS), *_NETWORK_CJK)
_ELIDED = re.compile(r"(?i)(?:d|l|dell|dall|nell|sull|all|qu)['’]")
# What gives the value, after the word (and what it is for): a mark, or a verb.
_COPULAS = (
    # en
    r"(?:now[ \t]{1,4})?(?:it|that)(?:['’]s|[ \t]{1,4}is)(?:[ \t]{1,4}now)?"
    r"|is(?:[ \t]{1,4}now)?|was|will[ \t]{1,4}be|became|now|(?:(?:is|was|got|has[ \t]{1,4}been)"
    r"[ \t]{1,4})?(?:set|changed|reset|updated|rotated)[ \t]{1,4}to"
    # pt
    r"|é(?:[ \t]{1,4}agora)?|agora[ \t]{1,4}é|era|será|fica|ficou|mudou[ \t]{1,4}para"
    r"|passou[ \t]{1,4}a[ \t]{1,4}ser"
    # es
    r"|es(?:[ \t]{1,4}ahora)?|ahora[ \t]{1,4}es|cambió[ \t]{1,4}a|queda"
    # fr
    r"|est(?:[ \t]{1,4}maintenant)?|était|sera|c['’]est|devient"
    # de
    r"|ist(?:[ \t]{1,4}(?:jetzt|nun))?|lautet|lautete|heißt|war|jetzt"
    # it
    r"|è(?:[ \t]{1,4}ora)?|e['’]|ora[ \t]{1,4}è|adesso[ \t]{1,4}è|sarà"
    # nl, pl, ru, sv, da, no, fi, id, vi, cs
    r"|luidt|is[ \t]{1,4}nu|wordt|to|jest|brzmi|это|теперь|är(?:[ \t]{1,4}nu)?|blir|er"
    r"|on|adalah|ialah|sekarang|kini|là|je"
    # el, hi, ro
    r"|είναι|है|este"
    # bg, ca, lt, lv, tl, he, ar
    r"|е|és|era|serà|yra|ir|ay|היא|הוא|זה|هي|هو"
    # sw, bn
    r"|ni|হলো|হল"
)
_MARK = r"[ \t]{0,4}(?::|：|=|->|=>|\u2014|\u2013|-|\u055d)[ \t]{0,4}"  # hy "՝" too
# A mark (after the end of an aside too: "(gate code): ..."); "'s" ("the pin's 4417"); or
# a verb, after a comma too, which closes what was said of the credential ("la senha
# mudou, agora é ...", "le code a changé, c'est ...").
_SEPARATOR = re.compile(
    rf"(?P<mark>[)\]]?{_MARK})|['’]s[ \t]{{1,4}}"
    rf"|,?[ \t]{{1,4}}(?P<copula>(?:{_COPULAS}))(?:[ \t]{{0,4}}:)?[ \t]{{1,4}}"
    r"|(?P<space>[ \t]{1,4})",
    re.IGNORECASE,
)
_CJK_SEPARATOR = re.compile(
    r"[ \t]{0,4}(?P<mark>[是为為はが：:=은는이가]|は、|คือ|เป็น|ແມ່ນ"
    r"|(?:改成|改为|改為|换成|換成|设为|設為|设置为|設置為|变成|變成|更改为|更改為)了?)?[ \t]{0,4}"
)
# What a credential word and its value may have between them: a few words, none of
# which ends a sentence.
_BETWEEN = re.compile(
    r"[ \t]{1,4}(?P<word>\([^()\n]{1,60}\)"
    r"|[^\s:=：,;，；。、!?！？\"'`][^\s:=：,;，；。、!?！？\"`]{0,39})"
)
_MAX_BETWEEN = 10
# Words between that say nothing of what the credential is for ("password *set today*:
# ..."): a value then follows a colon or an equals sign only.
_MAX_LOOSE = 3
# A value: quoted, or one run of characters that are neither spaces, quotes, nor Chinese,
# Japanese or Korean (which close a value written among them: ``sakura2024です``), nor of
# the scripts of Southeast Asia that write words without spaces between them (Thai, Lao,
# Burmese, Khmer).
_THAI = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
_SPACELESS = re.compile(f"[{_THAI}\u3000-\U0010ffff]")
_CJK_CHARS = f"{_THAI}\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
# Thai (and Lao, Burmese, Khmer), written without spaces: what a word is for runs on from
# it up to the copula, a mark or a space ("รหัสผ่าน*ไวไฟ*คือ ...", "รหัส*ประตู* 8842",
# "ລະຫັດ*ປະຕູ*: ...").
_THAI_BETWEEN = re.compile(rf"(?P<word>[{_THAI}]{{1,40}}?)(?=คือ|เป็น|ແມ່ນ|[ \t:：=]|$)")
_VALUE = re.compile(
    r"\"(?P<dq>[^\"\n]{1,128})\"|'(?P<sq>[^'\n]{1,128})'|[“«„「](?P<cq>[^”»“」\n]{1,128})[”»“」]"
    r"|\((?P<pq>[^()\s]{4,64})\)"
    r"|(?P<apppw>[a-z]{4}(?:[ \-][a-z]{4}){3})(?![\w\-])"
    r"|(?P<spaced>\d(?: \d){3,7})(?![\w\-]| \d)"
    r"|(?P<code>[#*]?\d{1,4}(?:[\-\u2013]\d{1,4}){1,3}[#*]?)(?![\w\-])"
    rf"|(?P<bare>[^\s\"'`{_CJK_CHARS}]{{1,128}})"
)
_TRAILING = ".,;:!?)]}>，。、；：！？）"
_DIGITS = re.compile(r"\d")
_DIGIT_CODE = re.compile(r"[#*]?\d{3,12}[#*]?")
_COMBINATION = re.compile(r"\d{1,4}(?:[\-\u2013]\d{1,4}){1,3}")
_SHORT_CODE = re.compile(r"[#*]?(?=[A-Z]{0,3}\d)[0-9A-Z]{4,8}[#*]?")
# What a number after a credential word is when one of these follows it: a rule about the
# credential ("PIN must be 6 digits"), not the credential.
_UNITS = frozenset(
    """
    digits digit characters character chars char letters numbers times minutes seconds
    hours days weeks months years tries attempts dígitos caracteres números letras cifras
    chiffres caractères lettres stellen zeichen ziffern buchstaben cifre caratteri lettere
    cijfers tekens cyfr cyfry znaków символов цифр букв karakter hane tecken siffror
    merkkiä numeroa
    """.split()  # noqa: SIM905
)
_UNIT_CJK = re.compile(r"[ \t]{0,4}(?:位|桁|文字|자|자리|个|個|次|分|秒)")
_UNIT_SIGNS = ("%", "°", "x ", "px")
# A value among these is not a password: words for "wrong", "required", "the same".
_NOT_VALUES = frozenset(
    """
    required needed missing wrong incorrect invalid expired empty blank correct valid weak
    strong mandatory optional secret private shared different same unknown temporary new
    old obrigatória obrigatório errada errado incorreta inválida expirada forte fraca
    obligatoria incorrecta inválida caducada segura obligatoire incorrect incorrecte
    invalide expiré expirée erforderlich falsch ungültig abgelaufen sicher obbligatoria
    sbagliata errata scaduta verplicht onjuist fout verlopen
    1password bitwarden lastpass keepass keepassxc dashlane keychain
    """.split()  # noqa: SIM905
)


def _bounded(term: _Term) -> str:
    if term.bound == _CJK:
        return f"(?:{term.pattern})"
    right = r"(?![^\W\d_])"
    if term.bound == _TAIL:
        return f"(?:{term.pattern}){right}"
    return rf"(?<![^\W\d_])(?:{term.pattern}){right}"


# Where several words start at one place, the first of these classes wins.
_CLASS_ORDER = (_UNLOCK, _CVV, _PIN, _VAULT, _PASSWORD, _SHORT, _KEY, _CODE, _ENTER, _PURPOSE)


def _noun_pattern() -> str:
    groups = []
    for cls in _CLASS_ORDER:
        # Longer alternatives first, so "pin code" wins over "pin".
        terms = sorted(
            (t for t in _VOCABULARY if t.cls == cls),
            key=lambda t: -len(t.pattern),
        )
        groups.append(f"(?P<{cls}>{'|'.join(_bounded(t) for t in terms)})")
    return "(?i)" + "|".join(groups)


_VOCABULARY += _listed_terms()
CREDENTIAL_WORD = re.compile(_noun_pattern())
"""A word that names a credential whose value may follow, in any language of the
vocabulary; the group that matched (``lastgroup``) is its class."""

WORD_LITERALS: tuple[str, ...] = tuple(sorted({t.literal for t in _VOCABULARY}))
"""Folded literals, one of which every match of :data:`CREDENTIAL_WORD` holds."""


# -- looking only where a match can be ------------------------------------------------------
#
# The patterns here are long alternations behind lookbehinds: tried at every position of
# a text they cost a microsecond per character or more. Every match holds a literal (a
# word's literal, a digit), so each pattern runs only on windows around the literals'
# occurrences, wide enough to hold every match that holds one. Lookbehinds see before a
# window; a window ends well past every match in it, so lookaheads see what they would.
_Window = tuple[int, int]


def _windows(spans: list[_Window], before: int, after: int, length: int) -> list[_Window]:
    """``spans`` grown by ``before`` and ``after``, clipped, sorted and merged."""
    merged: list[_Window] = []
    for start, end in sorted(spans):
        low, high = max(0, start - before), min(length, end + after)
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged


Occurrence = tuple[int, str]
"""Where a literal is in a folded text, and which."""


@cache
def _automaton() -> Any:
    """Every literal of every word the finders here look for (a credential's, a national
    id's, a login's), in one Aho-Corasick automaton: a text is read once for all of
    them, however many languages the vocabulary holds."""
    automaton = ahocorasick.Automaton()
    for literal in {*WORD_LITERALS, *ID_LITERALS, *LOGIN_LITERALS}:
        automaton.add_word(literal, literal)
    automaton.make_automaton()
    return automaton


def literal_occurrences(folded: str) -> list[Occurrence]:
    """Every occurrence in ``folded`` of a literal the finders look for (overlapping ones
    too), in order; a tab stands for the space of a literal of several words, as in the
    finders' patterns. :func:`class_spans` looks once for all its finders."""
    spaced = folded.replace("\t", " ")
    return sorted({(end - len(literal) + 1, literal) for end, literal in _automaton().iter(spaced)})


def _spans(occurrences: list[Occurrence], literals: frozenset[str]) -> list[_Window]:
    return [(at, at + len(w)) for at, w in occurrences if w in literals]


def _search_near(
    pattern: re.Pattern[str], text: str, spans: list[_Window], before: int, after: int
) -> Iterator[re.Match[str]]:
    for start, end in _windows(spans, before, after, len(text)):
        yield from pattern.finditer(text, start, end)


# A word of the vocabulary starts at most this far before its literal, and ends at most
# this far after it (tests/unit/test_secret_gate.py holds every word to it).
WORD_BEFORE, WORD_AFTER = 32, 48


@dataclass(frozen=True)
class Word:
    """A credential word found in a text: where, and its class."""

    start: int
    end: int
    cls: str
    text: str


_Ranked = tuple[tuple[int, int], re.Pattern[str], str, bool]


@cache
def _terms_by_literal() -> dict[str, tuple[_Ranked, ...]]:
    """Each literal's words: their rank (as :data:`CREDENTIAL_WORD` orders them), their
    pattern, their class, and whether each match starts with the literal."""
    found: dict[str, list[_Ranked]] = {}
    for term in _VOCABULARY:
        rank = (_CLASS_ORDER.index(term.cls), -len(term.pattern))
        pattern = re.compile("(?i)" + _bounded(term))
        found.setdefault(term.literal, []).append((rank, pattern, term.cls, term.anchored))
    return {literal: tuple(sorted(terms, key=lambda t: t[0])) for literal, terms in found.items()}


def credential_words(
    text: str, folded: str | None = None, occurrences: list[Occurrence] | None = None
) -> list[Word]:
    """The credential words of ``text`` (``folded``: ``fold(text)``; ``occurrences``: its
    :func:`literal_occurrences`, when the caller has them), in order, none overlapping:
    where several start at one place, the first in the order of :data:`CREDENTIAL_WORD`
    (the longer of a class first). Each word's pattern is tried only where its literal
    is."""
    folded = fold(text) if folded is None else folded
    if len(folded) != len(text):  # folding moved offsets: look everywhere
        return [
            Word(m.start(), m.end(), m.lastgroup or "", m.group())
            for m in CREDENTIAL_WORD.finditer(text)
        ]
    occurrences = literal_occurrences(folded) if occurrences is None else occurrences
    terms = _terms_by_literal()
    found: set[tuple[int, tuple[int, int], int, str]] = set()
    for at, literal in occurrences:
        for rank, pattern, cls, anchored in terms.get(literal, ()):
            if anchored:  # a match holding this occurrence starts at it
                match = pattern.match(text, at)
                if match is not None:
                    found.add((at, rank, match.end(), cls))
                continue
            low, high = max(0, at - WORD_BEFORE), min(len(text), at + len(literal) + WORD_AFTER)
            for match in pattern.finditer(text, low, high):
                found.add((match.start(), rank, match.end(), cls))
    words: list[Word] = []
    for start, _, end, cls in sorted(found):
        if words and start < words[-1].end:
            continue
        words.append(Word(start, end, cls, text[start:end]))
    return words


def may_hold_words(folded: str) -> bool:
    """Whether the folded text holds a credential word, a national id's or a login's:
    false only when none of :func:`word_value_spans`, :func:`named_id_spans` and
    :func:`login_pair_spans` finds anything in the text it was folded from."""
    occurrences = literal_occurrences(folded)
    if not occurrences:
        return False
    words = credential_words(folded, folded, occurrences)
    return (
        any(_may_give(folded, word) for word in words)
        or any(True for _ in id_words(folded, folded, occurrences, any_case=True))
        or any(True for _ in login_pairs(folded, folded, occurrences))
    )


# How far after a verb that enters a code the gate looks for its digits.
_GATE_DIGIT_AFTER = 24
# Classes of common words, which pass the gate only with what their finder needs near.
GATED_CLASSES = frozenset({_ENTER, _SHORT, _PURPOSE, _KEY})


def _may_give(folded: str, word: Word) -> bool:
    """Whether a value may be given with ``word``, as its finder looks for one: words of
    common classes (a verb, "pass", "for the door") only where what their finder needs
    is (a digit right after, an account named before, a value given before)."""
    if word.cls == _ENTER:
        return any(c.isdigit() for c in folded[word.end : word.end + _GATE_DIGIT_AFTER])
    if word.cls == _SHORT:
        after = folded[word.end : word.end + _SHORT_AFTER * 44]
        return _names_account(_account_before(folded, word.start)) or _names_account(after)
    if word.cls == _PURPOSE:
        low = max(0, word.start - _GIVEN_BEFORE_CHARS)
        return _GIVEN_BEFORE.search(folded, low, word.start) is not None
    if word.cls == _KEY:
        return _network_near(folded, word)
    return True


# -- finding values after credential words ------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A credential found: where it is, and its kind."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class Judges:
    """The value judgements :mod:`secrets` lends: whether a value reads as a password, and
    whether it only stands for one (a placeholder, a reference)."""

    password_like: Callable[[str], bool]
    filler: Callable[[str], bool]


_WORDS = re.compile(r"[^\W\d_][\w'’\-]{0,40}")
_CLAUSE_END = re.compile(r"[.!?;\n。！？；]")
_CLAUSE_BEFORE = 48
_SPACES = re.compile(r"[ \t]{1,4}")


_ALNUM_RUNS = re.compile(r"[^\W_]+")


def _has_stem(text: str, stems: tuple[str, ...]) -> bool:
    """Whether a word of ``text`` starts with one of ``stems``."""
    return any(word.startswith(stems) for word in _ALNUM_RUNS.findall(text.lower()))


def _names_lock(text: str) -> bool:
    """Whether ``text`` names something a code opens: a door, a gate, an alarm, a safe."""
    for word in _ALNUM_RUNS.findall(text.lower()):
        if word in _LOCK_WORDS or word.startswith(_LOCK_STEMS):
            return True
    return _LOCK_INFIXES.search(text) is not None


def _clause_before(text: str, start: int) -> str:
    window = text[max(0, start - _CLAUSE_BEFORE) : start]
    ends = list(_CLAUSE_END.finditer(window))
    return window[ends[-1].end() :] if ends else window


def _account_before(text: str, start: int) -> str:
    """What may name the account of "pass" at ``start``: its clause before, or, where it
    opens its line, the end of the line before ("usuario: ana\ncontra: ...")."""
    before = _clause_before(text, start)
    if before.strip(" \t") or not text[max(0, start - len(before) - 1) : start].startswith("\n"):
        return before
    line_end = start - len(before) - 1
    line_start = text.rfind("\n", max(0, line_end - _CLAUSE_BEFORE), line_end) + 1
    return text[max(line_start, line_end - _CLAUSE_BEFORE) : line_end]


def _compound_head(text: str, start: int) -> str:
    """The letters (and hyphens) right before ``start`` in the same word: ``Tür`` of
    ``Türcode``, ``WLAN-`` of ``WLAN-Passwort``."""
    at = start
    while at > max(0, start - 24) and (text[at - 1].isalpha() or text[at - 1] == "-"):
        at -= 1
    return text[at:start]


def _code_named(text: str, start: int, between: list[str], end: int | None = None) -> bool:
    """Whether the code named at ``start`` opens something: a lock named in the word
    itself (``Türcode``), before it in its clause, in the words after it, or in the few
    words after its value (ending at ``end``: "the code is 4417 *for the gate*"), and no
    word saying it is another kind of code (an error's, a parcel's) right next to it."""
    head = _compound_head(text, start).strip("-")
    if text.startswith(_NUMBER_WORDS, start):
        named = head or _clause_before(text, start)
        if any(thing in named for thing in _NUMBERED_THINGS):
            return False  # a locker's, a key's, a room's number: which one, not its code
    if head:
        return _opens(head) and head.lower() not in _NOT_LOCKS
    before = _clause_before(text, start)
    previous = (_WORDS.findall(before)[-1:] or [""])[0].lower()
    if previous in _NOT_LOCKS or any(w.lower() in _NOT_LOCKS for w in between[:2]):
        return False
    if _opens(before) or any(_opens(w) for w in between):
        return True
    return end is not None and _lock_after(text, end)


def _opens(text: str) -> bool:
    """Whether ``text`` names what a code opens: a lock, or a card (whose code is its
    PIN: ``code de carte bleue``, ``card code``)."""
    return _names_lock(text) or _names_card(text)


def _names_account(text: str) -> bool:
    """Whether ``text`` names an account or a network, whose password "pass" gives."""
    return _has_stem(text.replace("-", ""), _ACCOUNT_STEMS)


def _names_card(text: str) -> bool:
    """Whether ``text`` names a card, whose PIN or security code follows."""
    if _has_stem(text, _CARD_STEMS) or any(s in text for s in _CARD_INFIXES):
        return True
    return any(w in _CARD_WORDS_WHOLE for w in _ALNUM_RUNS.findall(text.lower()))


def _names_network(text: str) -> bool:
    """Whether ``text`` names a network, whose password a key or a code is ("network
    BTHub, key ...", "le code wifi", "WLAN-Schlüssel")."""
    lowered = text.lower()
    words = _ALNUM_RUNS.findall(lowered.replace("-", ""))
    if any(w.startswith(_NETWORK_STEMS) or w in _NETWORK_WORDS for w in words):
        return True
    return any(s in text for s in _NETWORK_CJK)


# How far around a key word its network may be named: its clause before, or the words
# given first (three, of at most 25 characters); the first four words after it (each of
# at most forty characters, and their spaces).
_NETWORK_WORDS_AFTER = 4
_NETWORK_BEFORE, _NETWORK_AFTER = 96, 4 * 44


def _network_near(text: str, word: Word) -> bool:
    """Whether a network may be named anywhere a key's finder looks for one: true
    wherever :func:`_names_network` is, on any part of that stretch; the cheap test that
    :func:`_judged_class` refines, and the gate's."""
    low = max(0, word.start - _NETWORK_BEFORE)
    near = text[low : word.end + _NETWORK_AFTER].lower().replace("-", "")
    return any(map(near.__contains__, _NETWORK_HINTS))


def _network_named(text: str, word: Word, between: list[str]) -> bool:
    """Whether the key or code ``word`` is a network's: the network named in the word
    itself (``WLAN-Schlüssel``), before it in its clause, or in the first few words after
    it ("la clé du wifi", "le code wifi", "chave de segurança da rede")."""
    head = _compound_head(text, word.start)
    if head and _names_network(head):
        return True
    if any(_names_network(w) for w in between[:_NETWORK_WORDS_AFTER]):
        return True
    return _names_network(_clause_before(text, word.start))


def _judged_class(
    text: str,
    cls: str,
    word: Word,
    between: list[str],
    *,
    given: str | None = None,
    judges: Judges | None = None,
) -> str:
    """The class a value after ``word`` is judged as: a network's key or code as a
    password (it opens the network as a password does); a code after a word for a code
    and a password alike (``šifra``, ``رمز``) as a password where the value ``given`` by
    a mark or a verb reads as one; a key of nothing named as nothing (its class, which
    no value satisfies)."""
    if cls in (_KEY, _CODE) and _network_named(text, word, between):
        return _PASSWORD
    if (
        cls == _CODE
        and given is not None
        and judges is not None
        and _CODE_OR_PASSWORD.search(word.text)
        and judges.password_like(given.rstrip(_TRAILING))
    ):
        return _PASSWORD
    return cls


_CLAUSE_AFTER = 40
_WORDS_AFTER = 4


def _lock_after(text: str, end: int) -> bool:
    """Whether a lock is named in the few words after ``end``, in its clause ("digita
    4490 *no interfone*")."""
    window = text[end : end + _CLAUSE_AFTER]
    stop = _CLAUSE_END.search(window)
    words = _WORDS.findall(window[: stop.start()] if stop else window)
    return _names_lock(" ".join(words[:_WORDS_AFTER]))


def _is_prepositional(word: str) -> bool:
    lowered = word.lower()
    return lowered in _PREPOSITIONS or _ELIDED.match(lowered) is not None


def _unquoted(match: re.Match[str]) -> str | None:
    for group in ("dq", "sq", "cq"):
        found = match.group(group)
        if found is not None:
            return found
    return None


def _followed_by_unit(rest: str) -> bool:
    if rest.lstrip(" \t").startswith(_UNIT_SIGNS) or _UNIT_CJK.match(rest):
        return True
    word = _WORDS.match(rest.lstrip(" \t"))
    return word is not None and word.group().lower().rstrip(".,") in _UNITS


# The verb that closes a clause in languages that put it last ("... 6315 *است*", "...
# 8051 *ہے*"): what comes before it is what the clause gives.
_CLOSING_VERB = re.compile(r"[ \t]{1,4}(?:است|هست|ہے|ہیں|है|हैं|हो|आहे|ছিল|է|ਹੈ|છે)(?![^\W\d_])")


def _ends_clause(rest: str) -> bool:
    """The text after a value ends its clause: nothing, a line break, punctuation, an
    aside, a verb that closes it, or Chinese, Japanese, Korean or Thai (Lao, Burmese,
    Khmer) going on."""
    if _CLOSING_VERB.match(rest):
        return True
    stripped = rest.lstrip(" \t")
    head = stripped[:1]
    if head in ("", "\n", "\r") or head in _TRAILING or "\u3000" <= head <= "\uffef":
        return True
    if head < "\u3000" and _SPACELESS.match(head):
        return True
    return rest.startswith((" (", " -", " \u2014", " \u2013", " /")) or bool(_THEN.match(rest))


# A next step after a code, which ends what was said of it ("40728 *then* the green
# button", "4490 *e depois* a chave").
_THEN = re.compile(
    r"(?i)[ \t]{1,4}(?:(?:and|und|e|y|et|en|i|и|ve|och|ja|a)[ \t]{1,4})?"
    r"(?:then|dann|depois|luego|después|puis|ensuite|poi|daarna|potem|затем|потом|sonra"
    r"|sedan|sitten|pak|apoi|aztán|lalu|kemudian)(?![^\W\d_])"
)


def _digit_count(value: str) -> int:
    return len(_DIGITS.findall(value))


def _value_kind(
    cls: str, match: re.Match[str], explicit: bool, between: bool, rest: str, judges: Judges
) -> str | None:
    """The kind of credential the value ``match`` is, given after a word of class
    ``cls``, with a mark or verb between them or not (``explicit``), and words between
    them or not; None when it is no credential."""
    if cls == _KEY:
        return None  # a key of no network named: a door's, an API's, a song's
    quoted = _unquoted(match)
    if quoted is not None:
        ok = cls == _PASSWORD and explicit and len(quoted.strip()) >= 4
        return PASSWORD if ok and not judges.filler(quoted) else None
    bracketed = match.group("pq")
    if bracketed is not None:
        # An aside in parentheses is a value only when it reads as a password
        # ("a senha atual (Jabuticaba#7)"), never a remark ("(required)").
        ok = cls == _PASSWORD and judges.password_like(bracketed)
        return PASSWORD if ok else None
    if match.group("apppw") is not None:
        ok = cls in (_PASSWORD, _SHORT) and _drawn_at_random(match.group("apppw"))
        return PASSWORD if ok else None
    if match.group("spaced") is not None:
        # Digits spaced out as they are read aloud or keyed in ("code is 8 1 9 4"): a code,
        # when a mark or verb gives them or they close the clause.
        if cls in (_CVV, _SHORT) or _followed_by_unit(rest):
            return None
        if not (explicit or _ends_clause(rest)):
            return None
        return PASSWORD if cls == _PASSWORD else ACCESS_CODE
    raw = match.group("code") or match.group("bare") or ""
    value = raw.rstrip(_TRAILING)
    rest = raw[len(value) :] + rest
    suffixed = _COPULA_SUFFIX.fullmatch(value)
    if suffixed is not None:  # "5917-dir": the digits, then the verb that closes the clause
        value, rest = suffixed.group(1), ""
    if not value or _followed_by_unit(rest):
        return None
    # Words between the credential's name and a value given without a mark or verb: the
    # value must close its clause ("PIN for account 12345678 changed" gives no PIN).
    if between and not explicit and not _ends_clause(rest):
        return None
    digits = _digit_count(value)
    if cls == _VAULT:
        # What opens with a code takes digits closing the clause: a combination in groups
        # ("padlock 12-34-56"), or digits given by a mark or a verb ("the key safe by the
        # back door is 3091, ...").
        if not _ends_clause(rest) or digits < 3:
            return None
        if match.group("code") is not None:
            return ACCESS_CODE
        return ACCESS_CODE if explicit and _DIGIT_CODE.fullmatch(value) else None
    if match.group("code") is not None:  # digits in groups: a combination (12-34-56)
        if cls == _CVV or digits < 3:
            return None
        return PASSWORD if cls in (_PASSWORD, _SHORT) else ACCESS_CODE
    if _DIGIT_CODE.fullmatch(value):
        if cls == _CVV:
            return ACCESS_CODE if digits <= 4 else None
        if cls in _LOCK_CLASSES:
            return ACCESS_CODE
        if digits < (6 if cls == _SHORT else 4):
            return None
        return ACCESS_CODE if cls == _PIN else PASSWORD
    if cls in _LOCK_CLASSES and digits >= 3 and _SHORT_CODE.fullmatch(value):
        return ACCESS_CODE
    if cls == _PASSWORD and value.isdigit() and _LONG_DIGITS[0] <= len(value) <= _LONG_DIGITS[1]:
        return PASSWORD  # a network key of digits only: "WLAN-Schlüssel: 4471..."
    if cls not in (_PASSWORD, _SHORT) or value.lower() in _NOT_VALUES:
        return None
    return PASSWORD if judges.password_like(value) else None


# Digits only, longer than a code, after a password word: a password all the same.
_LONG_DIGITS = (13, 64)
# Digits with the copula written on them, as Azerbaijani and Turkish do ("5917-dir").
_COPULA_SUFFIX = re.compile(r"(\d{3,12})-?(?:d|t)(?:ir|ır|ur|ür)")
_LABEL_MARKS = frozenset(":：=")
# Classes whose value is a code that opens a lock, which must be named.
_LOCK_CLASSES = (_CODE, _UNLOCK, _ENTER)


def _separator(text: str, pos: int, limit: int, cjk: bool) -> tuple[int, bool, bool] | None:
    """Where a value may start after ``pos``; whether a mark or verb gave it; whether that
    was a label's colon or equals sign."""
    if cjk:
        found = _CJK_SEPARATOR.match(text, pos, limit)
        if found is None:
            return None
        return found.end(), True, (found.group("mark") or "") in _LABEL_MARKS
    found = _SEPARATOR.match(text, pos, limit)
    if found is None:
        return None
    mark = (found.group("mark") or "").strip(" \t")
    return found.end(), found.group("space") is None, mark in _LABEL_MARKS


def _after_word(text: str, cls: str, word: Word, judges: Judges, cjk: bool) -> Found | None:
    """The value given after the credential word ``word``, if one is: right after it, or
    after a few words saying what it is for ("the password *for the NAS* is ...")."""
    pos = word.end
    limit = min(len(text), pos + 240)
    between: list[str] = []
    loose = False  # the words between say nothing of what the credential is for
    # The noun, or a word spelt the same ("pin the memory", Tamil's "after").
    pin = cls == _PIN and word.text in _PIN_HOMOGRAPHS
    thai = False  # words between ran on from the word, as Thai writes them
    for _ in range(_MAX_BETWEEN + 1):
        separator = _separator(text, pos, limit, cjk and (not between or thai))
        label = (
            separator is not None
            and separator[2]
            and text[separator[0] - 1 : separator[0]].isspace()
        )
        # A verb after a comma closes what the words between said ("the password
        # changed, now it's ...").
        resumed = separator is not None and separator[1] and text.startswith(",", pos)
        if separator is not None and (not loose or label or resumed):
            at, explicit, _ = separator
            # After loose words, a value the verb gives must close its clause too.
            explicit = explicit and not (loose and not label)
            value = _VALUE.match(text, at, limit)
        else:
            value = None
        # "pin 1234": a pin of a board, unless written PIN, given, or a card's.
        bare_pin = value is not None and pin and not explicit and not between
        if bare_pin and not _names_card(_clause_before(text, word.start)):
            value = None
        if value is not None:
            rest = text[value.end() : value.end() + 16]
            given = value.group("bare") if explicit else None
            judged = _judged_class(text, cls, word, between, given=given, judges=judges)
            kind = _value_kind(judged, value, explicit, bool(between), rest, judges)
            if kind is not None:
                # A network's key or code is judged as a password: its network is named.
                opens = judged != cls or _names_what_it_opens(
                    text, cls, word, between, value.end(), explicit
                )
                if not opens:
                    return None
                start, end = value.span()
                if _unquoted(value) is not None or value.group("pq") is not None:
                    return Found(start + 1, end - 1, kind)
                return Found(start, start + len(value.group().rstrip(_TRAILING)), kind)
        step = _BETWEEN.match(text, pos, limit)
        if step is None and cjk:
            step = _THAI_BETWEEN.match(text, pos, limit)
            thai = step is not None
        if step is None:
            return None
        if cls == _ENTER and between:
            return None  # a code entered follows its verb
        first = step.group("word")
        if not between and pin and first.lower() in _OBJECTS:
            return None  # "pin the memory to ...": the verb
        names = (not between or loose) and _names_what_for(first)
        if not between and not (names or _is_prepositional(first) or first.lower() in _QUALIFIERS):
            if separator is not None and separator[1] and text[pos : separator[0]].strip():
                return None  # "password is in ...": said, and no value
            loose = True
        if loose and len(between) >= _MAX_LOOSE:
            return None
        # A word naming what it opens, after one that said nothing of it, says what the
        # credential is for all the same ("کد درِ *پارکینگ* ...": the door of the car park).
        loose = loose and not names
        between.append(first)
        pos = step.end()
    return None


def _names_what_for(word: str) -> bool:
    """Whether ``word`` names what a credential opens: a lock, a card, an account."""
    return _names_lock(word) or _names_card(word) or _names_account(word)


def _names_what_it_opens(
    text: str, cls: str, word: Word, between: list[str], end: int, explicit: bool
) -> bool:
    """Whether what the value after ``word`` opens is named, where its class needs it: a
    lock (or a card) for a code, a lock for a verb that opens or enters one (before it
    in its clause, or in the few words after the value), an account or a network for
    "pass" (before it, or after it and a preposition when a mark or verb gives the value:
    "la contra *del router* es ...")."""
    if cls == _CODE:
        return _code_named(text, word.start, between, end)
    if cls in (_UNLOCK, _ENTER):
        return _names_lock(_clause_before(text, word.start)) or _lock_after(text, end)
    if cls == _SHORT:
        if _names_account(_account_before(text, word.start)):
            return True
        named = between[:1] and _is_prepositional(between[0])
        return bool(named) and explicit and any(map(_names_account, between[1:_SHORT_AFTER]))
    return True


# Words for a code that name a password as often (Serbo-Croatian ``šifra``, Persian and
# Arabic ``رمز``).
_CODE_OR_PASSWORD = re.compile(r"(?i)šifr|шифр|رمز")


# PIN words that are other words too: a value right after one is a PIN only where a
# card is named before it, or a mark or verb gives it.
_PIN_HOMOGRAPHS = frozenset({"pin", "பின்"})


# The words after "pass" that may name its account: a preposition, then two words.
_SHORT_AFTER = 3


# A value given before what it is for: "it's hunter2 *for the wifi*", "c'est 1854 *pour
# le portail*". The verb must be a pronoun's ("it's", "that's"), so that "the price is
# 1200 for the door" gives none.
_GIVEN_BEFORE = re.compile(
    r"(?i)(?<![^\W\d_])(?:it['’]?s|it[ \t]{1,4}is|that['’]s|c['’]est|es[ \t]{1,4}ist"
    r"|das[ \t]{1,4}ist|use)[ \t]{1,4}(?P<value>[^\s\"'`]{3,64})[ \t]{1,4}$"
)
_GIVEN_BEFORE_CHARS = 80
_NETWORKS = ("wi", "wlan", "router", "network")


def _given_before(text: str, word: Word, judges: Judges) -> Found | None:
    """The value given right before a purpose (``word``): a password for a network, a
    code of four digits or more for a lock."""
    low = max(0, word.start - _GIVEN_BEFORE_CHARS)
    match = _GIVEN_BEFORE.search(text, low, word.start)
    if match is None:
        return None
    value = match.group("value").rstrip(_TRAILING)
    start = match.start("value")
    target = _WORDS.findall(word.text)[-1].lower()
    if target.startswith(_NETWORKS):
        ok = judges.password_like(value) or (value.isdigit() and len(value) >= 8)
        return Found(start, start + len(value), PASSWORD) if ok else None
    code = _DIGIT_CODE.fullmatch(value) or _COMBINATION.fullmatch(value)
    if code is not None and _digit_count(value) >= 4:
        return Found(start, start + len(value), ACCESS_CODE)
    return None


# A value given first, then named: "Rosemary55 is the new guest wifi password", "4417 é o
# código do portão". The value, a verb that says what it is, a determiner, up to three
# words (what the credential is for), then the credential word.
_FIRST_COPULAS = (
    r"is|was|will[ \t]{1,4}be|é|era|será|es|est|était|sera|ist|war|wird|è|sarà|wordt"
    r"|jest|to|это|är|blir|adalah|ialah"
    # no and da, fi and et, cs, sk and the South Slavic languages, ro; and Tagalog's
    # marker of what a sentence is about, which follows what is said of it ("8063 yung
    # PIN ng ATM ko": the PIN of my card is 8063)
    r"|er|on|je|este|ang|yung|ung"
)
_DETERMINERS = (
    r"the|a|an|my|our|your|his|her|their|this|o|os|as|um|uma|meu|minha|nosso|nossa|seu|sua"
    r"|el|la|los|las|un|una|mi|tu|su|nuestro|nuestra|le|les|une|mon|ma|ton|ta|notre|votre"
    r"|son|sa|der|die|das|den|dem|ein|eine|mein|meine|unser|unsere|dein|deine|il|lo|i|gli"
    r"|het|de|een|mijn|ons|onze|det|ett|en|min|mitt|vår|vårt"
)
_GIVEN_FIRST = re.compile(
    rf"(?i)(?<!\S)(?P<value>[^\s\"'`]{{4,64}})[ \t]{{1,4}}(?:{_FIRST_COPULAS})[ \t]{{1,4}}"
    rf"(?:(?:{_DETERMINERS})[ \t]{{1,4}}|l['’])?"
    r"(?P<words>(?:[^\W\d_][\w\-]{0,24}[ \t]{1,4}){0,3}(?:[^\W\d_][\w]{0,24}-)?)$"
)
_GIVEN_FIRST_CHARS = 160
# Classes of word whose value may come first.
_GIVEN_FIRST_CLASSES = frozenset({_PASSWORD, _PIN, _CODE, _KEY})
_CLAUSE_REST = re.compile(r"[^\n.,;!?。，；！？]{0,48}")
_CLAUSE_STARTS = "\n.!?;:,(\"'“«"


def _closing_words(text: str, end: int) -> list[str] | None:
    """The words after the credential word ending at ``end``, if it closes its clause:
    none (the clause ends, or an aside follows), or a few that say what it is for ("...
    password *for the NAS*."); None if the clause goes on."""
    rest = _CLAUSE_REST.match(text, end)
    tail = rest.group().strip(" \t") if rest is not None else ""
    if not tail or tail.startswith(("(", "-", "\u2014", "\u2013")):
        return []
    words = _WORDS.findall(tail)
    return words if 0 < len(words) <= 4 and _is_prepositional(words[0]) else None


def _starts_clause(text: str, start: int) -> bool:
    """Whether ``start`` begins a clause: the text's start, or after a line break or a
    mark that opens one. Digits given first must stand there: "2741 is the alarm code",
    not "the year 2024 is the PIN's ..."."""
    window = text[max(0, start - 8) : start]
    before = window.rstrip(" \t")
    if not before:
        return len(window) == start  # nothing but spaces since the start of the text
    return before[-1] in _CLAUSE_STARTS


def _given_first(text: str, cls: str, word: Word, judges: Judges) -> Found | None:
    """The value given before the credential word ``word`` and a verb that says it is
    one ("Rosemary55 is the new guest wifi password", "2741 is the alarm code"): a value
    that reads as a password for a password word, or digits at the start of a clause for
    a PIN or a code of a lock named with it."""
    after = _closing_words(text, word.end)
    if after is None:
        return None
    low = max(0, word.start - _GIVEN_FIRST_CHARS)
    match = _GIVEN_FIRST.search(text, low, word.start)
    if match is None:
        return None
    value = match.group("value").rstrip(_TRAILING)
    start = match.start("value")
    # What it is for: the words before it ("the *alarm* code"), and after ("do *portão*").
    between = _WORDS.findall(match.group("words")) + after
    judged = _judged_class(text, cls, word, between)
    if judged == _PASSWORD:
        if judges.password_like(value) and value.lower() not in _NOT_VALUES:
            return Found(start, start + len(value), PASSWORD)
        return None
    code = _DIGIT_CODE.fullmatch(value) or _COMBINATION.fullmatch(value)
    if code is None or _digit_count(value) < 4 or not _starts_clause(text, start):
        return None
    if judged == _PIN or (judged == _CODE and _code_named(text, word.start, between)):
        return Found(start, start + len(value), ACCESS_CODE)
    return None


# A value given as the answer, on the next line, to a line that asks for it ("whats the
# hulu password again" / "[14:03] me: Waffles2morrow"): the line goes on for a few words
# at most after the credential word, and the next holds nothing but the value, after a
# chat's time and name.
_ASKING_REST = re.compile(r"[^\n]{0,40}(?=\n)")
_ANSWER_LINE = re.compile(
    r"\n[ \t]{0,4}(?:\[[^\]\n]{1,24}\][ \t]{0,4})?(?:[^\s:\[\]]{1,24}:[ \t]{1,4})?"
    r"(?P<value>[^\s\"'`]{4,64})[ \t]{0,4}(?:\n|$)"
)
_ASKING_WORDS = 3


def _answered_below(text: str, cls: str, word: Word, judges: Judges) -> Found | None:
    """The value given on the line after the one that names the credential, alone (an
    answer in a chat, or a label's value on the line below it): a value that reads as a
    password for a password word, digits for a PIN, digits or a keypad's short code for
    a lock's code."""
    rest = _ASKING_REST.match(text, word.end)
    if rest is None or len(_WORDS.findall(rest.group())) > _ASKING_WORDS:
        return None
    answer = _ANSWER_LINE.match(text, rest.end())
    if answer is None:
        return None
    value = answer.group("value").rstrip(_TRAILING)
    start = answer.start("value")
    between = _WORDS.findall(rest.group())
    judged = _judged_class(text, cls, word, between)
    if judged == _PASSWORD:
        ok = judges.password_like(value) and value.lower() not in _NOT_VALUES
        return Found(start, start + len(value), PASSWORD) if ok else None
    digits = _digit_count(value)
    if _DIGIT_CODE.fullmatch(value) and digits >= 4:
        if judged == _PIN or (judged == _CODE and _code_named(text, word.start, between)):
            return Found(start, start + len(value), ACCESS_CODE)
    elif (
        judged == _CODE
        and digits >= 3
        and _SHORT_CODE.fullmatch(value)
        and _code_named(text, word.start, between)
    ):
        return Found(start, start + len(value), ACCESS_CODE)
    return None


def _written_without_spaces(word: str) -> bool:
    return _SPACELESS.search(word) is not None


# An app password as accounts issue them (four groups of four lowercase letters), given
# after a mark later on the line of a password word, whatever is said between them
# ("Hasło aplikacji do Gmaila (dla Outlooka w pracy): vhsn qpla tmwc ryex", "asks for
# an app password -> use qmvd tfzx hrkw lenb"): a colon, an equals sign or an arrow,
# and at most one word after it.
_APP_PASSWORD = re.compile(
    r"(?<![\w\-])(?P<value>[a-z]{4}(?:-[a-z]{4}){3}|[a-z]{4}(?: [a-z]{4}){3})(?![\w\-])"
)
_APP_PASSWORD_MARK = re.compile(r"(?::|=|->|=>|→)[ \t]{0,4}(?:[^\W\d_]{1,12}[ \t]{1,4})?$")
_APP_PASSWORD_AFTER = 160
_APP_PASSWORD_MARK_BEFORE = 24
# Three letters in a row that are not vowels: in none of four letters of a word, and in
# most groups drawn at random (a group with no vowel at all among them).
_THREE_CONSONANTS = re.compile(r"[^aeiouy]{3}")


def _drawn_at_random(groups: str) -> bool:
    """Whether four groups of four letters read as an app password rather than four
    short words ("send them your mail"): split by hyphens, or one group no word would
    be."""
    return " " not in groups or any(_THREE_CONSONANTS.search(g) for g in groups.split(" "))


def _app_password_later(text: str, word: Word) -> Found | None:
    line_end = text.find("\n", word.end)
    end = min(len(text) if line_end < 0 else line_end, word.end + _APP_PASSWORD_AFTER)
    for match in _APP_PASSWORD.finditer(text, word.end, end):
        marked = _APP_PASSWORD_MARK.search(
            text, max(word.end, match.start() - _APP_PASSWORD_MARK_BEFORE), match.start()
        )
        if marked is not None and _drawn_at_random(match.group("value")):
            return Found(match.start("value"), match.end("value"), PASSWORD)
    return None


# -- a value that can only be a password, in the clause of a password word ----------------
# However the clause gives it ("hasło zmieniłam na ...", "비번 바꿨어 → ...", "... — ეს
# არის wifi-ის პაროლი"), a token that reads as a password and as nothing else, in the
# clause that names a password, is that password: lowercase letters and digits with a
# mark ids and names are not written with ("!", "$", "%", "&", "*", "?"), or with
# capitals and a "#", "@" or "_" inside ("Lananh#0311", "Tortellino_88"); or sixteen
# letters drawn at random, as accounts issue app passwords. Not a handle or a tag ("@ana",
# "#infosec2024"), a ticket ("INC#2024"), an address, a path, a time, a setting
# ("m=65536"), a host and port, a version, a hash, nor what a word for a network or a
# user names.
_CLAUSE_BOUND = re.compile(r"[.!?;](?=\s|$)|\n|[。！？；]")
_CLAUSE_SPAN = 120
_TOKEN = re.compile(r"[^\s\"'`«»“”„()\[\]{}<>]+")
_STRONG_MIN, _STRONG_MAX = 8, 64
_NOT_STRONG = re.compile(
    r"@[^\s]*\.|://|^www\.|[/\\:=+]|^[@#]|^[A-Z]{2,}[#\-]"
    r"|^[0-9a-fA-F]+(?:[\-:][0-9a-fA-F]+)+$"
)
_CLAUSE_PUNCTUATION = ".,;:，。、；："
_PASSWORD_MARKS = re.compile(r"[!$%&*?]")
_INNER_MARKS = re.compile(r"(?<=\w)[#@_](?=\w)")
_RANDOM_LETTERS = re.compile(r"[a-z]{16}")
_VOWELS = re.compile(r"[aeiouy]")
_CONSONANT_RUN = re.compile(r"[^aeiouy]{4}")
_RANDOM_DISTINCT = 10  # letters of sixteen drawn at random: twelve, most often
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
_BAND = re.compile(r"(?i)[\-_ ]?(?:2[.,]4|5|6)[ \-]?g(?:hz)?$")
_WORDS_BEFORE = re.compile(r"([^\W\d_][\w\-]*)[ \t:]{1,3}$")
_PLACEHOLDER = "[REDACTED:"
_USER_WORDS = frozenset(
    {
        *("user", "username", "login", "account", "id", "handle", "nick", "usuario"),
        *("usuário", "utilisateur", "benutzer", "nutzer", "benutzername", "utente"),
        *("gebruiker", "użytkownik", "пользователь", "логин", "користувач", "kullanıcı"),
        "tk",  # vi: short for "tài khoản", an account
    }
)


def _drawn_letters(token: str) -> bool:
    """Sixteen lowercase letters as an account draws them: few vowels, a run of
    consonants, most letters different, and no run of the alphabet ("abcd...")."""
    if len(_VOWELS.findall(token)) > 4 or _CONSONANT_RUN.search(token) is None:
        return False
    if len(set(token)) < _RANDOM_DISTINCT:
        return False
    return not any(token[i : i + 4] in _ALPHABET for i in range(len(token) - 3))


def _reads_only_as_password(token: str, judges: Judges) -> bool:
    """Whether ``token`` reads as a password and as nothing else (see above)."""
    if _RANDOM_LETTERS.fullmatch(token):
        return _drawn_letters(token) and not judges.filler(token)
    if not _STRONG_MIN <= len(token) <= _STRONG_MAX or _NOT_STRONG.search(token):
        return False
    if not any(c.islower() for c in token) or not any(c.isdigit() for c in token):
        return False
    capitals = any(c.isupper() for c in token)
    if not (_PASSWORD_MARKS.search(token) or (capitals and _INNER_MARKS.search(token))):
        return False
    return judges.password_like(token)


def _names_something_else(text: str, token: re.Match[str]) -> bool:
    """Whether ``token`` is the name of a network or a user: after a word for one ("wifi
    OakLane-5G", "user JSmith1990"), or ending in a network's band ("Casa_Rossi-5G")."""
    if _BAND.search(token.group()):
        return True
    before = _WORDS_BEFORE.search(text, max(0, token.start() - 24), token.start())
    if before is None:
        return False
    word = before.group(1)
    return _names_network(word) or word.lower() in _USER_WORDS


def _password_in_clause(text: str, word: Word, judges: Judges) -> Found | None:
    """A value that reads only as a password, before or after the password word ``word``
    in its clause; never a network's name, and never where the word is a placeholder's
    (``[REDACTED:PASSWORD]``). A token the window cuts is read whole."""
    if text.startswith(_PLACEHOLDER, max(0, word.start - len(_PLACEHOLDER))):
        return None
    start = max(0, word.start - _CLAUSE_SPAN)
    bounds = list(_CLAUSE_BOUND.finditer(text, start, word.start))
    if bounds:
        start = bounds[-1].end()
    else:
        while start > 0 and not text[start - 1].isspace():
            start -= 1  # back to the start of the token the window cut
    limit = min(len(text), word.end + _CLAUSE_SPAN)
    after = _CLAUSE_BOUND.search(text, word.end, limit)
    end = after.start() if after else limit
    for token in _TOKEN.finditer(text, start):
        if token.start() >= end:
            break
        if token.start() < word.end and token.end() > word.start:
            continue  # the word itself
        value = token.group().rstrip(_CLAUSE_PUNCTUATION)  # "Abc-2580!!" keeps its marks
        ok = value and _reads_only_as_password(value, judges)
        if ok and not _names_something_else(text, token):
            return Found(token.start(), token.start() + len(value), PASSWORD)
    return None


def word_value_spans(
    text: str,
    judges: Judges,
    folded: str | None = None,
    occurrences: list[Occurrence] | None = None,
) -> Iterator[Found]:
    """Passwords, codes and PINs given after the words that name them, in any language
    of the vocabulary (``folded``, ``occurrences``: as :func:`credential_words` takes
    them)."""
    for word in credential_words(text, folded, occurrences):
        if word.start > 0 and text[word.start - 1].isdigit():
            continue  # part of a name: "1Password" (compounds of words, "Türcode", count)
        if word.cls == _KEY and not _network_near(text, word):
            continue  # a key of anything but a network: a door's, an API's, a song's
        if word.cls == _PURPOSE:
            found = _given_before(text, word, judges)
        else:
            cjk = _written_without_spaces(word.text)
            found = _after_word(text, word.cls, word, judges, cjk)
            if found is None and word.cls in _GIVEN_FIRST_CLASSES and not cjk:
                found = _given_first(text, word.cls, word, judges)
            if found is None and word.cls in _GIVEN_FIRST_CLASSES:
                found = _answered_below(text, word.cls, word, judges)
            if found is None and word.cls == _PASSWORD:
                found = _app_password_later(text, word) or _password_in_clause(text, word, judges)
        if found is not None:
            yield found


# -- a user and password together ---------------------------------------------------------------

LOGIN_PAIR = re.compile(
    r"(?i)(?<![^\W\d_])(?:basic[ \t\-]?auth|http[ \t\-]?auth"
    r"|user(?:name)?[ \t]?/[ \t]?pass(?:word)?|usu[áa]rio[ \t]{1,4}e[ \t]{1,4}senha"
    r"|usuario[ \t]{1,4}y[ \t]{1,4}contraseña|identifiants|zugangsdaten|credenziali"
    r"|credenciais|credenciales|inloggegevens|dane[ \t]{1,4}logowania"
    r"|учетные[ \t]{1,4}данные|login|zugang"
    # a user, in bg, ca, et, he, hr, lt, lv, ms, sk, th, ar
    r"|потребител|usuari|kasutaja|משתמש|korisnik|vartotojas|lietotājs|pengguna|používateľ"
    r"|ชื่อผู้ใช้|اسم[ \t]المستخدم)(?![^\W\d_])"
    # what the login is for, before a mark: "Zugang Router: admin / ..."
    r"(?:[ \t]{1,4}[^\W\d_][\w\-]{0,23}(?=[ \t]{0,4}[:=]))?"
    r"(?:[ \t]{0,4}(?::|=|\u2014)|[ \t]{1,4}(?:is|are|é|es|est|ist|è|with|com|con|avec|mit))?"
    r"[ \t]{1,4}(?P<user>[\w.@+\-]{1,64})[ \t]{0,4}[/:][ \t]{0,4}"
    r"(?P<value>[^\s\"'`]{1,128})"
)
"""A user and a password given together after a word for them (``basic auth ana:...``,
``user/pass = builder / ...``, ``Zugangsdaten: ...``)."""
LOGIN_LITERALS: tuple[str, ...] = (
    "auth", "user", "usu", "identifiants", "zugangsdaten", "credenzi", "credenc", "inlog",
    "logowania", "учетные", "login", "zugang", "потребител", "usuari", "kasutaja", "משתמש",
    "korisnik", "vartotojas", "lietotājs", "pengguna", "používateľ", "ชื่อผู้ใช้", "المستخدم",
)  # fmt: skip


LOGIN_BEFORE, LOGIN_AFTER = 16, 240


def login_pairs(
    text: str, folded: str | None = None, occurrences: list[Occurrence] | None = None
) -> Iterator[re.Match[str]]:
    """Every match of :data:`LOGIN_PAIR` in ``text``."""
    folded = fold(text) if folded is None else folded
    if len(folded) != len(text):
        yield from LOGIN_PAIR.finditer(text)
        return
    occurrences = literal_occurrences(folded) if occurrences is None else occurrences
    spans = _spans(occurrences, frozenset(LOGIN_LITERALS))
    yield from _search_near(LOGIN_PAIR, text, spans, LOGIN_BEFORE, LOGIN_AFTER)


def login_pair_spans(
    text: str,
    judges: Judges,
    folded: str | None = None,
    occurrences: list[Occurrence] | None = None,
) -> Iterator[Found]:
    """Passwords given with a user after a login word (``basic auth ana:...``)."""
    for match in login_pairs(text, folded, occurrences):
        value = match.group("value").rstrip(_TRAILING)
        if judges.password_like(value):
            start = match.start("value")
            yield Found(start, start + len(value), PASSWORD)


# -- numbers: cards, bank accounts, national ids ----------------------------------------------

_SHAPES: dict[str, re.Pattern[str]] = {
    # 12 to 19 digits, alone or in groups: the whole run, never a part of a longer one
    "card": re.compile(r"(?<![\d\-.,/])(?<!\d[ \-])\d(?:[ \-]?\d){11,18}(?![ \-]?\d)"),
    "iban": re.compile(r"(?<![^\W_])[A-Za-z]{2}\d{2}(?:[ \-]?[A-Za-z0-9]){11,32}"),
    "ssn": re.compile(r"(?<![\d\-])\d{3}-\d{2}-\d{4}(?![\d\-])"),
    "cpf": re.compile(r"(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?!\d)"),
    "es": re.compile(r"(?<![^\W_])[XYZxyz]?\d{7,8}[A-Za-z](?![^\W_])"),
    "cf": re.compile(r"(?<![^\W_])[A-Za-z]{6}\d{2}[A-Za-z]\d{2}[A-Za-z]\d{3}[A-Za-z](?![^\W_])"),
    "rrn": re.compile(r"(?<![\d\-])\d{6}-\d{7}(?![\d\-])"),
    "ric": re.compile(r"(?<!\d)\d{17}[\dXx](?![\dXx])"),
}
_DIGIT_RUNS = re.compile(r"\d+")


def _letters(text: str, start: int, end: int) -> bool:
    piece = text[max(0, start) : end]
    return start >= 0 and piece.isascii() and piece.isalpha()


def _shape_starts(text: str, start: int, run: int) -> Iterator[tuple[str, int]]:
    """The shapes whose match may start at, or just before, a run of ``run`` digits at
    ``start``, and where: what each shape's pattern needs there, checked first."""
    after = text[start + run : start + run + 2]
    next_digit = after[1:2].isdigit()
    if (run >= 12 and run <= 19) or (run < 12 and after[:1] in (" ", "-") and next_digit):
        yield "card", start
    if run == 3 and after[:1] == "-":
        yield "ssn", start
    if run == 3 and after[:1] == ".":
        yield "cpf", start
    if run in (7, 8) and _letters(text, start + run, start + run + 1):
        yield "es", start
        if start >= 1 and text[start - 1] in "XYZxyz":
            yield "es", start - 1
    if run == 6 and after[:1] == "-":
        yield "rrn", start
    if run in (17, 18):
        yield "ric", start
    if _letters(text, start - 2, start):
        yield "iban", start - 2
    if run == 2 and _letters(text, start - 6, start):
        yield "cf", start - 6


def _number_shapes(text: str) -> Iterator[tuple[str, re.Match[str]]]:
    """Every match of a shape of :data:`_SHAPES`: each starts at, or just before, the start
    of a run of digits, so each is tried there only."""
    for digits in _DIGIT_RUNS.finditer(text):
        for name, at in _shape_starts(text, digits.start(), digits.end() - digits.start()):
            match = _SHAPES[name].match(text, at)
            if match is not None:
                yield name, match


def may_hold_number(text: str) -> bool:
    """Whether ``text`` holds a number of a shape :func:`number_spans` judges."""
    return any(True for _ in _number_shapes(text))


# Issuers' prefixes and lengths (ISO/IEC 7812): a Luhn-valid number of another shape is
# some other number (an IMEI, an order, a parcel).
_CARD_ISSUERS: tuple[tuple[int, int, frozenset[int]], ...] = (
    (4, 4, frozenset({13, 16, 19})),  # Visa
    (51, 55, frozenset({16})),  # Mastercard
    (2221, 2720, frozenset({16})),
    (34, 34, frozenset({15})),  # American Express
    (37, 37, frozenset({15})),
    (6011, 6011, frozenset(range(16, 20))),  # Discover
    (644, 649, frozenset(range(16, 20))),
    (65, 65, frozenset(range(16, 20))),
    (3528, 3589, frozenset(range(16, 20))),  # JCB
    (300, 305, frozenset(range(14, 20))),  # Diners Club
    (36, 36, frozenset(range(14, 20))),
    (38, 39, frozenset(range(16, 20))),
    (62, 62, frozenset(range(16, 20))),  # UnionPay
    (2200, 2204, frozenset(range(16, 20))),  # Mir
    (5018, 5018, frozenset(range(12, 20))),  # Maestro
    (5020, 5020, frozenset(range(12, 20))),
    (5038, 5038, frozenset(range(12, 20))),
    (5893, 5893, frozenset(range(12, 20))),
    (6304, 6304, frozenset(range(12, 20))),
    (6759, 6759, frozenset(range(12, 20))),
    (6761, 6763, frozenset(range(12, 20))),
    (60, 60, frozenset({16})),  # RuPay
    (81, 82, frozenset({16})),
    (508, 508, frozenset({16})),
    (8600, 8600, frozenset({16})),  # Uzcard
    (9860, 9860, frozenset({16})),  # Humo
    (9792, 9792, frozenset({16})),  # Troy
)
# Words right before a number that say it is not a card: an order's, a parcel's, a phone's.
_NOT_CARD_BEFORE = re.compile(
    r"(?i)(?:order|invoice|tracking|ticket|ref(?:erence)?|receipt|imei|isbn|serial|phone|tel"
    r"|fax|mobile|account|pedido|fatura|factura|nota|rastreio|commande|facture|suivi"
    r"|bestell\w{0,8}|rechnung|sendung|ordine|fattura|spedizione|bestelling|zamówieni\w"
    r"|订单|单号|注文|番号|전화|주문|заказ|sipariş|#|no\.?|n[º°o]\.?)[ \t:#.]{0,4}$"
)
_CARD_WORDS = re.compile(
    r"(?i)card|cart[ãa]o|tarjeta|carte|karte|carta|kaart|kart[ay]|карт|kart|kort|visa|master"
    r"|amex|卡|カード|카드"
)
_NOT_DIGITS = re.compile(r"\D")
_GROUP_MARKS = re.compile(r"[ \-]")


def _issued_card(digits: str) -> bool:
    for low, high, lengths in _CARD_ISSUERS:
        if len(digits) in lengths and low <= int(digits[: len(str(low))]) <= high:
            return True
    return False


def _card_grouping(number: str) -> bool:
    """Digits as cards print them: all together, in fours (the last group may be
    shorter), or 4-6-5 and 4-6-4."""
    sizes = [len(g) for g in _GROUP_MARKS.split(number)]
    if len(sizes) == 1 or sizes in ([4, 6, 5], [4, 6, 4]):
        return True
    return all(s == 4 for s in sizes[:-1]) and 1 <= sizes[-1] <= 4


def _card(text: str, match: re.Match[str]) -> bool:
    number = match.group()
    digits = _NOT_DIGITS.sub("", number)
    if not (_card_grouping(number) and _issued_card(digits) and luhn.is_valid(digits)):
        return False
    if number.isdigit():
        before = text[max(0, match.start() - 32) : match.start()]
        if _NOT_CARD_BEFORE.search(before) and not _CARD_WORDS.search(before):
            return False
    return True


def _cuts(candidate: str, marks: str) -> list[int]:
    """Where ``candidate`` may end: at each of its ``marks``, and at its end; longest
    first."""
    return [len(candidate)] + [i for i in range(len(candidate) - 1, 0, -1) if candidate[i] in marks]


def _iban_span(match: re.Match[str]) -> tuple[int, int] | None:
    """The longest run of the candidate's groups that is a valid IBAN."""
    candidate = match.group()
    for cut in _cuts(candidate, " -"):
        piece = candidate[:cut]
        if len(piece) < 15:
            break
        if _iban.is_valid(piece.upper()):
            return match.start(), match.start() + cut
    return None


_ID_WORD_PATTERN = (
    r"(?<![^\W\d_])(?:ssn|social[ \t]security(?:[ \t]number)?|social[ \t]insurance"
    r"|itin|tax[ \t]id|cpf|dni|nif|(?:n°|num[ée]ro)[ \t]de[ \t]s[ée]cu\w{0,14}"
    r"|s[ée]cu(?:rit[ée][ \t]sociale)?|insee|steuer[ \t\-]?id(?:nr)?"
    r"|(?:steuer-?)?identifikationsnummer|codice[ \t]fiscale|bsn|burgerservicenummer|pesel"
    r"|aadhaa?r|personnummer|personnr|tc[ \t]kimlik|kimlik[ \t]no|tckn|curp|contribuinte"
    r"|cart[ãa]o[ \t]de[ \t]cidad[ãa]o"
    r"|rodné[ \t]číslo|rodného[ \t]čísla|mã[ \t]số[ \t]thuế|αμκα"
    r"|cod[ \t]numeric[ \t]personal|adóazonosító(?:[ \t]jel)?|рнокпп|іпн"
    r"|henkilötunnu(?:s|ks\w{0,6})"
    r"|cpr(?:-nr|-nummer\w{0,4})?|fødselsnummer\w{0,4}|nomor[ \t]induk"
    r"|егн|isikukood\w{0,3}|oib|asmens[ \t]kod(?:as|o|ą)|personas[ \t]kod(?:s|a|u)"
    r"|mykad|nric|kad[ \t]pengenalan|no\.?[ \t]?ic|nombor[ \t]ic|south[ \t]african[ \t]id"
    r"|ahv(?:-?(?:nummer|nr))?"
    rf"|{_HE_CLITICS}תעודת[ \t]ה?זהות|ת[\"״]ז|ת\.ז\.?|cnic|شناختی[ \t]کارڈ(?:[ \t]نمبر)?"
    r"|инн|иин|жсн|emšo|emso|ஆதார்"
    r"|kennital(?:a|an|u|una|unni)|id-nommer|identiteitsnommer"
    r"|national[ \t]insurance(?:[ \t]number)?"
    r"|CASE_SENSITIVE)(?![^\W\d_])"
    r"|身份证|身份證|マイナンバー|個人番号|주민등록번호|주민번호|आधार|บัตรประชาชน|ประจำตัวประชาชน"
)
# Short names that are words of other languages in lowercase (Spanish "sin", Polish "nie").
_ID_ACRONYMS = "NIE|SIN|NIR|RUT|CNP|NIK|KTP"
ID_WORDS = re.compile("(?i)" + _ID_WORD_PATTERN.replace("CASE_SENSITIVE", f"(?-i:{_ID_ACRONYMS})"))
"""A word naming a national id, after which :func:`named_id_spans` looks for one."""
ID_WORDS_ANY_CASE = re.compile("(?i)" + _ID_WORD_PATTERN.replace("CASE_SENSITIVE", _ID_ACRONYMS))
""":data:`ID_WORDS` with its acronyms in any case: what the gate looks for in folded text."""
ID_LITERALS: tuple[str, ...] = tuple(
    fold(w)
    for w in (
        "ssn", "social", "itin", "tax", "cpf", "dni", "nif", "sécu", "secu", "insee", "steuer",
        "identifikationsnummer", "codice", "bsn", "burgerservicenummer", "pesel", "aadha",
        "personn", "kimlik", "tckn", "curp", "contribuinte", "cidad", "nie", "sin", "nir",
        "rut", "身份", "マイナンバー", "個人番号", "주민", "rodn", "mã số", "αμκα",
        "numeric personal", "adóazonosító", "рнокпп", "іпн", "henkilötunnu", "cpr",
        "fødselsnummer", "nomor induk", "cnp", "nik", "ktp", "आधार",
        "егн", "isikukood", "oib", "asmens", "personas", "mykad", "nric", "pengenalan",
        "no. ic", "no.ic", "no ic", "noic", "nombor ic", "south african", "ahv", "זהות", 'ת"ז',
        "ת״ז", "ת.ז", "บัตรประชาชน", "ประจำตัวประชาชน", "cnic", "شناختی", "инн", "иин",
        "жсн", "emšo", "emso", "ஆதார்", "kennital", "nommer", "national insurance",
    )
)  # fmt: skip
ID_BEFORE, ID_AFTER = 16, 64


def id_words(
    text: str,
    folded: str | None = None,
    occurrences: list[Occurrence] | None = None,
    *,
    any_case: bool = False,
) -> Iterator[re.Match[str]]:
    """Every match of :data:`ID_WORDS` in ``text`` (of :data:`ID_WORDS_ANY_CASE` with
    ``any_case``)."""
    pattern = ID_WORDS_ANY_CASE if any_case else ID_WORDS
    folded = fold(text) if folded is None else folded
    if len(folded) != len(text):
        yield from pattern.finditer(text)
        return
    occurrences = literal_occurrences(folded) if occurrences is None else occurrences
    spans = _spans(occurrences, frozenset(ID_LITERALS))
    yield from _search_near(pattern, text, spans, ID_BEFORE, ID_AFTER)


def _hu_tax_id(number: str) -> bool:
    """Hungary's tax id (adóazonosító jel), which python-stdnum lacks: ten digits, the
    first an 8, the last the sum of the first nine weighted by their place, mod 11."""
    digits = _NOT_DIGITS.sub("", number)
    if len(digits) != 10 or digits[0] != "8" or len(digits) != len(number.replace(" ", "")):
        return False
    check = sum(int(d) * (i + 1) for i, d in enumerate(digits[:9])) % 11
    return check < 10 and check == int(digits[9])


# The United Kingdom's National Insurance number, which has no check digit: two letters
# of the prefixes HMRC issues, six digits and a letter from A to D.
_GB_NINO = re.compile(
    r"(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]"
)


def _gb_nino(number: str) -> bool:
    return _GB_NINO.fullmatch(number) is not None


_ID_VALUE = re.compile(r"[0-9A-Za-z](?:[ .\-/]?[0-9A-Za-z]){5,24}")
_ID_CHECKS: tuple[Callable[[str], bool], ...] = (
    ssn.is_valid,
    sin.is_valid,
    cpf.is_valid,
    es_nif.is_valid,
    pt_nif.is_valid,
    nir.is_valid,
    idnr.is_valid,
    codicefiscale.is_valid,
    bsn.is_valid,
    pesel.is_valid,
    ric.is_valid,
    my_number.is_valid,
    rrn.is_valid,
    aadhaar.is_valid,
    personnummer.is_valid,
    tckimlik.is_valid,
    curp.is_valid,
    rut.is_valid,
    rc.is_valid,
    mst.is_valid,
    amka.is_valid,
    cnp.is_valid,
    rntrc.is_valid,
    hetu.is_valid,
    cpr.is_valid,
    fodselsnummer.is_valid,
    nik.is_valid,
    _hu_tax_id,
    egn.is_valid,
    ik.is_valid,
    il_idnr.is_valid,
    oib.is_valid,
    asmens.is_valid,
    pvn.is_valid,
    nric.is_valid,
    th_pin.is_valid,
    za_idnr.is_valid,
    ahv.is_valid,
    cnic.is_valid,
    ru_inn.is_valid,
    emso.is_valid,
    kennitala.is_valid,
    _gb_nino,
)
# Ids whose shape and checksum say what they are without a word naming them.
_SHAPED_IDS: dict[str, Callable[[str], bool]] = {
    "ssn": ssn.is_valid,
    "cpf": cpf.is_valid,
    "es": es_nif.is_valid,
    "cf": codicefiscale.is_valid,
    "rrn": rrn.is_valid,
    "ric": ric.is_valid,
}
_ID_AFTER = 64
# Capitals an id may start with, before its digits (``LG 55 50 34 A``).
_ID_LETTERS = re.compile(r"[A-Z]{1,3}[ .\-/]?")
# Words before an id in the same run of letters and digits: a verb or a mark's words.
_ID_LEADING_WORDS = re.compile(r"(?:[^\W\d_]{1,24}[ .\-/])+")


def _named_id(text: str, end: int) -> tuple[int, int] | None:
    """The national id after a word naming it (ending at ``end``, within a few words on
    its line): the first run of six digits or more, cut to the longest of its groups that
    some check accepts; its leading words without a digit left out (``ist``, ``is``,
    ``é``), unless they are a few capitals an id may start with (``LG 55 50 34 A``)."""
    window_end = min(len(text), end + _ID_AFTER)
    newline = text.find("\n", end, window_end)
    window_end = newline if newline != -1 else window_end
    for value in _ID_VALUE.finditer(text, end, window_end):
        candidate = value.group()
        if _digit_count(candidate) < 6:
            continue
        lead = _ID_LEADING_WORDS.match(candidate)
        skip = lead.end() if lead is not None and _digit_count(candidate[lead.end() :]) else 0
        if skip and _ID_LETTERS.fullmatch(candidate, 0, skip):
            cut = _checked_cut(candidate)
            if cut is not None:
                return value.start(), value.start() + cut
        if skip:
            # The words took part of the run's length: the id is read again from its start.
            again = _ID_VALUE.match(text, value.start() + skip, window_end)
            candidate = again.group() if again is not None else candidate[skip:]
        cut = _checked_cut(candidate)
        return None if cut is None else (value.start() + skip, value.start() + skip + cut)
    return None


def _checked_cut(candidate: str) -> int | None:
    """The longest cut of ``candidate`` at its groups that some id check accepts."""
    for cut in _cuts(candidate, " "):
        if any(check(candidate[:cut]) for check in _ID_CHECKS):
            return cut
    return None


def number_spans(text: str) -> Iterator[Found]:
    """Card numbers, IBANs and national ids of a telling shape, each passing its
    checksum."""
    for name, match in _number_shapes(text):
        if name == "card":
            if _card(text, match):
                yield Found(match.start(), match.end(), PAYMENT_CARD)
        elif name == "iban":
            span = _iban_span(match)
            if span is not None:
                yield Found(*span, BANK_ACCOUNT)
        elif _SHAPED_IDS[name](match.group()):
            yield Found(match.start(), match.end(), NATIONAL_ID)


def named_id_spans(
    text: str, folded: str | None = None, occurrences: list[Occurrence] | None = None
) -> Iterator[Found]:
    """National ids after a word naming them (``CPF``, ``Steuer-ID``, ``PESEL``...)."""
    for word in id_words(text, folded, occurrences):
        span = _named_id(text, word.end())
        if span is not None:
            yield Found(*span, NATIONAL_ID)


# -- recovery phrases ---------------------------------------------------------------------

_PHRASE_LENGTHS = (12, 15, 18, 21, 24)
_PHRASE_MIN_CHARS = 23  # twelve words of one character (Chinese), and their spaces
_PHRASE_TOKEN_CHARS = 64
_PHRASE_TOKEN = re.compile(rf"[^\s,;:：，、；]{{1,{_PHRASE_TOKEN_CHARS}}}")
_PHRASE_SEPARATORS = dict.fromkeys(",;:", " ")  # read as spaces between a phrase's words
# Numbering before a word of a phrase: "1.", "01)", "#3", "12:".
_NUMBERING = re.compile(r"#?\d{1,2}[.)\-]?")
_PUNCTUATION = ".:;()[]{}<>\"'"
# What says a run of list words is a wallet's phrase: a seed, a recovery, a backup, a
# wallet, and the names of wallets and coins, in many languages.
_PHRASE_CONTEXT = re.compile(
    r"(?i)seed|mnemonic|recovery|backup|semilla|semente|récupération|recupera|recupero"
    r"|wiederherstellung|herstel|odzyskiw|сид|kurtarma|återställ|ledger|trezor|metamask"
    r"|wallet|carteira|cartera|portefeuille|portafoglio|obnov|peněžen|khôi phục|hạt giống"
    r"|ανάκτησ|πορτοφόλ|रिकवरी|वॉलेट|portofel|helyreállít|tárca|гаманц|відновл|palautus"
    r"|lompak|gendannelse|tegnebog|gjenoppretting|lommebok|pemulihan|dompet"
    r"|助记|助記|恢复|リカバリー|シード|복구|시드|니모닉|復元|ウォレット|钱包|錢包|지갑"
    r"|crypto|bitcoin|btc|ethereum|coinbase|binance|exodus|phantom|secret|private|safe"
)
# Words for words or a phrase: a recovery phrase's, or a spelling list's ("spelling words
# this week: ..."). With one of these alone, a run must pass the checksum.
_PHRASE_WORDS = re.compile(
    r"(?i)phrase|words|frase|fráze|palavras|palabras|mots|wörter|parole|фраз|słowa|slova"
)
_CONTEXT_BEFORE = 80
# A label right before a run: a few words on one line, then a colon.
_LIST_LABEL = re.compile(r"[^\W\d_][^\n:：]{0,38}[:：][ \t]{0,4}\n?[ \t]{0,4}$")
_LIST_LABEL_CHARS = 48
_LISTED_SHORTEST = 18


def _normal(word: str) -> str:
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _mnemonics() -> tuple[Mnemonic, ...]:
    return tuple(Mnemonic(language) for language in sorted(Mnemonic.list_languages()))


@cache
def _word_lists() -> dict[str, int]:
    """Every BIP-39 word, normalised, with a bit for each list that holds it."""
    found: dict[str, int] = {}
    for i, mnemonic in enumerate(_mnemonics()):
        for word in mnemonic.wordlist:
            key = _normal(word)
            found[key] = found.get(key, 0) | (1 << i)
    return found


@cache
def _spellings(i: int) -> dict[str, str]:
    return {_normal(w): w for w in _mnemonics()[i].wordlist}


def _checks_out(words: list[str], lists: int, shortest: int = _PHRASE_LENGTHS[0]) -> bool:
    """Whether a run of a BIP-39 length (``shortest`` or more) within ``words`` passes its
    checksum in one of ``lists`` (a bit set)."""
    for i, mnemonic in enumerate(_mnemonics()):
        if not lists & (1 << i):
            continue
        spelled = _spellings(i)
        for length in (n for n in _PHRASE_LENGTHS if n >= shortest):
            for start in range(len(words) - length + 1):
                phrase = " ".join(spelled[w] for w in words[start : start + length])
                try:
                    if mnemonic.check(phrase):
                        return True
                except (ValueError, LookupError):
                    continue
    return False


@dataclass
class _Run:
    start: int
    end: int
    lists: int
    words: list[str]
    numbered: int


def _runs(text: str) -> Iterator[_Run]:
    """Runs of twelve words or more of one BIP-39 list, numbered or not."""
    lists = _word_lists()
    run: _Run | None = None
    for token in _PHRASE_TOKEN.finditer(text):
        raw = token.group()
        number = _NUMBERING.match(raw)
        word = (raw[number.end() :] if number else raw).strip(_PUNCTUATION)
        if not word and number:
            if run is not None:
                run.numbered += 1
            continue  # a number alone: numbering, the run goes on
        key = _normal(word)
        # A word before a colon is a label ("seed: ..."), not a word of the phrase.
        label = text[token.end() : token.end() + 1] in (":", "：")
        bits = 0 if label else lists.get(key, 0)
        if run is not None and run.lists & bits:
            run.lists &= bits
            run.words.append(key)
            run.end = token.end() - (len(raw) - len(raw.rstrip(_PUNCTUATION)))
            run.numbered += 1 if number else 0
            continue
        if run is not None and len(run.words) >= _PHRASE_LENGTHS[0]:
            yield run
        run = None
        if bits:
            start = token.start() + (number.end() if number else 0)
            end = token.end() - (len(raw) - len(raw.rstrip(_PUNCTUATION)))
            run = _Run(start, end, bits, [key], 1 if number else 0)
    if run is not None and len(run.words) >= _PHRASE_LENGTHS[0]:
        yield run


def _listed(text: str, start: int) -> bool:
    """Whether a label ending in a colon comes right before ``start`` ("groceries:"):
    what follows is a list of what it names."""
    return _LIST_LABEL.search(text, max(0, start - _LIST_LABEL_CHARS), start) is not None


def phrase_spans(text: str) -> Iterator[Found]:
    """Recovery phrases: runs of twelve words or more of one BIP-39 list, separated by
    spaces, line breaks or commas, numbered or not. A run is a phrase when twelve of its
    words are numbered, when the text speaks of a seed, a wallet or a recovery phrase just
    before it, or when it passes the BIP-39 checksum; after a label that names something
    else ("groceries: ..."), a list of that, the checksum must hold over eighteen words
    or more (four bits of twelve words pass one list in sixteen), over twelve when the
    label speaks of words or a phrase and of nothing that says whose ("spelling words:")."""
    if not may_hold_phrase(text):
        return
    for run in _runs(text):
        # What comes before the run, and its first word ("seed: ..." where "seed" is a word
        # of the list too).
        first = text.find(run.words[0][:1], run.start) + len(run.words[0])
        low = max(0, run.start - _CONTEXT_BEFORE)
        context = _PHRASE_CONTEXT.search(text, low, first)
        if context is not None or run.numbered >= _PHRASE_LENGTHS[0] - 1:
            yield Found(run.start, run.end, RECOVERY_PHRASE)
            continue
        shortest = _LISTED_SHORTEST if _listed(text, run.start) else _PHRASE_LENGTHS[0]
        if _PHRASE_WORDS.search(text, low, first) is not None:
            shortest = _PHRASE_LENGTHS[0]
        if _checks_out(run.words, run.lists, shortest):
            yield Found(run.start, run.end, RECOVERY_PHRASE)


_NUMBERING_CHARS = "#0123456789.)-"
# The phrase gate's split of an ASCII text: separators to spaces, numbering and
# punctuation deleted.
_PHRASE_GATE = str.maketrans(
    {**dict.fromkeys(_NUMBERING_CHARS + _PUNCTUATION), **_PHRASE_SEPARATORS}
)
# A token longer than the patterns read in one piece (they cut it).
_LONG_TOKEN = re.compile(rf"\S{{{_PHRASE_TOKEN_CHARS + 1}}}")


def may_hold_phrase(text: str) -> bool:
    """Whether ``text`` may hold twelve words of one BIP-39 list in a row: False only when
    :func:`phrase_spans` finds nothing. Counts the words of any list in a row, numbering
    skipped, as :func:`phrase_spans` splits them."""
    if len(text) < _PHRASE_MIN_CHARS:
        return False
    lists = _word_lists()
    if text.isascii() and _LONG_TOKEN.search(text) is None:
        # Split in C, numbering and punctuation deleted rather than stripped: a word of a
        # list has none of their characters, so each word the patterns would read is
        # read the same, and a token that is only numbering is dropped as they drop it.
        # Other tokens may read as words where stripping would not: more runs, never
        # fewer. A mark per word, and a search for a run of marks, in C.
        words = text.lower().translate(_PHRASE_GATE).split()
        marks = "".join(["1" if word in lists else "0" for word in words])
        return "1" * _PHRASE_LENGTHS[0] in marks
    tokens = _PHRASE_TOKEN.findall(text.lower() if text.isascii() else text)
    if len(tokens) < _PHRASE_LENGTHS[0]:
        return False
    run = 0
    for i, token in enumerate(tokens):
        word = token.lstrip(_NUMBERING_CHARS).strip(_PUNCTUATION)
        if not word:
            continue  # numbering
        if (word.lower() if word.isascii() else _normal(word)) in lists:
            run += 1
            if run >= _PHRASE_LENGTHS[0]:
                return True
        else:
            run = 0
            if len(tokens) - i - 1 < _PHRASE_LENGTHS[0]:
                return False  # too few words left for a phrase
    return False


def class_spans(text: str, judges: Judges) -> Iterator[Found]:
    """Every credential known by its class in ``text``: passwords, codes and PINs after
    their words, a user and password after a login word, card numbers, IBANs and national
    ids by their checksums, and recovery phrases. The finders of words share one search
    for the literals, which costs a pass over the text per literal."""
    folded = fold(text)
    occurrences = literal_occurrences(folded) if len(folded) == len(text) else None
    yield from word_value_spans(text, judges, folded, occurrences)
    yield from login_pair_spans(text, judges, folded, occurrences)
    yield from number_spans(text)
    yield from named_id_spans(text, folded, occurrences)
    yield from phrase_spans(text)
