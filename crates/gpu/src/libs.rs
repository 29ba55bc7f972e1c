//! NVRTC and cuBLAS, loaded at run time under the names CUDA 11, 12 and 13
//! give them.
//!
//! cudarc looks for these libraries only under its build's major version
//! (`libnvrtc.so.12`) or the unversioned development link, so a machine with
//! CUDA 13 from pip wheels (`libnvrtc.so.13` alone) would not be found, and a
//! file named by `MIRDSL_NVRTC_LIB` could not be used unless its soname was
//! one cudarc asks for. The few functions the backend calls are bound here
//! instead; the driver (`libcuda.so.1`, one name since CUDA 3) stays with
//! cudarc.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

use libloading::Library;

/// File names tried for `lib` after the one its environment variable names.
fn candidates(lib: &str) -> Vec<String> {
    let mut names = vec![format!("lib{lib}.so")];
    for major in ["13", "12", "11"] {
        names.push(format!("lib{lib}.so.{major}"));
    }
    if lib == "nvrtc" {
        // CUDA 11's NVRTC carries its minor version in the soname.
        names.push("libnvrtc.so.11.2".into());
    }
    names
}

/// The library `var` names, else the first of [`candidates`] that loads;
/// the error lists what was tried.
fn open(lib: &str, var: &str) -> Result<Library, String> {
    if let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        // SAFETY: loading a shared library runs its initialisers; this is
        // the NVIDIA library the user named.
        return unsafe { Library::new(&path) }
            .map_err(|e| format!("{var}={}: {e}", path.to_string_lossy()));
    }
    let names = candidates(lib);
    for name in &names {
        // SAFETY: as above, NVIDIA's library under one of its own names.
        if let Ok(l) = unsafe { Library::new(name) } {
            return Ok(l);
        }
    }
    Err(format!("tried {}", names.join(", ")))
}

/// Looks up `name` in `lib` as a function of type `F`.
fn symbol<F: Copy>(lib: &Library, name: &str) -> Result<F, String> {
    // SAFETY: `F` is the C signature NVIDIA documents for `name`.
    unsafe { lib.get::<F>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{name}: {e}"))
}

type Program = *mut c_void;

/// The NVRTC functions the backend calls.
pub struct Nvrtc {
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    ptx_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    ptx: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Program) -> c_int,
    error: unsafe extern "C" fn(c_int) -> *const c_char,
    /// `major.minor`, part of the PTX cache's key (newer NVRTC writes PTX
    /// that older drivers refuse).
    pub version: String,
    _lib: Library,
}

impl Nvrtc {
    fn load() -> Result<Nvrtc, String> {
        let lib = open("nvrtc", "MIRDSL_NVRTC_LIB")?;
        let version_fn: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int =
            symbol(&lib, "nvrtcVersion")?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two out-parameters, as documented.
        unsafe { version_fn(&mut major, &mut minor) };
        Ok(Nvrtc {
            create: symbol(&lib, "nvrtcCreateProgram")?,
            compile: symbol(&lib, "nvrtcCompileProgram")?,
            log_size: symbol(&lib, "nvrtcGetProgramLogSize")?,
            log: symbol(&lib, "nvrtcGetProgramLog")?,
            ptx_size: symbol(&lib, "nvrtcGetPTXSize")?,
            ptx: symbol(&lib, "nvrtcGetPTX")?,
            destroy: symbol(&lib, "nvrtcDestroyProgram")?,
            error: symbol(&lib, "nvrtcGetErrorString")?,
            version: format!("{major}.{minor}"),
            _lib: lib,
        })
    }

    fn describe(&self, code: c_int) -> String {
        // SAFETY: NVRTC returns a static string for any code.
        let s = unsafe { (self.error)(code) };
        if s.is_null() {
            return format!("NVRTC error {code}");
        }
        // SAFETY: a NUL-terminated static string.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }

    /// Compiles CUDA C++ `source` with `options` to PTX text; the error
    /// carries NVRTC's log.
    pub fn compile(&self, source: &str, name: &str, options: &[String]) -> Result<String, String> {
        let src = CString::new(source).map_err(|_| "a kernel source holds a NUL")?;
        let name = CString::new(name).map_err(|_| "a unit name holds a NUL")?;
        let opts: Vec<CString> = options
            .iter()
            .map(|o| CString::new(o.as_str()).map_err(|_| "an NVRTC option holds a NUL"))
            .collect::<Result<_, _>>()?;
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: valid C strings; no headers.
        let r = unsafe {
            (self.create)(
                &mut prog,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if r != 0 {
            return Err(format!("creating the program: {}", self.describe(r)));
        }
        // SAFETY: `prog` was created above and is destroyed once, below.
        let result = unsafe { self.compile_created(prog, &opt_ptrs) };
        // SAFETY: as above.
        unsafe { (self.destroy)(&mut prog) };
        result
    }

    /// # Safety
    /// `prog` is a live program.
    unsafe fn compile_created(
        &self,
        prog: Program,
        options: &[*const c_char],
    ) -> Result<String, String> {
        let r = (self.compile)(prog, options.len() as c_int, options.as_ptr());
        if r != 0 {
            let mut n = 0usize;
            (self.log_size)(prog, &mut n);
            let mut log = vec![0u8; n.max(1)];
            (self.log)(prog, log.as_mut_ptr().cast());
            let log = String::from_utf8_lossy(&log);
            return Err(format!(
                "{}: {}",
                self.describe(r),
                log.trim_end_matches('\0').trim()
            ));
        }
        let mut n = 0usize;
        (self.ptx_size)(prog, &mut n);
        let mut ptx = vec![0u8; n.max(1)];
        let r = (self.ptx)(prog, ptx.as_mut_ptr().cast());
        if r != 0 {
            return Err(format!("reading the PTX: {}", self.describe(r)));
        }
        while ptx.last() == Some(&0) {
            ptx.pop();
        }
        String::from_utf8(ptx).map_err(|_| "NVRTC wrote PTX that is not UTF-8".into())
    }
}

/// NVRTC, loaded once.
pub fn nvrtc() -> Result<&'static Nvrtc, String> {
    static N: OnceLock<Result<Nvrtc, String>> = OnceLock::new();
    N.get_or_init(Nvrtc::load).as_ref().map_err(Clone::clone)
}

pub type Handle = *mut c_void;

/// `cublas{S,D}gemmStridedBatched` for element type `T`.
type GemmBatched<T> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    i64,
    *const T,
    c_int,
    i64,
    *const T,
    *mut T,
    c_int,
    i64,
    c_int,
) -> c_int;

/// The cuBLAS functions the backend calls.
pub struct Cublas {
    create: unsafe extern "C" fn(*mut Handle) -> c_int,
    destroy: unsafe extern "C" fn(Handle) -> c_int,
    set_stream: unsafe extern "C" fn(Handle, *mut c_void) -> c_int,
    pub sgemm_strided_batched: GemmBatched<f32>,
    pub dgemm_strided_batched: GemmBatched<f64>,
    _lib: Library,
}

impl Cublas {
    fn load() -> Result<Cublas, String> {
        let lib = open("cublas", "MIRDSL_CUBLAS_LIB")?;
        Ok(Cublas {
            create: symbol(&lib, "cublasCreate_v2")?,
            destroy: symbol(&lib, "cublasDestroy_v2")?,
            set_stream: symbol(&lib, "cublasSetStream_v2")?,
            sgemm_strided_batched: symbol(&lib, "cublasSgemmStridedBatched")?,
            dgemm_strided_batched: symbol(&lib, "cublasDgemmStridedBatched")?,
            _lib: lib,
        })
    }
}

/// cuBLAS, loaded once.
pub fn cublas() -> Result<&'static Cublas, String> {
    static C: OnceLock<Result<Cublas, String>> = OnceLock::new();
    C.get_or_init(Cublas::load).as_ref().map_err(Clone::clone)
}

/// `CUBLAS_OP_N` / `CUBLAS_OP_T`.
pub fn op(transpose: bool) -> c_int {
    transpose as c_int
}

/// A cuBLAS handle bound to one stream, destroyed on drop.
pub struct BlasHandle {
    pub lib: &'static Cublas,
    pub handle: Handle,
}

// SAFETY: the handle is used under the backend's one stream, one call at a
// time (the executor runs primitives in order).
unsafe impl Send for BlasHandle {}
// SAFETY: as above.
unsafe impl Sync for BlasHandle {}

impl BlasHandle {
    /// A handle whose work goes to `stream`.
    pub fn new(stream: &cudarc::driver::CudaStream) -> Result<BlasHandle, String> {
        let lib = cublas()?;
        let mut handle: Handle = std::ptr::null_mut();
        // SAFETY: an out-parameter; the context is current on this thread.
        let r = unsafe { (lib.create)(&mut handle) };
        if r != 0 {
            return Err(format!("cublasCreate: status {r}"));
        }
        let h = BlasHandle { lib, handle };
        // SAFETY: a live handle and the context's stream.
        let r = unsafe { (lib.set_stream)(h.handle, stream.cu_stream().cast()) };
        if r != 0 {
            return Err(format!("cublasSetStream: status {r}"));
        }
        Ok(h)
    }
}

impl Drop for BlasHandle {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed once.
        unsafe { (self.lib.destroy)(self.handle) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cuda_major_is_tried() {
        let n = candidates("nvrtc");
        for want in [
            "libnvrtc.so",
            "libnvrtc.so.13",
            "libnvrtc.so.12",
            "libnvrtc.so.11.2",
        ] {
            assert!(n.iter().any(|c| c == want), "{n:?}");
        }
        assert!(candidates("cublas").contains(&"libcublas.so.12".to_string()));
    }

    #[test]
    fn a_missing_named_library_is_an_error_naming_it() {
        std::env::set_var("MIRDSL_TEST_MISSING_LIB", "/nonexistent/libnvrtc.so.13");
        let e = open("nvrtc", "MIRDSL_TEST_MISSING_LIB").err().unwrap();
        assert!(
            e.starts_with("MIRDSL_TEST_MISSING_LIB=/nonexistent/libnvrtc.so.13"),
            "{e}"
        );
    }
}
