"""The generated layer's operations (`_api`, made by openapi-python-client)
under the short names the sync and async SDKs call them by."""

from ._api.api.auth_service import auth_service_who_am_i as who_am_i
from ._api.api.filesystem_service import (
    filesystem_service_create_file_url as create_file_url,
    filesystem_service_list_dir as list_dir,
    filesystem_service_make_dir as make_dir,
    filesystem_service_move_path as move_path,
    filesystem_service_remove_path as remove_path,
    filesystem_service_stat as stat_path,
)
from ._api.api.preview_service import preview_service_create_preview_token as preview_token
from ._api.api.process_service import (
    process_service_close_process_stdin as close_stdin,
    process_service_close_process_stdin_2 as close_stdin_tag,
    process_service_list_processes as list_processes,
    process_service_resize_process_pty as resize_pty,
    process_service_send_process_signal as send_signal,
    process_service_send_process_signal_2 as send_signal_tag,
)
from ._api.api.sandbox_service import (
    sandbox_service_create_sandbox as create_sandbox,
    sandbox_service_create_snapshot as create_snapshot,
    sandbox_service_delete_sandbox as delete_sandbox,
    sandbox_service_delete_snapshot as delete_snapshot,
    sandbox_service_fork_sandbox as fork_sandbox,
    sandbox_service_get_snapshot as get_snapshot,
    sandbox_service_get_sandbox as get_sandbox,
    sandbox_service_get_sandbox_metrics as get_metrics,
    sandbox_service_list_sandboxes as list_sandboxes,
    sandbox_service_pause_sandbox as pause_sandbox,
    sandbox_service_resume_sandbox as resume_sandbox,
    sandbox_service_set_sandbox_timeout as set_timeout,
    sandbox_service_start_sandbox as start_sandbox,
)

__all__ = [
    "close_stdin",
    "close_stdin_tag",
    "create_file_url",
    "create_sandbox",
    "create_snapshot",
    "delete_sandbox",
    "delete_snapshot",
    "fork_sandbox",
    "get_metrics",
    "get_sandbox",
    "get_snapshot",
    "list_dir",
    "list_processes",
    "list_sandboxes",
    "make_dir",
    "move_path",
    "pause_sandbox",
    "preview_token",
    "remove_path",
    "resize_pty",
    "resume_sandbox",
    "send_signal",
    "send_signal_tag",
    "set_timeout",
    "start_sandbox",
    "stat_path",
    "who_am_i",
]
