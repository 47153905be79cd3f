"""memoryui settings: one file, driven by environment variables with safe defaults."""

from __future__ import annotations

import ipaddress
import math
import os
import secrets
import zoneinfo
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_path(name: str, default: Path) -> Path:
    """A path setting, made absolute; unset or empty means the default (an empty value must
    not turn into the current directory, nor a missing one into a file named "None")."""
    raw = os.environ.get(name, "").strip()
    return Path(raw).absolute() if raw else default


VAR_DIR = _env_path("MEMORYUI_VAR_DIR", BASE_DIR / "var")


# Every setting read from the environment is checked here: a typo stops the start with one
# sentence (ImproperlyConfigured; manage.py and the ASGI and WSGI entries print it as
# "memoryui: <sentence>" and exit 2), never a traceback or a silent default.

def _env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1, true, yes, on, 0, false, no, off, "
                               f"got {raw!r}")


def _env_number(name: str, default: str, kind: type[int] | type[float], *,
                minimum: float = 0, maximum: float | None = None) -> int | float:
    """A numeric setting within [minimum, maximum]."""
    raw = os.environ.get(name, "").strip() or default
    try:
        value = kind(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a{'n integer' if kind is int else ' number'}"
                                   f", got {raw!r}") from None
    if not math.isfinite(value):
        raise ImproperlyConfigured(f"{name} must be a finite number, got {raw!r}")
    if value < minimum:
        least = f"at least {minimum:g}" if minimum else "zero or more"
        raise ImproperlyConfigured(f"{name} must be {least}, got {raw!r}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum:g}, got {raw!r}")
    return value


def _env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (given in lower case, so any case is read)."""
    raw = os.environ.get(name, "").strip().lower() or default
    if raw not in choices:
        raise ImproperlyConfigured(f"{name} must be {', '.join(choices[:-1])} or {choices[-1]}"
                                   f", got {raw!r}")
    return raw


def _log_level() -> str:
    level = os.environ.get("LOG_LEVEL", "").strip().upper() or "INFO"
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ImproperlyConfigured(f"LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or "
                                   f"CRITICAL, got {level!r}")
    return level


def _forwarded_allow_ips() -> list[str]:
    """Addresses and networks, or `*` alone; uvicorn's and gunicorn's variable and default."""
    raw = os.environ.get("FORWARDED_ALLOW_IPS", "").strip() or "127.0.0.1,::1"
    peers = [p.strip() for p in raw.split(",") if p.strip()]
    if peers == ["*"]:
        return peers
    for peer in peers:
        try:
            ipaddress.ip_network(peer)  # an address is a network of one
        except ValueError:
            raise ImproperlyConfigured(f"FORWARDED_ALLOW_IPS must list IP addresses and "
                                       f"networks (or be *), got {peer!r}") from None
    return peers


def _time_zone() -> str:
    name = os.environ.get("TZ", "").strip() or "UTC"
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ImproperlyConfigured(f"TZ must name a time zone such as UTC or Europe/Paris, "
                                   f"got {name!r}") from None
    return name


def _layout() -> str:
    from memoryui.store.layout import LAYOUTS  # (plain Python: the domain's one list)

    return _env_choice("MEMORYUI_LAYOUT", "duragent", tuple(LAYOUTS))


def _database() -> dict:
    url = os.environ.get("DATABASE_URL", "").strip() or f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
    try:
        # Under ASGI each sync view runs in a pool thread: persistent connections pile up one
        # per thread per worker and exhausted Postgres' 100 clients under 12 agents (500s on
        # `remember`). Django's docs: disable them under ASGI.
        return dict(dj_database_url.parse(url, conn_max_age=0))
    except ValueError:  # (the URL itself is not repeated: it may hold a password)
        raise ImproperlyConfigured("DATABASE_URL must be a database URL such as "
                                   "postgres://user:password@host/name or "
                                   "sqlite:////path/to/db.sqlite3") from None


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once and kept in var/."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    key_file = VAR_DIR / "secret_key"
    try:
        return key_file.read_text().strip()
    except FileNotFoundError:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        key = secrets.token_urlsafe(50)
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(key)
        return key


SECRET_KEY = _secret_key()
DEBUG = _env_bool("DEBUG")
ALLOWED_HOSTS = [
    h.strip() for h in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",")
    if h.strip()
]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]
# The proxies whose X-Forwarded-For and X-Forwarded-Proto memoryui believes, under any server
# (memoryui/asgi.py): the client's address (the sign-in lockout) and scheme (the
# links it builds) are then the ones the proxy saw.
FORWARDED_ALLOW_IPS = _forwarded_allow_ips()

# -- memoryui -------------------------------------------------------------------
MEMORYUI_WORKSPACE = _env_path("MEMORYUI_WORKSPACE", VAR_DIR / "workspace")
MEMORYUI_LAYOUT = _layout()
# Seconds agent and API writes may wait to be grouped into one commit per author (0: commit
# before each write returns). The one default for `serve`, the tests' servers and any ASGI
# server; UI edits always commit at once.
MEMORYUI_COMMIT_DELAY = float(_env_number("MEMORYUI_COMMIT_DELAY", "0.2", float))
MEMORYUI_SEARCH_DB = _env_path("MEMORYUI_SEARCH_DB", VAR_DIR / "search.sqlite3")
# auto: Postgres full-text when DATABASE_URL is Postgres and no sync remote is set; with a remote
# (several instances, each its own clone) every instance keeps its own SQLite index, which catches
# up from its own files (DESIGN.md 3b). sqlite / postgres force one.
MEMORYUI_SEARCH_BACKEND = _env_choice("MEMORYUI_SEARCH_BACKEND", "auto",
                                      ("auto", "sqlite", "postgres"))
# Seconds an API token stays verified in a worker (0: ask the database every request). A token
# revoked in this instance stops at once; one revoked by another instance sharing the
# database stops within this time.
MEMORYUI_TOKEN_CACHE = float(_env_number("MEMORYUI_TOKEN_CACHE", "5", float))
MEMORYUI_MAX_BODY = int(_env_number("MEMORYUI_MAX_BODY", str(1024 * 1024), int))
# Bytes of text a page renders as markdown or diffs (memoryui/rendering.py): a larger file
# is offered raw and as a download, so no request spends seconds of a worker on it.
MEMORYUI_RENDER_LIMIT = int(_env_number("MEMORYUI_RENDER_LIMIT", str(1024 * 1024), int))
# Requests one server worker runs at once (threads of its pool; each request runs whole in one).
MEMORYUI_THREADS = max(1, int(_env_number("MEMORYUI_THREADS", "16", int)))
# What `manage.py serve` listens on and how many worker processes it runs (its --bind and
# --workers override them); a stock server takes its own options (docs/deployment.md).
MEMORYUI_BIND = os.environ.get("MEMORYUI_BIND", "").strip() or "127.0.0.1:8000"
MEMORYUI_WORKERS = int(_env_number("MEMORYUI_WORKERS", "2", int, minimum=1))
# Promoted text carries a dated marker linking back to its daily entry (`marker`), or nothing
# (`none`); the commit's `Promoted-From` trailer is written either way.
MEMORYUI_PROVENANCE = _env_choice("MEMORYUI_PROVENANCE", "marker", ("marker", "none"))
# Secrets in written text (memoryui/secrets; docs/security.md): `block` refuses an agent's
# write that adds one (people's writes are flagged), `flag` commits and flags every write,
# `off` scans nothing.
MEMORYUI_SECRETS = _env_choice("MEMORYUI_SECRETS", "block", ("block", "flag", "off"))
# Grouping similar daily entries in the review queue (0..100; 0: off); read by
# memoryui/review/similar.py, checked here.
_env_number("MEMORYUI_SIMILAR", "0", int, maximum=100)
# Search by meaning (docs/search.md): `off` leaves search to keywords and embeds nothing;
# read by memoryui/search/embeddings.py, checked here.
_env_choice("MEMORYUI_EMBEDDINGS", "on", ("on", "off"))

# -- sync with a git remote (docs/sync.md) --------------------------
# Any URL git accepts; empty = no sync. Credentials: git's own (helper, SSH agent, URL token).
MEMORYUI_REMOTE = os.environ.get("MEMORYUI_REMOTE", "").strip()
MEMORYUI_REMOTE_BRANCH = os.environ.get("MEMORYUI_REMOTE_BRANCH", "").strip()  # "": remote's
MEMORYUI_SYNC_INTERVAL = float(_env_number("MEMORYUI_SYNC_INTERVAL", "30", float))  # 0: on demand
MEMORYUI_SYNC_TIMEOUT = float(_env_number("MEMORYUI_SYNC_TIMEOUT", "120", float))
MEMORYUI_SYNC_PUSH = _env_choice("MEMORYUI_SYNC_PUSH", "auto", ("auto", "manual"))
# -- end of sync ----------------------------------------------------------------

# -- proposals (docs/review.md "Proposals and policies") -------------------------------
# An http(s) URL that receives a JSON POST for each new proposal (empty: none).
MEMORYUI_PROPOSAL_WEBHOOK = os.environ.get("MEMORYUI_PROPOSAL_WEBHOOK", "").strip()
if MEMORYUI_PROPOSAL_WEBHOOK and not MEMORYUI_PROPOSAL_WEBHOOK.startswith(("http://",
                                                                          "https://")):
    raise ImproperlyConfigured("MEMORYUI_PROPOSAL_WEBHOOK must be an http:// or https:// URL")

# -- sign-in throttling (django-axes; docs/operations.md "Security") --------------------
# After MEMORYUI_LOGIN_FAILURES failed sign-ins for one user name, or from one address, within
# MEMORYUI_LOGIN_COOLOFF seconds, that name or address is refused until the cool-off has
# passed since its last failure (0 failures: no throttling). Bearer tokens that fail on /api,
# /mcp or the feed count against their address. `manage.py user unlock` lifts it.
MEMORYUI_LOGIN_FAILURES = int(_env_number("MEMORYUI_LOGIN_FAILURES", "10", int))
MEMORYUI_LOGIN_COOLOFF = float(_env_number("MEMORYUI_LOGIN_COOLOFF", "900", float, minimum=1))
AXES_ENABLED = MEMORYUI_LOGIN_FAILURES > 0
AXES_FAILURE_LIMIT = max(1, MEMORYUI_LOGIN_FAILURES)
AXES_COOLOFF_TIME = timedelta(seconds=MEMORYUI_LOGIN_COOLOFF)
AXES_LOCKOUT_PARAMETERS = "memoryui.throttle.lockout_parameters"
AXES_LOCKOUT_CALLABLE = "memoryui.web.browse.signin.locked_out"
# Attempts refused during a lockout do not restart it: the page can say when it ends.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = True  # successful sign-ins are not kept (the failures are)
AXES_VERBOSE = False
AXES_SENSITIVE_PARAMETERS = ["username", "ip_address", "token"]  # never kept: the feed's ?token=
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out name or address
    "django.contrib.auth.backends.ModelBackend",
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "memoryui",
]

MIDDLEWARE = [
    "memoryui.middleware.BodyLimitMiddleware",
    "memoryui.middleware.ApiErrorMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # The browser's own (static files, sessions, sign-in, messages, htmx) skip /api/ and /mcp.
    "memoryui.middleware.PageStaticFiles",
    "memoryui.middleware.PageSessions",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "memoryui.middleware.PageAuthentication",
    "memoryui.middleware.PageMessages",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "memoryui.middleware.PageHtmx",
    "memoryui.middleware.SecurityHeadersMiddleware",
    "axes.middleware.AxesMiddleware",  # turns a refused sign-in into the lockout page
]

ROOT_URLCONF = "memoryui.urls"
WSGI_APPLICATION = "memoryui.wsgi.application"
ASGI_APPLICATION = "memoryui.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memoryui.context.memoryui",
                "memoryui.web.sync.context.sync_badge",
            ],
            # The UI's tags live under web/ (they build on it); registered by name here.
            "libraries": {"memoryui_browse": "memoryui.web.templatetags.memoryui_browse",
                          "memoryui_review": "memoryui.web.review.tags",
                          "memoryui_secrets": "memoryui.web.secrets.tags",
                          "memoryui_proposals": "memoryui.web.proposals.tags"},
        },
    },
]

DATABASES = {"default": _database()}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL lets several server processes read while one writes.
    DATABASES["default"].setdefault("OPTIONS", {})["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000; "
        "PRAGMA cache_size=-512;"  # 512 KB of pages per connection: one per request thread
    )
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    # A file, not a server: a connection per request thread costs no one a client slot, and
    # opening one (WAL setup, Django's SQL functions registered) costs a quarter of a
    # /healthz. Request threads are a fixed pool (MEMORYUI_THREADS per worker,
    # memoryui/pooled.py), so each keeps its own connection for good.
    DATABASES["default"]["CONN_MAX_AGE"] = None
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = _time_zone()
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = _env_path("STATIC_ROOT", VAR_DIR / "staticfiles")
WHITENOISE_USE_FINDERS = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise warns about a missing root

# Security headers (the CSP itself is set by memoryui.middleware).
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = _env_bool("SECURE_COOKIES")
CSRF_COOKIE_SECURE = _env_bool("SECURE_COOKIES")
DATA_UPLOAD_MAX_MEMORY_SIZE = MEMORYUI_MAX_BODY + 64 * 1024

# Logging: everything to stderr. LOG_LEVEL (default INFO) is the level of memoryui, Django
# (every unhandled exception is logged on `django.request` with its traceback) and uvicorn
# under `serve`; other libraries report warnings and above. Nothing logs request bodies or
# headers, so tokens and memory text never reach the log.
LOG_LEVEL = _log_level()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    # A 4xx is logged as one line, without a traceback (on the logger for every handler's
    # sake, and on the handler for django.security's children).
    "filters": {"refusals": {"()": "memoryui.logfilters.ExpectedRefusals"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr",
                            "formatter": "plain", "filters": ["refusals"]}},
    "root": {"handlers": ["stderr"],
             "level": LOG_LEVEL if LOG_LEVEL in ("ERROR", "CRITICAL") else "WARNING"},
    "loggers": {
        # Replaces Django's DEBUG-only console and mail_admins handlers: records go to root.
        "django": {"level": LOG_LEVEL},
        "django.request": {"filters": ["refusals"]},
        "memoryui": {"level": LOG_LEVEL},
    },
}
