//! Compiles MindSpore's `mind_ir.proto` with protox (no system `protoc`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/mind_ir.proto");
    let descriptors = protox::compile(["proto/mind_ir.proto"], ["proto"])?;
    // Tensor bytes as `Bytes`: decoded from a memory-mapped file they are
    // slices of the map, not copies (see `mindir::import_file`).
    prost_build::Config::new()
        .bytes([".mind_ir.TensorProto.raw_data"])
        .compile_fds(descriptors)?;
    Ok(())
}
