"""The schedd's system periodic policies as ``UserPolicy::Config`` loads them
(``src/condor_utils/user_job_policy.cpp`` ``load_policy_list``, ``ENABLE_JOB_POLICY_LISTS``;
``user_job_policy.h`` ``JobPolicyExpr::is_trivial``) and HTCondor-CE's shipped hold policy, which
does not parse (htcondor.md §8)."""

from __future__ import annotations

import argparse
import io

import pytest

from engine.classad import make_ad
from engine.cli import check
from engine.lang.config import Config
from engine.lang.user_policy import SystemPolicy, analyze_periodic, policy_checks, time_deadline, trivially_false
from tests.helpers.real_configs import DATA, HEAD

NOW = 1_700_000_000
CE_DEFAULTS = DATA / "ce-head" / "01-ce-router-defaults.conf"


def idle_job(idle_for: int, **extra: str) -> dict[str, str]:
    return {"ClusterId": "7", "ProcId": "0", "JobUniverse": "5", "JobStatus": "1",
            "EnteredCurrentStatus": str(NOW - idle_for), **extra}


def periodic(cfg: Config, texts: dict[str, str], now: float = NOW):
    return analyze_periodic(make_ad(texts), texts, int(texts["JobStatus"]), SystemPolicy.from_knobs(cfg.get), now)


def test_the_ce_shipped_hold_policy_does_not_parse_and_never_fires():
    # htcondor.md §8: `$(JobStatus != 3)` is not a macro, so it stays in the value and the whole
    # SYSTEM_PERIODIC_HOLD does not parse; a NULL policy never fires (user_job_policy.cpp).
    cfg = Config.load(HEAD)
    checks = {c.knob: c for c in policy_checks(cfg.get)}
    assert not checks["SYSTEM_PERIODIC_HOLD"].parses
    assert "never fires" in checks["SYSTEM_PERIODIC_HOLD"].note and "$(JobStatus != 3)" in checks["SYSTEM_PERIODIC_HOLD"].note
    assert checks["SYSTEM_PERIODIC_REMOVE"].parses  # HOLD_CLAUSE_1/2 and the remove policy parse on their own
    assert periodic(cfg, idle_job(3 * 3600)).action == "none"  # idle three hours, never routed: not held


def test_the_corrected_ce_policy_holds_an_unrouted_job_after_30_minutes(tmp_path):
    # The intended policy, `(JobStatus != 3) && (…)` (htcondor.md §8): HOLD_CLAUSE_2 fires after
    # 1800 s idle without RoutedToJobId, with the CE's HOLD_REASON_2.
    fixed = tmp_path / "01-ce-router-defaults.conf"
    fixed.write_text(CE_DEFAULTS.read_text().replace("$(JobStatus != 3)", "(JobStatus != 3)"))
    cfg = Config.load([fixed, *HEAD[1:]])
    assert all(c.parses for c in policy_checks(cfg.get))
    assert periodic(cfg, idle_job(1700)).action == "none"
    d = periodic(cfg, idle_job(1801))
    assert (d.action, d.expr, int(d.code)) == ("hold", "SYSTEM_PERIODIC_HOLD", 26)
    assert d.reason.startswith("HTCondor-CE held job due to no matching routes, route job limit")
    assert periodic(cfg, idle_job(7200, RoutedToJobId='"8.0"')).action == "none"  # routed: the router has it
    # the schedd's incremental pass may skip it only until the clause can turn true
    job = idle_job(60)
    hold_only = SystemPolicy(hold=SystemPolicy.from_knobs(cfg.get).hold)  # the remove policy's 3600*24 is unbounded
    deadline = time_deadline(job.get, job.values(), hold_only, NOW, status=1)
    assert deadline is not None and NOW - 60 + 1800 - 1 <= deadline <= NOW - 60 + 1800 + 1


def run_check(*paths):
    out = io.StringIO()
    code = check.run(argparse.Namespace(configs=[str(p) for p in paths], allow_cmd=False, quiet=True), out)
    return code, out.getvalue()


def test_check_names_the_file_and_line_of_a_policy_that_does_not_parse(tmp_path):
    code, text = run_check(*HEAD)
    [err] = [ln for ln in text.splitlines() if ": error: " in ln]
    line = next(i for i, ln in enumerate(CE_DEFAULTS.read_text().splitlines(), 1) if ln.startswith("SYSTEM_PERIODIC_HOLD ="))
    assert code == 1 and err.startswith(f"{CE_DEFAULTS}:{line}: error: SYSTEM_PERIODIC_HOLD does not parse")
    fixed = tmp_path / "c.conf"
    fixed.write_text(CE_DEFAULTS.read_text().replace("$(JobStatus != 3)", "(JobStatus != 3)"))
    code, text = run_check(fixed, *HEAD[1:])
    assert code == 0 and ": error: " not in text, text


NAMED = """
SYSTEM_PERIODIC_HOLD_NAMES = Long, broken Zero, LONG, names Later
SYSTEM_PERIODIC_HOLD_Long = JobStatus == 1 && time() - EnteredCurrentStatus > 600
SYSTEM_PERIODIC_HOLD_Long_REASON = "idle over ten minutes"
SYSTEM_PERIODIC_HOLD_Long_SUBCODE = 7
SYSTEM_PERIODIC_HOLD_broken = JobStatus == 1 &&
SYSTEM_PERIODIC_HOLD_Zero = (0)
SYSTEM_PERIODIC_HOLD_Later = JobStatus == 1
SYSTEM_PERIODIC_HOLD = JobStatus == 1
SYSTEM_PERIODIC_HOLD_REASON = "nameless"
"""


def test_named_policies_come_first_in_list_order_and_bad_ones_are_left_out():
    # load_policy_list: names unique without regard to case, NAMES skipped, one that does not parse
    # ignored (with a SchedLog warning), a trivially false one left out; the nameless knob last.
    cfg = Config.from_text(NAMED, "named.conf")
    pol = SystemPolicy.from_knobs(cfg.get)
    assert [p.knob for p in pol.named] == ["SYSTEM_PERIODIC_HOLD_Long", "SYSTEM_PERIODIC_HOLD_Later"]
    assert [k for k, *_ in pol.for_action("SYSTEM_PERIODIC_HOLD")] == [
        "SYSTEM_PERIODIC_HOLD_Long", "SYSTEM_PERIODIC_HOLD_Later", "SYSTEM_PERIODIC_HOLD"]
    d = periodic(cfg, idle_job(900))
    # AnalyzeSinglePeriodicPolicy: m_fire_expr is the nameless knob; _REASON/_SUBCODE of the tag
    assert (d.expr, d.reason, d.subcode) == ("SYSTEM_PERIODIC_HOLD", "idle over ten minutes", 7)
    d = periodic(cfg, idle_job(60))
    assert d.reason == "The system macro SYSTEM_PERIODIC_HOLD expression 'JobStatus == 1' evaluated to TRUE"
    bad = {c.knob: c for c in policy_checks(cfg.get) if not c.parses}
    assert list(bad) == ["SYSTEM_PERIODIC_HOLD_broken"] and "ignores it" in bad["SYSTEM_PERIODIC_HOLD_broken"].note


@pytest.mark.parametrize("text,trivial", [
    ("0", True), ("false", True), ("FALSE", True), ("(0)", True), ("0.5", True), ("  ", True), (None, True),
    ("1", False), ("true", False), ("(1)", False), ("JobStatus == 0", False), ("0 || 0", False), ("(0", False),
])
def test_trivially_false_is_job_policy_expr_is_trivial(text, trivial):
    # JobPolicyExpr::is_trivial: empty, or ExprTreeIsLiteralBool (a literal number, parentheses
    # dived into, truncated to an integer) that is false.
    assert trivially_false(text) is trivial
