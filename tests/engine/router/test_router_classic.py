"""ClassAd route syntax: loading and conversion to transforms (engine/router/classic.py).

Sources: htcondor.md §1.2 (JOB_ROUTER_DEFAULTS/ENTRIES/_FILE/_CMD, parse order, labels,
OverrideRoutingEntry, edit order, converter rewrites, hash-table order, pre/post transforms only
for single-knob routes), §6 "What the converter output shows" and "Job router: facts"
(HTCONDOR-864 comments, lib_job_router_local), the seed manual
shared/data/seeds/000_718d2efdbfc68347.txt §5.4.3/5.4.4 (Name defaults to GridResource), and
HTCondor's HashTable.h / HashTable.cpp (iteration order, the hash function).
"""

from __future__ import annotations

from tests.helpers.paths import TESTS
from engine import classad as C
from engine.lang.config import Config
from engine.router.classic import CondorHashOrder, _condor_hash
from engine.router.routed_copy import build_routed_ad
from engine.router.loader import load_routing_table

DATA = TESTS / "data" / "config"


def load(text: str, **kw):
    return load_routing_table(Config.from_text(text, "old.conf"), **kw)


def msgs(table, level=None):
    return [str(d) for d in table.diagnostics if level is None or d.level == level]


def job(**attrs):
    """A job ad; str values are old-syntax texts (quote string literals), others Python values."""
    return {k: v if isinstance(v, str) else C.format_value(v) for k, v in attrs.items()}


def route_text(table, name):
    return table.route(name).transform.text


def test_seed_manual_example_converts_as_htcondor_did():
    # seed 000 §5.4.3 example; htcondor.md §6: target. stripped, is -> =?=, True -> true, macros in
    # strings expanded ($(ROUTED_JOB_MAX_TIME) -> 1440), names with spaces stay, block order.
    text = (DATA / "manual-9.0" / "job-router-old-syntax-example.conf").read_text().replace("Site_", "Site ")
    t = load(text)
    assert not msgs(t, "error")
    site2 = route_text(t, "Site 2")
    assert site2.splitlines()[1:4] == ["NAME Site 2", "REQUIREMENTS WantJobRouter =?= true", ""]
    body = [ln for ln in site2.splitlines()[4:] if ln]
    assert body == [
        'GridResource = "gt2 site2.edu/jobmanager-pbs"', "MaxIdleJobs = 10", "MaxJobs = 200",
        "# delete_* rules", "DELETE WantJobRouter",
        "# set_* rules", 'SET GlobusRSL "(maxwalltime=1440)(jobType=single)"',
        "SET PeriodicRemove JobStatus == 5 || (JobStatus == 1 && (time() - QDate) > 3600 * 6)",
        "SET requirements true"]
    r = t.route("Site 2")
    assert (r.max_jobs, r.max_idle_jobs, r.grid_resource, r.target_universe) == (200, 10, "gt2 site2.edu/jobmanager-pbs", 9)


def test_requirements_ampersand_reordered_and_universe_line():
    # htcondor.md §6: `target.ProcId & 1` -> `1 & ProcId`; UNIVERSE only when TargetUniverse is given.
    t = load((DATA / "condor_tests" / "job_router_basic.run.config").read_text())
    lines = route_text(t, "Production1").splitlines()
    assert lines[1:4] == ["NAME Production1", "UNIVERSE 5", "REQUIREMENTS RouteMe && (1 & ProcId)"]
    assert "SET Requirements target.slotId & 1" in lines  # set_ expressions are not rewritten


def test_comments_between_ads_htcondor_864_and_labels():
    # htcondor.md §6: /* comments */ between and before old-syntax ads must parse (HTCONDOR-864);
    # §1.2 labels entries:N; the basic test lists all four names.
    t = load((DATA / "condor_tests" / "job_router_basic.run.config").read_text())
    assert [(r.name, r.source_label) for r in t.routes] == [
        ("Production1", "entries:0"), ("Analysis3", "entries:1"), ("Production2", "entries:2"), ("Analysis4", "entries:3")]
    assert all(not r.uses_pre_post for r in t.routes)


def test_malformed_entry_is_reported_with_its_line_and_skipped():
    # htcondor.md §1.2: "Ignoring the malformed route entry ..." and parsing goes on.
    t = load("JOB_ROUTER_ENTRIES @=e\n[ Name = \"a\"; Requirements = true; ]\n[ Name = \"b\" Requirements = true; ]\n"
             "[ Name = \"c\"; Requirements = true; ]\n@e\n")
    assert {r.name: r.source_label for r in t.routes} == {"a": "entries:0", "c": "entries:2"}
    assert any(m.startswith("old.conf:3: error: JOB_ROUTER_ENTRIES: malformed route entry entries:1 ignored")
               for m in msgs(t))


def test_name_defaults_to_grid_resource_and_neither_keeps_the_label():
    # seed 000 §5.4.4 "Name ... If no name is specified, the default used will be the value of GridResource";
    # with neither, HTCondor's converter keeps the route as entries:N (JobRouter.cpp 24.0 ParseRoutingEntries).
    t = load('JOB_ROUTER_ENTRIES = [ GridResource = "gt2 a.edu"; Requirements = true; ] [ Requirements = true; ]\n')
    assert [r.name for r in t.routes] == ["gt2 a.edu", "entries:1"]
    assert any("neither Name nor GridResource" in m for m in msgs(t, "warning"))


def test_defaults_wrapping_merging_and_parse_errors():
    # htcondor.md §1.2: text not starting with [ is wrapped; several ads merge only with
    # MERGE_JOB_ROUTER_DEFAULT_ADS; a parse error disables routing. §6: CE appends with $(JOB_ROUTER_DEFAULTS).
    entries = 'JOB_ROUTER_ENTRIES = [ Name = "r"; Requirements = true; ]\n'
    wrapped = load("JOB_ROUTER_DEFAULTS = MaxJobs = 3; set_A = 1\n" + entries)
    assert wrapped.route("r").max_jobs == 3 and "SET A 1" in route_text(wrapped, "r")
    append = "JOB_ROUTER_DEFAULTS = [ set_A = 1; ]\nJOB_ROUTER_DEFAULTS = $(JOB_ROUTER_DEFAULTS) [ set_B = 2; ]\n" + entries
    merged = load("MERGE_JOB_ROUTER_DEFAULT_ADS = True\n" + append)
    assert "SET A 1" in route_text(merged, "r") and "SET B 2" in route_text(merged, "r")
    first_only = load(append)
    assert "SET B 2" not in route_text(first_only, "r")
    assert any("MERGE_JOB_ROUTER_DEFAULT_ADS is false" in m for m in msgs(first_only, "warning"))
    commented = load("MERGE_JOB_ROUTER_DEFAULT_ADS = True\nJOB_ROUTER_DEFAULTS = [ set_A = 1; ] /* c */ [ set_B = 2; ]\n"
                     + entries)
    assert not commented.routing_enabled and msgs(commented, "error")
    broken = load("JOB_ROUTER_DEFAULTS = [ set_A = ; ]\n" + entries)
    assert not broken.routing_enabled and any("HTCondor disables job routing" in m for m in msgs(broken, "error"))


def test_override_routing_entry():
    # htcondor.md §1.2: unset -> warning and the later replaces (keeping the earlier position);
    # True -> replace silently; False -> keep the first.
    base = 'JOB_ROUTER_ENTRIES = [ Name = "x"; Requirements = true; set_V = 1; ] [ Name = "y"; Requirements = true; ] '
    unset = load(base + '[ Name = "x"; Requirements = true; set_V = 2; ]\n')
    assert "SET V 2" in route_text(unset, "x") and any("same name 'x'" in m for m in msgs(unset, "warning"))
    true_ = load(base + '[ Name = "x"; Requirements = true; set_V = 2; OverrideRoutingEntry = true; ]\n')
    assert "SET V 2" in route_text(true_, "x") and not any("same name" in m for m in msgs(true_, "warning"))
    false_ = load(base + '[ Name = "x"; Requirements = true; set_V = 2; OverrideRoutingEntry = false; ]\n')
    assert "SET V 1" in route_text(false_, "x") and not any("same name" in m for m in msgs(false_, "warning"))
    assert [r.name for r in unset.routes] == [r.name for r in false_.routes]


def test_hash_table_order_without_route_names():
    # HashTable.cpp: hash = i + (i << 5) + c per byte; HashTable.h: 7 buckets, head insertion,
    # iterate buckets 0..n-1. "a" = 97 -> bucket 6, "b" = 98 -> bucket 0, "z" = 122 -> bucket 3.
    assert (_condor_hash("a"), _condor_hash("ab")) == (97, 97 * 33 + 98)
    t = load('JOB_ROUTER_ENTRIES = [ Name = "a"; Requirements = true; ] [ Name = "b"; Requirements = true; ] '
             '[ Name = "z"; Requirements = true; ]\n')
    assert [r.name for r in t.routes] == ["b", "z", "a"]
    assert any("hashtable order" in m for m in msgs(t, "info"))
    # growth to (7+1)*2-1 = 15 buckets at 6 elements (6/7 >= 0.8): 97..102 % 15 = 7..12
    h = CondorHashOrder()
    for i, n in enumerate("abcdef"):
        h.insert(n, i)
    assert h.size == 15 and h.names() == list("abcdef")


def test_route_names_select_and_order_entries():
    # htcondor.md §1.2: with JOB_ROUTER_ROUTE_NAMES set only the listed routes are enabled, in order.
    t = load('JOB_ROUTER_ROUTE_NAMES = b a\nJOB_ROUTER_ENTRIES = [ Name = "a"; Requirements = true; ] '
             '[ Name = "b"; Requirements = true; ] [ Name = "c"; Requirements = true; ]\n')
    assert [r.name for r in t.routes] == ["b", "a"]
    assert [(d.name, d.reason) for d in t.disabled] == [("c", "not in JOB_ROUTER_ROUTE_NAMES")]


def test_use_deprecated_false_is_honoured():
    # htcondor.md §1.1: with JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES false the old knobs are ignored.
    t = load('JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = False\nJOB_ROUTER_ENTRIES = [ Name = "a"; Requirements = true; ]\n')
    assert t.routes == [] and any("ignored because JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES is false" in m
                                  for m in msgs(t, "warning"))
    on = load('JOB_ROUTER_ENTRIES = [ Name = "a"; Requirements = true; ]\n')
    assert [r.name for r in on.routes] == ["a"] and any("removed in HTCondor 24.10" in m for m in msgs(on, "info"))


def test_entries_file_and_cmd_and_parse_order(tmp_path):
    # htcondor.md §1.2: parse order _CMD, _FILE, JOB_ROUTER_ENTRIES, JOB_ROUTER_ROUTE_<name>; a later
    # route with the same name replaces the earlier; _CMD runs only when allowed (product.md §4).
    f = tmp_path / "routes.ads"
    f.write_text('\n[ Name = "f"; Requirements = true; set_From = "file"; ]\n[ Name = "x"; Requirements = true; set_From = "file"; ]\n')
    cfg = (f"JOB_ROUTER_ENTRIES_FILE = {f}\nJOB_ROUTER_ENTRIES_CMD = /bin/routes --all\n"
           'JOB_ROUTER_ENTRIES = [ Name = "x"; Requirements = true; set_From = "entries"; ]\n')
    calls = []

    def runner(cmd):
        calls.append(cmd)
        return 0, '[ Name = "c"; Requirements = true; ] [ Name = "x"; Requirements = true; set_From = "cmd"; ]'

    off = load(cfg, cmd_runner=runner)
    assert calls == [] and any("was not run" in m for m in msgs(off, "warning"))
    t = load(cfg, allow_cmd=True, cmd_runner=runner)
    assert calls == ["/bin/routes --all"]
    assert {r.name: r.source_label for r in t.routes} == {"c": "cmd:0", "f": "file:0", "x": "entries:0"}
    assert 'SET From "entries"' in route_text(t, "x")
    assert t.route("f").location.file == str(f) and t.route("f").location.line == 2
    failing = load(cfg, allow_cmd=True, cmd_runner=lambda c: (3, "oops"))
    assert not failing.routing_enabled and any("non-zero status 3" in m for m in msgs(failing, "error"))
    missing = load("JOB_ROUTER_ENTRIES_FILE = /nonexistent/routes\n")
    assert not missing.routing_enabled and any("cannot read /nonexistent/routes" in m for m in msgs(missing, "error"))
    real = load("JOB_ROUTER_ENTRIES_CMD = printf '[ Name = \"p\"; Requirements = true; ]'\n", allow_cmd=True)
    assert [r.name for r in real.routes] == ["p"]


def test_route_knob_replaces_entry_and_single_classad_knob():
    # htcondor.md §1.2 parse order; §1.1 the ClassAd-in-a-JOB_ROUTER_ROUTE_<name> form (8.9.7-24.9):
    # no defaults ad, the suffix is the name, pre/post transforms apply (m_use_pre_route_transform).
    t = load('JOB_ROUTER_ROUTE_NAMES = x K\nJOB_ROUTER_DEFAULTS = [ set_D = 1; ]\n'
             'JOB_ROUTER_ENTRIES = [ Name = "x"; Requirements = true; ]\n'
             "JOB_ROUTER_ROUTE_x @=rt\n  REQUIREMENTS true\n  SET From \"knob\"\n@rt\n"
             "JOB_ROUTER_ROUTE_K = [ Name = \"other\"; Requirements = target.Cpus > 1; set_E = 2; ]\n")
    assert t.route("x").syntax == "transform" and any("found and overwrote a route from entries:0" in m
                                                        for m in msgs(t, "warning"))
    k = t.route("K")
    assert k.syntax == "classad" and k.uses_pre_post and "SET D" not in k.transform.text
    assert any('Name "other" in JOB_ROUTER_ROUTE_K differs' in m for m in msgs(t, "warning"))
    assert k.requirements == "Cpus > 1"


def test_classad_matching_rule_route_is_my_job_is_target():
    # htcondor.md §1.2 "Matching in the old semantics": route ad MY, job TARGET, unqualified names
    # fall back to the other ad; product.md §4 keeps that rule for ClassAd routes.
    t = load('JOB_ROUTER_ENTRIES = [ Name = "r"; MinCpus = 4; Requirements = target.Cpus >= MinCpus && WantIt; ]\n')
    r = t.route("r")
    assert r.matches(C.make_ad(job(Cpus=4, WantIt=True)))
    assert not r.matches(C.make_ad(job(Cpus=2, WantIt=True)))
    assert not r.matches(C.make_ad(job(Cpus=8)))
    assert r.requirements == "Cpus >= 4 && WantIt"  # converted: flattened against the route ad


def test_eval_set_with_route_attributes_is_flattened_target_to_my():
    # htcondor.md §1.2: eval_set_ expressions that reference route-ad attributes are flattened, TARGET->MY.
    t = load('JOB_ROUTER_ENTRIES = [ Name = "r"; Requirements = true; Base = 10; '
             'eval_set_Total = Base + target.Extra; copy_Cmd = "orig_Cmd"; ]\n')
    text = route_text(t, "r")
    assert "EVALSET Total 10 + MY.Extra" in text and "COPY Cmd orig_Cmd" in text
    ad = build_routed_ad(t, t.route("r"), job(JobUniverse=5, Extra=5, Cmd='"/bin/x"'), now=0, source_id=(1, 0))
    assert ad["Total"] == "15" and ad["orig_Cmd"] == '"/bin/x"'


def test_lib_job_router_local_routes_to_local_universe():
    # htcondor.md §6: lib_job_router_local — a vanilla job with requirements = false and
    # +WantJobRouter = true is routed to TargetUniverse 12 with set_requirements = true, WantJobRouter deleted.
    t = load_routing_table(Config.load([DATA / "condor_tests" / "lib_job_router_local.run.config"]))
    src = job(ClusterId=1, ProcId=0, JobUniverse=5, JobStatus=1, Owner='"u"', Requirements="false", WantJobRouter=True)
    [r] = [r for r in t.routes if r.matches(C.make_ad(src))]
    assert r.name == "Site 1"
    ad = build_routed_ad(t, r, src, now=0, source_id=(1, 0))
    assert (ad["JobUniverse"], ad["requirements" if "requirements" in ad else "Requirements"]) == ("12", "true")
    assert "WantJobRouter" not in ad and ad["Remote_JobUniverse"] == "5"


def test_edit_order_copy_delete_set_eval_set():
    # htcondor.md §1.2 "Edit order": all copy_*, then delete_*, then set_*, then eval_set_*;
    # seed 000 §5.4.4 Copy_/Delete_/Set_/Eval_Set_. The prefixes match case-insensitively.
    t = load('JOB_ROUTER_ENTRIES = [ Name = "r"; Requirements = true; Eval_Set_A = A * 2; SET_A = 5; '
             'delete_A = true; Copy_A = "Saved"; ]\n')
    lines = [ln for ln in route_text(t, "r").splitlines() if ln and not ln.startswith("#")]
    assert lines[-4:] == ["COPY A Saved", "DELETE A", "SET A 5", "EVALSET A A * 2"]
    ad = build_routed_ad(t, t.route("r"), job(JobUniverse=5, A=1), now=0, source_id=(1, 0))
    assert (ad["Saved"], ad["A"]) == ("1", "10")
