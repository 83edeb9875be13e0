"""HTCondor's codes are defined once (engine/contract/codes.py, issue 26 "Codes written many
times"): the enums carry HTCondor's numbers, and no bare numeric job status or hold code
comparison (``status == 1``, ``attrs.get("JobStatus") == "2"``) comes back in engine/ or tui/.

The numbers are HTCondor's: ``JobStatus`` from ``src/condor_includes/proc.h`` (htcondor.md
"Conventions"), ``HoldReasonCode`` from ``CONDOR_HOLD_CODE`` in
``src/condor_utils/condor_holdcodes.h`` (the manual's hold-code table; htcondor.md §2.4, §2.5,
§4 for the ones the engine writes)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from engine.contract.codes import HOLD_CODE_NAMES, STATUS_LETTERS, STATUS_NAMES, HoldCode, JobStatus
from tests.helpers.paths import REPO

# --- the numbers ------------------------------------------------------------------------------


def test_job_status_numbers_are_htcondors():
    # proc.h: IDLE=1, RUNNING=2, REMOVED=3, COMPLETED=4, HELD=5, TRANSFERRING_OUTPUT=6,
    # SUSPENDED=7, JOB_STATUS_BLOCKED=9; 0 is the old Unexpanded ("U" of UIRXCHE).
    assert {s.name: int(s) for s in JobStatus} == {
        "UNEXPANDED": 0, "IDLE": 1, "RUNNING": 2, "REMOVED": 3, "COMPLETED": 4, "HELD": 5,
        "TRANSFERRING_OUTPUT": 6, "SUSPENDED": 7, "BLOCKED": 9}


def test_job_status_names_and_letters_are_what_the_tools_print():
    assert dict(STATUS_NAMES) == {0: "Unexpanded", 1: "Idle", 2: "Running", 3: "Removed", 4: "Completed",
                                  5: "Held", 6: "TransferringOutput", 7: "Suspended", 9: "Blocked"}
    assert JobStatus.TRANSFERRING_OUTPUT.words == "Transferring Output"
    assert STATUS_LETTERS == "UIRXCHE"  # htcondor.md §1.7: "UIRXCHE"[JobStatus]
    assert [s.letter for s in JobStatus] == list("UIRXCHE") + [None, None]


def test_hold_codes_are_condor_holdcodes_h():
    # the codes the engine writes or reads, by HTCondor's names (condor_holdcodes.h)
    assert (HoldCode.UserRequest, HoldCode.JobPolicy, HoldCode.JobPolicyUndefined, HoldCode.SpoolingInput,
            HoldCode.HookPrepareJobFailure, HoldCode.MissedDeferredExecutionTime,
            HoldCode.InvalidCronSettings, HoldCode.SystemPolicy,
            HoldCode.SystemPolicyUndefined) == (1, 3, 5, 16, 19, 20, 25, 26, 27)
    assert [int(c) for c in HoldCode] == list(range(50))  # 0 Unspecified .. 49 CannotSwitchPrimaryGroup
    assert HOLD_CODE_NAMES[49] == "CannotSwitchPrimaryGroup" and HOLD_CODE_NAMES[0] == "Unspecified"


def test_codes_write_as_their_numbers():
    """An IntEnum written into ad text or JSON must give the number: str() and format() do on
    Python 3.11+, repr() does not (so code writes ``.text`` / ``int(...)``)."""
    s, h = JobStatus.HELD, HoldCode.InvalidCronSettings
    assert (str(s), f"{s}", f"{s:d}", format(s), s.text, "%d" % s) == ("5",) * 6
    assert (str(h), f"{h}", f"code {h}") == ("25", "25", "code 25")
    assert json.dumps({"JobStatus": s, "code": h}) == '{"JobStatus": 5, "code": 25}'
    assert repr(s) != "5"  # never repr() a code into text
    assert s == 5 and 5 == s and {5: "x"}[s] == "x" and JobStatus(5) is s


def test_codes_imports_nothing_from_the_engine():
    tree = ast.parse((REPO / "engine" / "contract" / "codes.py").read_text())
    mods = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    mods += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in mods if m == "engine" or m.startswith("engine.")]


# --- no bare comparisons --------------------------------------------------------------------

# Names that hold a job status or a hold code. A process's exit status is compared with 0 (``status
# != 0``, ``code < 0``); JobStatus 0 (Unexpanded) and HoldCode 0 (Unspecified) are never tested, so a
# comparison with the literal 0 is not one of these.
CODE_NAMES = {"status", "old_status", "new_status", "orig_status", "dstatus", "job_status", "jobstatus",
              "last_status", "lastjobstatus", "hold_code", "holdreasoncode", "hold_reason_code", "code"}
CODE_ATTRS = {"jobstatus", "lastjobstatus", "holdreasoncode"}  # ad attributes, as string constants


def _mentions_code(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id.lower() in CODE_NAMES:
            return True
        if isinstance(n, ast.Attribute) and n.attr.lower() in CODE_NAMES:
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.lower() in CODE_ATTRS:
            return True
    return False


def _literals(node: ast.AST) -> list[object]:
    """The numeric literals ``node`` is: an int (or a digit string, ad text) or a tuple/list/set of them."""
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            return []
        if isinstance(v, int) or (isinstance(v, str) and v.strip().lstrip("-").isdigit()):
            return [v]
        return []
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _literals(node.operand)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for e in node.elts for v in _literals(e)]
    return []


def bare_comparisons(roots: list[Path]) -> list[str]:
    out = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if not isinstance(node, ast.Compare):
                    continue
                sides = [node.left, *node.comparators]
                for a, b in zip(sides, sides[1:]):
                    for code_side, lit_side in ((a, b), (b, a)):
                        lits = _literals(lit_side)
                        if lits and any(v not in (0, "0") for v in lits) and _mentions_code(code_side):
                            out.append(f"{path.relative_to(root.parent)}:{node.lineno}: {ast.unparse(node)}")
                            break
                    else:
                        continue
                    break
    return out


def test_no_bare_numeric_status_or_hold_code_comparison():
    found = bare_comparisons([REPO / "engine", REPO / "tui"])
    assert not found, "compare with engine.contract.codes (JobStatus.IDLE, HoldCode.UserRequest):\n" + "\n".join(found)


def test_the_scan_finds_them(tmp_path):
    pkg = tmp_path / "engine"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        "a = r.status == 1\n"
        "b = attrs.get('JobStatus') == '2'\n"
        "c = literal_int(get(x, 'JobStatus')) in (1, 2, 5)\n"
        "d = 0 < hold_code <= 20\n"
        "e = code != 1\n"
        "f = r.exit_status == 0 or status != 0 or code < 0\n"  # exit statuses: not codes
        "g = r.status == JobStatus.IDLE\n")
    found = bare_comparisons([pkg])
    assert [f.split(":")[1] for f in found] == ["1", "2", "3", "4", "5"]


STATUS_CONSTANT = {"IDLE", "RUNNING", "REMOVED", "COMPLETED", "HELD", "TRANSFERRING_OUTPUT", "SUSPENDED", "BLOCKED"}


def code_definitions(roots: list[Path]) -> list[str]:
    """Module-level ``IDLE = 1`` / ``HOLD_… = 20``: a code defined again outside codes.py."""
    out = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if path.name == "codes.py" and path.parent.name == "contract":
                continue
            for node in ast.parse(path.read_text()).body:
                if not isinstance(node, ast.Assign):
                    continue
                names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                if any(n in STATUS_CONSTANT or n.startswith("HOLD_") for n in names) and _literals(node.value):
                    out.append(f"{path.relative_to(root.parent)}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_code_defined_twice():
    found = code_definitions([REPO / "engine", REPO / "tui"])
    assert not found, "define codes in engine/contract/codes.py only:\n" + "\n".join(found)
