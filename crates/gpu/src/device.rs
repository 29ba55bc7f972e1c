//! The device: one context and stream, a caching allocator, device tensors,
//! NVRTC modules compiled on first use, and kernel launches.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig,
    PushKernelArg,
};
use tensor::{Buffer, DType, DeviceData, Tensor};

use crate::source::{self, Storage};

/// A device failure, as text (it ends up in an `OpError`).
pub type DevResult<T> = Result<T, String>;

fn err(what: &str, e: impl fmt::Display) -> String {
    format!("{what}: {e}")
}

/// Freed blocks by size class, reused before asking the driver again.
pub struct Pool {
    stream: Arc<CudaStream>,
    free: Mutex<HashMap<usize, Vec<CudaSlice<u8>>>>,
    /// Bytes handed out now, and the most at once.
    in_use: AtomicUsize,
    peak: AtomicUsize,
    /// Allocations served from the cache / by the driver.
    pub reused: AtomicUsize,
    pub fresh: AtomicUsize,
}

/// The size class of a request: powers of two up to 1 MiB, then whole MiB.
fn size_class(bytes: usize) -> usize {
    let bytes = bytes.max(1);
    if bytes <= 1 << 20 {
        bytes.next_power_of_two().max(256)
    } else {
        bytes.div_ceil(1 << 20) << 20
    }
}

impl Pool {
    fn new(stream: Arc<CudaStream>) -> Arc<Pool> {
        Arc::new(Pool {
            stream,
            free: Mutex::new(HashMap::new()),
            in_use: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            reused: AtomicUsize::new(0),
            fresh: AtomicUsize::new(0),
        })
    }

    /// A block of at least `bytes` bytes (contents undefined).
    pub fn alloc(self: &Arc<Pool>, bytes: usize) -> DevResult<DevBuf> {
        let class = size_class(bytes);
        let cached = self
            .free
            .lock()
            .map_err(|_| "the allocator's lock is poisoned".to_string())?
            .get_mut(&class)
            .and_then(Vec::pop);
        let slice = match cached {
            Some(s) => {
                self.reused.fetch_add(1, Ordering::Relaxed);
                s
            }
            None => {
                self.fresh.fetch_add(1, Ordering::Relaxed);
                // SAFETY: the contents are written by a kernel or a copy before
                // they are read.
                match unsafe { self.stream.alloc::<u8>(class) } {
                    Ok(s) => s,
                    Err(_) => {
                        // Out of memory: give the cache back and try once more.
                        self.trim();
                        unsafe { self.stream.alloc::<u8>(class) }
                            .map_err(|e| err(&format!("allocating {class} bytes"), e))?
                    }
                }
            }
        };
        let now = self.in_use.fetch_add(class, Ordering::Relaxed) + class;
        self.peak.fetch_max(now, Ordering::Relaxed);
        let ptr = {
            let (ptr, _sync) = slice.device_ptr(&self.stream);
            ptr
        };
        Ok(DevBuf {
            ptr,
            bytes,
            class,
            slice: Some(slice),
            pool: self.clone(),
        })
    }

    /// Frees every cached block.
    pub fn trim(&self) {
        if let Ok(mut free) = self.free.lock() {
            free.clear();
        }
    }

    /// Bytes in use now and at most.
    pub fn usage(&self) -> (usize, usize) {
        (
            self.in_use.load(Ordering::Relaxed),
            self.peak.load(Ordering::Relaxed),
        )
    }
}

/// A block of device memory from the [`Pool`], returned to it when dropped.
pub struct DevBuf {
    /// The raw device address (kernel arguments).
    pub ptr: u64,
    pub bytes: usize,
    class: usize,
    slice: Option<CudaSlice<u8>>,
    pool: Arc<Pool>,
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        self.pool.in_use.fetch_sub(self.class, Ordering::Relaxed);
        if let (Some(s), Ok(mut free)) = (self.slice.take(), self.pool.free.lock()) {
            free.entry(self.class).or_default().push(s);
        }
    }
}

impl fmt::Debug for DevBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevBuf({:#x}, {} bytes)", self.ptr, self.bytes)
    }
}

impl DevBuf {
    fn slice(&self) -> &CudaSlice<u8> {
        self.slice.as_ref().expect("a live block has its slice")
    }

    fn slice_mut(&mut self) -> &mut CudaSlice<u8> {
        self.slice.as_mut().expect("a live block has its slice")
    }

    /// The pointer `offset` elements of `s` in.
    pub fn at(&self, s: Storage, offset: usize) -> u64 {
        self.ptr + (offset * s.size()) as u64
    }
}

impl DeviceData for DevBuf {
    fn download(&self, storage: DType, len: usize) -> Result<Buffer, String> {
        if len == 0 {
            return Ok(match Storage::of(storage) {
                Storage::F32 => Buffer::F32(Vec::new()),
                Storage::F64 => Buffer::F64(Vec::new()),
                Storage::I64 => Buffer::I64(Vec::new()),
                Storage::U8 => Buffer::Bool(Vec::new()),
            });
        }
        let stream = &self.pool.stream;
        let s = self.slice();
        macro_rules! get {
            ($t:ty) => {{
                // SAFETY: the block holds at least `len` elements of `$t`
                // (it was allocated for them).
                let view = unsafe { s.transmute::<$t>(len) }
                    .ok_or_else(|| "a device block is smaller than its tensor".to_string())?;
                stream
                    .clone_dtoh(&view)
                    .map_err(|e| err("copying from the GPU", e))?
            }};
        }
        Ok(match Storage::of(storage) {
            Storage::F32 => Buffer::F32(get!(f32)),
            Storage::F64 => Buffer::F64(get!(f64)),
            Storage::I64 => Buffer::I64(get!(i64)),
            Storage::U8 => Buffer::Bool(get!(u8).into_iter().map(|b| b != 0).collect()),
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Kernel arguments passed by value (see `PRELUDE` in [`crate::source`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Bc {
    pub rank: i32,
    pub same: i32,
    pub shape: [i64; 8],
    pub sa: [i64; 8],
    pub sb: [i64; 8],
    pub sc: [i64; 8],
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct St {
    pub rank: i32,
    pub pad: i32,
    pub shape: [i64; 8],
    pub modulo: [i64; 8],
    pub ss: [i64; 8],
    pub ds: [i64; 8],
    pub soff: i64,
    pub doff: i64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Cv {
    pub v: [i64; 16],
}

// SAFETY: plain `#[repr(C)]` data matching the CUDA structs.
unsafe impl DeviceRepr for Bc {}
unsafe impl DeviceRepr for St {}
unsafe impl DeviceRepr for Cv {}

/// The device and everything kept on it.
pub struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub pool: Arc<Pool>,
    pub blas: crate::libs::BlasHandle,
    functions: Mutex<HashMap<String, CudaFunction>>,
    /// One-element constants (literals like `0.125`), uploaded once: a
    /// pageable upload waits for the stream, so uploading them per call
    /// would stall the queue at every use.
    scalars: Mutex<HashMap<(Storage, u64), Arc<DevBuf>>>,
    /// A vector of ones per storage type (the longest asked for so far), for
    /// sums done as GEMMs.
    ones: Mutex<HashMap<Storage, (usize, Arc<DevBuf>)>>,
    arch: &'static str,
    pub name: String,
}

impl Device {
    /// Device 0 (after [`crate::probe::all`] has found the libraries).
    pub fn open() -> DevResult<Device> {
        let ctx = CudaContext::new(0).map_err(|e| err("creating a CUDA context", e))?;
        // One stream: order alone keeps kernels and reused blocks apart.
        // SAFETY: nothing else uses this context's slices on another stream.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| err("reading the compute capability", e))?;
        let arch: &'static str = Box::leak(format!("compute_{major}{minor}").into_boxed_str());
        let name = ctx.name().unwrap_or_else(|_| "CUDA device".into());
        ctx.bind_to_thread()
            .map_err(|e| err("binding the CUDA context", e))?;
        let blas =
            crate::libs::BlasHandle::new(&stream).map_err(|e| format!("starting cuBLAS: {e}"))?;
        Ok(Device {
            pool: Pool::new(stream.clone()),
            ctx,
            stream,
            blas,
            functions: Mutex::new(HashMap::new()),
            scalars: Mutex::new(HashMap::new()),
            ones: Mutex::new(HashMap::new()),
            arch,
            name: format!("{name} (sm_{major}{minor})"),
        })
    }

    /// Kernel `kernel` of unit `unit`, compiling the unit on first use.
    pub fn function(&self, unit: &str, kernel: &str) -> DevResult<CudaFunction> {
        let mut functions = self
            .functions
            .lock()
            .map_err(|_| "the kernel cache's lock is poisoned".to_string())?;
        if let Some(f) = functions.get(kernel) {
            return Ok(f.clone());
        }
        let u = source::unit(unit).ok_or_else(|| format!("no kernel unit `{unit}`"))?;
        let ptx = cached_ptx(&u, self.arch)?;
        let module = self
            .ctx
            .load_module(ptx)
            .map_err(|e| err(&format!("loading unit `{unit}`"), e))?;
        for k in &u.kernels {
            let f = module
                .load_function(k)
                .map_err(|e| err(&format!("loading kernel `{k}`"), e))?;
            functions.insert(k.clone(), f);
        }
        functions
            .get(kernel)
            .cloned()
            .ok_or_else(|| format!("unit `{unit}` has no kernel `{kernel}`"))
    }

    /// A one-dimensional launch over `n` elements.
    pub fn grid(n: usize) -> LaunchConfig {
        let blocks = n.div_ceil(256).clamp(1, 65_535 * 8) as u32;
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// One block per row (up to 65,535 blocks, looping beyond).
    pub fn rows(rows: usize) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (rows.clamp(1, 65_535) as u32, 1, 1),
            block_dim: (source::ROW_THREADS, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Copies a host buffer to a new block.
    pub fn upload(&self, b: &Buffer) -> DevResult<DevBuf> {
        let storage = Storage::of(b.storage());
        let n = b.len();
        let mut buf = self.pool.alloc(n * storage.size())?;
        if n == 0 {
            return Ok(buf);
        }
        let stream = self.stream.clone();
        let s = buf.slice_mut();
        macro_rules! put {
            ($t:ty, $v:expr) => {{
                // SAFETY: the block was allocated for `n` elements of `$t`.
                let mut view = unsafe { s.transmute_mut::<$t>(n) }
                    .ok_or_else(|| "a device block is too small".to_string())?;
                stream
                    .memcpy_htod($v, &mut view)
                    .map_err(|e| err("copying to the GPU", e))?;
            }};
        }
        match b {
            Buffer::F32(v) => put!(f32, &v[..]),
            Buffer::F64(v) => put!(f64, &v[..]),
            Buffer::I64(v) => put!(i64, &v[..]),
            Buffer::Bool(v) => {
                let bytes: Vec<u8> = v.iter().map(|&x| x as u8).collect();
                put!(u8, &bytes[..])
            }
        }
        Ok(buf)
    }

    /// The device copy of a one-element buffer, shared by every equal one.
    pub fn scalar(&self, b: &Buffer) -> DevResult<Arc<DevBuf>> {
        const MAX_CACHED: usize = 4096;
        let key = match b {
            Buffer::F32(v) if v.len() == 1 => (Storage::F32, v[0].to_bits() as u64),
            Buffer::F64(v) if v.len() == 1 => (Storage::F64, v[0].to_bits()),
            Buffer::I64(v) if v.len() == 1 => (Storage::I64, v[0] as u64),
            Buffer::Bool(v) if v.len() == 1 => (Storage::U8, v[0] as u64),
            _ => return self.upload(b).map(Arc::new),
        };
        let mut cache = self
            .scalars
            .lock()
            .map_err(|_| "the constant cache's lock is poisoned".to_string())?;
        if let Some(d) = cache.get(&key) {
            return Ok(d.clone());
        }
        let d = Arc::new(self.upload(b)?);
        if cache.len() < MAX_CACHED {
            cache.insert(key, d.clone());
        }
        Ok(d)
    }

    /// At least `n` ones of `s` (f32 or f64) on the device, uploaded once
    /// per length that outgrows the last.
    pub fn ones(&self, s: Storage, n: usize) -> DevResult<Arc<DevBuf>> {
        let mut cache = self
            .ones
            .lock()
            .map_err(|_| "the constant cache's lock is poisoned".to_string())?;
        if let Some((len, d)) = cache.get(&s) {
            if *len >= n {
                return Ok(d.clone());
            }
        }
        let host = match s {
            Storage::F64 => Buffer::F64(vec![1.0; n]),
            _ => Buffer::F32(vec![1.0; n]),
        };
        let d = Arc::new(self.upload(&host)?);
        cache.insert(s, (n, d.clone()));
        Ok(d)
    }

    /// The device copy of `t`, uploading it (once) if it has none.
    pub fn on_device<'t>(&self, t: &'t Tensor) -> DevResult<&'t DevBuf> {
        let data = t.device_data_or_insert(|b| {
            if b.len() == 1 {
                return self.scalar(b).map(|d| d as Arc<dyn DeviceData>);
            }
            self.upload(b).map(|d| Arc::new(d) as Arc<dyn DeviceData>)
        })?;
        match data.as_any().downcast_ref::<DevBuf>() {
            Some(d) => Ok(d),
            None => Err("a tensor lives on another device".into()),
        }
    }

    /// Whether `t` already has a device copy of ours.
    pub fn is_resident(t: &Tensor) -> bool {
        t.device_data()
            .is_some_and(|d| d.as_any().downcast_ref::<DevBuf>().is_some())
    }

    /// A new block for `n` elements of `s`.
    pub fn alloc(&self, s: Storage, n: usize) -> DevResult<DevBuf> {
        self.pool.alloc(n * s.size())
    }

    /// Launches `f` with `args`, in the kernel's parameter order.
    pub fn launch(&self, f: &CudaFunction, cfg: LaunchConfig, args: &[Arg]) -> DevResult<()> {
        let mut b = self.stream.launch_builder(f);
        for a in args {
            match a {
                Arg::P(v) => b.arg(v),
                Arg::I(v) => b.arg(v),
                Arg::I32(v) => b.arg(v),
                Arg::F(v) => b.arg(v),
                Arg::Bc(v) => b.arg(v),
                Arg::St(v) => b.arg(v),
                Arg::Cv(v) => b.arg(v),
            };
        }
        // SAFETY: callers pass every kernel's parameters in its declared
        // order with matching types (see `source`), and the pointers are
        // live device blocks of the right sizes.
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(|e| err("launching a kernel", e))
    }

    /// Waits for every queued kernel.
    pub fn synchronize(&self) -> DevResult<()> {
        self.stream
            .synchronize()
            .map_err(|e| err("synchronising", e))
    }
}

/// Where compiled PTX is kept between runs: `MIRDSL_PTX_CACHE` (empty: no
/// cache), else `$XDG_CACHE_HOME/mirdsl/ptx` or `~/.cache/mirdsl/ptx`.
fn ptx_cache_dir() -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("MIRDSL_PTX_CACHE") {
        return (!dir.is_empty()).then(|| dir.into());
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache")))?;
    Some(base.join("mirdsl").join("ptx"))
}

/// FNV-1a, stable across builds (a cache key).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// A unit's PTX for `arch`: from the cache when an earlier run compiled the
/// same source, else compiled by NVRTC (and cached, best effort).
fn cached_ptx(u: &source::Unit, arch: &'static str) -> DevResult<cudarc::nvrtc::Ptx> {
    let file = ptx_cache_dir().map(|d| {
        // NVRTC's version too: newer NVRTC writes PTX older drivers refuse.
        let nvrtc = crate::libs::nvrtc().map_or("", |n| n.version.as_str());
        let key = fnv1a(&[&u.source, arch, nvrtc]);
        d.join(format!("{}-{arch}-{key:016x}.ptx", u.name))
    });
    if let Some(text) = file.as_ref().and_then(|f| std::fs::read_to_string(f).ok()) {
        return Ok(cudarc::nvrtc::Ptx::from_src(text));
    }
    let ptx = crate::compile_unit(u, Some(arch))?;
    if let Some(f) = file {
        if let Some(dir) = f.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        // Written whole then renamed, so a concurrent run never reads half a file.
        let tmp = f.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, ptx.to_src()).is_ok() {
            let _ = std::fs::rename(&tmp, &f);
        }
    }
    Ok(ptx)
}

/// A device tensor from a block.
pub fn tensor(dtype: DType, shape: Vec<usize>, buf: DevBuf) -> Tensor {
    Tensor::from_device(dtype, shape, Arc::new(buf))
}

/// A kernel argument.
#[derive(Debug, Clone, Copy)]
pub enum Arg {
    /// A device pointer.
    P(u64),
    I(i64),
    I32(i32),
    F(f64),
    Bc(Bc),
    St(St),
    Cv(Cv),
}

#[cfg(test)]
mod tests {
    use super::{fnv1a, size_class};

    #[test]
    fn cache_keys_depend_on_every_part() {
        assert_ne!(fnv1a(&["ab", "c"]), fnv1a(&["a", "bc"]));
        assert_eq!(fnv1a(&["x"]), fnv1a(&["x"]));
    }

    #[test]
    fn size_classes() {
        assert_eq!(size_class(1), 256);
        assert_eq!(size_class(300), 512);
        assert_eq!(size_class(1 << 20), 1 << 20);
        assert_eq!(size_class((1 << 20) + 1), 2 << 20);
        assert_eq!(size_class(5 << 20), 5 << 20);
    }
}
