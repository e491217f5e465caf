from enum import StrEnum


class CreateFileUrlRequestOperation(StrEnum):
    FILE_URL_OPERATION_READ = "FILE_URL_OPERATION_READ"
    FILE_URL_OPERATION_UNSPECIFIED = "FILE_URL_OPERATION_UNSPECIFIED"
    FILE_URL_OPERATION_WRITE = "FILE_URL_OPERATION_WRITE"

    def __str__(self) -> str:
        return str(self.value)
