//! Fuzzing as part of the tests, on the stable toolchain: a mutation loop per
//! input format, seeded from the repository's fixtures, run for a bounded time.
//!
//! Targets: `.mindir` import (then checking the imported text and reading the
//! weights it writes), `.ir` import (then checking), `.npy` reading (and
//! writing back), `.safetensors` reading, and `fmt` (with `check`) on mutated
//! `.mir` sources. An input fails when the code under test panics, allocates
//! more than [`SINGLE_LIMIT`] at once or [`PEAK_LIMIT`] in all, or takes longer
//! than [`SLOW`]; failing inputs are written to `target/fuzz-failures/<target>/`
//! and make the test fail. Fixed failures live on as regression fixtures in
//! `tests/fuzz_regressions/<target>/`, replayed first on every run.
//!
//! Each target runs [`DEFAULT_SECS`] seconds in `cargo test`; longer runs:
//! `MIRDSL_FUZZ_SECS=300 cargo test --release -p mirdsl --test fuzz -- --nocapture`
//! (`MIRDSL_FUZZ_SEED` picks another random stream; the report line of each
//! target gives executions and the corpus size).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use test_support::fuzz::{run_fmt, run_ir, run_mindir, run_npy, run_safetensors, Verdict};

/// Seconds per target when `MIRDSL_FUZZ_SECS` is not set.
const DEFAULT_SECS: f64 = 2.0;
/// The largest single allocation an input may cause.
const SINGLE_LIMIT: usize = 1 << 30;
/// The most memory an input may hold at once (over what the loop holds).
const PEAK_LIMIT: isize = 2 << 30;
/// The longest an input may take (debug builds are slow: generous).
const SLOW: Duration = Duration::from_secs(20);
/// Past this, the watchdog saves the input and ends the process.
const HANG: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------
// Memory accounting: a global allocator that counts, per thread, the bytes
// alive, and refuses (returns null for) single allocations over the limit
// while a target runs. Code that allocates fallibly then reports an error;
// code that does not aborts the test, which is a failure too.

struct Counting;

static OVERSIZED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The input being run and where to save it should the process abort
    /// (an allocation that cannot fail gracefully, a stack overflow).
    static INPUT: Cell<(*const u8, usize)> = const { Cell::new((std::ptr::null(), 0)) };
    static ABORT_PATH: Cell<*const libc::c_char> = const { Cell::new(std::ptr::null()) };
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note_alloc(size: usize) {
    let _ = LIVE.try_with(|l| {
        let now = l.get() + size as isize;
        l.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

fn note_free(size: usize) {
    let _ = LIVE.try_with(|l| l.set(l.get() - size as isize));
}

fn refuse(size: usize) -> bool {
    size > SINGLE_LIMIT && ARMED.try_with(Cell::get).unwrap_or(false) && {
        OVERSIZED.fetch_add(1, Ordering::Relaxed);
        true
    }
}

// SAFETY: forwards to the system allocator; only counts and refuses.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if refuse(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc(layout);
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if refuse(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        note_free(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if refuse(new_size) {
            return std::ptr::null_mut();
        }
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            note_free(layout.size());
            note_alloc(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// On SIGABRT (and SIGSEGV, a stack overflow): writes the input being run to
/// its target's abort file, with async-signal-safe calls only.
#[cfg(unix)]
extern "C" fn save_on_abort(sig: libc::c_int) {
    let (ptr, len) = INPUT.try_with(Cell::get).unwrap_or((std::ptr::null(), 0));
    let path = ABORT_PATH.try_with(Cell::get).unwrap_or(std::ptr::null());
    // SAFETY: plain system calls on a buffer the running target still owns.
    unsafe {
        if !ptr.is_null() && !path.is_null() {
            let fd = libc::open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, 0o644);
            if fd >= 0 {
                libc::write(fd, ptr as *const libc::c_void, len);
                libc::close(fd);
            }
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

#[cfg(unix)]
fn install_abort_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: the handler only makes async-signal-safe calls.
        unsafe {
            libc::signal(
                libc::SIGABRT,
                save_on_abort as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    });
}

// ---------------------------------------------------------------------------
// Randomness and mutations.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// Integers that break size arithmetic.
const INTERESTING: &[u64] = &[
    0,
    1,
    2,
    3,
    4,
    7,
    8,
    15,
    16,
    63,
    64,
    127,
    128,
    255,
    256,
    1023,
    1024,
    4096,
    65535,
    65536,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    3_037_000_500,
    1 << 31,
    1 << 32,
    1 << 40,
    1 << 53,
    1 << 62,
    (1 << 63) - 1,
    1 << 63,
    u64::MAX,
    u64::MAX - 1,
];

/// Words of the text formats (the DSL and MindSpore's `.ir` dumps).
const WORDS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "=",
    "\n",
    " ",
    "#",
    "%",
    "->",
    "=>",
    "+",
    "*",
    "/",
    "-",
    "@",
    "graph ",
    "param ",
    "return ",
    "if ",
    "else ",
    "fn ",
    "none",
    "true",
    "and ",
    "not ",
    "f32",
    "i64",
    "bool",
    "f16",
    "i8",
    "[*]",
    "[?]",
    "[B, 4]",
    "\"",
    "\\",
    "0",
    "-1",
    "1e309",
    "nan",
    "4611686018427387904",
    "99999999999999999999",
    "3037000500",
    "%para1_x",
    "%1",
    "Tensor(shape=[2, 3], dtype=Float32",
    "<Tensor[Float32], (2, 3)>",
    "<Int64, NoShape>",
    "PrimFunc_Add",
    "Default/",
    "# In file",
    "subgraph @",
    "load(\"",
    "\")",
    "Zeros(",
    "Reshape(x, (-1, ",
    "Tile(x, (",
    "BroadcastTo(x, (",
    "MatMul(",
    "Concat((",
    "grad(",
    "\u{fe0f}",
    "\u{0}",
    "\r",
    "✓",
];

fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn mutate(rng: &mut Rng, data: &mut Vec<u8>, others: &[Vec<u8>], text: bool) {
    let most = if rng.chance(4) { 16 } else { 4 };
    let n = 1 + rng.below(most);
    for _ in 0..n {
        let len = data.len();
        let at = rng.below(len + 1);
        let kinds = if text { 14 } else { 11 };
        match rng.below(kinds) {
            0 if len > 0 => {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = [0, 1, 0x7f, 0x80, 0xff, b'0', b'9', b'('][rng.below(8)];
            }
            2 if len > 0 => {
                // An interesting integer, little-endian, 1/2/4/8 bytes.
                let w = [1, 2, 4, 8][rng.below(4)];
                let v = INTERESTING[rng.below(INTERESTING.len())].to_le_bytes();
                let i = rng.below(len);
                let k = w.min(len - i);
                data[i..i + k].copy_from_slice(&v[..k]);
            }
            3 if len > 0 => {
                // A protobuf varint here, replaced by an interesting one.
                let i = rng.below(len);
                let mut end = i;
                while end < len && data[end] & 0x80 != 0 && end - i < 9 {
                    end += 1;
                }
                let mut v = Vec::new();
                push_varint(&mut v, INTERESTING[rng.below(INTERESTING.len())]);
                data.splice(i..(end + 1).min(len), v);
            }
            4 if len > 0 => {
                let del = 1 + rng.below((len - at.min(len)).clamp(1, 64));
                let start = at.min(len - 1);
                data.drain(start..(start + del).min(len));
            }
            5 => {
                let k = 1 + rng.below(32);
                let bytes: Vec<u8> = (0..k).map(|_| rng.next() as u8).collect();
                data.splice(at..at, bytes);
            }
            6 if len > 0 => {
                // Duplicate a range somewhere else.
                let s = rng.below(len);
                let e = (s + 1 + rng.below(256)).min(len);
                let chunk = data[s..e].to_vec();
                let at = rng.below(data.len() + 1);
                data.splice(at..at, chunk);
            }
            7 if !others.is_empty() => {
                // Splice in a piece of another seed.
                let o = &others[rng.below(others.len())];
                if !o.is_empty() {
                    let s = rng.below(o.len());
                    let e = (s + 1 + rng.below(512)).min(o.len());
                    let end = (at + rng.below(512)).min(data.len());
                    data.splice(at..end, o[s..e].iter().copied());
                }
            }
            8 if len > 1 => {
                // Truncate.
                data.truncate(rng.below(len));
            }
            9 if len > 4 => {
                // Swap two ranges' bytes.
                let a = rng.below(len);
                let b = rng.below(len);
                data.swap(a, b);
            }
            10 if len > 0 => {
                // Copy a byte run over another place (keeps the length).
                let s = rng.below(len);
                let d = rng.below(len);
                let k = rng.below(16).min(len - s).min(len - d);
                let chunk = data[s..s + k].to_vec();
                data[d..d + k].copy_from_slice(&chunk);
            }
            11 => {
                let w = WORDS[rng.below(WORDS.len())].as_bytes();
                data.splice(at..at, w.iter().copied());
            }
            12 if len > 0 => {
                // Replace a number with an interesting one.
                let i = rng.below(len);
                if let Some(start) = (i..len).find(|&k| data[k].is_ascii_digit()) {
                    let end = (start..len)
                        .find(|&k| !data[k].is_ascii_digit())
                        .unwrap_or(len);
                    let v = INTERESTING[rng.below(INTERESTING.len())].to_string();
                    data.splice(start..end, v.bytes());
                }
            }
            13 if len > 0 => {
                // Repeat a line (long files, deep structure).
                let i = rng.below(len);
                let s = data[..i]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
                let e = data[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(len, |p| i + p + 1);
                let line = data[s..e].to_vec();
                let times = 1 + rng.below(8);
                for _ in 0..times {
                    data.splice(e..e, line.iter().copied());
                }
            }
            _ => {}
        }
    }
    data.truncate(4 << 20);
}

// ---------------------------------------------------------------------------
// The loop.

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Files under `dir` (one level) whose names end with `ext`, at most `max_len` bytes.
fn files(dir: &Path, ext: &str, max_len: u64) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.to_string_lossy().ends_with(ext)
                && std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= max_len)
        })
        .collect();
    out.sort();
    out
}

/// The shared MindSpore fixtures, where this checkout has them (`../shared`).
fn shared_fixtures() -> Option<PathBuf> {
    [repo().join("../shared"), repo().join("../../shared")]
        .into_iter()
        .map(|p| p.join("fixtures/mindspore"))
        .find(|p| p.is_dir())
}

fn seconds() -> f64 {
    std::env::var("MIRDSL_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SECS)
}

struct Target {
    name: &'static str,
    text: bool,
    seeds: Vec<Vec<u8>>,
    run: fn(&[u8]) -> Verdict,
}

/// Why an input failed, if it did.
fn execute(target: &Target, input: &[u8]) -> Result<Verdict, String> {
    let before = OVERSIZED.load(Ordering::Relaxed);
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    ARMED.with(|a| a.set(true));
    INPUT.with(|i| i.set((input.as_ptr(), input.len())));
    let start = Instant::now();
    let result = std::panic::catch_unwind(|| (target.run)(input));
    let took = start.elapsed();
    INPUT.with(|i| i.set((std::ptr::null(), 0)));
    ARMED.with(|a| a.set(false));
    let peak = PEAK.with(Cell::get) - base;
    let verdict = result.map_err(|p| {
        let m = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        format!("panicked: {m}")
    })?;
    if OVERSIZED.load(Ordering::Relaxed) != before {
        return Err(format!("asked for more than {SINGLE_LIMIT} bytes at once"));
    }
    if peak > PEAK_LIMIT {
        return Err(format!("held {peak} bytes at once"));
    }
    if took > SLOW {
        return Err(format!("took {took:?}"));
    }
    Ok(verdict)
}

fn save_failure(target: &str, input: &[u8], why: &str) -> PathBuf {
    let dir = repo().join("target/fuzz-failures").join(target);
    let _ = std::fs::create_dir_all(&dir);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in input {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    let path = dir.join(format!("failure-{h:016x}"));
    let _ = std::fs::write(&path, input);
    let _ = std::fs::write(path.with_extension("why"), why);
    path
}

fn fuzz(target: Target) {
    let abort_dir = repo().join("target/fuzz-failures").join(target.name);
    let _ = std::fs::create_dir_all(&abort_dir);
    let abort_path = std::ffi::CString::new(
        abort_dir
            .join("aborted-input")
            .to_string_lossy()
            .into_owned(),
    )
    .unwrap();
    ABORT_PATH.with(|p| p.set(abort_path.as_ptr()));
    #[cfg(unix)]
    install_abort_handler();
    let regressions = repo()
        .join("crates/mirdsl/tests/fuzz_regressions")
        .join(target.name);
    let mut failures = Vec::new();
    for path in files(&regressions, "", u64::MAX) {
        let input = std::fs::read(&path).unwrap();
        if let Err(why) = execute(&target, &input) {
            failures.push(format!("regression {}: {why}", path.display()));
        }
    }
    assert!(!target.seeds.is_empty(), "{}: no seeds", target.name);
    for seed in &target.seeds {
        if let Err(why) = execute(&target, seed) {
            let p = save_failure(target.name, seed, &why);
            failures.push(format!("a seed fails: {why} ({})", p.display()));
        }
    }
    // The watchdog: an input that hangs is saved before the process ends.
    let current: Arc<Mutex<Vec<u8>>> = Arc::default();
    let started = Arc::new(AtomicU64::new(u64::MAX));
    let done = Arc::new(AtomicBool::new(false));
    let clock = Instant::now();
    {
        let (current, started, done) = (current.clone(), started.clone(), done.clone());
        let name = target.name;
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let s = started.load(Ordering::Relaxed);
                if s != u64::MAX && clock.elapsed().as_millis() as u64 > s + HANG.as_millis() as u64
                {
                    let input = current.lock().map(|c| c.clone()).unwrap_or_default();
                    let p = save_failure(name, &input, "hung");
                    eprintln!("fuzz {name}: an input hangs; saved as {}", p.display());
                    std::process::abort();
                }
            }
        });
    }
    let seed: u64 = std::env::var("MIRDSL_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut rng = Rng(seed ^ target.name.bytes().fold(0, |h, b| h * 31 + b as u64));
    let mut corpus = target.seeds.clone();
    let budget = Duration::from_secs_f64(seconds());
    let start = Instant::now();
    let mut executions = 0u64;
    let mut accepted = 0u64;
    while start.elapsed() < budget && failures.len() < 5 {
        let mut input = corpus[rng.below(corpus.len())].clone();
        mutate(&mut rng, &mut input, &target.seeds, target.text);
        if let Ok(mut c) = current.lock() {
            c.clone_from(&input);
        }
        started.store(clock.elapsed().as_millis() as u64, Ordering::Relaxed);
        let result = execute(&target, &input);
        started.store(u64::MAX, Ordering::Relaxed);
        executions += 1;
        match result {
            Ok(Verdict::Accepted) => {
                accepted += 1;
                if corpus.len() < 256 {
                    corpus.push(input);
                } else if rng.chance(8) {
                    let i = target.seeds.len() + rng.below(corpus.len() - target.seeds.len());
                    corpus[i] = input;
                }
            }
            Ok(Verdict::Rejected) => {}
            Err(why) => {
                let p = save_failure(target.name, &input, &why);
                failures.push(format!("{why}: saved as {}", p.display()));
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    ABORT_PATH.with(|p| p.set(std::ptr::null()));
    drop(abort_path);
    println!(
        "fuzz {}: {executions} executions in {:.1} s ({accepted} accepted, {} seeds, corpus {}), {} failures",
        target.name,
        start.elapsed().as_secs_f64(),
        target.seeds.len(),
        corpus.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "fuzz {}:\n{}",
        target.name,
        failures.join("\n")
    );
}

fn read_all(paths: Vec<PathBuf>) -> Vec<Vec<u8>> {
    paths
        .into_iter()
        .filter_map(|p| std::fs::read(p).ok())
        .collect()
}

/// The seed models: the zoo's smaller models (all of them in long runs) and
/// the shared fixtures.
fn mindir_seeds() -> Vec<Vec<u8>> {
    let max = if seconds() >= 60.0 {
        u64::MAX
    } else {
        128 << 10
    };
    let mut paths = Vec::new();
    if let Ok(zoo) = std::fs::read_dir(repo().join("testdata/zoo")) {
        for e in zoo.flatten() {
            let p = e.path().join("model.mindir");
            if std::fs::metadata(&p).is_ok_and(|m| m.len() <= max) {
                paths.push(p);
            }
        }
    }
    if let Some(shared) = shared_fixtures() {
        paths.extend(files(&shared, ".mindir", max));
    }
    paths.sort();
    read_all(paths)
}

#[test]
fn fuzz_mindir_import() {
    fuzz(Target {
        name: "mindir",
        text: false,
        seeds: mindir_seeds(),
        run: run_mindir,
    });
}

#[test]
fn fuzz_ir_import() {
    let mut paths = files(&repo().join("crates/ir/test_data/printers"), ".ir", 1 << 20);
    if let Some(shared) = shared_fixtures() {
        paths.extend(files(&shared.join("ir"), ".ir", 1 << 20));
    }
    fuzz(Target {
        name: "ir",
        text: true,
        seeds: read_all(paths),
        run: run_ir,
    });
}

#[test]
fn fuzz_npy() {
    let mut seeds = Vec::new();
    if let Ok(zoo) = std::fs::read_dir(repo().join("testdata/zoo")) {
        let mut dirs: Vec<PathBuf> = zoo.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for d in dirs {
            seeds.extend(read_all(files(&d, ".npy", 64 << 10)));
        }
    }
    for dtype in tensor::DType::ALL {
        if dtype != tensor::DType::BF16 {
            let t = tensor::Tensor::full(dtype, vec![2, 3], 1.5);
            seeds.push(tensor::npy::write(&t));
        }
    }
    seeds.push(tensor::npy::write(&tensor::Tensor::full(
        tensor::DType::F32,
        vec![],
        2.0,
    )));
    fuzz(Target {
        name: "npy",
        text: false,
        seeds,
        run: run_npy,
    });
}

#[test]
fn fuzz_safetensors() {
    let mut seeds = Vec::new();
    if let Ok(zoo) = std::fs::read_dir(repo().join("testdata/zoo")) {
        let mut dirs: Vec<PathBuf> = zoo.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for d in dirs {
            seeds.extend(read_all(files(&d, ".safetensors", 256 << 10)));
        }
    }
    let a = tensor::Tensor::from_f32(vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let b = tensor::Tensor::from_i64(tensor::DType::I32, vec![3], vec![1, -2, 3]).unwrap();
    let c = tensor::Tensor::from_bool(vec![1], vec![true]).unwrap();
    seeds.push(tensor::safetensors::write(&[
        ("fc.weight", &a),
        ("idx", &b),
        ("m", &c),
    ]));
    fuzz(Target {
        name: "safetensors",
        text: false,
        seeds,
        run: run_safetensors,
    });
}

#[test]
fn fuzz_fmt_and_check() {
    let mut paths = files(&repo().join("testdata"), ".mir", 1 << 20);
    paths.extend(files(
        &repo().join("crates/syntax/test_data/ok"),
        ".mir",
        1 << 20,
    ));
    paths.extend(files(
        &repo().join("crates/analysis/test_data/diagnostics"),
        ".mir",
        1 << 20,
    ));
    fuzz(Target {
        name: "fmt",
        text: true,
        seeds: read_all(paths),
        run: run_fmt,
    });
}
