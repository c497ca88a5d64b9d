"""A labelled corpus for the secret detector: credentials the way people paste them into
notes, and ordinary text that only looks risky.

``SECRETS`` holds (shape, text) pairs that must be refused; ``ORDINARY`` holds (kind,
text) pairs that must be stored. Every credential here is synthetic: the random parts
come from a seeded generator and the vendor prefixes are joined on at import time, so no
complete credential sits in the source as one literal.
"""

from __future__ import annotations

import base64
import json
import random
import uuid
from dataclasses import dataclass
from pathlib import Path

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_LOWER_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
_HEXDIGITS = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"
_rng = random.Random(20240501)


def _r(n: int, alphabet: str = _ALNUM) -> str:
    """``n`` random characters with at least one digit, one lower and one upper letter
    when the alphabet has them (a synthetic key always reads as random)."""
    while True:
        text = "".join(_rng.choice(alphabet) for _ in range(n))
        wanted = [
            any(c.isdigit() for c in alphabet) <= any(c.isdigit() for c in text),
            any(c.islower() for c in alphabet) <= any(c.islower() for c in text),
            any(c.isupper() for c in alphabet) <= any(c.isupper() for c in text),
        ]
        if all(wanted) or n < 8:
            return text


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _b64url(data: dict[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _uuid() -> str:
    return str(uuid.UUID(int=_rng.getrandbits(128), version=4))


def _pem(label: str, body_lines: int = 3) -> str:
    body = "\n".join(_r(64, _B64) for _ in range(body_lines))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


# Vendor prefixes, split so that no line holds a whole credential pattern.
AKIA, ASIA = "AK" + "IA", "AS" + "IA"
GHP, GHS, GH_PAT = "gh" + "p_", "gh" + "s_", "github" + "_pat_"
XOXB, XOXP = "xo" + "xb-", "xo" + "xp-"
SK_LIVE, SK_TEST, RK_LIVE, WHSEC = "sk" + "_live_", "sk" + "_test_", "rk" + "_live_", "wh" + "sec_"
SK_PROJ, SK_ANT = "sk-" + "proj-", "sk-" + "ant-api03-"
AIZA = "AI" + "za"
NPM = "np" + "m_"
GLPAT, HF = "gl" + "pat-", "h" + "f_"
SG = "S" + "G."
PYPI = "pypi-" + "AgEIcHlwaS5vcmc"
DOP, SHPAT = "dop" + "_v1_", "shp" + "at_"
YA29, GOCSPX = "ya" + "29.", "GOC" + "SPX-"
SLACK_HOOK = "https://hooks.slack" + ".com/services/"
DISCORD_HOOK = "https://discord" + ".com/api/webhooks/"
JWT_HEADER = _b64url({"alg": "HS256", "typ": "JWT"})
JWT = (
    JWT_HEADER
    + "."
    + _b64url({"sub": "1234567890", "name": "Dana Ops", "iat": 1716200000})
    + "."
    + _r(43, _URLSAFE)
)

SECRETS: list[tuple[str, str]] = [
    # -- passwords in config, prose and environment ------------------------------------
    ("password-assignment", "password = Hunter2Winter!"),
    ("password-assignment", 'config.yaml has `password: "Gr33n-Tea-Pot"` under the db section'),
    ("password-assignment", 'settings.json: {"db_password": "Pl4net$Orbit9", "pool": 5}'),
    ("password-assignment", "spring.datasource.password=Qu4rtz!Lake"),
    ("password-assignment", "vault login -method=userpass username=ops password=V4ult-Ops-9"),
    ("password-prose", "The prod DB password is Tr0ub4dor&3"),
    ("password-prose", "fyi the wifi password for the office is Sunfl0wer#22 (guest network)"),
    ("password-prose", "root pw: Zx9!kLm2pQ"),
    ("password-prose", "Jenkins admin password was changed to Orbit-7731-Lime yesterday."),
    ("password-prose", "username admin password Adm1n!2024"),
    ("env-password", "DATABASE_PASSWORD=s3cr3t-value"),
    ("env-password", "export PGPASSWORD=pg-L0cal-77 && psql -h db.internal -U app"),
    ("env-password", "environment:\n  MYSQL_ROOT_PASSWORD: r00tM3!now\n  MYSQL_DATABASE: shop"),
    ("env-password", "in .env: DB_PASS=kettle"),
    (
        "connection-string",
        "Server=tcp:sql.example.net,1433;Database=shop;User ID=app;"
        "Password=MyS3cret!Pass;Encrypt=true",
    ),
    # -- headers ------------------------------------------------------------------------
    ("basic-auth-header", "Authorization: Basic " + _b64("deploy:Wint3r-Is-Here")),
    (
        "basic-auth-header",
        'curl -H "Authorization: Basic ' + _b64("ci-bot:" + _r(12)) + '" https://ci.example.com',
    ),
    ("basic-auth-header", "the hook sends Basic " + _b64("hook:" + _r(16)) + " on every call"),
    ("bearer-token", "call it with Authorization: Bearer " + _r(30)),
    ("bearer-token", 'headers = {"Authorization": "Bearer ' + _r(40, _URLSAFE) + '"}'),
    ("bearer-token", "Authorization: Token " + _r(40, _HEXDIGITS)),
    ("jwt", "Authorization: Bearer " + JWT),
    ("jwt", "the test user's session JWT: " + JWT),
    # -- URLs ---------------------------------------------------------------------------
    ("url-password-empty-user", "redis://:pw@cache.internal:6379/0"),
    ("url-password-empty-user", "REDIS_URL=redis://:9fQ2mZ7x@redis-prod:6379"),
    ("url-password-empty-user", "rediss://:Str0ngCache!@cache.example.net:6380/1"),
    ("password-in-url", "db is postgres://admin:hunter22@db:5432/prod"),
    (
        "password-in-url",
        "mongodb+srv://svc_reporting:Rep0rt-2024@cluster0.ab1cd.mongodb.net/analytics",
    ),
    ("password-in-url", "the broker: amqp://guest:Rabb1tHole@mq.internal:5672/"),
    ("password-in-url", "git clone https://deploy:Kx82-pqLm@git.example.com/org/repo.git"),
    # -- command lines ------------------------------------------------------------------
    ("mysql-p", "mysql -u root -pS3cret"),
    ("mysql-p", "mysqldump -h db.internal -u backup -p'B4ckup!Pass' shop > shop.sql"),
    ("mysql-p", "run `mariadb -uadmin -pMaria2024 -e 'show databases'` on the replica"),
    ("curl-u", "curl -u admin:Sup3rSecret https://api.example.com/v1/status"),
    ("curl-u", 'curl -s --user "ops:Gl4cier-99" https://grafana.example.com/api/health'),
    ("cli-password-flag", "docker login -u deploy --password Dck3r-Hub-55 registry.example.com"),
    ("cli-password-flag", "sshpass -p 'Bl0ckCha1n' ssh ops@bastion.example.com"),
    # -- named keys and tokens ----------------------------------------------------------
    ("uuid-api-key", "HEROKU_API_KEY=" + _uuid()),
    ("uuid-api-key", "heroku api key: " + _uuid()),
    ("uuid-api-key", 'export PAGERDUTY_API_KEY="' + _uuid() + '"'),
    ("generic-api-key", "X-Api-Key: " + _r(32)),
    ("generic-api-key", 'api_key: "' + _r(40, _URLSAFE) + '"'),
    ("generic-api-key", "the api key for the staging tenant is " + _r(32, _HEXDIGITS)),
    ("generic-api-key", "SENTRY_AUTH_TOKEN=" + _r(64, _HEXDIGITS)),
    ("generic-api-key", '{"client_id": "app-42", "client_secret": "' + _r(32) + '"}'),
    ("high-entropy-token", "the session token is Xk9mQ2vLp7RtZ4wN" + "8bYc3HfJ6sDg"),
    ("high-entropy-token", "cookie Zm9vYmFyQmF6UXV4" + "MTIzNDU2Nzg5MA=="),
    ("high-entropy-token", "use " + _r(40) + " to sign the upload"),
    # -- cloud providers ----------------------------------------------------------------
    ("aws-access-key", "prod uses " + AKIA + "4HFT2QWRZ7ZXCVBN for S3"),
    ("aws-access-key", "aws_access_key_id = " + AKIA + _r(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
    ("aws-access-key", "temporary creds " + ASIA + _r(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
    ("aws-secret-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzQ3kLm"),
    ("aws-secret-key", "AWS_SECRET_ACCESS_KEY=" + _r(40, _B64)),
    ("aws-secret-key", '"SecretAccessKey": "' + _r(40, _B64) + '",'),
    (
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=shopstore;AccountKey="
        + _r(86, _B64)
        + "==;EndpointSuffix=core.windows.net",
    ),
    ("google-api-key", "maps key " + AIZA + "Sy" + _r(33, _URLSAFE)),
    (
        "google-api-key",
        "https://maps.googleapis.com/maps/api/js?key=" + AIZA + "Sy" + _r(33, _URLSAFE),
    ),
    ("google-oauth", "access token " + YA29 + "a0Af" + _r(60, _URLSAFE)),
    ("google-oauth", "GOOGLE_CLIENT_SECRET=" + GOCSPX + _r(28, _URLSAFE)),
    ("digitalocean-token", "doctl auth init -t " + DOP + _r(64, _HEXDIGITS)),
    (
        "private-key-pem",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7Zq3vQx9"
        + "Lm2Kp8Rt4Wn6Yb1Hc5Jd\n-----END RSA PRIVATE KEY-----",
    ),
    ("private-key-pem", "deploy key:\n" + _pem("OPENSSH PRIVATE KEY", 4)),
    ("private-key-pem", _pem("EC PRIVATE KEY", 2)),
    (
        "private-key-pem",
        '{"type": "service_account", "private_key": "'
        + _pem("PRIVATE KEY").replace("\n", "\\n")
        + '\\n", "client_email": "bot@proj.iam.gserviceaccount.com"}',
    ),
    # -- code hosts, chat, payments, mail -----------------------------------------------
    ("github-token", "token " + GHP + _r(36)),
    ("github-token", "GITHUB_TOKEN=" + GH_PAT + "11A" + _r(19) + "_" + _r(59)),
    (
        "github-token",
        "git remote set-url origin https://x-access-token:"
        + GHS
        + _r(36)
        + "@github.com/org/repo.git",
    ),
    ("gitlab-token", "CI uses " + GLPAT + _r(20, _URLSAFE)),
    ("slack-token", "bot token " + XOXB + "2401234567890-4012345678901-" + _r(24)),
    (
        "slack-token",
        "SLACK_TOKEN=" + XOXP + "1234567890-1234567890-1234567890-" + _r(32, _HEXDIGITS),
    ),
    (
        "slack-webhook",
        "alerts post to " + SLACK_HOOK + "T0" + _r(8) + "/B0" + _r(8) + "/" + _r(24),
    ),
    ("discord-webhook", "webhook: " + DISCORD_HOOK + "112233445566778899/" + _r(68, _URLSAFE)),
    ("telegram-bot-token", "bot token 6123456789:AA" + _r(33, _URLSAFE)),
    ("stripe-key", "Stripe: " + SK_LIVE + _r(24)),
    ("stripe-key", "STRIPE_SECRET_KEY=" + SK_TEST + "51" + _r(40)),
    ("stripe-key", "restricted key " + RK_LIVE + _r(24) + " for the reporting job"),
    ("stripe-key", "STRIPE_WEBHOOK_SECRET=" + WHSEC + _r(32)),
    ("twilio", "TWILIO_AUTH_TOKEN=" + _r(32, _HEXDIGITS)),
    ("twilio", "twilio api key " + "S" + "K" + _r(32, _HEXDIGITS)),
    ("sendgrid", "SENDGRID_API_KEY=" + SG + _r(22, _URLSAFE) + "." + _r(43, _URLSAFE)),
    ("sendgrid", "mail goes through " + SG + _r(22, _URLSAFE) + "." + _r(43, _URLSAFE)),
    ("npm-token", "//registry.npmjs.org/:_authToken=" + NPM + _r(36)),
    ("npm-token", "NPM_TOKEN=" + NPM + _r(36)),
    ("pypi-token", "twine upload -p " + PYPI + _r(80, _URLSAFE)),
    ("shopify-token", "shop admin token " + SHPAT + _r(32, _HEXDIGITS)),
    # -- model providers ----------------------------------------------------------------
    ("openai-key", "OPENAI_API_KEY=" + SK_PROJ + _r(48, _URLSAFE)),
    ("openai-key", "old key: sk-" + _r(20) + "T3Blbk" + "FJ" + _r(20)),
    ("anthropic-key", "key: " + SK_ANT + "Q7vX2mK9pL4rT8wZ1nB6" + "cY3hJ5sD0fG2aE7uI9oR"),
    ("anthropic-key", "ANTHROPIC_API_KEY=" + SK_ANT + _r(93, _URLSAFE) + "AA"),
    ("huggingface-token", "HF token " + HF + _r(34)),
    # -- more of the way people write them down ---------------------------------------------
    ("password-prose", "the staging password: winter2024"),
    ("password-prose", "pass: Hx7#mQ2z"),
    ("password-prose", "Password: Correct-Horse-Battery-Staple"),
    ("password-prose", "the SMTP password for ses is " + _r(44, _B64)),
    ("env-password", "PGPASSWORD='Ab12!cd' psql -h db.internal"),
    ("password-in-url", "ftp://anonymous:guest123@ftp.example.com/pub"),
    ("generic-api-key", "secret=" + _r(32, _HEXDIGITS)),
    ("generic-api-key", "JWT_SECRET=super-secret-signing-string-123"),
    ("high-entropy-token", "use the key " + _r(32) + " when calling the vendor"),
    ("aws-secret-key", "export AWS_SECRET_ACCESS_KEY=" + _r(40, _B64)),
    ("google-oauth", "client_secret=" + GOCSPX + _r(28, _URLSAFE)),
    # -- credentials in prose: a password, passphrase or PIN named and then given, a
    # user and password pair, a hex or base64 token named as a key or token ----------------
    ("password-prose", "my password is correcthorsebattery"),
    ("password-prose", "the password to the admin panel is marmalade"),
    ("password-prose", "the guest wifi password — harbourlights"),
    ("passphrase-prose", "the wifi passphrase is correct horse battery staple"),
    ("passphrase-prose", 'the passphrase for the GPG key is "seven lazy otters swim"'),
    ("pin-prose", "my pin code is 4821"),
    ("pin-prose", "PIN for the safe: 88213"),
    ("user-password-pair", "login as admin / hunter2hunter2"),
    ("user-password-pair", "creds are ops/Sailboat#12"),
    ("user-password-pair", "sign in with kiosk:Lantern-2024"),
    ("named-hex-token", "api token 5f4dcc3b5aa765d61d8327deb882cf99"),
    ("named-hex-token", "use the key 7fb2c0d1e9a84b3c9d2e1f0a8b7c6d5e4f3a2b1c for the API"),
    ("named-hex-token", "the deploy key is " + _r(40, _HEXDIGITS)),
    ("named-base64-token", "signing secret " + _r(32, _B64) + "="),
]

_SHA1 = "3f786850e387550fdab836ed7e6dc881de23001b"
_SRI = "sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"
_PUBLIC_KEY = _pem("PUBLIC KEY", 4)

ORDINARY: list[tuple[str, str]] = [
    # -- pointers to where a secret lives ------------------------------------------------
    ("secret-reference", "postgres://app:${DB_PASSWORD}@db/prod"),
    ("secret-reference", "redis://:${REDIS_PASSWORD}@cache:6379/0"),
    ("secret-reference", "password: $DB_PASSWORD"),
    ("secret-reference", "set PASSWORD=%DB_PASSWORD% before running the batch file"),
    ("secret-reference", "password: ${{ secrets.DB_PASSWORD }}"),
    ("secret-reference", "token: {{ secrets.GITHUB_TOKEN }}"),
    ("secret-reference", "password = os.environ['DB_PASSWORD']"),
    ("secret-reference", "curl -u admin:$ADMIN_PASSWORD https://api.example.com/v1/status"),
    ("secret-reference", "Authorization: Bearer $TOKEN"),
    ("secret-reference", "export OPENAI_API_KEY=$(op read op://dev/openai/key)"),
    ("secret-reference", "the prod DB password lives in 1Password under Infra/Prod DB"),
    ("secret-reference", "db password is in op://Engineering/Prod DB/password"),
    (
        "secret-reference",
        "DB password is in arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
    ),
    ("secret-reference", 'headers: {"X-Api-Key": process.env.API_KEY}'),
    ("secret-reference", "const apiKey = import.meta.env.VITE_API_KEY;"),
    ("secret-reference", "SECRET_KEY = get_random_secret_key()"),
    ("secret-reference", "password = getpass.getpass()"),
    (
        "secret-reference",
        "kubectl create secret generic db-creds --from-literal=password=$DB_PASSWORD",
    ),
    ("secret-reference", "valueFrom: {secretKeyRef: {name: db-creds, key: password}}"),
    ("secret-reference", "the key lives in AWS Secrets Manager under prod/stripe"),
    ("secret-reference", "credentials come from the env var ANTHROPIC_API_KEY"),
    # -- placeholders ---------------------------------------------------------------------
    ("placeholder", "mysql -u root -p<password> shop"),
    ("placeholder", "password = ****"),
    ("placeholder", "api_key = xxx"),
    ("placeholder", "token: ..."),
    ("placeholder", "DB_PASSWORD=changeme"),
    ("placeholder", "api_key: <redacted>"),
    ("placeholder", "Authorization: Bearer <token>"),
    ("placeholder", "postgres://user:password@localhost:5432/app is the docs example"),
    ("placeholder", "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx"),
    ("placeholder", "OPENAI_API_KEY=your-api-key-here"),
    # -- talk about credentials, without one --------------------------------------------
    ("password-talk", "reset your password in settings"),
    ("password-talk", "the password policy requires 12 characters"),
    ("password-talk", "Password must be at least 12 characters and include a digit"),
    ("password-talk", "password: see the team vault"),
    ("password-talk", "password is in 1Password vault infra"),
    ("password-talk", "the pw field stays empty for SSO users"),
    ("password-talk", "passwordless login via magic links ships in v2.4.0"),
    ("password-talk", "rotate the API key every 90 days"),
    ("password-talk", "the token is valid for 3600 seconds"),
    ("password-talk", "Bearer token authentication is required for /v1/*"),
    ("password-talk", "mysql -u root -p (it prompts for the password)"),
    ("password-talk", "Authorization: see RFC 7235 for the header format"),
    ("password-talk", 'WWW-Authenticate: Basic realm="api"'),
    ("config-about-secrets", "PASSWORD_MIN_LENGTH=12"),
    ("config-about-secrets", "max_tokens: 4096"),
    ("config-about-secrets", 'token_type: "Bearer"'),
    ("config-about-secrets", "require_password: true"),
    ("config-about-secrets", "def login(user: str, password: str) -> Session:"),
    ("config-about-secrets", "secret_name: prod/db-credentials"),
    ("config-about-secrets", "next_page_token: CiAKGjBpNDd2NmptbHV6ZGFpZ2V0ZWdsN2RzZ3hyNxAB"),
    ("config-about-secrets", "memory_key=deploy-command"),
    # -- random-looking ids -----------------------------------------------------------------
    (
        "google-docs-url",
        "spec: https://docs.google.com/document/d/1aBcD3fGhIjKlMnOpQrStUvWxYz0123456789AbCdEf/edit",
    ),
    (
        "google-docs-url",
        "sheet https://docs.google.com/spreadsheets/d/1Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9876543/edit#gid=0",
    ),
    (
        "google-docs-url",
        "https://drive.google.com/file/d/1Qw2Er3Ty4Ui5Op6As7Df8Gh9Jk0LzXcVbNm/view?usp=sharing",
    ),
    (
        "sri-hash",
        '<script src="https://cdn.example.com/lib.js" integrity="' + _SRI + '" '
        'crossorigin="anonymous"></script>',
    ),
    ("sri-hash", _SRI),
    ("sri-hash", '"integrity": "sha512-' + _r(86, _B64) + '=="'),
    ("ipfs-cid", "pinned at QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"),
    ("ipfs-cid", "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"),
    ("ipfs-cid", "CID bafkreidivzimqfqtoqxkrpge6bjyhlvxqs3rhe73owtmdulaxr5do5in7u"),
    ("firebase-uid", "Firebase uid kTq3bXz9WZNq2v0cP8hYdR1sLmF2 owns the workspace"),
    ("firebase-uid", "kTq3bXz9WZNq2v0cP8hYdR1sLmF2"),
    ("firebase-uid", "doc path users/kTq3bXz9WZNq2v0cP8hYdR1sLmF2/settings/profile"),
    ("clerk-id", "Clerk user user_2NNEqL2nrIRdJ194ndJqAHwEfxC signed up twice"),
    ("clerk-id", "user_2NNEqL2nrIRdJ194ndJqAHwEfxC"),
    ("clerk-id", "org org_2Z4xRk9mLq7WvT3nBp8YcHd1sJf moved to the enterprise plan"),
    (
        "provider-id",
        "the failing call was msg_01XFDUDYJgAACzvnptvVoYEL (request req_011CPXjR9k2LqT7vWm3nB8yH)",
    ),
    ("provider-id", "refund pi_3MtwBwLkdIwHu7ix28a3tqPa for cus_NffrFeUfNV2Hib"),
    ("git-sha", f"fixed in {_SHA1}"),
    ("git-sha", "cherry-pick 9fceb02d0ae598e95dc970b74767f19372d61af8 onto release/2024.05"),
    ("uuid", "the agent is 3f2b8c1e-9d4a-4b7e-8f6a-2c1d0e9b7a54"),
    ("uuid", "tenant_id = 6f1c2a9e-5b7d-4c3e-9a8f-1e2d3c4b5a69"),
    (
        "hex-digest",
        "image sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ),
    ("hex-digest", "md5 of the export: 9e107d9d372bb6826bd81d3542a419d6"),
    ("hex-digest", "etag 0x8DC2F4A1B3E5D7C"),
    (
        "base64-words",
        "the fixture header is X-Note: " + _b64("The quick brown fox jumps over the lazy dog"),
    ),
    ("base64-words", "echo " + _b64("Hello, World! This is a test message.") + " | base64 -d"),
    (
        "base64-words",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    ),
    ("public-key", "our signing public key:\n" + _PUBLIC_KEY),
    ("public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + _r(43, _B64) + " ops@laptop"),
    # -- paths, URLs, code ------------------------------------------------------------------
    ("file-path", "config in /etc/myapp/config.yaml and ~/.aws/credentials"),
    ("file-path", "/home/alice/Projects2024/AgentMemoryService/src/agent_memory/domain/secrets.py"),
    ("file-path", r"C:\Users\Alice\AppData\Roaming\AgentMemory\settings.json"),
    ("url", "docs at https://docs.example.com/v2/guides/deploy?section=rollback#step-3"),
    ("url", "postgres://db.internal:5432/prod is the primary"),
    ("url", "psql postgresql://reporting@db.internal:5432/analytics"),
    ("url", "watch https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s"),
    ("code-identifier", "see HttpRequestHandlerFactory and AbstractSingletonProxyFactoryBean"),
    ("code-identifier", "the OAuth2AuthorizationCodeGrantFlow class"),
    ("code-identifier", "HttpRequestHandlerFactoryProviderConfigurationImpl wires the routes"),
    ("code-identifier", "MEMORY_ARCHIVAL_MAX_CHARS and memory_extract_max_facts"),
    (
        "code-identifier",
        "the handler is agent_memory.service.memories.Memories.record_learning",
    ),
    ("code-identifier", "token = request.headers.get('Authorization')"),
    ("semver", "upgrade to 1.0.0-alpha.1+exp.sha.5114f85 then 2.13.4"),
    ("semver", "ULID 01HZX3J8K9M2N4P6Q8R0S2T4V6 marks the run"),
    ("command", "docker run -u 1000:1000 -p 8080:8080 ghcr.io/example/app:2024.05"),
    ("command", "ssh-keygen -t ed25519 -C ops@example.com -f ~/.ssh/id_ed25519"),
    ("prose", "Deploy with npm run deploy from the repo root"),
    (
        "prose",
        "On 2024-03-15 we moved 3 services to 12 nodes; p99 latency fell from 840ms to "
        "120ms by Q2 2024, build 1234567 at 2025-01-02T03:04:05.123456Z.",
    ),
    ("prose", "email alice.smith+billing@example.co.uk about invoice INV-2024-0042"),
    ("prose", "Bearer tokens expire after 1h; refresh via /auth/refresh"),
    ("prose", "Set AUTH_SECRET in .env.local (generate with openssl rand -base64 32)"),
    ("code-identifier", "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')"),
    ("code-identifier", "if password != confirm_password: raise ValueError('mismatch')"),
    ("code-identifier", "user.password = hash_password(form.password.data)"),
    ("code-identifier", "api_key_header = APIKeyHeader(name='X-API-Key')"),
    ("code-identifier", "access_token_expires = timedelta(minutes=30)"),
    ("config-about-secrets", 'The API returns {"access_token": "...", "token_type": "bearer"}'),
    ("config-about-secrets", "NEXTAUTH_URL=http://localhost:3000"),
    ("placeholder", "password=<YOUR_PASSWORD>"),
    ("url", f"https://github.com/org/repo/blob/{_SHA1}/src/main.py#L10-L20"),
    ("url", "Figma: https://www.figma.com/file/Xk9mQ2vLp7RtZ4wN8bYc3H/Design-System?node-id=1-2"),
    ("provider-id", "Vercel deployment dpl_8bQ3kXz9WZNq2v0cP8hYdR1sLmF2 is live"),
    ("uuid", "Use `uuidgen` to create ids like E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
    # -- talk about passwords, PINs and keys in prose -----------------------------------
    ("publishable-key", "the Clerk publishable key is pk_test_Y2xlcmsuZXhhbXBsZS5jb20k"),
    ("password-talk", "my password is too short for the new policy"),
    ("password-talk", "the password is stored hashed with argon2"),
    ("password-talk", "the password is required"),
    ("password-talk", "the wifi passphrase is written on the whiteboard"),
    ("password-talk", "login as admin / then open Settings"),
    ("password-talk", "sign in with google: https://accounts.google.com"),
    ("pin-talk", "pin the deploy memory so it stays on top"),
    ("pin-talk", "the PIN is 4 to 8 digits"),
    ("pin-talk", "pin 13 is the onboard LED"),
    ("hex-id", "request id 5f4dcc3b5aa765d61d8327deb882cf99 failed twice"),
    (
        "token-talk",
        "the public key is AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
    ),
    ("token-talk", "the key is to deploy before noon"),
]

# -- held back ---------------------------------------------------------------------------
# Written before the rules for credentials in prose were, and never looked at while they
# were: the detector is measured on this part, not tuned to it. A rule change that a
# text here would have guided belongs with the part above, and this part grows anew.

HELD_BACK_SECRETS: list[tuple[str, str]] = [
    ("password-prose", "Marta's laptop password is bluebird1987"),
    ("password-prose", "wifi password — sunshine42"),
    ("password-prose", "the NAS password is now Tromb0ne.Lake"),
    ("password-prose", "I set the router admin password to gravelroad"),
    ("password-prose", "Password for the shared mailbox: orchidmeadow"),
    ("passphrase-prose", "the vpn passphrase: tall giraffe eats purple clouds"),
    ("passphrase-prose", "backup passphrase is 'copper kettle under the stairs'"),
    ("pin-prose", "her PIN is 0912"),
    ("pin-prose", "PIN: 3307 for the corporate card"),
    ("pin-prose", "the phone unlock pin is 551288"),
    ("user-password-pair", "log in with user deploy and password Kettle-42"),
    ("user-password-pair", "credentials: admin/Qwerty!234"),
    ("user-password-pair", "user: ops pass: Gr4nite!"),
    ("user-password-pair", "login: backup / s3cure-backup-9"),
    ("user-password-pair", "the grafana login is viewer:Sp1ralStairs"),
    ("named-hex-token", "the token for the status page is " + _r(64, _HEXDIGITS)),
    ("named-hex-token", "webhook signing key " + _r(40, _HEXDIGITS)),
    ("named-hex-token", "Our license key: " + _r(32, _HEXDIGITS).upper()),
    ("named-base64-token", "api token: " + _r(44, _B64)),
    ("named-base64-token", "the session key is " + _r(24, _B64) + "=="),
    ("named-token", "here is my access token, keep it safe: " + _r(36, _URLSAFE)),
]

HELD_BACK_ORDINARY: list[tuple[str, str]] = [
    ("password-talk", "the password is case-sensitive"),
    ("password-talk", "Password is required for all admin accounts"),
    ("password-talk", "my password manager is Bitwarden"),
    ("password-talk", "password reset links expire after 24h"),
    ("password-talk", "the passphrase policy is four random words"),
    ("password-talk", "user/password auth is disabled on prod"),
    ("password-talk", "login as admin / see the runbook for the password"),
    ("password-talk", "my password is the same one the whole team uses, ask Lee"),
    ("pin-talk", "PIN codes are 4 digits on the old terminals"),
    ("pin-talk", "pinned 4 memories about the deploy"),
    ("pin-talk", "ticket 4821 is about the PIN pad firmware"),
    ("pin-talk", "GPIO pin 17 drives the status LED"),
    ("token-talk", "use the key from the vault, not from chat"),
    ("token-talk", "the API key name is prod-reporting"),
    ("token-talk", "the token expires in 3600 seconds unless refreshed"),
    ("token-talk", "rotate the signing key before the audit on 2026-12-01"),
    ("publishable-key", "checkout uses the publishable key pk_live_" + _r(24) + " in the browser"),
    ("hex-id", "hex color #7fb2c0 for the header"),
    ("hex-id", "commit " + _r(40, _HEXDIGITS) + " fixed the build"),
    ("hex-id", "trace id " + _r(32, _HEXDIGITS) + " shows the slow query"),
    ("prose", "Ana's favourite passphrase game is charades"),
    ("prose", "the password field on the signup form needs a strength meter"),
]

# -- credentials by class, in many languages ---------------------------------------------
# tests/secret_corpus_classes.tsv: credentials that no provider format or English phrase
# gives away (a door code, a PIN, a card number, an IBAN, a national id, a recovery
# phrase, a password after "senha:" or "密码是"), each with its class, language and author,
# and as many ordinary texts that look like them (order and phone numbers, prices,
# dates, "the door code is on the fridge"). The rules are tuned on one part, TUNING
# (the languages of TUNING_LANGUAGES, by the authors of TUNING_AUTHORS, and every batch
# of TUNED_BATCHES); every other part is held out: bench/secret_detector.py reports each
# on its own. A rule change that an item of a held-out part would have guided moves that
# item, or its whole batch, to the tuning part, and the held-out part grows anew.
#
# Batch "b" (chat, mail and forwarded messages, in the tuning languages and seven more)
# was held out in the first round: on it the rules found 28 of 39 credentials (72%) and
# refused 1 of 39 look-alikes (2.6%), both short of the targets. The second round tuned
# the rules on all of it, so it is tuning data from then on. Batch "c" was written for
# the second round before any of its rule changes, and held out from them: on it the
# rules found 43 of 50 credentials in the tuning languages (86%) and 36 of 43 in the
# others (84%), and refused none of its 97 look-alikes; recall was short of the target
# in both. The third round tuned the rules on all of it, so it is tuning data from then
# on. Batch "d" was written for the third round before any of its rule changes, and
# held out from them: on it the rules found 41 of 46 credentials in the tuning languages
# (89%) and refused 1 of 48 look-alikes there (2.1%, a spelling list read as a recovery
# phrase), and found 36 of 62 credentials in the others (58%: national ids, codes and
# passwords in languages the vocabulary lacked) and refused none of their 59
# look-alikes; every figure but the last short of the targets. The fourth round tuned
# the rules on all of it, so it is tuning data from then on. Batch "e" was written for
# the fourth round before any of its rule changes, and held out from them: on it the
# rules found 45 of 49 credentials in the tuning languages (92%) and 25 of 53 in the
# others (47%: twelve languages new to the corpus, whose words for passwords, codes and
# ids the vocabulary lacks), and refused none of its 92 look-alikes; recall in the other
# languages is short of the target. The fifth round tuned the rules on all of it, so it
# is tuning data from then on. Batch "f" was written for the fifth round before any of
# its rule changes, and held out from them: in twenty-four languages outside the tuning
# set (batch e's twelve, seven met before only in tuning batches, five new to the
# corpus) and a few texts in the tuning languages. Before the round the rules found 34
# of its 98 credentials in the other languages (35%) and 13 of 14 in the tuning ones
# (93%), and refused none of its 124 look-alikes; after it, 71 of 98 (72%: the five
# languages new to the corpus and forms the vocabulary still lacks) and 13 of 14, and
# refused none. Its author also wrote the round's words: nouns only where a tuning
# batch used them, but each language's copulas and prepositions whole, without those
# batch e did not use 66 of 98 (67%). Recall in the other languages is short of the
# target. The sixth round tuned the rules on all of it, so it is tuning data from then
# on. Batch "g" was written for the sixth round before any of its rule changes, and held
# out from them, by an author who had read neither the rules nor any earlier batch: in
# thirty-five languages, nine of them new to the corpus. Before the round the rules found
# 113 of its 161 credentials (70%); after it, 116 (72%): 24 of 26 in the tuning
# languages, 80 of 99 in languages an earlier batch has, 12 of 36 in the nine new ones
# (whose words for passwords, codes and ids the vocabulary lacks). They refused none of
# its 161 look-alikes. Recall is short of the target. The seventh round tuned the rules
# on all of it (words for passwords, codes and PINs in its nine new languages, ids named
# with an article or followed by a clause before their number, digits with the copula
# written on them, more card issuers), so it is tuning data from then on: 152 of 161
# after the round, none of its look-alikes refused. Batch "h" was written for the
# seventh round before any of its rule changes, and held out from them, by another
# author who had read neither the rules nor any earlier batch: in sixty languages,
# twenty-five of them new to the corpus. Before the round the rules found 107 of its 161
# credentials (66%); after it, 113 (70%). They refused none of its 161 look-alikes.
# Recall was short of the target. The eighth round tuned the rules on all of it (words
# for passwords, codes, PINs and locks in its new languages, Lao, Burmese and Khmer read
# as Thai is, an aside between a word and its value, a word naming the lock after one
# that said nothing of it, the Icelandic and South African ids), so it is tuning data
# from then on: 159 of 161 after the round, none of its look-alikes refused. Batch "i"
# was written for the eighth round before any of its rule changes, and held out from
# them, by another author who had read neither the rules nor any earlier batch: in
# seventy-four languages. Before the round the rules found 114 of its 160 credentials
# (71%: 12 of 15 in the tuning languages, 102 of 145 in the others); after it, 128 (80%:
# 12 of 15 and 116 of 145). They refused none of its 160 look-alikes. Recall is short
# of the target. It stays held out until a new batch is written. The ninth round took
# nothing from any batch: the words for passwords, PINs, codes and what codes open in
# the 95 languages the local model reads, written by class and language by an author who
# had read neither the rules nor any batch (detectors/credential_words.json, each word
# added only where the tables lacked it), and postal words as codes that open nothing
# (a tuning look-alike, an address's postal code, read as a door code once "daire" named
# a lock). The round was asked for after batch i's misses by language were seen, but for
# every language alike. On batch i the rules then found 126 of the 145 (87%) and still
# refused none of its look-alikes: short of the target. Batch i is tuning data from
# then on. Batch "j" was written after the ninth round, by another author who had read
# neither the rules nor any batch: in thirty-four languages, the five tuning ones among
# them. The rules found 14 of its 14 credentials in the tuning languages and 63 of 74 in
# the others (85%), and refused none of its 101 look-alikes; the ninth round's words
# changed none of these. The tenth round tuned the rules on batch i (an app password
# given after an aside on its line, or split by hyphens; four short words after a
# password word are none; Armenian's and Burmese's words for a PIN; a value given first
# before Norwegian's, Danish's, Finnish's, Czech's, the South Slavic languages' and
# Romanian's "is", and Tagalog's marker of what is spoken of). After it the rules found
# 64 of batch j's 74 (86%) and refused none of its look-alikes. Recall in the other
# languages was short of the target. Batch "k" was written after the tenth round, by
# another author who had read neither the rules nor any batch: in thirty-nine
# languages, the five tuning ones among them. The rules found 30 of its 34 credentials
# in the tuning languages and 46 of 53 in the others (87%), and refused none of its 103
# look-alikes. The eleventh round tuned the rules on batch j, so it is tuning data from
# then on: a value that can only be a password (lowercase letters and digits with a
# mark ids and names are not written with, or with capitals and a "#", "@" or "_"
# inside, or sixteen letters drawn at random) in the clause of a password word,
# wherever the clause puts it, unless a word for a network or a user names it;
# Vietnamese chat's "mk"; verbs that open a lock with a code in six more languages.
# After it the rules found 85 of batch j's 88, and 32 of batch k's 34 (94%) and 49 of
# its 53 (92%), refusing none of its look-alikes. Batch k stays held out until a new
# batch is written.

TUNING_LANGUAGES = frozenset({"en", "pt", "es", "fr", "de"})
TUNING_AUTHORS = frozenset({"a", "probe"})
# Batches held out in an earlier round and tuned on since: every item, in any language.
TUNED_BATCHES = frozenset({"b", "c", "d", "e", "f", "g", "h", "i", "j"})
# Held-out items that guided a change of the rules: tuning data from then on.
MOVED = "moved"
TUNING = "tuning"
UNSEEN_LANGUAGE = "unseen language"
UNSEEN_AUTHOR = "unseen author"
UNSEEN_BOTH = "unseen language and author"
PARTS = (TUNING, UNSEEN_LANGUAGE, UNSEEN_AUTHOR, UNSEEN_BOTH)


@dataclass(frozen=True)
class Labelled:
    """One text of the corpus by class: a secret (to refuse) or an ordinary text."""

    secret: bool
    cls: str
    language: str
    author: str
    text: str

    @property
    def part(self) -> str:
        if self.author == MOVED or self.author in TUNED_BATCHES:
            return TUNING
        seen_language = self.language in TUNING_LANGUAGES
        if self.author in TUNING_AUTHORS:
            return TUNING if seen_language else UNSEEN_LANGUAGE
        return UNSEEN_AUTHOR if seen_language else UNSEEN_BOTH


def _labelled(path: Path) -> list[Labelled]:
    items: list[Labelled] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 5 or fields[0] not in ("secret", "ordinary"):
            raise ValueError(f"{path.name}:{number}: expected 5 tab-separated fields")
        label, cls, language, author, text = fields
        items.append(Labelled(label == "secret", cls, language, author, text.replace("\\n", "\n")))
    return items


BY_CLASS: list[Labelled] = _labelled(Path(__file__).with_name("secret_corpus_classes.tsv"))
