//! Opening tensor files safely: regular files only, sizes known before
//! reading.
//!
//! A path may name anything: a directory, `/dev/zero` (endless), a FIFO
//! (opening one blocks until a writer comes), a socket. [`open_regular`] looks
//! at what the path is before opening it, opens without blocking, and checks
//! again what it opened, so a tensor is read only from a regular file whose
//! length is known. The readers then check the header against what the caller
//! expects before reading any data (see [`crate::npy::read_from`]).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use crate::{npy, safetensors, Tensor, TensorError};

fn err(message: impl Into<String>) -> TensorError {
    TensorError(message.into())
}

/// What a path names, when it is not a regular file.
fn kind_of(ft: &std::fs::FileType) -> Option<&'static str> {
    if ft.is_file() {
        return None;
    }
    if ft.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if ft.is_char_device() {
            return Some("a character device");
        }
        if ft.is_block_device() {
            return Some("a block device");
        }
        if ft.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// Opens `path` for reading if it is a regular file (following symbolic
/// links), without ever blocking; returns it with its length. Errors say what
/// the path is instead: missing, a directory, a device, a FIFO...
pub fn open_regular(path: &Path) -> Result<(File, u64), TensorError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => err(format!("{shown}: no such file")),
        std::io::ErrorKind::PermissionDenied => err(format!("{shown}: permission denied")),
        _ => err(format!("{shown}: {e}")),
    })?;
    if let Some(kind) = kind_of(&meta.file_type()) {
        return Err(err(format!(
            "{shown}: it is {kind}, not a regular file; tensors are read from .npy or .safetensors files"
        )));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Should the path be swapped for a FIFO after the check above, opening
        // it still returns at once.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|e| err(format!("cannot open {shown}: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| err(format!("cannot read {shown}: {e}")))?;
    if let Some(kind) = kind_of(&meta.file_type()) {
        return Err(err(format!("{shown}: it is {kind}, not a regular file")));
    }
    Ok((file, meta.len()))
}

/// Reads an `.npy` file; `check` sees its header before the data is read.
pub fn load_npy(
    path: &Path,
    check: &mut dyn FnMut(&npy::Header) -> Result<(), String>,
) -> Result<Tensor, TensorError> {
    let (file, len) = open_regular(path)?;
    npy::read_from(&mut BufReader::new(file), len, check)
}

/// Tensor `name` of a `.safetensors` file; `check` sees its dtype and shape
/// before its data is touched. The file is memory-mapped (once per process,
/// [`crate::mapped::shared`]) and the tensor's elements stay in the mapping
/// ([`Tensor::from_file`]): nothing is read into a buffer of its own until a
/// kernel needs its elements in another form.
pub fn load_safetensors(
    path: &Path,
    name: &str,
    check: &mut dyn FnMut(&safetensors::Entry) -> Result<(), String>,
) -> Result<Tensor, TensorError> {
    let map = crate::mapped::shared(path)?;
    safetensors::read_mapped(&map, name, check)
}

/// The names of the tensors in a `.safetensors` file (only its header is read).
pub fn safetensors_names(path: &Path) -> Result<Vec<String>, TensorError> {
    let (file, len) = open_regular(path)?;
    safetensors::names_from(&mut BufReader::new(file), len)
}

/// The bytes of a regular file of at most `limit` bytes (a model file, a
/// source file): refuses directories, devices and FIFOs, and files larger
/// than `limit`, before reading.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, TensorError> {
    let (file, len) = open_regular(path)?;
    if len > limit {
        return Err(err(format!(
            "{} is {}, more than the {} this reads",
            path.display(),
            crate::limits::format_bytes(len as usize),
            crate::limits::format_bytes(limit as usize)
        )));
    }
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(len as usize)
        .map_err(|_| err(format!("cannot allocate memory to read {}", path.display())))?;
    use std::io::Read;
    // `take`: a file that grows while it is read is read no further.
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| err(format!("cannot read {}: {e}", path.display())))?;
    Ok(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_regular_file() {
        let e = open_regular(Path::new("/dev/zero")).unwrap_err();
        assert!(e.0.contains("character device"), "{e}");
        let e = open_regular(Path::new("/")).unwrap_err();
        assert!(e.0.contains("a directory"), "{e}");
        let e = open_regular(Path::new("/no/such/file.npy")).unwrap_err();
        assert!(e.0.contains("no such file"), "{e}");
        let dir = std::env::temp_dir().join(format!("tensor-fifo-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid path.
        if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
            let e = open_regular(&dir).unwrap_err();
            assert!(e.0.contains("FIFO"), "{e}");
            let _ = std::fs::remove_file(&dir);
        }
    }

    #[test]
    fn checks_the_header_before_reading() {
        let dir = std::env::temp_dir().join(format!("tensor-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.npy");
        std::fs::write(
            &path,
            npy::write(&Tensor::zeros(crate::DType::F32, vec![2, 3])),
        )
        .unwrap();
        let mut seen = None;
        let t = load_npy(&path, &mut |h| {
            seen = Some(h.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!(t.shape(), &[2, 3]);
        assert_eq!(seen.unwrap().shape, vec![2, 3]);
        let e = load_npy(&path, &mut |_| Err("refused".into())).unwrap_err();
        assert_eq!(e.0, "refused");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
