"""memoryui settings: one file, driven by environment variables with safe defaults."""

from __future__ import annotations

import os
import secrets
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


def _env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in ("1", "true", "yes", "on")


def _env_number(name: str, default: str, kind: type[int] | type[float]) -> int | float:
    """A numeric setting; a typo stops the start with a sentence, not a traceback."""
    raw = os.environ.get(name, default).strip()
    try:
        value = kind(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a{'n integer' if kind is int else ' number'}"
                                   f", got {raw!r}") from None
    if value < 0:
        raise ImproperlyConfigured(f"{name} must not be negative, got {raw!r}")
    return value


def _log_level() -> str:
    level = os.environ.get("LOG_LEVEL", "INFO").strip().upper() or "INFO"
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ImproperlyConfigured(f"LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or "
                                   f"CRITICAL, got {level!r}")
    return level


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

# -- memoryui -------------------------------------------------------------------
MEMORYUI_WORKSPACE = _env_path("MEMORYUI_WORKSPACE", VAR_DIR / "workspace")
MEMORYUI_LAYOUT = os.environ.get("MEMORYUI_LAYOUT", "duragent")
# Seconds agent and API writes may wait to be grouped into one commit per author (0: commit
# before each write returns). The one default for `serve`, the tests' servers and any ASGI
# server; UI edits always commit at once.
MEMORYUI_COMMIT_DELAY = float(_env_number("MEMORYUI_COMMIT_DELAY", "0.2", float))
# Notice files changed outside memoryui with the file system's notifications (inotify via
# watchfiles). 0: re-check with `git status` at most every 60 s, when a page asks.
MEMORYUI_WATCH = os.environ.get("MEMORYUI_WATCH", "1").strip().lower() not in ("0", "false", "no", "off")
MEMORYUI_SEARCH_DB = _env_path("MEMORYUI_SEARCH_DB", VAR_DIR / "search.sqlite3")
# auto: Postgres full-text when DATABASE_URL is Postgres and no sync remote is set; with a remote
# (several instances, each its own clone) every instance keeps its own SQLite index, which catches
# up from its own files (DESIGN.md 3b). sqlite / postgres force one.
MEMORYUI_SEARCH_BACKEND = os.environ.get("MEMORYUI_SEARCH_BACKEND", "auto").strip() or "auto"
if MEMORYUI_SEARCH_BACKEND not in ("auto", "sqlite", "postgres"):
    raise ImproperlyConfigured("MEMORYUI_SEARCH_BACKEND must be auto, sqlite or postgres, "
                               f"got {MEMORYUI_SEARCH_BACKEND!r}")
# Seconds an API token stays verified in a worker (0: ask the database every request). A token
# revoked in this instance stops at once; one revoked by another instance sharing the
# database stops within this time.
MEMORYUI_TOKEN_CACHE = float(_env_number("MEMORYUI_TOKEN_CACHE", "5", float))
MEMORYUI_MAX_BODY = int(_env_number("MEMORYUI_MAX_BODY", str(1024 * 1024), int))
# Requests one server worker runs at once (threads of its pool; each request runs whole in one).
MEMORYUI_THREADS = max(1, int(_env_number("MEMORYUI_THREADS", "16", int)))
# Promoted text carries a dated marker linking back to its daily entry (`marker`), or nothing
# (`none`); the commit's `Promoted-From` trailer is written either way.
MEMORYUI_PROVENANCE = os.environ.get("MEMORYUI_PROVENANCE", "marker").strip().lower() or "marker"
if MEMORYUI_PROVENANCE not in ("marker", "none"):
    raise ImproperlyConfigured(f"MEMORYUI_PROVENANCE must be marker or none, got "
                               f"{MEMORYUI_PROVENANCE!r}")
# Secrets in written text (memoryui/secrets; README "Secrets"): `block` refuses an agent's
# write that adds one (people's writes are flagged), `flag` commits and flags every write,
# `off` scans nothing.
MEMORYUI_SECRETS = os.environ.get("MEMORYUI_SECRETS", "block").strip().lower() or "block"
if MEMORYUI_SECRETS not in ("block", "flag", "off"):
    raise ImproperlyConfigured(f"MEMORYUI_SECRETS must be block, flag or off, got "
                               f"{MEMORYUI_SECRETS!r}")

# -- sync with a git remote (sync-core; README "Sync") --------------------------
# Any URL git accepts; empty = no sync. Credentials: git's own (helper, SSH agent, URL token).
MEMORYUI_REMOTE = os.environ.get("MEMORYUI_REMOTE", "").strip()
MEMORYUI_REMOTE_BRANCH = os.environ.get("MEMORYUI_REMOTE_BRANCH", "").strip()  # "": remote's
MEMORYUI_SYNC_INTERVAL = float(_env_number("MEMORYUI_SYNC_INTERVAL", "30", float))  # 0: on demand
MEMORYUI_SYNC_TIMEOUT = float(_env_number("MEMORYUI_SYNC_TIMEOUT", "120", float))
MEMORYUI_SYNC_PUSH = os.environ.get("MEMORYUI_SYNC_PUSH", "auto").strip().lower() or "auto"
if MEMORYUI_SYNC_PUSH not in ("auto", "manual"):
    raise ImproperlyConfigured(f"MEMORYUI_SYNC_PUSH must be auto or manual, got "
                               f"{MEMORYUI_SYNC_PUSH!r}")
# -- end of sync ----------------------------------------------------------------

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "memoryui",
]

MIDDLEWARE = [
    "memoryui.middleware.BodyLimitMiddleware",
    "memoryui.middleware.ApiErrorMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "memoryui.middleware.SecurityHeadersMiddleware",
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
                          "memoryui_secrets": "memoryui.web.secrets.tags"},
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", "").strip() or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        # Under ASGI each sync view runs in a pool thread: persistent connections pile up one
        # per thread per worker and exhausted Postgres' 100 clients under 12 agents (500s on
        # `remember`). Django's docs: disable them under ASGI.
        conn_max_age=0,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL lets several server processes read while one writes.
    DATABASES["default"].setdefault("OPTIONS", {})["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000; "
        "PRAGMA cache_size=-512;"  # 512 KB of pages per connection: one per request thread
    )
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    # A file, not a server: a connection per request thread costs no one a client slot, and
    # opening one (WAL setup, Django's SQL functions registered) was 0.35 ms of the 1.4 ms
    # of CPU a /healthz took in a worker. Request threads are a fixed pool (MEMORYUI_THREADS
    # per worker, memoryui/asgi.py), so each keeps its own connection for good.
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
TIME_ZONE = os.environ.get("TZ", "UTC")
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
    "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr",
                            "formatter": "plain"}},
    "root": {"handlers": ["stderr"],
             "level": LOG_LEVEL if LOG_LEVEL in ("ERROR", "CRITICAL") else "WARNING"},
    "loggers": {
        # Replaces Django's DEBUG-only console and mail_admins handlers: records go to root.
        "django": {"level": LOG_LEVEL},
        "memoryui": {"level": LOG_LEVEL},
    },
}
