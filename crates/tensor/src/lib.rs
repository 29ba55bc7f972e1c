//! Host tensors: a dtype, a shape and a dense row-major buffer.
//!
//! Storage is deliberately narrow: every dtype is held in one of four buffers
//! (`f32`, `f64`, `i64`, `bool`). `f16`/`bf16` live in `f32` and are rounded to
//! their precision after every kernel; the narrow integers live in `i64` and
//! wrap to their width. Kernels are then written once per storage kind, not
//! once per dtype, while results keep MindSpore's dtypes.

mod device;
mod dtype;
pub mod npy;
pub mod safetensors;

pub use device::DeviceData;
pub use dtype::DType;

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

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
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
        if buffer.len() != numel(&shape) {
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
        })
    }

    pub fn zeros(dtype: DType, shape: Vec<usize>) -> Tensor {
        let buffer = Buffer::zeros(dtype, numel(&shape));
        Tensor {
            dtype,
            shape,
            host: host(buffer),
            device: OnceLock::new(),
        }
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
        }
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

    /// The same data with another shape of the same element count.
    pub fn reshaped(mut self, shape: Vec<usize>) -> Result<Tensor, TensorError> {
        if numel(&shape) != self.numel() {
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
