"""Which volatile or unordered values reach which request parts, in one document."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from prefixlint.pyflow.bindings import Bindings
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.flow import Flow
from prefixlint.pyflow.origins import Origin
from prefixlint.pyflow.sinks import PREFIX_REGIONS, PROMPT, Sink, find_sinks
from prefixlint.pyflow.tables import UNORDERED


@dataclass(frozen=True, eq=False)
class Reach:
    """``origin`` ends up in ``sink``."""

    origin: Origin
    sink: Sink

    @property
    def in_prefix(self) -> bool:
        """Whether the value lands where later requests would reuse what follows it."""
        if self.sink.region not in PREFIX_REGIONS:
            return False
        if self.sink.named and (
            self.origin.opaque or (self.origin.code == UNORDERED and self.origin.consumer is None)
        ):
            # Known only by its name, the sink needs a direct flow: not a value passed into an
            # unknown call, nor a set that is never iterated into the prompt.
            return False
        return not (self.sink.region == PROMPT and self.origin.tail)


class Analysis:
    """Sinks of a document and the flows into them, computed once."""

    def __init__(self, document: PythonDocument) -> None:
        self.document = document
        self.bindings = Bindings(document)
        self.flow = Flow(document, self.bindings)
        found = find_sinks(document)
        self.sinks = found.concrete
        self.message_lists = found.message_lists
        self.reaches: list[Reach] = []
        for sink in self.sinks:
            self._follow(sink)
        for sink in found.named:
            if id(sink.named) not in self.flow.visited:
                self._follow(sink)

    def _follow(self, sink: Sink) -> None:
        if not self.flow.possible:
            return
        self.flow.root = sink
        self.reaches += [Reach(origin, sink) for origin in self.flow.origins(sink.expr)]

    def sink_of(self, node) -> Sink | None:
        """The first sink whose value was explained through ``node``, if any."""
        return self.flow.roots.get(id(node))

    @cached_property
    def _first_in_prefix(self) -> dict[str, list[Reach]]:
        by_code: dict[str, list[Reach]] = {}
        seen: set[tuple[str, int]] = set()
        for reach in self.reaches:
            key = (reach.origin.code, id(reach.origin.node))
            if reach.in_prefix and key not in seen:
                seen.add(key)
                by_code.setdefault(reach.origin.code, []).append(reach)
        return by_code

    def in_prefix(self, code: str) -> list[Reach]:
        """One reach per origin of ``code`` that lands in a request prefix (first sink wins)."""
        return self._first_in_prefix.get(code, [])
