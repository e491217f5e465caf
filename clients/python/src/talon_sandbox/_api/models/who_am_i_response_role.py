from enum import StrEnum


class WhoAmIResponseRole(StrEnum):
    ROLE_DEVELOPER = "ROLE_DEVELOPER"
    ROLE_OWNER = "ROLE_OWNER"
    ROLE_UNSPECIFIED = "ROLE_UNSPECIFIED"
    ROLE_VIEWER = "ROLE_VIEWER"

    def __str__(self) -> str:
        return str(self.value)
