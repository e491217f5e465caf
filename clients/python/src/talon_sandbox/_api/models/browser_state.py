from enum import StrEnum


class BrowserState(StrEnum):
    BROWSER_STATE_RUNNING = "BROWSER_STATE_RUNNING"
    BROWSER_STATE_STARTING = "BROWSER_STATE_STARTING"
    BROWSER_STATE_STOPPED = "BROWSER_STATE_STOPPED"
    BROWSER_STATE_UNSPECIFIED = "BROWSER_STATE_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
