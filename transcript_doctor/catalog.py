"""The placeholder and interruption-marker catalog: vendor strings as data, not code.

Vendors add and rename their filler strings with every release; keeping them in
``rules/placeholders.json`` (validated against ``rules/catalog.schema.json``) lets a user
extend the list without a release and keeps the checks free of vendor knowledge.
"""

from __future__ import annotations

import re
import sys
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson

from transcript_doctor.plain import Value

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

INTERRUPTION = "interruption"
PARTIAL_SUFFIX = "partial-suffix"


class CatalogError(Exception):
    """A catalog file that cannot be used; the message names the file and the entry."""


class Marker(Value):
    __slots__ = ("distinctive", "harness_only", "id", "kind", "regex", "source", "text", "vendor")
    id: Final[str]
    kind: Final[str]
    text: Final[str | None]
    # The regular expression's source: compiled on first use (``_compile`` keeps it), as
    # most runs search only the catalog's combined expressions (start-up).
    regex: Final[str | None]
    distinctive: Final[bool]
    harness_only: Final[bool]
    vendor: Final[str]
    source: Final[str]

    def __init__(
        self,
        id: str,
        kind: str,
        text: str | None,
        regex: str | None,
        distinctive: bool,
        harness_only: bool,
        vendor: str,
        source: str,
    ) -> None:
        self.id = id
        self.kind = kind
        self.text = text
        self.regex = regex
        self.distinctive = distinctive
        self.harness_only = harness_only
        self.vendor = vendor
        self.source = source

    @property
    def pattern(self) -> re.Pattern[str] | None:
        return None if self.regex is None else _compile(self.regex)

    def matches(self, stripped: str) -> bool:
        if self.text is not None:
            return stripped == self.text
        assert self.regex is not None
        return _compile(self.regex).fullmatch(stripped) is not None

    def find(self, text: str) -> str | None:
        """The marker as it occurs inside ``text``, or None."""
        if self.text is not None:
            return self.text if self.text in text else None
        assert self.regex is not None
        found = _compile(self.regex).search(text)
        return found.group() if found else None


# ``re``'s own cache is looked up through two Python calls and a key of four: this is one
# dict lookup (the screen asks a pattern of every reply that mentions a marker).
_compile = cache(re.compile)


class Catalog(Value):
    # No __slots__: the cached properties below live in the instance's __dict__, and are
    # no field (equality, hash and repr are the markers').
    _fields = ("markers",)
    markers: Final[tuple[Marker, ...]]

    def __init__(self, markers: tuple[Marker, ...]) -> None:
        self.markers = markers

    @cached_property
    def _exact(self) -> dict[str, tuple[Marker, ...]]:
        table: dict[str, list[Marker]] = {}
        for marker in self.markers:
            if marker.text is not None:
                table.setdefault(marker.text, []).append(marker)
        return {text: tuple(found) for text, found in table.items()}

    @cached_property
    def _patterns(self) -> tuple[Marker, ...]:
        return tuple(m for m in self.markers if m.regex is not None)

    @cached_property
    def _model_text_markers(self) -> tuple[Marker, ...]:
        """The markers that can flag a text the vendor did not mark as harness-written."""
        return tuple(
            m for m in self.markers if not m.harness_only or m.distinctive or m.kind == PARTIAL_SUFFIX
        )

    @cached_property
    def _anywhere(self) -> re.Pattern[str] | None:
        """One search for all of them; None when they cannot share one (a user pattern
        with groups or inline flags): each is then searched on its own."""
        markers = self._model_text_markers
        return _combined(markers) if markers else None

    @cached_property
    def _model_checks(
        self,
    ) -> tuple[re.Pattern[str], re.Pattern[str], frozenset[str], tuple[str, ...]] | None:
        """What ``flags_model_text`` asks, each in one call: a search for the distinctive
        markers, a full match of the patterns and the set of the texts that may be a whole
        model reply, the partial suffixes; None when the patterns cannot share one."""
        distinctive = _combined([m for m in self.markers if m.distinctive and m.kind != PARTIAL_SUFFIX])
        model = [m for m in self.markers if not m.harness_only]
        whole = _combined([m for m in model if m.regex is not None])
        if distinctive is None or whole is None:
            return None
        exact = frozenset(m.text for m in model if m.text is not None)
        suffixes = tuple(m.text for m in self.markers if m.kind == PARTIAL_SUFFIX and m.text)
        return distinctive, whole, exact, suffixes

    def flags_model_text(self, text: str, stripped: str, calls: bool, final: bool = True) -> bool:
        """Whether a reply the vendor did not mark as harness-written holds a distinctive
        marker or, in a turn that calls no tool, is a whole marker or (``final``: the
        history's last turn) ends with a partial one: ``distinctive_in(text)``, then
        ``whole_match(stripped, False)`` and ``partial_suffix(text)``, answered as one
        boolean with one search each (the screen asks it of every reply that mentions a
        marker).  A partial suffix is TD101's only where it ends the history: a reply that
        ends with one and is answered (Cline's ``[Response interrupted by API Error]``,
        then the user's next prompt) is flagged by no rule."""
        checks = self._model_checks
        if checks is None:
            if self.distinctive_in(text) is not None:
                return True
            return not calls and (
                self.whole_match(stripped, False) is not None
                or (final and self.partial_suffix(text) is not None)
            )
        distinctive, whole, exact, suffixes = checks
        if distinctive.search(text) is not None:
            return True
        if calls:
            return False
        return (
            stripped in exact
            or whole.fullmatch(stripped) is not None
            or (final and text.rstrip().endswith(suffixes))
        )

    def _may_occur(self, text: str) -> bool:
        """False when no marker that can flag model text occurs in ``text``: one search
        instead of one per marker, for a catalog whose markers cannot share the searches
        of ``_model_checks`` (else each method asks its own, far cheaper)."""
        anywhere = self._anywhere
        return anywhere is None or anywhere.search(text) is not None

    def whole_match(self, stripped: str, harness_written: bool) -> Marker | None:
        """The marker that is this whole (trimmed) text, if any (first in catalog order)."""
        if not harness_written:
            checks = self._model_checks
            if checks is None:
                if not self._may_occur(stripped):
                    return None
            elif stripped not in checks[2] and checks[1].fullmatch(stripped) is None:
                return None  # the texts and patterns a model reply may be, asked at once
        found = [m for m in self._exact.get(stripped, ()) if harness_written or not m.harness_only]
        for marker in self._patterns:
            if (harness_written or not marker.harness_only) and marker.matches(stripped):
                found.append(marker)
                break
        return min(found, key=self.markers.index) if found else None

    def distinctive_in(self, text: str) -> tuple[Marker, str] | None:
        """A distinctive marker inside a text, with the words that matched (TD203)."""
        checks = self._model_checks
        if not (self._may_occur(text) if checks is None else checks[0].search(text) is not None):
            return None
        for marker in self.markers:
            if marker.distinctive and marker.kind != PARTIAL_SUFFIX:
                found = marker.find(text)
                if found is not None:
                    return marker, found
        return None

    def partial_suffix(self, text: str) -> Marker | None:
        """A vendor's partial-turn marker that ends this text (TD101)."""
        if self._model_checks is None and not self._may_occur(text):
            return None
        tail = text.rstrip()
        for marker in self.markers:
            if marker.kind == PARTIAL_SUFFIX and marker.text and tail.endswith(marker.text):
                return marker
        return None


def _combined(markers: list[Marker] | tuple[Marker, ...]) -> re.Pattern[str] | None:
    """One expression any of the markers matches (an alternative each, so a full match
    is one of them whole); None when they cannot share one (a user pattern with groups
    or inline flags).  With no marker it matches nothing."""
    alternatives = [f"(?:{m.regex})" if m.regex is not None else re.escape(m.text or "") for m in markers]
    try:
        combined = re.compile("|".join(alternatives) if alternatives else "(?!)")
    except re.error:
        return None
    # A group can only come from a pattern (texts are escaped): then they cannot share it.
    return None if combined.groups else combined


def rules_dir() -> Traversable:
    """``rules/`` as shipped inside the wheel, or beside the package in a checkout."""
    here = Path(__file__)
    if here.is_file():  # the package is a folder: what importlib.resources would find
        shipped: Traversable = here.parent / "rules"
    else:  # a zipped install (importlib.resources costs start-up: only then)
        from importlib.resources import files

        shipped = files("transcript_doctor") / "rules"
    if shipped.is_dir():
        return shipped
    return here.resolve().parent.parent / "rules"


@cache
def _schema() -> Any:
    return orjson.loads((rules_dir() / "catalog.schema.json").read_bytes())


def parse(data: bytes, name: str, validate: bool = True) -> tuple[Marker, ...]:
    """Compile one catalog document, first validating it against the schema.

    The built-in catalog is validated by the test suite instead of on every run:
    importing jsonschema would double the start-up of a pre-commit hook.
    """
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CatalogError(f"{name}: not valid JSON ({exc})") from None
    if validate:
        import jsonschema  # slow to import: only for catalogs that are not ours

        validator = jsonschema.Draft7Validator(_schema())
        error = jsonschema.exceptions.best_match(validator.iter_errors(document))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            raise CatalogError(f"{name}: invalid entry at {where}: {error.message}")
    markers = []
    for entry in document["markers"]:
        regex = entry.get("pattern")
        if validate and regex is not None:  # (the built-in's: checked by tests/test_catalog.py)
            try:
                pattern = re.compile(regex)
            except re.error as exc:
                raise CatalogError(f"{name}: marker {entry['id']}: bad pattern: {exc}") from None
            if not pattern.fullmatch(entry["example"]):
                raise CatalogError(f"{name}: marker {entry['id']}: pattern does not match its example")
        markers.append(
            Marker(
                id=entry["id"],
                kind=entry["kind"],
                text=entry.get("text"),
                regex=regex,
                distinctive=entry["distinctive"],
                harness_only=entry.get("harness_only", False),
                vendor=entry["vendor"],
                source=entry["source"],
            )
        )
    return tuple(markers)


def load(extra: tuple[Path, ...] = ()) -> Catalog:
    """The built-in catalog plus any ``extend-catalog`` files, each validated."""
    markers = list(
        parse((rules_dir() / "placeholders.json").read_bytes(), "placeholders.json", validate=False)
    )
    for path in extra:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CatalogError(f"{path}: cannot read ({exc.strerror})") from None
        markers.extend(parse(data, str(path)))
    return Catalog(tuple(markers))
