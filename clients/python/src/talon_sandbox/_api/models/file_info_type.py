from enum import StrEnum


class FileInfoType(StrEnum):
    FILE_TYPE_DIRECTORY = "FILE_TYPE_DIRECTORY"
    FILE_TYPE_FILE = "FILE_TYPE_FILE"
    FILE_TYPE_OTHER = "FILE_TYPE_OTHER"
    FILE_TYPE_SYMLINK = "FILE_TYPE_SYMLINK"
    FILE_TYPE_UNSPECIFIED = "FILE_TYPE_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
