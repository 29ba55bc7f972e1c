//! Files of named tensors, whatever their format: `.safetensors`,
//! MindSpore's `.ckpt` (by extension), and a folder of `.npy` files, one
//! `NAME.npy` per tensor (a path that is a directory or ends in `/`). What
//! `--load-weights`, `--save-weights` and `load("FILE", "NAME")` read and
//! write.
//!
//! NumPy has no bfloat16: a folder of `.npy` files keeps a `bf16` tensor as
//! float32 (`<f4`), as [`crate::npy::write`] does.

use std::io::BufReader;
use std::path::Path;

use crate::file::open_regular;
use crate::mapped::Mapped;
use crate::{ckpt, safetensors, DType, Tensor, TensorError};

fn err(message: impl Into<String>) -> TensorError {
    TensorError(message.into())
}

/// The formats of a file of named tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Safetensors,
    Ckpt,
    /// A folder holding `NAME.npy` for each tensor `NAME`.
    NpyDir,
}

impl Format {
    /// The format `path`'s extension names, if any.
    pub fn of(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()? {
            "safetensors" => Some(Format::Safetensors),
            "ckpt" => Some(Format::Ckpt),
            _ => None,
        }
    }

    /// [`Format::of`], or a folder of `.npy` files when `path` is a
    /// directory or is written with a trailing `/`.
    pub fn of_path(path: &Path) -> Option<Format> {
        let text = path.to_string_lossy();
        if path.is_dir() || text.ends_with('/') {
            return Some(Format::NpyDir);
        }
        Format::of(path)
    }
}

/// The `.npy` file of tensor `name` in folder `dir` (an error for a name a
/// file cannot have).
fn npy_path(dir: &Path, name: &str) -> Result<std::path::PathBuf, TensorError> {
    if name.is_empty() || name.contains('/') || name.contains('\\') || name == "." || name == ".." {
        return Err(err(format!(
            "parameter `{name}` cannot be a file name in a folder of .npy files"
        )));
    }
    Ok(dir.join(format!("{name}.npy")))
}

/// The header of the `.npy` file at `path` (its data is not read).
fn npy_header(path: &Path) -> Result<crate::npy::Header, TensorError> {
    let mut seen = None;
    let r = crate::file::load_npy(path, &mut |h| {
        seen = Some(h.clone());
        Err(String::new())
    });
    match (seen, r) {
        (Some(h), _) => Ok(h),
        (None, Err(e)) => Err(err(format!("{}: {e}", path.display()))),
        (None, Ok(_)) => unreachable!("the check refuses every file"),
    }
}

/// What a file says of one tensor before its data is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    pub name: String,
    /// `Err(type name)` for a dtype mirdsl does not have (a checkpoint's `UInt32`).
    pub dtype: Result<DType, String>,
    pub shape: Vec<usize>,
}

enum Source {
    Safetensors(std::path::PathBuf),
    NpyDir(std::path::PathBuf),
    Ckpt(Mapped, Vec<ckpt::Entry>),
}

/// An open file of named tensors: its index read, no tensor data yet.
/// A checkpoint is memory-mapped; each tensor is decoded when read.
pub struct NamedTensors {
    source: Source,
    infos: Vec<Info>,
}

impl NamedTensors {
    /// Opens `path` as the format its extension names (`.safetensors` or
    /// `.ckpt`; a file of another extension is read as a safetensors file).
    pub fn open(path: &Path) -> Result<NamedTensors, TensorError> {
        let shown = path.display();
        match Format::of_path(path) {
            Some(Format::NpyDir) => {
                let entries = std::fs::read_dir(path)
                    .map_err(|e| err(format!("cannot read the folder {shown}: {e}")))?;
                let mut infos = Vec::new();
                for e in entries.flatten() {
                    let p = e.path();
                    let Some(name) = p
                        .file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.strip_suffix(".npy"))
                    else {
                        continue;
                    };
                    let h = npy_header(&p)?;
                    infos.push(Info {
                        name: name.to_string(),
                        dtype: Ok(h.dtype),
                        shape: h.shape,
                    });
                }
                if infos.is_empty() {
                    return Err(err(format!(
                        "{shown}: the folder holds no .npy files (a folder of weights holds NAME.npy for each parameter NAME)"
                    )));
                }
                infos.sort_by(|a, b| a.name.cmp(&b.name));
                Ok(NamedTensors {
                    source: Source::NpyDir(path.to_path_buf()),
                    infos,
                })
            }
            Some(Format::Ckpt) => {
                let map = Mapped::open(path)?;
                let entries = ckpt::index(map.bytes()).map_err(|e| err(format!("{shown}: {e}")))?;
                let infos = entries
                    .iter()
                    .map(|e| Info {
                        name: e.name.clone(),
                        dtype: e.dtype.ok_or_else(|| e.type_name.clone()),
                        shape: e.shape.clone(),
                    })
                    .collect();
                Ok(NamedTensors {
                    source: Source::Ckpt(map, entries),
                    infos,
                })
            }
            _ => {
                let (file, len) = open_regular(path)?;
                let entries = safetensors::entries_from(&mut BufReader::new(file), len)
                    .map_err(|e| err(format!("{shown}: {e}")))?;
                let infos = entries
                    .into_iter()
                    .map(|(name, e)| Info {
                        name,
                        dtype: Ok(e.dtype),
                        shape: e.shape,
                    })
                    .collect();
                Ok(NamedTensors {
                    source: Source::Safetensors(path.to_path_buf()),
                    infos,
                })
            }
        }
    }

    /// The tensors, in file order (safetensors: by name).
    pub fn infos(&self) -> &[Info] {
        &self.infos
    }

    pub fn names(&self) -> Vec<String> {
        self.infos.iter().map(|i| i.name.clone()).collect()
    }

    pub fn info(&self, name: &str) -> Option<&Info> {
        self.infos.iter().find(|i| i.name == name)
    }

    /// Reads tensor `name`.
    pub fn read(&self, name: &str) -> Result<Tensor, TensorError> {
        match &self.source {
            Source::Ckpt(map, entries) => ckpt::find(entries, name)?.read(map.bytes()),
            Source::Safetensors(path) => crate::file::load_safetensors(path, name, &mut |_| Ok(())),
            Source::NpyDir(dir) => {
                let p = npy_path(dir, name)?;
                crate::file::load_npy(&p, &mut |_| Ok(()))
                    .map_err(|e| err(format!("{}: {e}", p.display())))
            }
        }
    }
}

/// Writes `tensors` to `path` in the format its extension names (a
/// safetensors file for any other extension), each tensor in its own dtype.
/// Data is streamed to the file.
pub fn write(path: &Path, tensors: &[(&str, &Tensor)]) -> Result<(), TensorError> {
    let shown = path.display();
    if Format::of_path(path) == Some(Format::NpyDir) {
        std::fs::create_dir_all(path)
            .map_err(|e| err(format!("cannot create the folder {shown}: {e}")))?;
        for (name, t) in tensors {
            let p = npy_path(path, name)?;
            std::fs::write(&p, crate::npy::write(t))
                .map_err(|e| err(format!("cannot write {}: {e}", p.display())))?;
        }
        return Ok(());
    }
    let file =
        std::fs::File::create(path).map_err(|e| err(format!("cannot write {shown}: {e}")))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let r = match Format::of(path) {
        Some(Format::Ckpt) => ckpt::write_to(&mut w, tensors),
        _ => safetensors::write_to(&mut w, tensors),
    };
    r.and_then(|_| std::io::Write::flush(&mut w))
        .map_err(|e| err(format!("cannot write {shown}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_by_extension() {
        let dir = std::env::temp_dir().join(format!("tensor-named-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = Tensor::from_f32(vec![2], vec![1.5, -2.0])
            .unwrap()
            .cast(DType::F16);
        let b = Tensor::from_i64(DType::I32, vec![1], vec![9]).unwrap();
        for file in ["w.ckpt", "w.safetensors", "npy/"] {
            let path = dir.join(file);
            write(&path, &[("layer.w", &a), ("b", &b)]).unwrap();
            let f = NamedTensors::open(&path).unwrap();
            let mut names = f.names();
            names.sort();
            assert_eq!(names, ["b", "layer.w"]);
            assert_eq!(f.info("layer.w").unwrap().dtype, Ok(DType::F16));
            assert_eq!(f.read("layer.w").unwrap(), a);
            assert_eq!(f.read("b").unwrap(), b);
            assert!(f.read("c").is_err());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
