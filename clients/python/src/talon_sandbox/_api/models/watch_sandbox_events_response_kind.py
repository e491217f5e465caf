from enum import StrEnum


class WatchSandboxEventsResponseKind(StrEnum):
    SANDBOX_EVENT_KIND_BROWSER_CRASHED = "SANDBOX_EVENT_KIND_BROWSER_CRASHED"
    SANDBOX_EVENT_KIND_STATE_CHANGED = "SANDBOX_EVENT_KIND_STATE_CHANGED"
    SANDBOX_EVENT_KIND_UNSPECIFIED = "SANDBOX_EVENT_KIND_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
