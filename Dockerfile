# memoryui: one container serving the UI, the agent API and MCP over a git workspace volume.
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
COPY pyproject.toml README.md manage.py ./
COPY memoryui ./memoryui
COPY templates ./templates
COPY static ./static
RUN pip install --no-cache-dir . \
 && SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
 && useradd --create-home --uid 10001 memoryui \
 && mkdir -p /data \
 && chown -R memoryui:memoryui /data

USER memoryui
RUN git config --global --add safe.directory /data/workspace
VOLUME ["/data"]
EXPOSE 8000
ENTRYPOINT ["python", "manage.py", "serve", "--bind", "0.0.0.0:8000"]
CMD ["--workers", "2"]
