"""job_queue.log record format (htcondor.md §3.1) and keys."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.paths import TESTS
from engine.classad import is_valid_expr
from engine.queue import records as R
from engine.queue.records import Corrupt, Record, format_record, parse_line

DATA = TESTS / "data" / "queuelog"


def test_example_3_6_lines_round_trip_byte_for_byte():
    """htcondor.md §3.6: every line of the constructed example parses and formats back to itself,
    including the trailing blank of `105 ` / `106 ` and `(empty)` types."""
    text = (DATA / "example_3_6.log").read_text()
    lines = text.split("\n")[:-1]
    assert "105 " in lines and "106 " in lines
    for line in lines:
        rec = parse_line(line)
        assert isinstance(rec, Record), (line, rec)
        assert format_record(rec) == line


def test_new_ad_fields_and_target_type():
    """htcondor.md §3.1 op 101: `(empty)` reads back as ""; TargetType is Machine for Job,
    MyType for `*` types, `(empty)` otherwise; always three fields."""
    assert parse_line("101 1.-2 ClusterPvt (empty)") == Record(101, "1.-2", "ClusterPvt", "")
    assert format_record(R.new_ad("0.1", "Owner")) == "101 0.1 Owner (empty)"
    assert format_record(R.new_ad("01.-1", "Job")) == "101 01.-1 Job Machine"
    assert format_record(R.new_ad("x", "*")) == "101 x * *"
    assert format_record(R.new_ad("0.3", "")) == "101 0.3 (empty) (empty)"
    assert isinstance(parse_line("101 1.0 Job"), Corrupt)  # HTCondor would read the next line's op


def test_set_attribute_value_is_rest_of_line():
    """htcondor.md §3.1 op 103: the value is the rest of the line after the single separating
    blank; extra leading blanks are kept; an empty value is an error."""
    assert parse_line('103 1.0 Cmd "/bin/sleep"') == Record(103, "1.0", "Cmd", '"/bin/sleep"')
    assert parse_line("103 1.0 X  5").value == " 5"
    req = "103 01.-1 Requirements (TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\")"
    assert parse_line(req).value == '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX")'
    assert isinstance(parse_line("103 1.0 X "), Corrupt)
    assert isinstance(parse_line("103 1.0 X"), Corrupt)


def test_strict_parsing_of_values():
    """htcondor.md §6 (python bindings LogReader test): `103 23605.0 Foo ::` is a ClassAd error;
    §3.3: with strict parsing such a record is corrupt."""
    bad = parse_line("103 23605.0 Foo ::")
    assert isinstance(bad, Corrupt) and bad.value_only
    assert parse_line('103 23605.0 Foo "bar"') == Record(103, "23605.0", "Foo", '"bar"')
    assert isinstance(parse_line("103 23605.0 Foo ::", validate=False), Record)


def test_transaction_markers_need_their_trailing_blank():
    """htcondor.md §3.1: the reader takes "105" plus one whitespace character and then requires
    the newline; 106 must be followed by the newline or `#comment`."""
    assert parse_line("105 ") == R.BEGIN
    assert isinstance(parse_line("105"), Corrupt)
    assert isinstance(parse_line("105  "), Corrupt)
    assert parse_line("106 ") == Record(106)
    assert parse_line("106 # 2025-01-15T10:00:00.000000").value == " 2025-01-15T10:00:00.000000"
    assert isinstance(parse_line("106"), Corrupt)
    assert isinstance(parse_line("106 x"), Corrupt)


def test_bad_op_code_offset_is_after_the_op_word():
    """htcondor.md §6 (erikerlandson blog): a bad op code `ZMG` is reported at the offset just
    after the op word and its blank."""
    bad = parse_line("ZMG 1.0 JobStatus 2")
    assert isinstance(bad, Corrupt) and bad.op_end == 4 and "ZMG" in bad.reason
    assert isinstance(parse_line("999 1.0"), Corrupt)


def test_hist_seq():
    """htcondor.md §3.1 op 107."""
    assert format_record(R.hist_seq(3, 1736935000)) == "107 3 CreationTimestamp 1736935000"
    assert parse_line("107 3 CreationTimestamp 1736935000") == Record(107, "3", "CreationTimestamp", "1736935000")


def test_writer_refuses_newlines_and_blanks():
    """htcondor.md §3.1: LogSetAttribute::WriteBody refuses a key, name or value with a newline."""
    with pytest.raises(R.RecordFormatError):
        format_record(R.set_attr("1.0", "Foo", '"a\nb"'))
    with pytest.raises(R.RecordFormatError):
        format_record(R.set_attr("1.0", "Fo o", "1"))
    with pytest.raises(R.RecordFormatError):
        format_record(R.set_attr("1.0", "Foo", "  "))


def test_keys():
    """htcondor.md §3.1 "Keys": cluster ads carry a leading zero; kinds by exact spelling."""
    assert R.cluster_key(21) == "021.-1" and R.job_key(1, 0) == "1.0"
    assert R.parse_key("021.-1") == (21, -1) and R.parse_key("x") is None
    kinds = {k: R.key_kind(k) for k in ["0.0", "0.2", "1.0", "01.-1", "1.-1", "1.-2", "5.-100", "abc"]}
    assert kinds == {"0.0": R.HEADER, "0.2": R.USER, "1.0": R.JOB, "01.-1": R.CLUSTER, "1.-1": R.OTHER,
                     "1.-2": R.CLUSTER_PVT, "5.-100": R.JOBSET, "abc": R.OTHER}


def test_commit_comment_round_trips():
    """htcondor.md §3.2: `106 # <ISO-8601 local time with microseconds>`, NONDURABLE appended."""
    c = R.commit_comment(1736935200.25)
    assert c.startswith(" ") and R.commit_time(c) == pytest.approx(1736935200.25)
    assert R.commit_comment(1736935200.0, durable=False).endswith(" NONDURABLE")
    assert R.commit_time(R.commit_comment(5.5, durable=False)) == pytest.approx(5.5)


_literals = st.one_of(
    st.integers(-10**20, 10**20).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.text(st.characters(blacklist_characters='"\\\n\0', blacklist_categories=("Cs",)), max_size=12)
    .map(lambda s: f'"{s}"'),
    st.sampled_from(["true", "FALSE", "undefined", "Error", "007", "1.", ".5", "1e5", "- 1", "0x10"]),
    st.text("0123456789.-+eE\"", max_size=8),
)


@settings(max_examples=400, deadline=None)
@given(_literals)
def test_plain_literal_regex_never_accepts_what_classad2_rejects(text):
    """The reader's fast literal check is only a shortcut for classad2's parse (htcondor.md §3.3
    strict parsing): whatever it accepts, classad2 accepts too."""
    if R.PLAIN_VALUE.fullmatch(text):
        assert is_valid_expr(text), text
