//! Hostile inputs and resource limits (issue 13), end to end through the
//! binary: each case ends in a clear error with exit code 1 (2 for usage and
//! I/O errors), quickly and within a memory limit; nothing hangs, aborts or
//! answers wrongly; no file is lost.
//!
//! Every command runs with its address space limited (so a test that would
//! allocate a huge tensor fails instead of taking the machine's memory) and a
//! wall-clock limit (so one that would hang fails instead of blocking CI).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

/// The most memory a command under test may map.
const ADDRESS_SPACE: u64 = 4 << 30;
/// The longest a command under test may take.
const WALL: Duration = Duration::from_secs(60);

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mirdsl-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Out {
    fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// Exit code `code` with a clear message: no panic, no "bug in mirdsl".
    #[track_caller]
    fn expect(&self, code: i32, needles: &[&str]) {
        let all = self.text();
        assert_eq!(self.code, Some(code), "exit code; output:\n{all}");
        for n in needles {
            assert!(all.contains(n), "missing {n:?} in:\n{all}");
        }
        for bad in ["panicked", "bug in mirdsl", "internal error"] {
            assert!(!all.contains(bad), "{bad:?} in:\n{all}");
        }
    }
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("MIRDSL_MAX_MEMORY")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe.
        unsafe {
            c.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: ADDRESS_SPACE,
                    rlim_max: ADDRESS_SPACE,
                };
                libc::setrlimit(libc::RLIMIT_AS, &lim);
                Ok(())
            });
        }
    }
    c
}

/// Runs to the end (or kills at [`WALL`] and fails).
fn wait(mut child: std::process::Child) -> Out {
    let start = Instant::now();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Out {
                code: status.code(),
                stdout: o.join().unwrap(),
                stderr: e.join().unwrap(),
                took: start.elapsed(),
            };
        }
        if start.elapsed() > WALL {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mirdsl hung: still running after {WALL:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn mirdsl(dir: &Path, args: &[&str]) -> Out {
    wait(command(dir, args).spawn().expect("mirdsl starts"))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// An `.npy` header (version 1) for `shape` in float32, without data.
fn npy_header(shape: &str) -> Vec<u8> {
    let mut h = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    b.extend_from_slice(h.as_bytes());
    b
}

fn load_program(path: &str) -> String {
    format!("param w: f32[4] = load(\"{path}\")\n\ngraph main() {{\n  return ReduceSum(w)\n}}\n")
}

// ---------------------------------------------------------------------------
// `load(...)`: regular files only, sizes checked before reading.

#[test]
fn load_of_dev_zero_is_refused_without_reading() {
    let d = dir("devzero");
    write(&d, "prog.mir", &load_program("/dev/zero"));
    let o = mirdsl(&d, &["run", "prog.mir"]);
    o.expect(
        1,
        &[
            "cannot initialise weight `w`",
            "/dev/zero: it is a character device, not a regular file",
        ],
    );
    assert!(o.took < Duration::from_secs(10));
}

#[cfg(unix)]
#[test]
fn load_of_a_fifo_does_not_block() {
    let d = dir("fifo");
    mkfifo(&d.join("w.npy"));
    write(&d, "prog.mir", &load_program("w.npy"));
    let o = mirdsl(&d, &["run", "prog.mir"]);
    o.expect(1, &["w.npy: it is a FIFO (named pipe), not a regular file"]);
    // `--arg` files too.
    write(&d, "arg.mir", "graph main(x: f32[2]) {\n  return x\n}\n");
    let o = mirdsl(&d, &["run", "arg.mir", "--arg", "x=w.npy"]);
    o.expect(1, &["argument `x`", "it is a FIFO"]);
    let o = mirdsl(&d, &["run", "prog.mir", "--load-weights", "w.npy"]);
    o.expect(2, &["it is a FIFO"]);
}

#[test]
fn load_of_a_directory_or_a_missing_file() {
    let d = dir("loaddir");
    std::fs::create_dir_all(d.join("weights.npy")).unwrap();
    write(&d, "prog.mir", &load_program("weights.npy"));
    mirdsl(&d, &["run", "prog.mir"])
        .expect(1, &["weights.npy: it is a directory, not a regular file"]);
    write(&d, "prog.mir", &load_program("missing.npy"));
    mirdsl(&d, &["run", "prog.mir"]).expect(1, &["missing.npy: no such file"]);
}

#[test]
fn load_checks_the_declared_shape_before_reading_the_data() {
    let d = dir("loadbig");
    // A header claiming 2^31 floats (8 GiB) over a sparse file of that size:
    // refused from the header alone, neither read nor allocated.
    let mut bytes = npy_header("(2147483648,)");
    let header_len = bytes.len() as u64;
    bytes.truncate(header_len as usize);
    std::fs::write(d.join("big.npy"), &bytes).unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(d.join("big.npy"))
        .unwrap();
    f.set_len(header_len + (8u64 << 30)).unwrap();
    write(&d, "prog.mir", &load_program("big.npy"));
    let o = mirdsl(&d, &["run", "prog.mir"]);
    o.expect(
        1,
        &["big.npy has shape [2147483648] but `w` is declared f32[4]"],
    );
    assert!(o.took < Duration::from_secs(10), "{:?}", o.took);
    // A header whose element count overflows.
    std::fs::write(d.join("wrap.npy"), npy_header("(4611686018427387904, 4)")).unwrap();
    write(&d, "prog.mir", &load_program("wrap.npy"));
    mirdsl(&d, &["run", "prog.mir"]).expect(
        1,
        &[
            "wrap.npy is not a valid .npy file",
            "more elements than can be counted",
        ],
    );
    // A truncated file.
    std::fs::write(d.join("short.npy"), npy_header("(4,)")).unwrap();
    write(&d, "prog.mir", &load_program("short.npy"));
    mirdsl(&d, &["run", "prog.mir"]).expect(1, &["truncated"]);
}

#[test]
fn load_paths_are_relative_to_the_mir_file() {
    let d = dir("loadrel");
    std::fs::create_dir_all(d.join("model/data")).unwrap();
    let mut bytes = npy_header("(4,)");
    for x in [1.0f32, 2.0, 3.0, 4.0] {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    std::fs::write(d.join("model/data/w.npy"), bytes).unwrap();
    write(&d, "model/prog.mir", &load_program("data/w.npy"));
    // Run from another folder: the path still resolves beside the file.
    let o = mirdsl(&d, &["run", "model/prog.mir", "--format", "json"]);
    o.expect(0, &["10"]);
    let o = mirdsl(
        &d.join("model/data"),
        &["run", "../prog.mir", "--format", "json"],
    );
    o.expect(0, &["10"]);
}

// ---------------------------------------------------------------------------
// Checked shape arithmetic.

#[test]
fn a_maker_whose_element_count_wraps_is_a_check_error() {
    let d = dir("wrap");
    write(
        &d,
        "prog.mir",
        "graph main() {\n  return ReduceSum(Zeros((4611686018427387904, 4), f32))\n}\n",
    );
    let o = mirdsl(&d, &["check", "prog.mir", "--format", "json"]);
    o.expect(1, &["\"E0202\"", "cannot exist", "\"line\": 2"]);
    mirdsl(&d, &["run", "prog.mir"]).expect(1, &["E0202", "not running"]);
    // 3037000500² overflows i64 but not u64: an error, not a "bug".
    write(
        &d,
        "prog.mir",
        "graph main() {\n  return Zeros((3037000500, 3037000500), f32)\n}\n",
    );
    mirdsl(&d, &["check", "prog.mir"]).expect(1, &["E0202", "cannot exist"]);
    mirdsl(&d, &["run", "prog.mir"]).expect(1, &["E0202"]);
}

#[test]
fn a_parameter_type_that_overflows_is_an_error_at_the_annotation() {
    let d = dir("paramwrap");
    write(
        &d,
        "prog.mir",
        "graph main(x: f32[4611686018427387904, 4]) {\n  return ReduceSum(x)\n}\n",
    );
    let o = mirdsl(&d, &["check", "prog.mir", "--format", "json"]);
    o.expect(1, &["\"E0202\"", "\"line\": 1", "\"column\": 15"]);
    // Reported once: at the annotation, not again at each use.
    assert_eq!(o.stdout.matches("\"code\"").count(), 1, "{}", o.stdout);
    let o = mirdsl(&d, &["run", "prog.mir", "--arg", "x=zeros"]);
    o.expect(1, &["E0202"]);
    // A weight too, and a dimension beyond 64 bits.
    write(
        &d,
        "prog.mir",
        "param w: f32[99999999999999999999] = zeros\n\ngraph main() {\n  return ReduceSum(w)\n}\n",
    );
    mirdsl(&d, &["check", "prog.mir"]).expect(1, &["E0202", "too large"]);
}

#[test]
fn a_shape_rule_whose_arithmetic_overflows_is_an_error_at_the_call() {
    let d = dir("rulewrap");
    write(
        &d,
        "prog.mir",
        "graph main(x: f32[2, 3]) {\n  return Tile(x, (4611686018427387904, 4))\n}\n",
    );
    let o = mirdsl(&d, &["check", "prog.mir", "--format", "json"]);
    o.expect(1, &["\"E0202\"", "\"line\": 2"]);
}

// ---------------------------------------------------------------------------
// The memory budget.

#[test]
fn a_weight_beyond_the_budget_is_refused_before_allocating() {
    let d = dir("bigweight");
    write(
        &d,
        "prog.mir",
        "param w: f32[100000, 100000] = zeros\n\ngraph main() {\n  return ReduceSum(w)\n}\n",
    );
    let o = mirdsl(&d, &["check", "prog.mir", "--max-memory", "2G"]);
    o.expect(0, &["W0003", "37.3 GiB", "memory budget of 2.0 GiB"]);
    let o = mirdsl(&d, &["run", "prog.mir"]);
    o.expect(
        1,
        &[
            "cannot initialise weight `w`",
            "f32[100000, 100000] takes 37.3 GiB (40000000000 bytes)",
            "memory budget",
        ],
    );
}

#[test]
fn a_broadcast_beyond_the_budget_is_refused_naming_op_shape_and_size() {
    let d = dir("bigbroadcast");
    write(
        &d,
        "prog.mir",
        "graph main() {\n  return Ones((200000, 1), f32) * Ones((1, 200000), f32)\n}\n",
    );
    mirdsl(&d, &["check", "prog.mir"]).expect(0, &["W0003", "f32[200000, 200000]", "149.0 GiB"]);
    let o = mirdsl(&d, &["run", "prog.mir"]);
    o.expect(
        1,
        &[
            "`Mul`'s result f32[200000, 200000] needs 149.0 GiB (160000000000 bytes)",
            "memory budget",
            "--max-memory",
        ],
    );
}

/// A kernel's working buffers count too: a convolution whose result is small
/// (256 MiB) but whose im2col matrix is 30 GiB is refused, not an abort.
#[test]
fn a_kernels_working_buffer_beyond_the_budget_is_refused() {
    let d = dir("scratch");
    write(
        &d,
        "conv.mir",
        "graph main(x: f32[1, 256, 512, 512], w: f32[256, 256, 11, 11]) {
  return ReduceSum(Conv2D(x, w, out_channel=256, kernel_size=(11, 11), pad_mode=\"same\"))
}
",
    );
    let o = mirdsl(
        &d,
        &["run", "conv.mir", "--arg", "x=ones", "--arg", "w=ones"],
    );
    o.expect(
        1,
        &[
            "`Conv2D` needs a working buffer (im2col) of 30.5 GiB",
            "more than the memory budget leaves",
            "--max-memory",
        ],
    );
    assert!(o.took < Duration::from_secs(20), "{:?}", o.took);
}

#[test]
fn max_memory_is_an_option_with_its_default_in_the_help() {
    let d = dir("maxmem");
    write(
        &d,
        "prog.mir",
        "graph main() {\n  return ReduceSum(Zeros((1000, 1000), f32))\n}\n",
    );
    mirdsl(&d, &["run", "prog.mir"]).expect(0, &["0.0"]);
    let o = mirdsl(&d, &["run", "prog.mir", "--max-memory", "1M"]);
    o.expect(
        1,
        &[
            "`Zeros`'s result f32[1000, 1000] needs 3.8 MiB (4000000 bytes)",
            "1.0 MiB in all",
        ],
    );
    mirdsl(&d, &["check", "prog.mir", "--max-memory", "1M"]).expect(0, &["W0003"]);
    mirdsl(&d, &["run", "prog.mir", "--max-memory", "lots"])
        .expect(2, &["--max-memory", "not a size"]);
    // The environment sets the default.
    let o = wait(
        command(&d, &["run", "prog.mir"])
            .env("MIRDSL_MAX_MEMORY", "1M")
            .spawn()
            .unwrap(),
    );
    o.expect(1, &["1.0 MiB in all"]);
    let o = wait(
        command(&d, &["run", "prog.mir"])
            .env("MIRDSL_MAX_MEMORY", "plenty")
            .spawn()
            .unwrap(),
    );
    o.expect(2, &["$MIRDSL_MAX_MEMORY", "not a size"]);
    let help = mirdsl(&d, &["run", "--help"]);
    help.expect(
        0,
        &[
            "--max-memory",
            "default:",
            "half of the",
            "this process may use",
            "--timeout",
        ],
    );
    // Arguments count too.
    write(
        &d,
        "arg.mir",
        "graph main(x: f32[B, 1000]) {\n  return ReduceSum(x)\n}\n",
    );
    let o = mirdsl(
        &d,
        &[
            "run",
            "arg.mir",
            "--arg",
            "x=ones",
            "--dim",
            "B=100000000000",
            "--max-memory",
            "1G",
        ],
    );
    o.expect(1, &["argument `x`", "more than the memory budget"]);
}

// ---------------------------------------------------------------------------
// Stopping: --timeout and Ctrl-C.

const FIBONACCI: &str = "graph fibonacci(n: i64) -> i64 {
  r = if n < 1 { 0 } else if n == 1 { 1 } else {
    a = fibonacci(n - 1)
    b = fibonacci(n - 2)
    a + b
  }
  return r
}

graph main() {
  return fibonacci(60)
}
";

#[test]
fn timeout_stops_a_long_run() {
    let d = dir("timeout");
    write(&d, "prog.mir", FIBONACCI);
    let o = mirdsl(&d, &["run", "prog.mir", "--timeout", "300ms"]);
    o.expect(1, &["`main` did not finish within 300ms (`--timeout`)"]);
    assert!(o.took < Duration::from_secs(10), "{:?}", o.took);
    // Inside one long kernel too (a large matrix product polls between blocks).
    write(
        &d,
        "mm.mir",
        "graph main(a: f32[3000, 3000]) {\n  return ReduceSum(MatMul(a, a))\n}\n",
    );
    let o = mirdsl(
        &d,
        &["run", "mm.mir", "--arg", "a=ones", "--timeout", "200ms"],
    );
    o.expect(1, &["did not finish within 200ms"]);
    assert!(o.took < Duration::from_secs(10), "{:?}", o.took);
    mirdsl(&d, &["run", "prog.mir", "--timeout", "soon"])
        .expect(2, &["--timeout", "not a duration"]);
    // A kernel that does not poll (a large convolution) cannot hold the command
    // much past its time limit either.
    write(
        &d,
        "conv.mir",
        "graph main(x: f32[1, 64, 256, 256], w: f32[64, 64, 7, 7]) {
  return ReduceSum(Conv2D(x, w, out_channel=64, kernel_size=(7, 7), pad_mode=\"same\"))
}
",
    );
    let o = mirdsl(
        &d,
        &[
            "run",
            "conv.mir",
            "--arg",
            "x=ones",
            "--arg",
            "w=ones",
            "--timeout",
            "1s",
        ],
    );
    o.expect(1, &["did not finish within 1s (`--timeout`)"]);
    assert!(o.took < Duration::from_secs(10), "{:?}", o.took);
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_run_cleanly() {
    let d = dir("sigint");
    write(&d, "prog.mir", FIBONACCI);
    let child = command(&d, &["run", "prog.mir"]).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    // Long enough for the run to have started (checking is quick).
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let o = wait(child);
    o.expect(130, &["run-time fault: interrupted (Ctrl-C)"]);
}

// ---------------------------------------------------------------------------
// Files: atomic writes, no directory as output.

#[test]
fn fmt_writes_atomically_and_keeps_permissions() {
    let d = dir("fmt");
    let f = write(&d, "a.mir", "graph   main( x ) {\n  return x\n}\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    mirdsl(&d, &["fmt", "a.mir"]).expect(0, &["formatted"]);
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "graph main(x) {\n  return x\n}\n"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // Through a symbolic link: the link stays a link.
        write(&d, "b.mir", "graph   b( x ) {\n  return x\n}\n");
        std::os::unix::fs::symlink("b.mir", d.join("link.mir")).unwrap();
        mirdsl(&d, &["fmt", "link.mir"]).expect(0, &["formatted"]);
        assert!(std::fs::symlink_metadata(d.join("link.mir"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(d.join("b.mir")).unwrap(),
            "graph b(x) {\n  return x\n}\n"
        );
    }
    // A file with syntax errors, or not UTF-8, is left as it was.
    let broken = "graph main( {\n";
    write(&d, "broken.mir", broken);
    mirdsl(&d, &["fmt", "broken.mir"]).expect(1, &["not formatting"]);
    assert_eq!(
        std::fs::read_to_string(d.join("broken.mir")).unwrap(),
        broken
    );
    std::fs::write(d.join("latin1.mir"), b"graph main() { return 1 } # \xe9\n").unwrap();
    mirdsl(&d, &["fmt", "latin1.mir"]).expect(2, &["not UTF-8"]);
    assert_eq!(
        std::fs::read(d.join("latin1.mir")).unwrap(),
        b"graph main() { return 1 } # \xe9\n"
    );
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn inputs_that_are_not_files_are_refused() {
    let d = dir("inputs");
    mirdsl(&d, &["check", "/dev/zero"]).expect(2, &["/dev/zero: it is a character device"]);
    mirdsl(&d, &["run", "/dev/zero"]).expect(2, &["character device"]);
    mirdsl(&d, &["import", "/dev/zero.mindir"]).expect(2, &["no such file"]);
    std::fs::create_dir_all(d.join("m.mindir")).unwrap();
    mirdsl(&d, &["import", "m.mindir"]).expect(2, &["it is a directory"]);
    write(&d, "prog.mir", "graph main() {\n  return 1\n}\n");
    mirdsl(&d, &["run", "prog.mir", "--load-weights", "/dev/zero"])
        .expect(2, &["character device"]);
}

#[test]
fn import_and_export_refuse_a_directory_as_output_and_write_atomically() {
    let d = dir("outputs");
    std::fs::create_dir_all(d.join("out")).unwrap();
    let model =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/zoo/resnet_block/model.mindir");
    let model = model.to_str().unwrap();
    mirdsl(&d, &["import", model, "-o", "out"]).expect(2, &["cannot write out: it is a directory"]);
    mirdsl(&d, &["import", model, "-o", "out/"]).expect(2, &["it is a directory"]);
    // Nothing was written beside it.
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    assert_eq!(std::fs::read_dir(d.join("out")).unwrap().count(), 0);
    write(
        &d,
        "prog.mir",
        "graph main(x: f32[3]) {\n  return ReLU(x)\n}\n",
    );
    mirdsl(&d, &["export", "prog.mir", "-o", "out"])
        .expect(2, &["cannot write out: it is a directory"]);
    // A failed export leaves an existing output as it was.
    std::fs::write(d.join("old.mindir"), b"keep me").unwrap();
    write(
        &d,
        "bad.mir",
        "graph main(x: f32[3]) {\n  return ReLU(y)\n}\n",
    );
    mirdsl(&d, &["export", "bad.mir", "-o", "old.mindir"]).expect(1, &["E0100"]);
    assert_eq!(std::fs::read(d.join("old.mindir")).unwrap(), b"keep me");
    mirdsl(&d, &["export", "prog.mir", "-o", "old.mindir"]).expect(0, &[]);
    assert_ne!(std::fs::read(d.join("old.mindir")).unwrap(), b"keep me");
    // Import writes the text and its weights.
    mirdsl(&d, &["import", model, "-o", "out/net.mir"]).expect(0, &[]);
    assert!(d.join("out/net.mir").is_file());
}

// ---------------------------------------------------------------------------
// Integer division and overflow (docs/language.md §10).

#[test]
fn integer_division_by_zero_and_overflow_follow_mindspore() {
    let d = dir("intdiv");
    write(
        &d,
        "prog.mir",
        "graph main() {
  a = Cast([7, -7, 0], i32)
  z = Cast([0, 0, 0], i32)
  m = Cast([2147483647, -2147483648, 5], i32)
  one = Cast([1, -1, 2], i32)
  p = Pow(Cast([3, 2, 2], i64), Cast([100, 62, -1], i64))
  return (a / z, FloorDiv(a, z), Add(m, one), Mul(m, one), Neg(m), p)
}
",
    );
    let o = mirdsl(&d, &["run", "prog.mir", "--format", "json"]);
    o.expect(0, &[]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let data = |i: usize| v[i]["data"].clone();
    assert_eq!(data(0), serde_json::json!([2147483647, -2147483648, 0]));
    assert_eq!(data(1), serde_json::json!([2147483647, -2147483648, 0]));
    assert_eq!(data(2), serde_json::json!([-2147483648, 2147483647, 7]));
    assert_eq!(data(3), serde_json::json!([2147483647, -2147483648, 10]));
    assert_eq!(data(4), serde_json::json!([-2147483647, -2147483648, -5]));
    // Pow overflows as MindSpore's does (computed in f64): the smallest value.
    assert_eq!(
        data(5),
        serde_json::json!([i64::MIN, 4611686018427387904_i64, 0])
    );
}

#[test]
fn an_integer_overflow_inside_a_kernel_is_a_clear_error() {
    let d = dir("intovf");
    // i64::MIN floor-divided by -1 (MindSpore's CPU kernel raises SIGFPE here).
    write(
        &d,
        "prog.mir",
        "graph main() {
  mx = Cast([9223372036854775807], i64)
  mn = mx * -1 - 1
  return FloorDiv(mn, Cast([-1], i64))
}
",
    );
    let o = mirdsl(&d, &["run", "prog.mir", "--format", "json"]);
    // Either MindSpore's wrapped answer or a clear error, never a crash or a "bug".
    match o.code {
        Some(0) => assert!(o.stdout.contains("-9223372036854775808"), "{}", o.text()),
        _ => o.expect(1, &["integer overflow", "FloorDiv"]),
    }
}

// ---------------------------------------------------------------------------
// Deep expressions: a syntax error, never a stack overflow.

#[test]
fn a_very_long_expression_is_a_syntax_error_not_a_stack_overflow() {
    let d = dir("deep");
    for (name, link) in [("sum", " + 1"), ("calls", "(1)"), ("parens", "")] {
        let expr = if link.is_empty() {
            format!("{}1{}", "(".repeat(50_000), ")".repeat(50_000))
        } else {
            format!("f{}", link.repeat(50_000))
        };
        let file = format!("{name}.mir");
        write(
            &d,
            &file,
            &format!("graph main() {{\n  x = {expr}\n  return x\n}}\n"),
        );
        mirdsl(&d, &["check", &file]).expect(1, &["E0001", "nested too deeply"]);
        mirdsl(&d, &["fmt", &file]).expect(1, &["not formatting"]);
        mirdsl(&d, &["run", &file]).expect(1, &["nested too deeply"]);
    }
}
