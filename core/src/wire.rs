//! What travels between the tiers besides the contract's messages: header
//! names and message limits.

/// The sandbox a data-plane call is for (server → worker).
pub const SANDBOX_HEADER: &str = "talon-sandbox-id";
/// The generation the server holds for it: a worker refuses a call when
/// its own differs (the fencing token).
pub const GENERATION_HEADER: &str = "talon-generation";
/// A preview token, instead of a bearer credential (gateway → server).
pub const PREVIEW_TOKEN_HEADER: &str = "talon-preview-token";
/// A signed file URL's token, instead of a bearer credential, on ReadFile
/// and WriteFile (gateway → server).
pub const FILE_TOKEN_HEADER: &str = "talon-file-token";
/// The request id every response carries and every log line names.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Largest gRPC message any hop decodes or encodes: file chunks, process
/// input and image uploads are cut below it.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;
