"""What Spark's whole-stage code generation makes of a plan: the size of its largest methods."""

from __future__ import annotations

import re

from pyspark.sql import DataFrame

# HotSpot never JIT-compiles a method of more bytecode than this (-XX:+DontCompileHugeMethods,
# the default): such a method runs interpreted for the whole query, several times slower.
HUGE_METHOD_BYTES = 8000


def max_method_sizes(df: DataFrame) -> list[int]:
    """The largest generated method (bytes of bytecode) of each whole-stage subtree of ``df``.

    Adaptive execution is switched off while planning, so the subtrees exist before running.
    """
    spark = df.sparkSession
    adaptive = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        planned = df.select("*")  # a fresh plan under this setting
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        text = jvm.PythonSQLUtils.explainString(planned._jdf.queryExecution(), "codegen")
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", adaptive)
    return [int(n) for n in re.findall(r"maxMethodCodeSize:(\d+)", str(text))]
