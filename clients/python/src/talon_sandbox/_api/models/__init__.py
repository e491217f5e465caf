"""Contains all the data models used in inputs/outputs"""

from .agent_completed import AgentCompleted
from .agent_file_change import AgentFileChange
from .agent_file_change_kind import AgentFileChangeKind
from .agent_output import AgentOutput
from .agent_output_stream import AgentOutputStream
from .agent_started import AgentStarted
from .api_key import ApiKey
from .api_key_role import ApiKeyRole
from .attach_response import AttachResponse
from .audit_event import AuditEvent
from .browser import Browser
from .browser_state import BrowserState
from .cancel_agent_run_request import CancelAgentRunRequest
from .cancel_agent_run_response import CancelAgentRunResponse
from .change_password_request import ChangePasswordRequest
from .change_password_response import ChangePasswordResponse
from .close_process_stdin_request import CloseProcessStdinRequest
from .close_process_stdin_response import CloseProcessStdinResponse
from .code_completed import CodeCompleted
from .code_context import CodeContext
from .code_context_language import CodeContextLanguage
from .code_error import CodeError
from .code_output import CodeOutput
from .code_result import CodeResult
from .code_result_data import CodeResultData
from .connect_agent_run_response import ConnectAgentRunResponse
from .connect_process_response import ConnectProcessResponse
from .create_api_key_request import CreateApiKeyRequest
from .create_api_key_request_role import CreateApiKeyRequestRole
from .create_api_key_response import CreateApiKeyResponse
from .create_browser_session_request import CreateBrowserSessionRequest
from .create_browser_session_response import CreateBrowserSessionResponse
from .create_code_context_request import CreateCodeContextRequest
from .create_code_context_request_env import CreateCodeContextRequestEnv
from .create_code_context_request_language import CreateCodeContextRequestLanguage
from .create_code_context_response import CreateCodeContextResponse
from .create_file_url_request import CreateFileUrlRequest
from .create_file_url_request_operation import CreateFileUrlRequestOperation
from .create_file_url_response import CreateFileUrlResponse
from .create_preview_token_request import CreatePreviewTokenRequest
from .create_preview_token_response import CreatePreviewTokenResponse
from .create_sandbox_access_token_request import CreateSandboxAccessTokenRequest
from .create_sandbox_access_token_response import CreateSandboxAccessTokenResponse
from .create_sandbox_response import CreateSandboxResponse
from .create_snapshot_request import CreateSnapshotRequest
from .create_snapshot_response import CreateSnapshotResponse
from .create_tenant_request import CreateTenantRequest
from .create_tenant_response import CreateTenantResponse
from .create_user_request import CreateUserRequest
from .create_user_request_role import CreateUserRequestRole
from .create_user_response import CreateUserResponse
from .create_volume_request import CreateVolumeRequest
from .create_volume_response import CreateVolumeResponse
from .delete_api_key_response import DeleteApiKeyResponse
from .delete_browser_session_response import DeleteBrowserSessionResponse
from .delete_code_context_response import DeleteCodeContextResponse
from .delete_image_response import DeleteImageResponse
from .delete_sandbox_response import DeleteSandboxResponse
from .delete_secret_response import DeleteSecretResponse
from .delete_snapshot_response import DeleteSnapshotResponse
from .delete_user_response import DeleteUserResponse
from .delete_volume_response import DeleteVolumeResponse
from .delete_worker_response import DeleteWorkerResponse
from .drain_worker_request import DrainWorkerRequest
from .drain_worker_response import DrainWorkerResponse
from .file_info import FileInfo
from .file_info_type import FileInfoType
from .follow_process_logs_response import FollowProcessLogsResponse
from .fork_sandbox_request import ForkSandboxRequest
from .fork_sandbox_response import ForkSandboxResponse
from .get_browser_response import GetBrowserResponse
from .get_image_response import GetImageResponse
from .get_platform_metrics_response import GetPlatformMetricsResponse
from .get_platform_metrics_response_sandboxes_by_state import (
    GetPlatformMetricsResponseSandboxesByState,
)
from .get_platform_metrics_response_workers_by_state import (
    GetPlatformMetricsResponseWorkersByState,
)
from .get_process_logs_response import GetProcessLogsResponse
from .get_sandbox_metrics_response import GetSandboxMetricsResponse
from .get_sandbox_response import GetSandboxResponse
from .get_snapshot_response import GetSnapshotResponse
from .get_tenant_response import GetTenantResponse
from .get_user_response import GetUserResponse
from .get_volume_response import GetVolumeResponse
from .get_worker_response import GetWorkerResponse
from .google_protobuf_any import GoogleProtobufAny
from .image import Image
from .image_source import ImageSource
from .import_image_header import ImportImageHeader
from .import_image_request import ImportImageRequest
from .import_image_response import ImportImageResponse
from .interrupt_code_context_request import InterruptCodeContextRequest
from .interrupt_code_context_response import InterruptCodeContextResponse
from .list_api_keys_response import ListApiKeysResponse
from .list_audit_events_response import ListAuditEventsResponse
from .list_code_contexts_response import ListCodeContextsResponse
from .list_dir_response import ListDirResponse
from .list_images_response import ListImagesResponse
from .list_ports_response import ListPortsResponse
from .list_processes_response import ListProcessesResponse
from .list_sandbox_moves_response import ListSandboxMovesResponse
from .list_sandboxes_response import ListSandboxesResponse
from .list_secrets_response import ListSecretsResponse
from .list_servers_response import ListServersResponse
from .list_snapshots_response import ListSnapshotsResponse
from .list_tenants_response import ListTenantsResponse
from .list_users_response import ListUsersResponse
from .list_volumes_response import ListVolumesResponse
from .list_worker_sandboxes_response import ListWorkerSandboxesResponse
from .list_workers_response import ListWorkersResponse
from .listening_port import ListeningPort
from .log_entry import LogEntry
from .log_entry_stream import LogEntryStream
from .login_request import LoginRequest
from .login_response import LoginResponse
from .logout_request import LogoutRequest
from .logout_response import LogoutResponse
from .make_dir_request import MakeDirRequest
from .make_dir_response import MakeDirResponse
from .metric_family import MetricFamily
from .metric_family_kind import MetricFamilyKind
from .metric_sample import MetricSample
from .metric_sample_labels import MetricSampleLabels
from .move_path_request import MovePathRequest
from .move_path_response import MovePathResponse
from .network_policy import NetworkPolicy
from .network_policy_mode import NetworkPolicyMode
from .pause_sandbox_request import PauseSandboxRequest
from .pause_sandbox_response import PauseSandboxResponse
from .platform_server import PlatformServer
from .prewarm_image_request import PrewarmImageRequest
from .prewarm_image_response import PrewarmImageResponse
from .process_event import ProcessEvent
from .process_exited import ProcessExited
from .process_info import ProcessInfo
from .process_output import ProcessOutput
from .process_output_stream import ProcessOutputStream
from .process_selector import ProcessSelector
from .process_service_get_process_logs_2_stream import (
    ProcessServiceGetProcessLogs2Stream,
)
from .process_service_get_process_logs_stream import ProcessServiceGetProcessLogsStream
from .process_started import ProcessStarted
from .pty_size import PtySize
from .put_secret_request import PutSecretRequest
from .put_secret_request_delivery import PutSecretRequestDelivery
from .put_secret_response import PutSecretResponse
from .quota import Quota
from .read_file_response import ReadFileResponse
from .reassign_sandbox_request import ReassignSandboxRequest
from .reassign_sandbox_response import ReassignSandboxResponse
from .refresh_request import RefreshRequest
from .refresh_response import RefreshResponse
from .remove_path_response import RemovePathResponse
from .resize_process_pty_request import ResizeProcessPtyRequest
from .resize_process_pty_response import ResizeProcessPtyResponse
from .resources import Resources
from .restart_code_context_request import RestartCodeContextRequest
from .restart_code_context_response import RestartCodeContextResponse
from .resume_sandbox_request import ResumeSandboxRequest
from .resume_sandbox_response import ResumeSandboxResponse
from .run_agent_request import RunAgentRequest
from .run_agent_request_env import RunAgentRequestEnv
from .run_agent_response import RunAgentResponse
from .run_code_request import RunCodeRequest
from .run_code_request_env import RunCodeRequestEnv
from .run_code_request_language import RunCodeRequestLanguage
from .run_code_response import RunCodeResponse
from .sandbox import Sandbox
from .sandbox_env import SandboxEnv
from .sandbox_isolation import SandboxIsolation
from .sandbox_labels import SandboxLabels
from .sandbox_metadata import SandboxMetadata
from .sandbox_metrics import SandboxMetrics
from .sandbox_move import SandboxMove
from .sandbox_move_cause import SandboxMoveCause
from .sandbox_restart_policy import SandboxRestartPolicy
from .sandbox_service_list_sandboxes_metadata import SandboxServiceListSandboxesMetadata
from .sandbox_service_list_sandboxes_states_item import (
    SandboxServiceListSandboxesStatesItem,
)
from .sandbox_state import SandboxState
from .sandbox_timeout_action import SandboxTimeoutAction
from .sandbox_worker_loss_action import SandboxWorkerLossAction
from .secret import Secret
from .secret_delivery import SecretDelivery
from .send_process_input_request import SendProcessInputRequest
from .send_process_input_response import SendProcessInputResponse
from .send_process_signal_request import SendProcessSignalRequest
from .send_process_signal_response import SendProcessSignalResponse
from .set_sandbox_timeout_request import SetSandboxTimeoutRequest
from .set_sandbox_timeout_request_timeout_action import (
    SetSandboxTimeoutRequestTimeoutAction,
)
from .set_sandbox_timeout_response import SetSandboxTimeoutResponse
from .snapshot import Snapshot
from .start_browser_request import StartBrowserRequest
from .start_browser_response import StartBrowserResponse
from .start_process_request import StartProcessRequest
from .start_process_request_env import StartProcessRequestEnv
from .start_process_response import StartProcessResponse
from .start_sandbox_request import StartSandboxRequest
from .start_sandbox_response import StartSandboxResponse
from .stat_response import StatResponse
from .status import Status
from .stop_browser_request import StopBrowserRequest
from .stop_browser_response import StopBrowserResponse
from .stop_sandbox_request import StopSandboxRequest
from .stop_sandbox_response import StopSandboxResponse
from .take_screenshot_response import TakeScreenshotResponse
from .take_snapshot_request import TakeSnapshotRequest
from .take_snapshot_response import TakeSnapshotResponse
from .tenant import Tenant
from .token_pair import TokenPair
from .update_network_policy_response import UpdateNetworkPolicyResponse
from .update_tenant_quota_response import UpdateTenantQuotaResponse
from .update_user_request import UpdateUserRequest
from .update_user_request_role import UpdateUserRequestRole
from .update_user_response import UpdateUserResponse
from .usage import Usage
from .user import User
from .user_role import UserRole
from .volume import Volume
from .volume_mount import VolumeMount
from .watch_dir_response import WatchDirResponse
from .watch_dir_response_type import WatchDirResponseType
from .watch_sandbox_events_response import WatchSandboxEventsResponse
from .watch_sandbox_events_response_kind import WatchSandboxEventsResponseKind
from .who_am_i_response import WhoAmIResponse
from .who_am_i_response_credential_kind import WhoAmIResponseCredentialKind
from .who_am_i_response_role import WhoAmIResponseRole
from .worker import Worker
from .worker_capacity import WorkerCapacity
from .worker_failover_scope import WorkerFailoverScope
from .worker_sandbox import WorkerSandbox
from .worker_sandbox_isolation import WorkerSandboxIsolation
from .worker_sandbox_state import WorkerSandboxState
from .worker_sandbox_worker_loss_action import WorkerSandboxWorkerLossAction
from .worker_state import WorkerState
from .write_file_finish import WriteFileFinish
from .write_file_header import WriteFileHeader
from .write_file_request import WriteFileRequest
from .write_file_response import WriteFileResponse

__all__ = (
    "AgentCompleted",
    "AgentFileChange",
    "AgentFileChangeKind",
    "AgentOutput",
    "AgentOutputStream",
    "AgentStarted",
    "ApiKey",
    "ApiKeyRole",
    "AttachResponse",
    "AuditEvent",
    "Browser",
    "BrowserState",
    "CancelAgentRunRequest",
    "CancelAgentRunResponse",
    "ChangePasswordRequest",
    "ChangePasswordResponse",
    "CloseProcessStdinRequest",
    "CloseProcessStdinResponse",
    "CodeCompleted",
    "CodeContext",
    "CodeContextLanguage",
    "CodeError",
    "CodeOutput",
    "CodeResult",
    "CodeResultData",
    "ConnectAgentRunResponse",
    "ConnectProcessResponse",
    "CreateApiKeyRequest",
    "CreateApiKeyRequestRole",
    "CreateApiKeyResponse",
    "CreateBrowserSessionRequest",
    "CreateBrowserSessionResponse",
    "CreateCodeContextRequest",
    "CreateCodeContextRequestEnv",
    "CreateCodeContextRequestLanguage",
    "CreateCodeContextResponse",
    "CreateFileUrlRequest",
    "CreateFileUrlRequestOperation",
    "CreateFileUrlResponse",
    "CreatePreviewTokenRequest",
    "CreatePreviewTokenResponse",
    "CreateSandboxAccessTokenRequest",
    "CreateSandboxAccessTokenResponse",
    "CreateSandboxResponse",
    "CreateSnapshotRequest",
    "CreateSnapshotResponse",
    "CreateTenantRequest",
    "CreateTenantResponse",
    "CreateUserRequest",
    "CreateUserRequestRole",
    "CreateUserResponse",
    "CreateVolumeRequest",
    "CreateVolumeResponse",
    "DeleteApiKeyResponse",
    "DeleteBrowserSessionResponse",
    "DeleteCodeContextResponse",
    "DeleteImageResponse",
    "DeleteSandboxResponse",
    "DeleteSecretResponse",
    "DeleteSnapshotResponse",
    "DeleteUserResponse",
    "DeleteVolumeResponse",
    "DeleteWorkerResponse",
    "DrainWorkerRequest",
    "DrainWorkerResponse",
    "FileInfo",
    "FileInfoType",
    "FollowProcessLogsResponse",
    "ForkSandboxRequest",
    "ForkSandboxResponse",
    "GetBrowserResponse",
    "GetImageResponse",
    "GetPlatformMetricsResponse",
    "GetPlatformMetricsResponseSandboxesByState",
    "GetPlatformMetricsResponseWorkersByState",
    "GetProcessLogsResponse",
    "GetSandboxMetricsResponse",
    "GetSandboxResponse",
    "GetSnapshotResponse",
    "GetTenantResponse",
    "GetUserResponse",
    "GetVolumeResponse",
    "GetWorkerResponse",
    "GoogleProtobufAny",
    "Image",
    "ImageSource",
    "ImportImageHeader",
    "ImportImageRequest",
    "ImportImageResponse",
    "InterruptCodeContextRequest",
    "InterruptCodeContextResponse",
    "ListApiKeysResponse",
    "ListAuditEventsResponse",
    "ListCodeContextsResponse",
    "ListDirResponse",
    "ListeningPort",
    "ListImagesResponse",
    "ListPortsResponse",
    "ListProcessesResponse",
    "ListSandboxesResponse",
    "ListSandboxMovesResponse",
    "ListSecretsResponse",
    "ListServersResponse",
    "ListSnapshotsResponse",
    "ListTenantsResponse",
    "ListUsersResponse",
    "ListVolumesResponse",
    "ListWorkerSandboxesResponse",
    "ListWorkersResponse",
    "LogEntry",
    "LogEntryStream",
    "LoginRequest",
    "LoginResponse",
    "LogoutRequest",
    "LogoutResponse",
    "MakeDirRequest",
    "MakeDirResponse",
    "MetricFamily",
    "MetricFamilyKind",
    "MetricSample",
    "MetricSampleLabels",
    "MovePathRequest",
    "MovePathResponse",
    "NetworkPolicy",
    "NetworkPolicyMode",
    "PauseSandboxRequest",
    "PauseSandboxResponse",
    "PlatformServer",
    "PrewarmImageRequest",
    "PrewarmImageResponse",
    "ProcessEvent",
    "ProcessExited",
    "ProcessInfo",
    "ProcessOutput",
    "ProcessOutputStream",
    "ProcessSelector",
    "ProcessServiceGetProcessLogs2Stream",
    "ProcessServiceGetProcessLogsStream",
    "ProcessStarted",
    "PtySize",
    "PutSecretRequest",
    "PutSecretRequestDelivery",
    "PutSecretResponse",
    "Quota",
    "ReadFileResponse",
    "ReassignSandboxRequest",
    "ReassignSandboxResponse",
    "RefreshRequest",
    "RefreshResponse",
    "RemovePathResponse",
    "ResizeProcessPtyRequest",
    "ResizeProcessPtyResponse",
    "Resources",
    "RestartCodeContextRequest",
    "RestartCodeContextResponse",
    "ResumeSandboxRequest",
    "ResumeSandboxResponse",
    "RunAgentRequest",
    "RunAgentRequestEnv",
    "RunAgentResponse",
    "RunCodeRequest",
    "RunCodeRequestEnv",
    "RunCodeRequestLanguage",
    "RunCodeResponse",
    "Sandbox",
    "SandboxEnv",
    "SandboxIsolation",
    "SandboxLabels",
    "SandboxMetadata",
    "SandboxMetrics",
    "SandboxMove",
    "SandboxMoveCause",
    "SandboxRestartPolicy",
    "SandboxServiceListSandboxesMetadata",
    "SandboxServiceListSandboxesStatesItem",
    "SandboxState",
    "SandboxTimeoutAction",
    "SandboxWorkerLossAction",
    "Secret",
    "SecretDelivery",
    "SendProcessInputRequest",
    "SendProcessInputResponse",
    "SendProcessSignalRequest",
    "SendProcessSignalResponse",
    "SetSandboxTimeoutRequest",
    "SetSandboxTimeoutRequestTimeoutAction",
    "SetSandboxTimeoutResponse",
    "Snapshot",
    "StartBrowserRequest",
    "StartBrowserResponse",
    "StartProcessRequest",
    "StartProcessRequestEnv",
    "StartProcessResponse",
    "StartSandboxRequest",
    "StartSandboxResponse",
    "StatResponse",
    "Status",
    "StopBrowserRequest",
    "StopBrowserResponse",
    "StopSandboxRequest",
    "StopSandboxResponse",
    "TakeScreenshotResponse",
    "TakeSnapshotRequest",
    "TakeSnapshotResponse",
    "Tenant",
    "TokenPair",
    "UpdateNetworkPolicyResponse",
    "UpdateTenantQuotaResponse",
    "UpdateUserRequest",
    "UpdateUserRequestRole",
    "UpdateUserResponse",
    "Usage",
    "User",
    "UserRole",
    "Volume",
    "VolumeMount",
    "WatchDirResponse",
    "WatchDirResponseType",
    "WatchSandboxEventsResponse",
    "WatchSandboxEventsResponseKind",
    "WhoAmIResponse",
    "WhoAmIResponseCredentialKind",
    "WhoAmIResponseRole",
    "Worker",
    "WorkerCapacity",
    "WorkerFailoverScope",
    "WorkerSandbox",
    "WorkerSandboxIsolation",
    "WorkerSandboxState",
    "WorkerSandboxWorkerLossAction",
    "WorkerState",
    "WriteFileFinish",
    "WriteFileHeader",
    "WriteFileRequest",
    "WriteFileResponse",
)
