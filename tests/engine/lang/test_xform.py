"""Transform engine: condor_transform_ads expectations, job_router_xform, statement semantics.

Sources: htcondor.md §1.3 (statements), §1.4 (matching), §5 (job_router_xform), §6
"condor_transform_ads test expected values"; rules files in tests/data/xform (copied from
shared/data/real/htcondor__htcondor/condor_tests/cmd_transform_ads).
"""

from __future__ import annotations

import re

import pytest

from tests.helpers.paths import TESTS
from engine.lang.config import Config
from engine.lang.param import split_list
from engine.lang.xform import MacroSet, XformError, parse_transform
from engine.lang.xform import universe_number

DATA = TESTS / "data"


def rules(name: str):
    return parse_transform((DATA / "xform" / name).read_text())


def dry_run_ads() -> list[dict[str, str]]:
    """8 job ads shaped like cmd_transform_ads.run builds them: ``condor_submit -dry-run`` of
    ``executable = sleep.exe / arguments = 600 / queue 8`` plus CheckOutputFormats.pm's additions:
    JobStatus alternating 5 (held) / 2 (running), ResidentSetSize = cal_from_raw(488) = 500,
    DiskUsage = cal_from_raw(50) = 50 when held and 2500000 when running, several owners.
    Constructed for RouteDeck (not captured from HTCondor); only attributes the rules touch or
    the checks read are included, plus a few ordinary ones."""
    owners = ["alice", "bob", "carol", "dave"]
    ads = []
    for proc in range(8):
        held = proc % 2 == 0
        owner = owners[proc % 4]
        ads.append({
            "ClusterId": "100", "ProcId": str(proc), "Owner": f'"{owner}"', "User": f'"{owner}@example.org"',
            "RemoteUser": f'"{owner}@example.org"', "NiceUser": "false", "Cmd": '"sleep.exe"', "Args": '"600"',
            "JobUniverse": "5", "JobStatus": "5" if held else "2", "Err": '"_condor_stderr"', "Out": '"_condor_stdout"',
            "TransferErr": "false", "TransferOut": "false", "TransferIn": "false", "TransferInputSizeMB": "0",
            "NumCkpts": "0", "ExitBySignal": "false", "MaxHosts": "1", "MinHosts": "1", "TotalSuspensions": "0",
            "RequestCpus": "1", "RequestDisk": "DiskUsage",
            "RequestMemory": "ifthenelse(MemoryUsage =!= undefined,MemoryUsage,(ImageSize + 1023) / 1024)",
            "DiskUsage": "50" if held else "2500000", "ResidentSetSize": "500", "ImageSize": "10",
            "MemoryUsage": "((ResidentSetSize + 1023) / 1024)", "PeriodicHold": "false",
            "PeriodicRelease": "false", "PeriodicRemove": "false", "OnExitRemove": "true",
        } | ({"HoldReasonCode": "1", "HoldReason": f'"via condor_hold (by user {owner})"'} if held else {}))
    return ads


def test_general_rules():
    # Source: htcondor.md §6 condor_transform_ads test, general.rules expected values
    xf = rules("general.rules")
    for ad in dry_run_ads():
        before = dict(ad)
        assert xf.apply(ad) == []
        assert ad["ClusterId"] == "200"
        assert ad["Fooo"] == '"test"'
        assert ad["TransferIn"] == ad["ExitBySignal"] == before["ExitBySignal"]
        assert "NumCkpts" not in ad and ad["NumCheckPoints"] == before["NumCkpts"]
        assert "TransferInputSizeMB" not in ad
        assert "TransferErr" not in ad and "Err" in ad  # /(.+)Err/ needs a character before Err


def test_eval_rules():
    # Source: htcondor.md §6 condor_transform_ads test, EVAL.rules expected values
    xf = rules("EVAL.rules")
    for ad in dry_run_ads():
        disk2 = int(ad["DiskUsage"]) * 2
        xf.apply(ad)
        assert ad["MemoryUsage"] == "5"  # EVALSET stored the evaluated value
        assert re.search(rf"\(\s*{disk2}\s*/\s*1024\s*\)", ad["RequestDisk"])  # EVALMACRO text substituted


def test_regex_rules():
    # Source: htcondor.md §6 condor_transform_ads test, regex.rules expected values
    xf = rules("regex.rules")
    for ad in dry_run_ads():
        max_hosts = ad["MaxHosts"]
        xf.apply(ad)
        assert ad["TotalSuspensions"] == max_hosts
        assert "NiceUser" not in ad and "RemoteUser" not in ad
        assert ad["TestRemoteUser"].endswith('@example.org"') and "TestNiceUser" in ad  # \0 = whole match
        assert "User" in ad  # (.+) needs a character before User
        assert {"TimeCpus", "TimeMemory", "TimeDisk"} <= set(ad)
        assert not any(name.startswith("Request") for name in ad)


def test_job_router_xform_config():
    # htcondor.md §5 job_router_xform: pre-route Defaults + routes; first match in list order.
    cfg = Config.load([DATA / "config" / "condor_tests" / "job_router_xform.run.config"], env={})
    pre = parse_transform(cfg.get_raw("JOB_ROUTER_TRANSFORM_Defaults"), "Defaults")
    names = split_list(cfg.get("JOB_ROUTER_ROUTE_NAMES"))
    routes = [parse_transform(cfg.get_raw("JOB_ROUTER_ROUTE_" + n), n) for n in names]
    assert [r.universe for r in routes] == [5, 5, 5, 5]  # Vanilla, VANILLA, 5, vanilla
    assert routes[3].requirements == "RouteMe && !(ProcId & 1)"  # "Requirements" keyword, any case
    used = {}
    for proc in range(16):
        ad = {"ClusterId": "1", "ProcId": str(proc), "RouteMe": "1" if proc >= 8 else "0",
              "Requirements": "true", "Owner": '"u"', "JobUniverse": "5"}
        chosen = next((r for r in routes if r.matches(ad)), None)
        if proc < 8:
            assert chosen is None
            continue
        macros = MacroSet()
        assert pre.apply(ad, macros=macros, config=cfg) == []
        assert chosen.apply(ad, macros=macros, config=cfg) == []
        used[proc] = chosen.name
        assert "RouteMe" not in ad and ad["RoutedJob"] == "true" and ad["CollHost"] == '"jira902"'
        assert ad["Requirements"] in ("target.slotId & 1", "!(target.slotId & 1)")
    assert {p for p, n in used.items() if n == "Analysis3"} == {8, 10, 12, 14}
    assert {p for p, n in used.items() if n == "Production1"} == {9, 11, 13, 15}


def test_matches_semantics():
    # REQUIREMENTS: MY = ad, no TARGET; true or non-zero matches; undefined/error/strings do not.
    # Source: htcondor.md §1.3/§1.4 (REQUIREMENTS evaluated with the ad as MY and no TARGET)
    xf = parse_transform("REQUIREMENTS Foo\nSET A 1")
    assert xf.matches({"Foo": "true"}) and xf.matches({"Foo": "3"})
    assert not xf.matches({"Foo": "0"}) and not xf.matches({}) and not xf.matches({"Foo": '"yes"'})
    assert not parse_transform("REQUIREMENTS TARGET.Foo").matches({"Foo": "true"})
    assert parse_transform("SET A 1").matches({})
    assert parse_transform("REQUIREMENTS time() > 100").matches({}, now=200)
    assert not parse_transform("REQUIREMENTS time() > 100").matches({}, now=50)


def test_statement_forms_and_separators():
    # Source: htcondor.md §1.3 Transform statements (SET A = x / SET A, x; DEFAULT checks presence; NAME vs knob suffix; UNIVERSE by name; invalid SET only logged)
    xf = parse_transform(
        "set a = 1\nSET b, 2\nDefault c 3\nDEFAULT Undef 4\nEVALSET d = 1 + 1\nEVALMACRO m = strcat(\"x\", \"y\")\n"
        "SET e \"$(m)\"\nSET bad (1 +\nCOPY a a2\nCOPY missing x\nRENAME b b2\nDELETE c\nUNIVERSE grid\nNAME n\n")
    assert (xf.name, xf.universe) == ("n", 9)
    assert (parse_transform("NAME inner", "Suffix").name, parse_transform("NAME inner", "Suffix").declared_name) == (
        "Suffix", "inner")
    ad = {"Undef": "undefined", "c": "0"}
    warnings = xf.apply(ad)
    assert ad == {"Undef": "undefined", "a": "1", "d": "2", "e": '"xy"', "a2": "1", "b2": "2"}
    assert len(warnings) == 1 and "invalid expression" in warnings[0] and "line 8" in warnings[0]


def test_existing_attribute_keeps_its_name_case():
    # Source: ClassAd Insert keeps an existing attribute's case (checked with classad2; not in htcondor.md)
    ad = {"RequestCpus": "1"}
    parse_transform("SET requestcpus 4").apply(ad)
    assert ad == {"RequestCpus": "4"}


def test_parse_errors_have_line_and_column():
    # Source: htcondor.md §1.3 ("needs 2 arguments", unknown keyword is an error, include not allowed); line/column is RouteDeck's
    cases = [
        ("SET A 1\nFROB x y", 2, 1, "FROB is not a valid transform keyword"),
        ("SET A", 1, 6, "SET needs 2 arguments"),
        ("COPY /x/", 1, 9, "COPY needs 2 arguments"),
        ("DELETE", 1, 7, "DELETE needs an argument"),
        ("include : other.xform", 1, 1, "include is not allowed in a transform"),
        ("else\nSET A 1", 1, 1, "else without matching if"),
        ("if true\nSET A 1", 2, 0, "endif(s) not found before end of transform"),
        ("REQUIREMENTS (a", 1, 14, "invalid REQUIREMENTS : (a"),
    ]
    for text, line, col, message in cases:
        with pytest.raises(XformError) as info:
            parse_transform(text)
        assert (info.value.line, info.value.column, info.value.message) == (line, col, message), text


def test_error_lines_map_to_config_file_lines():
    # Source: RouteDeck feature; htcondor.md §6 Config-file facts (# lines inside @= blocks dropped, so lines must be mapped)
    cfg = Config.from_text("X = 1\nJOB_ROUTER_ROUTE_R @=rt\n  # comment\n  SET A 1\n\n  BOGUS thing\n@rt\n", "r.conf", env={})
    with pytest.raises(XformError) as info:
        parse_transform(cfg.get_raw("JOB_ROUTER_ROUTE_R"))
    src = cfg.source_of_value_line("JOB_ROUTER_ROUTE_R", info.value.line)
    assert (src.file, src.line) == ("r.conf", 6)


def test_bad_regex_is_a_warning_only():
    # Source: HTCondor logs "this entry will be ignored" for a bad regex (engine/lang/xform_parse.py; not in htcondor.md)
    xf = parse_transform("DELETE /(unclosed/\nSET A 1")
    assert xf.warnings and "this entry will be ignored" in xf.warnings[0]
    ad = {"unclosedX": "1"}
    xf.apply(ad)
    assert ad == {"unclosedX": "1", "A": "1"}


def test_if_forms_in_transforms():
    xf = parse_transform(
        "if defined MY.x\n SET HasX true\nelif defined y\n SET HasY true\nelse\n SET None true\nendif\n"
        "y = 1\nif $(y)\n SET Y1 true\nendif\nif RequestCpus > 4\n SET Big true\nendif\n")
    ad = {"x": "1", "RequestCpus": "8"}
    xf.apply(ad)
    assert ad == {"x": "1", "RequestCpus": "8", "HasX": "true", "Y1": "true", "Big": "true"}
    ad = {"x": '""', "RequestCpus": "8"}  # an empty string counts as not defined
    xf.apply(ad)  # y is assigned only after the elif, so it is not defined there yet
    assert "None" in ad and "HasY" not in ad
    ad = {"RequestCpus": "8"}
    xf.apply(ad, macros=MacroSet({"y": "0"}))  # defined = non-empty, even "0"
    assert "HasY" in ad
    # a complex condition that is false is an invalid if condition in HTCondor (config.cpp)
    with pytest.raises(XformError, match="not a valid if condition"):
        xf.apply({"RequestCpus": "1"})


def test_error_statement_and_macro_cycle_fail_the_transform():
    # Source: htcondor.md §1.3 (a transform failure makes the routing attempt fail); error : lines: config.cpp (not in htcondor.md)
    with pytest.raises(XformError, match="Error : stop"):
        parse_transform("error : stop").apply({})
    with pytest.raises(XformError, match="refers to itself"):
        parse_transform("a = $(b)\nb = $(a)\nSET X $(a)").apply({})


def test_macro_value_reads_route_macros():
    cfg = Config.load([DATA / "config" / "manual-9.0" / "job-router-new-syntax-example.conf"], env={})
    site = parse_transform(cfg.get_raw("JOB_ROUTER_ROUTE_CondorSite"), "CondorSite")
    assert site.macro_value("MaxIdleJobs", cfg) == "20"
    assert site.macro_value("GridResource", cfg) == '"condor submit.site3.edu condor.site3.edu"'
    assert site.macro_value("MaxJobs", cfg) is None
    assert site.local_macros == {"MaxIdleJobs": "20", "GridResource": '"condor submit.site3.edu condor.site3.edu"'}
    bosco = Config.load([DATA / "config" / "ce-head" / "02-ce-bosco-defaults.conf"], env={},
                        defaults={"BOSCO_RMS": "slurm", "BOSCO_ENDPOINT": "user@host"})
    ssh = parse_transform(bosco.get_raw("JOB_ROUTER_ROUTE_SSH_Endpoint"))
    assert ssh.macro_value("GridResource", bosco) == '"batch slurm user@host"'
    assert ssh.macro_value("TargetUniverse", bosco) == "9"


def test_manual_example_extra_paren_only_warns():
    # htcondor.md §6: the 9.0 manual's new-syntax example has an extra ')'.
    cfg = Config.load([DATA / "config" / "manual-9.0" / "job-router-new-syntax-example.conf"], env={})
    xf = parse_transform(cfg.get_raw("JOB_ROUTER_TRANSFORM_Defaults"))
    ad = {"WantJobRouter": "true", "Requirements": "false"}
    warnings = xf.apply(ad, config=cfg)
    assert len(warnings) == 1 and "PeriodicRemove" in warnings[0]
    assert ad == {"Requirements": "true"}


CONFIGS = sorted(p for p in (DATA / "config").rglob("*") if p.is_file())


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_real_route_and_transform_parses(path):
    # Source: every config under tests/data/config (copies of shared/data/real, tests/data/PROVENANCE.md)
    cfg = Config.load([path], env={})
    for knob in cfg.with_prefix("JOB_ROUTER_ROUTE_") + cfg.with_prefix("JOB_ROUTER_TRANSFORM_"):
        if knob.upper() != "JOB_ROUTER_ROUTE_NAMES":
            xf = parse_transform(cfg.get_raw(knob), knob)
            assert xf.warnings == [], knob


@pytest.mark.parametrize("text, number", [
    ("vanilla", 5), ("VANILLA", 5), ("5", 5), ("grid", 9), ("local", 12), ("scheduler", 7), ("java", 10),
    ("parallel", 11), ("vm", 13), ("docker", 0), ("container", 0), ("globus", 0), ("nonsense", 0),
])
def test_universe_names(text, number):
    # htcondor.md §1.3: UNIVERSE takes a number or a name (CondorUniverseNumberEx)

    assert universe_number(text) == number


