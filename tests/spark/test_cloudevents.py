"""CloudEvents attributes as columns from the kheaders data source (native SQL, local Spark),
and the Spark example of docs/cloudevents.md."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from kheaders import CloudEventError, Producer
from kheaders.cloudevents import CloudEventSerializer, Event
from kheaders.spark import (
    cloudevent_attribute,
    cloudevent_columns,
    register,
    register_cloudevent_functions,
)

pytestmark = pytest.mark.integration
DOC = Path(__file__).resolve().parents[2] / "docs" / "cloudevents.md"
(SPARK_EXAMPLE,) = [
    b for b in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S) if "kheaders.spark" in b
]
AT = datetime(2018, 4, 5, 3, 56, 24, tzinfo=UTC)


def test_attributes_as_columns_in_both_modes(
    spark: SparkSession, bootstrap: str, topic: str
) -> None:
    event = Event.create(
        "com.example.someevent",
        "/mycontext",
        {"a": 1},
        id="1234",
        time=AT,
        subject="s",
        comexampleext="x",
        n=5,
    )
    for mode, sent in (
        ("binary", event),
        ("structured", event),
        ("binary", Event.create("t", "/s", id="tomb")),
    ):
        producer = Producer(
            {"bootstrap.servers": bootstrap}, value_serializer=CloudEventSerializer(mode)
        )  # type: ignore[arg-type]
        producer.produce(topic, sent)
        assert producer.flush(30) == 0
    # a binary record with a duplicated ce_id and a non-UTF-8 subject: those columns are NULL
    raw = Producer({"bootstrap.servers": bootstrap})
    raw.produce(topic, b"x", headers=[("ce_id", b"1"), ("CE_ID", b"2"), ("ce_subject", b"\xff")])
    assert raw.flush(30) == 0

    register(spark)
    df = (
        spark.read.format("kheaders")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("includeHeaders", "true")
        .load()
        .orderBy("offset")
    )
    rows = df.select(*cloudevent_columns("comexampleext", "n")).collect()
    first = rows[0].asDict()
    assert first == {
        "ce_specversion": "1.0",
        "ce_id": "1234",
        "ce_source": "/mycontext",
        "ce_type": "com.example.someevent",
        "ce_subject": "s",
        "ce_time": AT.replace(tzinfo=None),
        "ce_datacontenttype": "application/json",
        "ce_dataschema": None,
        "ce_comexampleext": "x",
        "ce_n": "5",
    }
    # structured: the same columns from the JSON value; there JSON data implies its type
    assert rows[1].asDict() == {**first, "ce_datacontenttype": None}
    assert (rows[2]["ce_id"], rows[2]["ce_datacontenttype"]) == ("tomb", None)
    assert (rows[3]["ce_id"], rows[3]["ce_subject"]) == (None, None)

    assert register_cloudevent_functions(spark) == ["cloudevent_attribute", "cloudevent_time"]
    df.createOrReplaceTempView("events")
    sql = spark.sql(
        "SELECT cloudevent_attribute(headers, value, 'type') AS type,"
        " cloudevent_attribute(headers, value, 'Bad') AS bad,"
        " cloudevent_time(headers, value) AS time FROM events ORDER BY offset"
    ).collect()
    assert [r["type"] for r in sql] == ["com.example.someevent", "com.example.someevent", "t", None]
    assert [r["bad"] for r in sql] == [None] * 4
    assert sql[0]["time"] == AT.replace(tzinfo=None)
    with pytest.raises(CloudEventError, match="lower-case"):
        cloudevent_attribute("Bad")

    namespace: dict[str, Any] = {"df": df, "spark": spark}
    exec(compile(SPARK_EXAMPLE, "docs/cloudevents.md", "exec"), namespace)
    events = namespace["events"].orderBy("offset").collect()
    assert [r["ce_comexampleext"] for r in events] == ["x", "x", None, None]
    types = {r["type"]: r["n"] for r in namespace["types"].collect()}
    assert types == {"com.example.someevent": 2, "t": 1, None: 1}
