//! `google.rpc.Status`, the error model behind gRPC's
//! `grpc-status-details-bin` and the REST gateway's error bodies.

/// `google.rpc.Status { code = 1; message = 2; details = 3 }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcStatus {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
    #[prost(message, repeated, tag = "3")]
    pub details: Vec<prost_types::Any>,
}

/// A detail message packed as `google.protobuf.Any`, its type named by
/// its full protobuf name.
pub fn any(full_name: &str, value: Vec<u8>) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{full_name}"),
        value,
    }
}
