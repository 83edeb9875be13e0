#!/bin/sh
# PREPARE_JOB: stdin is the job ad; each output line updates it. A non-zero exit would hold it.
# Jobs ask for the placeholder Cmd "sample-shell"; this node's real program is /bin/sh.
if grep -q '^Cmd = "sample-shell"' ; then
  echo 'Cmd = "/bin/sh"'
  echo 'SamplePrepared = true'
fi
