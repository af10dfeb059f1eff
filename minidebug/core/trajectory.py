"""JSONL trajectories: a header line, one line per step, a result line, each a typed record.

Every line is a JSON object whose "type" is "header", "step" or "result". The header's `format` is the
version of this layout; files written before it existed have none and count as version 1, which reads the
same. Keys a record does not declare are kept, so reading a file loses nothing that was recorded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, TypeAdapter, ValidationError, model_serializer

from ..errors import MinidebugError, UsageError
from .calls import ToolCall

FORMAT = 2  # the trajectory format this version writes, and the newest it reads


class TrajectoryError(MinidebugError, ValueError):
    """A trajectory file cannot be read: a line is malformed, or it is of a newer format than this version's."""


class RecordModel(BaseModel):
    """Base of the trajectory's records: extra keys are kept; the fields named in `omit_when_none` are left
    out of the JSON when they are None (so a line holds only what was recorded)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    omit_when_none: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: Any, info: SerializationInfo) -> Any:
        data = handler(self)
        fields = type(self).model_fields
        for name in self.omit_when_none:
            key = fields[name].alias if info.by_alias and fields[name].alias else name
            if key in data and data[key] is None:
                del data[key]
        return data

    def to_json(self) -> str:
        """The record as one JSON line (without the newline)."""
        return json.dumps(self.model_dump(mode="json", by_alias=True), ensure_ascii=False)


class Action(RecordModel):
    """A step's tool call: name, arguments, and the id the model gave the call, if any."""

    omit_when_none = ("id",)
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None

    @classmethod
    def from_call(cls, call: ToolCall) -> Action:
        return cls(name=call.name, arguments=dict(call.arguments), id=call.id)

    def to_call(self) -> ToolCall:
        return ToolCall(self.name, dict(self.arguments), self.id)


class StepInfo(RecordModel):
    """The env's `info` after a step (see `DebugEnv.step`); keys the env did not set are left out."""

    omit_when_none = ("task", "step", "tokens_used", "tokens_left", "tool", "error", "score", "max_score",
                      "tools_enabled", "truncated_by", "tampered", "suspicious")
    task: str | None = None
    step: int | None = None
    tokens_used: int | None = None
    tokens_left: int | None = None
    tool: str | None = None
    error: str | None = None
    score: int | None = None
    max_score: int | None = None
    tools_enabled: list[str] | None = None
    truncated_by: str | None = None
    tampered: bool | None = None
    suspicious: list[str] | None = None


class ExchangeContext(RecordModel):
    """How the conversation was fitted to the context budget for one request."""

    messages_sent: int
    messages_in_history: int


class Exchange(RecordModel):
    """What a model-backed agent sent and got back for one step: the messages added to the conversation since
    the previous exchange (the model's answers among them, in the endpoint's chat format), the usage of each
    request as the endpoint reported it, and how the context was fitted."""

    omit_when_none = ("context",)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    usage: list[dict[str, Any]] = Field(default_factory=list)
    context: ExchangeContext | None = None

    @property
    def completion_tokens(self) -> int:
        """Tokens the model wrote in these requests (OpenAI's `completion_tokens`, Anthropic's `output_tokens`)."""
        return sum(u.get("completion_tokens", u.get("output_tokens", 0)) or 0 for u in self.usage)

    @property
    def thought(self) -> str | None:
        """The text of the model's last answer here, if it wrote any besides its calls."""
        answers = [m for m in self.messages if m.get("role") == "assistant"]
        return (answers[-1].get("content") or None) if answers else None


class HeaderRecord(RecordModel):
    """The first line: what was run, with which limits and tools, and the first observation."""

    omit_when_none = ("tools", "observation")
    type: Literal["header"] = "header"
    format: int = FORMAT
    task: str
    task_path: str | None = None
    task_hash: str | None = None
    task_set: str | None = None
    agent: str
    strategy: str = "debug"
    model: str | None = None
    seed: int = 0
    limits: dict[str, Any] = Field(default_factory=dict)
    tools: list[str] | None = None
    observation: str | None = None
    tokens_used: int = 0


class StepRecord(RecordModel):
    """One line per step: the action, what the env answered, and (for a model-backed agent) the exchange,
    stored under the key "model"."""

    omit_when_none = ("exchange",)
    type: Literal["step"] = "step"
    step: int
    action: Action
    observation: str = ""
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: StepInfo = Field(default_factory=StepInfo)
    seconds: float = 0.0
    exchange: Exchange | None = Field(default=None, alias="model")


def episode_id(task: str, agent: str, seed: int, strategy: str = "debug") -> str:
    """The name of an episode, and of its trajectory file (`<id>.jsonl`); the strategy is named unless it
    is the default, "debug"."""
    return f"{task}.{agent}.s{seed}" if strategy == "debug" else f"{task}.{agent}.{strategy}.s{seed}"


class EpisodeOutcome(RecordModel):
    """The outcome of one episode: what `run_episode` returns, what a batch's results.json lists, what a
    trajectory's last line records (with the final diff: `ResultRecord`) and what the report reads."""

    task: str | None = None
    agent: str | None = None
    seed: int = 0
    solved: bool = False
    reward: float = 0.0
    steps: int = 0
    tokens: int = 0
    seconds: float = 0.0
    error: str | None = None
    strategy: str = "debug"
    model: str | None = None
    task_set: str | None = None
    suspicious: list[str] = []  # every finding of the episode's evals (see info["suspicious"])

    @property
    def id(self) -> str:
        return episode_id(self.task or "?", self.agent or "?", self.seed, self.strategy)


class ResultRecord(EpisodeOutcome):
    """The last line of a trajectory: the episode's outcome and its final diff."""

    type: Literal["result"] = "result"
    diff: str = ""

    def outcome(self) -> EpisodeOutcome:
        """The outcome alone, without the diff."""
        return EpisodeOutcome.model_validate(self.model_dump(exclude={"type", "diff"}))


Record = Annotated[HeaderRecord | StepRecord | ResultRecord, Field(discriminator="type")]
_RECORD: TypeAdapter[Record] = TypeAdapter(Record)


@dataclass(frozen=True)
class Trajectory:
    """A complete trajectory: its header, its steps in order, and its result."""

    header: HeaderRecord
    steps: list[StepRecord]
    result: ResultRecord

    @classmethod
    def of(cls, records: list[Record]) -> Trajectory | None:
        """The records as a trajectory, or None when they do not start with a header and end with a result."""
        if len(records) < 2 or not isinstance(records[0], HeaderRecord) or not isinstance(records[-1], ResultRecord):
            return None
        return cls(records[0], [r for r in records if isinstance(r, StepRecord)], records[-1])


def parse_record(data: Any, where: str) -> Record:
    """One record from a decoded JSON line; `where` names the file and line in errors.

    Raises:
        TrajectoryError: a header of a newer format, or a line that is not a record.
    """
    if isinstance(data, dict) and data.get("type") == "header":
        version = data.get("format", 1)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise TrajectoryError(f"{where}: trajectory format {version!r} is not a version number")
        if version > FORMAT:
            raise TrajectoryError(f"{where}: trajectory format {version} is newer than this minidebug reads "
                                  f"(format {FORMAT} at most); upgrade minidebug to read it")
        data = {**data, "format": version}
    try:
        return _RECORD.validate_python(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors())
        raise TrajectoryError(f"{where}: not a trajectory record ({problems})") from None


def _parse_line(line: str, where: str) -> Record:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise TrajectoryError(f"{where}: not JSON ({exc})") from None
    return parse_record(data, where)


class TrajectoryWriter:
    """Writes one episode as JSON lines; each line is flushed as it is written."""

    def __init__(self, path: Path, header: HeaderRecord):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO = path.open("w", encoding="utf-8")
        self._write(header)

    def step(self, record: StepRecord) -> None:
        self._write(record)

    def finish(self, result: ResultRecord) -> None:
        self._write(result)
        self.close()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def _write(self, record: RecordModel) -> None:
        self._file.write(record.to_json() + "\n")
        self._file.flush()


def read_trajectory(path: Path) -> list[Record]:
    """The records of a trajectory file, in order.

    Raises:
        TrajectoryError: the file is of a newer format, or a line is not a record.
    """
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        return [_parse_line(line, f"{path}:{number}") for number, line in enumerate(handle, 1) if line.strip()]


def read_header(path: Path) -> HeaderRecord:
    """The header of a trajectory file (its first line).

    Raises:
        TrajectoryError: the file is of a newer format, or its first line is not a header.
        OSError: the file cannot be read.
    """
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        record = _parse_line(handle.readline(), f"{path}:1")
    if not isinstance(record, HeaderRecord):
        raise TrajectoryError(f"{path}:1: not a trajectory header")
    return record


def read_result(path: Path) -> ResultRecord | None:
    """The result of a finished episode's trajectory, reading only its first and last lines; None when the
    episode did not finish (no result line, or a last line cut short).

    Raises:
        TrajectoryError: the file is of a newer format, or its result line is not a result record.
    """
    path = Path(path)
    lines = path.read_text(encoding="utf-8").strip("\n").split("\n")
    try:
        first, last = json.loads(lines[0]), json.loads(lines[-1])
    except ValueError:
        return None
    parse_record(first, f"{path}:1")
    if not isinstance(last, dict) or last.get("type") != "result":
        return None
    record = parse_record(last, f"{path}:{len(lines)}")
    assert isinstance(record, ResultRecord)
    return record


def trajectories(runs: Iterable[Path]) -> Iterator[tuple[Path, Trajectory]]:
    """(path, trajectory) of every complete trajectory in the run folders (or trajectory files), in name order.

    Raises:
        ValueError: a run folder or file does not exist.
        TrajectoryError: a file is of a newer format, or a line is not a record.
    """
    for run in runs:
        run = Path(run)
        if not run.exists():
            raise UsageError(f"{run}: no such run folder or trajectory")
        for path in sorted(run.glob("*.jsonl")) if run.is_dir() else [run]:
            trajectory = Trajectory.of(read_trajectory(path))
            if trajectory is not None:
                yield path, trajectory
