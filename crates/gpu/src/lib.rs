//! The CUDA backend of `mirdsl run --device gpu`.
//!
//! - [`GpuBackend`] implements [`exec::Backend`] on cudarc with dynamic
//!   loading: the driver, NVRTC and cuBLAS are found at run time
//!   ([`probe`]), so the crate builds and its tests pass on machines without
//!   CUDA.
//! - Kernels: NVRTC source generated from the op table ([`table`],
//!   [`source`]) for elementwise, cast, reduction, softmax, normalisation and
//!   data-movement primitives; cuBLAS for matrix products and for convolution
//!   (im2col + GEMM). Every other primitive runs its CPU kernel (inputs copied
//!   to the host, the result copied back on next use); [`Stats`] counts both
//!   per primitive for `--verbose`.
//! - Tensors stay on the device between kernels: results are
//!   [`tensor::Tensor::from_device`] tensors, copied to the host only when
//!   something reads them there; a caching allocator reuses freed blocks.

pub mod probe;
pub mod source;
pub mod table;

pub use probe::Unavailable;

/// NVRTC options for a unit: an architecture when one is known.
pub fn compile_options(arch: Option<&'static str>) -> cudarc::nvrtc::CompileOptions {
    cudarc::nvrtc::CompileOptions {
        arch,
        options: vec!["--std=c++14".into()],
        name: None,
        ..Default::default()
    }
}

/// Compiles a unit to PTX (no GPU needed, only NVRTC).
pub fn compile_unit(
    unit: &source::Unit,
    arch: Option<&'static str>,
) -> Result<cudarc::nvrtc::Ptx, String> {
    probe::nvrtc().map_err(|e| e.to_string())?;
    cudarc::nvrtc::compile_ptx_with_opts(&unit.source, compile_options(arch))
        .map_err(|e| format!("NVRTC failed on unit `{}`: {e}", unit.name))
}
