//! Finding the CUDA libraries at run time, and saying which one is missing.
//!
//! cudarc loads `libcuda` with `dlopen` on first use and panics when it is
//! absent, so it is looked for here first, with the names cudarc tries. NVRTC
//! and cuBLAS are loaded by [`crate::libs`] (CUDA 11, 12 or 13;
//! `MIRDSL_NVRTC_LIB` and `MIRDSL_CUBLAS_LIB` name a file to use instead).

use std::fmt;
use std::sync::OnceLock;

/// What stops the GPU backend from starting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// No `libcuda.so` (the NVIDIA driver).
    Driver(String),
    /// The driver loads but reports no usable device.
    NoDevice(String),
    /// No NVRTC (`libnvrtc.so`), needed to compile the kernels.
    Nvrtc(String),
    /// No cuBLAS (`libcublas.so`), needed for matrix products.
    Cublas(String),
    /// The device or a library failed while starting.
    Failed(String),
}

impl Unavailable {
    /// What is missing, without the advice (for `--device auto`'s note).
    pub fn short(&self) -> String {
        match self {
            Unavailable::Driver(d) => format!("no NVIDIA driver (libcuda.so: {d})"),
            Unavailable::NoDevice(d) => format!("no usable GPU ({d})"),
            Unavailable::Nvrtc(d) => format!("no NVRTC (libnvrtc.so: {d})"),
            Unavailable::Cublas(d) => format!("no cuBLAS (libcublas.so: {d})"),
            Unavailable::Failed(d) => format!("the GPU backend could not start: {d}"),
        }
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::Driver(d) => write!(
                f,
                "no NVIDIA driver: libcuda.so could not be loaded ({d}); install the NVIDIA driver, or run with `--device cpu`"
            ),
            Unavailable::NoDevice(d) => write!(
                f,
                "the NVIDIA driver found no usable GPU ({d}); run with `--device cpu`"
            ),
            Unavailable::Nvrtc(d) => write!(
                f,
                "no NVRTC: libnvrtc.so could not be loaded ({d}); install the CUDA toolkit's NVRTC (or `pip install nvidia-cuda-nvrtc` and set MIRDSL_NVRTC_LIB to its libnvrtc.so.13)"
            ),
            Unavailable::Cublas(d) => write!(
                f,
                "no cuBLAS: libcublas.so could not be loaded ({d}); install the CUDA toolkit's cuBLAS (or `pip install nvidia-cublas` and set MIRDSL_CUBLAS_LIB to its libcublas.so.13)"
            ),
            Unavailable::Failed(d) => write!(f, "the GPU backend could not start: {d}"),
        }
    }
}

/// Whether the driver library loads under a name cudarc tries; the error
/// lists the first names tried.
fn driver_loadable() -> Result<(), String> {
    let candidates = cudarc::get_lib_name_candidates("cuda");
    for c in &candidates {
        // SAFETY: loading a shared library runs its initialisers; this is
        // NVIDIA's driver under one of its own names.
        if unsafe { libloading::Library::new(c) }.is_ok() {
            return Ok(());
        }
    }
    let shown: Vec<&str> = candidates.iter().take(3).map(String::as_str).collect();
    Err(format!("tried {}, ...", shown.join(", ")))
}

/// Whether NVRTC can be loaded (for compiling kernels without a GPU).
pub fn nvrtc() -> Result<(), Unavailable> {
    static R: OnceLock<Result<(), Unavailable>> = OnceLock::new();
    R.get_or_init(|| crate::libs::nvrtc().map(|_| ()).map_err(Unavailable::Nvrtc))
        .clone()
}

/// Every library the backend needs, and a device: the driver first (so its
/// absence is what is reported on a machine without CUDA).
pub fn all() -> Result<(), Unavailable> {
    static R: OnceLock<Result<(), Unavailable>> = OnceLock::new();
    R.get_or_init(|| {
        driver_loadable().map_err(Unavailable::Driver)?;
        cudarc::driver::result::init()
            .map_err(|e| Unavailable::NoDevice(format!("cuInit: {e}")))?;
        let n = cudarc::driver::result::device::get_count()
            .map_err(|e| Unavailable::NoDevice(format!("cuDeviceGetCount: {e}")))?;
        if n < 1 {
            return Err(Unavailable::NoDevice("0 devices".into()));
        }
        nvrtc()?;
        crate::libs::cublas()
            .map(|_| ())
            .map_err(Unavailable::Cublas)?;
        Ok(())
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_is_missing() {
        let m = Unavailable::Driver("tried libcuda.so".into()).to_string();
        assert!(
            m.contains("libcuda.so") && m.contains("--device cpu"),
            "{m}"
        );
        assert!(Unavailable::Nvrtc("x".into())
            .to_string()
            .contains("MIRDSL_NVRTC_LIB"));
        assert!(Unavailable::Cublas("x".into())
            .to_string()
            .contains("libcublas.so"));
        assert!(Unavailable::NoDevice("0 devices".into())
            .to_string()
            .contains("no usable GPU"));
    }
}
