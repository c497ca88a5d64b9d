# ruff: noqa: RUF001
# (texts in many languages and scripts are the point of these tests)
"""Credentials known by their class (detectors/credentials.py): each class is refused in the
languages people write it in, and what only looks like one is stored."""

from __future__ import annotations

import pytest

from agent_memory.detectors import credentials
from agent_memory.detectors.credentials import (
    ACCESS_CODE,
    BANK_ACCOUNT,
    NATIONAL_ID,
    PASSWORD,
    PAYMENT_CARD,
    RECOVERY_PHRASE,
)
from agent_memory.detectors.secrets import find_secrets, redact_secrets


def kinds(text: str) -> list[str]:
    return [f.kind for f in find_secrets(text)]


# (text, kind, the credential itself): the credential must be found, named by its kind,
# and gone from the redacted text, with the words around it kept.
CAUGHT = [
    # -- payment cards: Luhn, an issuer's prefix and length, as cards are printed
    pytest.param(
        "card 4663 9233 2146 8814, exp 09/27",
        PAYMENT_CARD,
        "4663 9233 2146 8814",
        id="visa-grouped",
    ),
    pytest.param(
        "pay with 4282010276161247 please", PAYMENT_CARD, "4282010276161247", id="visa-together"
    ),
    pytest.param(
        "amex 3736 471764 18454 for travel", PAYMENT_CARD, "3736 471764 18454", id="amex-4-6-5"
    ),
    pytest.param(
        "Mastercard 5257-0292-9611-1246",
        PAYMENT_CARD,
        "5257-0292-9611-1246",
        id="mastercard-dashes",
    ),
    pytest.param(
        "信用卡号 5226 2385 7341 5216，有效期 07/27",
        PAYMENT_CARD,
        "5226 2385 7341 5216",
        id="card-zh",
    ),
    # -- a card's security code, a PIN, a PUK
    pytest.param("CVV 318", ACCESS_CODE, "318", id="cvv"),
    pytest.param("cryptogramme : 214", ACCESS_CODE, "214", id="cvv-fr"),
    pytest.param("debit card PIN: 7703", ACCESS_CODE, "7703", id="pin"),
    pytest.param("SIM PIN 1357, PUK 88214077", ACCESS_CODE, "88214077", id="puk"),
    pytest.param("PIN do cartão de crédito é 2580", ACCESS_CODE, "2580", id="pin-pt"),
    pytest.param("пин-код карты 4520", ACCESS_CODE, "4520", id="pin-ru"),
    pytest.param(
        "digicode de l'immeuble :\n4A72B\npuis bâtiment C",
        ACCESS_CODE,
        "4A72B",
        id="keypad-code-line-below",
    ),
    pytest.param(
        "Thunderbird wants an app password for Gmail => zkpw mqrt hvlb ndsx",
        PASSWORD,
        "zkpw mqrt hvlb ndsx",
        id="app-password-arrow",
    ),
    pytest.param(
        "Gmail app password, only used when mail sync fails: zkpw mqrt hvlb ndsx",
        PASSWORD,
        "zkpw mqrt hvlb ndsx",
        id="app-password-after-words",
    ),
    pytest.param("キャッシュカードの暗証番号 8062", PASSWORD, "8062", id="pin-ja"),
    # -- codes of doors, gates, alarms and safes
    pytest.param("the door code for the back entrance is 4417", ACCESS_CODE, "4417", id="door"),
    pytest.param("the alarm code is 9021", ACCESS_CODE, "9021", id="alarm"),
    pytest.param("safe combination: 12-34-56", ACCESS_CODE, "12-34-56", id="safe"),
    pytest.param("gate code for mum's building: #5580", ACCESS_CODE, "#5580", id="gate"),
    pytest.param("lockbox at the cabin opens with 0913", ACCESS_CODE, "0913", id="opens-with"),
    pytest.param("código do portão da garagem: 1793", ACCESS_CODE, "1793", id="gate-pt"),
    pytest.param("el código de la puerta es 3916", ACCESS_CODE, "3916", id="door-es"),
    pytest.param("digicode de l'immeuble : 4B721", ACCESS_CODE, "4B721", id="digicode-fr"),
    pytest.param("Türcode unten: 2277", ACCESS_CODE, "2277", id="door-de"),
    pytest.param("der Tresor geht mit 19-47-03 auf", ACCESS_CODE, "19-47-03", id="safe-de"),
    pytest.param("il codice dell'allarme è 0452", ACCESS_CODE, "0452", id="alarm-it"),
    pytest.param("de code van het alarm is 4410", ACCESS_CODE, "4410", id="alarm-nl"),
    pytest.param("kod do domofonu 1590", ACCESS_CODE, "1590", id="intercom-pl"),
    pytest.param("portkoden är 1432", ACCESS_CODE, "1432", id="door-sv"),
    pytest.param("门禁密码 2580#", PASSWORD, "2580#", id="door-zh"),
    # -- passwords in many languages, after their marks and verbs
    pytest.param("wifi da casa - senha: girassol2020", PASSWORD, "girassol2020", id="pt"),
    pytest.param("contraseña del wifi: Lun4Llena77", PASSWORD, "Lun4Llena77", id="es"),
    pytest.param("das WLAN-Passwort ist Sonnenblume99", PASSWORD, "Sonnenblume99", id="de"),
    pytest.param("Kennwort vom Router lautet Zitrone2022", PASSWORD, "Zitrone2022", id="de-lautet"),
    pytest.param("mot de passe: Chaton#2019", PASSWORD, "Chaton#2019", id="fr"),
    pytest.param(
        "le mot de passe du wifi est Baguette2024!", PASSWORD, "Baguette2024!", id="fr-est"
    ),
    pytest.param("la password del wifi di casa è Pomodoro!88", PASSWORD, "Pomodoro!88", id="it"),
    pytest.param("我家wifi密码是 qwer1234zz", PASSWORD, "qwer1234zz", id="zh"),
    pytest.param("Wi-Fiのパスワードは sakura2024 です", PASSWORD, "sakura2024", id="ja"),
    pytest.param("와이파이 비밀번호는 gimchi2024", PASSWORD, "gimchi2024", id="ko"),
    pytest.param("wachtwoord van de wifi: Stroopwafel12", PASSWORD, "Stroopwafel12", id="nl"),
    pytest.param("hasło do wifi: Pierogi2024", PASSWORD, "Pierogi2024", id="pl"),
    pytest.param("пароль от wifi: Matryoshka77", PASSWORD, "Matryoshka77", id="ru"),
    pytest.param("wifi şifresi: Simit2023!", PASSWORD, "Simit2023!", id="tr"),
    pytest.param("lösenordet till wifi är Kanelbulle9", PASSWORD, "Kanelbulle9", id="sv"),
    pytest.param(
        "new router password set today: Pickle-Jar-58", PASSWORD, "Pickle-Jar-58", id="label"
    ),
    pytest.param("Zoom passcode 838201", PASSWORD, "838201", id="passcode-digits"),
    pytest.param(
        "gmail app password abcd efgh ijkl mnop", PASSWORD, "abcd efgh ijkl mnop", id="app-password"
    ),
    pytest.param("contraseña: 'luna llena azul'", PASSWORD, "luna llena azul", id="quoted"),
    # -- how chat gives a value: "'s", a verb after a comma, a qualifier after the noun,
    # the value before what it opens, "pass" after the network it opens
    pytest.param("pin's 4417", ACCESS_CODE, "4417", id="contraction"),
    pytest.param(
        "the wifi password changed, now it's Hunter22", PASSWORD, "Hunter22", id="resumed-en"
    ),
    pytest.param(
        "a senha da netflix mudou, agora é Pipoca2025", PASSWORD, "Pipoca2025", id="resumed-pt"
    ),
    pytest.param("le code du portail a changé, c'est 1854", ACCESS_CODE, "1854", id="resumed-fr"),
    pytest.param("sua senha provisória é Tq8#mWz4", PASSWORD, "Tq8#mWz4", id="qualifier-pt"),
    pytest.param("tu clave temporal es Rm5&kLq2", PASSWORD, "Rm5&kLq2", id="qualifier-es"),
    pytest.param(
        "votre mot de passe provisoire est Bv4!nQx9", PASSWORD, "Bv4!nQx9", id="qualifier-fr"
    ),
    pytest.param("it's hunter2 for the wifi", PASSWORD, "hunter2", id="value-before-wifi"),
    pytest.param("it's 4417 for the gate", ACCESS_CODE, "4417", id="value-before-gate"),
    pytest.param(
        "wifi at the airbnb -> network BlueDoor, pass bluedoor2468",
        PASSWORD,
        "bluedoor2468",
        id="pass-after-network",
    ),
    pytest.param("el pin del móvil de mamá es 240615", ACCESS_CODE, "240615", id="pin-of-what"),
    pytest.param(
        "son code de carte bleue est 7291, garde-le pour toi", ACCESS_CODE, "7291", id="card-code"
    ),
    # -- a code entered on a keypad, with the lock named before or after
    pytest.param(
        "pra entrar no prédio digita 4490 no interfone", ACCESS_CODE, "4490", id="enter-pt"
    ),
    pytest.param(
        "para abrir el portal marca 2590 y luego la llave", ACCESS_CODE, "2590", id="enter-es"
    ),
    pytest.param("type 1234 on the keypad", ACCESS_CODE, "1234", id="enter-en"),
    pytest.param("keypad by the lift: punch in 6630 then #", ACCESS_CODE, "6630", id="punch-in"),
    # -- a value given first, then named
    pytest.param(
        "Harbor77 is the new office wifi password, tell the others",
        PASSWORD,
        "Harbor77",
        id="given-first-en",
    ),
    pytest.param("Caju#2026 é a senha do wifi", PASSWORD, "Caju#2026", id="given-first-pt"),
    pytest.param("5312 is the alarm code.", ACCESS_CODE, "5312", id="given-first-code"),
    pytest.param("9902 é o código do portão", ACCESS_CODE, "9902", id="given-first-code-pt"),
    # -- a network's key or code is its password
    pytest.param(
        "network OakLane-5G, key qz7rm2kv9tpw", PASSWORD, "qz7rm2kv9tpw", id="network-key"
    ),
    pytest.param("WLAN-Schlüssel: 5519028833740161", PASSWORD, "5519028833740161", id="key-de"),
    pytest.param(
        "chave de segurança da rede: Tq8mWz4kb", PASSWORD, "Tq8mWz4kb", id="network-key-pt"
    ),
    pytest.param("le code wifi c'est pommeverte31", PASSWORD, "pommeverte31", id="wifi-code-fr"),
    # -- a value that can only be a password, in a password word's clause, however given
    pytest.param(
        "mi cambiaron la contraseña del banco a ver si me acuerdo: Limonero#2291",
        PASSWORD,
        "Limonero#2291",
        id="clause-colon-far",
    ),
    pytest.param(
        "hasło do skrzynki zmieniłem wczoraj na Wisla&Krakow7 bo stare wyciekło",
        PASSWORD,
        "Wisla&Krakow7",
        id="clause-changed-to-pl",
    ),
    pytest.param(
        "비번 바꿨어 → sunflower77!! 잊지마", PASSWORD, "sunflower77!!", id="clause-arrow-ko"
    ),
    pytest.param(
        "Gravel_Path42 — это пароль от роутера на даче",
        PASSWORD,
        "Gravel_Path42",
        id="clause-first",
    ),
    pytest.param(
        "the app password they gave me for the mail client is qzvtrmkpwlxdhnbf",
        PASSWORD,
        "qzvtrmkpwlxdhnbf",
        id="clause-app-password",
    ),
    pytest.param("mk zalo mới: Thuy#0812 nha", PASSWORD, "Thuy#0812", id="mk-vi"),
    # -- what opens with a code and nothing else
    pytest.param(
        "the lockbox behind the shed is 7720, leave the keys in it",
        ACCESS_CODE,
        "7720",
        id="lockbox",
    ),
    pytest.param("Schlüsselkasten am Eingang: 4471", ACCESS_CODE, "4471", id="key-box-de"),
    pytest.param("padlock 14-02-33", ACCESS_CODE, "14-02-33", id="padlock-combination"),
    # -- a value in parentheses, other scripts' words and verbs
    pytest.param(
        "o cliente mandou a senha atual (Mandioca#8) no chamado",
        PASSWORD,
        "Mandioca#8",
        id="bracketed",
    ),
    pytest.param("金庫の番号は 3150", ACCESS_CODE, "3150", id="number-of-safe-ja"),
    pytest.param("현관 비번 4826#", PASSWORD, "4826#", id="short-form-ko"),
    pytest.param("保险箱密码改成 402913 了", PASSWORD, "402913", id="changed-to-zh"),
    pytest.param("PIN ATM saya 482910", ACCESS_CODE, "482910", id="pin-atm-id"),
    # -- the answer on the next line of a chat, digits spaced out, a next step after a code
    pytest.param(
        "[10:02] kim: what's the wifi password?\n[10:03] lee: Maple7grove",
        PASSWORD,
        "Maple7grove",
        id="answered-below",
    ),
    pytest.param("the gate code is 5 2 9 1", ACCESS_CODE, "5 2 9 1", id="spaced-digits"),
    pytest.param("keypad by the loading dock: 61904 then press #", ACCESS_CODE, "61904", id="then"),
    pytest.param("the code is 7315 for the side gate", ACCESS_CODE, "7315", id="lock-after"),
    pytest.param(
        "la contra del wifi de abajo es Gaviota_2040",
        PASSWORD,
        "Gaviota_2040",
        id="short-form-es",
    ),
    pytest.param(
        "el pin de la SIM del móvil de Ana: 4471",
        ACCESS_CODE,
        "4471",
        id="long-between",
    ),
    pytest.param("ο κωδικός του ρούτερ είναι Kyma2031", PASSWORD, "Kyma2031", id="copula-el"),
    pytest.param("राउटर का पासवर्ड है neem77tree", PASSWORD, "neem77tree", id="copula-hi"),
    pytest.param("PIN kódja: 5066", ACCESS_CODE, "5066", id="pin-hu"),
    # -- national ids named in more languages, each passing its checksum
    pytest.param("rodné číslo 891012/9151", NATIONAL_ID, "891012/9151", id="id-cz"),
    pytest.param("CNP 2600704143745", NATIONAL_ID, "2600704143745", id="id-ro"),
    pytest.param("henkilötunnus: 050886-869W", NATIONAL_ID, "050886-869W", id="id-fi"),
    pytest.param("ΑΜΚΑ 23117049975", NATIONAL_ID, "23117049975", id="id-gr"),
    pytest.param("adóazonosító jel: 8426496067", NATIONAL_ID, "8426496067", id="id-hu"),
    # -- a user and password together
    pytest.param("basic auth ana:Pa55w0rd!", PASSWORD, "Pa55w0rd!", id="basic-auth"),
    pytest.param(
        "jenkins user/pass = builder / Cobalt-Rain-3", PASSWORD, "Cobalt-Rain-3", id="user-pass"
    ),
    # -- bank accounts
    pytest.param(
        "rent goes to GB29 NWBK 6016 1331 9268 19 (landlord)",
        BANK_ACCOUNT,
        "GB29 NWBK 6016 1331 9268 19",
        id="iban-gb",
    ),
    pytest.param(
        "Pay DE27370400442876624978, ref flat 3",
        BANK_ACCOUNT,
        "DE27370400442876624978",
        id="iban-compact",
    ),
    # -- national ids, by their shape or after the word naming them
    pytest.param("my SSN is 787-78-9328", NATIONAL_ID, "787-78-9328", id="ssn"),
    pytest.param("CPF da minha mãe: 213.224.190-27", NATIONAL_ID, "213.224.190-27", id="cpf"),
    pytest.param("mi DNI: 35084645P", NATIONAL_ID, "35084645P", id="dni"),
    pytest.param("NIE X2318929T para la reserva", NATIONAL_ID, "X2318929T", id="nie"),
    pytest.param(
        "codice fiscale: RSSMRA85T10A562S", NATIONAL_ID, "RSSMRA85T10A562S", id="codice-fiscale"
    ),
    pytest.param(
        "Steuer-ID von Oma: 99 281 637 542", NATIONAL_ID, "99 281 637 542", id="steuer-id"
    ),
    pytest.param(
        "meine Steuer-ID ist 80 589 624 316", NATIONAL_ID, "80 589 624 316", id="id-after-verb"
    ),
    pytest.param(
        "numéro de sécu : 1 85 06 75 123 456 89", NATIONAL_ID, "1 85 06 75 123 456 89", id="nir"
    ),
    pytest.param("PESEL mamy: 85061367985", NATIONAL_ID, "85061367985", id="pesel"),
    pytest.param("身份证号 110105198506127172", NATIONAL_ID, "110105198506127172", id="ric"),
    pytest.param("주민등록번호 850612-1754712", NATIONAL_ID, "850612-1754712", id="rrn"),
    # -- recovery phrases: twelve words of one BIP-39 list
    pytest.param(
        "recovery phrase: fancy muffin offer equal scorpion harsh caught arm never jar cake hire",
        RECOVERY_PHRASE,
        "fancy muffin offer equal scorpion harsh caught arm never jar cake hire",
        id="phrase-en",
    ),
    pytest.param(
        "vivid summer luxury fog glove staff ugly hurdle stand ramp move mushroom",
        RECOVERY_PHRASE,
        "vivid summer luxury fog glove staff ugly hurdle stand ramp move mushroom",
        id="phrase-checksum-alone",
    ),
    pytest.param(
        "words:\n1. animal 2. recall 3. suspect 4. carbon 5. sphere 6. shop 7. rabbit "
        "8. whip 9. mosquito 10. zebra 11. mobile 12. drive",
        RECOVERY_PHRASE,
        "mosquito",
        id="phrase-numbered",
    ),
    pytest.param(
        "semilla: aplicar tutor boina fosa malla tecla desfile untar tóxico olor arroz ligero",
        RECOVERY_PHRASE,
        "tóxico",
        id="phrase-es",
    ),
    pytest.param(
        "助记词：筋 您 石 详 始 枝 果 四 刑 烧 法 辖",
        RECOVERY_PHRASE,
        "筋 您 石 详",
        id="phrase-zh",
    ),
]


@pytest.mark.parametrize(("text", "kind", "secret"), CAUGHT)
def test_each_class_is_refused_by_kind(text: str, kind: str, secret: str) -> None:
    assert kind in kinds(text)


@pytest.mark.parametrize(("text", "kind", "secret"), CAUGHT)
def test_each_class_is_redacted_and_its_words_kept(text: str, kind: str, secret: str) -> None:
    redacted = redact_secrets(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted or "[REDACTED:" in redacted
    assert find_secrets(redacted) == []
    first = text.split()[0]
    if text.index(secret) > len(first):
        assert redacted.split()[0] == first


@pytest.mark.parametrize(("text", "kind", "secret"), CAUGHT)
def test_each_class_is_found_inside_longer_text(text: str, kind: str, secret: str) -> None:
    assert kind in kinds(f"Notes from Sunday.\n{text}\nCall Ana back about the trip.")


LOOK_ALIKES = [
    "The API keys live in 1Password under Infra/API.",  # a product named after the word
    # -- numbers that are not cards: no issuer, failed checksum, printed otherwise
    pytest.param("4324 6365 6018 8308 is not my card number", id="luhn-fails"),
    pytest.param("IMEI of the old phone: 490154203237518", id="imei"),
    pytest.param("order #112-7735091-4468213 arrives Tuesday", id="order"),
    pytest.param("订单号 2025041812345678 已发货", id="order-zh"),
    pytest.param("tracking no. 9400 1000 0000 0000 0000 00 (USPS)", id="tracking"),
    pytest.param("ISBN 978-0-306-40615-7 is the second edition", id="isbn"),
    pytest.param("call +1 415 555 0172 after 6pm", id="phone"),
    pytest.param("telefone do encanador: (11) 98765-4321", id="phone-pt"),
    pytest.param("flights were $1,184.60 for both of us", id="price"),
    pytest.param("Reparatur kostet 349,99 € inkl. MwSt.", id="price-de"),
    pytest.param("lease runs 2025-03-01 to 2026-02-28", id="dates"),
    pytest.param("invoice INV-2025-00918 for 1,240.00 EUR is overdue", id="invoice"),
    pytest.param("bumped the app to 4.12.3 (build 40871)", id="version"),
    pytest.param("reverted e0a77b3c9d1f4a6b8e2c5d7f9a1b3c5d7e9f0a12 after the outage", id="commit"),
    pytest.param("device id 8d3f2a1c-7b4e-4f90-a6d2-1e5c9b7a3f08 keeps reconnecting", id="uuid"),
    pytest.param(
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", id="digest"
    ),
    pytest.param("IBAN format is two letters, two check digits, then the account", id="iban-talk"),
    # -- credential words without a value
    pytest.param("my PIN changed last week", id="pin-changed"),
    pytest.param("My ATM PIN changed in 2023.", id="pin-changed-year"),
    pytest.param("GPIO pin2 is 3300 on the old board", id="board-pin2"),
    pytest.param("login: failed, code: 4031", id="login-log-line"),
    pytest.param("Instagram pass for the concert: VIP2024x", id="event-pass"),
    pytest.param("Exam code for the security certification:\nSY0701", id="exam-code-below"),
    pytest.param("Paint code for the front door:\n8A3C2", id="paint-code-below"),
    pytest.param("he asked for an app password, told him to send them your mail", id="app-words"),
    pytest.param(
        "User changed their password yesterday. They will send pdfs next week.", id="app-pdfs"
    ),
    pytest.param("App password works with smtp over port 587", id="app-smtp"),
    pytest.param("the door code is on the fridge", id="door-code-where"),
    pytest.param("the alarm code is the same as before", id="alarm-code-same"),
    pytest.param("PIN must be 6 digits on the new phones", id="pin-rule"),
    pytest.param("the PIN is 4 to 8 digits", id="pin-range"),
    pytest.param("a senha precisa ter 8 dígitos", id="rule-pt"),
    pytest.param("das Passwort muss mindestens 10 Zeichen haben", id="rule-de"),
    pytest.param("暗証番号は4桁です", id="rule-ja"),
    pytest.param("密码至少8位", id="rule-zh"),
    pytest.param("wifi密码贴在冰箱上", id="where-zh"),
    pytest.param("la contraseña del wifi está en la nevera", id="where-es"),
    pytest.param("my password manager: 1Password", id="password-manager"),
    pytest.param(
        "DB password is in arn:aws:secretsmanager:us-east-1:123456789012:secret:x", id="arn"
    ),
    pytest.param("pin 13 is the onboard LED", id="board-pin"),
    # -- keys of no network, lock nouns and numbers that are no code
    pytest.param("the key is to deploy before noon", id="key-of-advice"),
    pytest.param("the API key rotation runs at 0200", id="api-key-talk"),
    pytest.param("the wifi key expired yesterday", id="wifi-key-no-value"),
    pytest.param("the padlock 1234 model is cheaper", id="padlock-model"),
    pytest.param("the key safe is mounted at 150 cm", id="key-safe-height"),
    pytest.param("ロッカーの番号は 125 です", id="locker-number-ja"),
    pytest.param("部屋番号は 305 です", id="room-number-ja"),
    pytest.param("kode pos 40115, Bandung", id="postal-code-id"),
    # -- the next line, spaced digits and words for words that give no credential
    pytest.param("what's the wifi password?\nno idea, ask Sam", id="asked-not-answered"),
    pytest.param("the PIN\n2024 was the year we changed it", id="next-line-prose"),
    pytest.param("the code review\n1234 comments so far", id="code-review"),
    pytest.param("Error code 1 2 3 4 on the panel", id="spaced-error-code"),
    pytest.param("la contra del equipo es fuerte", id="contra-against"),
    pytest.param("boarding pass for the user AB1234", id="pass-for-user"),
    pytest.param(
        "reading words: apple tiger garden river window yellow castle planet ocean valley "
        "forest summer",
        id="reading-words",
    ),
    pytest.param("adóazonosító jel: 8426496068", id="id-hu-checksum-fails"),
    # -- a value given first that is no credential
    pytest.param("Windows11 is the password manager's platform", id="given-first-talk"),
    pytest.param("Error 2741 is the alarm code the panel shows", id="given-first-error"),
    pytest.param("in 2024 is the PIN renewal", id="given-first-year"),
    # -- codes that open nothing
    pytest.param("error code 0x80070005 when installing updates", id="error-code"),
    pytest.param("the zip code is 94110", id="zip-code"),
    pytest.param("código postal 28013, Madrid", id="postal-code-es"),
    pytest.param("discount code SPRING25 gives 25% off", id="discount-code"),
    pytest.param("building code requires 36 inch doors", id="building-code"),
    # -- common words of the chat forms, giving nothing
    pytest.param("boarding pass AB1234 for the flight", id="boarding-pass"),
    pytest.param("all 12 tests pass on the build server", id="tests-pass"),
    pytest.param("enter 2024 as the year of the report", id="enter-year"),
    pytest.param("type 3 diabetes runs in the family", id="type-3"),
    pytest.param("pin the memory to 2024 so it stays on top", id="pin-verb"),
    pytest.param("the price is 1200 for the door and 300 for fitting", id="price-for-door"),
    pytest.param("the password changed, it's in the vault now", id="resumed-no-value"),
    pytest.param("random seed 20240501 for the benchmark runs", id="random-seed"),
    # -- names and ids in a password word's clause
    pytest.param("the wifi password for OakLane-5G is on the router sticker", id="ssid-clause"),
    pytest.param("password reset for user JSmith1990 failed twice", id="user-clause"),
    pytest.param("memory key mk-3f2a9c1b7e0d4e21 was written twice", id="mk-id"),
    pytest.param("Golf Mk7 GTI service at 60k, torque spec 25nm+90deg", id="mk-model"),
    pytest.param("ping @alice_w2 about the password policy", id="handle-clause"),
    pytest.param("My Discord is jsmith#1234, ask me for the wifi password later", id="tag-clause"),
    pytest.param("password reset ticket JIRA#SEC-1234abc is still open", id="ticket-clause"),
    pytest.param("Install bcrypt@5 for password hashing", id="package-clause"),
    pytest.param("Passwords are hashed with argon2id, m=65536,t=3,p=4", id="setting-clause"),
    pytest.param("The password reset page runs on localhost:8080 in dev", id="host-clause"),
    pytest.param("Password workshop 2:30pm-4pm tomorrow", id="time-clause"),
    pytest.param("World Password Day: use a manager #infosec2024", id="hashtag-clause"),
    pytest.param(
        "The app password field shows xxxxxxxxxxxxxxxx until you click reveal", id="mask-clause"
    ),
    pytest.param("I changed my password on the strengthtraining app", id="run-together-clause"),
    pytest.param(
        "I reset my password yesterday and then wrote to the helpdesk about it over the next "
        "few days, twice, asking them to confirm the change and to mail jsmith1985@example.com",
        id="address-far-clause",
    ),
    pytest.param("password reset for jsmith_1990 failed, ticket INC-2024-7781", id="ids-clause"),
    pytest.param("password manager: 1Password, laptop: Windows11", id="products-clause"),
    pytest.param("changed the password after upgrading to v2.3.1-rc1", id="version-clause"),
    pytest.param(
        "password reset mail for anna.kowalska@example.pl never arrived", id="address-clause"
    ),
    pytest.param(
        "password change logged under a475b3c6-a41a-4836-937d-b7d032058254", id="uuid-clause"
    ),
    pytest.param(
        "the password policy needs characters like ! or # and a digit", id="policy-clause"
    ),
    # -- words of the BIP-39 list that are no phrase
    pytest.param(
        "packing list: tent stove lantern rope knife map water filter blanket pillow towel soap",
        id="word-list",
    ),
    pytest.param(
        "We need to fix the login page before the release and then review the docs.",
        id="english-prose",
    ),
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_are_stored(text: str) -> None:
    assert find_secrets(text) == [], text


def test_a_card_number_after_an_order_word_is_an_order() -> None:
    # Luhn-valid with a Visa prefix, but printed together after "order".
    assert kinds("order 4282010276161247 shipped") == []
    assert kinds("card for order 4282010276161247") == [PAYMENT_CARD]


def test_an_iban_is_cut_to_its_valid_groups() -> None:
    text = "IBAN NL77 ABNA 7141 6413 43 t.n.v. J. de Vries"
    assert redact_secrets(text) == "IBAN [REDACTED:BANK_ACCOUNT] t.n.v. J. de Vries"


def test_twelve_words_of_the_list_are_a_phrase_only_when_something_says_so() -> None:
    # Twelve list words that fail the checksum, without numbering or a word for a seed.
    words = "tent stove knife water filter blanket soap apple banana lemon onion garlic"
    assert find_secrets(words) == []
    assert kinds(f"my seed: {words}") == [RECOVERY_PHRASE]


def test_a_list_under_a_label_needs_a_longer_checksum() -> None:
    # Twelve words of the list that pass the checksum by chance (one list in sixteen).
    words = "apple banana milk bread butter cheese salad lemon onion garlic pepper sugar"
    assert kinds(words) == [RECOVERY_PHRASE]
    assert find_secrets(f"groceries: {words}") == []
    assert kinds(f"seed: {words}") == [RECOVERY_PHRASE]
    assert kinds(f"keep this safe: {words}") == [RECOVERY_PHRASE]


def test_a_national_id_word_in_another_sense_names_nothing() -> None:
    # Spanish "sin" (without), Polish "nie" (not): only the upper-case acronyms name ids.
    assert find_secrets("pagó sin problema el pedido 408339102") == []
    assert find_secrets("nie 408339102 razy") == []


def test_the_words_of_every_language_fold_as_the_gate_folds_text() -> None:
    assert credentials.fold("ΚΩΔΙΚΌΣ") == credentials.fold("κωδικός")
    assert credentials.fold("ŞİFRE") == "şifre"
    assert credentials.fold("Passwort") == "passwort"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        pytest.param("Alarmcode: 4512", ACCESS_CODE, id="compound-de"),
        pytest.param("código de barras 789123456", None, id="barcode-pt"),
        pytest.param("barcode 0123456789", None, id="barcode"),
        pytest.param("Unicode 1234", None, id="unicode"),
    ],
)
def test_a_compound_code_names_what_it_opens(text: str, kind: str | None) -> None:
    assert kinds(text) == ([kind] if kind else [])
