//! What every Talon tier shares, free of tonic and of any one tier: the
//! egress policy, the always-denied ranges, the host image, id shapes,
//! wire header names and message limits, `google.rpc.Status`, time
//! helpers, and listener limits.

pub mod cookies;
pub mod e2b_files;
pub mod egress;
pub mod ids;
pub mod image;
pub mod io;
pub mod listen;
pub mod rpc_status;
pub mod time;
pub mod wire;
