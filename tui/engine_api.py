"""The screens' door to the engine's queries (they live in :mod:`engine.views.queries`, shared
with the headless commands)."""

from engine.views.queries import (  # noqa: F401
    AD_BATCH,
    Check,
    FullAds,
    LintResult,
    NO_EXPLANATION,
    TraceResult,
    QUERY_TIMEOUT,
    WhatIf,
    constraint_hits,
    full_ads_of,
    job_ad,
    job_ads,
    lint_config,
    load_config,
    load_table,
    normalise_checks,
    row_ad,
    table_route_names,
    trace_job,
    what_if,
    why_not,
    why_not_candidate,
    job_ad_lines,
)
