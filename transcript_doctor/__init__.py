"""transcript-doctor: lint and repair stored AI-agent session transcripts.

The Python API (documented in the README) is this package's top level.  Its names are
loaded on first use (PEP 562): ``import transcript_doctor`` and ``--version`` stay as
cheap as an empty package, and no name pulls in the CLI's rich, typer or the fleet's
dask and fsspec.
"""

# Not ``typing.TYPE_CHECKING``: importing typing would cost ``--version`` several
# milliseconds (type checkers know this spelling too).
TYPE_CHECKING = False

__version__ = "0.1.0"

# Public name -> the module that defines it.
_EXPORTS = {
    "lint_path": "api",
    "lint_bytes": "api",
    "fix_bytes": "api",
    "check_messages": "messages",
    "repair_messages": "messages",
    "MessageReport": "messages",
    "CheckError": "results",
    "Edit": "results",
    "Finding": "results",
    "FixResult": "results",
    "Repair": "results",
    "Step": "results",
    "Unfixed": "results",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # what type checkers see; explicit re-exports (``as``)
    from typing import Any

    from transcript_doctor.api import fix_bytes as fix_bytes
    from transcript_doctor.api import lint_bytes as lint_bytes
    from transcript_doctor.api import lint_path as lint_path
    from transcript_doctor.messages import MessageReport as MessageReport
    from transcript_doctor.messages import check_messages as check_messages
    from transcript_doctor.messages import repair_messages as repair_messages
    from transcript_doctor.results import CheckError as CheckError
    from transcript_doctor.results import Edit as Edit
    from transcript_doctor.results import Finding as Finding
    from transcript_doctor.results import FixResult as FixResult
    from transcript_doctor.results import Repair as Repair
    from transcript_doctor.results import Step as Step
    from transcript_doctor.results import Unfixed as Unfixed


def __getattr__(name: str) -> "Any":
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
