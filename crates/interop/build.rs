//! Compiles MindSpore's `mind_ir.proto` with protox (no system `protoc`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/mind_ir.proto");
    let descriptors = protox::compile(["proto/mind_ir.proto"], ["proto"])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}
