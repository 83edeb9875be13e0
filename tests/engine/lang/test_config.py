"""Config reader: the real files in tests/data/config (copied from shared/data/real, see
tests/data/PROVENANCE.md) and constructed broken inputs.

Sources: htcondor.md §1.2, §1.3, §5, §6 "Config-file facts"; HTCondor's
src/condor_utils/config.cpp (Parse_macros, getline_implementation) and condor_config.cpp
(real_config: LOCAL_CONFIG_DIR, then LOCAL_CONFIG_FILE, then LOCAL_CONFIG_DIR again).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO, TESTS
from engine import classad as ca
from engine import classad_ads as cads
from engine.lang.config import Config, ConfigError, Source
from engine.lang.param import split_list

DATA = TESTS / "data" / "config"
ALL_FILES = sorted(p for p in DATA.rglob("*") if p.is_file())
CE_HEAD = DATA / "ce-head"
OSG = DATA / "osg-test"


def load(*paths, **kw):
    kw.setdefault("env", {})
    return Config.load(list(paths), **kw)


def text(src: str, **kw) -> Config:
    kw.setdefault("env", {})
    return Config.from_text(src, "t.conf", **kw)


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_every_real_file_loads_without_errors(path):
    cfg = load(path)
    assert cfg.errors == []
    assert cfg.names(), "a real file defines knobs"


def test_ce_head_directory_in_lexical_order():
    # The CE's config.d is read in lexical order (01-…, 02-…, 10-…), htcondor.md §5.
    cfg = load(CE_HEAD)
    assert cfg.errors == []
    assert [Path(f).name for f in cfg.files] == [
        "01-ce-router-defaults.conf", "01-ce-router.conf", "01-pilot-env-defaults.conf",
        "02-ce-bosco-defaults.conf", "02-ce-condor-defaults.conf", "02-ce-pbs-defaults.conf",
        "02-ce-slurm-defaults.conf", "10-ce.conf",
    ]
    assert cfg.get("JOB_ROUTER_NAME") == "htcondor-ce"
    assert cfg.get("job_router_name") == "htcondor-ce"  # names are case-insensitive
    assert cfg.get("JOB_ROUTER_SOURCE_JOB_CONSTRAINT") == "target.JobUniverse =?= 5 || target.JobUniverse =?= 1"
    assert cfg.get_int("JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE", 50) == 2000
    assert cfg.get_int("JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE", 100) == 10000  # $(CONDORCE_MAX_JOBS)
    assert split_list(cfg.get("JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES")) == ["Base", "Cleanup", "OrigRequests"]
    assert split_list(cfg.get("JOB_ROUTER_POST_ROUTE_TRANSFORM_NAMES")) == [
        "WholeNode", "Cpus", "Gpus", "Memory", "Queue", "BatchRuntime", "CERequirements", "OnExitHold"]
    # 10-ce.conf is read last and wins
    assert cfg.get("JOB_ROUTER_ROUTE_NAMES") == "Condor_Pool"
    assert cfg.location("JOB_ROUTER_ROUTE_NAMES") == Source(str(CE_HEAD / "10-ce.conf"), 7)
    # the LOCAL_CONFIG_FILE script is not run: a warning, not an error
    assert any("command is not run" in w.message for w in cfg.warnings)
    assert cfg.get_bool("ENABLE_JOB_RETRIES", True) is False


def test_route_bodies_stay_unexpanded_and_comments_are_dropped():
    cfg = load(CE_HEAD)
    raw = cfg.get_raw("JOB_ROUTER_TRANSFORM_OnExitHold")
    # $(MY.x) must survive until a job is transformed (htcondor.md §1.3; product.md §3)
    assert "($(MY.minWalltime)) min" in raw
    assert "($(MY.minWalltime))" not in cfg.get("JOB_ROUTER_TRANSFORM_OnExitHold")
    # '#' lines are dropped inside @= blocks (htcondor.md §6 config-file facts)
    assert "#" not in cfg.get_raw("JOB_ROUTER_TRANSFORM_Base")
    assert cfg.get_raw("JOB_ROUTER_TRANSFORM_Base").splitlines()[0] == "SET RoutedJob                  True"
    # a '\' continuation inside the block is joined into one line
    lines = raw.splitlines()
    joined = [ln for ln in lines if ln.startswith("SET CondorCE_OnExitHoldReason")]
    assert joined and joined[0].endswith('min", "Job held for unknown reason.")')
    assert len(lines) == 13


def test_value_lines_map_back_to_file_lines():
    # Source: RouteDeck feature (file line of each @= value line); htcondor.md §6 Config-file facts (# and blank lines dropped inside @= blocks)
    cfg = load(CE_HEAD)
    name = "JOB_ROUTER_TRANSFORM_Cpus"
    path = CE_HEAD / "01-ce-router-defaults.conf"
    physical = path.read_text().splitlines()
    loc = cfg.location(name)
    assert loc.file == str(path) and physical[loc.line - 1].startswith(name + " @=jrt")
    for k, value_line in enumerate(cfg.get_raw(name).splitlines(), 1):
        src = cfg.source_of_value_line(name, k)
        assert physical[src.line - 1].strip().startswith(value_line[:20])


def test_osg_new_syntax_on_top_of_ce_head():
    # osg-test appends its pre-route transform with a self reference (htcondor.md §6)
    cfg = load(CE_HEAD, OSG / "99-osgtest.condor-ce.conf.new-syntax")
    assert cfg.errors == []
    assert split_list(cfg.get("JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES")) == ["Base", "Cleanup", "OrigRequests", "DefaultMemory"]
    assert cfg.get("JOB_ROUTER_ROUTE_NAMES") == "PBS_Cluster, Slurm_Cluster, Condor_Pool"
    assert split_list(cfg.get("JOB_ROUTER_ROUTE_NAMES")) == ["PBS_Cluster", "Slurm_Cluster", "Condor_Pool"]
    assert cfg.get_raw("JOB_ROUTER_ROUTE_Condor_Pool") == (
        'REQUIREMENTS (osgTestBatchSystem =!= "pbs" && osgTestBatchSystem =!= "slurm")\nTargetUniverse = 5')
    assert cfg.get_bool("JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES", True) is False


def test_ce_v450_job_router_defaults_self_append_merged():
    # v4.5.0: JOB_ROUTER_DEFAULTS = $(JOB_ROUTER_DEFAULTS_GENERATED); osg-test appends an ad with
    # JOB_ROUTER_DEFAULTS = $(JOB_ROUTER_DEFAULTS) [..]; the generated file comes last because it
    # is LOCAL_CONFIG_FILE output (htcondor.md §6). The generated ad uses $(USE_CE_HOME_DIR),
    # $(DISABLE_PILOT_ADS) and $(CONDORCE_PILOT_JOB_ENV), defined by 01-pilot-env-defaults.conf.
    v45 = DATA / "ce-v4.5.0"
    cfg = load(CE_HEAD / "01-pilot-env-defaults.conf", v45 / "01-ce-router-defaults.conf.in",
               v45 / "02-ce-condor-defaults.conf",
               OSG / "99-osgtest.condor-ce.conf.old-syntax", v45 / "condor_ce_router_defaults.v4.5.0.output.conf")
    assert cfg.errors == []
    assert cfg.get_raw("JOB_ROUTER_DEFAULTS") == "$(JOB_ROUTER_DEFAULTS_GENERATED) [set_default_maxMemory = 128;]"
    merged = cfg.get("JOB_ROUTER_DEFAULTS")
    ads = cads.parse_new_ads(merged, "JOB_ROUTER_DEFAULTS")
    assert len(ads) == 2
    assert ads[0]["MaxJobs"] == 10000 and ads[0]["MaxIdleJobs"] == 2000
    assert ads[1]["set_default_maxMemory"] == 128
    assert cfg.get_bool("MERGE_JOB_ROUTER_DEFAULT_ADS", False) is True
    # the old-syntax entries written with '\' continuations parse as three ads
    entries = cads.parse_new_ads(cfg.get("JOB_ROUTER_ENTRIES"), "JOB_ROUTER_ENTRIES")
    assert [ad["name"] for ad in entries] == ["Local_PBS", "Local_Slurm", "Local_Condor"]


def test_condor_tests_configs():
    cfg = load(DATA / "condor_tests" / "job_router_xform.run.config", defaults={"DAEMON_LIST": "MASTER, SCHEDD"})
    assert cfg.get("COLLECTOR_NAME") == "jira902"  # htcondor.md §5 job_router_xform
    assert split_list(cfg.get("JOB_ROUTER_ROUTE_NAMES")) == ["Production1", "Analysis3", "Production2", "Analysis4"]
    assert cfg.get("DAEMON_LIST") == "MASTER, SCHEDD JOB_ROUTER"  # self reference over a default
    assert cfg.get_raw("JOB_ROUTER_ROUTE_Production1") == (
        "UNIVERSE Vanilla\nREQUIREMENTS RouteMe && (ProcId & 1)\nSET ProductionJob 1\nSET ProductionRun 1\n"
        "SET Requirements target.slotId & 1")
    local = load(DATA / "condor_tests" / "lib_job_router_local.run.config")  # indented lines
    defaults = cads.parse_new_ad(local.get("JOB_ROUTER_DEFAULTS"))
    assert ca.unparse_old(ca.value_text_of(defaults, "requirements")) == "target.WantJobRouter =?= true"
    assert cads.parse_new_ad(local.get("JOB_ROUTER_ENTRIES"))["name"] == "Site 1"


def test_manual_examples_expand_config_macros():
    cfg = load(DATA / "manual-9.0" / "job-router-new-syntax-example.conf")
    assert "(maxwalltime=1440)" in cfg.get("JOB_ROUTER_ROUTE_Site2")  # htcondor.md §6 converter facts
    body = cfg.get_raw("JOB_ROUTER_TRANSFORM_Defaults").splitlines()
    assert body[0] == "SET PeriodicRemove = JobStatus == 5 || (JobStatus == 1 && (time() - QDate) > 3600*6))"
    old = load(DATA / "manual-9.0" / "job-router-old-syntax-example.conf")
    assert len(cads.parse_new_ads(old.get("JOB_ROUTER_ENTRIES"))) == 3
    assert "JOB_ROUTER_ROUTE_NAMES" not in old  # only in a comment there


# ------------------------------------------------------------------------------ broken inputs


def test_unterminated_here_block_names_file_and_start_line():
    # Source: config.cpp Parse_macros' message (author's reading of HTCondor's config.cpp, not in htcondor.md); htcondor.md §6 Config-file facts (comments inside @= blocks)
    cfg = text("A = 1\nB @=end\n  x\n# comment\n  y\n")
    assert [str(e) for e in cfg.errors] == ["t.conf:2: end of file while scanning for '@end' (started by B @=end)"]
    assert "B" not in cfg


def test_bad_line_and_illegal_identifier():
    # Source: config.cpp Parse_macros' messages (author's reading of HTCondor's config.cpp, not in htcondor.md); going on after an error is RouteDeck's decision
    cfg = text("GOOD = 1\nJUSTAWORD\nBAD-NAME = 2\n[section]\nLATER = 3\n")
    assert [(e.line, e.message) for e in cfg.errors] == [
        (2, "syntax error, missing '=' or ':' in 'JUSTAWORD'"),
        (3, "illegal identifier <BAD-NAME>"),
    ]
    assert cfg.get("LATER") == "3"  # parsing goes on after an error


def test_missing_explicit_file_is_an_error(tmp_path):
    # Source: RouteDeck decision: a config file that cannot be read is an error naming it, loading goes on
    cfg = load(tmp_path / "nope.conf")
    assert len(cfg.errors) == 1 and cfg.errors[0].file == str(tmp_path / "nope.conf")
    assert isinstance(cfg.errors[0], ConfigError) and "no such file" in cfg.errors[0].message


def test_include_forms_and_cycle(tmp_path):
    # Source: config.cpp include handling (author's reading of HTCondor's config.cpp, not in htcondor.md)
    (tmp_path / "a.conf").write_text("A = 1\ninclude : b.conf\n")
    (tmp_path / "b.conf").write_text("B = 2\n\ninclude : $(INC_DIR)/a.conf\n")
    cfg = load(tmp_path / "a.conf", defaults={"INC_DIR": str(tmp_path)})
    assert len(cfg.errors) == 1
    err = cfg.errors[0]
    assert (Path(err.file).name, err.line) == ("b.conf", 3) and "include cycle" in err.message
    (tmp_path / "c.conf").write_text("include : missing.conf\ninclude ifexist : missing.conf\nC = 3\n")
    cfg = load(tmp_path / "c.conf")
    assert [(Path(e.file).name, e.line) for e in cfg.errors] == [("c.conf", 1)]
    assert cfg.get("C") == "3"


def test_include_directory_lexical_order_and_exclusions(tmp_path):
    # Source: condor_config.cpp LOCAL_CONFIG_DIR_EXCLUDE_REGEXP default (author's reading of HTCondor's config.cpp, not in htcondor.md)
    d = tmp_path / "d"
    d.mkdir()
    for name, body in [("20-b.conf", "X = $(X) b"), ("10-a.conf", "X = a"), (".hidden", "X = bad"),
                       ("30-c.conf~", "X = bad"), ("40.rpmsave", "X = bad")]:
        (d / name).write_text(body + "\n")
    cfg = text(f"include : {d}\nX = $(X) main\n")
    assert cfg.errors == [] and cfg.get("X") == "a b main"


def test_local_config_dir_then_file(tmp_path):
    d = tmp_path / "config.d"
    d.mkdir()
    (d / "00-x.conf").write_text("ORDER = $(ORDER) dir\n")
    (tmp_path / "local.conf").write_text("ORDER = $(ORDER) file\n")
    main = tmp_path / "condor_config"
    main.write_text(f"ORDER = main\nLOCAL_CONFIG_FILE = {tmp_path / 'local.conf'}\nLOCAL_CONFIG_DIR = {d}\n")
    cfg = load(main)
    assert cfg.errors == [] and cfg.get("ORDER") == "main dir file"
    assert [Path(f).name for f in cfg.files] == ["condor_config", "00-x.conf", "local.conf"]


def test_case_insensitive_names_and_winning_location():
    # Source: htcondor.md §1.3 (names are case-insensitive); the last definition wins (config.cpp insert_macro, author's reading of HTCondor's config.cpp, not in htcondor.md)
    cfg = text("job_router_name = a\nOTHER = 1\nJOB_ROUTER_NAME = b\n")
    assert cfg.names() == ["JOB_ROUTER_NAME", "OTHER"]
    assert cfg.get("Job_Router_Name") == "b" and cfg.location("job_router_name") == Source("t.conf", 3)


def test_macros_defaults_env_and_self_reference():
    # Source: htcondor.md §6 Config-file facts (only self references are expanded at parse time: X = $(X) more); $(A:default), $ENV, $(DOLLAR): config.cpp, not in htcondor.md
    cfg = text(
        "A = 1\nB = $(A)$(NOPE:dflt)$(EMPTY:was_empty)$(EMPTY:not-a-default)\nEMPTY =\nX = $(X) one\nX = $(X) two\n"
        "H = $ENV(HOME_DIR)/x\nU = $ENV(UNSET_VAR)\nD = $ENV(UNSET_VAR:fallback)\nP = $(DOLLAR)(A) $$(A)\n",
        env={"HOME_DIR": "/home/u"},
    )
    # '-' is not allowed in a default (config.cpp COLON_DEF_EXTRACHARSET): that one stays literal
    assert cfg.get("B") == "1dfltwas_empty$(EMPTY:not-a-default)"
    assert cfg.get_raw("X") == " one two" == cfg.get("X")  # not trimmed, like param()
    assert cfg.get("H") == "/home/u/x" and cfg.get("U") == "UNDEFINED" and cfg.get("D") == "fallback"
    assert cfg.get("P") == "$(A) $$(A)"
    assert cfg.get("EMPTY") is None and "EMPTY" in cfg and cfg.get_raw("EMPTY") == ""


def test_macro_cycle_raises_with_location():
    # Source: config.cpp expand_macro cycle check (author's reading of HTCondor's config.cpp, not in htcondor.md)
    cfg = text("A = $(B)\nB = x $(A)\n")
    with pytest.raises(ConfigError) as info:
        cfg.get("A")
    assert info.value.file == "t.conf" and info.value.line in (1, 2) and "refers to itself" in info.value.message


def test_continuations_and_comments():
    # Source: config.cpp getline_implementation (author's reading of HTCondor's config.cpp, not in htcondor.md); htcondor.md §6 Config-file facts (# lines dropped)
    cfg = text("A = one \\\n   two \\\n# commented out \\\n   three\n# C = comment \\\nB = b\n")
    assert cfg.get("A") == "one two three"
    assert cfg.get("B") == "b" and "C" not in cfg


def test_if_elif_else():
    # Source: htcondor.md §1.3 (if/elif/else/endif); the condition forms: config.cpp Evaluate_config_if (author's reading of HTCondor's config.cpp, not in htcondor.md)
    cfg = text(
        "FLAG = true\nif defined FLAG\n  A = yes\nelse\n  A = no\nendif\n"
        "if $(NOT_DEFINED)\n B = 1\nelif version >= 8.1.2\n B = 2\nelse\n B = 3\nendif\n"
        "if false\n if true\n  C = bad\n endif\nelif 0\n C = bad\nelse\n C = good\nendif\n"
        "if ! defined FLAG\n D = bad\nendif\n"
    )
    assert cfg.errors == []
    assert (cfg.get("A"), cfg.get("B"), cfg.get("C"), cfg.get("D")) == ("yes", "2", "good", None)
    bad = text("else\nif A == B\nendif\nif true\n")
    assert [(e.line, e.message.split(" because")[0]) for e in bad.errors] == [
        (1, "else without matching if"), (2, "A == B is not a valid if condition"),
        (4, "endif(s) not found before end-of-file")]


def test_use_error_warning_and_colon():
    # Source: config.cpp Parse_macros: error/warning lines, obsolete ':' (author's reading of HTCondor's config.cpp, not in htcondor.md); metaknobs unsupported is RouteDeck's decision
    cfg = text("use ROLE : Personal\nwarning : careful $(X)\nX : 5\nerror : stop here\n")
    assert [e.message for e in cfg.errors] == ["Error : stop here"]
    msgs = [w.message for w in cfg.warnings]
    assert any("metaknobs are not supported" in m for m in msgs)
    assert "Warning : careful " in msgs and cfg.get("X") == "5"


def test_environment_overrides():
    cfg = Config.from_text("JOB_ROUTER_NAME = a\n", env={"_CONDOR_JOB_ROUTER_NAME": "from-env"})
    assert cfg.get("JOB_ROUTER_NAME") == "from-env" and cfg.location("JOB_ROUTER_NAME").file == "<environment>"


def test_typed_getters():
    # Source: config.cpp param_boolean / string_is_long_param / string_is_double_param (author's reading of HTCondor's config.cpp, not in htcondor.md)
    cfg = text("T = True\nN = 0\nE = 3 > 2\nI = 10\nIE = 2*5\nF = 1.5\nJUNK = hello\n")
    assert cfg.get_bool("T", False) is True and cfg.get_bool("N", True) is False
    assert cfg.get_bool("E", False) is True and cfg.get_bool("JUNK", True) is True
    assert cfg.get_int("I", 0) == 10 and cfg.get_int("IE", 0) == 10 and cfg.get_int("JUNK", 7) == 7
    assert cfg.get_float("F", 0.0) == 1.5 and cfg.get_float("MISSING", 2.5) == 2.5


def test_expand_with_extra_macros():
    # Source: RouteDeck API; htcondor.md §1.3 (route macros expanded at transform time with config macros visible)
    cfg = text("A = $(B)-a\nB = b\n")
    assert cfg.expand("$(A) $(C)", {"c": "extra"}) == "b-a extra"


def test_config_root_is_the_directory_of_the_first_config_file(tmp_path, monkeypatch):
    # condor_config.cpp: insert_macro("CONFIG_ROOT", condor_dirname(config_source)) before the
    # root config is read, so a file may use it (and define it again).
    (tmp_path / "etc").mkdir()
    root = tmp_path / "etc" / "condor_config"
    root.write_text("HOOK_DIR = $(CONFIG_ROOT)/hooks\n")
    other = tmp_path / "other.conf"
    other.write_text("X = $(CONFIG_ROOT)\n")
    monkeypatch.chdir(tmp_path)
    cfg = Config.load(["etc/condor_config", other])
    assert cfg.get("CONFIG_ROOT") == str(tmp_path / "etc") and cfg.get("X") == str(tmp_path / "etc")
    assert cfg.get("HOOK_DIR") == str(tmp_path / "etc" / "hooks")
    root.write_text("CONFIG_ROOT = /srv\nHOOK_DIR = $(CONFIG_ROOT)/hooks\n")
    assert Config.load([root]).get("HOOK_DIR") == "/srv/hooks"


def test_the_shipped_hooks_sample_finds_its_programs_from_a_clone():
    # issue 29: HOOK_DIR was /opt/routedeck/..., so hook check failed from a clone.
    cfg = Config.load([REPO / "sample_configs" / "hooks" / "condor_config"])
    assert Path(cfg.get("SAMPLE_HOOK_FETCH_WORK")) == REPO / "sample_configs" / "hooks" / "hooks" / "fetch_work.sh"
