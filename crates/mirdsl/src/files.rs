//! Reading inputs and writing outputs without surprises.
//!
//! - Inputs: a directory, a device (`/dev/zero`) or a socket is refused before
//!   reading; FIFOs and pipes (`<(...)`) are read, like regular files, up to a
//!   size limit.
//! - Outputs are written atomically: to a temporary file in the same folder,
//!   flushed, then renamed over the target, keeping the target's permissions.
//!   An error at any point leaves the old file as it was. A directory is
//!   refused as an output; a device (`/dev/null`, `/dev/stdout`) is written
//!   directly.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest source file read (a `.mir` or `.ir` text).
pub const MAX_SOURCE: u64 = 256 << 20;
/// The largest model file read (`.mindir`: protobuf messages are at most 2 GiB).
pub const MAX_MODEL: u64 = 2 << 30;

fn describe(ft: &fs::FileType) -> Option<&'static str> {
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
            return None; // a pipe: read as a stream
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

/// The bytes of an input file of at most `limit` bytes.
pub fn read_input(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let meta = fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("cannot read {shown}: no such file"),
        _ => format!("cannot read {shown}: {e}"),
    })?;
    if let Some(kind) = describe(&meta.file_type()) {
        return Err(format!("cannot read {shown}: it is {kind}, not a file"));
    }
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(path, limit));
    }
    let file = File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut bytes = Vec::new();
    // One byte more than the limit tells a stream that is too long.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, limit));
    }
    Ok(bytes)
}

fn too_large(path: &Path, limit: u64) -> String {
    format!(
        "cannot read {}: it is larger than {}, the most this reads",
        path.display(),
        tensor::limits::format_bytes(limit as usize)
    )
}

/// The text of a source file (UTF-8, at most [`MAX_SOURCE`] bytes).
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = read_input(path, MAX_SOURCE)?;
    String::from_utf8(bytes)
        .map_err(|e| format!("cannot read {}: it is not UTF-8 text ({e})", path.display()))
}

/// Refuses an output path that is a directory (or ends with a separator).
pub fn check_output(path: &Path) -> Result<(), String> {
    let s = path.as_os_str().to_string_lossy();
    if path.is_dir() || s.ends_with('/') || s.ends_with(std::path::MAIN_SEPARATOR) {
        return Err(format!(
            "cannot write {}: it is a directory; give a file name",
            path.display()
        ));
    }
    Ok(())
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Writes `bytes` to `path` atomically (see the module docs).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    check_output(path)?;
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    // Through a symbolic link: the link stays, its target is replaced.
    let target: PathBuf = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => match fs::canonicalize(path) {
            Ok(t) => t,
            Err(_) => path.to_path_buf(), // a dangling link: replaced by the file
        },
        _ => path.to_path_buf(),
    };
    let existing = fs::metadata(&target).ok();
    if let Some(m) = &existing {
        if m.is_dir() {
            return check_output(&target);
        }
        if !m.is_file() {
            // A device or a FIFO: write to it as it is.
            let mut f = OpenOptions::new().write(true).open(&target).map_err(fail)?;
            return f.write_all(bytes).map_err(fail);
        }
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| -> std::io::Result<()> {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut f = options.open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if let Some(m) = &existing {
            fs::set_permissions(&tmp, m.permissions())?;
        }
        drop(f);
        fs::rename(&tmp, &target)?;
        // Make the rename itself durable (best effort).
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(fail(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_keep_permissions_and_links() {
        let dir = std::env::temp_dir().join(format!("mirdsl-files-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.mir");
        fs::write(&file, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
            write_atomic(&file, b"new").unwrap();
            assert_eq!(fs::read_to_string(&file).unwrap(), "new");
            let mode = fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o640);
            let link = dir.join("link.mir");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            write_atomic(&link, b"via link").unwrap();
            assert!(fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
            assert_eq!(fs::read_to_string(&file).unwrap(), "via link");
        }
        assert!(write_atomic(&dir, b"x").unwrap_err().contains("directory"));
        // No temporary file is left behind.
        let left: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty());
        assert!(read_input(Path::new("/dev/zero"), 10)
            .unwrap_err()
            .contains("character device"));
        assert!(read_input(&dir, 10).unwrap_err().contains("directory"));
        fs::write(&file, "0123456789abc").unwrap();
        assert!(read_input(&file, 10).unwrap_err().contains("larger"));
        let _ = fs::remove_dir_all(&dir);
    }
}
