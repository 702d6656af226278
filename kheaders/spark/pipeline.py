"""The Spark pipeline job: ``python -m kheaders.spark.pipeline --bootstrap ... --topic ...``.

Also runs under ``spark-submit kheaders/spark/pipeline.py ...``; see :func:`run_pipeline`.
"""

import sys

from kheaders import _public
from kheaders.spark._pipeline import (
    MAX_TRACES,
    PipelineResult,
    TraceRow,
    format_report,
    run_pipeline,
    trace_report,
)
from kheaders.spark._pipeline_cli import main

__all__ = [
    "MAX_TRACES",
    "PipelineResult",
    "TraceRow",
    "format_report",
    "main",
    "run_pipeline",
    "trace_report",
]
_public.claim("kheaders.spark.pipeline", globals())

if __name__ == "__main__":
    sys.exit(main())
