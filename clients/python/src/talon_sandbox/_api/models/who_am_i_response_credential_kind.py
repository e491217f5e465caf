from enum import StrEnum


class WhoAmIResponseCredentialKind(StrEnum):
    CREDENTIAL_KIND_ACCESS_TOKEN = "CREDENTIAL_KIND_ACCESS_TOKEN"
    CREDENTIAL_KIND_API_KEY = "CREDENTIAL_KIND_API_KEY"
    CREDENTIAL_KIND_UNSPECIFIED = "CREDENTIAL_KIND_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
