//! A read-only memory map of a regular file: the bytes of a large weights or
//! model file are read by the kernel as they are touched, never copied into
//! a buffer of their own.

use std::path::Path;
use std::sync::Arc;

use crate::file::open_regular;
use crate::wire::{read_elements, Wire};
use crate::{Buffer, DType, TensorError};

/// A file mapped read-only into memory (or, when empty, no mapping).
///
/// The file must not be truncated while it is mapped (the process would get
/// `SIGBUS` reading the missing pages); the files mapped here are model and
/// weights files that nothing writes while they are read.
pub struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and lives as long as the value.
unsafe impl Send for Mapped {}
unsafe impl Sync for Mapped {}

impl Mapped {
    /// Maps the regular file at `path` (directories, devices and FIFOs are
    /// refused as [`open_regular`] refuses them).
    pub fn open(path: &Path) -> Result<Mapped, TensorError> {
        let (file, len) = open_regular(path)?;
        let len = usize::try_from(len)
            .map_err(|_| TensorError(format!("{} is too large to map", path.display())))?;
        if len == 0 {
            return Ok(Mapped {
                ptr: std::ptr::null_mut(),
                len: 0,
            });
        }
        use std::os::unix::io::AsRawFd;
        // SAFETY: a private read-only mapping of an open file of `len` bytes.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(TensorError(format!(
                "cannot map {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            )));
        }
        Ok(Mapped { ptr, len })
    }

    pub fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` maps `len` readable bytes for the life of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Tells the kernel the bytes in `range` are read once, front to back
    /// (read ahead, and let the pages go once read).
    pub fn advise_sequential(&self) {
        if self.len > 0 {
            // SAFETY: advice on our own mapping.
            unsafe { libc::madvise(self.ptr, self.len, libc::MADV_SEQUENTIAL) };
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmapping the mapping made in `open`.
            unsafe { libc::munmap(self.ptr, self.len) };
        }
    }
}

impl std::fmt::Debug for Mapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mapped({} bytes)", self.len)
    }
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

/// A range of a mapped file: where a tensor's elements are.
#[derive(Clone)]
pub struct FileBytes {
    map: Arc<Mapped>,
    offset: usize,
    len: usize,
}

impl FileBytes {
    /// Bytes `offset..offset + len` of `map`; an error when they lie outside it.
    pub fn new(map: Arc<Mapped>, offset: usize, len: usize) -> Result<FileBytes, TensorError> {
        if offset.checked_add(len).is_none_or(|end| end > map.len()) {
            return Err(TensorError(format!(
                "bytes {offset}..{} lie outside the file ({} bytes)",
                offset.saturating_add(len),
                map.len()
            )));
        }
        Ok(FileBytes { map, offset, len })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map.bytes()[self.offset..self.offset + self.len]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole mapped file these bytes are part of.
    pub fn map(&self) -> &Arc<Mapped> {
        &self.map
    }

    /// The elements, `n` of `dtype`, decoded into a new buffer.
    pub(crate) fn decode(&self, dtype: DType, n: usize) -> Result<Buffer, TensorError> {
        self.decode_prefix(dtype, n)
    }

    /// The first `n` elements decoded.
    pub(crate) fn decode_prefix(&self, dtype: DType, n: usize) -> Result<Buffer, TensorError> {
        read_elements(&mut self.bytes(), Wire::of(dtype), n)
    }
}

impl std::fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileBytes({}..{})", self.offset, self.offset + self.len)
    }
}

/// Maps `path` once per process while the mapping is in use: the weights a
/// program `load`s from one file (a tensor each) share one mapping, so each
/// page of the file is mapped (and counted in the resident set) once. A file
/// changed since it was mapped (length or modification time) is mapped anew.
pub fn shared(path: &Path) -> Result<Arc<Mapped>, TensorError> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock, Weak};
    type Key = (std::path::PathBuf, u64, Option<std::time::SystemTime>);
    static CACHE: OnceLock<Mutex<HashMap<Key, Weak<Mapped>>>> = OnceLock::new();
    let meta = std::fs::metadata(path).ok();
    let key: Key = (
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        meta.as_ref().map_or(0, |m| m.len()),
        meta.and_then(|m| m.modified().ok()),
    );
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = cache.get(&key).and_then(Weak::upgrade) {
        return Ok(m);
    }
    cache.retain(|_, w| w.strong_count() > 0);
    let m = Arc::new(Mapped::open(path)?);
    cache.insert(key, Arc::downgrade(&m));
    Ok(m)
}
