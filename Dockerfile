# memoryui: one container serving the UI, the agent API and MCP over a git workspace volume.
#
#   docker build -t memoryui .
#   docker run -p 8000:8000 -v memoryui:/data -e ALLOWED_HOSTS=memory.example.com memoryui
#
# ALLOWED_HOSTS: the host names the server answers for (comma-separated; also the MCP
# Host/Origin allow-list). DATABASE_URL=postgres://... uses PostgreSQL (the driver is in the
# image); without it the database is SQLite under /data/var. LOG_LEVEL (default INFO) sets
# the server's log level; logs go to stderr (`docker logs`).
FROM python:3.11-slim

RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    MEMORYUI_WORKSPACE=/data/workspace \
    MEMORYUI_VAR_DIR=/data/var \
    STATIC_ROOT=/app/staticfiles \
    ALLOWED_HOSTS=localhost,127.0.0.1

WORKDIR /app
# Pinned dependencies first (a layer that changes only with requirements.lock), then the app.
COPY requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock
COPY pyproject.toml README.md manage.py ./
COPY memoryui ./memoryui
COPY templates ./templates
COPY static ./static
RUN pip install --no-cache-dir --no-deps . \
 && pip check \
 && SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
 && useradd --create-home --uid 10001 memoryui \
 && mkdir -p /data \
 && chown -R memoryui:memoryui /data

USER memoryui
RUN git config --global --add safe.directory /data/workspace
VOLUME ["/data"]
EXPOSE 8000
# /healthz answers 200 once the workspace and the database both work (503 otherwise).
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
  CMD ["python", "-m", "memoryui.healthcheck", "http://127.0.0.1:8000/healthz"]
ENTRYPOINT ["python", "manage.py", "serve", "--bind", "0.0.0.0:8000"]
CMD ["--workers", "2"]
