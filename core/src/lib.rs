//! What every Talon tier shares, free of tonic and of any one tier.

pub mod listen;
