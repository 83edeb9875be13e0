"""HTCondor's numeric codes, defined once: the job status (``JobStatus``) and the hold reason
(``HoldReasonCode``).

- :class:`JobStatus` is HTCondor's job state enum of ``src/condor_includes/proc.h`` (``IDLE = 1`` …
  ``SUSPENDED = 7``, ``JOB_STATUS_BLOCKED = 9``; htcondor.md "Conventions"), plus ``0``
  (Unexpanded, the status of old HTCondor versions that the ``UIRXCHE`` letters still start with).
  ``8`` (``JOB_STATUS_FAILED``) is left out: nothing here reads or writes it, and a status
  without a member is shown by its number, as before.
  Each member has its display name (:attr:`JobStatus.display`, the dashboard's and ``--json``'s
  ``"TransferringOutput"``), its words (:attr:`JobStatus.words`, ``routedeck queue``'s table:
  ``"Transferring Output"``) and, for 0..6, the letter of ``condor_router_q`` /
  ``condor_router_history`` (``"UIRXCHE"[JobStatus]``, htcondor.md §1.7).
- :class:`HoldCode` is ``CONDOR_HOLD_CODE`` of ``src/condor_utils/condor_holdcodes.h``
  (htcondor/htcondor 7491a145), with HTCondor's names and numbers (the manual's
  ``HoldReasonCode`` table).

Both are ``IntEnum``: a member equals its number (``JobStatus.IDLE == 1``), so values read from ad
text compare directly. Where a code is *written* (ClassAd text, JSON, messages) write
:attr:`JobStatus.text` / ``int(code)``: ``format()`` and ``str()`` of an ``IntEnum`` give the
number on Python 3.11+, ``repr()`` does not (tests/contracts/test_codes.py pins this).

This module imports nothing from ``engine`` (it sits in the foundation layer with the snapshot
types).
"""

from __future__ import annotations

from enum import IntEnum
from types import MappingProxyType
from typing import Mapping


class JobStatus(IntEnum):
    """``JobStatus`` (``src/condor_includes/proc.h``)."""

    UNEXPANDED = 0
    IDLE = 1
    RUNNING = 2
    REMOVED = 3
    COMPLETED = 4
    HELD = 5
    TRANSFERRING_OUTPUT = 6
    SUSPENDED = 7
    BLOCKED = 9  # JOB_STATUS_BLOCKED (late materialization)

    @property
    def display(self) -> str:
        """The name the dashboard and ``--json`` show: ``"Idle"``, ``"TransferringOutput"``."""
        return "".join(w.capitalize() for w in self.name.split("_"))

    @property
    def words(self) -> str:
        """The name in words (``routedeck queue``'s table): ``"Transferring Output"``."""
        return " ".join(w.capitalize() for w in self.name.split("_"))

    @property
    def letter(self) -> str | None:
        """``condor_router_q`` / ``condor_router_history``'s letter (``"UIRXCHE"[JobStatus]``);
        None for 7 and 9, which the tools' string does not reach."""
        return STATUS_LETTERS[self] if self < len(STATUS_LETTERS) else None

    @property
    def text(self) -> str:
        """The value as ClassAd text (``"1"``), for writing into an ad."""
        return str(int(self))


STATUS_LETTERS = "UIRXCHE"  # condor_router_q / condor_router_history letters for 0..6 (htcondor.md §1.7)
STATUS_NAMES: Mapping[int, str] = MappingProxyType({int(s): s.display for s in JobStatus})


class HoldCode(IntEnum):
    """``CONDOR_HOLD_CODE`` (``src/condor_utils/condor_holdcodes.h``, htcondor/htcondor 7491a145)."""

    Unspecified = 0
    UserRequest = 1
    GlobusGramError = 2
    JobPolicy = 3
    CorruptedCredential = 4
    JobPolicyUndefined = 5
    FailedToCreateProcess = 6
    UnableToOpenOutput = 7
    UnableToOpenInput = 8
    UnableToOpenOutputStream = 9
    UnableToOpenInputStream = 10
    InvalidTransferAck = 11
    TransferOutputError = 12
    TransferInputError = 13
    IwdError = 14
    SubmittedOnHold = 15
    SpoolingInput = 16
    JobShadowMismatch = 17
    InvalidTransferGoAhead = 18
    HookPrepareJobFailure = 19
    MissedDeferredExecutionTime = 20
    StartdHeldJob = 21
    UnableToInitUserLog = 22
    FailedToAccessUserAccount = 23
    NoCompatibleShadow = 24
    InvalidCronSettings = 25
    SystemPolicy = 26
    SystemPolicyUndefined = 27
    GlexecChownSandboxToUser = 28
    PrivsepChownSandboxToUser = 29
    GlexecChownSandboxToCondor = 30
    PrivsepChownSandboxToCondor = 31
    MaxTransferInputSizeExceeded = 32
    MaxTransferOutputSizeExceeded = 33
    JobOutOfResources = 34
    InvalidDockerImage = 35
    FailedToCheckpoint = 36
    EC2UserError = 37
    EC2InternalError = 38
    EC2AdminError = 39
    EC2ConnectionProblem = 40
    EC2ServerError = 41
    EC2InstancePotentiallyLostError = 42
    PreScriptFailed = 43
    PostScriptFailed = 44
    SingularityTestFailed = 45
    JobDurationExceeded = 46
    JobExecuteExceeded = 47
    HookShadowPrepareJobFailure = 48
    CannotSwitchPrimaryGroup = 49

    @property
    def text(self) -> str:
        """The value as ClassAd text (``"16"``), for writing into an ad."""
        return str(int(self))


HOLD_CODE_NAMES: Mapping[int, str] = MappingProxyType({int(c): c.name for c in HoldCode})
