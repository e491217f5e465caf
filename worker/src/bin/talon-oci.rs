//! `talon-oci`: the libcontainer runtime as a standalone OCI CLI (the same
//! code as `talon oci`), for the worker's own tests and for operators who
//! want to inspect sandboxes with runc-like commands.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = talon_worker::youki::main(&args) {
        eprintln!("talon-oci: {e:#}");
        std::process::exit(1);
    }
}
