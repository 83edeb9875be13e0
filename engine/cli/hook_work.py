"""The hook workbench behind ``routedeck hook run`` / ``hook check`` (:mod:`engine.cli.hook`, whose
docstring says what the commands do): imported where a hook command runs, so the hooks, the daemon
cron managers and the ClassAd layer are not imported by every command's parser."""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from engine.classad import evaluate, format_ad, format_value, is_true, make_ad
from engine.cli import args as argcheck
from engine.cli.jsonout import emit
from engine.execute import daemon_cron
from engine.execute import hooks as hk
from engine.hookrun import ALLOW_FLAG, validate_hook_path
from engine.lang.config import Config

ROUTER_TYPES = ("TRANSLATE_JOB", "JOB_FINALIZE", "JOB_CLEANUP")
FAMILY_OF = {hk.FETCH_WORK: "startd", hk.REPLY_FETCH: "startd", hk.EVICT_CLAIM: "startd",
             hk.PREPARE_JOB: "starter", hk.UPDATE_JOB_INFO: "starter", hk.JOB_EXIT: "starter",
             **{t: "router" for t in ROUTER_TYPES}}
CRON_KEYWORDS = (daemon_cron.STARTD_CRON, daemon_cron.SCHEDD_CRON)

class UsageError(Exception):
    """Bad arguments or input files: exit 2."""


class NotUsable(UsageError):
    """The hook is not configured or its path is refused: exit 1."""


def _read_ad(path: str, what: str) -> dict[str, str]:
    from engine.cli.route import read_jobads  # noqa: PLC0415 (the one job-ads reader)

    try:
        with open(path, "rb") as fh:
            data = fh.read(16 << 20)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror}") from None
    ads, _pos, bad = read_jobads(data, path)
    if bad:
        raise UsageError(str(bad[0]))
    if len(ads) != 1:
        raise UsageError(f"{path}: {what} file holds {len(ads)} ads, give exactly one")
    return ads[0]


def run_hook_cmd(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    for given in [args.job, args.slot, args.dest] + list(args.configs):
        if given and given != "-" and (why := argcheck.unreadable(given, directory=given in args.configs)):
            return argcheck.usage_error("hook run", why)
    try:
        report = hook_run(args)
    except UsageError as exc:
        print(f"routedeck hook run: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, NotUsable) else 2
    if args.json:
        emit(report, out)
    else:
        _print_report(report, out)
    if report["withheld"]:  # a finding, not a usage error: the report above is what would run
        print(f"routedeck hook run: {report['path']} was not run: give {ALLOW_FLAG} to run it", file=sys.stderr)
        return 1
    return 0


SAMPLES = Path(__file__).resolve().parents[2] / "sample_configs"  # the shipped samples (a checkout's tracked files)


def shipped_sample(configs: list[str]) -> Path | None:
    """The directory of a shipped execute sample (``sample_configs/hooks``: ``hooks/`` beside the
    config) among ``configs``, None for any other config (an admin's hooks run where they are)."""
    for given in configs:
        where = Path(given).resolve().parent
        if (where == SAMPLES or SAMPLES in where.parents) and (where / "hooks").is_dir():
            return where
    return None


def hook_run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the hook (module docstring). A shipped sample's hooks run on a copy of it, as the demo
    stages it (engine.feeds.demo_files.stage_execute): its FETCH_WORK moves the queue's files, and
    ran in place it renamed the checkout's tracked ``queue/job1.job`` (issue 29 handling list)."""
    sample = shipped_sample(list(args.configs)) if args.allow_hooks else None
    if sample is None:
        return _hook_run(args, list(args.configs))
    from engine.feeds.demo_files import stage_execute  # noqa: PLC0415 - shipped samples only

    with tempfile.TemporaryDirectory(prefix="routedeck-hook-") as scratch:
        extra = stage_execute(sample, Path(scratch))
        print(f"routedeck hook run: {sample.name} is a shipped sample: its hooks run on a copy in {scratch} "
              "(removed after the run)", file=sys.stderr)
        return _hook_run(args, [*args.configs, *map(str, extra)])


def _hook_run(args: argparse.Namespace, configs: list[str]) -> dict[str, Any]:
    cfg = Config.load(configs) if configs else Config.from_text("")
    keyword, hook = args.keyword, args.hook.upper()
    if keyword.upper() in CRON_KEYWORDS:
        return _run_cron(cfg, keyword.upper(), args.hook, args.allow_hooks)
    family = "router" if hook in ROUTER_TYPES or (args.router and hook in (hk.UPDATE_JOB_INFO, hk.JOB_EXIT)) \
        else FAMILY_OF.get(hook)
    if family is None:
        raise UsageError(f"unknown hook type {args.hook!r} (FETCH_WORK, REPLY_FETCH, EVICT_CLAIM, PREPARE_JOB, "
                         "UPDATE_JOB_INFO, JOB_EXIT, TRANSLATE_JOB, JOB_FINALIZE, JOB_CLEANUP, or a cron job "
                         "with STARTD_CRON/SCHEDD_CRON)")
    runner = hk.HookRunner(cfg, allow_run=args.allow_hooks)
    if family == "router":
        from engine.router import hooks as rh  # noqa: PLC0415

        mgr = rh.HookManager(cfg)
        path = mgr.path(hook, keyword)
        rejection = next(iter(mgr.rejections.values()), None)
    else:
        path = runner.path(keyword, hook)
        rejection = runner.rejections.get(f"{keyword}_HOOK_{hook}")
    if path is None:
        raise NotUsable(rejection or f"{keyword}_HOOK_{hook} is not set in the config")
    needs_job = hook != hk.FETCH_WORK
    if needs_job and not args.job:
        raise UsageError(f"{hook} needs the job ad: --job FILE")
    job = _read_ad(args.job, "job ad") if args.job else {}
    from engine.execute.startd import Startd  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="routedeck-hook-") as tmp:
        startd = Startd(cfg, tmp, num_slots=1, allow_hooks=False, host=cfg.get("FULL_HOSTNAME") or None)
        slot_ad = _read_ad(args.slot, "slot ad") if args.slot else startd.slot_ad(startd.slots[0])
        if family == "router":
            return _run_router(rh, hook, path, job, args, runner)
        return _run_execute(cfg, runner, startd, keyword, hook, job, slot_ad, args, Path(tmp))


def _run_execute(cfg: Config, runner: hk.HookRunner, startd: Any, keyword: str, hook: str, job: dict[str, str],
                 slot_ad: dict[str, str], args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    from engine.execute.starter import Starter  # noqa: PLC0415

    claim = "<fetch#1#slot1>"
    env = cwd = None
    call_args: tuple[str, ...] = ()
    timeout = None
    if hook == hk.FETCH_WORK:
        stdin = hk.fetch_stdin(slot_ad)
    elif hook == hk.REPLY_FETCH:
        stdin = hk.reply_fetch_stdin(job, slot_ad, None if args.reject else claim)
        call_args = ("reject" if args.reject else "accept",)
    elif hook == hk.EVICT_CLAIM:
        stdin = hk.evict_claim_stdin(job, slot_ad, claim)
    else:  # starter hooks: the starter's environment and sandbox as cwd
        sandbox = tmp / "execute" / "dir_1"
        sandbox.mkdir(parents=True)
        starter = Starter("1.0", dict(job), sandbox, runner, cfg, lambda _r: None)
        exit_attrs = {k: v for k, v in job.items() if k in ("ExitCode", "ExitSignal")} if hook == hk.JOB_EXIT else None
        env, cwd = starter._hook_env(exit_attrs), str(sandbox)
        if hook == hk.PREPARE_JOB:
            stdin, call_args = hk.sprint_ad(job), runner.hook_args(keyword, hook)
        elif hook == hk.UPDATE_JOB_INFO:
            stdin = hk.update_stdin(job, {"JobState": '"Running"', "NumPids": "1"})
        else:
            stdin, call_args = hk.sprint_ad(job), (args.reason,)
            timeout = runner.hook_timeout(keyword, hk.JOB_EXIT, hk.JOB_EXIT_TIMEOUT)
    inv = runner.invoke(FAMILY_OF[hook], keyword, hook, "slot1" if FAMILY_OF[hook] == "startd" else "1.0", stdin,
                        0, args=call_args, env=env, timeout=timeout, cwd=cwd)
    assert inv is not None
    report = _base(inv)
    if inv.result is None:
        return report
    r = inv.result
    if hook == hk.FETCH_WORK:
        if r.unfinished:
            report.update(action="no job", why=r.describe())
            return report
        try:
            fetched = hk.fetch_output(r.stdout, f"{r.path} stdout")
        except hk.HookOutputError as exc:
            report.update(action="no job", why=f"ignoring invalid hook output: {exc}")
            return report
        if not fetched:
            report.update(action="no work", why="empty output")
            return report
        start = evaluate(startd.start_expr, make_ad(slot_ad), make_ad(fetched))
        rank = evaluate(startd.rank_expr, make_ad(slot_ad), make_ad(fetched))
        report["parsed"] = fetched
        if is_true(start):
            report.update(action="accept", why=f"START is true; Rank {format_value(rank)} (a claimed slot "
                                               "takes it only with a strictly greater Rank)")
        else:
            report.update(action="reject", why=f"START is {format_value(start)} for this job")
    elif hook == hk.PREPARE_JOB:
        o = hk.prepare_outcome(r)
        report.update(action=o.action, why=o.message, parsed=dict(o.attrs), problem=o.problem)
        if o.action == "run":
            merged = dict(job)
            daemon_cron.merge_attrs(merged, o.attrs, ignoring=frozenset())  # case-insensitive, as the starter merges
            report["job_ad_after"] = merged
        elif o.action == "hold":
            report["hold"] = {"HoldReasonCode": int(o.hold_code), "HoldReasonSubCode": o.hold_subcode}  # the number, not the enum's repr
    else:
        report.update(action="advisory" if hook != hk.JOB_EXIT else "waited for",
                      why=f"{r.describe()}; output ignored")
    return report


def _run_router(rh: Any, hook: str, path: str, job: dict[str, str], args: argparse.Namespace,
                runner: hk.HookRunner) -> dict[str, Any]:
    dest = _read_ad(args.dest, "routed ad") if args.dest else dict(job)
    if hook == "TRANSLATE_JOB":
        stdin, outcome = rh.translate_stdin(rh.route_description("workbench", 5, None), job), rh.translate_outcome
    elif hook == hk.UPDATE_JOB_INFO:
        stdin, outcome = rh.update_stdin(dest), rh.update_outcome
    elif hook in ("JOB_FINALIZE", hk.JOB_EXIT):
        stdin, outcome = rh.finalize_stdin(job, dest), rh.finalize_outcome
    else:
        stdin, outcome = rh.cleanup_stdin(dest), rh.cleanup_outcome
    inv = runner.invoke_path("router", args.keyword, hook, "job", path, stdin, 0)
    report = _base(inv)
    if inv.result is not None:
        o = outcome(inv.result)
        report.update(action=o.action, why=o.message or inv.result.describe(), parsed=dict(o.attrs))
    return report


def _run_cron(cfg: Config, mgr_name: str, job_name: str, allow: bool) -> dict[str, Any]:
    from engine.execute.startd import Startd  # noqa: PLC0415

    runner = hk.HookRunner(cfg, allow_run=allow)
    mgr = daemon_cron.CronManager(cfg, mgr_name, runner)
    match = [j.name for j in mgr.jobs if j.name.lower() == job_name.lower()]
    if not match:
        why = [str(p) for p in mgr.problems if p.job.lower() == job_name.lower()]
        raise NotUsable("; ".join(why) or f"{mgr_name}_JOBLIST has no usable job {job_name!r}")
    inv = mgr.run(match[0], 0)
    report = _base(inv)
    if inv.result is None:
        return report
    report.update(action=inv.decision, why=inv.error or inv.result.describe(), parsed=dict(inv.parsed or {}),
                  ads={name: attrs for name, (_j, attrs) in mgr.ads.items() if attrs})
    if mgr_name == daemon_cron.STARTD_CRON:
        with tempfile.TemporaryDirectory(prefix="routedeck-hook-") as tmp:
            startd = Startd(cfg, tmp, allow_hooks=False, host=cfg.get("FULL_HOSTNAME") or None)
            report["slots"] = {}
            for slot in startd.slots:
                attrs, why = mgr.slot_attrs(slot.slot_id, startd.slot_ad(slot))
                report["slots"][slot.name] = {"merged": attrs, "why": why}
    else:
        report["schedd_ad"] = mgr.schedd_attrs()
    return report


def _base(inv: hk.Invocation) -> dict[str, Any]:
    r = inv.result
    return {"family": inv.family, "keyword": inv.keyword, "hook": inv.hook, "path": inv.path,
            "args": list(inv.args), "stdin": inv.stdin, "withheld": r is None,
            "exit": None if r is None else r.returncode, "described": inv.summary(),
            "stdout": r.stdout if r else "", "stderr": r.stderr if r else ""}


def _print_report(rep: dict[str, Any], out: TextIO) -> None:
    args = " ".join(rep["args"])
    out.write(f"{rep['family']} hook {rep['keyword']} {rep['hook']}: {rep['path']}{' ' + args if args else ''}\n")
    out.write("stdin:\n" + "".join(f"  | {line}\n" for line in rep["stdin"].splitlines()))
    if rep["withheld"]:
        out.write(f"not run: needs {ALLOW_FLAG}\n")
        return
    out.write(f"{rep['described']}\n")
    if rep["stdout"]:
        out.write("stdout:\n" + "".join(f"  | {line}\n" for line in rep["stdout"].splitlines()[:200]))
    if rep["stderr"]:
        out.write("stderr:\n" + "".join(f"  | {line}\n" for line in rep["stderr"].splitlines()[:50]))
    out.write(f"HTCondor would: {rep.get('action', '?')} — {rep.get('why', '')}\n")
    if rep.get("problem"):
        out.write(f"  note: {rep['problem']} (the lines before it were used)\n")
    for key, title in (("parsed", "parsed ad"), ("job_ad_after", "job ad after the update"),
                       ("schedd_ad", "schedd ad gets")):
        if rep.get(key):
            out.write(f"{title}:\n" + "".join(f"  {line}\n" for line in format_ad(rep[key]).splitlines()))
    if rep.get("hold"):
        out.write(f"  hold: {rep['hold']}\n")
    for name, s in (rep.get("slots") or {}).items():
        out.write(f"{name}: " + (", ".join(f"{k} = {v}" for k, v in s["merged"].items()) or "(nothing merged)") + "\n")
        for w in s["why"]:
            out.write(f"  {w}\n")


# ------------------------------------------------------------------------------------------
# check

_HOOK_KNOB = re.compile(r"^(.+)_HOOK_(" + "|".join(sorted(hk.ALL_HOOK_TYPES, key=len, reverse=True)) + r")$", re.I)


def hook_check(cfg: Config) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []

    def where(knob: str) -> str:
        loc = cfg.location(knob)
        return f"{loc.file}:{loc.line}" if loc else "<config>"

    for name in cfg.names():
        m = _HOOK_KNOB.match(name)
        if not m:
            continue
        kw, typ = m[1], m[2].upper()
        value = (cfg.get(name) or "").strip()
        families = {"FETCH_WORK": "startd", "REPLY_FETCH": "startd", "EVICT_CLAIM": "startd",
                    "PREPARE_JOB": "starter", "UPDATE_JOB_INFO": "starter, router", "JOB_EXIT": "starter, router",
                    "TRANSLATE_JOB": "router", "JOB_FINALIZE": "router", "JOB_CLEANUP": "router"}.get(typ, "other")
        problem = validate_hook_path(name, value) if value else None
        entries.append({"family": families, "keyword": kw, "hook": typ, "knob": name, "path": value,
                        "where": where(name), "level": "error" if problem else "ok", "problem": problem})
    used: list[tuple[str, str]] = []
    for knob in ["STARTD_JOB_HOOK_KEYWORD", "STARTER_JOB_HOOK_KEYWORD", "STARTER_DEFAULT_JOB_HOOK_KEYWORD",
                 "JOB_ROUTER_HOOK_KEYWORD", *[n for n in cfg.names() if re.fullmatch(r"SLOT\d+_JOB_HOOK_KEYWORD", n, re.I)]]:
        kw = hk._knob(cfg, knob)
        if kw:
            used.append((knob, kw))
            if knob.upper().startswith(("STARTD", "SLOT")) and not hk._knob(cfg, f"{kw}_HOOK_FETCH_WORK"):
                entries.append({"family": "startd", "keyword": kw, "hook": "FETCH_WORK", "knob": knob, "path": "",
                                "where": where(knob), "level": "warning",
                                "problem": f"{knob} = {kw} but {kw}_HOOK_FETCH_WORK is not set: the startd never "
                                           "fetches (FETCH_WORK is the one hook the others need)"})
            elif not hk.keyword_defines_any(cfg, kw):
                entries.append({"family": "keyword", "keyword": kw, "hook": "", "knob": knob, "path": "",
                                "where": where(knob), "level": "warning",
                                "problem": f"{knob} = {kw} but no {kw}_HOOK_<type> is set"})
    cron_jobs: list[dict[str, Any]] = []
    for mgr in CRON_KEYWORDS:
        jobs, problems = daemon_cron.load_jobs(cfg, mgr)
        for j in jobs:
            cron_jobs.append({"family": "cron", "manager": mgr, "job": j.name, "path": j.executable, "mode": j.mode,
                              "period": j.period, "prefix": j.prefix, "where": where(j.knob("EXECUTABLE")),
                              "slots": list(j.slots)})
        for p in problems:
            entries.append({"family": "cron", "keyword": mgr, "hook": p.job, "knob": p.knob, "path": "",
                            "where": p.where, "level": "error" if p.fatal else "warning", "problem": p.message})
    errors = sum(e["level"] == "error" for e in entries)
    return {"keywords": [{"knob": k, "keyword": v} for k, v in used], "hooks": entries, "cron": cron_jobs,
            "errors": errors, "warnings": sum(e["level"] == "warning" for e in entries),
            "config_errors": [str(e) for e in cfg.errors]}


def run_check(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    for p in args.configs:
        if not os.path.exists(p):
            print(f"routedeck hook check: cannot read {p}: No such file or directory", file=sys.stderr)
            return 2
    cfg = Config.load(args.configs)
    rep = hook_check(cfg)
    if args.json:
        emit(rep, out)
        return 1 if rep["errors"] or rep["config_errors"] else 0
    for e in rep["config_errors"]:
        out.write(f"{e}\n")
    for k in rep["keywords"]:
        out.write(f"keyword: {k['knob']} = {k['keyword']}\n")
    for e in rep["hooks"]:
        if e["level"] == "ok":
            out.write(f"{e['where']}: ok: [{e['family']}] {e['knob']} = {e['path']}\n")
    for c in rep["cron"]:
        period = f" every {c['period']} s" if c["period"] else ""
        out.write(f"{c['where']}: ok: [cron] {c['manager']} job {c['job']} ({c['mode']}{period}"
                  f"{', prefix ' + c['prefix'] if c['prefix'] else ''}) = {c['path']}\n")
    for e in rep["hooks"]:
        if e["level"] != "ok":
            out.write(f"{e['where']}: {e['level']}: [{e['family']}] {e['knob']}: {e['problem']}\n")
    out.write(f"{rep['errors']} error(s), {rep['warnings']} warning(s)\n")
    return 1 if rep["errors"] or rep["config_errors"] else 0
