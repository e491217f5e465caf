//! The Talon contract as Rust types: prost messages and tonic clients and
//! servers for the public `talon.v1` services and the internal worker and
//! agent protocols. Generated at build time from `proto/`.

#![forbid(unsafe_code)]
#![allow(clippy::all, clippy::pedantic, missing_docs)]

pub mod tunnel;

pub mod google {
    pub mod api {
        tonic::include_proto!("google.api");
    }
}

pub mod talon {
    pub mod v1 {
        tonic::include_proto!("talon.v1");
    }
    pub mod worker {
        pub mod v1 {
            tonic::include_proto!("talon.worker.v1");
        }
    }
    pub mod agent {
        pub mod v1 {
            tonic::include_proto!("talon.agent.v1");
        }
    }
    pub mod gateway {
        pub mod v1 {
            tonic::include_proto!("talon.gateway.v1");
        }
    }
}

pub use talon::v1;

/// The DevTools port of a sandbox's browser on the sandbox's loopback:
/// the agent starts Chromium on it and the gateway's CDP proxy opens it.
pub const BROWSER_CDP_PORT: u16 = 9222;

/// The encoded `FileDescriptorSet` of every Talon proto and its imports,
/// with options kept. Serves gRPC reflection and the REST gateway's routes.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/talon_descriptor.bin"));

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use std::collections::HashMap;

    fn descriptors() -> prost_types::FileDescriptorSet {
        prost_types::FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).unwrap()
    }

    /// buf's uniqueness rule is relaxed for files the agent reuses (see
    /// buf.yaml); this keeps it true inside the public package.
    #[test]
    fn public_request_and_response_types_are_unique() {
        let mut seen: HashMap<String, String> = HashMap::new();
        for file in descriptors()
            .file
            .iter()
            .filter(|f| f.package() == "talon.v1")
        {
            for svc in &file.service {
                for m in &svc.method {
                    let rpc = format!("{}.{}", svc.name(), m.name());
                    for ty in [m.input_type(), m.output_type()] {
                        if let Some(prev) = seen.insert(ty.to_string(), rpc.clone()) {
                            panic!("{ty} is used by both {prev} and {rpc}");
                        }
                    }
                }
            }
        }
        assert!(
            seen.len() > 100,
            "expected the whole contract, saw {}",
            seen.len()
        );
    }

    /// Every public RPC carries a `google.api.http` rule, so the gateway can
    /// route it.
    #[test]
    fn every_public_rpc_has_an_http_rule() {
        let pool = prost_reflect::DescriptorPool::decode(FILE_DESCRIPTOR_SET).unwrap();
        let http = pool.get_extension_by_name("google.api.http").unwrap();
        let mut missing = Vec::new();
        let mut count = 0;
        for svc in pool.services().filter(|s| s.package_name() == "talon.v1") {
            for m in svc.methods() {
                count += 1;
                if !m.options().has_extension(&http) {
                    missing.push(m.full_name().to_string());
                }
            }
        }
        assert!(count > 50, "only {count} public RPCs");
        assert!(
            missing.is_empty(),
            "RPCs without google.api.http: {missing:?}"
        );
    }
}

/// HTTP/2 settings of every hop a call takes (SDK → server → worker →
/// agent, and gateway → server), kept here so the hops agree.
///
/// Fixed windows, not hyper's adaptive ones: the adaptive window starts at
/// 64 KiB per stream and grows only as its BDP pings come back, so a file
/// call spent its first megabytes waiting for window updates, and every
/// call paid for the pings (measured on the bench: file write+read of
/// 100 MiB 311 → 543 MiB/s, exec round trip 1.95 → 1.6 ms). A window is
/// what a peer may send before it is read; a slow reader holds at most
/// that much per stream and per connection in memory.
pub mod h2 {
    /// What one stream may have in flight (8 MiB: eight file chunks).
    pub const STREAM_WINDOW: u32 = 8 << 20;
    /// What one connection may have in flight, over all its streams.
    pub const CONNECTION_WINDOW: u32 = 16 << 20;
    /// Largest frame: file calls move MiB-sized messages, and 16 KiB frames
    /// cost a header and a wakeup each, on every hop.
    pub const MAX_FRAME: u32 = 1 << 20;
}
