"""Routes HTCondor would silently disable or ignore are on the board's data (the table's
disabled list, which the snapshot shows as inactive route rows) and in ``check`` (issue 13 item 4).

Sources: htcondor.md §1.3 (``JobRouter::config``: a listed name with no knob is skipped, "route
'<n>' from JOB_ROUTER_ROUTE_NAMES not found in the routing table"; unlisted routes are disabled; a
missing or unparsable pre/post-route transform sets ``m_enable_job_routing=false``), §1.2 (parse
order: ``JOB_ROUTER_ROUTE_<name>`` after ``JOB_ROUTER_ENTRIES``, a later route with the same name
replaces the earlier one).
"""

from __future__ import annotations

import io
from argparse import Namespace

from engine.cli import check
from engine.lang.config import Config
from engine.router.loader import load_routing_table

CONFIG = """\
JOB_ROUTER_ENTRIES = [ Name = "Legacy"; Requirements = true; GridResource = "batch slurm"; ]
JOB_ROUTER_ROUTE_NAMES = Legacy Ghost Good
JOB_ROUTER_ROUTE_Legacy @=end
  REQUIREMENTS Owner == "a"
@end
JOB_ROUTER_ROUTE_Good @=end
  REQUIREMENTS true
@end
JOB_ROUTER_ROUTE_Spare @=end
  REQUIREMENTS true
@end
JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES = Broken Missing
JOB_ROUTER_TRANSFORM_Broken @=end
  FROB X 1
@end
"""


def test_every_ignored_route_is_in_the_disabled_list_with_what_htcondor_does(tmp_path):
    t = load_routing_table(Config.from_text(CONFIG, "r.conf"))
    reasons = {d.name: d.reason for d in t.disabled}
    assert "HTCondor skips it" in reasons["Ghost"] and "not defined" in reasons["Ghost"]
    assert reasons["Spare"] == "not in JOB_ROUTER_ROUTE_NAMES"
    assert "shadowed by JOB_ROUTER_ROUTE_Legacy" in reasons["Legacy"]
    assert "HTCondor disables ALL job routing" in reasons["JOB_ROUTER_TRANSFORM_Broken"]
    assert "not defined" in reasons["JOB_ROUTER_TRANSFORM_Missing"]
    assert not t.routing_enabled and [r.name for r in t.routes] == ["Legacy", "Good"]
    path = tmp_path / "r.conf"
    path.write_text(CONFIG)
    out = io.StringIO()
    rc = check.run(Namespace(configs=[str(path)], allow_cmd=False, quiet=False), out)
    text = out.getvalue()
    assert rc == 1 and "routing DISABLED" in text
    for name in ("Ghost", "Spare", "Legacy", "JOB_ROUTER_TRANSFORM_Broken", "JOB_ROUTER_TRANSFORM_Missing"):
        assert f"-  {name} [" in text
    assert "r.conf:2: warning: route 'Ghost' from JOB_ROUTER_ROUTE_NAMES not found" in text
