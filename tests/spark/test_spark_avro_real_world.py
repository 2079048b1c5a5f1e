"""What real subjects bring: unions of records across versions, tombstones, writers the reader
cannot read (decode errors that say why), and the generated module's session time zone.

Records are written with fastavro in the Confluent framing and decoded in a local[2] session;
no Kafka involved (read_topic is given an in-memory Kafka-shaped frame).
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from pyspark.testing import assertDataFrameEqual

from spark_avro.compat import incompatible_writers
from spark_avro.decode import decode_confluent, split_bad_records
from tests.spark.framing import V2_ID, V2_TEXT, WRITERS, confluent, kafka_frame, ride

PERSON = {"type": "record", "name": "Person", "namespace": "crm", "fields": [
    {"name": "name", "type": "string"}]}  # fmt: skip
COMPANY = {"type": "record", "name": "Company", "namespace": "crm", "fields": [
    {"name": "vat", "type": "string"}]}  # fmt: skip
TRUST = {"type": "record", "name": "Trust", "namespace": "crm", "fields": [
    {"name": "trustee", "type": "string"}]}  # fmt: skip


def payment(payer: list) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": "Payment",
            "namespace": "shop",
            "fields": [{"name": "id", "type": "long"}, {"name": "payer", "type": payer}],
        }
    )


# Version 2 inserts a branch in the middle: positionally, member1 changes meaning.
PAYMENT_V1 = payment([PERSON, COMPANY])
PAYMENT_V2 = payment([PERSON, TRUST, COMPANY])
PAYMENTS = {11: PAYMENT_V1, 12: PAYMENT_V2}


@pytest.fixture(scope="module")
def payments(spark):
    return kafka_frame(
        spark,
        [
            confluent(11, PAYMENT_V1, {"id": 1, "payer": ("crm.Company", {"vat": "FR1"})}),
            confluent(12, PAYMENT_V2, {"id": 2, "payer": ("crm.Trust", {"trustee": "Ann"})}),
            confluent(12, PAYMENT_V2, {"id": 3, "payer": ("crm.Company", {"vat": "DE2"})}),
            confluent(11, PAYMENT_V1, {"id": 4, "payer": ("crm.Person", {"name": "Bo"})}),
        ],
        topic="payments",
    )


def payers(decoded) -> dict:
    return {r.id: r.payer.asDict(recursive=True) for r in decoded.collect()}


def test_union_members_are_named_after_their_record_across_versions(payments):
    decoded = decode_confluent(payments, writer_schemas=PAYMENTS, reader_schema=PAYMENT_V2)
    assert decoded.schema["payer"].dataType.fieldNames() == [
        "member_Person",
        "member_Trust",
        "member_Company",
    ]
    none = {"member_Person": None, "member_Trust": None, "member_Company": None}
    assert payers(decoded) == {
        1: {**none, "member_Company": {"vat": "FR1"}},
        2: {**none, "member_Trust": {"trustee": "Ann"}},
        3: {**none, "member_Company": {"vat": "DE2"}},
        4: {**none, "member_Person": {"name": "Bo"}},
    }


def test_a_reader_on_the_old_version_keeps_the_same_member_names(payments):
    v1_only = payments.where("offset in (0, 2, 3)")  # the v2 Trust payment v1 cannot read
    decoded = decode_confluent(v1_only, writer_schemas=PAYMENTS, reader_schema=PAYMENT_V1)
    assert decoded.schema["payer"].dataType.fieldNames() == ["member_Person", "member_Company"]
    assert payers(decoded)[3] == {"member_Person": None, "member_Company": {"vat": "DE2"}}


def test_stable_union_names_false_keeps_the_positional_members(payments):
    decoded = decode_confluent(
        payments, writer_schemas=PAYMENTS, reader_schema=PAYMENT_V2, stable_union_names=False
    )
    assert decoded.schema["payer"].dataType.fieldNames() == ["member0", "member1", "member2"]
    assert payers(decoded)[1] == {"member0": None, "member1": None, "member2": {"vat": "FR1"}}


def test_the_engine_finds_a_branch_removed_from_the_reader_and_decoding_says_so(spark, payments):
    incompatible = incompatible_writers(PAYMENTS, PAYMENT_V1)
    assert list(incompatible) == [12]
    assert incompatible[12].startswith("MISSING_UNION_BRANCH at /fields/1/type")
    decoded = decode_confluent(
        payments, writer_schemas=PAYMENTS, reader_schema=PAYMENT_V1, incompatible=incompatible
    )
    rows = {r.offset: r for r in decoded.collect()}
    assert rows[0].payer.member_Company.vat == "FR1" and rows[0].decode_error_kind is None
    # Decided per writer id: every v2 record is incompatible, even one Avro could resolve.
    for offset in (1, 2):
        assert rows[offset].decode_error_kind == "incompatible" and rows[offset].id is None
        assert rows[offset].decode_error.startswith(
            "writer schema id 12 cannot be read as the reader schema (records with this id are "
            "not decoded): MISSING_UNION_BRANCH at /fields/1/type"
        )


AMOUNT_AS_STRING = json.dumps(
    {"type": "record", "name": "R", "fields": [{"name": "amount", "type": "string"}]}
)
AMOUNT_AS_FLOAT = json.dumps(
    {"type": "record", "name": "R", "fields": [{"name": "amount", "type": "float"}]}
)


def test_every_writer_incompatible_still_gives_the_reader_columns(spark):
    writers = {6: AMOUNT_AS_STRING}
    df = kafka_frame(spark, [confluent(6, AMOUNT_AS_STRING, {"amount": "12.50"})])
    incompatible = incompatible_writers(writers, AMOUNT_AS_FLOAT)
    assert incompatible[6].startswith("TYPE_MISMATCH at /fields/0/type: ")
    decoded = decode_confluent(
        df, writer_schemas=writers, reader_schema=AMOUNT_AS_FLOAT, incompatible=incompatible
    )
    assert dict(decoded.dtypes)["amount"] == "float"
    row = decoded.first()
    assert (row.amount, row.schema_id, row.decode_error_kind) == (None, 6, "incompatible")
    assert "TYPE_MISMATCH at /fields/0/type" in row.decode_error


def test_a_corrupt_body_of_a_compatible_writer_no_longer_blames_the_reader(spark):
    good = confluent(V2_ID, V2_TEXT, ride(1, tip_amount=1.0, store_and_fwd_flag=None))
    df = kafka_frame(spark, [good[:-3]])
    row = decode_confluent(
        df,
        writer_schemas=WRITERS,
        reader_schema=V2_TEXT,
        incompatible=incompatible_writers(WRITERS, V2_TEXT),
    ).first()
    assert row.decode_error_kind == "corrupt"
    assert (
        row.decode_error
        == f"undecodable Avro body for schema id {V2_ID}: truncated or not written with it"
    )


def test_an_incompatible_id_without_a_writer_schema_is_refused(spark):
    df = kafka_frame(spark, [])
    with pytest.raises(ValueError, match=r"incompatible names schema ids \[7\]"):
        decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT, incompatible={7: "x"})


def test_read_topic_checks_each_writer_against_the_reader_version(spark, payments, monkeypatch):
    import spark_avro.reader as reader

    monkeypatch.setattr(reader, "kafka_source", lambda *args, **kwargs: payments)
    decoded = reader.read_topic(
        spark, "unused:9092", "payments", schemas=PAYMENTS, reader_schema=PAYMENT_V1
    )
    kinds = {r.offset: r.decode_error_kind for r in decoded.collect()}
    assert kinds == {0: None, 1: "incompatible", 2: "incompatible", 3: None}


@pytest.fixture(scope="module")
def with_tombstones(spark):
    good = confluent(V2_ID, V2_TEXT, ride(1, tip_amount=1.0, store_and_fwd_flag="N"))
    df = kafka_frame(spark, [good, None, b"\x01junk", None])
    return decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT)


def test_a_tombstone_is_marked_and_has_no_error_kind(with_tombstones):
    rows = {r.offset: r for r in with_tombstones.collect()}
    assert [rows[o].is_tombstone for o in range(4)] == [False, True, False, True]
    assert rows[1].decode_error is None and rows[1].decode_error_kind is None
    assert rows[2].decode_error_kind == "not_framed"


def test_split_bad_records_keeps_tombstones_out_of_both_frames_by_default(with_tombstones):
    good, bad = split_bad_records(with_tombstones)
    assert [r.offset for r in good.collect()] == [0]
    assert "is_tombstone" not in good.columns
    assert [r.offset for r in bad.collect()] == [2]


def test_split_bad_records_keeps_tombstones_in_the_good_frame_when_asked(with_tombstones):
    good, bad = split_bad_records(with_tombstones, keep_tombstones=True)
    assert sorted((r.offset, r.is_tombstone) for r in good.collect()) == [
        (0, False),
        (1, True),
        (3, True),
    ]
    assert [r.offset for r in bad.collect()] == [2]


@pytest.fixture(scope="module")
def payments_module(tmp_path_factory):
    from spark_avro.codegen import ReaderModuleSpec, WriterVersion, render_reader_module

    spec = ReaderModuleSpec(
        subject="payments-value",
        topic="payments",
        writers=(
            WriterVersion(11, 1, json.loads(PAYMENT_V1)),
            WriterVersion(12, 2, json.loads(PAYMENT_V2)),
        ),
        reader_version=1,
    )
    path = tmp_path_factory.mktemp("gen") / "payments_reader.py"
    path.write_text(render_reader_module(spec))
    module_spec = importlib.util.spec_from_file_location("payments_reader", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    assert "schemacli" not in {name.split(".")[0] for name in vars(module)}
    return module


def test_generated_module_decodes_unions_and_incompatible_writers_like_the_library(
    payments_module, payments
):
    assert set(payments_module.INCOMPATIBLE_WRITERS) == {12}
    ours = payments_module.decode_confluent(
        payments,
        writer_schemas=payments_module.WRITER_SCHEMAS,
        reader_schema=payments_module.READER_SCHEMA,
        incompatible=payments_module.INCOMPATIBLE_WRITERS,
    )
    library = decode_confluent(
        payments,
        writer_schemas=PAYMENTS,
        reader_schema=PAYMENT_V1,
        incompatible=incompatible_writers(PAYMENTS, PAYMENT_V1),
    )
    assertDataFrameEqual(ours, library)
    assert {r.decode_error_kind for r in ours.collect()} == {None, "incompatible"}


def test_generated_module_sets_the_session_time_zone_utc_by_default(spark, payments_module):
    try:
        spark.conf.set("spark.sql.session.timeZone", "America/New_York")
        payments_module.read(spark, "localhost:1")  # a batch Kafka frame: nothing is read yet
        assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
        payments_module.read(spark, "localhost:1", time_zone="Europe/Paris")
        assert spark.conf.get("spark.sql.session.timeZone") == "Europe/Paris"
        payments_module.read(spark, "localhost:1", time_zone=None)
        assert spark.conf.get("spark.sql.session.timeZone") == "Europe/Paris"
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": "string"}],
}
ORDER_V2 = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}


def test_reader_version_1_on_v2_records_says_incompatible_with_the_engine_finding(
    spark, fake, monkeypatch
):
    import spark_avro.reader as reader

    v1_id = fake.add("orders-value", json.dumps(ORDER_V1))
    v2_id = fake.add("orders-value", json.dumps(ORDER_V2))
    frame = kafka_frame(
        spark,
        [
            confluent(v1_id, json.dumps(ORDER_V1), {"id": 1, "note": "first"}),
            confluent(v2_id, json.dumps(ORDER_V2), {"id": 2}),
            confluent(v1_id, json.dumps(ORDER_V1), {"id": 3, "note": "third"})[:-2],
        ],
        topic="orders",
    )
    monkeypatch.setattr(reader, "kafka_source", lambda *args, **kwargs: frame)
    decoded = reader.read_topic(
        spark,
        "unused:9092",
        "orders",
        subject="orders-value",
        registry_url=fake.url,
        reader_version=1,
    )
    rows = {r.offset: r for r in decoded.collect()}
    assert (rows[0].id, rows[0].note, rows[0].decode_error_kind) == (1, "first", None)
    assert rows[1].decode_error_kind == "incompatible"
    assert rows[1].decode_error.startswith(
        f"writer schema id {v2_id} cannot be read as the reader schema (records with this id are "
        "not decoded): READER_FIELD_MISSING_DEFAULT_VALUE at /fields/1: "
    )
    assert rows[2].decode_error_kind == "corrupt"
    assert rows[2].decode_error.endswith(": truncated or not written with it")


def test_stream_topic_decodes_unions_by_name_and_reports_incompatible_writers(
    spark, fake, monkeypatch, tmp_path
):
    import spark_avro.reader as reader
    from tests.spark.framing import KAFKA_DDL

    v1_id = fake.add("payments-value", PAYMENT_V1)
    v2_id = fake.add("payments-value", PAYMENT_V2)
    kafka_frame(
        spark,
        [
            confluent(v1_id, PAYMENT_V1, {"id": 1, "payer": ("crm.Company", {"vat": "FR1"})}),
            confluent(v2_id, PAYMENT_V2, {"id": 2, "payer": ("crm.Trust", {"trustee": "Ann"})}),
            None,
        ],
        topic="payments",
    ).write.parquet(str(tmp_path / "topic"))
    source = spark.readStream.schema(KAFKA_DDL).parquet(str(tmp_path / "topic"))
    monkeypatch.setattr(reader, "kafka_source", lambda *args, **kwargs: source)
    batches = []
    query = reader.stream_topic(
        spark,
        "unused:9092",
        "payments",
        subject="payments-value",
        registry_url=fake.url,
        reader_version=1,
        process_batch=lambda batch, batch_id: batches.extend(batch.collect()),
        checkpoint_location=str(tmp_path / "checkpoint"),
        available_now=True,
    )
    query.awaitTermination(120)
    rows = {r.offset: r for r in batches}
    assert rows[0].payer.asDict(recursive=True) == {
        "member_Person": None,
        "member_Company": {"vat": "FR1"},
    }
    assert rows[1].decode_error_kind == "incompatible"
    assert "MISSING_UNION_BRANCH at /fields/1/type" in rows[1].decode_error
    assert rows[2].is_tombstone and rows[2].decode_error is None
