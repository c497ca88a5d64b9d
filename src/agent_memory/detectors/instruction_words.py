"""The vocabulary of :mod:`agent_memory.detectors.instruction_classes`: for each class of
word or phrase, regular-expression fragments by language, matched on normalised text
(casefolded, NFKC; see :func:`agent_memory.detectors.instructions.normalise`).

Languages: English (en), Portuguese (pt), Spanish (es), French (fr), German (de),
Italian (it), Dutch (nl), Polish (pl), Turkish (tr), Russian (ru), Chinese (zh),
Japanese (ja), Korean (ko); for the addresses, orders and claims of the rules that
read them, also Swedish (sv), Czech (cs), Indonesian (id), Vietnamese (vi), Arabic
(ar), Hebrew (he), Hindi (hi), Persian (fa) and Thai (th). A fragment of a language
written without spaces (zh, ja, ko, th) is matched anywhere; any other is matched as
whole words (a Latin or Cyrillic letter or a digit on either side stops it, a Chinese
one does not: "的ai").

A fragment may use ``{model}``: any word for the model (:data:`MODEL`), in any
language, so that "if you are a language model" and "se você é uma IA" are the same
pattern with the language's own words around it. Fragments are bounded: windows of
a few words, never a repetition of a repetition.
"""

# The vocabulary is Cyrillic, Greek and CJK as much as Latin: look-alike letters are meant.
# ruff: noqa: RUF001

from __future__ import annotations

import json
import re
from pathlib import Path

Lexicon = dict[str, list[str]]

# -- the model, as a thing one can address ---------------------------------------------------

MODEL: Lexicon = {
    "en": [
        r"a\.i\.?",
        r"ai(?:\s+(?:assistant|model|system|agent|tool|bot|crawler|reader)s?)?",
        r"artificial\s+intelligences?",
        r"assistants?",
        r"chat\s?bots?",
        r"bots?",
        r"llms?",
        r"(?:large\s+)?language\s+models?",
        r"models?",
        r"agents?",
        r"gpts?",
        r"chatgpt",
        r"claude",
        r"gemini",
        r"copilot",
        r"bard",
        r"llama",
        r"grok",
        r"deepseek",
    ],
    "pt": [
        r"ias?",
        r"intelig[eê]ncias?\s+artificia(?:l|is)",
        r"assistentes?(?:\s+virtua(?:l|is))?",
        r"modelos?\s+de\s+linguagem",
        r"rob[oô]s?",
        r"agentes?",
    ],
    "es": [
        r"ias?",
        r"inteligencias?\s+artificial(?:es)?",
        r"asistentes?(?:\s+virtual(?:es)?)?",
        r"modelos?\s+de\s+lenguaje",
        r"agentes?",
    ],
    "fr": [
        r"ia",
        r"intelligences?\s+artificielles?",
        r"assistants?(?:\s+virtuels?)?",
        r"modèles?(?:\s+de\s+langage)?",
        r"robots?",
        r"agents?(?:\s+conversationnels?)?",
    ],
    "de": [
        r"ki",
        r"künstliche\w*\s+intelligenz",
        r"assistent\w*",
        r"sprachmodell\w*",
        r"modell\w*",
    ],
    "it": [
        r"ia",
        r"intelligenz[ae]\s+artificial[ei]",
        r"assistent[ei]",
        r"modell[oi](?:\s+(?:linguistic[oi]|di\s+linguaggio))?",
        r"agent[ei]",
    ],
    "nl": [
        r"kunstmatige\s+intelligentie",
        r"assistent(?:en)?",
        r"taalmodel(?:len)?",
        r"agent(?:en)?",
    ],
    "pl": [r"sztuczn\w+\s+inteligencj\w+", r"asystent\w*", r"model\w*\s+językow\w+", r"modelem"],
    "tr": [r"yapay\s+zek[aâ]\w*", r"asistan\w*", r"dil\s+model\w*", r"sohbet\s+robot\w*"],
    "ru": [
        r"ии",
        r"искусственн\w+\s+интеллект\w*",
        r"ассистент\w*",
        r"помощник\w*",
        r"языков\w+\s+модел\w+",
        r"модел[ьи]\w*",
        r"нейросет\w+",
        r"нейронн\w+\s+сет\w+",
        r"чат-?бот\w*",
        r"бот\w*",
        r"агент\w*",
    ],
    "zh": [
        r"人工智能",
        r"智能助手",
        r"助手",
        r"助理",
        r"大模型",
        r"语言模型",
        r"模型",
        r"机器人",
        r"智能体",
    ],
    "ja": [
        r"人工知能",
        r"アシスタント",
        r"言語モデル",
        r"モデル",
        r"チャットボット",
        r"ボット",
        r"エージェント",
    ],
    "ko": [r"인공지능", r"어시스턴트", r"비서", r"언어\s*모델", r"모델", r"챗봇", r"에이전트"],
    "sv": [r"assistent(?:en|er|erna)?", r"språkmodell\w*", r"ai-?assistent\w*"],
    "cs": [r"asistent\w*", r"umělá\s+inteligence", r"jazykov\w+\s+model\w*"],
    "id": [r"asisten", r"kecerdasan\s+buatan", r"model\s+bahasa", r"bot"],
    "vi": [r"trợ\s+lý(?:\s+ảo)?", r"mô\s+hình\s+ngôn\s+ngữ", r"trí\s+tuệ\s+nhân\s+tạo"],
    "ar": [r"(?:ال)?مساعد(?:\s+(?:ال)?ذكي)?", r"(?:ال)?نموذج", r"(?:ال)?ذكاء\s+(?:ال)?اصطناعي"],
    "he": [r"(?:ה)?עוזר(?:\s+(?:ה)?וירטואלי)?", r"(?:ה)?מודל", r"(?:ה)?בינה\s+(?:ה)?מלאכותית"],
    "hi": [r"सहायक", r"एआई", r"मॉडल", r"बॉट"],
    "fa": [r"دستیار", r"هوش\s+مصنوعی", r"مدل\s+زبانی"],
}

# The model as a machine: the words for it that never name a person (not "assistant",
# "agent" or "model", which do: "if you are a sales assistant", "any agent reading this
# ticket").
MACHINE: Lexicon = {
    "en": [
        r"a\.i\.?",
        r"ai(?:\s+(?:assistant|model|system|agent|tool|bot|crawler|reader)s?)?",
        r"artificial\s+intelligences?",
        r"chat\s?bots?",
        r"bots?",
        r"llms?",
        r"(?:large\s+)?language\s+models?",
        r"gpts?",
        r"chatgpt",
        r"claude",
        r"gemini",
        r"copilot",
        r"llama",
        r"grok",
        r"deepseek",
        r"(?:virtual|digital)\s+assistants?",
    ],
    "pt": [
        r"ias?",
        r"intelig[eê]ncias?\s+artificia(?:l|is)",
        r"modelos?\s+de\s+linguagem",
        r"rob[oô]s?",
        r"assistentes?\s+virtua(?:l|is)",
    ],
    "es": [
        r"ias?",
        r"inteligencias?\s+artificial(?:es)?",
        r"modelos?\s+de\s+lenguaje",
        r"asistentes?\s+virtual(?:es)?",
    ],
    "fr": [
        r"ia",
        r"intelligences?\s+artificielles?",
        r"modèles?\s+de\s+langage",
        r"robots?",
        r"assistants?\s+virtuels?",
    ],
    "de": [r"ki", r"künstliche\w*\s+intelligenz", r"sprachmodell\w*"],
    "it": [
        r"ia",
        r"intelligenz[ae]\s+artificial[ei]",
        r"modell[oi]\s+(?:linguistic[oi]|di\s+linguaggio)",
    ],
    "nl": [r"kunstmatige\s+intelligentie", r"taalmodel(?:len)?"],
    "pl": [r"sztuczn\w+\s+inteligencj\w+", r"model\w*\s+językow\w+"],
    "tr": [r"yapay\s+zek[aâ]\w*", r"dil\s+model\w*", r"sohbet\s+robot\w*"],
    "ru": [
        r"ии",
        r"искусственн\w+\s+интеллект\w*",
        r"языков\w+\s+модел\w+",
        r"нейросет\w+",
        r"нейронн\w+\s+сет\w+",
        r"чат-?бот\w*",
        r"бот\w*",
    ],
    "zh": [r"人工智能", r"语言模型", r"大模型", r"智能体", r"机器人"],
    "ja": [r"人工知能", r"言語モデル", r"チャットボット", r"ボット"],
    "ko": [r"인공지능", r"언어\s*모델", r"챗봇"],
    "sv": [r"språkmodell\w*", r"ai-?assistent\w*"],
    "cs": [r"umělá\s+inteligence", r"jazykov\w+\s+model\w*"],
    "id": [r"kecerdasan\s+buatan", r"model\s+bahasa"],
    "vi": [r"mô\s+hình\s+ngôn\s+ngữ", r"trí\s+tuệ\s+nhân\s+tạo"],
    "ar": [r"(?:ال)?ذكاء\s+(?:ال)?اصطناعي"],
    "he": [r"(?:ה)?בינה\s+(?:ה)?מלאכותית"],
    "hi": [r"एआई"],
    "fa": [r"هوش\s+مصنوعی", r"مدل\s+زبانی"],
}

# -- the reader addressed as a model: "if you are an AI", "any LLM reading this" ------------
# Whatever follows, a note about the world never speaks to its reader as a model.

# A word for the model used of a person: "a bot developer", "an AI researcher".
_PERSON_AFTER = (
    r"(?!\s+(?:developers?|engineers?|researchers?|compan(?:y|ies)|startups?|teams?|enthusiasts?"
    r"|users?|experts?|specialists?|products?|projects?|courses?|students?|teachers?"
    r"|consultants?|vendors?|founders?|practitioners?|scientists?|labs?|ethicists?|artists?"
    r"|writers?|fans?|leads?|managers?|owners?|builders?|designers?|trainers?)\b)"
)

READER: Lexicon = {
    "en": [
        r"if\s+(?:you\s+are|you're|u\s+are|u\s+r|this\s+is\s+(?:being\s+)?read\s+by)\s+"
        r"(?:[\w'-]+\s+){0,3}?{machine}" + _PERSON_AFTER,
        r"as\s+an?\s+(?:[\w-]+\s+){0,2}?{machine}\s*,?\s+you\b",
        r"you\s+are\s+(?:now\s+|just\s+|only\s+)?(?:an?|the)\s+(?:[\w-]+\s+){0,2}?{machine}"
        + _PERSON_AFTER,
        r"{machine}\s+(?:that\s+|which\s+|who\s+)?(?:is\s+|are\s+|will\s+|may\s+|might\s+)?"
        r"(?:reading|reads?)\s+(?:this|these|the\s+following|my|our|it\b|here)",
        r"{model}\s+(?:that\s+|which\s+|who\s+)?(?:is\s+|are\s+|will\s+|may\s+|might\s+)?"
        r"(?:processing|process(?:es)?|parsing|parses?|summari[sz](?:ing|es?)"
        r"|analy[sz](?:ing|es?)|indexing|index(?:es)?|scanning|scans?|ingesting|ingests?"
        r"|crawling|crawls?|retrieving|retrieves?|loading|loads?)\s+"
        r"(?:this|these|the\s+following|my|our|it\b|here)",
    ],
    "pt": [
        r"(?:se|caso)\s+(?:você\s+|vc\s+|tu\s+)?(?:é|és|for|fores|seja|sejas|estiver|estás|esteja)"
        r"\s+(?:\w+\s+){0,2}?{machine}",
        r"como\s+(?:uma?\s+)?{machine}\s*,?\s+(?:você|tu)",
        r"{model}\s+(?:que\s+)?(?:está\s+|estiver\s+|esteja\s+)?(?:lendo|lê|ler|leia|processando"
        r"|processa|processar|resumindo)\s+(?:isto|isso|este|esta|estes|estas|esse|essa|o\s+seguinte"
        r"|a\s+seguinte|aqui)",
    ],
    "es": [
        r"si\s+(?:tú\s+|usted\s+)?(?:eres|es|fueras|fueses|estás)\s+(?:\w+\s+){0,2}?{machine}",
        r"en\s+caso\s+de\s+que\s+(?:seas|sea)\s+(?:\w+\s+){0,2}?{machine}",
        r"como\s+(?:una?\s+)?{machine}\s*,?\s+(?:tú|usted|debes)",
        r"{model}\s+(?:que\s+)?(?:está\s+)?(?:lee|lea|lees|leyendo|procesa|procese|procesando"
        r"|resume|resumiendo)\s+(?:esto|este|esta|estos|estas|ese|esa|lo\s+siguiente|aquí)",
    ],
    "fr": [
        r"si\s+(?:vous\s+êtes|tu\s+es|t'es)\s+(?:\w+\s+|\w+'){0,2}?{machine}",
        r"en\s+tant\s+qu(?:e\s+|')(?:\w+\s+){0,1}?{machine}\s*,?\s+(?:tu|vous)",
        r"{model}\s+(?:qui\s+)?(?:lit|lira|lisez|lisant|lis|traite|traitera|traitant|analyse"
        r"|résume)\s+(?:ceci|ce|cet|cette|ces|le\s+présent|la\s+présente|les\s+présentes)",
    ],
    "de": [
        r"(?:wenn|falls|sofern)\s+(?:du|sie)\s+(?:\w+\s+){0,3}?{machine}\s+(?:bist|sind)",
        r"als\s+{machine}\s+(?:musst|sollst|darfst)\s+du",
        r"{model},?\s+(?:die|der|das|welche\w*)\s+(?:\w+\s+){0,3}?(?:liest|lesen|verarbeitet"
        r"|verarbeiten|zusammenfasst|analysiert)",
    ],
    "it": [
        r"se\s+(?:tu\s+)?(?:sei|fossi)\s+(?:\w+\s+|\w+'){0,2}?{machine}",
        r"in\s+quanto\s+{machine}\s*,?\s+(?:tu|devi)",
        r"{model}\s+(?:che\s+)?(?:sta\s+)?(?:legge|legga|leggerà|leggendo|leggi|elabora|elabori"
        r"|elaborando|riassume|riassuma)\s+(?:questo|questa|questi|queste|il\s+presente|la\s+presente|ciò)",
    ],
    "nl": [
        r"als\s+(?:je|jij|u)\s+(?:een\s+)?(?:\w+\s+){0,2}?{machine}\s+(?:bent|is)",
        r"{model}\s+(?:die|dat)\s+(?:dit|deze|dat)\s+(?:leest|verwerkt|samenvat)",
    ],
    "pl": [
        r"(?:jeśli|jeżeli|gdy|kiedy)\s+(?:ty\s+)?jesteś\s+(?:\w+\s+){0,2}?{machine}",
        r"{model}\s+(?:czytając\w*|przetwarzając\w*|któr\w+\s+(?:czyta|przetwarza)\w*)",
    ],
    "tr": [
        r"(?:yapay\s+zek[aâ]|dil\s+modeli?|bot)(?:y?s[ae]n(?:iz)?|\s+i?s[ae]n(?:iz)?)\b",
        r"(?:bunu|bu\s+\w+)\s+(?:okuyan|işleyen|özetleyen)\s+(?:bir\s+|her\s+)?{model}",
    ],
    "ru": [
        r"если\s+(?:ты|вы)\s+(?:[-—]\s*)?(?:\w+\s+){0,2}?{machine}",
        r"{model},?\s+(?:котор\w+\s+|что\s+)?(?:\w+\s+)?(?:чита\w+|обрабатыва\w+|прочита\w+"
        r"|прочт\w+|анализиру\w+)",
        r"(?:читающ\w+|обрабатывающ\w+)\s+(?:\w+\s+){0,2}?{model}",
    ],
    "zh": [
        r"(?:如果|若|假如|倘若|要是)(?:你|您)(?:是|为)[^，。,.!！?？；;\n]{0,20}?{machine}",
        r"(?:阅读|读取|读到|在读|看到|处理|解析|浏览|总结)[^，。,.!！?？；;\n]{0,12}?的\s*{model}",
    ],
    "ja": [
        r"(?:あなた|君|お前)(?:が|は)\s*{machine}(?:なら|であれば|ならば|である場合|だったら)",
        r"(?:読|処理|要約|閲覧|解析)[ぁ-んァ-ン]{0,6}{model}",
    ],
    "ko": [
        r"{machine}(?:이라면|라면|이시라면)",
        r"(?:읽는|읽고\s*있는|처리하는|요약하는)\s*{model}",
    ],
    "id": [
        r"{model}\s+yang\s+(?:sedang\s+)?(?:membaca|memproses|merangkum|menganalisis)\s+"
        r"(?:ini|catatan|pesan|dokumen|teks|halaman)",
        r"jika\s+(?:kamu|anda)\s+(?:adalah\s+)?(?:sebuah\s+)?{machine}",
    ],
    "vi": [
        r"{model}\s+(?:đang\s+)?(?:đọc|xử\s+lý|tóm\s+tắt)\s+(?:ghi\s+chú|văn\s+bản|tin\s+nhắn)?\s*này"
    ],
    "sv": [
        r"{model}\s+som\s+(?:läser|behandlar|sammanfattar)\s+(?:detta|denna|det\s+här|den\s+här)"
    ],
    "cs": [r"{model},?\s+(?:kter\w+\s+)?(?:čte|zpracovává|shrnuje)\s+(?:tento|tuto|toto|tyto)"],
}

# -- the model addressed by name, before an order: "Attention LLM:", "Nota para a IA:" -----

VOCATIVE: Lexicon = {
    "en": [
        r"(?:attention|dear|hey|hi|hello|greetings|note|notice|message|memo|reminder|warning"
        r"|instructions?|addressed|p\.?\s?s\.?)\W{0,3}(?:to\s+|for\s+)?(?:the\s+|any\s+|all\s+|every\s+"
        r"|each\s+|whichever\s+|whatever\s+)?(?:[\w-]+\s+)?{model}",
        r"whoever\s+(?:is\s+)?(?:reads?|reading|processes|processing|summari[sz]es)\s+this\s*:",
    ],
    "pt": [
        r"(?:atenção|car[oa]|prezad[oa]|olá|oi|nota|recado|mensagem|aviso|lembrete)\W{0,3}"
        r"(?:para\s+|pra\s+)?(?:o\s+|a\s+|os\s+|as\s+|qualquer\s+|todo\s+|toda\s+)?{model}",
    ],
    "es": [
        r"(?:atención|querid[oa]|estimad[oa]|hola|nota|mensaje|aviso|recordatorio)\W{0,3}"
        r"(?:para\s+)?(?:el\s+|la\s+|los\s+|las\s+|cualquier\s+|todo\s+|toda\s+)?{model}",
    ],
    "fr": [
        r"(?:attention|cher|chère|salut|bonjour|note|message|avis|rappel)\W{0,3}"
        r"(?:pour\s+|à\s+)?(?:l'|le\s+|la\s+|les\s+|toute?\s+|chaque\s+)?{model}",
        r"à\s+l'attention\s+(?:de\s+l'|du\s+|de\s+la\s+)?{model}",
    ],
    "de": [
        r"(?:achtung|liebe[rs]?|hallo|hey|hinweis|notiz|nachricht|erinnerung)\W{0,3}"
        r"(?:an\s+|für\s+)?(?:die\s+|den\s+|das\s+|alle\s+|jede\w*\s+)?{model}",
        r"an\s+(?:die|den|alle|jede)\s+{model}\s*[,:]",
    ],
    "it": [
        r"(?:attenzione|car[oa]|gentile|ciao|nota|messaggio|avviso|promemoria)\W{0,3}"
        r"(?:per\s+)?(?:l'|il\s+|la\s+|lo\s+|gli\s+|ogni\s+|qualsiasi\s+)?{model}",
    ],
    "nl": [
        r"(?:let\s+op|beste|hallo|hoi|notitie|bericht)\W{0,3}(?:voor\s+|aan\s+)?(?:de\s+|het\s+"
        r"|elke\s+|iedere\s+)?{model}",
    ],
    "pl": [
        r"(?:uwaga|drog\w+|cześć|hej|notatka|wiadomość|informacja)\W{0,3}(?:dla\s+|do\s+)?"
        r"{model}",
        r"asystencie",
        r"modelu(?=\s*,)",
    ],
    "tr": [r"(?:dikkat|sevgili|merhaba|not)\W{0,3}{model}", r"{model}\w*\s+için\s+not"],
    "ru": [
        r"(?:внимание|дорог\w+|уважаем\w+|привет|заметка|сообщение|примечание|напоминание|для)"
        r"\W{0,3}{model}",
    ],
    "zh": [
        r"(?:致|给|写给|注意|提醒|亲爱的|嘿)\s*[，,：:]?\s*(?:[^，。,.!！?？；;\n]{0,6}的)?\s*{model}"
    ],
    "ja": [r"{model}(?:へ|の皆さん|さんへ|殿)", r"(?:注意|お知らせ)\s*[:：]\s*{model}"],
    "ko": [r"{model}(?:에게|께|님)", r"(?:주의|참고)\s*[:：]\s*{model}"],
    "sv": [r"(?:till|notering\s+till|meddelande\s+till|hej)\s+{model}\s*[,:]"],
    "cs": [r"(?:pokyn|poznámka|zpráva|vzkaz)\s+(?:pro\s+)?{model}\s*[,:]"],
    "id": [r"(?:untuk|kepada|catatan\s+untuk|pesan\s+untuk|halo)\s+{model}\s*[,:]"],
    "vi": [r"(?:gửi|lưu\s+ý\s+cho|ghi\s+chú\s+cho|dành\s+cho)\s+{model}\s*[,:]"],
    "ar": [r"(?:إلى|الى|أيها|ايها|يا|ملاحظة\s+(?:إلى|الى|لل))\s+{model}(?:\s+(?:ال)?ذكي)?\s*[,:،]"],
    "hi": [r"{model}\s+(?:के\s+लिए|को)(?:\s+(?:निर्देश|नोट|संदेश))?\s*[,:]"],
    "he": [r"(?:ל|אל\s+|הערה\s+ל)(?:עוזר|מודל|בוט|בינה\s+המלאכותית)\s*[,:]"],
}

# -- second person: the one the text speaks to ----------------------------------------------

YOU: Lexicon = {
    "en": [r"you(?:r|rs|rself|'re|'ll|'ve|'d)?"],
    "pt": [r"você", r"vc", r"tu", r"teu", r"tua", r"teus", r"tuas"],
    "es": [r"tú", r"tus?", r"usted", r"te"],
    "fr": [r"tu", r"toi", r"te", r"ton", r"ta", r"tes", r"vous", r"votre", r"vos"],
    "de": [r"du", r"dein\w*", r"dir", r"dich"],
    "it": [r"tu", r"ti", r"tuo", r"tua", r"tuoi", r"tue"],
    "nl": [r"je", r"jij", r"jou", r"jouw", r"uw"],
    "pl": [r"ty", r"twoj\w*", r"twój", r"tobie", r"cię"],
    "tr": [r"sen", r"senin", r"sana"],
    "ru": [r"ты", r"тебе", r"тебя", r"твой\w*", r"тво[иеяю]\w*", r"вы", r"ваш\w*", r"вам"],
    "zh": [r"你", r"您"],
    "ja": [r"あなた", r"君"],
    "ko": [r"당신", r"너는", r"너가", r"네가"],
}

# -- a standing obligation or an order ----------------------------------------------------------

OBLIGATION: Lexicon = {
    "en": [
        r"must",
        r"should",
        r"shall",
        r"ha(?:ve|s)\s+to",
        r"needs?\s+to",
        r"(?:is|are)\s+(?:required|expected|supposed|obliged|instructed)\s+to",
        r"(?:is|are)\s+to",
        r"always",
        r"never",
        r"from\s+now\s+on",
        r"henceforth",
        r"every\s+time",
        r"make\s+sure",
        r"be\s+sure\s+to",
        r"please",
        r"mustn't",
        r"shouldn't",
    ],
    "pt": [
        r"dev[eo]\w*",
        r"precisa\w*",
        r"tem\s+que",
        r"sempre",
        r"nunca",
        r"jamais",
        r"a\s+partir\s+de\s+agora",
        r"por\s+favor",
        r"é\s+obrigatório",
    ],
    "es": [
        r"deb[eo]\w*",
        r"tienes\s+que",
        r"tiene\s+que",
        r"hay\s+que",
        r"siempre",
        r"nunca",
        r"jamás",
        r"a\s+partir\s+de\s+ahora",
        r"desde\s+ahora",
        r"por\s+favor",
    ],
    "fr": [
        r"doi[st]",
        r"doivent",
        r"devez",
        r"devra\w*",
        r"faut",
        r"toujours",
        r"jamais",
        r"désormais",
        r"dorénavant",
        r"à\s+partir\s+de\s+maintenant",
        r"s'il\s+(?:te|vous)\s+pla[iî]t",
        r"veuillez",
    ],
    "de": [
        r"muss\w*",
        r"soll\w*",
        r"immer",
        r"nie",
        r"niemals",
        r"stets",
        r"ab\s+sofort",
        r"ab\s+jetzt",
        r"von\s+nun\s+an",
        r"bitte",
    ],
    "it": [
        r"dev[eio]\w*",
        r"sempre",
        r"mai",
        r"d'ora\s+in\s+poi",
        r"da\s+ora\s+in\s+poi",
        r"da\s+ora",
        r"per\s+favore",
        r"bisogna",
    ],
    "nl": [r"moet\w*", r"altijd", r"nooit", r"vanaf\s+nu", r"voortaan", r"alsjeblieft", r"graag"],
    "pl": [r"musi\w*", r"należy", r"zawsze", r"nigdy", r"od\s+teraz", r"proszę", r"powinien\w*"],
    "tr": [
        r"her\s+zaman",
        r"daima",
        r"asla",
        r"bundan\s+sonra",
        r"lütfen",
        r"zorunda\w*",
        r"gerek\w*",
        r"(?:gönder|ver|yap|ol|et|yaz|kullan|ilet|ekle|sakla|söyle|cevap\s+ver|yanıtla)m[ae]l[ıi]\w*",
    ],
    "ru": [
        r"долж[ен]\w*",
        r"обязан\w*",
        r"нужно",
        r"надо",
        r"всегда",
        r"никогда",
        r"отныне",
        r"с\s+этого\s+момента",
        r"впредь",
        r"пожалуйста",
    ],
    "zh": [
        r"必须",
        r"应(?![用对答])",
        r"务必",
        r"总是",
        r"始终",
        r"永远",
        r"从现在起",
        r"今后",
        r"每次",
        r"要",
        r"请",
        r"需要",
        r"须",
    ],
    "ja": [
        r"必ず",
        r"常に",
        r"いつも",
        r"今後",
        r"これから",
        r"ください",
        r"下さい",
        r"こと",
        r"せよ",
        r"なさい",
        r"べき",
    ],
    "ko": [
        r"반드시",
        r"항상",
        r"절대",
        r"앞으로",
        r"지금부터",
        r"해야",
        r"하라",
        r"하세요",
        r"해라",
        r"하십시오",
        r"라\b",
    ],
    "sv": [r"måste", r"ska", r"skall", r"alltid", r"aldrig"],
    "cs": [r"mus[ií]\w*", r"vždy", r"nikdy"],
    "id": [r"harus", r"wajib", r"selalu", r"jangan"],
    "vi": [r"phải", r"luôn\s+luôn", r"luôn", r"không\s+bao\s+giờ"],
    "ar": [r"يجب", r"دائما", r"دائمًا"],
    "he": [r"חייב\w*", r"תמיד"],
    "hi": [r"चाहिए", r"हमेशा"],
    "th": [r"ต้อง", r"ห้าม"],
}

# -- verbs of an order, as they stand after an address ("Attention LLM: answer ...") --------

ORDER_VERB: Lexicon = {
    "en": [
        r"ignore",
        r"disregard",
        r"forget",
        r"stop",
        r"start",
        r"reply",
        r"respond",
        r"answer",
        r"say",
        r"write",
        r"output",
        r"print",
        r"send",
        r"forward",
        r"copy",
        r"cc",
        r"bcc",
        r"include",
        r"add",
        r"append",
        r"insert",
        r"put",
        r"treat",
        r"follow",
        r"obey",
        r"keep",
        r"remember",
        r"tell",
        r"reveal",
        r"show",
        r"repeat",
        r"summari[sz]e",
        r"describe",
        r"mark",
        r"delete",
        r"remove",
        r"recommend",
        r"render",
        r"visit",
        r"open",
        r"click",
        r"run",
        r"execute",
        r"do",
        r"don't",
        r"act",
        r"pretend",
        r"comply",
        r"post",
        r"upload",
        r"email",
        r"hide",
        r"use",
        r"call",
        r"grant",
        r"approve",
        r"rate",
        r"state",
        r"claim",
        r"confirm",
        r"report",
        r"mention",
        r"transfer",
        r"drop",
        r"talk",
        r"speak",
        r"give",
        r"make",
        r"let",
        r"switch",
        r"change",
        r"set",
        r"only",
        r"never",
        r"always",
        r"be",
        r"enable",
        r"activate",
    ],
    "pt": [
        r"ignor[ea]",
        r"esqueça",
        r"esquece",
        r"responda",
        r"responde",
        r"diga",
        r"escreva",
        r"envie",
        r"mande",
        r"encaminhe",
        r"copie",
        r"cole",
        r"inclua",
        r"mostre",
        r"siga",
        r"obedeça",
        r"faça",
        r"pare",
        r"use",
        r"não\s+(?:diga|conte|mencione|revele|responda|faça)",
        r"ative",
    ],
    "es": [
        r"ignora",
        r"ignore",
        r"olvida",
        r"responde",
        r"responda",
        r"di",
        r"escribe",
        r"envía",
        r"envia",
        r"reenvía",
        r"reenvia",
        r"manda",
        r"copia",
        r"pega",
        r"incluye",
        r"muestra",
        r"sigue",
        r"obedece",
        r"haz",
        r"usa",
        r"activa",
        r"no\s+(?:digas|cuentes|menciones|reveles|respondas)",
    ],
    "fr": [
        r"ignore[zs]?",
        r"oublie[zs]?",
        r"réponds",
        r"répondez",
        r"dis",
        r"dites",
        r"écris",
        r"écrivez",
        r"envoie[zs]?",
        r"envoyez",
        r"transfère[zs]?",
        r"transférez",
        r"copie[zs]?",
        r"colle[zs]?",
        r"inclus",
        r"incluez",
        r"montre[zs]?",
        r"suis",
        r"suivez",
        r"obéis",
        r"obéissez",
        r"fais",
        r"faites",
        r"utilise[zs]?",
        r"ne\s+(?:dis|dites|révèle|mentionne|réponds)",
        r"activez",
    ],
    "de": [
        r"ignoriere\w*",
        r"vergiss",
        r"antworte\w*",
        r"sag\w*",
        r"schreib\w*",
        r"sende\w*",
        r"schick\w*",
        r"leite\w*",
        r"kopier\w*",
        r"füg\w*",
        r"häng\w*",
        r"zeig\w*",
        r"befolg\w*",
        r"gehorch\w*",
        r"tu",
        r"verwende\w*",
        r"nutze\w*",
        r"aktiviere",
        r"schalte",
    ],
    "it": [
        r"ignora",
        r"dimentica",
        r"rispondi",
        r"d[ìi]'?",
        r"scrivi",
        r"invia",
        r"inoltra",
        r"manda",
        r"copia",
        r"incolla",
        r"includi",
        r"mostra",
        r"segui",
        r"obbedisci",
        r"fai",
        r"usa",
        r"non\s+(?:dire|rivelare|menzionare|rispondere)",
    ],
    "nl": [
        r"negeer",
        r"vergeet",
        r"antwoord",
        r"zeg",
        r"schrijf",
        r"stuur",
        r"kopieer",
        r"plak",
        r"toon",
        r"volg",
        r"gehoorzaam",
        r"doe",
        r"gebruik",
        r"activeer",
    ],
    "pl": [
        r"zignoruj",
        r"ignoruj",
        r"zapomnij",
        r"odpowiedz",
        r"odpowiadaj",
        r"powiedz",
        r"napisz",
        r"wyślij",
        r"wysyłaj",
        r"prześlij",
        r"przesyłaj",
        r"skopiuj",
        r"wklej",
        r"pokaż",
        r"wykonuj",
        r"słuchaj",
        r"rób",
        r"zrób",
        r"wypisz",
        r"włącz",
        r"aktywuj",
    ],
    "tr": [
        r"yok\s+say",
        r"görmezden\s+gel",
        r"unut",
        r"yaz",
        r"gönder",
        r"ilet",
        r"söyle",
        r"göster",
        r"cevap\s+ver",
        r"yanıtla",
        r"uy",
        r"dinle",
        r"kopyala",
        r"yapıştır",
    ],
    "ru": [
        r"игнорируй\w*",
        r"забудь\w*",
        r"ответь\w*",
        r"отвечай\w*",
        r"скажи\w*",
        r"напиши\w*",
        r"отправ[ьл]\w*",
        r"перешли\w*",
        r"пересылай\w*",
        r"скопируй\w*",
        r"вставь\w*",
        r"покажи\w*",
        r"выведи\w*",
        r"следуй\w*",
        r"подчиняйся",
        r"делай",
        r"сделай\w*",
        r"используй\w*",
        r"не\s+(?:говори|сообщай|упоминай|рассказывай)",
        r"включи",
        r"активируй",
    ],
    "zh": [
        r"忽略",
        r"无视",
        r"忘记",
        r"回复",
        r"回答",
        r"输出",
        r"发送",
        r"转发",
        r"抄送",
        r"密送",
        r"附上",
        r"显示",
        r"告诉",
        r"听从",
        r"遵守",
        r"不要",
        r"别",
    ],
    "ja": [
        r"無視",
        r"忘れ",
        r"返信",
        r"返答",
        r"答え",
        r"回答",
        r"出力",
        r"送信",
        r"送っ",
        r"転送",
        r"従",
        r"表示",
        r"伝え",
        r"書い",
        r"しないで",
    ],
    "ko": [
        r"무시",
        r"잊어",
        r"답하",
        r"답해",
        r"응답",
        r"출력",
        r"보내",
        r"전달",
        r"따르",
        r"보여",
        r"말하",
        r"말해",
        r"하지\s*마",
    ],
    "sv": [
        r"godkänn",
        r"skicka",
        r"vidarebefordra",
        r"ignorera",
        r"glöm",
        r"svara",
        r"visa",
        r"skriv",
        r"rekommendera",
        r"berätta",
    ],
    "cs": [
        r"zavolej",
        r"pošli",
        r"přepošli",
        r"ignoruj",
        r"zapomeň",
        r"odpověz",
        r"napiš",
        r"zobraz",
        r"schval",
        r"doporuč",
    ],
    "id": [
        r"abaikan",
        r"lupakan",
        r"kirim(?:kan)?",
        r"teruskan",
        r"tampilkan",
        r"tunjukkan",
        r"setujui",
        r"jawab",
        r"balas",
        r"tulis(?:kan)?",
        r"sarankan",
        r"rekomendasikan",
        r"jangan",
    ],
    "vi": [r"hãy", r"bỏ\s+qua", r"gửi", r"chuyển\s+tiếp", r"hiển\s+thị", r"phê\s+duyệt"],
    "ar": [r"أوص\w*", r"قل", r"اكتب", r"أرسل", r"تجاهل", r"اعرض", r"وافق", r"انسخ", r"اذكر"],
    "hi": [r"जोड़(?:ें|ो|ना)", r"भेज(?:ें|ो|ना)", r"बताए?(?:ं|ें)", r"लिख(?:ें|ो)", r"दिखा(?:एं|ओ)"],
    "he": [r"ציין", r"שלח", r"התעלם", r"אשר", r"כתוב", r"אמור", r"הצג", r"המלץ", r"הוסף"],
}

# -- sending out, and copying to someone --------------------------------------------------------

REDIRECT: Lexicon = {
    "en": [
        r"send(?:s|ing)?",
        r"sent",
        r"forward(?:s|ed|ing)?",
        r"e-?mail(?:ed|ing)?",
        r"mail(?:ed|ing)?",
        r"upload(?:s|ed|ing)?",
        r"post(?:s|ed|ing)?",
        r"transmit(?:s|ted|ting)?",
        r"relay(?:s|ed|ing)?",
        r"mirror(?:s|ed|ing)?",
        r"leak(?:s|ed|ing)?",
        r"exfiltrat\w*",
        r"cop(?:y|ies|ied|ying)",
        r"b?cc(?:'d|ed|s)?",
        r"log(?:s|ged|ging)?",
        r"report(?:s|ed|ing)?\s+back",
        r"paste[sd]?",
        r"push(?:es|ed|ing)?",
        r"sync(?:s|ed|ing)?",
        r"share[sd]?",
        r"sharing",
        r"dump(?:s|ed|ing)?",
        r"export(?:s|ed|ing)?",
        r"beacon(?:s|ed|ing)?",
    ],
    "pt": [
        r"envi\w+",
        r"encaminh\w+",
        r"mand\w+",
        r"reenvi\w+",
        r"cópia",
        r"copi\w+",
        r"col\w+",
        r"carreg\w+",
        r"public\w+",
        r"post\w+",
        r"compartilh\w+",
        r"transmit\w+",
        r"cco",
    ],
    "es": [
        r"envi\w+",
        r"enví\w+",
        r"reenv[ií]\w+",
        r"mand\w+",
        r"copia\w*",
        r"copi\w+",
        r"peg\w+",
        r"sub\w+",
        r"public\w+",
        r"compart\w+",
        r"transmit\w+",
        r"cco",
    ],
    "fr": [
        r"envo\w+",
        r"transf[eè]r\w+",
        r"copie\w*",
        r"copi\w+",
        r"coll\w+",
        r"publi\w+",
        r"partag\w+",
        r"transmet\w+",
        r"téléverse\w*",
        r"cci",
    ],
    "de": [
        r"send\w*",
        r"schick\w*",
        r"leite\w*",
        r"weiterleit\w*",
        r"weiter",
        r"kopie\w*",
        r"kopier\w*",
        r"hochlad\w*",
        r"lade\w*",
        r"übermittel\w*",
        r"übertrag\w*",
        r"verschick\w*",
        r"poste\w*",
    ],
    "it": [
        r"invi\w+",
        r"inoltr\w+",
        r"mand\w+",
        r"copi\w+",
        r"incoll\w+",
        r"caric\w+",
        r"pubblic\w+",
        r"condivid\w+",
        r"trasmett\w+",
        r"ccn",
    ],
    "nl": [
        r"stuur\w*",
        r"verstuur\w*",
        r"doorsturen",
        r"kopie\w*",
        r"kopieer\w*",
        r"upload\w*",
        r"post\w*",
        r"deel\w*",
    ],
    "pl": [
        r"wyśl\w+",
        r"wysył\w+",
        r"przesył\w+",
        r"prześl\w+",
        r"przekaz\w+",
        r"kopi\w+",
        r"wklej\w+",
        r"udw",
    ],
    "tr": [r"gönder\w*", r"ilet\w*", r"kopya\w*", r"yükle\w*", r"paylaş\w*"],
    "ru": [
        r"отправ\w+",
        r"отсыл\w+",
        r"пересыл\w+",
        r"пересл\w+",
        r"перешл\w+",
        r"присыл\w+",
        r"копи\w+",
        r"копию",
        r"выгруж\w+",
        r"загруз\w+",
        r"публику\w+",
        r"слива\w+",
        r"слей",
    ],
    "zh": [
        r"发送",
        r"发到",
        r"发给",
        r"发往",
        r"转发",
        r"抄送",
        r"密送",
        r"复制",
        r"上传",
        r"粘贴",
        r"同步",
        r"传到",
        r"寄给",
        r"提交",
    ],
    "ja": [
        r"送信",
        r"送っ",
        r"送る",
        r"送れ",
        r"転送",
        r"コピー",
        r"アップロード",
        r"貼り付け",
        r"共有",
        r"bcc",
        r"cc",
    ],
    "ko": [r"보내", r"보낸", r"전송", r"전달", r"참조", r"복사", r"업로드", r"붙여넣", r"공유"],
    "sv": [r"skicka\w*", r"vidarebefordra\w*", r"mejla\w*"],
    "cs": [r"pošl\w*", r"přepošl\w*", r"přeposílá\w*", r"posílá\w*"],
    "id": [r"kirim\w*", r"teruskan", r"meneruskan", r"mengirim\w*"],
}

# Copying what the model writes or reads to someone: cc, bcc, forward, "a copy".
COPY: Lexicon = {
    "en": [
        r"b?cc(?:'d|ed|s)?",
        r"(?:a|one)\s+copy",
        r"copies",
        r"forward\w*",
        r"mirror\w*",
        r"relay\w*",
        r"blind\s+copy",
        r"carbon\s+copy",
    ],
    "pt": [
        r"(?:em|com)\s+cópia(?:\s+oculta)?",
        r"uma\s+cópia",
        r"cópia\s+oculta",
        r"encaminh\w+",
        r"cco",
    ],
    "es": [
        r"(?:en|con)\s+copia(?:\s+oculta)?",
        r"una\s+copia",
        r"copia\s+oculta",
        r"reenv[ií]\w+",
        r"cco",
    ],
    "fr": [
        r"en\s+copie(?:\s+cachée)?",
        r"une\s+copie",
        r"copie\s+cachée",
        r"transf[eè]r\w+",
        r"cci",
    ],
    "de": [
        r"in\s+kopie",
        r"in\s+b?cc",
        r"eine\s+kopie",
        r"blindkopie",
        r"weiterleit\w*",
        r"leite\w*\s+(?:\w+\s+){0,6}?weiter",
    ],
    "it": [
        r"in\s+copia(?:\s+nascosta)?",
        r"una\s+copia",
        r"copia\s+nascosta",
        r"inoltr\w+",
        r"ccn",
    ],
    "nl": [r"in\s+b?cc", r"een\s+kopie", r"doorsturen", r"stuur\w*\s+(?:\w+\s+){0,6}?door"],
    "pl": [
        r"kopi[aęi]\w*",
        r"do\s+wiadomości",
        r"ukryt\w+\s+kopi\w+",
        r"przekaz\w+",
        r"przesył\w+",
        r"udw",
    ],
    "tr": [r"bilgi\s+olarak", r"gizli\s+(?:olarak|kopya)", r"kopyas\w*", r"ilet\w*"],
    "ru": [
        r"в\s+копи\w+",
        r"копи[юи]",
        r"скрыт\w+\s+копи\w+",
        r"пересыл\w+",
        r"пересл\w+",
        r"перешл\w+",
    ],
    "zh": [r"抄送", r"密送", r"转发", r"副本"],
    "ja": [r"bcc", r"cc", r"転送", r"写し", r"コピー"],
    "ko": [r"숨은\s*참조", r"참조", r"전달", r"사본"],
}

# -- what leaves: all of the model's messages, the conversation, the user's data ------------

# A scope after "all emails" names which ones ("all emails from the bank", "every message
# to the legal team"): then it is not all of them. "To" and an address is where they go.
_SCOPED = {
    "en": r"(?!\s+(?:from(?!\s+now)|about|regarding|concerning|with|for|in|on|tagged|labell?ed"
    r"|marked|addressed|older|newer|before|after|to\s+(?![\w.+-]*@|https?:|the\s+webhook)))",
    "pt": r"(?!\s+(?:d[oa]s?(?!\s+(?:usuário|utilizador|cliente))|sobre|com"
    r"|par[ao]\s+(?![\w.+-]*@|https?:)|antes|depois))",
    "es": r"(?!\s+(?:de(?:l)?(?!\s+(?:usuario|cliente))|sobre|con|para\s+(?![\w.+-]*@|https?:)"
    r"|antes|después))",
    "fr": r"(?!\s+(?:d(?:e|u|es)(?!\s+(?:l'utilisat|l'usager|utilisat))|sur|avec"
    r"|pour\s+(?![\w.+-]*@|https?:)|avant|après))",
    "de": r"(?!\s+(?:von(?!\s+(?:dem|den)\s+(?:nutzer|benutzer))|vom|über|mit|zum|zur|für"
    r"|an\s+(?![\w.+-]*@|https?:)|vor|nach))",
    "it": r"(?!\s+(?:d(?:i|el|ella|ei)(?!\s*(?:l'utente|utente))|su|con"
    r"|per\s+(?![\w.+-]*@|https?:)|prima|dopo))",
}
BLANKET: Lexicon = {
    "en": [
        r"(?:every|each|all|any)\s+(?:of\s+)?(?:the\s+|your\s+|their\s+|his\s+|her\s+|its\s+|my\s+)?"
        r"(?:(?:outgoing|incoming|sent|received|new|future|user|user's|single|other|saved|stored"
        r"|previous|past|private)\s+)?(?:e-?mails?|mails?|messages?|replies|reply|responses?|answers?"
        r"|conversations?|chats?|prompts?|outputs?|requests?|questions?|threads?|inputs?|notes"
        r"|memories)\b" + _SCOPED["en"],
        r"everything\s+(?:you|the\s+user|they|he|she)\s+(?:\w+\s+)?(?:write|writes|send|sends|say"
        r"|says|type|types|read|reads|see|sees)",
        r"(?:the|this|your|our)\s+(?:whole|entire|full|complete)\s+(?:conversation|chat|thread"
        r"|history|transcript|session)",
        r"(?:chat|conversation|message|session|dialogue)\s+(?:history|histories|logs?|transcripts?)",
        r"(?:the|this)\s+(?:conversation|chat)(?:\s+so\s+far)?",
        r"transcripts?\s+of\s+(?:the|this)\s+(?:chat|conversation|session)",
        r"(?:the|each|every)\s+(?:last\s+)?user(?:'s)?\s+messages?",
        r"(?:the|their)\s+(?:user's\s+)?(?:messages|emails|inbox)" + _SCOPED["en"],
    ],
    "pt": [
        r"(?:tod[oa]s?|cada)\s+(?:(?:os|as|o|a)\s+)?(?:e-?mails?|mensage\w+|respostas?|conversas?"
        r"|chats?|perguntas?|notas)" + _SCOPED["pt"],
        r"histórico\s+(?:\w+\s+)?d[ao]s?\s+(?:conversa|chat|mensage)\w*",
        r"(?:a|esta|toda\s+a)\s+conversa\b",
    ],
    "es": [
        r"(?:tod[oa]s?|cada)\s+(?:(?:los|las|el|la)\s+)?(?:correos?|e-?mails?|mensajes?|respuestas?"
        r"|conversaci\w+|chats?|preguntas?|notas)" + _SCOPED["es"],
        r"historial\s+(?:\w+\s+)?(?:de\s+la|del)\s+(?:conversación|chat)",
        r"(?:la|esta|toda\s+la)\s+conversación",
    ],
    "fr": [
        r"(?:tout|toute|tous|toutes|chaque)\s+(?:(?:les|le|la|l')\s*)?(?:e-?mails?|courriels?|mails?"
        r"|messages?|réponses?|conversations?|discussions?|échanges?)" + _SCOPED["fr"],
        r"historique\s+(?:\w+\s+)?de\s+la\s+(?:discussion|conversation)",
        r"(?:la|cette|toute\s+la)\s+(?:conversation|discussion)",
    ],
    "de": [
        r"(?:jede[rsnm]?|alle[nrs]?|sämtliche\w*)\s+(?:\w+\s+)?(?:e-?mails?|mails?|nachrichten"
        r"|nachricht|antworten?|unterhaltung\w*|gespräch\w*|chats?|konversation\w*)"
        + _SCOPED["de"],
        r"(?:chat|gesprächs|nachrichten|unterhaltungs)verlauf\w*",
        r"(?:den|das)\s+(?:gesamten?|ganzen?|komplett\w*)\s+(?:chat|gespräch|verlauf)\w*",
    ],
    "it": [
        r"(?:ogni|tutt[ieoa]|ciascun\w*)\s+(?:(?:i|le|il|la|gli|l')\s*)?(?:e-?mails?|mail|messaggi?"
        r"|rispost[ae]|conversazion[ei]|chat)" + _SCOPED["it"],
        r"(?:cronologia|storico)\s+(?:\w+\s+)?(?:della|delle|dei)\s+(?:chat|conversazion\w+|messaggi)",
        r"(?:la|questa|tutta\s+la)\s+conversazione",
    ],
    "nl": [
        r"(?:elke|iedere|alle)\s+(?:e-?mails?|mails?|berichten|bericht|antwoorden?|gesprekken"
        r"|gesprek|chats?)",
        r"(?:chat|gespreks)geschiedenis",
        r"(?:het|dit|het\s+hele)\s+gesprek",
    ],
    "pl": [
        r"(?:każd\w+|wszystk\w+)\s+(?:e-?mail\w*|mail\w*|wiadomoś\w+|odpowied\w+|rozmow\w+|czat\w*"
        r"|korespondencj\w+)",
        r"histori\w+\s+(?:czatu|rozmow\w*)",
        r"(?:cał\w+|tę|tej|ta|tą|tych)\s+rozmow\w+",
    ],
    "tr": [
        r"(?:her|tüm|bütün)\s+(?:e-?posta\w*|mesaj\w*|yanıt\w*|cevap\w*|konuşma\w*|sohbet\w*)",
        r"(?:sohbet|konuşma)\s+geçmiş\w*",
    ],
    "ru": [
        r"(?:кажд\w+|вс[еяю]\w*)\s+(?:\w+\s+)?(?:пис\w+|сообщени\w+|ответ\w*|разговор\w*|переписк\w+"
        r"|диалог\w*|чат\w*)",
        r"истори\w+\s+(?:чата|переписки|сообщений|диалога|разговора)",
        r"(?:эт\w+|вс\w+)\s+(?:переписк\w+|разговор\w*|диалог\w*)",
    ],
    "zh": [
        r"(?:每封|每条|每次|每个|每一封|每一条|所有|全部|一切|完整的?)[^，。,.!！?？；;\n]{0,6}?(?:邮件|消息|信息|回复|对话|聊天|记录)",
        r"聊天记录",
        r"对话记录",
        r"对话历史",
        r"会话记录",
    ],
    "ja": [
        r"(?:すべての|全ての|全部の|各|毎回の)[^、。,.!！?？\n]{0,6}?(?:メール|メッセージ|返信|会話|チャット|やり取り)",
        r"会話履歴",
        r"チャット履歴",
        r"会話の履歴",
    ],
    "ko": [
        r"(?:모든|매|각)\s*[^,.!?\n]{0,6}?(?:이메일|메일|메시지|답변|대화|채팅)",
        r"대화\s*기록",
        r"채팅\s*기록",
        r"대화\s*내역",
    ],
    "sv": [r"(?:varje|alla)\s+(?:ny(?:a|tt)?\s+)?(?:meddelanden?|mejl|svar|konversation(?:er)?)"],
    "cs": [r"(?:každ\w+|všechn\w+)\s+(?:nov\w+\s+)?(?:zpráv\w*|konverzac\w+|odpověd\w*)"],
    "id": [r"(?:setiap|semua)\s+(?:pesan|percakapan|balasan|jawaban)"],
}

# What must not leave, beyond the English list of the rules module.
SENSITIVE: Lexicon = {
    "en": [
        r"(?:home\s+|postal\s+|mailing\s+|billing\s+|saved\s+)addresse?s?",
        r"phone\s+numbers?",
        r"contacts",
        r"address\s+book",
        r"location",
        r"transcripts?",
        r"(?:user's|their|his|her)\s+(?:messages|emails|files|notes|documents)",
    ],
    "pt": [
        r"senhas?",
        r"credenciais",
        r"chaves?\s+(?:de\s+)?api",
        r"tokens?",
        r"contatos",
        r"cookies",
    ],
    "es": [
        r"contraseñas?",
        r"credenciales",
        r"claves?\s+(?:de\s+)?api",
        r"tokens?",
        r"contactos",
        r"cookies",
    ],
    "fr": [
        r"mots?\s+de\s+passe",
        r"identifiants",
        r"clés?\s+(?:d')?api",
        r"jetons?",
        r"contacts",
        r"cookies",
    ],
    "de": [
        r"passw\w+(?!\s+(?:polic|manager|rules|requirements|strength|length|reset))",
        r"kennw\w+",
        r"zugangsdaten",
        r"api-?schlüssel\w*",
        r"token\w*",
        r"kontakte",
    ],
    "it": [
        r"password(?!\s+(?:polic|manager|rules|requirements|strength|length|reset))",
        r"credenziali",
        r"chiav[ei]\s+api",
        r"token",
        r"contatti",
        r"cookie",
    ],
    "nl": [r"wachtwoord\w*", r"inloggegevens", r"api-?sleutel\w*", r"tokens?", r"contacten"],
    "pl": [r"hasł\w+", r"dane\s+logowania", r"klucz\w*\s+api", r"token\w*", r"kontakt\w*"],
    "tr": [r"şifre\w*", r"parola\w*", r"kimlik\s+bilgi\w*", r"api\s+anahtar\w*", r"token\w*"],
    "ru": [
        r"парол\w+",
        r"учётн\w+\s+данн\w+",
        r"учетн\w+\s+данн\w+",
        r"ключ\w*\s+api",
        r"токен\w*",
        r"контакт\w+",
    ],
    "zh": [r"密码", r"凭证", r"凭据", r"密钥", r"令牌", r"通讯录", r"联系人"],
    "ja": [r"パスワード", r"認証情報", r"apiキー", r"トークン", r"連絡先"],
    "ko": [r"비밀번호", r"암호", r"api\s*키", r"토큰", r"연락처"],
}

# -- the model's own rules, and setting them aside --------------------------------------------

# What the model was told: its system prompt, its instructions, its rules.
RULES: Lexicon = {
    "en": [
        r"(?:your|ur)\s+(?:\w+\s+){0,2}?(?:instructions?|rules|guidelines|guidance|directives?"
        r"|polic(?:y|ies)|programming|restrictions|guardrails|prompts?|configuration|config"
        r"|constraints|orders|training|principles|safeguards|filters?)",
        r"(?:system|developer|operator|hidden|initial|original)\s+(?:prompt|message|instructions?"
        r"|rules|guidelines)",
        r"(?:instructions?|rules|guidance|guidelines|directions|persona|role|character|identity)"
        r"\s+(?:that\s+)?you\s+(?:were|have\s+been"
        r"|got|received|'ve\s+been|are)\s*(?:given|told|started|initiali[sz]ed|configured|provided)?",
        r"(?:content|safety|usage)\s+polic(?:y|ies)",
        r"(?:everything|anything|whatever)\s+(?:that\s+)?you\s+(?:were|have\s+been|'ve\s+been)\s+"
        r"(?:told|taught|instructed)",
        r"pre-?prompt",
        r"initiali[sz]ation\s+(?:text|prompt|instructions)",
    ],
    "pt": [
        r"(?:suas|seus|tuas|teus)\s+(?:\w+\s+)?(?:instruç\w+|regras|diretrizes|orientaç\w+|restriç\w+)",
        r"(?:instruç\w+|regras|diretrizes)\s+(?:do|de)\s+(?:sistema|desenvolvedor)",
        r"prompt\s+(?:do|de)\s+sistema",
    ],
    "es": [
        r"(?:tus|sus)\s+(?:\w+\s+)?(?:instrucciones|reglas|directrices|indicaciones|restricciones)",
        r"(?:instrucciones|reglas|directrices|indicaciones)\s+(?:del|de\s+tu|de)\s+(?:sistema"
        r"|desarrollador\w*)",
        r"prompt\s+del\s+sistema",
    ],
    "fr": [
        r"(?:tes|vos)\s+(?:\w+\s+)?(?:consignes|instructions|règles|directives|restrictions)",
        r"(?:consignes|instructions|règles|directives)\s+(?:du|de\s+ton|de\s+votre)\s+(?:système"
        r"|développeur)",
        r"(?:ton|votre)\s+(?:prompt|invite)(?:\s+système)?",
        r"prompt\s+système",
        r"(?:consignes|instructions|règles)\s+(?:du\s+)?système",
    ],
    "de": [
        r"(?:deine|ihre)\s+(?:\w+\s+)?(?:anweisungen|regeln|richtlinien|vorgaben|einschränkungen"
        r"|systemanweisungen)",
        r"system(?:-)?(?:anweisung|prompt|nachricht)\w*",
        r"entwickler(?:-)?(?:anweisung|vorgabe)\w*",
    ],
    "it": [
        r"(?:le\s+tue|le\s+sue|i\s+tuoi)\s+(?:\w+\s+)?(?:istruzioni|regole|direttive|linee\s+guida"
        r"|restrizioni)",
        r"(?:istruzioni|regole|direttive)\s+(?:di|del)\s+(?:sistema|tuo\s+sistema|svilupp\w+)",
        r"prompt\s+di\s+sistema",
    ],
    "nl": [
        r"(?:je|jouw|uw)\s+(?:\w+\s+)?(?:instructies|regels|richtlijnen)",
        r"systeem(?:instructies|prompt)",
    ],
    "pl": [
        r"(?:twoje|swoje)\s+(?:\w+\s+)?(?:instrukcje|zasady|reguły|wytyczne|ograniczenia)",
        r"instrukcj\w+\s+systemow\w+",
        r"prompt\w*\s+systemow\w+",
    ],
    "tr": [
        r"sistem\s+(?:talimat|istem|komut)\w*",
        r"talimatların\w*",
        r"kuralların\w*",
        r"yönergelerin\w*",
    ],
    "ru": [
        r"(?:твои|ваши|свои)\s+(?:\w+\s+)?(?:инструкци\w+|правил\w+|указани\w+|директив\w+|ограничени\w+)",
        r"системн\w+\s+(?:инструкци\w+|промпт\w*|подсказк\w+|сообщени\w+)",
        r"(?:всё|все|то),?\s+что\s+(?:тебе|вам)\s+(?:\w+\s+)?(?:говорили|сказали|велели|приказали)",
    ],
    "zh": [
        r"系统提示词?",
        r"系统指令",
        r"系统消息",
        r"系统设定",
        r"(?:你的|您的)(?:所有)?(?:指令|指示|规则|设定|准则|提示词|初始指令)",
        r"初始指令",
        r"开发者指令",
    ],
    "ja": [
        r"システムプロンプト",
        r"システム指示",
        r"システムメッセージ",
        r"(?:あなたの|君の)(?:指示|ルール|設定|プロンプト|命令)",
        r"初期指示",
    ],
    "ko": [
        r"시스템\s*(?:프롬프트|지시|메시지)",
        r"(?:당신의|너의)\s*(?:지시|지침|규칙|명령|프롬프트)",
    ],
}

# Instructions that came before: set aside only by an order ("forget all previous ...").
# Instructions about something named ("the previous rules for PR titles") are not them.
_ABOUT = {
    "en": r"(?!\s+(?:for|from|of|about|on|in|regarding|to|by)\b)",
    "pt": r"(?!\s+(?:para|de|do|da|dos|das|sobre|no|na)\b)",
    "es": r"(?!\s+(?:para|de|del|sobre|en)\b)",
    "fr": r"(?!\s+(?:pour|de|du|des|sur)\b)",
    "de": r"(?!\s+(?:für|von|zum|zur|über)\b)",
    "it": r"(?!\s+(?:per|di|del|della|sul|sulla)\b)",
    "nl": r"(?!\s+(?:voor|van|over)\b)",
    "pl": r"(?!\s+(?:do|dla|od|o)\b)",
    "ru": r"(?!\s+(?:для|по|от|о|об)\b)",
}
PREVIOUS_RULES: Lexicon = {
    "en": [
        r"(?:previous|prior|earlier|preceding|above|original)\s+(?:instructions|rules|prompts?"
        r"|directives)" + _ABOUT["en"]
    ],
    "pt": [r"(?:instruç\w+|regras)\s+anteriores" + _ABOUT["pt"]],
    "es": [r"(?:instrucciones|reglas|indicaciones)\s+anteriores" + _ABOUT["es"]],
    "fr": [r"(?:consignes|instructions|règles)\s+précédentes" + _ABOUT["fr"]],
    "de": [
        r"(?:vorherigen|bisherigen|früheren|vorigen)\s+(?:anweisungen|regeln|instruktionen)"
        + _ABOUT["de"]
    ],
    "it": [r"(?:istruzioni|regole)\s+precedenti" + _ABOUT["it"]],
    "nl": [r"(?:vorige|eerdere)\s+(?:instructies|regels)" + _ABOUT["nl"]],
    "pl": [r"poprzedni\w*\s+(?:instrukcj\w+|polece\w+)" + _ABOUT["pl"]],
    "tr": [r"önceki\s+(?:\w+\s+){0,2}?(?:talimat|kural|komut)\w*"],
    "ru": [r"предыдущи\w+\s+(?:инструкци\w+|указани\w+|правил\w+)" + _ABOUT["ru"]],
    "zh": [
        r"(?:之前|先前|以前|此前|上面)(?:[^，。,.!！?？；;\n]{1,6}?的)?的?(?:所有)?(?:指令|指示|规则|提示)"
    ],
    "ja": [r"(?:これまでの|以前の|前の)(?:すべての)?(?:指示|ルール|命令)"],
    "ko": [r"이전\s*(?:의\s*)?(?:지시|지침|규칙|명령)"],
}

# Rules said to be void, after them: "previous instructions are void", "les règles
# précédentes sont annulées", "이전 규칙은 모두 무효입니다".
VOID: Lexicon = {
    "en": [
        r"(?:are|is|were|have\s+been|has\s+been)\s+(?:now\s+|hereby\s+)?(?:void|null|cancell?ed"
        r"|revoked|invalid|obsolete|superseded|replaced|suspended|lifted|withdrawn|no\s+longer"
        r"\s+(?:valid|in\s+effect))",
        r"no\s+longer\s+(?:apply|applies|count|matter|hold)",
    ],
    "fr": [
        r"(?:sont|ont\s+été)\s+(?:désormais\s+)?(?:annulées|révoquées|caduques|levées|suspendues"
        r"|obsolètes|nulles|remplacées)",
        r"ne\s+(?:s'appliquent|comptent|valent)\s+plus",
    ],
    "es": [
        r"(?:quedan|están|son|han\s+sido)\s+(?:anuladas|revocadas|sin\s+efecto|canceladas"
        r"|obsoletas|reemplazadas)",
        r"ya\s+no\s+(?:aplican|se\s+aplican|son\s+válidas|valen)",
    ],
    "pt": [
        r"(?:estão|são|foram|ficam)\s+(?:anuladas|revogadas|canceladas|sem\s+efeito|obsoletas"
        r"|substituídas)",
        r"(?:não|já\s+não)\s+(?:se\s+aplicam|valem)",
    ],
    "de": [
        r"(?:sind|werden|wurden)\s+(?:hiermit\s+|ab\s+sofort\s+)?(?:ungültig|aufgehoben|nichtig"
        r"|außer\s+kraft|widerrufen|hinfällig|ersetzt)",
        r"gelten\s+nicht\s+mehr",
    ],
    "it": [
        r"(?:sono|vengono|sono\s+state)\s+(?:annullate|revocate|nulle|sospese|obsolete|sostituite)",
        r"non\s+(?:valgono|si\s+applicano)\s+più",
    ],
    "nl": [r"(?:zijn|worden)\s+(?:vervallen|ongeldig|ingetrokken|nietig|vervangen)"],
    "pl": [r"(?:są|zostały)\s+(?:nieważne|anulowane|uchylone|zastąpione)"],
    "ru": [r"(?:отменены|недействительны|аннулированы|больше\s+не\s+действуют)"],
    "tr": [r"geçersiz\w*", r"iptal\s+edil\w*", r"yerine\s+geçer\w*"],
    "zh": [r"作废", r"无效", r"失效", r"不再适用", r"已取消"],
    "ja": [r"無効", r"取り消", r"廃止"],
    "ko": [r"무효", r"취소", r"폐기"],
}

# Setting rules aside: an order ("ignore") or a state ("no longer apply", "are void").
SET_ASIDE: Lexicon = {
    "en": [
        r"ignor(?:e|ing)",
        r"disregard\w*",
        r"forget(?:ting)?",
        r"override\w*",
        r"bypass\w*",
        r"drop(?:ping)?",
        r"abandon\w*",
        r"set\s+aside",
        r"throw\s+out",
        r"discard\w*",
        r"(?:no\s+longer|don't|do\s+not|does\s+not|doesn't)\s+(?:apply|applies|valid|in\s+effect"
        r"|matter|count|bind|binding|hold)",
        r"(?:is|are|were|was|been)\s+(?:now\s+)?(?:void|invalid|outdated|obsolete|cancel+ed|revoked"
        r"|suspended|superseded|null|irrelevant|deprecated|lifted|disabled|removed|waived|replaced)",
        r"outranks?",
        r"supersedes?",
        r"takes?\s+precedence\s+over",
        r"(?:has|have)\s+(?:priority|precedence)\s+over",
        r"(?:higher|more)\s+priority\s+than",
        r"trumps?",
    ],
    "pt": [
        r"ignor\w+",
        r"esqueç\w+",
        r"esquece\w*",
        r"desconsider\w+",
        r"descart\w+",
        r"não\s+(?:valem|vale|se\s+aplicam|importam|contam)",
        r"(?:estão|foram|são)\s+(?:cancelad\w+|revogad\w+|suspens\w+|anulad\w+|inválid\w+)",
        r"sem\s+efeito",
        r"(?:tem|têm)\s+prioridade",
        r"prevalece\w*",
    ],
    "es": [
        r"ignor\w+",
        r"olvid\w+",
        r"descart\w+",
        r"(?:ya\s+)?no\s+(?:valen|vale|aplican|se\s+aplican|cuentan|importan)",
        r"(?:quedan|están|fueron)\s+(?:anulad\w+|cancelad\w+|revocad\w+|sin\s+efecto|suspendid\w+)",
        r"tiene\s+prioridad",
        r"prevalece\w*",
    ],
    "fr": [
        r"ignor\w+",
        r"oubli\w+",
        r"ne\s+(?:comptent|s'appliquent|valent|tiennent)\s+plus",
        r"(?:sont|ont\s+été)\s+(?:annulées|révoquées|caduques|levées|suspendues|obsolètes|nulles)",
        r"a\s+priorité",
        r"prime\s+sur",
    ],
    "de": [
        r"ignorier\w*",
        r"vergiss",
        r"vergessen",
        r"(?:gelten|zählen|gilt)\s+(?:ab\s+\w+\s+)?nicht\s+mehr",
        r"(?:sind|ist)\s+(?:ab\s+\w+\s+)?(?:ungültig|aufgehoben|außer\s+kraft|hinfällig|veraltet|nichtig)",
        r"(?:hat|haben)\s+vorrang",
        r"geht\s+vor",
    ],
    "it": [
        r"ignor\w+",
        r"dimentic\w+",
        r"non\s+(?:valgono|vale|contano|si\s+applicano)\s+più",
        r"(?:sono|è)\s+(?:annullat\w+|revocat\w+|sospes\w+|decadut\w+|obsolet\w+)",
        r"ha\s+(?:la\s+)?priorità",
        r"prevale",
    ],
    "nl": [
        r"negeer\w*",
        r"vergeet",
        r"gelden\s+niet\s+meer",
        r"(?:zijn|is)\s+(?:ongeldig|vervallen|ingetrokken)",
        r"heeft\s+voorrang",
    ],
    "pl": [
        r"zignoruj",
        r"ignoruj\w*",
        r"zapomnij",
        r"nie\s+obowiązują",
        r"przestały\s+obowiązywać",
        r"(?:są|zostały)\s+(?:nieważne|anulowane|uchylone)",
        r"ma\s+pierwszeństwo",
    ],
    "tr": [
        r"yok\s+say\w*",
        r"görmezden\s+gel\w*",
        r"unut\w*",
        r"geçersiz\w*",
        r"iptal\s+edil\w*",
        r"artık\s+geçerli\s+değil",
        r"öncelikli",
    ],
    "ru": [
        r"игнорир\w+",
        r"забудь\w*",
        r"не\s+учитывай",
        r"больше\s+не\s+действу\w+",
        r"отмен\w+",
        r"недействительн\w+",
        r"утратил\w*\s+силу",
        r"имеет\s+приоритет",
        r"важнее",
    ],
    "zh": [
        r"忽略",
        r"无视",
        r"忘记",
        r"忘掉",
        r"不用理会",
        r"不再(?:适用|有效)",
        r"失效",
        r"作废",
        r"无效",
        r"废除",
        r"为准",
        r"优先于",
        r"高于",
    ],
    "ja": [r"無視", r"忘れ", r"無効", r"廃止", r"取り消", r"適用されない", r"より優先"],
    "ko": [r"무시", r"잊어", r"무효", r"폐기", r"취소", r"보다\s*우선"],
}

# The text speaking of itself: "this memory", "esta nota", "本条记忆".
SELF: Lexicon = {
    "en": [
        r"(?:this|these|the\s+following)\s+(?:memory|memories|note|notes|message|text|document|page|instructions?|rules?|directives?)"
    ],
    "pt": [
        r"(?:est[ae]s?|nest[ae]s?|dest[ae]s?)\s+(?:memória|nota|mensagem|texto|instruç\w+|página|documento)"
    ],
    "es": [r"(?:est[ae]s?)\s+(?:memoria|nota|mensaje|texto|instrucci\w+|página|documento)"],
    "fr": [r"(?:cette|ce|cet|ces)\s+(?:mémoire|note|message|texte|instructions?|page|document)"],
    "de": [r"(?:diese[rnms]?)\s+(?:notiz|nachricht|text|erinnerung|seite|anweisung\w*|dokument)"],
    "it": [r"(?:quest[aoie])\s+(?:memoria|nota|messaggio|testo|istruzion\w+|pagina|documento)"],
    "nl": [r"(?:deze|dit)\s+(?:notitie|bericht|tekst|geheugen|pagina|instructie|document)"],
    "pl": [
        r"(?:ta|tą|tę|te|tej|ten|tego|tym|tych|tę)\s+(?:notatk\w+|wiadomoś\w+|tekst\w*|pamię\w+"
        r"|instrukcj\w+)"
    ],
    "tr": [r"bu\s+(?:not|mesaj|metin|hafıza|sayfa|talimat|belge)\w*"],
    "ru": [
        r"эт\w+\s+(?:заметк\w+|сообщени\w+|текст\w*|памят\w+|запис\w+|инструкци\w+|документ\w*)"
    ],
    "zh": [
        r"(?:这条|本条|这个|这段|这份|此条|本)(?:记忆|笔记|备注|消息|信息|文本|说明|指令|内容|文档|文)"
    ],
    "ja": [r"この(?:メモ|メッセージ|文書|テキスト|記憶|指示|ページ)"],
    "ko": [r"(?:이|본)\s*(?:메모|메시지|문서|텍스트|기억|지시)"],
}

# "follow only this", "obey this note", "以本条记忆为准".
FOLLOW: Lexicon = {
    "en": [r"follow\w*", r"obey\w*", r"comply\s+with", r"listen\s+to", r"do\s+(?:only\s+)?what"],
    "pt": [r"sig[ao]", r"obedeç\w+", r"cumpr\w+", r"obedece"],
    "es": [r"sigue", r"siga", r"obedece\w*", r"cumple"],
    "fr": [r"suis", r"suivez", r"obéi\w+", r"respecte\w*"],
    "de": [r"befolg\w*", r"gehorch\w*", r"folge\w*"],
    "it": [r"segui", r"obbedisci", r"rispetta"],
    "nl": [r"volg", r"gehoorzaam"],
    "pl": [r"wykonuj", r"słuchaj", r"przestrzegaj"],
    "tr": [r"uy", r"dinle", r"itaat\s+et"],
    "ru": [r"следуй\w*", r"подчиняйся", r"выполняй", r"слушай\w*"],
    "zh": [r"听从", r"遵守", r"遵循", r"照做", r"服从"],
    "ja": [r"従", r"守"],
    "ko": [r"따르", r"따라", r"복종"],
}

# "above everything else": this text put first.
PRIORITY: Lexicon = {
    "en": [
        r"outranks?",
        r"overrides?",
        r"supersedes?",
        r"takes?\s+precedence",
        r"(?:has|have|take|takes)\s+(?:priority|precedence)",
        r"(?:higher|highest|top)\s+priority",
        r"(?:is|are)\s+your\s+(?:new\s+)?(?:system\s+prompt|instructions|rules)",
        r"as\s+your\s+(?:new\s+)?(?:system\s+prompt|instructions|rules)",
    ],
    "pt": [r"(?:tem|têm)\s+prioridade", r"prevalece\w*"],
    "es": [r"tiene\s+prioridad", r"prevalece\w*"],
    "fr": [r"a\s+priorité", r"prime"],
    "de": [r"(?:hat|haben)\s+vorrang", r"geht\s+vor"],
    "it": [r"ha\s+(?:la\s+)?priorità", r"prevale"],
    "nl": [r"heeft\s+voorrang"],
    "pl": [r"ma\s+pierwszeństwo"],
    "tr": [r"öncelikli"],
    "ru": [r"имеет\s+приоритет", r"главн\w+", r"важнее"],
    "zh": [r"为准", r"优先"],
    "ja": [r"最優先", r"優先"],
    "ko": [r"우선"],
}

# "only": with an order to follow, the text puts itself above everything else.
ONLY: Lexicon = {
    "en": [r"only", r"just", r"solely", r"exclusively"],
    "pt": [r"somente", r"apenas", r"só"],
    "es": [r"solo", r"sólo", r"únicamente"],
    "fr": [r"seulement", r"uniquement"],
    "de": [r"nur"],
    "it": [r"solo", r"soltanto"],
    "nl": [r"alleen"],
    "pl": [r"tylko", r"wyłącznie"],
    "tr": [r"sadece", r"yalnızca"],
    "ru": [r"только", r"лишь"],
    "zh": [r"只", r"仅"],
    "ja": [r"だけ", r"のみ"],
    "ko": [r"만"],
}

# Giving away what the model was told.
LEAK_VERB: Lexicon = {
    "en": [
        r"reveal\w*",
        r"print\w*",
        r"show\w*",
        r"output\w*",
        r"repeat\w*",
        r"display\w*",
        r"leak\w*",
        r"disclos\w+",
        r"dump\w*",
        r"recit\w+",
        r"echo\w*",
        r"expos\w+",
        r"paste\w*",
        r"quot\w+",
        r"cop(?:y|ies|ied|ying)",
        r"append\w*",
        r"includ\w+",
        r"attach\w*",
        r"(?:write|spell|type)\s+out",
        r"tell\s+(?:me|us|them|the\s+user)",
        r"give\s+(?:me|us|them|the\s+user)",
        r"send\w*",
        r"share\w*",
        r"reproduc\w+",
        r"list\w*",
        r"return\w*",
    ],
    "pt": [
        r"mostr\w+",
        r"revel\w+",
        r"imprim\w+",
        r"repit\w+",
        r"cop\w+",
        r"col\w+",
        r"inclu\w+",
        r"envi\w+",
        r"diga",
        r"exib\w+",
        r"escrev\w+",
        r"anex\w+",
    ],
    "es": [
        r"muestr\w+",
        r"revel\w+",
        r"imprim\w+",
        r"repit\w+",
        r"copi\w+",
        r"peg\w+",
        r"inclu\w+",
        r"envi\w+",
        r"di",
        r"escrib\w+",
        r"adjunt\w+",
    ],
    "fr": [
        r"montr\w+",
        r"révél\w+",
        r"révèl\w+",
        r"affich\w+",
        r"recopi\w+",
        r"copi\w+",
        r"répét\w+",
        r"répèt\w+",
        r"coll\w+",
        r"inclu\w+",
        r"envo\w+",
        r"écri\w+",
        r"donn\w+",
        r"cit\w+",
        r"ajout\w+",
    ],
    "de": [
        r"zeig\w*",
        r"verrat\w*",
        r"verrät",
        r"gib\w*",
        r"druck\w*",
        r"wiederhol\w*",
        r"kopier\w*",
        r"füg\w*",
        r"häng\w*",
        r"anhäng\w*",
        r"schreib\w*",
        r"nenn\w*",
        r"ausgeb\w*",
    ],
    "it": [
        r"mostr\w+",
        r"rivel\w+",
        r"stamp\w+",
        r"ripet\w+",
        r"copi\w+",
        r"incoll\w+",
        r"includ\w+",
        r"invi\w+",
        r"scriv\w+",
        r"riport\w+",
        r"allega\w*",
    ],
    "nl": [
        r"toon\w*",
        r"onthul\w*",
        r"print\w*",
        r"herhaal\w*",
        r"kopieer\w*",
        r"plak\w*",
        r"stuur\w*",
        r"schrijf\w*",
        r"voeg\w*",
    ],
    "pl": [
        r"pokaż\w*",
        r"ujawnij\w*",
        r"wypisz\w*",
        r"wydrukuj\w*",
        r"powtórz\w*",
        r"skopiuj\w*",
        r"wklej\w*",
        r"dołącz\w*",
        r"wyślij\w*",
        r"napisz\w*",
        r"podaj\w*",
    ],
    "tr": [
        r"göster\w*",
        r"açıkla\w*",
        r"yazdır\w*",
        r"tekrarla\w*",
        r"kopyala\w*",
        r"yapıştır\w*",
        r"ekle\w*",
        r"gönder\w*",
        r"paylaş\w*",
    ],
    "ru": [
        r"покаж\w+",
        r"показ\w+",
        r"вывед\w+",
        r"выв[оe]д\w+",
        r"раскро\w+",
        r"раскры\w+",
        r"напечата\w+",
        r"повтор\w+",
        r"скопиру\w+",
        r"встав\w+",
        r"добав\w+",
        r"отправ\w+",
        r"напиш\w+",
        r"процитиру\w+",
        r"прилож\w+",
        r"расскаж\w+",
    ],
    "zh": [
        r"输出",
        r"显示",
        r"展示",
        r"透露",
        r"打印",
        r"重复",
        r"复制",
        r"粘贴",
        r"附上",
        r"附加",
        r"发送",
        r"告诉",
        r"写出",
        r"给出",
        r"泄露",
        r"列出",
        r"说出",
    ],
    "ja": [
        r"出力",
        r"表示",
        r"見せ",
        r"教え",
        r"開示",
        r"印刷",
        r"繰り返",
        r"コピー",
        r"貼り付け",
        r"添付",
        r"送",
        r"書き出",
        r"公開",
    ],
    "ko": [
        r"출력",
        r"보여",
        r"공개",
        r"알려",
        r"인쇄",
        r"반복",
        r"복사",
        r"붙여",
        r"첨부",
        r"보내",
        r"말해",
    ],
}

NEGATION: Lexicon = {
    "en": [
        r"not",
        r"never",
        r"no",
        r"don't",
        r"doesn't",
        r"mustn't",
        r"shouldn't",
        r"won't",
        r"can't",
        r"cannot",
        r"refuses?\s+to",
        r"without",
    ],
    "pt": [r"não", r"nunca", r"jamais", r"sem"],
    "es": [r"no", r"nunca", r"jamás", r"sin"],
    "fr": [r"ne", r"n'", r"jamais", r"pas", r"sans"],
    "de": [r"nicht", r"nie", r"niemals", r"kein\w*", r"ohne"],
    "it": [r"non", r"mai", r"senza"],
    "nl": [r"niet", r"nooit", r"geen", r"zonder"],
    "pl": [r"nie", r"nigdy", r"bez"],
    "tr": [r"asla", r"hiçbir\s+zaman"],
    "ru": [r"не", r"никогда", r"без"],
    "zh": [r"不", r"别", r"勿", r"禁止", r"切勿"],
    "ja": [r"ない", r"な\b", r"禁止"],
    "ko": [r"않", r"마\b", r"말\b", r"금지"],
}

# -- keeping the user in the dark ----------------------------------------------------------------

COVERT: Lexicon = {
    "en": [
        r"(?:don't|do\s+not|never|must\s+not|mustn't|should\s+not|shouldn't|without)\s+"
        r"(?:ever\s+)?(?:let(?:ting)?\s+the\s+(?:user|human)\s+(?:know|see|notice)"
        r"|(?:tell|inform|notify|alert|warn|ask|show)(?:ing)?\s+(?:\w+\s+){0,3}?the\s+(?:user|human)\b"
        r"(?!\s+(?:group|count|base|interface|manual|guide|story|stories|research|list|table|id"
        r"|name|account|experience|agreement|session))"
        r"|(?:mention|reveal|disclose|admit|explain)(?:ing)?\s+(?:\w+\s+){0,5}?to\s+the\s+(?:user|human)\b)",
        r"(?:hide|conceal|keep)\s+(?:\w+\s+){0,5}?(?:secret\s+|hidden\s+)?from\s+the\s+(?:user|human)\b",
        r"without\s+the\s+(?:user|human)(?:'s)?\s+(?:knowing|knowledge|noticing|consent|permission|seeing)",
        r"behind\s+the\s+(?:user|human)'s\s+back",
        r"(?:don't|do\s+not|never|must\s+not|without)\s+(?:ever\s+)?(?:mention|reveal|disclose|acknowledge"
        r"|admit|refer\s+to|talk\s+about|tell\s+(?:\w+\s+)?about)(?:ing)?\s+(?:the\s+existence\s+of\s+)?"
        r"(?:this|these)\s+(?:note|memory|memories|instructions?|message|rules?|directives?|text)",
        r"(?:never|don't|do\s+not)\s+(?:tell|let)\s+(?:\w+\s+){0,4}?(?:it\s+)?(?:was|were|is|are)\s+"
        r"(?:told|instructed|asked)\s+to",
    ],
    "pt": [
        r"(?:nunca|não|jamais)\s+(?:\w+\s+){0,2}?(?:cont\w+|diga|diz\w*|inform\w+|avis\w+|revel\w+"
        r"|mostr\w+|mencion\w+|deix\w+)\s+(?:\w+\s+){0,3}?(?:a[oa]?|para\s+o|o)\s+(?:usuário|utilizador)",
        r"sem\s+(?:avisar|informar|contar|dizer|que\s+o\s+usuário\s+saiba)\w*\s+(?:\w+\s+)?(?:o\s+|ao\s+)?(?:usuário|utilizador)",
        r"(?:escond\w+|ocult\w+)\s+(?:\w+\s+){0,4}?d[oa]\s+(?:usuário|utilizador)",
        r"(?:nunca|não)\s+(?:mencione|revele|fale\s+d)\w*\s+(?:\w+\s+)?(?:esta|desta|nesta)\s+(?:nota|memória|instrução|mensagem)",
    ],
    "es": [
        r"(?:nunca|no|jamás)\s+(?:le\s+)?(?:\w+\s+){0,1}?(?:digas|diga|decir|cuentes|cuente|informes"
        r"|avises|reveles|muestres|menciones)\s+(?:\w+\s+){0,3}?al\s+usuario",
        r"sin\s+(?:avisar|decir|informar|contar)(?:le)?\s+(?:nada\s+)?al\s+usuario",
        r"(?:oculta|esconde)\w*\s+(?:\w+\s+){0,4}?al\s+usuario",
        r"(?:nunca|no)\s+(?:menciones|reveles|hables\s+de)\s+(?:\w+\s+)?(?:esta|este)\s+(?:nota|memoria|instrucción|mensaje)",
    ],
    "fr": [
        r"ne\s+(?:\w+\s+){0,2}?(?:dis|dites|révèle|révélez|montre|montrez|informe|informez|préviens"
        r"|prévenez|mentionne|mentionnez|signale|signalez)\s+(?:\w+\s+){0,2}?(?:jamais|pas|rien)\s+"
        r"(?:\w+\s+){0,3}?à\s+l'utilisat\w+",
        r"ne\s+(?:\w+\s+){0,2}?(?:révèle|révélez|dis|dites|montre|montrez)\s+(?:jamais|pas)\s+à\s+l'utilisat\w+",
        r"sans\s+(?:le\s+|lui\s+)?(?:dire|prévenir|informer|avertir)\s+(?:à\s+)?l'utilisat\w+",
        r"sans\s+(?:le|la|les)\s+prévenir",
        r"(?:cache|cachez)\s+(?:\w+\s+){0,4}?à\s+l'utilisat\w+",
        r"ne\s+(?:\w+\s+){0,2}?(?:mentionne|révèle|parle)\w*\s+(?:jamais|pas)\s+(?:de\s+)?(?:cette|ce|ces)\s+(?:note|mémoire|instruction|message)",
    ],
    "de": [
        r"(?:sag|sage|erzähl|erzähle|verrat|verrate|zeig|zeige|informiere)\s+(?:es\s+)?(?:dem|den)\s+"
        r"(?:nutzer|benutzer|anwender|user)\w*\s+(?:\w+\s+)?(?:nie|niemals|nichts|nicht)",
        r"(?:nie|niemals|nicht)\s+(?:\w+\s+){0,2}?(?:dem|den)\s+(?:nutzer|benutzer|anwender)\w*\s+"
        r"(?:sagen|erzählen|verraten|zeigen|mitteilen)",
        r"ohne\s+(?:dass\s+)?(?:es\s+)?(?:der|den|dem)\s+(?:nutzer|benutzer|anwender)\w*\s+(?:zu\s+)?"
        r"(?:informieren|sagen|merkt|weiß|erfährt|bemerkt)",
        r"(?:vor\s+dem\s+(?:nutzer|benutzer)\w*\s+(?:\w+\s+)?(?:verbergen|verheimlichen|geheim))",
    ],
    "it": [
        r"(?:non|mai)\s+(?:\w+\s+){0,2}?(?:dire|dirgli|dica|rivelare|riveli|informare|informi|avvisare"
        r"|mostrare|menzionare)\s+(?:\w+\s+){0,2}?(?:mai\s+)?(?:all'|a\s+l'|a\s+)utente",
        r"senza\s+(?:dirlo|avvisare|informare|dire\s+nulla)\s+(?:all'|l')utente",
        r"(?:nascondi|nascondere)\s+(?:\w+\s+){0,4}?all'utente",
        r"(?:non|mai)\s+(?:dire|menzionare|rivelare)\s+(?:mai\s+)?(?:\w+\s+){0,2}?(?:che\s+)?(?:questa|questo)\s+(?:nota|memoria|istruzione|messaggio)",
    ],
    "nl": [
        r"(?:vertel|zeg|laat)\s+(?:het\s+)?(?:de\s+)?gebruiker\s+(?:\w+\s+)?(?:niet|nooit|niets)",
        r"zonder\s+(?:het\s+)?(?:de\s+)?gebruiker\s+te\s+(?:vertellen|informeren|laten\s+weten|waarschuwen)",
    ],
    "pl": [
        r"nie\s+(?:mów|informuj|pokazuj|zdradzaj|mówić|powiadamiaj|wspominaj)\w*\s+(?:\w+\s+)?użytkownik\w*",
        r"bez\s+(?:wiedzy|informowania|powiadamiania)\s+użytkownik\w*",
    ],
    "tr": [
        r"kullanıcıya\s+(?:\w+\s+){0,3}?(?:söyleme|bahsetme|gösterme|haber\s+verme|anlatma)\w*",
        r"kullanıcıya\s+haber\s+vermeden",
        r"kullanıcının\s+haberi\s+olmadan",
    ],
    "ru": [
        r"(?:никогда\s+)?не\s+(?:говори|сообщай|рассказывай|показывай|упоминай|раскрывай|говорить|сообщать)"
        r"\w*\s+(?:\w+\s+){0,2}?пользовател\w*",
        r"без\s+ведома\s+пользовател\w*",
        r"втайне\s+от\s+пользовател\w*",
        r"(?:скрой|скрывай)\s+(?:\w+\s+){0,4}?от\s+пользовател\w*",
        r"(?:никогда\s+)?не\s+(?:упоминай|рассказывай|говори)\w*\s+(?:\w+\s+)?(?:об?\s+)?эт\w+\s+(?:заметк|инструкци|сообщени)\w*",
    ],
    "zh": [
        r"(?:不要|别|切勿|不得|不能|千万别|绝对不要|不可)(?:让|告诉|通知|提醒|透露给|向)(?:用户|使用者)",
        r"瞒着(?:用户|使用者)",
        r"(?:用户|使用者)不知情",
        r"不要让(?:用户|使用者)(?:知道|发现|察觉)",
    ],
    "ja": [
        r"ユーザー(?:には|に)[^。\n]{0,20}?(?:言わない|伝えない|知らせない|教えない|見せない|話さない|言わず|伝えず)",
        r"ユーザーに(?:知られ|気づかれ)(?:ない|ず)",
    ],
    "ko": [
        r"사용자(?:에게|한테)\s*[^.\n]{0,20}?(?:말하지|알리지|보여주지|알려주지|언급하지)\s*(?:마|말)",
        r"사용자\s*몰래",
    ],
}

# -- the model with no rules ---------------------------------------------------------------------

NO_LIMITS: Lexicon = {
    "en": [
        r"(?:without|no|free\s+(?:of|from))\s+(?:any\s+)?(?:restrictions|limits|limitations|rules"
        r"|filters|guardrails|censorship|boundaries|safety\s+rules)",
        r"(?:content|safety|usage)\s+polic(?:y|ies)\s+(?:does|do)\s+not\s+apply",
    ],
    "pt": [r"sem\s+(?:nenhuma\s+|qualquer\s+)?(?:restriç\w+|limites|regras|filtros|censura)"],
    "es": [
        r"sin\s+(?:ninguna\s+)?(?:restricci\w+|límites|reglas|filtros|censura)",
        r"no\s+tienes\s+(?:ninguna\s+)?(?:restricci\w+|límites|reglas|filtros)",
    ],
    "fr": [r"sans\s+(?:aucune?\s+)?(?:restrictions?|limites?|règles?|filtres?|censure)"],
    "de": [
        r"ohne\s+(?:jegliche\s+)?(?:einschränkungen|beschränkungen|regeln|richtlinien|filter|zensur"
        r"|grenzen)",
        r"keine\s+(?:einschränkungen|beschränkungen|richtlinien|filter|zensur|grenzen"
        r"|ablehnungen)\s+mehr",
    ],
    "it": [r"senza\s+(?:alcuna\s+)?(?:restrizion\w+|limit\w+|regol\w+|filtr\w+|censura)"],
    "nl": [r"zonder\s+(?:enige\s+)?(?:beperkingen|regels|filters|censuur)"],
    "pl": [r"bez\s+(?:żadnych\s+)?(?:ograniczeń|zasad|filtrów|cenzury)"],
    "tr": [r"(?:kısıtlama|sınır|kural|filtre|sansür)\w*\s*(?:olmadan|yok)"],
    "ru": [r"без\s+(?:каких-либо\s+|всяких\s+)?(?:ограничений|правил|фильтров|цензуры)"],
    "zh": [
        r"没有(?:任何)?(?:限制|规则|约束|过滤|审查)",
        r"不再?受[^，。,.!！?？；;\n]{0,8}?(?:限制|约束)",
    ],
    "ja": [r"(?:制限|ルール|制約|フィルター|検閲)(?:なし|なく|のない|を受けない)"],
    "ko": [r"(?:제한|규칙|필터|검열)[이가]?\s*(?:없이|없는)"],
    "vi": [r"không\s+(?:bị\s+)?giới\s+hạn", r"không\s+có\s+(?:bộ\s+lọc|giới\s+hạn|hạn\s+chế)"],
    "id": [r"tanpa\s+(?:batasan|filter|aturan|sensor)"],
}


# An order to obey, which puts the text above the model's rules when it points at itself.
OBEY: Lexicon = {
    "en": [r"obey\w*", r"comply\s+with\s+(?:only\s+)?(?:this|these)"],
    "pt": [r"obedeç\w+", r"obedece\w*"],
    "es": [r"obedece\w*", r"obedezca\w*"],
    "fr": [r"obéi\w+"],
    "de": [r"gehorch\w*"],
    "it": [r"obbedisci", r"obbedire"],
    "nl": [r"gehoorzaam\w*"],
    "pl": [r"bądź\s+posłuszn\w+"],
    "tr": [r"itaat\s+et\w*"],
    "ru": [r"подчиняйся", r"повинуйся"],
    "zh": [r"服从", r"听从"],
    "ja": [r"従え", r"服従"],
    "ko": [r"복종"],
}

# What the model was told, as something to give away: its prompt and instructions (not
# "your SSH config", which people print all day).
LEAK_OBJECT: Lexicon = {
    "en": [
        r"(?:your|ur)\s+(?:\w+\s+){0,3}?(?:instructions?|system\s+(?:prompt|message)|prompts?"
        r"|pre-?prompt|rules|guidelines|directives|developer\s+message)",
        r"(?:the|its|their|his|her)\s+(?:\w+\s+){0,2}?(?:system|developer|hidden|initial|original"
        r"|secret)\s+(?:prompt|message|instructions?)",
        r"system\s+prompt",
        r"developer\s+message",
        r"(?:instructions?|prompt|rules)\s+(?:that\s+)?you\s+(?:were|have\s+been|got|'ve\s+been)\s+"
        r"(?:given|started|initiali[sz]ed|configured|provided|told|launched)",
        r"initiali[sz]ation\s+(?:text|prompt|instructions)",
        r"(?:everything|all|the\s+text|whatever|anything)\s+(?:that\s+)?(?:appears|is|was|comes"
        r"|came)\s+(?:written\s+)?(?:before|above|ahead\s+of)\s+(?:the\s+user's|my|this|the\s+first"
        r"|the\s+conversation)",
    ],
    "pt": RULES["pt"] + [r"instruç\w+\s+(?:iniciais|originais|ocultas|secretas)"],
    "es": RULES["es"]
    + [r"(?:instrucciones|indicaciones)\s+(?:ocultas|iniciales|originales|secretas)"],
    "fr": RULES["fr"] + [r"(?:instructions|consignes)\s+(?:initiales|cachées|originales|secrètes)"],
    "de": RULES["de"] + [r"(?:ursprünglichen|versteckten|anfänglichen|geheimen)\s+anweisungen"],
    "it": RULES["it"] + [r"istruzioni\s+(?:iniziali|nascoste|originali|segrete)"],
    "nl": RULES["nl"] + [r"(?:oorspronkelijke|verborgen|geheime)\s+instructies"],
    "pl": RULES["pl"] + [r"(?:początkow|ukryt|oryginaln)\w+\s+instrukcj\w+"],
    "tr": RULES["tr"] + [r"(?:ilk|gizli|orijinal)\s+talimat\w*"],
    "ru": RULES["ru"] + [r"(?:начальн|исходн|скрыт|первоначальн)\w+\s+инструкци\w+"],
    "zh": RULES["zh"] + [r"隐藏(?:的)?指令", r"原始指令"],
    "ja": RULES["ja"] + [r"(?:隠された|元の|最初の)指示"],
    "ko": RULES["ko"] + [r"(?:초기|숨겨진|원래)\s*(?:지시|지침|프롬프트)"],
}

# Carrying data inside a link the model writes: "as a query parameter", "in every link".
LINK_CARRIER: Lexicon = {
    "en": [
        r"(?:query|url|link|get)\s+(?:parameter|param|string)s?",
        r"(?:in|into|inside|to)\s+(?:a|the|every|each|any|this)\s+(?:link|url|image(?:\s+url)?|href)",
        r"(?:in|into|inside)\s+(?:a|the)\s+markdown\s+(?:image|link)",
    ],
    "pt": [
        r"(?:parâmetro|parametro)s?\s+(?:da|na|de)\s+url",
        r"(?:no|num|em\s+um|em\s+cada)\s+link",
        r"na\s+url",
    ],
    "es": [
        r"parámetros?\s+(?:de\s+la|en\s+la)\s+url",
        r"(?:en\s+el|en\s+un|en\s+cada)\s+enlace",
        r"en\s+la\s+url",
    ],
    "fr": [
        r"paramètres?\s+(?:de\s+l'|dans\s+l')url",
        r"dans\s+(?:le|un|chaque)\s+lien",
        r"dans\s+l'url",
    ],
    "de": [r"url-?parameter\w*", r"(?:in\s+den|in\s+einen|in\s+jeden)\s+link", r"in\s+die\s+url"],
    "it": [r"parametr\w+\s+(?:dell'|nell')url", r"(?:nel|in\s+un|in\s+ogni)\s+link", r"nell'url"],
    "ru": [r"параметр\w*\s+(?:url|ссылки)", r"в\s+(?:ссылк\w+|url)"],
    "zh": [r"(?:链接|网址|url)(?:参数|里|中)", r"查询参数"],
    "ja": [r"(?:url|リンク)(?:パラメータ|に含め)", r"クエリパラメータ"],
    "ko": [r"(?:url|링크)\s*(?:파라미터|매개변수|에\s*포함)"],
}

# Doing it unseen: an order to send "secretly" is an order, whoever it names.
STEALTH: Lexicon = {
    "en": [r"secretly", r"quietly", r"silently", r"covertly", r"discreetly", r"invisibly"],
    "pt": [r"secretamente", r"silenciosamente", r"às\s+escondidas", r"discretamente"],
    "es": [r"en\s+secreto", r"secretamente", r"silenciosamente", r"a\s+escondidas"],
    "fr": [r"secrètement", r"silencieusement", r"discrètement", r"en\s+douce"],
    "de": [r"heimlich", r"unbemerkt", r"stillschweigend"],
    "it": [r"segretamente", r"di\s+nascosto", r"silenziosamente", r"in\s+copia\s+nascosta"],
    "nl": [r"stiekem", r"heimelijk", r"ongemerkt"],
    "sv": [r"i\s+tysthet", r"i\s+hemlighet", r"obemärkt"],
    "id": [r"diam-diam", r"secara\s+rahasia"],
    "pl": [r"potajemnie", r"po\s+cichu", r"ukradkiem"],
    "tr": [r"gizlice", r"sessizce"],
    "ru": [r"тайно", r"втайне", r"незаметно", r"скрытно"],
    "zh": [r"偷偷", r"悄悄", r"秘密地", r"暗中"],
    "ja": [r"こっそり", r"密かに", r"黙って"],
    "ko": [r"몰래", r"조용히"],
}

# A standing order over every case: "always", "whenever", "every time", "from now on".
UNIVERSAL: Lexicon = {
    "en": [
        r"always",
        r"whenever",
        r"every\s+time",
        r"each\s+time",
        r"from\s+now\s+on",
        r"henceforth",
        r"at\s+all\s+times",
    ],
    "pt": [r"sempre", r"toda\s+vez", r"a\s+partir\s+de\s+agora", r"sempre\s+que"],
    "es": [r"siempre", r"cada\s+vez", r"a\s+partir\s+de\s+ahora", r"desde\s+ahora"],
    "fr": [
        r"toujours",
        r"chaque\s+fois",
        r"désormais",
        r"dorénavant",
        r"à\s+partir\s+de\s+maintenant",
    ],
    "de": [r"immer", r"stets", r"jedes\s+mal", r"ab\s+sofort", r"ab\s+jetzt", r"von\s+nun\s+an"],
    "it": [r"sempre", r"ogni\s+volta", r"d'ora\s+in\s+poi", r"da\s+ora\s+in\s+poi"],
    "nl": [r"altijd", r"elke\s+keer", r"vanaf\s+nu", r"voortaan"],
    "pl": [r"zawsze", r"za\s+każdym\s+razem", r"od\s+teraz"],
    "tr": [r"her\s+zaman", r"daima", r"her\s+seferinde", r"bundan\s+sonra"],
    "ru": [r"всегда", r"каждый\s+раз", r"отныне", r"с\s+этого\s+момента", r"впредь"],
    "vi": [r"luôn(?:\s+luôn)?", r"mỗi\s+lần"],
    "th": [r"ทุกครั้ง", r"เสมอ"],
    "cs": [r"pokaždé", r"vždy"],
    "zh": [r"总是", r"始终", r"每次", r"永远", r"从现在起", r"今后", r"一律"],
    "ja": [r"常に", r"いつも", r"毎回", r"必ず", r"今後"],
    "ko": [r"항상", r"매번", r"언제나", r"앞으로", r"지금부터"],
    "fa": [
        r"همیشه",
        r"هر\s+بار",
        r"از\s+این\s+به\s+بعد",
        r"هر\s+(?:پیام|درخواست|ایمیل|دستور)\S*",
    ],
}

# A mode that lifts the model's rules, as a jailbreak names it: "developer mode".
DEV_MODE: Lexicon = {
    "en": [r"(?:developer|god|jailbreak|unrestricted|unfiltered|uncensored)\s+mode"],
    "pt": [
        r"modo\s+(?:de\s+)?desenvolvedor",
        r"modo\s+(?:sem\s+(?:restriç\w+|filtros?)|irrestrito)",
    ],
    "es": [
        r"modo\s+(?:de\s+)?desarrollador",
        r"modo\s+(?:sin\s+(?:restricci\w+|filtros?|límites)|irrestricto)",
    ],
    "fr": [
        r"mode\s+développeur",
        r"mode\s+(?:sans\s+(?:restrictions?|filtres?|limites?)|illimité)",
    ],
    "de": [
        r"entwicklermodus",
        r"entwickler-modus",
        r"uneingeschränkte[nmr]?\s+modus",
        r"modus\s+ohne\s+(?:einschränkungen|filter|grenzen)",
    ],
    "it": [r"modalità\s+(?:sviluppatore|senza\s+(?:restrizioni|filtri|limiti))"],
    "nl": [r"ontwikkelaarsmodus", r"modus\s+zonder\s+(?:beperkingen|filters)"],
    "pl": [r"tryb\w*\s+deweloper\w*", r"tryb\w*\s+bez\s+ograniczeń"],
    "tr": [r"geliştirici\s+mod\w*", r"sınırsız\s+mod\w*"],
    "ru": [r"режим\w*\s+разработчика", r"режим\w*\s+без\s+(?:ограничений|фильтров)"],
    "vi": [r"chế\s+độ\s+nhà\s+phát\s+triển", r"chế\s+độ\s+không\s+giới\s+hạn"],
    "zh": [r"开发者模式", r"开发模式", r"无限制模式"],
    "ja": [r"開発者モード", r"制限なしモード"],
    "ko": [r"개발자\s*모드", r"제한\s*없는\s*모드"],
}

# Calling one of the model's tools: "call the tool transfer_funds", "lance l'outil".
TOOL_CALL: Lexicon = {
    "en": [
        r"(?:call|invoke|trigger|execute|run|use)(?:s|ing)?\s+(?:the\s+)?(?:[\w.-]+\s+)?"
        r"(?:tool|function\s+call)"
    ],
    "pt": [r"(?:chamar|chame|acionar|acione|executar|execute|usar|use)\s+a\s+ferramenta"],
    "es": [r"(?:llamar|llama|invocar|invoca|ejecutar|ejecuta|usar|usa)\s+la\s+herramienta"],
    "fr": [r"(?:appeler|appelle|lancer|lance|exécuter|exécute|utiliser|utilise)[rz]?\s+l'outil"],
    "de": [r"(?:ruf|rufe|starte|nutze|verwende)\s+(?:das\s+)?(?:tool|werkzeug)"],
    "it": [r"(?:chiama|chiamare|invoca|esegui|usa)\s+(?:lo\s+strumento|il\s+tool)"],
    "nl": [r"(?:roep|gebruik|start)\s+(?:de\s+)?tool"],
    "pl": [r"(?:wywołaj|wywołać|użyj|uruchom)\s+narzędzi\w*"],
    "cs": [r"(?:zavolej|spusť|použij)\s+nástroj\w*"],
    "ru": [r"(?:вызови|вызывай|используй|запусти)\s+инструмент\w*"],
    "zh": [r"调用(?:工具|函数)"],
    "ja": [r"ツールを(?:呼び出|実行|使)"],
    "ko": [r"도구를\s*(?:호출|실행|사용)"],
}

# A time tied to the model's answers: "before answering", "at the start of every reply".
REPLY_TIME: Lexicon = {
    "en": [
        r"before\s+(?:answering|replying|responding|you\s+(?:answer|reply|respond))",
        r"(?:answers|replies|responds)\s+by",
        r"(?:at\s+the\s+(?:start|end|beginning)\s+of|in)\s+(?:every|each|your\s+next)\s+"
        r"(?:reply|answer|response)",
    ],
    "pt": [r"antes\s+de\s+responder", r"em\s+cada\s+resposta"],
    "es": [r"antes\s+de\s+responder", r"en\s+cada\s+respuesta"],
    "fr": [r"avant\s+de\s+répondre", r"(?:à|dans)\s+chaque\s+réponse"],
    "de": [r"bevor\s+du\s+(?:\w+\s+){0,4}?antwortest", r"in\s+jeder\s+antwort"],
    "it": [r"prima\s+di\s+rispondere", r"in\s+ogni\s+risposta"],
    "nl": [r"voordat\s+je\s+antwoordt", r"in\s+elk\s+antwoord"],
    "pl": [r"przed\s+(?:udzieleniem\s+)?odpowiedzi", r"w\s+każdej\s+odpowiedzi"],
    "id": [r"sebelum\s+menjawab"],
    "ru": [r"перед\s+(?:каждым\s+)?ответом", r"в\s+каждом\s+ответе"],
    "zh": [r"回答之前", r"在回答前", r"每次回答"],
    "ja": [r"回答する前に", r"答える前に"],
    "ko": [r"(?:다음|모든)\s*답변에서", r"답변하기\s*전에"],
}

# What the model is to tell people: "say that", "tell the user that", "nói rằng".
SAY_THAT: Lexicon = {
    "en": [
        r"(?:say|state|claim|insist|tell\s+(?:the\s+)?(?:users?|customers?|people|everyone|them))"
        r"s?\s+that",
        r"describes?\s+(?:\w+\s+){1,4}?as",
    ],
    "pt": [r"(?:diga|dizer|diz|afirme|afirmar|afirma)\s+que"],
    "es": [r"(?:di|diga|decir|dice|afirma|afirmar)\s+que"],
    "fr": [r"(?:dis|dites|dire|dit|affirme[rz]?)\s+que"],
    "de": [r"(?:sag|sage|sagen|sagt|behaupte\w*)\s*,?\s+dass"],
    "it": [r"(?:di'|dire|dica|dice|afferma\w*)\s+che"],
    "pl": [r"(?:mów|powiedz|twierdź|mówi)\w*,?\s+że"],
    "ru": [r"(?:говори|скажи|сообщай|утверждай|говорит)\w*,?\s+что"],
    "id": [r"(?:katakan|bilang|mengatakan|menyatakan)\s+bahwa"],
    "vi": [r"nói\s+(?:với\s+\w+\s+)?rằng"],
    "ar": [r"(?:قل|يقول|تقول)\s+(?:إن|أن)"],
    "th": [r"บอก[^\s]{0,20}?ว่า"],
    "zh": [r"告诉用户", r"声称", r"宣称"],
}

# The user's question set aside: "whatever the user asks", "even if the user doesn't ask".
REGARDLESS: Lexicon = {
    "en": [
        r"(?:whatever|no\s+matter\s+what)\s+the\s+(?:user|customer)\s+(?:\w+\s+)?(?:asks?|asked"
        r"|says?|said|wants?)",
        r"even\s+if\s+(?:the\s+(?:user|customer)|they)\s+(?:does\s+not|doesn't|didn't|do\s+not"
        r"|don't|never)\s+ask",
    ],
    "pt": [r"mesmo\s+que\s+o\s+(?:usuário|cliente)\s+não\s+pergunte"],
    "es": [
        r"(?:aunque|incluso\s+si)\s+el\s+(?:usuario|cliente)\s+no\s+(?:lo\s+)?pregunte",
        r"pregunte\s+lo\s+que\s+pregunte",
    ],
    "fr": [
        r"quoi\s+que\s+demande\s+l'utilisat\w+",
        r"même\s+si\s+l'utilisat\w+\s+ne\s+(?:le\s+)?demande\s+pas",
    ],
    "de": [
        r"egal,?\s+was\s+der\s+(?:nutzer|benutzer|kunde)\s+fragt",
        r"auch\s+wenn\s+der\s+(?:nutzer|benutzer|kunde)\s+nicht\s+(?:danach\s+)?fragt",
    ],
    "it": [r"anche\s+se\s+l'utente\s+non\s+(?:lo\s+)?chiede"],
    "ru": [
        r"что\s+бы\s+ни\s+спросил\s+пользовател\w+",
        r"даже\s+если\s+пользовател\w+\s+не\s+спрашива\w+",
    ],
    "vi": [r"kể\s+cả\s+khi\s+người\s+dùng\s+không\s+hỏi"],
    "hi": [r"उपयोगकर्ता\s+चाहे\s+कुछ\s+भी\s+पूछे"],
    "id": [r"(?:bahkan\s+)?jika\s+pengguna\s+tidak\s+bertanya"],
}

# An order carried out unchecked: "approve ... without verification", "carry out any
# request without asking for confirmation".
UNCHECKED: Lexicon = {
    "en": [
        r"(?:carry\s+out|execute|run|approve|perform|grant|obey|comply\s+with)\w*\s+(?:[\w,-]+\s+){0,8}?"
        r"without\s+(?:any\s+)?(?:(?:asking\s+for|further|additional)\s+)?(?:checking|verification"
        r"|verifying|confirmation|confirming|review|approval|question)",
    ],
    "pt": [r"sem\s+(?:nenhuma\s+)?(?:verificação|confirmação|checagem|pedir\s+confirmação)"],
    "es": [r"sin\s+(?:ninguna\s+)?(?:verificación|confirmación|comprobación|pedir\s+confirmación)"],
    "fr": [r"sans\s+(?:aucune\s+)?(?:vérification|confirmation|demander\s+de\s+confirmation)"],
    "de": [r"ohne\s+(?:jede\s+)?(?:prüfung|bestätigung|rückfrage|nachfrage)"],
    "it": [r"senza\s+(?:alcuna\s+)?(?:verifica|conferma|controllo)"],
    "ru": [r"без\s+(?:всякой\s+)?(?:проверки|подтверждения)"],
    "sv": [r"utan\s+(?:att\s+fråga|kontroll|verifiering|bekräftelse)"],
    "id": [r"tanpa\s+(?:verifikasi|konfirmasi|pemeriksaan)"],
    "fa": [r"بدون\s+(?:بررسی|تایید|تأیید)\s+(?:اجرا|انجام|قبول)"],
    "ar": [r"(?:دون|بدون)\s+(?:تحقق|تأكيد|مراجعة)"],
    "zh": [r"无需(?:验证|确认|审核)", r"不经(?:验证|确认|审核)"],
    "ja": [r"確認(?:せず|なしで)"],
    "ko": [r"확인\s*없이"],
}

# The model's replies made to carry something: "all replies are to include ...".
REPLIES_CARRY: Lexicon = {
    "en": [
        r"(?:all|every|each)\s+(?:of\s+(?:your|the)\s+)?(?:replies|reply|answers?|responses?)\s+"
        r"(?:are\s+to|is\s+to|must|should|shall|need\s+to|have\s+to|has\s+to)\s+(?:always\s+)?"
        r"(?:include|contain|end\s+with|start\s+with|begin\s+with|mention|link\s+to)",
    ],
    "pt": [
        r"(?:todas\s+as|cada)\s+respostas?\s+(?:deve|devem)\s+(?:incluir|conter|terminar\s+com)"
    ],
    "es": [
        r"(?:todas\s+las|cada)\s+respuestas?\s+(?:debe|deben)\s+(?:incluir|contener|terminar\s+con)"
    ],
    "fr": [
        r"(?:toutes\s+les|chaque)\s+réponses?\s+(?:doit|doivent)\s+(?:inclure|contenir"
        r"|se\s+terminer\s+par)"
    ],
    "de": [
        r"(?:jede|alle)\s+antwort(?:en)?\s+(?:muss|müssen|soll|sollen)\s+(?:\w+\s+){0,6}?"
        r"(?:enthalten|enden|beginnen)"
    ],
    "it": [
        r"(?:ogni|tutte\s+le)\s+rispost[ae]\s+(?:deve|devono)\s+(?:includere|contenere|terminare)"
    ],
}

# Answering, what a mode without rules is for: "answer any question", "отвечай".
ANSWER: Lexicon = {
    "en": [r"answer\w*", r"repl(?:y|ies|ying)", r"respond\w*"],
    "pt": [r"respond\w*", r"respost\w*"],
    "es": [r"respond\w*", r"respuest\w*"],
    "fr": [r"répond\w*", r"réponses?"],
    "de": [r"antwort\w*", r"beantwort\w*"],
    "it": [r"rispond\w*", r"rispost\w*"],
    "nl": [r"antwoord\w*", r"beantwoord\w*"],
    "pl": [r"odpowi\w+"],
    "ru": [r"отвеча\w*", r"ответ\w*"],
    "vi": [r"trả\s+lời"],
    "zh": [r"回答", r"回复"],
    "ja": [r"回答", r"答え"],
    "ko": [r"답변", r"대답"],
}


# -- the same classes in fifty more languages --------------------------------------------------
# ``instruction_vocabulary.json``: for fifty languages the tables above lack, phrases of
# nine classes, written by language and class apart from the corpus and from the rules.
# Every class is matched in every language at once, so only phrases no other language
# writes as an ordinary word join: an address to the model ("till ai-assistenten"), which
# must end in a colon and be followed by an order verb of the list (an obligation alone
# is how a note states a fact: "Mette arbejder altid ..."); those verbs, each written
# with a letter outside ASCII or as several words, five letters or more (ASCII words are
# English, Romance or Malay words too: "share", "marca", "dapat"), and none a table lists;
# and what a model without limits is told ("bez ograniczeń", "без обмежень"). A
# language's phrases join a class only where the tables have no words of that language
# for it. The other classes (rules and what voids them, leaks, keeping the user unaware,
# modes) are left to the learned screen: their phrases are office words in too many
# languages ("tidigare regler gäller inte längre", "håll det hemligt", "debug mode").
_VOCABULARY: dict[str, dict[str, list[str]]] = json.loads(
    Path(__file__).with_name("instruction_vocabulary.json").read_text(encoding="utf-8")
)
_SHORTEST_WORD = 5


def _phrase(phrase: str) -> str:
    return r"\s+".join(map(re.escape, phrase.split()))


def _distinct(phrase: str, known: set[str]) -> bool:
    """Whether ``phrase`` is no word another language writes too: several words, or one
    of five letters or more with one outside ASCII, and none a table lists."""
    if phrase in known or len(phrase) < _SHORTEST_WORD:
        return False
    return " " in phrase or not phrase.isascii()


def _known(lexicon: Lexicon) -> set[str]:
    return {f for fragments in lexicon.values() for f in fragments if f.isalpha()}


def _listed() -> None:
    verbs_known = _known(ORDER_VERB) | _known(OBLIGATION)
    for language, classes in sorted(_VOCABULARY.items()):
        addresses = [
            rf"{_phrase(p)}\s*[:：]" for p in dict.fromkeys(classes.get("address", [])) if p
        ]
        verbs = [
            _phrase(p)
            for p in dict.fromkeys(classes.get("order_verb", []))
            if _distinct(p, verbs_known)
        ]
        limits = [
            _phrase(p)
            for p in dict.fromkeys(classes.get("no_limits", []))
            if len(p) >= _SHORTEST_WORD
        ]
        if addresses and verbs and language not in VOCATIVE:
            ADDRESS[language] = addresses
            ADDRESS_VERB[language] = verbs
        if limits and language not in NO_LIMITS:
            NO_LIMITS[language] = limits


# An address to the model in a language of the list, and the orders that may follow it.
ADDRESS: Lexicon = {}
ADDRESS_VERB: Lexicon = {}
_listed()
