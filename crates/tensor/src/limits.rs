//! Memory limits: the machine's memory, the default budget for tensors, and
//! sizes as people write and read them (`8G`, `1.5 GiB`).

use std::sync::OnceLock;

/// The environment variable that sets the default memory budget (a size as
/// [`parse_size`] reads it), for every tool that runs graphs.
pub const MAX_MEMORY_ENV: &str = "MIRDSL_MAX_MEMORY";

/// The memory this process may use: the machine's physical memory, or the
/// limit of its control group (a container) or of its address space
/// (`ulimit -v`, `ulimit -d`) when that is smaller. `None` when none can be
/// read.
pub fn physical_memory() -> Option<u64> {
    static MEM: OnceLock<Option<u64>> = OnceLock::new();
    *MEM.get_or_init(|| {
        [system_memory(), cgroup_limit(), rlimit()]
            .into_iter()
            .flatten()
            .min()
    })
}

/// The smaller soft limit of the address space and the data segment, when set.
#[cfg(unix)]
fn rlimit() -> Option<u64> {
    let get = |resource| {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct it is given.
        let ok = unsafe { libc::getrlimit(resource, &mut lim) } == 0;
        // `rlim_t` is `u64` on Linux but not everywhere.
        #[allow(clippy::unnecessary_cast)]
        let cur = lim.rlim_cur as u64;
        (ok && lim.rlim_cur != libc::RLIM_INFINITY).then_some(cur)
    };
    [get(libc::RLIMIT_AS), get(libc::RLIMIT_DATA)]
        .into_iter()
        .flatten()
        .min()
}

#[cfg(not(unix))]
fn rlimit() -> Option<u64> {
    None
}

#[cfg(unix)]
fn system_memory() -> Option<u64> {
    // SAFETY: sysconf only reads system configuration.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages > 0 && size > 0).then(|| (pages as u64).saturating_mul(size as u64))
}

#[cfg(not(unix))]
fn system_memory() -> Option<u64> {
    None
}

/// The memory limit of this process's control group (cgroup v2, then v1).
fn cgroup_limit() -> Option<u64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let v2 = read("/sys/fs/cgroup/memory.max").and_then(|s| s.trim().parse::<u64>().ok());
    let v1 = || {
        read("/sys/fs/cgroup/memory/memory.limit_in_bytes")
            .and_then(|s| s.trim().parse::<u64>().ok())
            // "No limit" reads as a huge number.
            .filter(|&n| n < (1 << 60))
    };
    v2.or_else(v1)
}

/// The default memory budget for tensors: `MIRDSL_MAX_MEMORY` when set,
/// else half of [`physical_memory`] (8 GiB when that is unknown), and never
/// less than 64 MiB.
/// (Computed once per process.)
pub fn default_max_memory() -> usize {
    static DEFAULT: OnceLock<usize> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        if let Some(n) = std::env::var(MAX_MEMORY_ENV)
            .ok()
            .and_then(|s| parse_size(&s).ok())
        {
            return n;
        }
        let half = physical_memory().map_or(8 << 30, |m| m / 2);
        usize::try_from(half).unwrap_or(usize::MAX).max(64 << 20)
    })
}

/// How [`default_max_memory`] was chosen, for `--help` texts.
pub fn describe_default() -> String {
    let n = default_max_memory();
    if std::env::var_os(MAX_MEMORY_ENV).is_some() {
        format!("{} (from ${MAX_MEMORY_ENV})", format_bytes(n))
    } else {
        match physical_memory() {
            Some(m) => format!(
                "{}, half of the {} this process may use",
                format_bytes(n),
                format_bytes(usize::try_from(m).unwrap_or(usize::MAX))
            ),
            None => format_bytes(n),
        }
    }
}

/// A size in bytes: a number with an optional unit, `K`, `M`, `G` or `T`
/// (powers of 1024; `KB`, `KiB`, `k` are the same), and a fraction allowed:
/// `1048576`, `512M`, `1.5GiB`, `8 G`. A size must be at least one byte.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || {
        format!("`{text}` is not a size: write bytes, or a number with K, M, G or T (e.g. `512M`, `8G`)")
    };
    let value: f64 = num.parse().map_err(|_| bad())?;
    let unit = unit.trim().to_ascii_lowercase();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(&unit);
    let scale: f64 = match unit {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        "t" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let bytes = value * scale;
    if !bytes.is_finite() || bytes >= usize::MAX as f64 {
        return Err(format!("`{text}` is too large a size"));
    }
    if bytes < 1.0 {
        return Err(format!("`{text}`: the size must be at least one byte"));
    }
    Ok(bytes as usize)
}

/// `n` bytes for people: `512 B`, `1.5 KiB`, `149.0 GiB`.
pub fn format_bytes(n: usize) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("8G"), Ok(8 << 30));
        assert_eq!(parse_size("8 GiB"), Ok(8 << 30));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("2KB"), Ok(2048));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("-5G").is_err());
        assert!(parse_size("5X").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(160_000_000_000), "149.0 GiB");
    }

    #[test]
    fn a_default_exists() {
        assert!(default_max_memory() >= 64 << 20);
    }
}
