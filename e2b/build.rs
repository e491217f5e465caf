//! Compiles envd's two services (proto/envd/) with protox into prost types
//! and a descriptor set, which the data plane uses to read and write
//! Connect's JSON (ProtoJSON) through prost-reflect.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("proto");
    println!("cargo:rerun-if-changed=proto");
    let mut compiler = protox::Compiler::new([&root])?;
    compiler.include_imports(true);
    compiler.open_files(["envd/process.proto", "envd/filesystem.proto"])?;
    let encoded = compiler.encode_file_descriptor_set();
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("envd_descriptor.bin"), &encoded)?;
    let fds: prost_types::FileDescriptorSet = prost::Message::decode(encoded.as_slice())?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_client(false)
        .compile_fds(fds)?;
    Ok(())
}
