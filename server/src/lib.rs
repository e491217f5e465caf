//! The Talon control plane: tenants, identity, RBAC, quotas, audit, the
//! sandbox state machine, placement and the worker sessions, served over
//! gRPC (with reflection, health and grpc-web) on one port.

#![forbid(unsafe_code)]

pub mod api;
pub mod app;
pub mod audit;
pub mod auth;
pub mod cache;
pub mod config;
pub mod db;
pub mod domain;
pub mod error;
pub mod ids;
pub mod listener;
pub mod metrics;
pub mod ops;
pub mod peers;
pub mod rbac;
pub mod run;
pub mod workers;
