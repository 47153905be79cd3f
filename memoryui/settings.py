"""memoryui settings: one file, driven by environment variables with safe defaults."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("MEMORYUI_VAR_DIR", BASE_DIR / "var"))


def _env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in ("1", "true", "yes", "on")


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
MEMORYUI_WORKSPACE = Path(os.environ.get("MEMORYUI_WORKSPACE", VAR_DIR / "workspace"))
MEMORYUI_LAYOUT = os.environ.get("MEMORYUI_LAYOUT", "duragent")
# Seconds agent writes may wait to be grouped into one commit per author (0: commit at once).
MEMORYUI_COMMIT_DELAY = float(os.environ.get("MEMORYUI_COMMIT_DELAY", "0"))
MEMORYUI_SEARCH_DB = Path(os.environ.get("MEMORYUI_SEARCH_DB", VAR_DIR / "search.sqlite3"))
MEMORYUI_MAX_BODY = int(os.environ.get("MEMORYUI_MAX_BODY", str(1024 * 1024)))
MEMORYUI_RECALL_MAX_DAYS = int(os.environ.get("MEMORYUI_RECALL_MAX_DAYS", "90"))

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
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
        conn_max_age=60,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL lets several server processes read while one writes.
    DATABASES["default"].setdefault("OPTIONS", {})["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;"
    )
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"

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
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "staticfiles"))
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

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "memoryui": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    },
}
