"""The real config sets under tests/data/config (copies of shared/data/real; tests/data/PROVENANCE.md)
with the warnings each must give: shared by the check tests and the route-scaling oracle."""
from __future__ import annotations

from tests.helpers.paths import TESTS

DATA = TESTS / "data" / "config"
HEAD = [DATA / "ce-head" / f for f in ("01-ce-router-defaults.conf", "01-ce-router.conf", "01-pilot-env-defaults.conf")]
V45 = [DATA / "ce-v4.5.0" / "01-ce-router-defaults.conf.in", DATA / "ce-v4.5.0" / "condor_ce_router_defaults.v4.5.0.output.conf",
       DATA / "ce-head" / "01-pilot-env-defaults.conf"]
CE_BATCH = ["02-ce-condor-defaults.conf", "02-ce-pbs-defaults.conf", "02-ce-slurm-defaults.conf", "02-ce-bosco-defaults.conf"]
LOCAL_CMD = "LOCAL_CONFIG_FILE command is not run"  # RouteDeck never runs config commands (product.md §4)
# HTCondor-CE's shipped SYSTEM_PERIODIC_HOLD does not parse, so the schedd never fires it (htcondor.md §8)
CE_HOLD = "SYSTEM_PERIODIC_HOLD does not parse as a ClassAd expression: the schedd keeps it and never fires it"


def expected_errors(files) -> list[str]:
    """The errors ``check`` must report on a real config set: the CE's hold policy (htcondor.md §8)."""
    return [CE_HOLD] if any(f.name.startswith("01-ce-router-defaults") for f in files) else []

BUNDLES = [  # (files, warnings each naming a real problem or policy)
    ([DATA / "condor_tests" / "job_router_xform.run.config"], ["route Production2 is shadowed", "route Analysis4 is shadowed"]),
    ([DATA / "condor_tests" / "job_router_basic.run.config"], ["route Production2 is shadowed", "route Analysis4 is shadowed"]),
    ([DATA / "condor_tests" / "lib_job_router_local.run.config"], []),
    ([DATA / "manual-9.0" / "job-router-new-syntax-example.conf"],
     ["route Site2 is shadowed", "route CondorSite is shadowed", "SET PeriodicRemove: the expression does not parse"]),
    ([DATA / "manual-9.0" / "job-router-old-syntax-example.conf"], ["route Site_2 is shadowed", "route Site_3 is shadowed"]),
    ([DATA / "osg-test" / "99-osgtest.condor-ce.conf.new-syntax"], []),
    ([DATA / "osg-test" / "99-osgtest.condor-ce.conf.old-syntax"], []),
    *[(HEAD + [DATA / "ce-head" / b], [LOCAL_CMD]) for b in CE_BATCH],
    (HEAD + [DATA / "ce-head" / "02-ce-condor-defaults.conf", DATA / "ce-head" / "10-ce.conf"], [LOCAL_CMD]),
    (V45 + [DATA / "ce-v4.5.0" / "02-ce-condor-defaults.conf"], [LOCAL_CMD]),
    (V45 + [DATA / "ce-v4.5.0" / "02-ce-slurm-defaults.conf"], [LOCAL_CMD]),
]
