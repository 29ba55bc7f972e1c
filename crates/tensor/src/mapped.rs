//! A read-only memory map of a regular file: the bytes of a large weights or
//! model file are read by the kernel as they are touched, never copied into
//! a buffer of their own.

use std::path::Path;

use crate::file::open_regular;
use crate::TensorError;

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
