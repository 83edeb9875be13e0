"""The screens' and widgets' one door to the engine besides :mod:`engine.contract` (types,
commands, codes): the engine's queries (they live in :mod:`engine.views.queries`, shared with the
headless commands) and the few engine helpers the UI calls (ordering rows, parsing a replay moment,
the jobs table's row sequence, a job ad's display lines). ``tui.screens`` and ``tui.widgets`` import
nothing else of the engine (import-linter contract in pyproject.toml)."""

from engine.feeds.replay.moment import FORMS as MOMENT_FORMS, parse_moment  # noqa: F401
from engine.queue.records import job_order  # noqa: F401
from engine.router.routerlog import HEADER as ROUTER_LOG_HEADER  # noqa: F401
from engine.rowseq import RowSeq  # noqa: F401
from engine.views.build import row_order  # noqa: F401
from engine.views.job_ad import AdLine  # noqa: F401
from engine.views.ledger import unreached  # noqa: F401

from engine.views.queries.access import QUERY_TIMEOUT  # noqa: F401
from engine.views.queries.ads import (  # noqa: F401
    AD_BATCH, FullAds, constraint_hits, full_ads_of, job_ad, job_ad_lines, job_ads, row_ad,
)
from engine.views.queries.lint import (  # noqa: F401
    LintResult, WhatIf, lint_config, load_config, load_table, table_route_names, what_if,
)
from engine.views.queries.routerlog import NO_ROUTER_LOG, router_log  # noqa: F401
from engine.views.queries.trace import TraceResult, trace_job  # noqa: F401
from engine.views.queries.whynot import NO_EXPLANATION, Check, ledger, why_not, why_not_candidate  # noqa: F401


def job_chains(runtime, rows, now: float, jobs=None):
    """The source → routed copy → grid job chains (``engine.views.chain``) of the routed jobs in
    ``rows`` (sources and copies: the only ones a chain has), their ads read in one engine query;
    ``jobs`` keeps the chains of those jobs (a copy stands for its source)."""
    from engine.views.chain import chains  # noqa: PLC0415 - the chain screen only

    routed = [r for r in rows if r.kind in ("source", "routed")]
    ads = {r.job: ad for r, ad in zip(routed, job_ads(runtime, routed))}
    return chains(ads, now, jobs=jobs)
