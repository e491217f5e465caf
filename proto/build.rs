//! Compiles every .proto under this directory with protox (a pure-Rust
//! compiler, so no `protoc` is needed) and generates prost types and tonic
//! stubs. The encoded descriptor set, with all options (the
//! `google.api.http` rules included), is written to OUT_DIR for the gRPC
//! reflection service and the REST gateway.

use std::path::{Path, PathBuf};

fn protos(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read proto dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            protos(&path, out);
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path);
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let mut files = Vec::new();
    protos(&root.join("talon"), &mut files);
    files.sort();
    println!("cargo:rerun-if-changed=talon");
    println!("cargo:rerun-if-changed=google");

    let mut compiler = protox::Compiler::new([&root])?;
    compiler.include_imports(true).include_source_info(true);
    compiler.open_files(files.iter().map(|f| f.strip_prefix(&root).unwrap()))?;
    let encoded = compiler.encode_file_descriptor_set();
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("talon_descriptor.bin"), &encoded)?;

    let fds: prost_types::FileDescriptorSet = prost::Message::decode(encoded.as_slice())?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}
