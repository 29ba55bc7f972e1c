//! Host tensors: a dtype, a shape and a dense row-major buffer.
//!
//! Storage is deliberately narrow: every dtype is held in one of four buffers
//! (`f32`, `f64`, `i64`, `bool`). `f16`/`bf16` live in `f32` and are rounded to
//! their precision after every kernel; the narrow integers live in `i64` and
//! wrap to their width. Kernels are then written once per storage kind, not
//! once per dtype, while results keep MindSpore's dtypes.

pub mod ckpt;
mod device;
mod dtype;
pub mod file;
pub mod limits;
pub mod mapped;
pub mod named;
pub mod npy;
pub mod safetensors;
mod wire;

pub use device::DeviceData;
pub use dtype::DType;
pub use wire::write_raw;

use std::fmt;
use std::sync::{Arc, OnceLock};

/// A dense row-major buffer of one storage kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Buffer {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

impl Buffer {
    pub fn len(&self) -> usize {
        match self {
            Buffer::F32(v) => v.len(),
            Buffer::F64(v) => v.len(),
            Buffer::I64(v) => v.len(),
            Buffer::Bool(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The storage kind, as the dtype that uses it natively.
    pub fn storage(&self) -> DType {
        match self {
            Buffer::F32(_) => DType::F32,
            Buffer::F64(_) => DType::F64,
            Buffer::I64(_) => DType::I64,
            Buffer::Bool(_) => DType::Bool,
        }
    }

    fn zeros(storage: DType, len: usize) -> Buffer {
        match storage.storage() {
            DType::F32 => Buffer::F32(vec![0.0; len]),
            DType::F64 => Buffer::F64(vec![0.0; len]),
            DType::I64 => Buffer::I64(vec![0; len]),
            _ => Buffer::Bool(vec![false; len]),
        }
    }

    /// `len` copies of `value` in `dtype`'s storage, or an error (never an
    /// abort) when the memory cannot be had.
    pub fn try_filled(dtype: DType, len: usize, value: f64) -> Result<Buffer, TensorError> {
        fn filled<T: Clone>(len: usize, x: T) -> Result<Vec<T>, TensorError> {
            let mut v = Vec::new();
            v.try_reserve_exact(len).map_err(|_| {
                TensorError(format!(
                    "cannot allocate {} for {len} elements",
                    limits::format_bytes(len.saturating_mul(std::mem::size_of::<T>()))
                ))
            })?;
            v.resize(len, x);
            Ok(v)
        }
        Ok(match dtype.storage() {
            DType::F32 => Buffer::F32(filled(len, value as f32)?),
            DType::F64 => Buffer::F64(filled(len, value)?),
            DType::I64 => Buffer::I64(filled(len, value as i64)?),
            _ => Buffer::Bool(filled(len, value != 0.0)?),
        })
    }
}

/// A tensor: a dtype, a shape, and its elements on the host, on a device, or
/// both. Rank 0 is a scalar tensor.
///
/// A device backend makes tensors whose data lives only on its device
/// ([`Tensor::from_device`]); the host buffer is then copied back on first use
/// ([`Tensor::buffer`]), so every CPU kernel and printer works on them
/// unchanged. A backend may also attach a device copy to a host tensor
/// ([`Tensor::device_data_or_insert`]), so a tensor used twice is uploaded once.
/// Tensors are immutable, so the two copies never disagree.
#[derive(Clone)]
pub struct Tensor {
    dtype: DType,
    shape: Vec<usize>,
    host: OnceLock<Buffer>,
    device: OnceLock<Arc<dyn DeviceData>>,
    /// The elements in a file (a memory map), decoded on first use.
    file: Option<mapped::FileBytes>,
}

impl PartialEq for Tensor {
    fn eq(&self, other: &Tensor) -> bool {
        self.dtype == other.dtype && self.shape == other.shape && self.buffer() == other.buffer()
    }
}

fn host(buffer: Buffer) -> OnceLock<Buffer> {
    let cell = OnceLock::new();
    let _ = cell.set(buffer);
    cell
}

/// An error building a tensor (element count or storage kind mismatch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorError(pub String);

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TensorError {}

/// The element count of `shape`; `usize::MAX` when it overflows (no buffer
/// has that many elements, so such a shape never matches data).
pub fn numel(shape: &[usize]) -> usize {
    checked_numel(shape).unwrap_or(usize::MAX)
}

/// The element count of `shape`, or `None` when it overflows `usize`.
pub fn checked_numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// Bytes a tensor of `dtype` and `shape` takes on the host (its storage
/// kind's element size: `f16` is held as `f32`, `i8` as `i64`), or `None`
/// when that overflows `usize`.
pub fn storage_bytes(dtype: DType, shape: &[usize]) -> Option<usize> {
    checked_numel(shape)?.checked_mul(dtype.storage().size_of())
}

/// Row-major strides (in elements) of `shape`, or `None` when they overflow.
pub fn checked_strides(shape: &[usize]) -> Option<Vec<usize>> {
    let mut strides = vec![0; shape.len()];
    let mut stride = 1usize;
    for i in (0..shape.len()).rev() {
        strides[i] = stride;
        stride = stride.checked_mul(shape[i])?;
    }
    Some(strides)
}

/// The error for a shape whose element count overflows.
fn overflow(shape: &[usize]) -> TensorError {
    TensorError(format!(
        "shape {shape:?} has more elements than can be counted (the element count overflows)"
    ))
}

impl Tensor {
    /// A tensor from a buffer; the buffer's storage must be the dtype's and its
    /// length the shape's element count. Values are normalised to the dtype
    /// (rounded for `f16`/`bf16`, wrapped for narrow integers).
    pub fn new(dtype: DType, shape: Vec<usize>, buffer: Buffer) -> Result<Tensor, TensorError> {
        if buffer.storage() != dtype.storage() {
            return Err(TensorError(format!(
                "a {dtype} tensor is stored as {}, not {}",
                dtype.storage(),
                buffer.storage()
            )));
        }
        let Some(n) = checked_numel(&shape) else {
            return Err(overflow(&shape));
        };
        if buffer.len() != n {
            return Err(TensorError(format!(
                "shape {shape:?} has {} elements but the data has {}",
                numel(&shape),
                buffer.len()
            )));
        }
        let mut buffer = buffer;
        normalize(&mut buffer, dtype);
        Ok(Tensor {
            dtype,
            shape,
            host: host(buffer),
            device: OnceLock::new(),
            file: None,
        })
    }

    pub fn zeros(dtype: DType, shape: Vec<usize>) -> Tensor {
        let buffer = Buffer::zeros(dtype, numel(&shape));
        Tensor {
            dtype,
            shape,
            host: host(buffer),
            device: OnceLock::new(),
            file: None,
        }
    }

    /// A tensor of `value`s (converted as [`Tensor::full`] does), or an error
    /// when the element count overflows or the memory cannot be allocated:
    /// never a panic or an abort.
    pub fn try_full(dtype: DType, shape: Vec<usize>, value: f64) -> Result<Tensor, TensorError> {
        let n = checked_numel(&shape).ok_or_else(|| overflow(&shape))?;
        storage_bytes(dtype, &shape).ok_or_else(|| overflow(&shape))?;
        let buffer = Buffer::try_filled(dtype, n, value)?;
        Tensor::new(dtype, shape, buffer)
    }

    /// [`Tensor::try_full`] with zeros.
    pub fn try_zeros(dtype: DType, shape: Vec<usize>) -> Result<Tensor, TensorError> {
        Tensor::try_full(dtype, shape, 0.0)
    }

    pub fn full(dtype: DType, shape: Vec<usize>, value: f64) -> Tensor {
        let n = numel(&shape);
        let buffer = match dtype.storage() {
            DType::F32 => Buffer::F32(vec![value as f32; n]),
            DType::F64 => Buffer::F64(vec![value; n]),
            DType::I64 => Buffer::I64(vec![value as i64; n]),
            _ => Buffer::Bool(vec![value != 0.0; n]),
        };
        Tensor::new(dtype, shape, buffer).expect("storage matches by construction")
    }

    pub fn from_f32(shape: Vec<usize>, data: Vec<f32>) -> Result<Tensor, TensorError> {
        Tensor::new(DType::F32, shape, Buffer::F32(data))
    }

    pub fn from_f64(shape: Vec<usize>, data: Vec<f64>) -> Result<Tensor, TensorError> {
        Tensor::new(DType::F64, shape, Buffer::F64(data))
    }

    pub fn from_i64(
        dtype: DType,
        shape: Vec<usize>,
        data: Vec<i64>,
    ) -> Result<Tensor, TensorError> {
        Tensor::new(dtype, shape, Buffer::I64(data))
    }

    pub fn from_bool(shape: Vec<usize>, data: Vec<bool>) -> Result<Tensor, TensorError> {
        Tensor::new(DType::Bool, shape, Buffer::Bool(data))
    }

    pub fn scalar(dtype: DType, value: f64) -> Tensor {
        Tensor::full(dtype, Vec::new(), value)
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    /// The elements on the host (copied from the device on first use).
    ///
    /// # Panics
    /// If the device copy fails (the device is lost): the tensor's data then
    /// exists nowhere.
    pub fn buffer(&self) -> &Buffer {
        self.host.get_or_init(|| self.download())
    }

    pub fn into_buffer(mut self) -> Buffer {
        match self.host.take() {
            Some(b) => b,
            None => self.download(),
        }
    }

    fn download(&self) -> Buffer {
        if let Some(f) = &self.file {
            return f
                .decode(self.dtype, self.numel())
                .unwrap_or_else(|e| panic!("reading a tensor from its file failed: {e}"));
        }
        let data = self
            .device
            .get()
            .expect("a tensor has its data on the host or on a device");
        match data.download(self.dtype.storage(), self.numel()) {
            Ok(b) if b.len() == self.numel() && b.storage() == self.dtype.storage() => b,
            Ok(_) => panic!(
                "a device returned a {} tensor of the wrong size",
                self.dtype
            ),
            Err(e) => panic!("copying a tensor from the device failed: {e}"),
        }
    }

    /// A tensor whose elements live on a device (already normalised to `dtype`:
    /// rounded for `f16`/`bf16`, wrapped for narrow integers).
    pub fn from_device(dtype: DType, shape: Vec<usize>, data: Arc<dyn DeviceData>) -> Tensor {
        let device = OnceLock::new();
        let _ = device.set(data);
        Tensor {
            dtype,
            shape,
            host: OnceLock::new(),
            device,
            file: None,
        }
    }

    /// A tensor whose elements are `bytes` of a memory-mapped file, in
    /// `dtype`'s own encoding (`f16` as 2 bytes...): nothing is read until
    /// the elements are used ([`Tensor::buffer`]), and writers copy the bytes
    /// straight from the file ([`write_raw`]).
    pub fn from_file(
        dtype: DType,
        shape: Vec<usize>,
        bytes: mapped::FileBytes,
    ) -> Result<Tensor, TensorError> {
        let need = checked_numel(&shape)
            .and_then(|n| n.checked_mul(dtype.size_of()))
            .ok_or_else(|| overflow(&shape))?;
        if need != bytes.len() {
            return Err(TensorError(format!(
                "a {dtype} tensor of shape {shape:?} needs {need} bytes, the file holds {}",
                bytes.len()
            )));
        }
        Ok(Tensor {
            dtype,
            shape,
            host: OnceLock::new(),
            device: OnceLock::new(),
            file: Some(bytes),
        })
    }

    /// The file bytes this tensor's elements come from, while they have not
    /// been decoded (see [`Tensor::from_file`]).
    pub fn file_bytes(&self) -> Option<&mapped::FileBytes> {
        self.file.as_ref().filter(|_| self.host.get().is_none())
    }

    /// The elements of an `f32` tensor still in its memory-mapped file
    /// ([`Tensor::from_file`]), in place: no copy, no decoding. `None` when
    /// the tensor is not file-backed, not `f32`, already decoded, or its
    /// bytes are not 4-byte aligned in the mapping (then [`Tensor::buffer`]
    /// decodes them).
    pub fn mapped_f32(&self) -> Option<&[f32]> {
        if self.dtype != DType::F32 || cfg!(target_endian = "big") {
            return None;
        }
        let b = self.file_bytes()?.bytes();
        if b.as_ptr().align_offset(std::mem::align_of::<f32>()) != 0 {
            return None;
        }
        // SAFETY: aligned, `b.len() / 4` whole f32s (checked in `from_file`),
        // little-endian like the file; the mapping lives as long as `self`.
        Some(unsafe { std::slice::from_raw_parts(b.as_ptr() as *const f32, b.len() / 4) })
    }

    /// The value every element has, if they are all the same (bit for bit),
    /// without decoding a file-backed tensor into memory.
    pub fn uniform_value(&self) -> Option<f64> {
        if let Some(f) = self.file_bytes() {
            let w = self.dtype.size_of();
            let b = f.bytes();
            let first = b.get(..w)?;
            if !b.chunks_exact(w).all(|c| c == first) {
                return None;
            }
            let one = f.decode_prefix(self.dtype, 1).ok()?;
            return Tensor::new(self.dtype, vec![], one)
                .ok()?
                .to_f64_vec()
                .first()
                .copied();
        }
        let values = self.to_f64_vec();
        let first = *values.first()?;
        values
            .iter()
            .all(|&v| v.to_bits() == first.to_bits())
            .then_some(first)
    }

    /// The device copy, if there is one.
    pub fn device_data(&self) -> Option<&Arc<dyn DeviceData>> {
        self.device.get()
    }

    /// The device copy, made by `upload` (from the host buffer) if there is none yet.
    pub fn device_data_or_insert<E>(
        &self,
        upload: impl FnOnce(&Buffer) -> Result<Arc<dyn DeviceData>, E>,
    ) -> Result<&Arc<dyn DeviceData>, E> {
        if let Some(d) = self.device.get() {
            return Ok(d);
        }
        let made = upload(self.buffer())?;
        Ok(self.device.get_or_init(|| made))
    }

    /// Whether the elements are on the host now (no copy needed to read them).
    pub fn is_on_host(&self) -> bool {
        self.host.get().is_some()
    }

    /// Bytes this tensor's buffer takes on the host.
    pub fn storage_bytes(&self) -> usize {
        self.numel().saturating_mul(self.dtype.storage().size_of())
    }

    /// The same data with another shape of the same element count.
    pub fn reshaped(mut self, shape: Vec<usize>) -> Result<Tensor, TensorError> {
        if checked_numel(&shape) != Some(self.numel()) {
            return Err(TensorError(format!(
                "cannot reshape {:?} ({} elements) to {:?}",
                self.shape,
                self.numel(),
                shape
            )));
        }
        self.shape = shape;
        Ok(self)
    }

    /// Every element as `f64` (booleans as 0/1), row-major.
    pub fn to_f64_vec(&self) -> Vec<f64> {
        match self.buffer() {
            Buffer::F32(v) => v.iter().map(|&x| x as f64).collect(),
            Buffer::F64(v) => v.clone(),
            Buffer::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Buffer::Bool(v) => v.iter().map(|&x| x as u8 as f64).collect(),
        }
    }

    /// Converts to another dtype with MindSpore's `Cast` semantics
    /// (float to int truncates toward zero; non-zero is `true`).
    pub fn cast(&self, dtype: DType) -> Tensor {
        if dtype == self.dtype {
            return self.clone();
        }
        let buffer = match (dtype.storage(), self.buffer()) {
            (DType::F32, Buffer::F32(v)) => Buffer::F32(v.clone()),
            (DType::F32, Buffer::F64(v)) => Buffer::F32(v.iter().map(|&x| x as f32).collect()),
            (DType::F32, Buffer::I64(v)) => Buffer::F32(v.iter().map(|&x| x as f32).collect()),
            (DType::F32, Buffer::Bool(v)) => {
                Buffer::F32(v.iter().map(|&x| x as u8 as f32).collect())
            }
            (DType::F64, _) => Buffer::F64(self.to_f64_vec()),
            (DType::I64, Buffer::F32(v)) => Buffer::I64(v.iter().map(|&x| x as i64).collect()),
            (DType::I64, Buffer::F64(v)) => Buffer::I64(v.iter().map(|&x| x as i64).collect()),
            (DType::I64, Buffer::I64(v)) => Buffer::I64(v.clone()),
            (DType::I64, Buffer::Bool(v)) => Buffer::I64(v.iter().map(|&x| x as i64).collect()),
            (_, Buffer::F32(v)) => Buffer::Bool(v.iter().map(|&x| x != 0.0).collect()),
            (_, Buffer::F64(v)) => Buffer::Bool(v.iter().map(|&x| x != 0.0).collect()),
            (_, Buffer::I64(v)) => Buffer::Bool(v.iter().map(|&x| x != 0).collect()),
            (_, Buffer::Bool(v)) => Buffer::Bool(v.clone()),
        };
        Tensor::new(dtype, self.shape.clone(), buffer).expect("cast keeps the element count")
    }
}

/// Rounds `f16`/`bf16` values and wraps narrow integers to their dtype.
fn normalize(buffer: &mut Buffer, dtype: DType) {
    match (buffer, dtype) {
        (Buffer::F32(v), DType::F16) => v.iter_mut().for_each(|x| *x = dtype::round_f16(*x)),
        (Buffer::F32(v), DType::BF16) => v.iter_mut().for_each(|x| *x = dtype::round_bf16(*x)),
        (Buffer::I64(v), d) if d != DType::I64 => v.iter_mut().for_each(|x| *x = d.wrap_int(*x)),
        _ => {}
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:?} {:?}", self.dtype, self.shape, self.to_f64_vec())
    }
}

#[cfg(test)]
mod device_tests {
    use super::*;
    use std::any::Any;

    /// A "device" that keeps a host buffer and counts downloads.
    #[derive(Debug)]
    struct Fake(Buffer, std::sync::atomic::AtomicUsize);

    impl DeviceData for Fake {
        fn download(&self, storage: DType, len: usize) -> Result<Buffer, String> {
            assert_eq!((storage, len), (self.0.storage(), self.0.len()));
            self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(self.0.clone())
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    #[test]
    fn device_tensors_download_once_on_first_use() {
        let fake = Arc::new(Fake(
            Buffer::F32(vec![1.0, 2.0, 3.0, 4.0]),
            Default::default(),
        ));
        let t = Tensor::from_device(DType::F32, vec![2, 2], fake.clone());
        assert!(!t.is_on_host());
        assert_eq!(t.numel(), 4);
        let r = t.clone().reshaped(vec![4]).unwrap();
        assert!(r.device_data().is_some());
        assert_eq!(t.to_f64_vec(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(t.to_f64_vec(), vec![1.0, 2.0, 3.0, 4.0]);
        assert!(t.is_on_host());
        assert_eq!(fake.1.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert_eq!(r.into_buffer(), Buffer::F32(vec![1.0, 2.0, 3.0, 4.0]));
    }

    #[test]
    fn host_tensors_upload_once() {
        let t = Tensor::from_f32(vec![2], vec![1.0, 2.0]).unwrap();
        let mut uploads = 0;
        for _ in 0..3 {
            t.device_data_or_insert(|b| {
                uploads += 1;
                Ok::<_, ()>(Arc::new(Fake(b.clone(), Default::default())) as Arc<dyn DeviceData>)
            })
            .unwrap();
        }
        assert_eq!(uploads, 1);
        assert!(t.clone().device_data().is_some());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HUGE: usize = 1 << 62;

    #[test]
    fn element_counts_do_not_wrap() {
        assert_eq!(checked_numel(&[2, 3]), Some(6));
        assert_eq!(checked_numel(&[]), Some(1));
        assert_eq!(checked_numel(&[HUGE, 4]), None);
        assert_eq!(checked_numel(&[HUGE, 4, 0]), None);
        assert_eq!(numel(&[HUGE, 4]), usize::MAX);
        assert_eq!(storage_bytes(DType::F32, &[HUGE]), None);
        assert_eq!(storage_bytes(DType::I8, &[3]), Some(24));
        assert_eq!(checked_strides(&[2, 3, 4]), Some(vec![12, 4, 1]));
        assert_eq!(checked_strides(&[HUGE, 4, 1]), None);
    }

    #[test]
    fn overflowing_shapes_are_errors() {
        // 2^62 * 4 wraps to 0 in usize: an empty buffer must not fit.
        let e = Tensor::new(DType::F32, vec![HUGE, 4], Buffer::F32(vec![])).unwrap_err();
        assert!(e.0.contains("overflows"), "{e}");
        assert!(Tensor::try_zeros(DType::F32, vec![HUGE, 4]).is_err());
        assert!(Tensor::try_zeros(DType::F32, vec![3037000500, 3037000500]).is_err());
        assert!(Tensor::from_f32(vec![2], vec![1.0, 2.0])
            .unwrap()
            .reshaped(vec![HUGE, 4])
            .is_err());
        // Too much to allocate: an error, not an abort.
        assert!(Tensor::try_zeros(DType::F64, vec![1 << 58]).is_err());
        let t = Tensor::try_full(DType::I8, vec![2], 300.0).unwrap();
        assert_eq!(t.to_f64_vec(), vec![44.0, 44.0]);
    }

    #[test]
    fn hostile_npy_headers() {
        let header = |descr: &str, shape: &str| {
            let mut h =
                format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
            h.push('\n');
            let mut b = b"\x93NUMPY\x01\x00".to_vec();
            b.extend_from_slice(&(h.len() as u16).to_le_bytes());
            b.extend_from_slice(h.as_bytes());
            b
        };
        for shape in [
            "(4611686018427387904, 4)",
            "(3037000500, 3037000500)",
            "(-1,)",
            "(99999999999999999999999,)",
        ] {
            let e = npy::read(&header("<f4", shape)).unwrap_err();
            assert!(!e.0.is_empty(), "{shape}");
        }
        // A header that claims a billion elements is refused before any data is read.
        let e = npy::read(&header("<f4", "(1000000000,)")).unwrap_err();
        assert!(e.0.contains("truncated"), "{e}");
        // Version 2 header lengths are bounded.
        let mut b = b"\x93NUMPY\x02\x00\xff\xff\xff\x7f".to_vec();
        b.extend_from_slice(b"{}");
        assert!(npy::read(&b).unwrap_err().0.contains("header"));
    }

    #[test]
    fn hostile_safetensors_headers() {
        assert!(safetensors::read(&u64::MAX.to_le_bytes(), "x").is_err());
        let file = |json: &str, data: &[u8]| {
            let mut b = (json.len() as u64).to_le_bytes().to_vec();
            b.extend_from_slice(json.as_bytes());
            b.extend_from_slice(data);
            b
        };
        let cases = [
            r#"{"x": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 0]}}"#,
            r#"{"x": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}"#,
            r#"{"x": {"dtype": "F32", "shape": [1], "data_offsets": [18446744073709551615, 18446744073709551615]}}"#,
            r#"{"x": {"dtype": "F32", "shape": [1000000], "data_offsets": [0, 4000000]}}"#,
            r#"{"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}"#,
            r#"[1, 2]"#,
        ];
        for json in cases {
            assert!(
                safetensors::read(&file(json, &[0; 4]), "x").is_err(),
                "{json}"
            );
        }
    }
}
