# The example services (examples/orders.py, shipping.py, audit.py) for docker-compose.yml.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# kheaders (and the deprecated top-level interceptors package the wheel still ships), an
# OpenTelemetry SDK for spans, and the OTLP exporter so spans reach Jaeger. The demo extra's Spark and embedded broker are not needed here.
COPY pyproject.toml README.md hatch_build.py ./
COPY kheaders ./kheaders
COPY interceptors ./interceptors
RUN pip install . opentelemetry-sdk opentelemetry-exporter-otlp

COPY examples ./examples

RUN useradd --create-home --uid 10001 app
USER app

CMD ["python", "-m", "examples.orders"]
