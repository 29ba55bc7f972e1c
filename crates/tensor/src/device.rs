//! Tensor data that lives on a device (see [`crate::Tensor::from_device`]).

use std::any::Any;
use std::fmt;

use crate::{Buffer, DType};

/// A device copy of a tensor's elements, owned by the backend that made it.
///
/// The tensor keeps the dtype and shape; the device data is the flat,
/// row-major elements in the dtype's storage kind ([`DType::storage`]).
pub trait DeviceData: Send + Sync + fmt::Debug {
    /// Copies the elements to the host: `len` elements of `storage`.
    fn download(&self, storage: DType, len: usize) -> Result<Buffer, String>;

    /// For the backend that made it, to find its own type.
    fn as_any(&self) -> &dyn Any;
}
